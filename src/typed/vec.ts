/** Vec `(3)`: a vector. */
import { PrimitiveTensor, need, type ScalarLike, type TypedOptions } from "./base.js";
import { assemble, cross3, dotOf, vecOf } from "./components.js";
import { fillAs } from "./fill.js";
import { R2 } from "./r2.js";
import { Rot, rotationMatrix } from "./rot.js";
import { Scalar } from "./scalar.js";
import { SR2 } from "./sr2.js";

/** Vec `(3)`: a vector. */
export class Vec extends PrimitiveTensor<Vec, "Vec"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "Vec";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [3];

  /** `Vec.fill(1, 2, 3)`; Scalars broadcast their batch shapes. */
  static fill(v0: ScalarLike, v1: ScalarLike, v2: ScalarLike, opts: TypedOptions = {}): Vec {
    return fillAs(Vec, [v0, v1, v2], opts);
  }

  /** `a·b`. */
  dot(v: Vec): Scalar {
    need("Vec.dot", "v", v, Vec);
    return new Scalar(dotOf(vecOf(this.t), vecOf(v.t)));
  }
  /** `a×b` (batch shapes broadcast). */
  cross(v: Vec): Vec {
    need("Vec.cross", "v", v, Vec);
    return new Vec(assemble(cross3(vecOf(this.t), vecOf(v.t)), [3]));
  }
  /** `aᵢbⱼ` as an R2. */
  outer(v: Vec): R2 {
    need("Vec.outer", "v", v, Vec);
    return new R2(this.t.reshape([3, 1]).mul(v.t.reshape([1, 3])));
  }
  /** `aᵢaⱼ` as an SR2. */
  selfOuter(): SR2 {
    const a = vecOf(this.t);
    return new SR2(
      assemble(
        [
          a[0]!.mul(a[0]!),
          a[1]!.mul(a[1]!),
          a[2]!.mul(a[2]!),
          a[1]!.mul(a[2]!).mul(Math.SQRT2),
          a[0]!.mul(a[2]!).mul(Math.SQRT2),
          a[0]!.mul(a[1]!).mul(Math.SQRT2),
        ],
        [6],
      ),
    );
  }
  /** `|v|² = v·v`. */
  normSq(): Scalar {
    return this.dot(this);
  }
  /** The Euclidean norm `|v|`. */
  norm(): Scalar {
    return this.normSq().sqrt();
  }
  /** `R·v` with `R` a rotation matrix or the matrix of a Rot. */
  rotate(r: Rot | R2): Vec {
    return rotationMatrix("Vec.rotate", r).mul(this);
  }
  /** `op·v` (NEML2's `transform`). */
  transform(op: R2): Vec {
    need("Vec.transform", "op", op, R2);
    return op.mul(this);
  }
  /** The skew matrix `W` with `W·u = v×u`. */
  skew(): R2 {
    return R2.skew(this);
  }
}
