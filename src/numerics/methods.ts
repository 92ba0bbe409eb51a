/**
 * The Tensor methods of the numerics along base axes (cumsum, softmax, var, sort, …)
 * and bitwiseNot (the other bitwise ops, bitwiseAnd, leftShift, …, are the methods of
 * their elementwise ops, src/api/tensor-ops.ts):
 * installed on `Tensor.prototype` by the full entry (`src/index.ts` calls
 * `installNumericMethods()`), so that `batchwise/runtime`, which only runs bundles,
 * carries neither them nor the compositions they call.
 */
import { isInt } from "../../ir/dtype.js";
import { DTypeError } from "../../ir/errors.js";
import { Tensor, type ReduceOptions } from "../tensor.js";
import * as N from "./index.js";

declare module "../tensor.js" {
  interface Tensor {
    /** Elementwise bitwise NOT of integers (int32, uint32): `x ^ ~0` (NumPy's `invert`; int32 `~x` is `-x - 1`). */
    bitwiseNot(): Tensor;
    /** Cumulative sum along a base axis (default the last); see `cumsum`. */
    cumsum(axis?: number): Tensor;
    /** Cumulative product along a base axis (default the last); see `cumprod`. */
    cumprod(axis?: number): Tensor;
    /** Softmax along a base axis (default the last); see `softmax`. */
    softmax(axis?: number): Tensor;
    /** Log-softmax along a base axis (default the last); see `logSoftmax`. */
    logSoftmax(axis?: number): Tensor;
    /** Stable `log(sum(exp(x)))` over base axes (all by default); see `logsumexp`. */
    logsumexp(axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
    /**
     * Variance over base axes (all by default), two-pass; `correction` (default 0, NumPy's
     * `ddof`) is subtracted from the count. One element with `correction: 1` gives NaN.
     * @example tensor([1, 2, 3, 4]).var() // 1.25
     */
    var(axes?: number | readonly number[], opts?: N.VarOptions): Tensor;
    /** Standard deviation over base axes: `sqrt(var)` (see `var`). */
    std(axes?: number | readonly number[], opts?: N.VarOptions): Tensor;
    /** Vector p-norm over base axes (all by default, p = 2 by default), or the Frobenius norm `"fro"` of two axes; see `norm`. */
    norm(p?: number | "fro", axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
    /** Sorted along a base axis (default the last; NaN last, stable); see `sort`. */
    sort(axis?: number, opts?: N.SortOptions): Tensor;
    /** The int32 positions that sort a base axis (stable); see `argsort`. */
    argsort(axis?: number, opts?: N.SortOptions): Tensor;
    /** The k largest (or smallest) values along a base axis and their positions; see `topk`. */
    topk(k: number, axis?: number, opts?: N.TopkOptions): N.TopkResult;
  }
}

/** Installs the methods above on `Tensor.prototype` (the full entry calls it once). */
export function installNumericMethods(): void {
  const P = Tensor.prototype;
  if (Object.hasOwn(P, "cumsum")) return;
  const methods = {
    bitwiseNot(this: Tensor): Tensor {
      checkBitwiseNot(this);
      return Tensor._op("bitwise_xor", [this, Tensor._const(this.dtype === "uint32" ? 0xffffffff : -1, this.dtype)]);
    },
    cumsum(this: Tensor, axis = -1): Tensor {
      return N.cumsum(this, axis);
    },
    cumprod(this: Tensor, axis = -1): Tensor {
      return N.cumprod(this, axis);
    },
    softmax(this: Tensor, axis = -1): Tensor {
      return N.softmax(this, axis);
    },
    logSoftmax(this: Tensor, axis = -1): Tensor {
      return N.logSoftmax(this, axis);
    },
    logsumexp(this: Tensor, axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
      return N.logsumexp(this, axes, opts);
    },
    var(this: Tensor, axes?: number | readonly number[], opts?: N.VarOptions): Tensor {
      return N.variance(this, axes, opts);
    },
    std(this: Tensor, axes?: number | readonly number[], opts?: N.VarOptions): Tensor {
      return N.std(this, axes, opts);
    },
    norm(this: Tensor, p: number | "fro" = 2, axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
      return N.norm(this, p, axes, opts);
    },
    sort(this: Tensor, axis = -1, opts?: N.SortOptions): Tensor {
      return N.sort(this, axis, opts);
    },
    argsort(this: Tensor, axis = -1, opts?: N.SortOptions): Tensor {
      return N.argsort(this, axis, opts);
    },
    topk(this: Tensor, k: number, axis = -1, opts?: N.TopkOptions): N.TopkResult {
      return N.topk(this, k, axis, opts);
    },
  };
  for (const [name, fn] of Object.entries(methods))
    Object.defineProperty(P, name, { value: fn, writable: true, configurable: true, enumerable: false });
}

/**
 * `bitwiseNot`'s dtype check: an integer operand (the binary bitwise ops are the methods of
 * their elementwise ops, src/api/tensor-ops.ts, with the same message); floats and bool are
 * a DTypeError naming the method.
 */
function checkBitwiseNot(x: Tensor): void {
  if (!isInt(x.dtype)) {
    throw new DTypeError(
      `bitwiseNot: needs integer operands (int32, uint32, int16, uint16, int8 or uint8), got x ${x.toString()} of dtype ${x.dtype}`,
    );
  }
}
