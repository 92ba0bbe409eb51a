/** SSR4 `(6,6)`: a fourth-order tensor with both minor symmetries, in Mandel form. */
import type { DType } from "../../ir/dtype.js";
import { eye } from "../creation.js";
import { where, type Tensor } from "../tensor.js";
import { PrimitiveTensor, optDType, need, type ScalarLike, type TypedOptions, scalarArg } from "./base.js";
import { assemble, cst, dotOf, mat3, negate, vecOf, zerosOf } from "./components.js";
import { Scalar } from "./scalar.js";
import { fillDType, scalarsOf } from "./fill.js";
import { fullToMandel, mandelToFull, MANDEL_FACTORS, MANDEL_PAIRS } from "./mandel.js";
import { R2 } from "./r2.js";
import { minorSum, R4, SSSSR8 } from "./higher.js";
import { Rot, rotationMatrix } from "./rot.js";
import { SR2 } from "./sr2.js";
import { solve as linalgSolve } from "../linalg/direct.js";

type Pattern = (i: number, j: number) => boolean;
const C1: Pattern = (i, j) => i < 3 && i === j;
const C2: Pattern = (i, j) => i < 3 && j < 3 && i !== j;
const C3: Pattern = (i, j) => i >= 3 && i === j;

/** Rows of components of a 6×6 base. */
function mat6(t: Tensor): Tensor[][] {
  return vecOf(t).map(vecOf);
}

/** Constant 6×6 SSR4 with `value(i, j)` entries. */
function constant(value: (i: number, j: number) => number, dtype: DType): SSR4 {
  const c: Tensor[] = [];
  for (let i = 0; i < 6; i++) for (let j = 0; j < 6; j++) c.push(cst(value(i, j), dtype));
  return new SSR4(assemble(c, [6, 6]));
}

/**
 * The 6×6 matrix `Q` with `mandel(R·S·Rᵀ) = Q·mandel(S)`:
 * `Q_IJ = f_I g_J (R_{p a} R_{q b} + [J shear] R_{p b} R_{q a})` for
 * `(p,q) = pair(I)`, `(a,b) = pair(J)`, `f` the Mandel factors and `g = 1/f`
 * on the diagonal block and `1/√2` on the shears (the √2 of `S_ab = S_ba = s_J/√2`).
 */
export function mandelRotation(r: R2): Tensor[][] {
  need("mandelRotation", "r", r, R2);
  const m = mat3(r.t);
  return MANDEL_PAIRS.map(([p, q], I) =>
    MANDEL_PAIRS.map(([a, b], J) => {
      const t =
        J < 3 ? m[p]![a]!.mul(m[q]![b]!) : m[p]![a]!.mul(m[q]![b]!).add(m[p]![b]!.mul(m[q]![a]!)).mul(Math.SQRT1_2);
      return I < 3 ? t : t.mul(MANDEL_FACTORS[I]!);
    }),
  );
}

function matmul6(a: readonly (readonly Tensor[])[], b: readonly (readonly Tensor[])[]): Tensor[][] {
  return a.map((row) =>
    b[0]!.map((_, j) =>
      dotOf(
        row,
        b.map((r) => r[j]!),
      ),
    ),
  );
}

/** SSR4 `(6,6)`: a fourth-order tensor with both minor symmetries, in Mandel form. */
export class SSR4 extends PrimitiveTensor<SSR4, "SSR4"> {
  /** The type's name in messages and `toString`. */
  static readonly NAME = "SSR4";
  /** The static base shape. */
  static readonly BASE: readonly number[] = [6, 6];

  /** `δij δkl`: ones in the top-left 3×3 block. */
  static identity(opts: TypedOptions = {}): SSR4 {
    return constant((i, j) => (i < 3 && j < 3 ? 1 : 0), optDType("SSR4.identity", opts) ?? "float32");
  }
  /** The symmetric identity: eye(6) in Mandel form. */
  static identitySym(opts: TypedOptions = {}): SSR4 {
    return constant((i, j) => (i === j ? 1 : 0), optDType("SSR4.identitySym", opts) ?? "float32");
  }
  /** `identity/3`. */
  static identityVol(opts: TypedOptions = {}): SSR4 {
    return constant((i, j) => (i < 3 && j < 3 ? 1 / 3 : 0), optDType("SSR4.identityVol", opts) ?? "float32");
  }
  /** `identitySym - identity/3`. */
  static identityDev(opts: TypedOptions = {}): SSR4 {
    return constant(
      (i, j) => (i === j ? 1 : 0) - (i < 3 && j < 3 ? 1 / 3 : 0),
      optDType("SSR4.identityDev", opts) ?? "float32",
    );
  }
  /** Ones on the normal diagonal. */
  static identityC1(opts: TypedOptions = {}): SSR4 {
    return constant((i, j) => (C1(i, j) ? 1 : 0), optDType("SSR4.identityC1", opts) ?? "float32");
  }
  /** Ones off the diagonal of the normal block. */
  static identityC2(opts: TypedOptions = {}): SSR4 {
    return constant((i, j) => (C2(i, j) ? 1 : 0), optDType("SSR4.identityC2", opts) ?? "float32");
  }
  /** Ones on the shear diagonal. */
  static identityC3(opts: TypedOptions = {}): SSR4 {
    return constant((i, j) => (C3(i, j) ? 1 : 0), optDType("SSR4.identityC3", opts) ?? "float32");
  }

  /** `c1·C1 + c2·C2 + c3·C3` (cubic symmetry); batched Scalars broadcast. */
  static fillC1C2C3(c1: ScalarLike, c2: ScalarLike, c3: ScalarLike, opts: TypedOptions = {}): SSR4 {
    const dtype = fillDType([c1, c2, c3], optDType("SSR4.fillC1C2C3", opts), "SSR4.fillC1C2C3");
    const [a, b, c] = scalarsOf([c1, c2, c3], dtype, "SSR4.fillC1C2C3") as [Tensor, Tensor, Tensor];
    return fromC1C2C3(a, b, c, dtype);
  }

  /**
   * Isotropic stiffness: `fillC1C2C3((1-ν)pf, ν·pf, (1-2ν)pf)` with
   * `pf = E/((1+ν)(1-2ν))`; the Mandel shear diagonal is 2μ.
   * `SSR4.isotropicENu(100, 0.3)`; E and ν may be batched Scalars.
   */
  static isotropicENu(E: ScalarLike, nu: ScalarLike, opts: TypedOptions = {}): SSR4 {
    const dtype = fillDType([E, nu], optDType("SSR4.isotropicENu", opts), "SSR4.isotropicENu");
    const [e, v] = scalarsOf([E, nu], dtype, "SSR4.isotropicENu") as [Tensor, Tensor];
    const oneMinus2v = v.mul(-2).add(1);
    const pf = e.div(v.add(1).mul(oneMinus2v));
    return fromC1C2C3(negate(v).add(1).mul(pf), v.mul(pf), oneMinus2v.mul(pf), dtype);
  }

  /** Minor-symmetrises `(T + T^{01} + T^{23} + T^{01,23})/4`, then Mandel on both pairs. */
  static fromR4(r: R4): SSR4 {
    need("SSR4.fromR4", "r", r, R4);
    return new SSR4(fullToMandel(fullToMandel(minorSum(r, 1, 1).mul(0.25), 0), 1));
  }

  /** The full `(3,3,3,3)` tensor. */
  toR4(): R4 {
    return new R4(mandelToFull(mandelToFull(this.t, 0), 2));
  }

  /** `C·s` (SR2), `A·B` (SSR4), or scaling. */
  override mul(y: SR2): SR2;
  override mul(y: SSR4): SSR4;
  override mul(y: ScalarLike): SSR4;
  override mul(y: SR2 | SSR4 | ScalarLike): SR2 | SSR4 {
    if (y instanceof SR2) {
      const s = vecOf(y.t);
      return new SR2(
        assemble(
          mat6(this.t).map((row) => dotOf(row, s)),
          [6],
        ),
      );
    }
    if (y instanceof SSR4) return new SSR4(assemble(matmul6(mat6(this.t), mat6(y.t)).flat(), [6, 6]));
    return new SSR4(this.t.mul(scalarArg(y, "SSR4.mul", this)));
  }

  /** Swaps the two Mandel axes. */
  transposeMajor(): SSR4 {
    return new SSR4(this.t.transpose(0, 1));
  }
  /** A no-op (minor symmetric by construction). */
  transposeMinor(): SSR4 {
    return this;
  }

  /** `Q·C·Qᵀ` with `Q` the Mandel form of `R` (see `mandelRotation`). */
  rotate(r: Rot | R2): SSR4 {
    const q = mandelRotation(rotationMatrix("SSR4.rotate", r));
    const qt = q[0]!.map((_, j) => q.map((row) => row[j]!));
    const qc = matmul6(q, mat6(this.t));
    return new SSR4(assemble(matmul6(qc, qt).flat(), [6, 6]));
  }

  /**
   * The inverse of the 6×6 Mandel matrix by Gauss-Jordan elimination unrolled
   * over components, with partial pivoting done by `where` (row k swaps with
   * row i when |a_ik| > |a_kk|), so it traces into one straight-line kernel.
   * A 6×6 closed form (cofactors of 5×5 minors) would be far larger.
   * Singular matrices give inf/NaN.
   */
  inverse(): SSR4 {
    const n = 6;
    const one = cst(1, this.t);
    const zero = cst(0, this.t);
    let rows = mat6(this.t).map((row, i) => [...row, ...Array.from({ length: n }, (_, j) => (i === j ? one : zero))]);
    for (let k = 0; k < n; k++) {
      for (let i = k + 1; i < n; i++) {
        const swap = rows[i]![k]!.abs().gt(rows[k]![k]!.abs());
        for (let c = k; c < 2 * n; c++) {
          const a = rows[k]![c]!;
          const b = rows[i]![c]!;
          rows[k]![c] = where(swap, b, a);
          rows[i]![c] = where(swap, a, b);
        }
      }
      const inv = one.div(rows[k]![k]!);
      for (let c = k; c < 2 * n; c++) rows[k]![c] = rows[k]![c]!.mul(inv);
      for (let i = 0; i < n; i++) {
        if (i === k) continue;
        const f = rows[i]![k]!;
        for (let c = k; c < 2 * n; c++) rows[i]![c] = rows[i]![c]!.sub(f.mul(rows[k]![c]!));
      }
    }
    return new SSR4(
      assemble(
        rows.flatMap((row) => row.slice(n)),
        [6, 6],
      ),
    );
  }

  /** `∂C/∂C`: the identity on SSR4, an SSSSR8. */
  static identityMap(opts: TypedOptions = {}): SSSSR8 {
    return new SSSSR8(eye(36, { dtype: optDType("SSSSR8.identityMap", opts) ?? "float32" }).reshape([6, 6, 6, 6]));
  }

  /** `A::B = Σ AᵢⱼBᵢⱼ` (exact on Mandel components). */
  inner(b: SSR4): Scalar {
    need("SSR4.inner", "b", b, SSR4);
    return new Scalar(dotOf(mat6(this.t).flat(), mat6(b.t).flat()));
  }

  // --- linear algebra ---
  /**
   * Solves `C·x = b` for x in Mandel form (the 6×6 Mandel matrix, LU with
   * partial pivoting as `linalg.solve`): the Newton update of a symmetric
   * residual. Batch shapes broadcast; a singular C gives Inf/NaN.
   */
  solve(b: SR2): SR2 {
    need("SSR4.solve", "b", b, SR2);
    return new SR2(linalgSolve(this.t, b.t));
  }
}

function fromC1C2C3(a: Tensor, b: Tensor, c: Tensor, dtype: DType): SSR4 {
  const z = zerosOf(dtype);
  const out: Tensor[] = [];
  for (let i = 0; i < 6; i++) for (let j = 0; j < 6; j++) out.push(C1(i, j) ? a : C2(i, j) ? b : C3(i, j) ? c : z);
  return new SSR4(assemble(out, [6, 6]));
}
