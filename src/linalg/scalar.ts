/**
 * Scalar algebra over matrix components. A linear-algebra routine works on the
 * components `a[i][j]` of its base matrices, each a tensor `(batch; lead…)`
 * picked with `select`; the routine unrolls into straight-line code that the
 * fuser turns into one kernel per call. A component may also be a plain number,
 * a *structural* constant known when the graph is built (the zeros and ones of
 * an identity, a zeroed sub-diagonal): products with a structural 0 are 0 and
 * sums with it are the other operand, so no code is emitted for them. As in
 * BLAS, which skips zero multipliers, a structural zero times an Inf or NaN is
 * 0, not NaN.
 */
import type { DType } from "../../ir/dtype.js";
import { Tensor, where } from "../tensor.js";

/** A component: a tensor, or a structural constant. */
export type Sc = Tensor | number;

/** The operations on components, computing in `dtype` (a float dtype). */
export class Alg {
  constructor(readonly dtype: DType) {}

  /** A component as a tensor (a constant `(;)` for a number). */
  t(a: Sc): Tensor {
    return typeof a === "number" ? Tensor._const(a, this.dtype) : a;
  }
  add(a: Sc, b: Sc): Sc {
    if (typeof a === "number" && typeof b === "number") return a + b;
    if (a === 0) return b;
    if (b === 0) return a;
    return this.t(a).add(this.t(b));
  }
  sub(a: Sc, b: Sc): Sc {
    if (typeof a === "number" && typeof b === "number") return a - b;
    if (b === 0) return a;
    if (a === 0) return this.neg(b);
    return this.t(a).sub(this.t(b));
  }
  mul(a: Sc, b: Sc): Sc {
    if (typeof a === "number" && typeof b === "number") return a * b;
    if (a === 0 || b === 0) return 0;
    if (a === 1) return b;
    if (b === 1) return a;
    if (a === -1) return this.neg(b);
    if (b === -1) return this.neg(a);
    return this.t(a).mul(this.t(b));
  }
  /** `a / b`; a structural 0 numerator gives 0 (a zero multiplier, as BLAS skips it). */
  div(a: Sc, b: Sc): Sc {
    if (typeof a === "number" && typeof b === "number") return a / b;
    if (a === 0) return 0;
    if (b === 1) return a;
    return this.t(a).div(this.t(b));
  }
  neg(a: Sc): Sc {
    return typeof a === "number" ? -a : a.neg();
  }
  abs(a: Sc): Sc {
    return typeof a === "number" ? Math.abs(a) : a.abs();
  }
  sqrt(a: Sc): Sc {
    return typeof a === "number" ? Math.sqrt(a) : a.sqrt();
  }
  /** `Σ a[i]·b[i]` left to right, skipping structural zeros. */
  dot(a: readonly Sc[], b: readonly Sc[]): Sc {
    let acc: Sc = 0;
    for (let i = 0; i < a.length; i++) acc = this.add(acc, this.mul(a[i]!, b[i]!));
    return acc;
  }
  /** `c ? a : b`, folded when both sides are the same constant or the same tensor. */
  where(c: Tensor, a: Sc, b: Sc): Sc {
    if (a === b) return a;
    return where(c, this.t(a), this.t(b));
  }
}
