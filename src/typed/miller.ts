/** MillerIndex `(3)`: crystallographic plane or direction indices, int32. */
import type { DType } from "../../ir/dtype.js";
import { Tensor, where } from "../tensor.js";
import { PrimitiveTensor, optDType, needTensor, type TypedOptions } from "./base.js";
import { fillAs } from "./fill.js";
import { assemble, vecOf } from "./components.js";
import { Vec } from "./vec.js";

/**
 * gcd(|a|, |b|) by Euclid's algorithm unrolled a fixed number of times: 46
 * steps suffice for any int32 pair (the worst case is consecutive Fibonacci
 * numbers, and F47 > 2³¹), so the loop is data-independent and traces.
 * `gcd(0, 0) = 0`.
 */
export function gcd(a: Tensor, b: Tensor): Tensor {
  needTensor("gcd", "a", a);
  needTensor("gcd", "b", b);
  let x = a.abs();
  let y = b.abs();
  for (let i = 0; i < 46; i++) {
    const done = y.eq(0);
    const r = x.mod(where(done, 1, y));
    x = where(done, x, y);
    y = where(done, 0, r);
  }
  return x;
}

/** MillerIndex `(3)`: crystallographic plane or direction indices, int32. */
export class MillerIndex extends PrimitiveTensor<MillerIndex, "MillerIndex"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "MillerIndex";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [3];
  /** The dtype of values made without a `dtype` option: an integer type. */
  static override readonly DEFAULT_DTYPE: DType = "int32";

  /** `MillerIndex.fill(1, 1, 0)` (int32). */
  static fill(a: number, b: number, c: number, opts: TypedOptions = {}): MillerIndex {
    return fillAs(MillerIndex, [a, b, c], opts);
  }

  /**
   * Divides by `gcd(gcd(a, b), c)`, keeping signs: `(2,-4,6)` → `(1,-2,3)`.
   * Computed in the graph (see `gcd`); the division is a float32 quotient
   * corrected once in integer arithmetic, exact for every int32. `(0,0,0)` stays `(0,0,0)`.
   */
  reduce(): MillerIndex {
    const [a, b, c] = vecOf(this.t) as [Tensor, Tensor, Tensor];
    const g = gcd(gcd(a, b), c);
    const safe = where(g.eq(0), 1, g);
    // Exact integer division: a float32 quotient, then one integer correction of its rounding error.
    const idiv = (x: Tensor): Tensor => {
      const q0 = x.div(safe).round().cast(this.t.dtype);
      const r = x.sub(q0.mul(safe));
      return q0.add(r.div(safe).round().cast(this.t.dtype));
    };
    return new MillerIndex(assemble([a, b, c].map(idiv), [3]));
  }

  /** As a float Vec. */
  toVec(opts: TypedOptions = {}): Vec {
    return new Vec(this.t.cast(optDType("MillerIndex.toVec", opts) ?? "float32"));
  }

  /** As a unit Vec. */
  toNormalizedVec(opts: TypedOptions = {}): Vec {
    const v = this.toVec(opts);
    return v.div(v.norm());
  }
}
