/**
 * Building jagged tensors from host data: `jagged(list)` and `fromPadded`.
 */
import { DTypeError, ShapeError } from "../../ir/errors.js";
import { ARRAY_CTOR } from "../../ir/dtype.js";
import { fromTypedArray } from "../creation.js";
import type { Tensor } from "../tensor.js";
import { JaggedTensor } from "./jagged.js";

/**
 * A jagged tensor from a list of tensors whose first dim is the ragged one:
 * `jagged([a (5, 3), b (2, 3)])` is `(2, ~N; 3)` (any batch/base split of the
 * items is read as their full shape). Items must share dtype and trailing shape.
 */
export function jagged(list: readonly Tensor[]): JaggedTensor {
  if (list.length === 0) throw new ShapeError("jagged: needs at least one tensor");
  const first = list[0]!;
  if (first.rank === 0) throw new ShapeError(`jagged: item 0 ${first.toString()} has no dim to be ragged`);
  const base = first.shape.slice(1);
  const per = base.reduce((a, b) => a * b, 1);
  const offsets = new Int32Array(list.length + 1);
  list.forEach((t, i) => {
    if (t.dtype !== first.dtype) throw new DTypeError(`jagged: item ${i} ${t.toString()} is ${t.dtype} but item 0 ${first.toString()} is ${first.dtype}`);
    const s = t.shape;
    if (s.length !== first.rank || s.slice(1).some((d, j) => d !== base[j])) {
      throw new ShapeError(`jagged: item ${i} ${t.toString()} does not match item 0 ${first.toString()} after its first dim`);
    }
    offsets[i + 1] = offsets[i]! + s[0]!;
  });
  const values = new ARRAY_CTOR[first.dtype](offsets[list.length]! * per);
  list.forEach((t, i) => values.set(t.dataSync({ copy: false }), offsets[i]! * per));
  return new JaggedTensor(fromTypedArray(values, [offsets[list.length]!, ...base], { batchDim: 1 }), fromTypedArray(offsets, [list.length + 1], { batchDim: 1 }));
}

/** The inverse of `toPadded`: keeps the first `lengths[b]` entries of each row (right padding). */
export function fromPadded(padded: Tensor, lengths: readonly number[] | Tensor): JaggedTensor {
  if (padded.batchDim !== 2) throw new ShapeError(`fromPadded: padded must be (B, maxN; base), got padded ${padded.toString()}`);
  const [B, maxN] = padded.batchShape as [number, number];
  const lens = Array.from(Array.isArray(lengths) ? lengths : (lengths as Tensor).dataSync());
  if (lens.length !== B) throw new ShapeError(`fromPadded: ${lens.length} lengths for padded ${padded.toString()}`);
  const per = padded.baseShape.reduce((a, b) => a * b, 1);
  const src = padded.dataSync({ copy: false });
  const offsets = new Int32Array(B + 1);
  lens.forEach((l, b) => {
    if (!Number.isInteger(l) || l < 0 || l > maxN) throw new ShapeError(`fromPadded: length ${l} of row ${b} does not fit padded ${padded.toString()}`);
    offsets[b + 1] = offsets[b]! + l;
  });
  const values = new ARRAY_CTOR[padded.dtype](offsets[B]! * per);
  lens.forEach((l, b) => values.set(src.subarray(b * maxN * per, (b * maxN + l) * per), offsets[b]! * per));
  return new JaggedTensor(fromTypedArray(values, [offsets[B]!, ...padded.baseShape], { batchDim: 1 }), fromTypedArray(offsets, [B + 1], { batchDim: 1 }));
}
