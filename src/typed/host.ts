/**
 * Batch indexing, slicing and concatenation on the host.
 *
 * The IR has no batch-slice or batch-concat op (batch dims are symbolic inside
 * `jit`, so an index into them cannot be a compile-time constant), so these
 * read the realized values (`dataSync`, JS backend) and build a new tensor.
 * Inside `jit` they throw the TraceError of `dataSync`. They need a
 * `batch_slice`/`batch_concat` IR op to become traceable (see the report).
 */
import { ARRAY_CTOR } from "../../ir/dtype.js";
import { ShapeError } from "../../ir/errors.js";
import { prod } from "../../ir/types.js";
import { fromTypedArray } from "../creation.js";
import type { Tensor } from "../tensor.js";

/** One batch index: an int, a slice, `null` (new size-1 axis) or `"..."`. */
export type BatchIndex = number | { readonly start?: number; readonly stop?: number; readonly step?: number } | null | "...";

type Axis = { kind: "int"; dim: number; i: number } | { kind: "range"; dim: number; idx: number[] } | { kind: "new" };

function sliceRange(n: number, start: number, stop: number | undefined, step: number, what: string): number[] {
  if (!Number.isInteger(step) || step <= 0) throw new ShapeError(`${what}: step ${step} must be a positive integer`);
  const clamp = (v: number) => Math.min(n, Math.max(0, v < 0 ? v + n : v));
  const s = clamp(start);
  const e = clamp(stop ?? n);
  const out: number[] = [];
  for (let i = s; i < e; i += step) out.push(i);
  return out;
}

function gather(t: Tensor, axes: readonly Axis[], op: string): Tensor {
  const batch = t.batchShape;
  if (batch.some((d) => d < 0)) throw new ShapeError(`${op}: needs concrete batch sizes, got x ${t.toString()}`);
  const src = t.dataSync();
  const baseSize = prod(t.baseShape);
  const strides = batch.map((_, i) => prod(batch.slice(i + 1)) * baseSize);
  const outBatch: number[] = [];
  for (const a of axes) if (a.kind !== "int") outBatch.push(a.kind === "new" ? 1 : a.idx.length);
  const out = new ARRAY_CTOR[t.dtype](prod(outBatch) * baseSize);
  let o = 0;
  const rec = (k: number, off: number): void => {
    if (k === axes.length) {
      out.set(src.subarray(off, off + baseSize), o);
      o += baseSize;
      return;
    }
    const a = axes[k]!;
    if (a.kind === "new") rec(k + 1, off);
    else if (a.kind === "int") rec(k + 1, off + a.i * strides[a.dim]!);
    else for (const i of a.idx) rec(k + 1, off + i * strides[a.dim]!);
  };
  rec(0, 0);
  return fromTypedArray(out, [...outBatch, ...t.baseShape], { batchDim: outBatch.length, dtype: t.dtype });
}

export function batchIndexHost(t: Tensor, indices: readonly BatchIndex[]): Tensor {
  const batch = t.batchShape;
  const nEllipsis = indices.filter((x) => x === "...").length;
  if (nEllipsis > 1) throw new ShapeError(`batchIndex: at most one "..." in the indices for x ${t.toString()}`);
  const consuming = indices.filter((x) => x !== null && x !== "...").length;
  if (consuming > batch.length) throw new ShapeError(`batchIndex: ${consuming} indices for the ${batch.length} batch dims of x ${t.toString()}`);
  const axes: Axis[] = [];
  let dim = 0;
  const full = (d: number): Axis => ({ kind: "range", dim: d, idx: [...Array(batch[d]!).keys()] });
  for (const ix of indices) {
    if (ix === null) axes.push({ kind: "new" });
    else if (ix === "...") for (let k = 0; k < batch.length - consuming; k++) axes.push(full(dim++));
    else if (typeof ix === "number") {
      const n = batch[dim]!;
      const i = ix < 0 ? ix + n : ix;
      if (!Number.isInteger(i) || i < 0 || i >= n) throw new ShapeError(`batchIndex: index ${ix} is out of range for batch dim ${dim} of x ${t.toString()}`);
      axes.push({ kind: "int", dim: dim++, i });
    } else {
      axes.push({ kind: "range", dim, idx: sliceRange(batch[dim]!, ix.start ?? 0, ix.stop, ix.step ?? 1, "batchIndex") });
      dim++;
    }
  }
  while (dim < batch.length) axes.push(full(dim++));
  return gather(t, axes, "batchIndex");
}

export function batchSliceHost(t: Tensor, dim: number, start: number, stop: number | undefined, step: number): Tensor {
  const n = t.batchDim;
  const d = dim < 0 ? dim + n : dim;
  if (!Number.isInteger(d) || d < 0 || d >= n) throw new ShapeError(`batchSlice: batch dim ${dim} is out of range for x ${t.toString()}`);
  const idx: BatchIndex[] = t.batchShape.map(() => ({}));
  idx[d] = { start, stop, step };
  return batchIndexHost(t, idx);
}

/** Concatenates along an existing batch dim; the other batch dims and the bases must match. */
export function batchCatHost(ts: readonly Tensor[], dim: number): Tensor {
  const first = ts[0]!;
  const n = first.batchDim;
  const d = dim < 0 ? dim + n : dim;
  if (!Number.isInteger(d) || d < 0 || d >= n) throw new ShapeError(`batchCat: batch dim ${dim} is out of range for x ${first.toString()}`);
  for (const x of ts) {
    const ok = x.batchDim === n && x.dtype === first.dtype && x.batchShape.every((s, i) => i === d || s === first.batchShape[i]) && x.baseShape.join() === first.baseShape.join();
    if (!ok) throw new ShapeError(`batchCat: cannot concatenate x ${first.toString()} with ${x.toString()} along batch dim ${dim}`);
  }
  const outer = prod(first.batchShape.slice(0, d));
  const inner = prod(first.batchShape.slice(d + 1)) * prod(first.baseShape);
  const total = ts.reduce((s, x) => s + x.batchShape[d]!, 0);
  const out = new ARRAY_CTOR[first.dtype](outer * total * inner);
  let pos = 0;
  for (const x of ts) {
    const src = x.dataSync();
    const chunk = x.batchShape[d]! * inner;
    for (let o = 0; o < outer; o++) out.set(src.subarray(o * chunk, (o + 1) * chunk), o * total * inner + pos);
    pos += chunk;
  }
  const batch = [...first.batchShape];
  batch[d] = total;
  return fromTypedArray(out, [...batch, ...first.baseShape], { batchDim: n, dtype: first.dtype });
}
