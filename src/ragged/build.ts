/**
 * Building jagged tensors from a list or a padded batch: `jagged(list)` and
 * `fromPadded`. On the JS backend the values are copied on the host; when the
 * data lives where the host cannot read it synchronously (WebGPU) the values
 * are IR ops (`batch_concat`, `segment_unpad`) and only the offsets, computed
 * from shapes and lengths the host knows, are uploaded.
 */
import { DTypeError, ShapeError } from "../../ir/errors.js";
import { ARRAY_CTOR } from "../../ir/dtype.js";
import { fromTypedArray } from "../creation.js";
import { Tensor } from "../tensor.js";
import { describeValue, tensorArg, tensorList } from "./check.js";
import { allOnHost, concatRows, hostInts, hostTensor, hostValues, resplit } from "./device.js";
import { JaggedTensor } from "./jagged.js";

/**
 * A jagged tensor from a list of tensors whose first dim is the ragged one:
 * `jagged([a (5, 3), b (2, 3)])` is `(2, ~N; 3)` (any batch/base split of the
 * items is read as their full shape). Items must share dtype and trailing shape.
 */
export function jagged(list: readonly Tensor[]): JaggedTensor {
  tensorList("jagged", list);
  if (list.length === 0) throw new ShapeError("jagged: needs at least one tensor");
  const first = list[0]!;
  if (first.rank === 0) throw new ShapeError(`jagged: item 0 ${first.toString()} has no dim to be ragged`);
  const base = first.shape.slice(1);
  const per = base.reduce((a, b) => a * b, 1);
  const offsets = hostInts(list.length + 1);
  list.forEach((t, i) => {
    if (t.dtype !== first.dtype)
      throw new DTypeError(
        `jagged: item ${i} ${t.toString()} is ${t.dtype} but item 0 ${first.toString()} is ${first.dtype}`,
      );
    const s = t.shape;
    if (s.length !== first.rank || s.slice(1).some((d, j) => d !== base[j])) {
      throw new ShapeError(
        `jagged: item ${i} ${t.toString()} does not match item 0 ${first.toString()} after its first dim`,
      );
    }
    offsets[i + 1] = offsets[i]! + s[0]!;
    if (offsets[i + 1] !== offsets[i]! + s[0]!)
      throw new ShapeError(
        `jagged: ${offsets[i]! + s[0]!} rows in all do not fit the int32 offsets (at item ${i} ${t.toString()})`,
      );
  });
  const T = offsets[list.length]!;
  if (!allOnHost(list)) {
    const rows = list.map((t, i) => resplit("jagged", `item ${i}`, t, [t.shape[0]!], base));
    const values = concatRows(rows, () => hostTensor(new ARRAY_CTOR[first.dtype](0), [0, ...base], 1, first.dtype));
    return new JaggedTensor(values, hostTensor(offsets, [list.length + 1], 1, "int32"));
  }
  const values = new ARRAY_CTOR[first.dtype](T * per);
  list.forEach((t, i) => values.set(t.dataSync({ copy: false }), offsets[i]! * per));
  return new JaggedTensor(
    fromTypedArray(values, [T, ...base], { batchDim: 1, dtype: first.dtype }),
    fromTypedArray(offsets, [list.length + 1], { batchDim: 1 }),
  );
}

/**
 * The inverse of `toPadded`: keeps the first `lengths[b]` entries of each row
 * (right padding). `lengths` are numbers or an integer tensor the host can read
 * (on WebGPU: numbers, or a tensor made on the js backend).
 */
export function fromPadded(padded: Tensor, lengths: readonly number[] | Tensor): JaggedTensor {
  tensorArg("fromPadded", padded, "padded");
  if (!Array.isArray(lengths) && !(lengths instanceof Tensor))
    throw new DTypeError(
      `fromPadded: lengths must be an array of integers or an integer Tensor, got ${describeValue(lengths)}`,
    );
  if (lengths instanceof Tensor && lengths.dtype !== "int32" && lengths.dtype !== "uint32")
    throw new DTypeError(`fromPadded: lengths ${lengths.toString()} must be int32 or uint32, got ${lengths.dtype}`);
  if (padded.batchDim !== 2)
    throw new ShapeError(`fromPadded: padded must be (B, maxN; base), got padded ${padded.toString()}`);
  const [B, maxN] = padded.batchShape as [number, number];
  const lens = Array.from(Array.isArray(lengths) ? lengths : hostValues("fromPadded", lengths as Tensor, "lengths"));
  if (lens.length !== B) throw new ShapeError(`fromPadded: ${lens.length} lengths for padded ${padded.toString()}`);
  const per = padded.baseShape.reduce((a, b) => a * b, 1);
  const offsets = hostInts(B + 1);
  lens.forEach((l, b) => {
    if (typeof l !== "number" || !Number.isInteger(l) || l < 0 || l > maxN)
      throw new ShapeError(
        `fromPadded: lengths[${b}] = ${describeValue(l)} does not fit padded ${padded.toString()} (0 <= length <= ${maxN})`,
      );
    offsets[b + 1] = offsets[b]! + l;
  });
  const T = offsets[B]!;
  if (!allOnHost([padded])) {
    // segment_unpad takes the packed row count from the type of `like`; this one is never read.
    let like = Tensor._const(0, padded.dtype).batchExpand([T]);
    if (padded.baseDim > 0) like = like.expand(padded.baseShape);
    const o = hostTensor(offsets, [B + 1], 1, "int32");
    return new JaggedTensor(Tensor._op("segment_unpad", [padded, o, like]), o);
  }
  const src = padded.dataSync({ copy: false });
  const values = new ARRAY_CTOR[padded.dtype](T * per);
  lens.forEach((l, b) => values.set(src.subarray(b * maxN * per, (b * maxN + l) * per), offsets[b]! * per));
  return new JaggedTensor(
    fromTypedArray(values, [T, ...padded.baseShape], { batchDim: 1, dtype: padded.dtype }),
    fromTypedArray(offsets, [B + 1], { batchDim: 1 }),
  );
}
