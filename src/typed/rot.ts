/**
 * Rot `(3)`: a rotation as modified Rodrigues parameters (MRP),
 * `r = n·tan(θ/4)` for angle θ about the unit axis n.
 */
import { DTypeError } from "../../ir/errors.js";
import { describe } from "../check.js";
import type { Tensor } from "../tensor.js";
import { PrimitiveTensor, need, raw, type ScalarLike, type TypedOptions, scalarArg } from "./base.js";
import { assemble, cross3, cst, dotOf, negate, vecOf, zerosOf } from "./components.js";
import { fillAs } from "./fill.js";
import { Quaternion } from "./quaternion.js";
import { R2 } from "./r2.js";
import { Scalar } from "./scalar.js";
import { Vec } from "./vec.js";

/** The Euler angle conventions `Rot.fromEulerAngles` takes: Bunge, Roe and Kocks, as NEML2 defines them. */
export type EulerConvention = "bunge" | "roe" | "kocks";
/** The unit of Euler angles. */
export type AngleType = "degrees" | "radians";

/** The matrix of a `rotate` argument `r`: an R2 as it is, a Rot's `eulerRodrigues()` (a DTypeError naming `op` otherwise). */
export function rotationMatrix(op: string, r: Rot | R2): R2 {
  need(op, "r", r, Rot, R2);
  return r instanceof Rot ? r.eulerRodrigues() : r;
}

/** Rot `(3)`: a rotation as modified Rodrigues parameters (MRP), `r = n·tan(θ/4)` for angle θ about the unit axis n. */
export class Rot extends PrimitiveTensor<Rot, "Rot"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "Rot";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [3];

  /** MRP components directly. */
  static fill(r0: ScalarLike, r1: ScalarLike, r2: ScalarLike, opts: TypedOptions = {}): Rot {
    return fillAs(Rot, [r0, r1, r2], opts);
  }

  /** The zero vector (no rotation). */
  static identity(opts: TypedOptions = {}): Rot {
    return Rot.zeros([], opts);
  }

  /** From standard Rodrigues parameters `ρ = n·tan(θ/2)`: `r = ρ/(sqrt(1+|ρ|²)+1)` (NEML2's `fill_rodrigues`). */
  static fromRodrigues(rho: Vec): Rot {
    need("Rot.fromRodrigues", "rho", rho, Vec);
    return new Rot(rho.t.div(rho.normSq().t.add(1).sqrt().add(1)));
  }

  /** `n̂·tan(θ/4)`: the axis is normalised. */
  static fromAxisAngle(axis: Vec, angle: ScalarLike): Rot {
    need("Rot.fromAxisAngle", "axis", axis, Vec);
    raw(angle, "Rot.fromAxisAngle", "angle");
    const theta = raw(angle);
    const t = typeof theta === "number" ? Math.tan(theta / 4) : theta.div(4).tan();
    return new Rot(axis.t.div(axis.norm().t).mul(t));
  }

  /**
   * From a rotation matrix, through its quaternion (Shepperd's branch on the
   * largest diagonal term, so angles near π are as accurate as small ones;
   * NEML2 uses acos of the trace, which loses precision there).
   */
  static fromMatrix(m: R2): Rot {
    need("Rot.fromMatrix", "m", m, R2);
    return Quaternion.fromR2(m).toRot();
  }

  /**
   * From Euler angles `(a, b, c)` in NEML2's conventions: Kocks builds the
   * matrix directly; Bunge maps `(φ1, Φ, φ2)` to Kocks `(φ1-π/2, Φ, π/2-φ2)`;
   * Roe maps `c` to `π-c`. (NEML2 also wraps the angles with fmod, which
   * changes nothing for angles in their usual ranges.)
   */
  static fromEulerAngles(v: Vec, convention: EulerConvention, angleType: AngleType = "radians"): Rot {
    need("Rot.fromEulerAngles", "v", v, Vec);
    if (angleType !== "degrees" && angleType !== "radians")
      throw new DTypeError(
        `Rot.fromEulerAngles: Rot angle_type must be either 'degrees' or 'radians', got ${describe(angleType)}`,
      );
    if (convention !== "bunge" && convention !== "roe" && convention !== "kocks")
      throw new DTypeError(
        `Rot.fromEulerAngles: Unknown Rot angle_convention ${typeof convention === "string" ? convention : describe(convention)} (conventions are bunge, roe, kocks)`,
      );
    let [a, b, c] = vecOf(angleType === "degrees" ? v.t.mul(Math.PI / 180) : v.t) as [Tensor, Tensor, Tensor];
    if (convention === "bunge") {
      a = a.sub(Math.PI / 2);
      c = negate(c).add(Math.PI / 2);
    } else if (convention === "roe") {
      c = negate(c).add(Math.PI);
    }
    const [sa, ca, sb, cb, sc, cc] = [a.sin(), a.cos(), b.sin(), b.cos(), c.sin(), c.cos()];
    const m = [
      negate(sc.mul(sa)).sub(cc.mul(ca).mul(cb)),
      sc.mul(ca).sub(cc.mul(sa).mul(cb)),
      cc.mul(sb),
      cc.mul(sa).sub(sc.mul(ca).mul(cb)),
      negate(cc.mul(ca)).sub(sc.mul(sa).mul(cb)),
      sc.mul(sb),
      ca.mul(sb),
      sa.mul(sb),
      cb,
    ];
    return Rot.fromMatrix(new R2(assemble(m, [3, 3])));
  }

  /** `-r`. */
  inverse(): Rot {
    return this.neg();
  }

  /** `R = I + (4(1-rr)W + 8W²)/(1+rr)²`, `W = skew(r)`, `rr = |r|²`. */
  eulerRodrigues(): R2 {
    const r = vecOf(this.t);
    const rr = dotOf(r, r);
    const d = rr.add(1).mul(rr.add(1));
    const a = negate(rr).add(1).mul(4).div(d);
    const b = cst(8, this.t).div(d);
    const z = zerosOf(this.t);
    const w = [
      [z, negate(r[2]!), r[1]!],
      [r[2]!, z, negate(r[0]!)],
      [negate(r[1]!), r[0]!, z],
    ];
    // W² = r rᵀ - rr·I
    const out: Tensor[] = [];
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 3; j++) {
        const w2 = i === j ? r[i]!.mul(r[i]!).sub(rr) : r[i]!.mul(r[j]!);
        out.push(i === j ? b.mul(w2).add(1) : a.mul(w[i]![j]!).add(b.mul(w2)));
      }
    }
    return new R2(assemble(out, [3, 3]));
  }

  /**
   * Composition `r1*r2 = ((1-|r2|²)r1 + (1-|r1|²)r2 - 2 r2×r1)/(1 + |r1|²|r2|² - 2 r1·r2)`,
   * whose matrix is `R1·R2`; or scaling by a Scalar or number.
   */
  override mul(y: Rot): Rot;
  override mul(y: ScalarLike): Rot;
  override mul(y: Rot | ScalarLike): Rot {
    if (!(y instanceof Rot)) return new Rot(this.t.mul(scalarArg(y, "Rot.mul", this)));
    const a = vecOf(this.t);
    const b = vecOf(y.t);
    const aa = dotOf(a, a);
    const bb = dotOf(b, b);
    const den = aa.mul(bb).add(1).sub(dotOf(a, b).mul(2));
    const c = cross3(b, a);
    const ca = negate(bb).add(1);
    const cb = negate(aa).add(1);
    return new Rot(
      assemble(
        [0, 1, 2].map((i) => ca.mul(a[i]!).add(cb.mul(b[i]!)).sub(c[i]!.mul(2)).div(den)),
        [3],
      ),
    );
  }

  /** `r * this` (NEML2's `Rot::rotate`). */
  rotate(r: Rot): Rot {
    need("Rot.rotate", "r", r, Rot);
    return r.mul(this);
  }

  /** The dot product of the MRP vectors. */
  dot(r: Rot): Scalar {
    need("Rot.dot", "r", r, Rot);
    return new Scalar(dotOf(vecOf(this.t), vecOf(r.t)));
  }
  /** `|r|²`. */
  normSq(): Scalar {
    return this.dot(this);
  }
  /** `|r|`. */
  norm(): Scalar {
    return this.normSq().sqrt();
  }

  /** The shadow MRP `-r/|r|²`: the same orientation. */
  shadow(): Rot {
    return new Rot(negate(this.t).div(this.normSq().t));
  }

  /** Geodesic distance `4·asin(clip(|r1-r2|/sqrt((1+|r1|²)(1+|r2|²)), -1, 1))`. */
  gdist(r: Rot): Scalar {
    need("Rot.gdist", "r", r, Rot);
    const d = this.sub(r).norm().t;
    const den = this.normSq().t.add(1).mul(r.normSq().t.add(1)).sqrt();
    return new Scalar(d.div(den).clip(-1, 1).asin().mul(4));
  }

  /** The smallest `gdist` over both MRPs of each orientation (the shadows). */
  dist(r: Rot): Scalar {
    need("Rot.dist", "r", r, Rot);
    const s = this.shadow();
    const rs = r.shadow();
    return new Scalar(this.gdist(r).t.minimum(s.gdist(r).t).minimum(this.gdist(rs).t).minimum(s.gdist(rs).t));
  }

  /** Volume element `8/π·(1+|r|²)^-3`. */
  dV(): Scalar {
    return new Scalar(
      this.normSq()
        .t.add(1)
        .pow(-3)
        .mul(8 / Math.PI),
    );
  }

  /** The same rotation as a unit Quaternion. */
  toQuaternion(): Quaternion {
    return Quaternion.fromRot(this);
  }
}
