/**
 * Argument checks and axis helpers shared by the numerics compositions (scans, sorting,
 * softmax, moments, norms, einsum). Everything here builds graph nodes through public
 * Tensor operations; nothing reads values.
 */
import { isFloat } from "../../ir/dtype.js";
import { DTypeError, ShapeError } from "../../ir/errors.js";
import { describe } from "../check.js";
import { fromTypedArray } from "../creation.js";
import { Tensor } from "../tensor.js";

/**
 * The longest base axis that `cumsum`, `cumprod`, `sort`, `argsort` and `topk` take.
 * They compare or combine every pair of positions along the axis (n² work per batch
 * element, in one fused kernel), so that sizes beyond this are a ShapeError rather
 * than a kernel of millions of terms per element.
 */
export const MAX_AXIS_LENGTH = 1024;

/** `x` must be a Tensor. */
export function checkTensor(op: string, x: unknown, name = "x"): asserts x is Tensor {
  if (!(x instanceof Tensor)) throw new DTypeError(`${op}: ${name} must be a Tensor, got ${describe(x)}`);
}

/** One base axis (negative counts from the end), or a ShapeError naming it. */
export function baseAxis(op: string, x: Tensor, axis: unknown): number {
  const rank = x.baseDim;
  if (typeof axis !== "number" || !Number.isInteger(axis)) {
    throw new ShapeError(`${op}: axis must be an integer, got ${describe(axis)} for x ${x.toString()}`);
  }
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) throw new ShapeError(`${op}: base axis ${axis} is out of range for x ${x.toString()}`);
  return a;
}

/** Base axes (all of them when undefined), non-negative and increasing; a repeat is a ShapeError. */
export function baseAxes(op: string, x: Tensor, axes: unknown): number[] {
  if (axes === undefined) return [...Array(x.baseDim).keys()];
  const list: unknown[] = typeof axes === "number" ? [axes] : Array.isArray(axes) ? axes : [NaN];
  if (!Array.isArray(axes) && typeof axes !== "number") {
    throw new ShapeError(
      `${op}: axes must be an integer or an array of integers, got ${describe(axes)} for x ${x.toString()}`,
    );
  }
  const out = list.map((a) => baseAxis(op, x, a)).sort((a, b) => a - b);
  for (let i = 1; i < out.length; i++) {
    if (out[i] === out[i - 1]) throw new ShapeError(`${op}: base axis ${out[i]} appears twice for x ${x.toString()}`);
  }
  return out;
}

/** The `keepdim` option: true or false (default false). */
export function keepdimOf(op: string, opts: unknown): boolean {
  if (opts === undefined || opts === null) return false;
  if (typeof opts !== "object") throw new DTypeError(`${op}: options must be an object, got ${describe(opts)}`);
  const k = (opts as { keepdim?: unknown }).keepdim;
  if (k === undefined) return false;
  if (typeof k !== "boolean") throw new ShapeError(`${op}: keepdim must be true or false, got ${describe(k)}`);
  return k;
}

/** A boolean option (default `dflt`), or a DTypeError naming it. */
export function boolOption(op: string, opts: unknown, name: string, dflt: boolean): boolean {
  if (opts === undefined || opts === null) return dflt;
  if (typeof opts !== "object") throw new DTypeError(`${op}: options must be an object, got ${describe(opts)}`);
  const v = (opts as Record<string, unknown>)[name];
  if (v === undefined) return dflt;
  if (typeof v !== "boolean") throw new DTypeError(`${op}: ${name} must be true or false, got ${describe(v)}`);
  return v;
}

/** `x` as a float tensor: floats stay, integers and bool become float32 (as `mean`). */
export function asFloat(x: Tensor): Tensor {
  return isFloat(x.dtype) ? x : x.cast("float32");
}

/** The axis length limit of the pairwise compositions. */
export function checkAxisLength(op: string, x: Tensor, axis: number): number {
  const n = x.baseShape[axis]!;
  if (n > MAX_AXIS_LENGTH) {
    throw new ShapeError(
      `${op}: base axis ${axis} of x ${x.toString()} has ${n} elements, more than the limit ${MAX_AXIS_LENGTH} (the composition compares every pair of positions)`,
    );
  }
  return n;
}

/** Moves base axis `a` to the end (a permute, or `x` itself when it is already last). */
export function moveToLast(x: Tensor, a: number): Tensor {
  const r = x.baseDim;
  if (a === r - 1) return x;
  const perm = [...Array(r).keys()].filter((i) => i !== a);
  perm.push(a);
  return x.permute(...perm);
}

/** The inverse of `moveToLast`: the last base axis goes back to position `a`. */
export function moveFromLast(y: Tensor, a: number): Tensor {
  const r = y.baseDim;
  if (a === r - 1) return y;
  const perm = [...Array(r - 1).keys()];
  perm.splice(a, 0, r - 1);
  return y.permute(...perm);
}

/** The bool matrix `(n, n)` with `m[k][j] = j <= k` (or `j < k` when `strict`). */
export function lowerMask(n: number, strict: boolean): Tensor {
  const m = new Uint8Array(n * n);
  for (let k = 0; k < n; k++) for (let j = 0; j < (strict ? k : k + 1); j++) m[k * n + j] = 1;
  return fromTypedArray(m, [n, n], { dtype: "bool" });
}

/** `0, 1, …, n-1` as an int32 base vector `(;n)`. */
export function iota(n: number): Tensor {
  const a = new Int32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  return fromTypedArray(a, [n]);
}
