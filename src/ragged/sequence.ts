/**
 * Stacking, concatenation and padding of plain tensors along their BATCH dims,
 * with the semantics of torch and tensordict (`torch.stack`, `pad_sequence`): `stack`,
 * `cat`, `padSequence`, `unpadSequence`. The TensorDict versions will reuse these.
 *
 * On the JS backend they copy on the host (`TypedArray.set`) and return
 * realized tensors. When an input lives where the host cannot read it
 * synchronously (WebGPU), they record IR ops instead (block copies and
 * `segment_pad`), which run when the result is read. `stack` and `cat` also
 * record a `batch_concat` inside `jit`; `padSequence` and `unpadSequence` read
 * lengths and masks on the host, so they cannot run inside `jit` (a traced input
 * is a `TraceError`). Mixed dtypes are promoted
 * (`bool < uint32 < int32 < float32 < float64`), as torch's `cat` and `stack` do.
 */
import { ARRAY_CTOR, castScalar, promote, type DType, type TypedArray } from "../../ir/dtype.js";
import { DTypeError, ShapeError, TraceError } from "../../ir/errors.js";
import { prod } from "../../ir/types.js";
import { fromTypedArray } from "../creation.js";
import { Tensor } from "../tensor.js";
import { flagArg, intArg, optionsArg, paddingArg, sideArg, tensorArg, tensorList } from "./check.js";
import { allOnHost, concatRows, hostInts, hostTensor, hostValues } from "./device.js";

/**
 * Inside `jit`, with lazy inputs, or with inputs the host cannot read now
 * (WebGPU), stack and cat record a `batch_concat` IR op (block copies at run
 * time) instead of copying on the host now.
 */
function lazy(list: readonly Tensor[]): boolean {
  return list.some(
    (t) => t._src.kind !== "buffer" || t._src.backend.readSync === undefined || t.batchShape.some((d) => d < 0),
  );
}

function checkEager(op: string, list: readonly Tensor[]): void {
  list.forEach((t, i) => {
    if (t.batchShape.some((d) => d < 0))
      throw new TraceError(`${op}: list[${i}] ${t.toString()} is traced; ${op} is eager and cannot run inside jit`);
  });
}

function commonDType(list: readonly Tensor[]): DType {
  return list.reduce<DType>((d, t) => promote(d, t.dtype), list[0]!.dtype);
}

/** The tensor's values in `dtype`: its own storage when the dtype matches (never written to). */
function hostData(t: Tensor, dtype: DType): TypedArray {
  const data = t.dataSync({ copy: false });
  return t.dtype === dtype ? data : new ARRAY_CTOR[dtype](data);
}

function copyRun(dst: TypedArray, dstOff: number, src: TypedArray, srcOff: number, len: number): void {
  if (len >= 32) dst.set(src.subarray(srcOff, srcOff + len), dstOff);
  else for (let k = 0; k < len; k++) dst[dstOff + k] = src[srcOff + k]!;
}

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

function output(data: TypedArray, batch: readonly number[], base: readonly number[], dtype: DType): Tensor {
  return fromTypedArray(data, [...batch, ...base], { batchDim: batch.length, dtype, copy: false });
}

/** `op`'s checks of its list of tensors (non-empty) and of its integer `dim`; the first tensor. */
function firstOf(op: string, list: readonly Tensor[], dim: number): Tensor {
  tensorList(op, list);
  intArg(op, dim, "dim");
  if (list.length === 0) throw new ShapeError(`${op}: list cannot be empty`);
  return list[0]!;
}

/**
 * Stacks tensors on a new batch dim `dim` (default 0; negative counts from the
 * end, as in `torch.stack`). Batch shapes and base shapes must be equal.
 *
 * ```ts
 * stack([a, b]);    // two (5; 3) tensors give (2,5; 3)
 * stack([a, b], 1); // (5,2; 3)
 * ```
 * Errors (tensordict's text, adapted): `stack: tensors must have congruent batch
 * sizes, got list[i] (..) and list[0] (..)`, and for base shapes `stack: the
 * shapes of the tensors to stack is incompatible: list[i] (..) vs list[0] (..)`.
 */
export function stack(list: readonly Tensor[], dim = 0): Tensor {
  const first = firstOf("stack", list, dim);
  const batch = first.batchShape;
  const base = first.baseShape;
  const d = dim < 0 ? dim + batch.length + 1 : dim;
  if (!Number.isInteger(d) || d < 0 || d > batch.length) {
    throw new ShapeError(
      `stack: dim ${dim} is out of range for a new batch dim of list[0] ${first.toString()} (${-batch.length - 1} <= dim <= ${batch.length})`,
    );
  }
  list.forEach((t, i) => {
    if (!sameDims(t.batchShape, batch))
      throw new ShapeError(
        `stack: tensors must have congruent batch sizes, got list[${i}] ${t.toString()} and list[0] ${first.toString()}`,
      );
    if (!sameDims(t.baseShape, base))
      throw new ShapeError(
        `stack: the shapes of the tensors to stack is incompatible: list[${i}] ${t.toString()} vs list[0] ${first.toString()}`,
      );
  });
  const dtype = commonDType(list);
  if (lazy(list))
    return Tensor._op(
      "batch_concat",
      list.map((t) => t.cast(dtype).batchUnsqueeze(d)),
      { axis: d },
    );
  checkEager("stack", list);
  const outer = prod(batch.slice(0, d));
  const inner = prod(batch.slice(d)) * prod(base);
  const n = list.length;
  const out = new ARRAY_CTOR[dtype](outer * n * inner);
  list.forEach((t, i) => {
    const src = hostData(t, dtype);
    if (outer === 1) out.set(src, i * inner);
    else for (let o = 0; o < outer; o++) copyRun(out, (o * n + i) * inner, src, o * inner, inner);
  });
  return output(out, [...batch.slice(0, d), n, ...batch.slice(d)], base, dtype);
}

/**
 * Concatenates tensors along the existing batch dim `dim` (default 0; negative
 * counts from the end). The other batch sizes and the base shapes must be equal.
 *
 * ```ts
 * cat([a, b]); // (3; 2) and (4; 2) give (7; 2)
 * ```
 * A `dim` outside the batch dims is tensordict's error: `cat: dim must be in the
 * range 0 <= dim < len(batch_size), got dim=2 and batch_size=[3, 4]` (dim as normalized).
 */
export function cat(list: readonly Tensor[], dim = 0): Tensor {
  const first = firstOf("cat", list, dim);
  const batch = first.batchShape;
  const base = first.baseShape;
  const d = dim < 0 ? dim + batch.length : dim;
  if (!Number.isInteger(d) || d < 0 || d >= batch.length) {
    throw new ShapeError(
      `cat: dim must be in the range 0 <= dim < len(batch_size), got dim=${d} and batch_size=[${batch.join(", ")}]`,
    );
  }
  list.forEach((t, i) => {
    const b = t.batchShape;
    if (b.length !== batch.length || b.some((s, j) => j !== d && s !== batch[j])) {
      throw new ShapeError(
        `cat: batch sizes must match except in dim ${d}, got list[${i}] ${t.toString()} and list[0] ${first.toString()}`,
      );
    }
    if (!sameDims(t.baseShape, base))
      throw new ShapeError(
        `cat: base shapes must match, got list[${i}] ${t.toString()} and list[0] ${first.toString()}`,
      );
  });
  const dtype = commonDType(list);
  if (lazy(list))
    return list.length === 1
      ? list[0]!.cast(dtype)
      : Tensor._op(
          "batch_concat",
          list.map((t) => t.cast(dtype)),
          { axis: d },
        );
  checkEager("cat", list);
  const outer = prod(batch.slice(0, d));
  const unit = prod(batch.slice(d + 1)) * prod(base);
  const chunks = list.map((t) => t.batchShape[d]! * unit);
  const row = chunks.reduce((a, b) => a + b, 0);
  const out = new ARRAY_CTOR[dtype](outer * row);
  let at = 0;
  list.forEach((t, i) => {
    const src = hostData(t, dtype);
    const chunk = chunks[i]!;
    for (let o = 0; o < outer; o++) copyRun(out, o * row + at, src, o * chunk, chunk);
    at += chunk;
  });
  const outBatch = [...batch];
  outBatch[d] = list.reduce((a, t) => a + t.batchShape[d]!, 0);
  return output(out, outBatch, base, dtype);
}

/** Options of `padSequence` on tensors. */
export interface PadSequenceOptions {
  /** The value written to the padding (default 0), cast to the output dtype. */
  readonly paddingValue?: number | boolean;
  /** Where the padding goes along `padDim` (default "right"). */
  readonly paddingSide?: "right" | "left";
  /** Also return the bool mask of the valid positions (default false). */
  readonly returnMask?: boolean;
  /** The batch dim of each tensor to pad (default 0; negative counts from the end of the batch dims). */
  readonly padDim?: number;
}

/**
 * Pads batch dim `padDim` of every tensor to the longest, then stacks them on a
 * new leading batch dim (tensordict's `pad_sequence`, with torch's `padding_side`).
 * Tensors `(L_i, *batch; base)` give `(B, maxL, *batch; base)`. With
 * `returnMask`, also a bool mask `(B, maxL, *batch;)` (the padded batch shape),
 * true where a value came from a tensor and false on the padding.
 *
 * ```ts
 * const { padded, mask } = padSequence([a, b], { paddingValue: -1, paddingSide: "left", returnMask: true });
 * ```
 * Errors: `padSequence: list cannot be empty`, `padSequence: Cannot pad scalars`
 * (a tensor without batch dims); the other batch sizes and the base shapes must match.
 */
export function padSequence(
  list: readonly Tensor[],
  opts?: PadSequenceOptions & { readonly returnMask?: false },
): Tensor;
export function padSequence(
  list: readonly Tensor[],
  opts: PadSequenceOptions & { readonly returnMask: true },
): { padded: Tensor; mask: Tensor };
export function padSequence(
  list: readonly Tensor[],
  opts?: PadSequenceOptions,
): Tensor | { padded: Tensor; mask: Tensor };
export function padSequence(
  list: readonly Tensor[],
  options?: PadSequenceOptions,
): Tensor | { padded: Tensor; mask: Tensor } {
  const op = "padSequence";
  tensorList(op, list);
  const opts: PadSequenceOptions = optionsArg(op, options);
  if (opts.padDim !== undefined) intArg(op, opts.padDim, "padDim");
  flagArg(op, opts.returnMask, "returnMask");
  sideArg(op, opts.paddingSide);
  if (list.length === 0) throw new ShapeError(`${op}: list cannot be empty`);
  list.forEach((t, i) => {
    if (t.batchDim === 0)
      throw new ShapeError(`${op}: Cannot pad scalars: list[${i}] ${t.toString()} has no batch dims`);
  });
  checkEager(op, list);
  const first = list[0]!;
  const rank = first.batchDim;
  const padDim = opts.padDim ?? 0;
  const p = padDim < 0 ? padDim + rank : padDim;
  if (!Number.isInteger(p) || p < 0 || p >= rank)
    throw new ShapeError(`${op}: padDim ${padDim} is out of range for the batch dims of list[0] ${first.toString()}`);
  const base = first.baseShape;
  list.forEach((t, i) => {
    const b = t.batchShape;
    if (b.length !== rank || b.some((s, j) => j !== p && s !== first.batchShape[j]) || !sameDims(t.baseShape, base)) {
      throw new ShapeError(
        `${op}: list[${i}] ${t.toString()} and list[0] ${first.toString()} must have equal shapes except in batch dim ${p}`,
      );
    }
  });
  const dtype = commonDType(list);
  const lengths = list.map((t) => t.batchShape[p]!);
  const maxLen = Math.max(...lengths);
  const batch = [...first.batchShape];
  batch[p] = maxLen;
  const outer = prod(batch.slice(0, p));
  const maskInner = prod(batch.slice(p + 1));
  const inner = maskInner * prod(base);
  const slot = outer * maxLen * inner;
  const v = castScalar(paddingArg(op, opts.paddingValue), dtype);
  const left = opts.paddingSide === "left";
  if (!allOnHost(list)) {
    const padded = padOnDevice(list, dtype, p, lengths, batch, base, v, left);
    if (opts.returnMask !== true) return padded;
    const mask = new Uint8Array(list.length * outer * maxLen * maskInner);
    lengths.forEach((len, i) => {
      const shift = left ? maxLen - len : 0;
      for (let o = 0; o < outer; o++) {
        const row = i * outer + o;
        mask.fill(1, (row * maxLen + shift) * maskInner, (row * maxLen + shift + len) * maskInner);
      }
    });
    return { padded, mask: hostTensor(mask, [list.length, ...batch], batch.length + 1, "bool") };
  }
  const out = new ARRAY_CTOR[dtype](list.length * slot);
  if (!Object.is(v, 0)) out.fill(v);
  const mask = opts.returnMask === true ? new Uint8Array(list.length * outer * maxLen * maskInner) : undefined;
  list.forEach((t, i) => {
    const src = hostData(t, dtype);
    const len = lengths[i]!;
    const shift = left ? maxLen - len : 0;
    for (let o = 0; o < outer; o++) {
      const row = i * outer + o;
      copyRun(out, (row * maxLen + shift) * inner, src, o * len * inner, len * inner);
      mask?.fill(1, (row * maxLen + shift) * maskInner, (row * maxLen + shift + len) * maskInner);
    }
  });
  const padded = output(out, [list.length, ...batch], base, dtype);
  if (mask === undefined) return padded;
  return { padded, mask: output(mask, [list.length, ...batch], [], "bool") };
}

/**
 * `padSequence` as IR ops, for inputs the host cannot read now. When `padDim` is
 * the last batch dim, every (tensor, outer position) pair is one row of a packed
 * tensor and one `segment_pad` pads them all; otherwise each tensor gets a
 * constant block concatenated on the side of the padding.
 */
function padOnDevice(
  list: readonly Tensor[],
  dtype: DType,
  p: number,
  lengths: readonly number[],
  batch: readonly number[],
  base: readonly number[],
  value: number,
  left: boolean,
): Tensor {
  const items = list.map((t) => t.cast(dtype));
  const maxLen = batch[p]!;
  if (p === batch.length - 1) {
    const outer = prod(batch.slice(0, p));
    const rows = items.map((t, i) => (t.batchDim === 1 ? t : t.batchReshape([outer * lengths[i]!])));
    const values = concatRows(rows, () => hostTensor(new ARRAY_CTOR[dtype](0), [0, ...base], 1, dtype));
    const offsets = hostInts(list.length * outer + 1);
    let row = 0;
    for (const len of lengths) {
      for (let o = 0; o < outer; o++, row++) offsets[row + 1] = offsets[row]! + len;
    }
    const padded = Tensor._op("segment_pad", [values, hostTensor(offsets, [offsets.length], 1, "int32")], {
      maxN: maxLen,
      value,
      left,
    });
    return padded.batchReshape([list.length, ...batch]);
  }
  const slots = items.map((t, i) => {
    const padBatch = [...t.batchShape];
    padBatch[p] = maxLen - lengths[i]!;
    if (padBatch[p] === 0) return t;
    let pad = Tensor._const(value, dtype).batchExpand(padBatch);
    if (base.length > 0) pad = pad.expand(base);
    if (lengths[i] === 0) return pad;
    return Tensor._op("batch_concat", left ? [pad, t] : [t, pad], { axis: p });
  });
  return Tensor._op(
    "batch_concat",
    slots.map((t) => t.batchUnsqueeze(0)),
    { axis: 0 },
  );
}

/**
 * Splits a padded batch `(B, ...; base)` back into its `B` tensors (tensordict's
 * `unpad_sequence`): row `i` keeps the positions along batch dim `padDim` (of
 * the row, default 0) that its mask marks. They must form one contiguous run, so
 * left and right padding are both read from the mask. `mask` is bool, shaped as
 * `padded`'s batch (`padSequence`'s mask) or `(B, maxL)`; a full mask must be the
 * same across the other batch dims.
 *
 * ```ts
 * const { padded, mask } = padSequence(list, { returnMask: true });
 * unpadSequence(padded, mask); // the tensors of list again
 * ```
 */
export function unpadSequence(padded: Tensor, mask: Tensor, options?: { readonly padDim?: number }): Tensor[] {
  const op = "unpadSequence";
  tensorArg(op, padded, "padded");
  tensorArg(op, mask, "mask");
  const opts: { readonly padDim?: number } = optionsArg(op, options);
  if (opts.padDim !== undefined) intArg(op, opts.padDim, "padDim");
  checkEager(op, [padded, mask]);
  const batch = padded.batchShape;
  if (batch.length < 2)
    throw new ShapeError(
      `${op}: padded ${padded.toString()} needs a leading batch dim over the tensors and a batch dim to unpad`,
    );
  if (mask.dtype !== "bool") throw new DTypeError(`${op}: mask ${mask.toString()} must be bool, got ${mask.dtype}`);
  const rank = batch.length - 1;
  const padDim = opts.padDim ?? 0;
  const p = padDim < 0 ? padDim + rank : padDim;
  if (!Number.isInteger(p) || p < 0 || p >= rank)
    throw new ShapeError(
      `${op}: padDim ${padDim} is out of range for the batch dims of the rows of padded ${padded.toString()}`,
    );
  const count = batch[0]!;
  const maxLen = batch[p + 1]!;
  const outer = prod(batch.slice(1, p + 1));
  const maskInner = prod(batch.slice(p + 2));
  const inner = maskInner * prod(padded.baseShape);
  const maskShape = mask.shape;
  const fullMask = sameDims(maskShape, batch);
  if (!fullMask && !sameDims(maskShape, [count, maxLen])) {
    throw new ShapeError(
      `${op}: mask ${mask.toString()} must have the batch shape of padded ${padded.toString()} or (${count},${maxLen})`,
    );
  }
  if (fullMask && outer * maskInner === 0 && count * maxLen > 0) {
    throw new ShapeError(
      `${op}: mask ${mask.toString()} holds no values for the rows (another batch dim is 0); pass a (${count},${maxLen}) mask`,
    );
  }
  const m = hostValues(op, mask, "mask");
  const rowBatch = batch.slice(1);
  const runs = maskRuns(op, m, mask, fullMask, count, outer, maxLen, maskInner, p);
  if (!allOnHost([padded])) {
    // Rows of (B * outer, maxL, inner; base): row i is block i along dim 0, cut along dim 1.
    const rows = padded.batchReshape([count * outer, maxLen, maskInner]);
    return runs.map(([from, len], i) => {
      const outBatch = [...rowBatch];
      outBatch[p] = len;
      return rows
        .batchSlice(0, i * outer, (i + 1) * outer)
        .batchSlice(1, from, from + len)
        .batchReshape(outBatch);
    });
  }
  const src = padded.dataSync({ copy: false });
  // Every row is copied before any output tensor is made: making one may allocate on the
  // backend, and a growing WebAssembly memory detaches `src` (a view of it).
  const outs = runs.map(([from, len], i) => {
    const out = new ARRAY_CTOR[padded.dtype](outer * len * inner);
    for (let o = 0; o < outer; o++)
      copyRun(out, o * len * inner, src, ((i * outer + o) * maxLen + from) * inner, len * inner);
    return out;
  });
  return runs.map(([, len], i) => {
    const outBatch = [...rowBatch];
    outBatch[p] = len;
    return output(outs[i]!, outBatch, padded.baseShape, padded.dtype);
  });
}

/** Each row's kept positions along padDim as `[from, length]`, checked to be one run (and the same across other dims). */
function maskRuns(
  op: string,
  m: TypedArray,
  mask: Tensor,
  fullMask: boolean,
  count: number,
  outer: number,
  maxLen: number,
  maskInner: number,
  p: number,
): [number, number][] {
  const runs: [number, number][] = [];
  for (let i = 0; i < count; i++) {
    // Row i's mask along padDim; a full mask must agree at every other batch position.
    const keep = new Uint8Array(maxLen);
    for (let j = 0; j < maxLen; j++)
      keep[j] = (fullMask ? m[(i * outer * maxLen + j) * maskInner]! : m[i * maxLen + j]!) !== 0 ? 1 : 0;
    if (fullMask) {
      for (let o = 0; o < outer; o++) {
        for (let j = 0; j < maxLen; j++) {
          const at = ((i * outer + o) * maxLen + j) * maskInner;
          for (let r = 0; r < maskInner; r++) {
            if ((m[at + r] !== 0 ? 1 : 0) !== keep[j])
              throw new ShapeError(
                `${op}: the mask of row ${i} differs across the batch dims other than padDim ${p}; mask ${mask.toString()}`,
              );
          }
        }
      }
    }
    const start = keep.indexOf(1);
    const end = start < 0 ? 0 : keep.lastIndexOf(1) + 1;
    const from = Math.max(start, 0);
    for (let j = from; j < end; j++) {
      if (keep[j] !== 1)
        throw new ShapeError(
          `${op}: the mask of row ${i} is not one contiguous run along padDim ${p}: positions ${from}..${end - 1} have a gap at ${j}`,
        );
    }
    runs.push([from, end - from]);
  }
  return runs;
}
