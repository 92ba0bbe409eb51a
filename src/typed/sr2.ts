/**
 * SR2 `(6)`: a symmetric second-order tensor in Mandel notation
 * `[a11, a22, a33, √2·a23, √2·a13, √2·a12]` (see mandel.ts).
 */
import { ShapeError } from "../../ir/errors.js";
import type { Tensor } from "../tensor.js";
import { PrimitiveTensor, need, type ScalarLike, type TypedOptions, scalarArg } from "./base.js";
import {
  assemble,
  at,
  det3,
  floatOf,
  dotOf,
  inverse3,
  mat3,
  matmul3,
  sumOf,
  transposeOf,
  vecOf,
} from "./components.js";
import { fillArgs } from "./fill.js";
import { MANDEL_FACTORS, MANDEL_PAIRS, MANDEL_REVERSE, mandelToFull } from "./mandel.js";
import { R2 } from "./r2.js";
import { Rot, rotationMatrix } from "./rot.js";
import { Scalar } from "./scalar.js";
import { SSR4 } from "./ssr4.js";
import { checkInt } from "../check.js";
import { Alg } from "../linalg/scalar.js";
import { defaultSweeps, jacobiEigen } from "../linalg/jacobi.js";
import { assembleMat, assembleVec } from "../linalg/matrix.js";
import { Vec } from "./vec.js";

/** The tensor components `a[i][j]` of a Mandel vector (shears divided by √2). */
export function sr2Full(t: Tensor): Tensor[][] {
  const m = vecOf(t).map((x, k) => (k < 3 ? x : x.mul(Math.SQRT1_2)));
  return MANDEL_REVERSE.map((row) => row.map((k) => m[k]!));
}

/** A Mandel tensor from the upper triangle of component matrix `a` (NEML2's `full_to_mandel`). */
export function sr2FromFull(a: readonly (readonly Tensor[])[]): Tensor {
  return assemble(
    MANDEL_PAIRS.map(([i, j], k) => (k < 3 ? a[i]![j]! : a[i]![j]!.mul(MANDEL_FACTORS[k]!))),
    [6],
  );
}

/** The result of `SR2.eigh`. */
export interface SR2Eigh {
  /** The eigenvalues, ascending. */
  readonly values: Vec;
  /** The unit eigenvectors as the columns of an R2 (`S = V·diag(λ)·Vᵀ`). */
  readonly vectors: R2;
}

/** SR2 `(6)`: a symmetric second-order tensor in Mandel notation `[a11, a22, a33, √2·a23, √2·a13, √2·a12]`. */
export class SR2 extends PrimitiveTensor<SR2, "SR2"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "SR2";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [6];

  /**
   * NEML2's `SR2::fill`: 1 value fills the diagonal, 3 values are the
   * diagonal, 6 values are the *tensor* components `(a11,a22,a33,a23,a13,a12)`
   * and the shears are multiplied by √2.
   */
  static fill(a: ScalarLike, opts?: TypedOptions): SR2;
  static fill(a11: ScalarLike, a22: ScalarLike, a33: ScalarLike, opts?: TypedOptions): SR2;
  static fill(
    a11: ScalarLike,
    a22: ScalarLike,
    a33: ScalarLike,
    a23: ScalarLike,
    a13: ScalarLike,
    a12: ScalarLike,
    opts?: TypedOptions,
  ): SR2;
  static fill(...args: (ScalarLike | TypedOptions | undefined)[]): SR2 {
    const { v, z } = fillArgs("SR2.fill", args);
    switch (v.length) {
      case 1:
        return new SR2(assemble([v[0]!, v[0]!, v[0]!, z, z, z], [6]));
      case 3:
        return new SR2(assemble([v[0]!, v[1]!, v[2]!, z, z, z], [6]));
      case 6:
        return new SR2(
          assemble(
            v.map((x, k) => (k < 3 ? x : x.mul(Math.SQRT2))),
            [6],
          ),
        );
      default:
        throw new ShapeError(`SR2.fill: expected 1, 3 or 6 values, got ${v.length}`);
    }
  }

  /** `[1,1,1,0,0,0]`. */
  static identity(opts: TypedOptions = {}): SR2 {
    return SR2.fill(1, opts);
  }

  /** Symmetrises `(T+Tᵀ)/2`, then Mandel (NEML2's `SR2(R2)`). */
  static fromR2(r: R2): SR2 {
    need("SR2.fromR2", "r", r, R2);
    const a = mat3(r.t);
    const s = a.map((row, i) => row.map((x, j) => (i === j ? x : x.add(a[j]![i]!).mul(0.5))));
    return new SR2(sr2FromFull(s));
  }

  /** The full symmetric matrix. */
  toR2(): R2 {
    return new R2(mandelToFull(this.t));
  }

  /** Tensor component `(i, j)`: the Mandel entry divided by its factor. */
  component(i: number, j: number): Scalar {
    checkInt("SR2.component", "i", i, 0, 2);
    checkInt("SR2.component", "j", j, 0, 2);
    const k = MANDEL_REVERSE[i]![j]!;
    return new Scalar(k < 3 ? at(this.t, k) : at(this.t, k).mul(Math.SQRT1_2));
  }

  /** `s·C = Cᵀ·s` with an SSR4 (NEML2's `SR2*SSR4`), or scaling. */
  override mul(y: SSR4): SR2;
  override mul(y: ScalarLike): SR2;
  override mul(y: SSR4 | ScalarLike): SR2 {
    if (y instanceof SSR4) {
      const s = vecOf(this.t);
      const c = vecOf(y.t).map(vecOf);
      return new SR2(
        assemble(
          [0, 1, 2, 3, 4, 5].map((j) =>
            dotOf(
              s,
              c.map((row) => row[j]!),
            ),
          ),
          [6],
        ),
      );
    }
    return new SR2(this.t.mul(scalarArg(y, "SR2.mul", this)));
  }

  /** The trace `Σ Aᵢᵢ`. */
  tr(): Scalar {
    return new Scalar(sumOf([0, 1, 2].map((i) => at(this.t, i))));
  }
  /** `tr/3 · I`. */
  vol(): SR2 {
    return SR2.fill(this.tr().div(3));
  }
  /** `s - vol(s)`. */
  dev(): SR2 {
    return this.sub(this.vol());
  }
  /** `a:b`, exact on Mandel vectors thanks to the √2 factors. */
  inner(b: SR2): Scalar {
    need("SR2.inner", "b", b, SR2);
    return new Scalar(dotOf(vecOf(this.t), vecOf(b.t)));
  }
  /** `A:A`, the squared Frobenius norm. */
  normSq(): Scalar {
    return this.inner(this);
  }
  /** `sqrt(normSq + eps)`. */
  norm(eps = 0): Scalar {
    const n = this.normSq();
    return (eps === 0 ? n : n.add(eps)).sqrt();
  }
  /** `aᵢbⱼ` on Mandel vectors: an SSR4. */
  outer(b: SR2): SSR4 {
    need("SR2.outer", "b", b, SR2);
    return new SSR4(this.t.reshape([6, 1]).mul(b.t.reshape([1, 6])));
  }
  /** `det A` of the full symmetric matrix. */
  det(): Scalar {
    return new Scalar(det3(sr2Full(this.t)));
  }
  /** Closed-form cofactor inverse of the symmetric matrix, back in Mandel form. */
  inverse(): SR2 {
    return new SR2(sr2FromFull(inverse3(sr2Full(this.t))));
  }
  /** A no-op (symmetric). */
  transpose(): SR2 {
    return this;
  }
  /** `R·S·Rᵀ`, re-Mandeled. */
  rotate(r: Rot | R2): SR2 {
    const q = mat3(rotationMatrix("SR2.rotate", r).t);
    return new SR2(sr2FromFull(matmul3(matmul3(q, sr2Full(this.t)), transposeOf(q))));
  }

  // --- linear algebra ---
  /**
   * Eigenvalues (ascending, a Vec) and unit eigenvectors (the columns of an
   * R2, `S = V·diag(λ)·Vᵀ`) of the symmetric tensor, by the Jacobi rotations of
   * `linalg.eigh` on its components (4 sweeps: converged to float64 rounding
   * for 3×3, see `linalg.defaultSweeps`). Eigenvector signs are not normalised.
   */
  eigh(): SR2Eigh {
    const alg = new Alg(floatOf(this.t));
    const { values, cols } = jacobiEigen(alg, sr2Full(this.t), 3, defaultSweeps(3), true);
    const V = [0, 1, 2].map((i) => cols.map((col) => col[i]!));
    return {
      values: new Vec(assembleVec(alg, values, [], this.t)),
      vectors: new R2(assembleMat(alg, V, [], this.t)),
    };
  }
}
