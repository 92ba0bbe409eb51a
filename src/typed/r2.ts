/** R2 `(3,3)`: a general second-order tensor. */
import { ShapeError } from "../../ir/errors.js";
import { PrimitiveTensor, need, type ScalarLike, type TypedOptions, scalarArg } from "./base.js";
import {
  assemble,
  at,
  cofactors3,
  det3,
  dotOf,
  inverse3,
  mat3,
  matmul3,
  sumOf,
  transposeOf,
  vecOf,
} from "./components.js";
import { fillArgs } from "./fill.js";
import { mandelToFull, skewToFull } from "./mandel.js";
import { R4 } from "./higher.js";
import { Rot, rotationMatrix } from "./rot.js";
import { Scalar } from "./scalar.js";
import { SR2 } from "./sr2.js";
import { Vec } from "./vec.js";
import { WR2 } from "./wr2.js";
import { solve as linalgSolve } from "../linalg/direct.js";

/**
 * R2 `(3,3)`: a general second-order tensor.
 *
 * @example
 * ```ts
 * R2.fill(1, 2, 3).det().toArraySync(); // 6 (diag(1, 2, 3))
 * ```
 */
export class R2 extends PrimitiveTensor<R2, "R2"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "R2";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [3, 3];

  /**
   * NEML2's `R2::fill`: 1 value fills the diagonal, 3 values are the diagonal,
   * 6 values `(a11,a22,a33,a23,a13,a12)` a symmetric matrix (no √2), 9 values
   * the full matrix row by row. `R2.fill(1,2,3,4,5,6,7,8,9)`.
   */
  static fill(a: ScalarLike, opts?: TypedOptions): R2;
  static fill(a11: ScalarLike, a22: ScalarLike, a33: ScalarLike, opts?: TypedOptions): R2;
  static fill(
    a11: ScalarLike,
    a22: ScalarLike,
    a33: ScalarLike,
    a23: ScalarLike,
    a13: ScalarLike,
    a12: ScalarLike,
    opts?: TypedOptions,
  ): R2;
  static fill(
    a11: ScalarLike,
    a12: ScalarLike,
    a13: ScalarLike,
    a21: ScalarLike,
    a22: ScalarLike,
    a23: ScalarLike,
    a31: ScalarLike,
    a32: ScalarLike,
    a33: ScalarLike,
    opts?: TypedOptions,
  ): R2;
  static fill(...args: (ScalarLike | TypedOptions | undefined)[]): R2 {
    const { v, z } = fillArgs("R2.fill", args);
    const g = (i: number) => v[i]!;
    switch (v.length) {
      case 1:
        return new R2(assemble([g(0), z, z, z, g(0), z, z, z, g(0)], [3, 3]));
      case 3:
        return new R2(assemble([g(0), z, z, z, g(1), z, z, z, g(2)], [3, 3]));
      case 6:
        return new R2(assemble([g(0), g(5), g(4), g(5), g(1), g(3), g(4), g(3), g(2)], [3, 3]));
      case 9:
        return new R2(assemble(v, [3, 3]));
      default:
        throw new ShapeError(`R2.fill: expected 1, 3, 6 or 9 values, got ${v.length}`);
    }
  }

  /** The identity matrix `I`. */
  static identity(opts: TypedOptions = {}): R2 {
    return R2.fill(1, opts);
  }

  /** The skew matrix of `v`: `[[0,-v2,v1],[v2,0,-v0],[-v1,v0,0]]` (equals `WR2(v).toR2()`). */
  static skew(v: Vec): R2 {
    need("R2.skew", "v", v, Vec);
    return new R2(skewToFull(v.t));
  }

  /** The full matrix of an SR2 (`mandelToFull`), a WR2 (`skewToFull`) or a Rot (`eulerRodrigues`). */
  static from(x: SR2 | WR2 | Rot): R2 {
    need("R2.from", "x", x, SR2, WR2, Rot);
    if (x instanceof SR2) return new R2(mandelToFull(x.t));
    if (x instanceof WR2) return new R2(skewToFull(x.t));
    return x.eulerRodrigues();
  }

  /** `A·B` (R2), `A·v` (Vec), or scaling by a Scalar or number. */
  override mul(y: R2): R2;
  override mul(y: Vec): Vec;
  override mul(y: ScalarLike): R2;
  override mul(y: R2 | Vec | ScalarLike): R2 | Vec {
    if (y instanceof R2) return new R2(assemble(matmul3(mat3(this.t), mat3(y.t)).flat(), [3, 3]));
    if (y instanceof Vec) {
      const a = mat3(this.t);
      const v = vecOf(y.t);
      return new Vec(
        assemble(
          a.map((row) => dotOf(row, v)),
          [3],
        ),
      );
    }
    return new R2(this.t.mul(scalarArg(y, "R2.mul", this)));
  }

  /** `det A` by cofactor expansion. */
  det(): Scalar {
    return new Scalar(det3(mat3(this.t)));
  }
  /** `A⁻¹ = adj(A)/det(A)` (closed form; singular matrices give inf/NaN). */
  inverse(): R2 {
    return new R2(assemble(inverse3(mat3(this.t)).flat(), [3, 3]));
  }
  /** The cofactor matrix. */
  cofactor(): R2 {
    return new R2(assemble(cofactors3(mat3(this.t)).flat(), [3, 3]));
  }
  /** `Aᵀ`. */
  transpose(): R2 {
    return new R2(this.t.transpose(0, 1));
  }
  /** The trace `Σ Aᵢᵢ`. */
  tr(): Scalar {
    return new Scalar(sumOf([0, 1, 2].map((i) => at(this.t, i, i))));
  }
  /** `tr(A)/3 · I`. */
  vol(): R2 {
    return R2.fill(this.tr().div(3));
  }
  /** `A - vol(A)`. */
  dev(): R2 {
    return this.sub(this.vol());
  }
  /** `A:B = Σ AᵢⱼBᵢⱼ`. */
  inner(b: R2): Scalar {
    need("R2.inner", "b", b, R2);
    return new Scalar(dotOf(mat3(this.t).flat(), mat3(b.t).flat()));
  }
  /** `A:A`, the squared Frobenius norm. */
  normSq(): Scalar {
    return this.inner(this);
  }
  /** The Frobenius norm `sqrt(A:A)`. */
  norm(): Scalar {
    return this.normSq().sqrt();
  }
  /** `AᵢⱼBₖₗ` as an R4. */
  outer(b: R2): R4 {
    need("R2.outer", "b", b, R2);
    return new R4(this.t.reshape([3, 3, 1, 1]).mul(b.t.reshape([1, 1, 3, 3])));
  }
  /** `R·A·Rᵀ`. */
  rotate(r: Rot | R2): R2 {
    const q = mat3(rotationMatrix("R2.rotate", r).t);
    return new R2(assemble(matmul3(matmul3(q, mat3(this.t)), transposeOf(q)).flat(), [3, 3]));
  }
  /** Row `i` as a Vec. */
  row(i: number): Vec {
    return new Vec(this.t.select(0, i));
  }
  /** Column `i` as a Vec. */
  col(i: number): Vec {
    return new Vec(this.t.select(1, i));
  }

  // --- linear algebra ---
  /**
   * Solves `A·x = b` by LU with partial pivoting (`linalg.solve`): a Vec for a
   * Vec, an R2 (three right-hand sides, its columns) for an R2. Batch shapes
   * broadcast; a singular A gives Inf/NaN in its batch element.
   */
  solve(b: Vec): Vec;
  solve(b: R2): R2;
  solve(b: Vec | R2): Vec | R2 {
    need("R2.solve", "b", b, Vec, R2);
    return b instanceof Vec ? new Vec(linalgSolve(this.t, b.t)) : new R2(linalgSolve(this.t, b.t));
  }
}
