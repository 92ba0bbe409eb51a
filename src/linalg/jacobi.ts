/**
 * Symmetric eigenproblems and the SVD by Jacobi rotations: ir/routines.ts's `eigh`
 * and `svd` (the algorithms the looped kernels run above `LOOP_ABOVE_JACOBI`), in
 * their fixed-sweep form unrolled by ./unroll.ts (straight-line code per matrix, no
 * data-dependent loop).
 *
 * Sweeps: cyclic Jacobi converges quadratically once the off-diagonal part is
 * small. The default sweep count per size, `defaultSweeps(n)`, was chosen from
 * the worst case over random symmetric matrices: for n = 3, 200,000 matrices
 * in five families (entries uniform in [-1, 1]; clusters `I + 1e-7·S`; graded
 * `D·S·D` with D = diag(1e-2, 1, 1e2); nearly diagonal; `u·uᵀ + I`), for n = 4
 * to 8, 5,000 uniform and clustered ones. After the default count the
 * off-diagonal Frobenius norm relative to the matrix's was at most 6e-21
 * (n = 3), 4e-49 (n = 4) and 7e-22 (n = 6), i.e. below float64 rounding, one
 * sweep earlier already about 1e-5 to 1e-15. Eigenvalues are then as accurate
 * as the rotations' rounding allows (a few ulps of ‖A‖ in float64, about
 * 1e-6·‖A‖ in float32). The check inside each rotation: a pair whose
 * off-diagonal entry (for the SVD, the columns' inner product) is exactly 0 is
 * rotated by the identity (t = 0), so a diagonal (or converged) matrix passes
 * through unchanged and 0/0 never arises. `sweeps` can be given to trade accuracy
 * for speed.
 */
import { ShapeError } from "../../ir/errors.js";
import type { RoutineSpec } from "../../ir/routines.js";
import type { Tensor } from "../tensor.js";
import { Alg, type Sc } from "./scalar.js";
import { assembleMat, assembleVec, comps, LOOP_ABOVE_JACOBI, matrixArg, MAX_JACOBI_SIZE, type Mat } from "./matrix.js";
import { eighLooped, svdLooped } from "./looped.js";
import { checkCount } from "./options.js";
import { householderQR } from "./qr.js";
import { block, unrolled } from "./unroll.js";

/**
 * The default number of Jacobi sweeps for an n×n problem. Up to
 * `LOOP_ABOVE_JACOBI` (unrolled, every sweep runs): 1 for n ≤ 2 (one rotation is
 * exact), 4 for n = 3, 6 for n = 4, 7 for n = 5..6. Above, the looped kernels stop
 * after the first sweep that rotates no pair (every pair negligible, see
 * ir/routines.ts) and this is only a guard: 20 for n ≤ 8, 24 for n ≤ 16, 30 for
 * n ≤ 32, 40 beyond, about twice the most sweeps measured on random,
 * rank-deficient, constant, ±1-spectrum and ill-conditioned (1e10, 1e12) matrices
 * (float64: 10 at n = 8, 12 at 17, 15 at 32, 22 at 64; docs/linalg-accuracy.md). A
 * looped matrix not converged after the guard is NaN (the failure signal).
 */
export function defaultSweeps(n: number): number {
  if (n <= 2) return 1;
  if (n === 3) return 4;
  if (n === 4) return 6;
  if (n <= 6) return 7;
  if (n <= 8) return 20;
  if (n <= 16) return 24;
  if (n <= 32) return 30;
  return 40;
}

/** The largest `sweeps` option. */
export const MAX_SWEEPS = 60;

/** Options of the Jacobi routines. */
export interface JacobiOptions {
  /**
   * Sweeps of cyclic Jacobi rotations (default `defaultSweeps(n)`, at most `MAX_SWEEPS`).
   * Above `LOOP_ABOVE_JACOBI` this is the most sweeps run, and a matrix not
   * converged by then is NaN rather than silently inaccurate.
   */
  readonly sweeps?: number;
}

function sweepsOf(op: string, opts: JacobiOptions | undefined, n: number): number {
  const s = opts?.sweeps;
  return s === undefined ? defaultSweeps(n) : checkCount(op, "sweeps", s, MAX_SWEEPS);
}

/** The result of `eigh`. */
export interface Eigh {
  /** `(…; n)`, ascending. */
  readonly eigenvalues: Tensor;
  /** `(…; n,n)`: column i is the unit eigenvector of eigenvalue i. */
  readonly eigenvectors: Tensor;
}

/**
 * ir/routines.ts's `eigh` (fixed sweeps) unrolled on the symmetric component matrix
 * (lower triangle read): eigenvalues (ascending) and eigenvector columns (`cols[k]`:
 * eigenvector k; unused when not `vectors`). `alg` gives the dtype.
 */
export function jacobiEigen(
  alg: Alg,
  m: readonly (readonly Sc[])[],
  n: number,
  sweeps: number,
  vectors: boolean,
  store?: Store,
): { values: Sc[]; cols: Sc[][] } {
  const spec: RoutineSpec = { name: "eigh", m: n, n, cols: 0, sweeps, dtype: alg.dtype, fixedSweeps: true };
  // The state between sweeps: the lower triangle, then V column by column (rows n..2n-1).
  const lower = Array.from({ length: n }, (_, i) => Array.from({ length: i + 1 }, (_, j) => i * n + j)).flat();
  const vAt = columnMajor(n, n, n);
  const between = store === undefined ? {} : { between: { at: vectors ? [...lower, ...vAt] : lower, store } };
  const { out } = unrolled(spec, [m.flat()], 2 * n * n, between);
  const values = Array.from({ length: n }, (_, i) => out[i * n + i]!);
  const cols = Array.from({ length: n }, (_, k) => vAt.slice(k * n, (k + 1) * n).map((i) => out[i]!));
  return { values, cols };
}

/** The offsets of an r×n block at row r0 of a row-major block of width n, column by column. */
function columnMajor(r: number, n: number, r0: number): number[] {
  return Array.from({ length: n }, (_, j) => Array.from({ length: r }, (_, i) => (r0 + i) * n + j)).flat();
}

/**
 * Writes components to a buffer and reads them back: the routine's state
 * between sweeps. One sweep of an n×n Jacobi unrolls into O(n³) scalar
 * operations, and for n ≥ 5 all sweeps in one JS function exceed the size V8
 * optimizes (the kernel then runs in its interpreter, ~50× slower); a stored
 * state splits the work into one kernel per sweep. The state is stored in
 * tensors of at most 64 components (the fuser's unroll limit), so each kernel
 * stays straight-line code; two zero-copy batch views make the fuser give
 * each a buffer.
 */
export type Store = (xs: readonly Sc[]) => Sc[];

/** A `Store` for components of base `lead`, batched like `like` (in tensors of at most 64); undefined below n = 5. */
export function storeFor(alg: Alg, n: number, lead: readonly number[], like: Tensor): Store | undefined {
  if (n < 5) return undefined;
  return (xs) => {
    const out: Sc[] = [];
    for (let start = 0; start < xs.length; start += 64) {
      const part = xs.slice(start, start + 64);
      const t = assembleVec(alg, part, lead, like).batchUnsqueeze(0).batchSqueeze(0);
      for (let i = 0; i < part.length; i++) out.push(t.select(lead.length, i));
    }
    return out;
  };
}

function symmetric(op: string, a: unknown): Mat {
  return matrixArg(op, "a", a, { square: true, limit: MAX_JACOBI_SIZE });
}

/**
 * Eigenvalues (ascending) and unit eigenvectors of each symmetric base matrix,
 * `a = V·diag(w)·Vᵀ`, by cyclic Jacobi rotations for a fixed number of sweeps
 * (see `defaultSweeps`; NumPy's `eigh` with UPLO "L": only the lower triangle
 * is read). Eigenvector signs are not normalised (as LAPACK's). NaN or Inf
 * entries give NaN in their batch element.
 *
 * @example
 * ```ts
 * linalg.eigh(tensor([[2, 1], [1, 2]])).eigenvalues.toArraySync(); // [1, 3]
 * ```
 */
export function eigh(a: Tensor, opts: JacobiOptions = {}): Eigh {
  const op = "linalg.eigh";
  const A = symmetric(op, a);
  const { alg, n, lead } = A;
  if (n === 0) return { eigenvalues: A.x.sum([A.x.baseDim - 1]), eigenvectors: A.x };
  if (n > LOOP_ABOVE_JACOBI) {
    const { values, vectors } = eighLooped(A, sweepsOf(op, opts, n));
    return { eigenvalues: values, eigenvectors: vectors };
  }
  const store = storeFor(alg, n, lead, A.x);
  const { values, cols } = jacobiEigen(alg, comps(A), n, sweepsOf(op, opts, n), true, store);
  const V = Array.from({ length: n }, (_, i) => cols.map((col) => col[i]!));
  return { eigenvalues: assembleVec(alg, values, lead, A.x), eigenvectors: assembleMat(alg, V, lead, A.x) };
}

/** The eigenvalues of each symmetric base matrix, ascending (`eigh` without the vectors). */
export function eigvalsh(a: Tensor, opts: JacobiOptions = {}): Tensor {
  const op = "linalg.eigvalsh";
  const A = symmetric(op, a);
  const { alg, n, lead } = A;
  if (n === 0) return A.x.sum([A.x.baseDim - 1]);
  if (n > LOOP_ABOVE_JACOBI) return eighLooped(A, sweepsOf(op, opts, n)).values;
  const store = storeFor(alg, n, lead, A.x);
  const { values } = jacobiEigen(alg, comps(A), n, sweepsOf(op, opts, n), false, store);
  return assembleVec(alg, values, lead, A.x);
}

/** The result of `svd`: `a = U·diag(S)·Vh`. */
export interface SVD {
  /** `(…; m,m)` (full matrices) or `(…; m,k)`, orthonormal columns. */
  readonly U: Tensor;
  /** `(…; k)`, descending, non-negative (k = min(m, n)). */
  readonly S: Tensor;
  /** `(…; n,n)` (full matrices) or `(…; k,n)`, orthonormal rows. */
  readonly Vh: Tensor;
}

/** Options of `svd`. */
export interface SVDOptions extends JacobiOptions {
  /** Square U and Vh (default true, as NumPy), else the reduced k-column forms. */
  readonly fullMatrices?: boolean;
}

/**
 * ir/routines.ts's `svd` (fixed sweeps) unrolled on the tall component matrix g0
 * (m×n, m ≥ n): the singular values (descending), V's columns, and U from a QR of
 * the rotated columns (orthonormal even when some singular values are 0).
 */
function jacobiSvd(
  alg: Alg,
  g0: readonly (readonly Sc[])[],
  m: number,
  n: number,
  sweeps: number,
  vectors: boolean,
  full: boolean,
  store?: Store,
): { sv: Sc[]; u: Sc[][]; v: Sc[][] } {
  const spec: RoutineSpec = { name: "svd", m, n, cols: 0, sweeps, dtype: alg.dtype, fixedSweeps: true };
  // The state between sweeps: G, then V, column by column.
  const gAt = columnMajor(m, n, 0);
  const vAt = columnMajor(n, n, m);
  const between = store === undefined ? {} : { between: { at: vectors ? [...gAt, ...vAt] : gAt, store } };
  const { out } = unrolled(spec, [g0.flat()], (m + n + 1) * n, between);
  const sv = out.slice((m + n) * n, (m + n + 1) * n);
  if (!vectors) return { sv, u: [], v: [] };
  // v[j] is column j of V.
  const v = Array.from({ length: n }, (_, j) => vAt.slice(j * n, (j + 1) * n).map((i) => out[i]!));
  // U: Q of G = Q·R, R diagonal up to rounding; column j takes the sign of R_jj (+ for 0).
  const { Q: q, R: r } = householderQR(alg.dtype, block(out, n, 0, m, 0, n), m, n, full ? m : n);
  const u = Array.from({ length: m }, (_, i) =>
    q[i]!.map((x, j) => (j < n ? alg.where(alg.t(r[j]![j]!).lt(0), alg.neg(x), x) : x)),
  );
  return { sv, u, v };
}

/**
 * The singular value decomposition of each base matrix (any m×n), `a =
 * U·diag(S)·Vh`, by one-sided Jacobi rotations (fixed sweeps, see
 * `defaultSweeps`) and a Householder QR for U, so U and Vh are orthonormal
 * even for rank-deficient input. Singular values are descending (NumPy's
 * `svd`; `fullMatrices` defaults to true as there). Signs of singular vector
 * pairs are not normalised.
 */
export function svd(a: Tensor, opts: SVDOptions = {}): SVD {
  const op = "linalg.svd";
  const A = matrixArg(op, "a", a, { limit: MAX_JACOBI_SIZE });
  const { alg, m, n, lead } = A;
  const full = opts?.fullMatrices ?? true;
  const k = Math.min(m, n);
  const sweeps = sweepsOf(op, opts, k);
  if (k === 0) throw new ShapeError(`${op}: a ${A.x.toString()} has empty base matrices (not supported)`);
  if (Math.max(m, n) > LOOP_ABOVE_JACOBI) {
    const r = svdLooped(A, sweeps, true, full);
    return { U: r.U!, S: r.S, Vh: r.Vh! };
  }
  const c = comps(A);
  const tall = m >= n;
  // A wide matrix: the SVD of its transpose, U and V exchanged.
  const g0 = tall ? c : Array.from({ length: n }, (_, i) => Array.from({ length: m }, (_, j) => c[j]![i]!));
  const [rm, rn] = tall ? [m, n] : [n, m];
  const { sv, u, v } = jacobiSvd(alg, g0, rm, rn, sweeps, true, full, storeFor(alg, k, lead, A.x));
  // u: rm × (full ? rm : rn) rows; v[j] is column j of V (rn × rn).
  const V = Array.from({ length: rn }, (_, i) => v.map((col) => col[i]!));
  const S = assembleVec(alg, sv, lead, A.x);
  if (tall) {
    // a = U S Vᵀ: Vh = Vᵀ, whose rows are v's columns.
    return { U: assembleMat(alg, u, lead, A.x), S, Vh: assembleMat(alg, v, lead, A.x) };
  }
  // aᵀ = U' S V'ᵀ, so a = V' S U'ᵀ: U = V', Vh = U'ᵀ.
  const uT = (u[0] ?? []).map((_, j) => u.map((row) => row[j]!));
  return { U: assembleMat(alg, V, lead, A.x), S, Vh: assembleMat(alg, uT, lead, A.x) };
}

/** The singular values of each base matrix, descending (`svd` without the vectors). */
export function svdvals(a: Tensor, opts: JacobiOptions = {}): Tensor {
  const op = "linalg.svdvals";
  const A = matrixArg(op, "a", a, { limit: MAX_JACOBI_SIZE });
  if (Math.max(A.m, A.n) > LOOP_ABOVE_JACOBI && Math.min(A.m, A.n) > 0)
    return svdLooped(A, sweepsOf(op, opts, Math.min(A.m, A.n)), false, false).S;
  return assembleVec(A.alg, singularValues(op, A, opts), A.lead, A.x);
}

/** The singular values of a checked matrix operand as components (descending). */
export function singularValues(op: string, A: Mat, opts: JacobiOptions | undefined): Sc[] {
  const { alg, m, n } = A;
  const k = Math.min(m, n);
  if (k === 0) throw new ShapeError(`${op}: a ${A.x.toString()} has empty base matrices (not supported)`);
  if (Math.max(m, n) > LOOP_ABOVE_JACOBI) {
    const S = svdLooped(A, sweepsOf(op, opts, k), false, false).S;
    return Array.from({ length: k }, (_, i) => S.select(A.lead.length, i));
  }
  const c = comps(A);
  const tall = m >= n;
  const g0 = tall ? c : Array.from({ length: n }, (_, i) => Array.from({ length: m }, (_, j) => c[j]![i]!));
  return jacobiSvd(alg, g0, tall ? m : n, k, sweepsOf(op, opts, k), false, false, storeFor(alg, k, A.lead, A.x)).sv;
}

/**
 * The thin SVD of the tall component matrix g0 (m×n, m ≥ n): σ (descending),
 * U's rows (m×n) and V's rows (n×n).
 */
export function thinSvd(
  op: string,
  alg: Alg,
  g0: readonly (readonly Sc[])[],
  m: number,
  n: number,
  opts: JacobiOptions | undefined,
  store: Store | undefined,
): { sv: Sc[]; u: Sc[][]; v: Sc[][] } {
  const { sv, u, v } = jacobiSvd(alg, g0, m, n, sweepsOf(op, opts, n), true, false, store);
  return { sv, u, v: Array.from({ length: n }, (_, i) => v.map((col) => col[i]!)) };
}
