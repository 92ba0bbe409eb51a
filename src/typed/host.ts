/**
 * Batch indexing, slicing and concatenation of typed tensors, through the IR's
 * batch_slice / batch_squeeze / batch_concat ops (block copies at run time), so
 * they work inside `jit`. Negative indices need concrete batch sizes (eagerly).
 */
import { ShapeError } from "../../ir/errors.js";
import { checkInt, describe } from "../check.js";
import { Tensor } from "../tensor.js";

/** One batch index: an int, a slice, `null` (new size-1 axis) or `"..."`. */
export type BatchIndex =
  | number
  | {
      /** First index (default 0; negative counts from the end). */
      readonly start?: number;
      /** End, exclusive (default the size). */
      readonly stop?: number;
      /** Positive stride (default 1). */
      readonly step?: number;
    }
  | null
  | "...";

type Axis =
  | { kind: "int"; dim: number; i: number }
  | { kind: "range"; dim: number; start: number; stop: number | undefined; step: number }
  | { kind: "full"; dim: number }
  | { kind: "new" };

/**
 * Applies the axes with IR ops (batch_slice, batch_squeeze, batch_unsqueeze), so it
 * traces inside `jit`. Slices and ints go first, from the last dim back, so the
 * dims still to visit keep their positions; new axes go in last, at their output positions.
 */
function gather(t: Tensor, axes: readonly Axis[]): Tensor {
  let x = t;
  for (let k = axes.length - 1; k >= 0; k--) {
    const a = axes[k]!;
    if (a.kind === "int") x = x.batchIndex(a.dim, a.i);
    else if (a.kind === "range") x = x.batchSlice(a.dim, a.start, a.stop, a.step);
  }
  let p = 0;
  for (const a of axes) {
    if (a.kind === "new") x = x.batchUnsqueeze(p);
    if (a.kind !== "int") p++;
  }
  return x;
}

/** Each index is an int, a `{start, stop, step}` slice of ints, `null` or `"..."`. */
function checkIndices(t: Tensor, indices: unknown): readonly BatchIndex[] {
  if (!Array.isArray(indices))
    throw new ShapeError(`batchIndex: indices must be an array, got ${describe(indices)} for x ${t.toString()}`);
  indices.forEach((ix: unknown, k) => {
    if (ix === null || ix === "..." || typeof ix === "number") return;
    if (typeof ix !== "object" || Array.isArray(ix)) {
      throw new ShapeError(
        `batchIndex: index ${k} must be an integer, a {start, stop, step} slice, null or "...", got ${describe(ix)} for x ${t.toString()}`,
      );
    }
    for (const [key, v] of Object.entries(ix as object)) {
      if (key !== "start" && key !== "stop" && key !== "step")
        throw new ShapeError(
          `batchIndex: index ${k} has an unknown field ${JSON.stringify(key)} for x ${t.toString()}`,
        );
      if (v !== undefined && (typeof v !== "number" || !Number.isInteger(v))) {
        throw new ShapeError(
          `batchIndex: index ${k}.${key} must be an integer, got ${describe(v)} for x ${t.toString()}`,
        );
      }
    }
  });
  return indices as readonly BatchIndex[];
}

export function batchIndexHost(t: Tensor, indices: readonly BatchIndex[]): Tensor {
  checkIndices(t, indices);
  const batch = t.batchShape;
  const nEllipsis = indices.filter((x) => x === "...").length;
  if (nEllipsis > 1) throw new ShapeError(`batchIndex: at most one "..." in the indices for x ${t.toString()}`);
  const consuming = indices.filter((x) => x !== null && x !== "...").length;
  if (consuming > batch.length)
    throw new ShapeError(`batchIndex: ${consuming} indices for the ${batch.length} batch dims of x ${t.toString()}`);
  const axes: Axis[] = [];
  let dim = 0;
  const full = (d: number): Axis => ({ kind: "full", dim: d });
  for (const ix of indices) {
    if (ix === null) axes.push({ kind: "new" });
    else if (ix === "...") for (let k = 0; k < batch.length - consuming; k++) axes.push(full(dim++));
    else if (typeof ix === "number") axes.push({ kind: "int", dim: dim++, i: ix });
    else {
      const whole = (ix.start ?? 0) === 0 && ix.stop === undefined && (ix.step ?? 1) === 1;
      axes.push(whole ? full(dim) : { kind: "range", dim, start: ix.start ?? 0, stop: ix.stop, step: ix.step ?? 1 });
      dim++;
    }
  }
  while (dim < batch.length) axes.push(full(dim++));
  return gather(t, axes);
}

export function batchSliceHost(t: Tensor, dim: number, start: number, stop: number | undefined, step: number): Tensor {
  checkInt("batchSlice", "dim", dim);
  const n = t.batchDim;
  const d = dim < 0 ? dim + n : dim;
  if (!Number.isInteger(d) || d < 0 || d >= n)
    throw new ShapeError(`batchSlice: batch dim ${dim} is out of range for x ${t.toString()}`);
  const idx: BatchIndex[] = t.batchShape.map(() => ({}));
  idx[d] = { start, stop, step };
  return batchIndexHost(t, idx);
}

/** Concatenates along an existing batch dim; the other batch dims and the bases must match. */
export function batchCatHost(ts: readonly Tensor[], dim: number): Tensor {
  checkInt("batchCat", "dim", dim);
  const first = ts[0]!;
  const n = first.batchDim;
  const d = dim < 0 ? dim + n : dim;
  if (!Number.isInteger(d) || d < 0 || d >= n)
    throw new ShapeError(`batchCat: batch dim ${dim} is out of range for x ${first.toString()}`);
  for (const x of ts) {
    const ok =
      x.batchDim === n &&
      x.dtype === first.dtype &&
      x.batchShape.every((s, i) => i === d || s === first.batchShape[i]) &&
      x.baseShape.join() === first.baseShape.join();
    if (!ok)
      throw new ShapeError(
        `batchCat: cannot concatenate x ${first.toString()} with ${x.toString()} along batch dim ${dim}`,
      );
  }
  return ts.length === 1 ? first : Tensor._op("batch_concat", ts, { axis: d });
}
