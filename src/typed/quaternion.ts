/** Quaternion `(4)`: scalar first, `(s, q1, q2, q3)`. */
import { where, type Tensor } from "../tensor.js";
import { PrimitiveTensor, need, type ScalarLike, type TypedOptions } from "./base.js";
import { assemble, at, dotOf, mat3, negate, vecOf } from "./components.js";
import { fillAs } from "./fill.js";
import { R2 } from "./r2.js";
import { Rot } from "./rot.js";
import { Scalar } from "./scalar.js";

/** Quaternion `(4)`: scalar first, `(s, q1, q2, q3)`. */
export class Quaternion extends PrimitiveTensor<Quaternion, "Quaternion"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "Quaternion";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [4];

  /** `Quaternion.fill(s, q1, q2, q3)`: the scalar part, then the vector part; Scalars broadcast their batch shapes. */
  static fill(s: ScalarLike, q1: ScalarLike, q2: ScalarLike, q3: ScalarLike, opts: TypedOptions = {}): Quaternion {
    return fillAs(Quaternion, [s, q1, q2, q3], opts);
  }

  /** `((1-|r|²)/(1+|r|²), 2r/(1+|r|²))`. */
  static fromRot(r: Rot): Quaternion {
    need("Quaternion.fromRot", "r", r, Rot);
    const rr = r.normSq().t;
    const d = rr.add(1);
    const s = negate(rr).add(1).div(d);
    const v = vecOf(r.t).map((x) => x.mul(2).div(d));
    return new Quaternion(assemble([s, ...v], [4]));
  }

  /**
   * From a rotation matrix by Shepperd's method: of the four equivalent
   * formulas, the one dividing by the largest of `1+tr, 1+2Rᵢᵢ-tr` is picked
   * per batch element with `where` (the others may be NaN and are discarded).
   * The result has `s ≥ 0`.
   */
  static fromR2(m: R2): Quaternion {
    need("Quaternion.fromR2", "m", m, R2);
    const a = mat3(m.t);
    const e = (i: number, j: number) => a[i]![j]!;
    const tr = e(0, 0).add(e(1, 1)).add(e(2, 2));
    const d = [tr, e(0, 0), e(1, 1), e(2, 2)];
    const diff = [e(2, 1).sub(e(1, 2)), e(0, 2).sub(e(2, 0)), e(1, 0).sub(e(0, 1))];
    const sum = (i: number, j: number) => e(i, j).add(e(j, i));
    // 4|q_k|² for each case, and the quaternion as (that root)/4 and the rest over it.
    const k0 = tr.add(1).sqrt().mul(2);
    const k = [1, 2, 3].map((i) => d[i]!.mul(2).sub(tr).add(1).sqrt().mul(2));
    const cand = [
      [k0.mul(0.25), diff[0]!.div(k0), diff[1]!.div(k0), diff[2]!.div(k0)],
      [diff[0]!.div(k[0]!), k[0]!.mul(0.25), sum(0, 1).div(k[0]!), sum(0, 2).div(k[0]!)],
      [diff[1]!.div(k[1]!), sum(0, 1).div(k[1]!), k[1]!.mul(0.25), sum(1, 2).div(k[1]!)],
      [diff[2]!.div(k[2]!), sum(0, 2).div(k[2]!), sum(1, 2).div(k[2]!), k[2]!.mul(0.25)],
    ];
    // Largest of (tr, R00, R11, R22): the same as comparing 1+tr with 1+2Rᵢᵢ-tr.
    const big1 = d[1]!.gt(d[0]!).logicalAnd(d[1]!.ge(d[2]!)).logicalAnd(d[1]!.ge(d[3]!));
    const big2 = d[2]!.gt(d[0]!).logicalAnd(d[2]!.gt(d[1]!)).logicalAnd(d[2]!.ge(d[3]!));
    const big3 = d[3]!.gt(d[0]!).logicalAnd(d[3]!.gt(d[1]!)).logicalAnd(d[3]!.gt(d[2]!));
    const q = [0, 1, 2, 3].map((c) =>
      where(big3, cand[3]![c]!, where(big2, cand[2]![c]!, where(big1, cand[1]![c]!, cand[0]![c]!))),
    );
    const sign = where(q[0]!.lt(0), -1, 1);
    return new Quaternion(
      assemble(
        q.map((x) => x.mul(sign)),
        [4],
      ),
    );
  }

  /** The MRP `v/(1+s)` of the quaternion with `s ≥ 0` (flipped if needed). */
  toRot(): Rot {
    const q = vecOf(this.t);
    const sign = where(q[0]!.lt(0), -1, 1);
    const den = q[0]!.mul(sign).add(1);
    return new Rot(
      assemble(
        q.slice(1).map((x) => x.mul(sign).div(den)),
        [3],
      ),
    );
  }

  /** The rotation matrix of a unit quaternion. */
  toR2(): R2 {
    const [s, x, y, z] = vecOf(this.t) as [Tensor, Tensor, Tensor, Tensor];
    const two = (u: Tensor, v: Tensor) => u.mul(v).mul(2);
    const one = (u: Tensor, v: Tensor) => u.mul(u).add(v.mul(v)).mul(-2).add(1);
    return new R2(
      assemble(
        [
          one(y, z),
          two(x, y).sub(two(s, z)),
          two(x, z).add(two(s, y)),
          two(x, y).add(two(s, z)),
          one(x, z),
          two(y, z).sub(two(s, x)),
          two(x, z).sub(two(s, y)),
          two(y, z).add(two(s, x)),
          one(x, y),
        ],
        [3, 3],
      ),
    );
  }

  /** The 4-component dot product. */
  dot(q: Quaternion): Scalar {
    need("Quaternion.dot", "q", q, Quaternion);
    return new Scalar(dotOf(vecOf(this.t), vecOf(q.t)));
  }

  /** `2·acos(min(|q·p|, 1))`. */
  dist(q: Quaternion): Scalar {
    need("Quaternion.dist", "q", q, Quaternion);
    return new Scalar(this.dot(q).t.abs().minimum(1).acos().mul(2));
  }

  /** The scalar part. */
  get s(): Scalar {
    return new Scalar(at(this.t, 0));
  }
}
