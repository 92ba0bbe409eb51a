/**
 * Numerics along base axes built from existing IR ops (so they fuse, trace once
 * inside `jit` for every batch size, and run on every backend): scans (`cumsum`,
 * `cumprod`), `softmax`, `logSoftmax`, `logsumexp`, `var`/`std` and vector `norm`.
 * The NaN/±Inf rules follow NumPy and SciPy (`scipy.special.softmax`,
 * `log_softmax`, `logsumexp`); each function says which.
 */
import { DTypeError, ShapeError } from "../../ir/errors.js";
import { prod } from "../../ir/types.js";
import { describe } from "../check.js";
import { Tensor, where } from "../tensor.js";
import {
  asFloat,
  baseAxes,
  baseAxis,
  checkAxisLength,
  checkTensor,
  keepdimOf,
  lowerMask,
  moveFromLast,
  moveToLast,
} from "./common.js";

/** Options of the reductions: keep the reduced axes with size 1. */
export interface KeepdimOptions {
  /** Keep reduced dims with size 1 (default false). */
  readonly keepdim?: boolean;
}

/** Options of `var` and `std`. */
export interface VarOptions extends KeepdimOptions {
  /**
   * Subtracted from the number of elements in the divisor: 0 (the default, as NumPy's
   * `ddof=0` and the Array API) gives the population variance, 1 the sample variance
   * (PyTorch's default). A divisor of 0 or less divides by 0 (NaN or ±Inf, as NumPy).
   */
  readonly correction?: number;
}

/** The reduced result of a keepdim computation: the reduced axes dropped unless `keep`. */
function dropAxes(y: Tensor, axes: readonly number[], keep: boolean): Tensor {
  if (keep || axes.length === 0) return y;
  return y.reshape(y.baseShape.filter((_, i) => !axes.includes(i)));
}

/**
 * The inclusive scan of `x` along one base axis with `op` ("sum" or "prod"): position k
 * combines positions 0..k in order. Built as one broadcast `where` over the pairs
 * (k, j ≤ k) and a reduction, so its rounding, NaN and ±Inf behaviour are those of
 * `sum`/`prod` over the prefix (bool and integers as `sum`: bool gives int32).
 */
function scan(op: "cumsum" | "cumprod", x: Tensor, axis: number): Tensor {
  checkTensor(op, x);
  const a = baseAxis(op, x, axis);
  const n = checkAxisLength(op, x, a);
  const xs = x.dtype === "bool" ? x.cast("int32") : x;
  // Rows k, columns j: entry (k, j) is x_j where j <= k, else the identity of the combination
  // (-0 for sums, the exact additive identity; 1 for products).
  const row = moveToLast(xs, a).unsqueeze(-2); // (…, 1, n)
  const picked = where(lowerMask(n, false), row, op === "cumsum" ? -0 : 1);
  const red = op === "cumsum" ? picked.sum(-1) : picked.prod(-1);
  return moveFromLast(red, a);
}

/**
 * Cumulative sum along a base axis (default the last): `out[k] = x[0] + … + x[k]`,
 * summed in order as `sum` does. bool gives int32; integers wrap. The axis may hold at
 * most `MAX_AXIS_LENGTH` (1024) elements.
 * @example cumsum(tensor([1, 2, 3])) // [1, 3, 6]
 */
export function cumsum(x: Tensor, axis = -1): Tensor {
  return scan("cumsum", x, axis);
}

/**
 * Cumulative product along a base axis (default the last): `out[k] = x[0] · … · x[k]`.
 * bool gives int32; integers wrap. The axis may hold at most 1024 elements.
 * @example cumprod(tensor([1, 2, 3])) // [1, 2, 6]
 */
export function cumprod(x: Tensor, axis = -1): Tensor {
  return scan("cumprod", x, axis);
}

/**
 * The softmax along a base axis (default the last): `exp(x - max) / sum(exp(x - max))`,
 * as `scipy.special.softmax`. Integers give float32. -Inf entries get probability 0
 * when the axis has a finite maximum; an axis whose maximum is ±Inf or NaN gives NaN
 * (as SciPy, PyTorch and JAX).
 * @example softmax(tensor([0, Math.log(3)])) // [0.25, 0.75]
 */
export function softmax(x: Tensor, axis = -1): Tensor {
  checkTensor("softmax", x);
  const a = baseAxis("softmax", x, axis);
  const xf = asFloat(x);
  if (xf.baseShape[a] === 0) return xf;
  const e = xf.sub(xf.max(a, { keepdim: true })).exp();
  return e.div(e.sum(a, { keepdim: true }));
}

/**
 * The shift that keeps `exp` in range: the maximum over `axes` where it is finite, else 0
 * (SciPy's rule: an infinite or NaN maximum is not subtracted, so ±Inf and NaN reach the result).
 */
function finiteMax(xf: Tensor, axes: readonly number[]): Tensor {
  const m = xf.max(axes, { keepdim: true });
  return where(m.isFinite(), m, 0);
}

/**
 * `log(sum(exp(x)))` over base axes (all by default), computed stably as SciPy's
 * `logsumexp`: the finite maximum is subtracted first, so large inputs do not
 * overflow. All -Inf (or an empty axis) gives -Inf, any +Inf gives +Inf, NaN gives
 * NaN. Integers give float32.
 * @example logsumexp(tensor([1000, 1000])) // 1000.6931…
 */
export function logsumexp(x: Tensor, axes?: number | readonly number[], opts?: KeepdimOptions): Tensor {
  checkTensor("logsumexp", x);
  const ax = baseAxes("logsumexp", x, axes);
  const keep = keepdimOf("logsumexp", opts);
  const xf = asFloat(x);
  if (ax.some((a) => xf.baseShape[a] === 0)) return xf.exp().sum(ax, { keepdim: keep }).log();
  const shift = finiteMax(xf, ax);
  const out = xf.sub(shift).exp().sum(ax, { keepdim: true }).log().add(shift);
  return dropAxes(out, ax, keep);
}

/**
 * The log of the softmax along a base axis (default the last), as
 * `scipy.special.log_softmax`: `(x - m) - log(sum(exp(x - m)))` with `m` the finite
 * maximum, accurate where `log(softmax(x))` underflows. -Inf entries give -Inf; an axis
 * of all -Inf, or with +Inf or NaN, gives NaN where SciPy does.
 */
export function logSoftmax(x: Tensor, axis = -1): Tensor {
  checkTensor("logSoftmax", x);
  const a = baseAxis("logSoftmax", x, axis);
  const xf = asFloat(x);
  if (xf.baseShape[a] === 0) return xf;
  const t = xf.sub(finiteMax(xf, [a]));
  return t.sub(t.exp().sum(a, { keepdim: true }).log());
}

function correctionOf(op: string, opts: VarOptions | undefined): number {
  if (opts === undefined || opts === null) return 0;
  if (typeof opts !== "object") throw new DTypeError(`${op}: options must be an object, got ${describe(opts)}`);
  const c: unknown = opts.correction;
  if (c === undefined) return 0;
  if (typeof c !== "number" || !Number.isFinite(c)) {
    throw new DTypeError(`${op}: correction must be a finite number, got ${describe(c)}`);
  }
  return c;
}

/**
 * The variance over base axes (all by default), two-pass for accuracy: the mean
 * first, then the mean of the squared deviations, divided by `N - correction`
 * (`correction` 0 by default, as NumPy's `ddof`; 1 for the sample variance). A
 * divisor of 0 or less divides by 0, as NumPy: one element with `correction: 1`
 * gives NaN, an empty axis NaN. NaN or ±Inf in the data give NaN. Integers give float32.
 * @example variance(tensor([1, 2, 3, 4])) // 1.25
 */
export function variance(x: Tensor, axes?: number | readonly number[], opts?: VarOptions): Tensor {
  checkTensor("var", x);
  const ax = baseAxes("var", x, axes);
  const keep = keepdimOf("var", opts);
  const c = correctionOf("var", opts);
  const xf = asFloat(x);
  const n = prod(ax.map((a) => xf.baseShape[a]!));
  const d = xf.sub(xf.mean(ax, { keepdim: true }));
  return d
    .mul(d)
    .sum(ax, { keepdim: keep })
    .div(Math.max(n - c, 0));
}

/** The standard deviation: `sqrt(var(x, axes, opts))` (see `variance`). */
export function std(x: Tensor, axes?: number | readonly number[], opts?: VarOptions): Tensor {
  checkTensor("std", x);
  return variance(x, axes, opts).sqrt();
}

/**
 * The vector p-norm over base axes (all by default, taken as one flat vector), as
 * NumPy's `linalg.vector_norm`: p = 2 (default) `sqrt(sum(x²))`, 1 `sum|x|`, Infinity
 * `max|x|`, -Infinity `min|x|`, 0 the count of non-zero entries (NaN counts), any
 * other p `sum(|x|^p)^(1/p)`. NaN propagates; integers give float32. `"fro"`: NumPy's
 * Frobenius matrix norm over two base axes (the base of a matrix when `axes` is omitted).
 * @example norm(tensor([3, 4])) // 5
 */
export function norm(
  x: Tensor,
  p: number | "fro" = 2,
  axes?: number | readonly number[],
  opts?: KeepdimOptions,
): Tensor {
  checkTensor("norm", x);
  if (p === "fro") {
    // NumPy's matrix norm "fro": two axes (the base of a matrix when none are given), sqrt(sum |x|²) over them.
    const two = baseAxes("norm", x, axes);
    if (two.length !== 2 || new Set(two).size !== 2) {
      throw new ShapeError(
        `norm: p = "fro" needs two distinct base axes (a matrix), got ${axes === undefined ? `the ${x.baseDim} base axes` : `axes ${describe(axes)}`} of x ${x.toString()}`,
      );
    }
    return norm(x, 2, two, opts);
  }
  if (typeof p !== "number" || Number.isNaN(p))
    throw new DTypeError(`norm: p must be a number or "fro", got ${describe(p)}`);
  const ax = baseAxes("norm", x, axes);
  const keepdim = keepdimOf("norm", opts);
  const xf = asFloat(x);
  const k = { keepdim };
  if (p === 0) return xf.ne(0).cast(xf.dtype).sum(ax, k);
  const m = xf.abs();
  if (p === Infinity || p === -Infinity) {
    if (ax.some((a) => xf.baseShape[a] === 0)) {
      throw new ShapeError(`norm: p = ${p} of an empty base axis of x ${x.toString()} is undefined (as NumPy)`);
    }
    return p === Infinity ? m.max(ax, k) : m.min(ax, k);
  }
  if (p === 1) return m.sum(ax, k);
  if (p === 2) return m.mul(m).sum(ax, k).sqrt();
  return m
    .pow(p)
    .sum(ax, k)
    .pow(1 / p);
}
