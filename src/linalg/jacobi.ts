/**
 * Symmetric eigenproblems and the SVD by Jacobi rotations, unrolled for a fixed
 * number of sweeps (straight-line code per matrix, no data-dependent loop).
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
 * not rotated, so a diagonal (or converged) matrix passes through unchanged and
 * 0/0 never arises. `sweeps` can be given to trade accuracy for speed.
 */
import { ShapeError } from "../../ir/errors.js";
import type { Tensor } from "../tensor.js";
import { Alg, type Sc } from "./scalar.js";
import { assembleMat, assembleVec, comps, LOOP_ABOVE_JACOBI, matrixArg, MAX_JACOBI_SIZE, type Mat } from "./matrix.js";
import { eighLooped, svdLooped } from "./looped.js";
import { checkCount } from "./options.js";
import { householderQR } from "./qr.js";

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

/**
 * The rotation (c, s) that zeroes the pair: `t = sign(θ)/(|θ| + √(θ²+1))` with
 * `θ = (y - x)/(2z)`, `c = 1/√(t²+1)`, `s = t·c` (Rutishauser's smaller angle).
 * For the symmetric eigenproblem x = a_pp, y = a_qq, z = a_pq; for the SVD
 * x = ‖g_p‖², y = ‖g_q‖², z = g_p·g_q. z = 0 gives (1, 0).
 */
function rotation(alg: Alg, x: Sc, y: Sc, z: Sc): { c: Sc; s: Sc; t: Sc } | undefined {
  if (z === 0) return undefined;
  const skip = alg.t(z).eq(0);
  // z = 0 gives θ = ±Inf (then t = 0 anyway) or 0/0 = NaN: the `where` below picks t = 0 for both.
  const theta = alg.div(alg.sub(y, x), alg.mul(2, z));
  const th = alg.t(theta);
  const root = alg.sqrt(alg.add(alg.mul(theta, theta), 1));
  const mag = alg.div(1, alg.add(alg.abs(theta), root));
  const t = alg.where(skip, 0, alg.where(th.ge(0), mag, alg.neg(mag)));
  const c = alg.div(1, alg.sqrt(alg.add(alg.mul(t, t), 1)));
  const s = alg.mul(t, c);
  return { c, s, t };
}

/** `(x, y) := (c·x - s·y, s·x + c·y)` on entries k of two columns. */
function rotateCols(alg: Alg, cols: Sc[][], p: number, q: number, c: Sc, s: Sc): void {
  const gp = cols[p]!;
  const gq = cols[q]!;
  for (let k = 0; k < gp.length; k++) {
    const x = gp[k]!;
    const y = gq[k]!;
    gp[k] = alg.sub(alg.mul(c, x), alg.mul(s, y));
    gq[k] = alg.add(alg.mul(s, x), alg.mul(c, y));
  }
}

/** Compare-exchange network that orders `keys` (ascending, or descending), moving the columns along. */
function sortWith(alg: Alg, keys: Sc[], cols: Sc[][][], descending: boolean): void {
  const n = keys.length;
  for (let i = 1; i < n; i++) {
    for (let j = i; j > 0; j--) {
      const a = keys[j - 1]!;
      const b = keys[j]!;
      if (typeof a === "number" && typeof b === "number") {
        if (descending ? a < b : a > b) {
          keys[j - 1] = b;
          keys[j] = a;
          for (const m of cols) [m[j - 1], m[j]] = [m[j]!, m[j - 1]!];
        }
        continue;
      }
      const swap = descending ? alg.t(a).lt(alg.t(b)) : alg.t(a).gt(alg.t(b));
      keys[j - 1] = alg.where(swap, b, a);
      keys[j] = alg.where(swap, a, b);
      for (const m of cols) {
        const u = m[j - 1]!;
        const v = m[j]!;
        m[j - 1] = u.map((x, k) => alg.where(swap, v[k]!, x));
        m[j] = v.map((x, k) => alg.where(swap, u[k]!, x));
      }
    }
  }
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

/** Jacobi on the symmetric component matrix (lower triangle read): eigenvalues and eigenvector columns. */
export function jacobiEigen(
  alg: Alg,
  m: readonly (readonly Sc[])[],
  n: number,
  sweeps: number,
  vectors: boolean,
  store?: Store,
): { values: Sc[]; cols: Sc[][] } {
  // The symmetric matrix, stored once per pair: s[i][j] for i >= j (the lower triangle).
  const s: Sc[][] = Array.from({ length: n }, (_, i) => Array.from({ length: i + 1 }, (_, j) => m[i]![j]!));
  const get = (i: number, j: number): Sc => (i >= j ? s[i]![j]! : s[j]![i]!);
  const set = (i: number, j: number, v: Sc): void => {
    if (i >= j) s[i]![j] = v;
    else s[j]![i] = v;
  };
  // Eigenvector columns: cols[k] is column k of V.
  const cols: Sc[][] = Array.from({ length: n }, (_, k) => Array.from({ length: n }, (_, i) => (i === k ? 1 : 0)));
  for (let sweep = 0; sweep < sweeps; sweep++) {
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const app = get(p, p);
        const aqq = get(q, q);
        const apq = get(q, p);
        const rot = rotation(alg, app, aqq, apq);
        if (rot === undefined) continue;
        const { c, s: sn, t } = rot;
        for (let r = 0; r < n; r++) {
          if (r === p || r === q) continue;
          const arp = get(r, p);
          const arq = get(r, q);
          set(r, p, alg.sub(alg.mul(c, arp), alg.mul(sn, arq)));
          set(r, q, alg.add(alg.mul(sn, arp), alg.mul(c, arq)));
        }
        set(p, p, alg.sub(app, alg.mul(t, apq)));
        set(q, q, alg.add(aqq, alg.mul(t, apq)));
        set(q, p, 0);
        if (vectors) rotateCols(alg, cols, p, q, c, sn);
      }
    }
    if (store !== undefined && sweep < sweeps - 1) {
      // Through a buffer: the next sweep starts a new kernel (see `Store`).
      const flat = store([...s.flat(), ...(vectors ? cols.flat() : [])]);
      let k = 0;
      for (const row of s) for (let j = 0; j < row.length; j++) row[j] = flat[k++]!;
      if (vectors) for (const col of cols) for (let j = 0; j < col.length; j++) col[j] = flat[k++]!;
    }
  }
  const values = Array.from({ length: n }, (_, i) => get(i, i));
  // Sort ascending, the eigenvector columns along.
  sortWith(alg, values, vectors ? [cols] : [], false);
  return { values, cols };
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
 * One-sided Jacobi on the columns of the tall component matrix g (m×n, m ≥ n):
 * the singular values (descending), V's columns, and U from a QR of the
 * rotated columns (orthonormal even when some singular values are 0).
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
  // Work on columns: g[j] is column j (m entries); v[j] is column j of V (n entries).
  const g: Sc[][] = Array.from({ length: n }, (_, j) => Array.from({ length: m }, (_, i) => g0[i]![j]!));
  const v: Sc[][] = Array.from({ length: n }, (_, j) => Array.from({ length: n }, (_, i) => (i === j ? 1 : 0)));
  for (let sweep = 0; sweep < sweeps; sweep++) {
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const rot = rotation(alg, alg.dot(g[p]!, g[p]!), alg.dot(g[q]!, g[q]!), alg.dot(g[p]!, g[q]!));
        if (rot === undefined) continue;
        rotateCols(alg, g, p, q, rot.c, rot.s);
        if (vectors) rotateCols(alg, v, p, q, rot.c, rot.s);
      }
    }
    if (store !== undefined && sweep < sweeps - 1) {
      const flat = store([...g.flat(), ...(vectors ? v.flat() : [])]);
      let k = 0;
      for (const col of g) for (let i = 0; i < col.length; i++) col[i] = flat[k++]!;
      if (vectors) for (const col of v) for (let i = 0; i < col.length; i++) col[i] = flat[k++]!;
    }
  }
  const sv = g.map((col) => alg.sqrt(alg.dot(col, col)));
  sortWith(alg, sv, vectors ? [g, v] : [], true);
  if (!vectors) return { sv, u: [], v: [] };
  // U: Q of g = Q·R, R diagonal up to rounding; column j takes the sign of R_jj (+ for 0).
  const rows = Array.from({ length: m }, (_, i) => g.map((col) => col[i]!));
  const { Q: q, R: r } = householderQR(alg.dtype, rows, m, n, full ? m : n);
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
