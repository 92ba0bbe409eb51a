/** Norms and least squares. */
import { promote } from "../../ir/dtype.js";
import { DTypeError, ShapeError } from "../../ir/errors.js";
import { describe } from "../check.js";
import { Tensor, where } from "../tensor.js";
import { type Sc } from "./scalar.js";
import {
  assembleSolution,
  assembleVec,
  comps,
  LOOP_ABOVE_JACOBI,
  matrixArg,
  MAX_JACOBI_SIZE,
  moreBatched,
  vecComps,
} from "./matrix.js";
import { singularValues, storeFor, svd, thinSvd, type JacobiOptions } from "./jacobi.js";

/** Options of `vectorNorm` and `matrixNorm`. */
export interface NormOptions {
  /** Keep the reduced base dims with size 1 (default false). */
  readonly keepdim?: boolean;
}

function floatTensor(op: string, name: string, x: unknown): Tensor {
  if (!(x instanceof Tensor)) throw new DTypeError(`${op}: ${name} must be a Tensor, got ${describe(x)}`);
  if (x.dtype === "bool") throw new DTypeError(`${op}: ${name} ${x.toString()} is bool; norms need numbers`);
  return x.dtype === "float32" || x.dtype === "float64" ? x : x.cast("float32");
}

/**
 * The vector p-norm over base axes (all base axes by default), as PyTorch's
 * `linalg.vector_norm`: `ord` 2 (default) `√Σx²`, 1 `Σ|x|`, Infinity
 * `max|x|`, -Infinity `min|x|`, 0 the count of non-zeros, any other p
 * `(Σ|x|^p)^(1/p)`. NaN entries give NaN.
 *
 * @example
 * ```ts
 * linalg.vectorNorm(tensor([3, 4])).itemSync(); // 5
 * ```
 */
export function vectorNorm(x: Tensor, ord = 2, axes?: number | readonly number[], opts: NormOptions = {}): Tensor {
  const op = "linalg.vectorNorm";
  const t = floatTensor(op, "x", x);
  if (typeof ord !== "number" || Number.isNaN(ord))
    throw new ShapeError(`${op}: ord must be a number, got ${describe(ord)}`);
  const o = { keepdim: opts?.keepdim ?? false };
  const a = t.abs();
  if (ord === Infinity) return a.max(axes, o);
  if (ord === -Infinity) return a.min(axes, o);
  if (ord === 0) return t.ne(0).cast(t.dtype).sum(axes, o);
  if (ord === 1) return a.sum(axes, o);
  if (ord === 2) return t.mul(t).sum(axes, o).sqrt();
  return a
    .pow(ord)
    .sum(axes, o)
    .pow(1 / ord);
}

/** The matrix norms `matrixNorm` computes. */
export type MatrixNormOrd = "fro" | "nuc" | 1 | -1 | 2 | -2 | typeof Infinity;

/**
 * A matrix norm of each base matrix (the last two base axes), as NumPy's
 * `norm` with a matrix `ord`: "fro" (default) `√Σa²`, "nuc" the sum of the
 * singular values, 1 / -1 the largest / smallest column sum of |a|, Infinity /
 * -Infinity the largest / smallest row sum, 2 / -2 the largest / smallest
 * singular value. "nuc", 2 and -2 run the SVD (Jacobi, sizes up to
 * `MAX_JACOBI_SIZE`); the others are reductions of any size.
 */
export function matrixNorm(a: Tensor, ord: MatrixNormOrd = "fro", opts: NormOptions = {}): Tensor {
  const op = "linalg.matrixNorm";
  const t = floatTensor(op, "a", a);
  if (t.baseDim < 2) throw new ShapeError(`${op}: a ${t.toString()} needs a matrix base (at least 2 base dims)`);
  const r = t.baseDim - 2;
  const keepdim = opts?.keepdim ?? false;
  const keep = (x: Tensor): Tensor => (keepdim ? x.reshape([...x.baseShape, 1, 1]) : x);
  const abs = t.abs();
  switch (ord) {
    case "fro":
      return keep(
        t
          .mul(t)
          .sum([r, r + 1])
          .sqrt(),
      );
    case 1:
      return keep(abs.sum([r]).max([r]));
    case -1:
      return keep(abs.sum([r]).min([r]));
    case Infinity:
      return keep(abs.sum([r + 1]).max([r]));
    case -Infinity:
      return keep(abs.sum([r + 1]).min([r]));
    case "nuc":
    case 2:
    case -2: {
      const A = matrixArg(op, "a", t, { limit: MAX_JACOBI_SIZE });
      const sv = singularValues(op, A, undefined);
      const v: Sc = ord === 2 ? sv[0]! : ord === -2 ? sv[sv.length - 1]! : sv.reduce((s, x) => A.alg.add(s, x), 0);
      return keep(assembleVec(A.alg, [v], A.lead, A.x).reshape(A.lead as number[]));
    }
    default:
      throw new ShapeError(
        `${op}: ord must be "fro", "nuc", 1, -1, 2, -2, Infinity or -Infinity, got ${describe(ord)}`,
      );
  }
}

/** The result of `lstsq`. */
export interface Lstsq {
  /** The minimum-norm least-squares solution: `(…; n)` or `(…; n,k)`. */
  readonly solution: Tensor;
  /** The squared residual norms `‖a·x - b‖²`: `(…;)` or `(…; k)` (always computed; NumPy returns them only for full rank and m > n). */
  readonly residuals: Tensor;
  /** The effective rank, int32 `(…;)`: singular values above `rcond·σ_max`. */
  readonly rank: Tensor;
  /** The singular values of `a`, descending, `(…; min(m,n))`. */
  readonly singularValues: Tensor;
}

/** Options of `lstsq`. */
export interface LstsqOptions extends JacobiOptions {
  /** Singular values at or below `rcond·σ_max` count as zero (default `eps·max(m, n)`, NumPy's default). */
  readonly rcond?: number;
}

/**
 * The least-squares solution of `a x = b` for each batch element, minimum
 * norm when `a` is rank-deficient (NumPy's `lstsq`, LAPACK's gelsd): `x =
 * V·diag(1/σ)·Uᵀ·b` over the singular values above `rcond·σ_max`, with the
 * SVD by one-sided Jacobi (unrolled up to `LOOP_ABOVE_JACOBI`, looped above, up to
 * `MAX_JACOBI_SIZE`). `b` is a vector
 * `(…; m)` (one base dim) or a matrix `(…; m,k)`.
 *
 * @example
 * ```ts
 * // NumPy's example: fit y = m·x + c through (0,-1), (1,0.2), (2,0.9), (3,2.1)
 * const a = tensor([[0, 1], [1, 1], [2, 1], [3, 1]]);
 * linalg.lstsq(a, tensor([-1, 0.2, 0.9, 2.1])).solution.toArraySync(); // ≈ [1, -0.95]
 * ```
 */
export function lstsq(a: Tensor, b: Tensor, opts: LstsqOptions = {}): Lstsq {
  const op = "linalg.lstsq";
  if (!(b instanceof Tensor)) throw new DTypeError(`${op}: b must be a Tensor, got ${describe(b)}`);
  if (b.dtype === "bool") throw new DTypeError(`${op}: b ${b.toString()} is bool; linear algebra needs numbers`);
  const probe = matrixArg(op, "a", a, { limit: MAX_JACOBI_SIZE });
  const dtype = promote(probe.x.dtype, b.dtype === "float64" ? "float64" : probe.x.dtype);
  const A = matrixArg(op, "a", a, { limit: MAX_JACOBI_SIZE, dtype });
  const { alg, m, n, lead } = A;
  const k0 = Math.min(m, n);
  if (k0 === 0) throw new ShapeError(`${op}: a ${A.x.toString()} has empty base matrices (not supported)`);
  const bx = b.cast(dtype);
  const vector = bx.baseDim === 1 || bx.baseDim === A.x.baseDim - 1;
  if (!vector && bx.baseDim !== A.x.baseDim)
    throw new ShapeError(
      `${op}: b ${b.toString()} must be a vector or a matrix of right-hand sides for a ${A.x.toString()}`,
    );
  const r = bx.baseDim - (vector ? 1 : 2);
  const rowsOfB = bx.baseShape[r]!;
  if (rowsOfB !== m)
    throw new ShapeError(`${op}: b ${b.toString()} has ${rowsOfB} rows but a ${A.x.toString()} has ${m}`);
  const cols = vector ? 1 : bx.baseShape[r + 1]!;
  const rcond = opts?.rcond ?? (dtype === "float64" ? 2 ** -52 : 2 ** -23) * Math.max(m, n);
  if (typeof rcond !== "number" || !(rcond >= 0))
    throw new ShapeError(`${op}: rcond must be a number >= 0, got ${describe(rcond)}`);
  if (Math.max(m, n) > LOOP_ABOVE_JACOBI) return lstsqLooped(A.x, vector ? bx.unsqueeze(-1) : bx, vector, rcond, opts);
  const B: Sc[][] = vector
    ? vecComps(bx, r, m).map((v) => [v])
    : Array.from({ length: m }, (_, i) => vecComps(bx.select(r, i), r, cols));

  // The SVD a = U S Vᵀ (Jacobi on the tall orientation), then x = V S⁺ Uᵀ b.
  const { sv, U, V } = fullSvd(A, opts);
  const cutoff = alg.mul(sv[0]!, rcond);
  const keep = sv.map((s) => alg.t(s).gt(alg.t(cutoff)));
  const inv = sv.map((s, i) => alg.where(keep[i]!, alg.div(1, s), 0));
  // c = S⁺ Uᵀ b (k0 × cols), x = V c (n × cols).
  const c = Array.from({ length: k0 }, (_, i) =>
    Array.from({ length: cols }, (_, j) =>
      alg.mul(
        inv[i]!,
        alg.dot(
          U.map((row) => row[i]!),
          B.map((row) => row[j]!),
        ),
      ),
    ),
  );
  const x = Array.from({ length: n }, (_, i) =>
    Array.from({ length: cols }, (_, j) =>
      alg.dot(
        V[i]!.slice(0, k0),
        c.map((row) => row[j]!),
      ),
    ),
  );
  const ac = comps(A);
  const res = Array.from({ length: cols }, (_, j) => {
    let s: Sc = 0;
    for (let i = 0; i < m; i++) {
      const d = alg.sub(
        alg.dot(
          ac[i]!,
          x.map((row) => row[j]!),
        ),
        B[i]![j]!,
      );
      s = alg.add(s, alg.mul(d, d));
    }
    return s;
  });
  let rank: Tensor = keep[0]!.cast("int32");
  for (let i = 1; i < k0; i++) rank = rank.add(keep[i]!.cast("int32"));
  const like = moreBatched(A.x, bx);
  const solution = assembleSolution(alg, x, vector, lead, like);
  const residuals = vector
    ? assembleVec(alg, res, lead, like).reshape(lead as number[])
    : assembleVec(alg, res, lead, like);
  return {
    solution,
    residuals,
    rank,
    singularValues: assembleVec(alg, sv, lead, A.x),
  };
}

/**
 * `lstsq` above the unrolled sizes: the looped thin SVD (`svd`), then x = V·S⁺·Uᵀ·b
 * as broadcast products and sums over base axes. `a` is `(…; m,n)`, `b` `(…; m,k)`.
 */
function lstsqLooped(a: Tensor, b: Tensor, vector: boolean, rcond: number, opts: LstsqOptions): Lstsq {
  const { U, S, Vh } = svd(a, { fullMatrices: false, ...(opts.sweeps !== undefined ? { sweeps: opts.sweeps } : {}) });
  const keep = S.gt(S.slice(-1, 0, 1).mul(rcond));
  const sInv = where(keep, Tensor._const(1, S.dtype).div(S), 0);
  // c = S⁺·Uᵀ·b: (…; k, cols); x = V·c: (…; n, cols); the residual a·x - b: (…; m, cols).
  const c = U.unsqueeze(-1).mul(b.unsqueeze(-2)).sum(-3).mul(sInv.unsqueeze(-1));
  const x = Vh.unsqueeze(-1).mul(c.unsqueeze(-2)).sum(-3);
  const res = a.unsqueeze(-1).mul(x.unsqueeze(-3)).sum(-2).sub(b);
  const res2 = res.mul(res).sum(-2);
  return {
    solution: vector ? x.squeeze(-1) : x,
    residuals: vector ? res2.squeeze(-1) : res2,
    rank: keep.cast("int32").sum(-1),
    singularValues: S,
  };
}

/** The thin SVD of a checked operand as components: σ (k), U (m×k), V (n×k). */
function fullSvd(A: ReturnType<typeof matrixArg>, opts: JacobiOptions | undefined): { sv: Sc[]; U: Sc[][]; V: Sc[][] } {
  const { alg, m, n } = A;
  const c = comps(A);
  const tall = m >= n;
  const g = tall ? c : Array.from({ length: n }, (_, i) => Array.from({ length: m }, (_, j) => c[j]![i]!));
  const res = thinSvd(
    "linalg.lstsq",
    alg,
    g,
    tall ? m : n,
    tall ? n : m,
    opts,
    storeFor(alg, Math.min(m, n), A.lead, A.x),
  );
  return tall ? { sv: res.sv, U: res.u, V: res.v } : { sv: res.sv, U: res.v, V: res.u };
}
