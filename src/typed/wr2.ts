/** WR2 `(3)`: a skew-symmetric second-order tensor as its axial vector `(W21, W02, W10)`. */
import { where } from "../tensor.js";
import { PrimitiveTensor, need, type ScalarLike, type TypedOptions } from "./base.js";
import { assemble, dotOf, mat3, vecOf } from "./components.js";
import { fillAs } from "./fill.js";
import { SKEW_PAIRS, skewToFull } from "./mandel.js";
import { R2 } from "./r2.js";
import { Rot } from "./rot.js";
import { Scalar } from "./scalar.js";

/** WR2 `(3)`: a skew-symmetric second-order tensor, stored as its axial vector `(W21, W02, W10)`. */
export class WR2 extends PrimitiveTensor<WR2, "WR2"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "WR2";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [3];

  /** `WR2.fill(w0, w1, w2)`: the axial vector's components; Scalars broadcast their batch shapes. */
  static fill(w0: ScalarLike, w1: ScalarLike, w2: ScalarLike, opts: TypedOptions = {}): WR2 {
    return fillAs(WR2, [w0, w1, w2], opts);
  }

  /** The skew part `(T-Tᵀ)/2` as an axial vector (NEML2's `WR2(R2)`). */
  static fromR2(r: R2): WR2 {
    need("WR2.fromR2", "r", r, R2);
    const a = mat3(r.t);
    return new WR2(
      assemble(
        SKEW_PAIRS.map(([i, j]) => a[i]![j]!.sub(a[j]![i]!).mul(0.5)),
        [3],
      ),
    );
  }

  /** `[[0,-w2,w1],[w2,0,-w0],[-w1,w0,0]]`. */
  toR2(): R2 {
    return new R2(skewToFull(this.t));
  }

  /** `|w|²`. */
  normSq(): Scalar {
    const w = vecOf(this.t);
    return new Scalar(dotOf(w, w));
  }
  /** `|w|`. */
  norm(): Scalar {
    return this.normSq().sqrt();
  }

  /**
   * The exponential map to a rotation: angle `|w|` about `w/|w|`, i.e. the MRP
   * `r = w·tan(|w|/4)/|w|`, so `exp().eulerRodrigues()` equals `expm(W)`.
   * NEML2's code uses an approximation that is not this map (an upstream
   * bug we do not copy); below |w| < 1e-3 the series
   * `tan(x/4)/x = 1/4 + x²/192` avoids 0/0.
   */
  exp(): Rot {
    const n2 = this.normSq().t;
    const n = n2.sqrt();
    const small = n.lt(1e-3);
    const safe = where(small, 1, n);
    const scale = where(small, n2.div(192).add(0.25), safe.div(4).tan().div(safe));
    return new Rot(this.t.mul(scale));
  }
}
