/**
 * Looped matrix routines: the algorithms behind the `routine` op (LU with partial
 * pivoting, the LU solve, Cholesky, Householder QR, cyclic Jacobi for symmetric
 * eigenproblems and one-sided Jacobi for the SVD), each run on one base matrix of
 * a batch element and working in place in its output, which doubles as scratch.
 *
 * Each algorithm is written once against `Machine`, a small staged interface
 * (float, index and bool values, loads, loads of the output as last stored,
 * stores, loops, branches, mutable locals). The reference interpreter runs it with
 * plain JS numbers (ir/interpret.ts), the code generators build the loop form with
 * it (codegen/routines/), so every target runs the same operations in the same
 * order. Control flow depends only on sizes, on the pivot row chosen (a row swap
 * is skipped when the pivot is already in place), on the Jacobi convergence check
 * (a sweep runs only while the previous one rotated; none in the fixed-sweep form)
 * and on the order of the keys the Jacobi results are sorted by; loops are bounded by
 * the static sizes and the fixed sweep count, so no input can make a routine hang.
 *
 * Output layouts (the frontend, src/linalg, slices the results out):
 * - `lu` (n,n) → (n, n+2): the packed factors (U on and above the diagonal, L's
 *   multipliers below), then `perm` (the original row now at row r) and `piv` (the
 *   row swapped with row k at step k, 0-based), both as floats.
 * - `lu_solve` lu's (n, n+2) and b (n, k) → x (n, k).
 * - `cholesky` (n,n) → L (n,n), zeros above the diagonal.
 * - `qr` (m,n) → (m, cols + n + 1): Q (m×cols), R (m×n, zeros below the
 *   diagonal), then the reflectors' tau (scratch).
 * - `eigh` (n,n) → (2n, n): the rotated matrix (its diagonal holds the ascending
 *   eigenvalues; the rest is scratch), then V (column k: eigenvector k).
 * - `svd` (m,n), m ≥ n → (m+n+1, n): the rotated columns G = U·diag(σ), then V,
 *   then σ (descending); columns sorted by σ.
 * - `sort` (R, L) → (R, 4L): per row, the values sorted (stable bottom-up merge
 *   sort: ascending with NaN last, or with `descending` largest first with NaN
 *   first; `cols` 1 means descending), then their positions in the dtype, then two rows of scratch. The one
 *   routine that also takes integer dtypes (positions are exact below 2^24).
 */
import type { DType } from "./dtype.js";
import { ROUTINE_FACTS, type RoutineName } from "./routine-facts.js";

export { ROUTINE_FACTS, ROUTINE_NAMES, type RoutineFacts, type RoutineName } from "./routine-facts.js";

/** What a routine needs besides its inputs: the sizes and its attributes. */
export interface RoutineSpec {
  readonly name: RoutineName;
  /** Rows of the (first) input matrix. */
  readonly m: number;
  /** Columns of the (first) input matrix (for `lu_solve`: n, the system's size). */
  readonly n: number;
  /** `lu_solve`: right-hand-side columns; `qr`: Q's columns (min(m,n) or m). */
  readonly cols: number;
  /** Jacobi sweeps (`eigh`, `svd`). */
  readonly sweeps: number;
  readonly dtype: DType;
  /**
   * The Jacobi routines' fixed-sweep form, for a machine that unrolls them
   * (src/linalg/unroll.ts; the `routine` op never sets it): every one of `sweeps`
   * sweeps runs, and every pair is rotated, a pair whose off-diagonal entry (for
   * `svd`, the columns' inner product) is exactly 0 by the identity (t = 0), so no
   * branch depends on the data; no convergence test, no failure signal.
   */
  readonly fixedSweeps?: boolean;
}

/** A mutable local of a machine. */
export interface Var<T> {
  get(): T;
  set(v: T): void;
}

/**
 * The staged operations a routine is written with. `F` is a float of the routine's
 * dtype, `I` an index (a non-negative 32-bit integer), `B` a bool. Float ops round to
 * the dtype as the kernel IR's elementwise ops do.
 */
export interface Machine<F, I, B> {
  f(v: number): F;
  i(v: number): I;
  add(a: F, b: F): F;
  sub(a: F, b: F): F;
  mul(a: F, b: F): F;
  div(a: F, b: F): F;
  neg(a: F): F;
  abs(a: F): F;
  sqrt(a: F): F;
  lt(a: F, b: F): B;
  le(a: F, b: F): B;
  gt(a: F, b: F): B;
  ge(a: F, b: F): B;
  eq(a: F, b: F): B;
  isnan(a: F): B;
  not(a: B): B;
  and(a: B, b: B): B;
  or(a: B, b: B): B;
  sel(c: B, a: F, b: F): F;
  isel(c: B, a: I, b: I): I;
  iadd(a: I, b: I): I;
  isub(a: I, b: I): I;
  imul(a: I, b: I): I;
  imin(a: I, b: I): I;
  imax(a: I, b: I): I;
  ieq(a: I, b: I): B;
  ine(a: I, b: I): B;
  ige(a: I, b: I): B;
  ilt(a: I, b: I): B;
  /** An index as a float (exact). */
  toF(i: I): F;
  /** A float holding an exact integer in index range, as an index. */
  toI(f: F): I;
  /** Element `at` of input `input`'s base matrix block. */
  load(input: number, at: I): F;
  /** Element `at` of the output block as last stored. */
  oload(at: I): F;
  store(at: I, v: F): void;
  /**
   * `for v in [from, to)`. `inner`: an innermost loop whose `to` is at most this
   * number (and `from` at least 0); a target may unroll it into that many guarded copies.
   */
  loop(from: I, to: I, body: (v: I) => void, inner?: number): void;
  when(c: B, then: () => void, otherwise?: () => void): void;
  fvar(init: F): Var<F>;
  ivar(init: I): Var<I>;
  /**
   * Optional: called between two sweeps of the Jacobi routines' fixed-sweep form
   * (`RoutineSpec.fixedSweeps`), the state being the output block as last stored; an
   * unrolling machine may pass the state through a buffer there.
   */
  betweenSweeps?(): void;
}

/** The spec of a routine from its first input's base and its attributes. */
export function routineSpec(
  name: RoutineName,
  base: readonly number[],
  attrs: { readonly cols: number; readonly sweeps: number },
  dtype: DType,
  rhsCols = 0,
): RoutineSpec {
  const m = base[0]!;
  const rhs = ROUTINE_FACTS[name].rhs;
  const n = rhs ? m : base[1]!;
  const cols = rhs ? rhsCols : attrs.cols;
  return { name, m, n, cols, sweeps: attrs.sweeps, dtype };
}

/** A routine's algorithm, staged on any machine. */
type Algorithm = <F, I, B>(M: Machine<F, I, B>, r: RoutineSpec) => void;

/** The algorithm of each routine: one entry per name of `ROUTINE_NAMES`. */
const ALGORITHMS: { readonly [K in RoutineName]: Algorithm } = {
  lu: (M, r) => lu(M, r.n),
  lu_solve: (M, r) => luSolve(M, r.n, r.cols),
  cholesky: (M, r) => cholesky(M, r.n),
  qr: (M, r) => qr(M, r.m, r.n, r.cols),
  eigh: (M, r) => eigh(M, r.n, jacobiParams(r, r.n)),
  svd: (M, r) => svd(M, r.m, r.n, jacobiParams(r, r.m)),
  sort: (M, r) => mergeSort(M, r.m, r.n, r.cols === 1, r.dtype === "float32" || r.dtype === "float64"),
};

/** Runs routine `r` on machine `M` (one base matrix). */
export function runRoutine<F, I, B>(M: Machine<F, I, B>, r: RoutineSpec): void {
  ALGORITHMS[r.name](M, r);
}

/**
 * Machine epsilon of a dtype. The Jacobi convergence tests use `√n·eps` as the
 * relative tolerance (LAPACK's gesvj uses √m·eps) and `eps²·max|a_ij|` as the
 * negligible size.
 */
function eps(dtype: DType): number {
  return dtype === "float64" ? 2 ** -52 : 2 ** -23;
}

/** What the Jacobi routines take from the spec (see `eps`; `fixed`: `RoutineSpec.fixedSweeps`). */
interface JacobiParams {
  readonly sweeps: number;
  /** The relative tolerance, √rows·eps. */
  readonly tol: number;
  /** The negligible size's factor, eps². */
  readonly tiny: number;
  readonly fixed: boolean;
}

function jacobiParams(r: RoutineSpec, rows: number): JacobiParams {
  return {
    sweeps: r.sweeps,
    tol: Math.sqrt(rows) * eps(r.dtype),
    tiny: eps(r.dtype) ** 2,
    fixed: r.fixedSweeps === true,
  };
}

/** Row-major offset r·w + c. */
function at<F, I, B>(M: Machine<F, I, B>, r: I, c: I, w: number): I {
  return M.iadd(M.imul(r, M.i(w)), c);
}

/** Copies the m×n input `input` into the output block at column `c0` of rows `r0`.. (row width w). */
function copyIn<F, I, B>(M: Machine<F, I, B>, input: number, m: number, n: number, r0: number, c0: number, w: number) {
  M.loop(M.i(0), M.i(m), (i) =>
    M.loop(
      M.i(0),
      M.i(n),
      (j) => M.store(at(M, M.iadd(i, M.i(r0)), M.iadd(j, M.i(c0)), w), M.load(input, at(M, i, j, n))),
      n,
    ),
  );
}

/** An identity block n×n at rows r0.., columns c0.. (row width w), 1 where i == j. */
function identity<F, I, B>(M: Machine<F, I, B>, rows: number, cols: number, r0: number, c0: number, w: number) {
  M.loop(M.i(0), M.i(rows), (i) =>
    M.loop(
      M.i(0),
      M.i(cols),
      (j) => M.store(at(M, M.iadd(i, M.i(r0)), M.iadd(j, M.i(c0)), w), M.sel(M.ieq(i, j), M.f(1), M.f(0))),
      cols,
    ),
  );
}

/**
 * LU with partial pivoting in place, as LAPACK's getrf: at step k the row with the
 * first largest |a_ik|, i ≥ k, (NaN never wins) swaps with row k (whole rows, L's
 * multipliers too), then the rows below subtract multiples of it. A zero pivot
 * divides by 1 instead (its column below is zero, or NaN), as the unrolled routine.
 */
function lu<F, I, B>(M: Machine<F, I, B>, n: number): void {
  const w = n + 2;
  const o = (r: I, c: I): I => at(M, r, c, w);
  const N = M.i(n);
  copyIn(M, 0, n, n, 0, 0, w);
  M.loop(M.i(0), N, (i) => M.store(o(i, N), M.toF(i)));
  M.loop(M.i(0), N, (k) => {
    const k1 = M.iadd(k, M.i(1));
    const best = M.fvar(M.abs(M.oload(o(k, k))));
    const p = M.ivar(k);
    M.loop(
      k1,
      N,
      (i) => {
        const v = M.abs(M.oload(o(i, k)));
        const g = M.gt(v, best.get());
        best.set(M.sel(g, v, best.get()));
        p.set(M.isel(g, i, p.get()));
      },
      n,
    );
    const pk = p.get();
    M.store(o(k, M.i(n + 1)), M.toF(pk));
    M.when(M.ine(pk, k), () =>
      M.loop(
        M.i(0),
        M.i(n + 1),
        (c) => {
          const top = M.oload(o(k, c));
          const below = M.oload(o(pk, c));
          M.store(o(k, c), below);
          M.store(o(pk, c), top);
        },
        n + 1,
      ),
    );
    const piv = M.oload(o(k, k));
    const r = M.div(M.f(1), M.sel(M.eq(piv, M.f(0)), M.f(1), piv));
    M.loop(k1, N, (i) => {
      const f = M.mul(M.oload(o(i, k)), r);
      M.store(o(i, k), f);
      M.loop(k1, N, (c) => M.store(o(i, c), M.sub(M.oload(o(i, c)), M.mul(f, M.oload(o(k, c))))), n);
    });
  });
}

/**
 * Solves a·x = b from lu's packed factors (LAPACK's getrs): the row swaps of `piv`
 * on b, then L·y = P·b (unit diagonal) and U·x = y. A zero (or NaN) on U's
 * diagonal makes the whole solution NaN (the failure signal, docs/linalg-accuracy.md).
 */
function luSolve<F, I, B>(M: Machine<F, I, B>, n: number, k: number): void {
  const w = n + 2;
  const f = (r: I, c: I): F => M.load(0, at(M, r, c, w));
  const o = (r: I, c: I): I => at(M, r, c, k);
  const N = M.i(n);
  const K = M.i(k);
  copyIn(M, 1, n, k, 0, 0, k);
  M.loop(M.i(0), N, (i) => {
    // A pivot is a row at or below i (clamped so that no factors can make it read out of range).
    const p = M.imax(i, M.imin(M.toI(f(i, M.i(n + 1))), M.i(n - 1)));
    M.when(M.ine(p, i), () =>
      M.loop(
        M.i(0),
        K,
        (c) => {
          const top = M.oload(o(i, c));
          const below = M.oload(o(p, c));
          M.store(o(i, c), below);
          M.store(o(p, c), top);
        },
        k,
      ),
    );
  });
  M.loop(M.i(1), N, (i) =>
    M.loop(M.i(0), K, (c) => {
      const s = M.fvar(M.oload(o(i, c)));
      M.loop(M.i(0), i, (j) => s.set(M.sub(s.get(), M.mul(f(i, j), M.oload(o(j, c))))), n);
      M.store(o(i, c), s.get());
    }),
  );
  M.loop(M.i(0), N, (ii) => {
    const i = M.isub(M.i(n - 1), ii);
    const r = M.div(M.f(1), f(i, i));
    M.loop(M.i(0), K, (c) => {
      const s = M.fvar(M.oload(o(i, c)));
      M.loop(M.iadd(i, M.i(1)), N, (j) => s.set(M.sub(s.get(), M.mul(f(i, j), M.oload(o(j, c))))), n);
      M.store(o(i, c), M.mul(s.get(), r));
    });
  });
  // The failure signal: a zero or NaN on U's diagonal (singular) makes the whole solution NaN.
  const bad = M.ivar(M.i(0));
  M.loop(M.i(0), N, (i) => bad.set(M.isel(M.gt(M.abs(f(i, i)), M.f(0)), bad.get(), M.i(1))), n);
  M.when(M.ine(bad.get(), M.i(0)), () =>
    M.loop(M.i(0), N, (i) => M.loop(M.i(0), K, (c) => M.store(o(i, c), M.f(NaN)), k)),
  );
}

/**
 * Cholesky–Banachiewicz by columns, reading the lower triangle: a pivot that is
 * not positive (zero included) gives NaN from its column on.
 */
function cholesky<F, I, B>(M: Machine<F, I, B>, n: number): void {
  const a = (r: I, c: I): F => M.load(0, at(M, r, c, n));
  const o = (r: I, c: I): I => at(M, r, c, n);
  const N = M.i(n);
  M.loop(M.i(0), N, (i) => M.loop(M.i(0), N, (j) => M.store(o(i, j), M.f(0)), n));
  M.loop(M.i(0), N, (j) => {
    const d = M.fvar(a(j, j));
    M.loop(
      M.i(0),
      j,
      (k) => {
        const l = M.oload(o(j, k));
        d.set(M.sub(d.get(), M.mul(l, l)));
      },
      n,
    );
    // A pivot that is not positive (0, negative or NaN) gives NaN from its column on.
    const dj = d.get();
    const ljj = M.sqrt(M.sel(M.gt(dj, M.f(0)), dj, M.f(NaN)));
    M.store(o(j, j), ljj);
    const r = M.div(M.f(1), ljj);
    M.loop(M.iadd(j, M.i(1)), N, (i) => {
      const s = M.fvar(a(i, j));
      M.loop(M.i(0), j, (k) => s.set(M.sub(s.get(), M.mul(M.oload(o(i, k)), M.oload(o(j, k))))), n);
      M.store(o(i, j), M.mul(s.get(), r));
    });
  });
}

/**
 * Householder QR (LAPACK's geqrf, then orgqr for Q): reflector j maps column j
 * below the diagonal onto beta·e_j, beta = -sign(a_jj)·‖x‖; a column already zero
 * below the diagonal gets tau = 0 (H = I), and the others are computed scaled (see
 * below), so Q stays orthonormal for rank-deficient input. The reflectors are kept below R's
 * diagonal until Q is formed, then zeroed.
 */
function qr<F, I, B>(M: Machine<F, I, B>, m: number, n: number, qc: number): void {
  const w = qc + n + 1;
  const R = (r: I, c: I): I => at(M, r, M.iadd(c, M.i(qc)), w);
  const Q = (r: I, c: I): I => at(M, r, c, w);
  const T = (r: I): I => at(M, r, M.i(qc + n), w);
  const Mi = M.i(m);
  const nr = Math.min(m - 1, n);
  copyIn(M, 0, m, n, 0, qc, w);
  M.loop(M.i(0), Mi, (i) => M.store(T(i), M.f(0)));
  /** Column c of the block at `X` := H_j · column c. */
  const apply = (X: (r: I, c: I) => I, j: I, c: I, tau: F): void => {
    const j1 = M.iadd(j, M.i(1));
    const wv = M.fvar(M.oload(X(j, c)));
    M.loop(j1, Mi, (i) => wv.set(M.add(wv.get(), M.mul(M.oload(R(i, j)), M.oload(X(i, c))))), m);
    const tw = M.mul(tau, wv.get());
    M.store(X(j, c), M.sub(M.oload(X(j, c)), tw));
    M.loop(j1, Mi, (i) => M.store(X(i, c), M.sub(M.oload(X(i, c)), M.mul(tw, M.oload(R(i, j))))), m);
  };
  M.loop(M.i(0), M.i(nr), (j) => {
    const j1 = M.iadd(j, M.i(1));
    const alpha = M.oload(R(j, j));
    // The largest |x_i| below the diagonal (NaN wins, so that it spreads).
    const xm = M.fvar(M.f(0));
    M.loop(
      j1,
      Mi,
      (i) => {
        const v = M.abs(M.oload(R(i, j)));
        xm.set(M.sel(M.or(M.gt(v, xm.get()), M.isnan(v)), v, xm.get()));
      },
      m,
    );
    const xmax = xm.get();
    // As LAPACK's larfg: a sub-column that is exactly zero gets H = I (tau = 0, even
    // for alpha < 0). Otherwise the reflector is computed from the column divided by
    // sc = max(|alpha|, max|x_i|), so that no square under- or overflows (a tiny,
    // rounding-sized sub-column of a rank-deficient matrix would otherwise give a
    // tau inconsistent with v, and a Q that is not orthonormal).
    const zero = M.eq(xmax, M.f(0));
    const aa = M.abs(alpha);
    const sc = M.sel(M.gt(aa, xmax), aa, xmax);
    const x2 = M.fvar(M.f(0));
    M.loop(
      j1,
      Mi,
      (i) => {
        const v = M.div(M.oload(R(i, j)), sc);
        x2.set(M.add(x2.get(), M.mul(v, v)));
      },
      m,
    );
    const as = M.div(alpha, sc);
    const norm = M.sqrt(M.add(M.mul(as, as), x2.get()));
    // beta = -sign(alpha)·‖(alpha, x)‖: alpha - beta adds magnitudes, no cancellation.
    const bs = M.sel(M.ge(alpha, M.f(0)), M.neg(norm), norm);
    const tau = M.sel(zero, M.f(0), M.div(M.sub(bs, as), bs));
    const den = M.sub(as, bs);
    M.loop(j1, Mi, (i) => M.store(R(i, j), M.sel(zero, M.f(0), M.div(M.div(M.oload(R(i, j)), sc), den))), m);
    M.store(R(j, j), M.sel(zero, alpha, M.mul(bs, sc)));
    M.store(T(j), tau);
    M.loop(j1, M.i(n), (c) => apply(R, j, c, tau));
  });
  identity(M, m, qc, 0, 0, w);
  M.loop(M.i(0), M.i(nr), (jj) => {
    const j = M.isub(M.i(nr - 1), jj);
    const tau = M.oload(T(j));
    M.loop(M.i(0), M.i(qc), (c) => apply(Q, j, c, tau));
  });
  M.loop(M.i(1), Mi, (i) => M.loop(M.i(0), M.imin(i, M.i(n)), (c) => M.store(R(i, c), M.f(0)), n));
}

/**
 * The Jacobi rotation that zeroes a pair (Rutishauser's smaller angle):
 * θ = (y - x)/(2z), t = sign(θ)/(|θ| + √(θ²+1)), c = 1/√(t²+1), s = t·c.
 * Where `zero` (z = 0) is given and holds, t = 0: the identity (θ is then ±Inf or NaN).
 */
function rotation<F, I, B>(M: Machine<F, I, B>, x: F, y: F, z: F, zero?: B): { c: F; s: F; t: F } {
  const theta = M.div(M.sub(y, x), M.mul(M.f(2), z));
  const root = M.sqrt(M.add(M.mul(theta, theta), M.f(1)));
  const mag = M.div(M.f(1), M.add(M.abs(theta), root));
  const signed = M.sel(M.ge(theta, M.f(0)), mag, M.neg(mag));
  const t = zero === undefined ? signed : M.sel(zero, M.f(0), signed);
  const c = M.div(M.f(1), M.sqrt(M.add(M.mul(t, t), M.f(1))));
  return { c, s: M.mul(t, c), t };
}

/** Columns a, b of the block at `X` (rows 0..rows-1), entry by entry: (x, y) := f(x, y). */
function mapCols<F, I, B>(
  M: Machine<F, I, B>,
  X: (r: I, c: I) => I,
  rows: number,
  a: I,
  b: I,
  f: (x: F, y: F) => readonly [F, F],
): void {
  M.loop(
    M.i(0),
    M.i(rows),
    (k) => {
      const [x, y] = f(M.oload(X(k, a)), M.oload(X(k, b)));
      M.store(X(k, a), x);
      M.store(X(k, b), y);
    },
    rows,
  );
}

/** Columns p, q of the block at `X` (rows 0..rows-1): (x, y) := (c·x - s·y, s·x + c·y). */
function rotateCols<F, I, B>(M: Machine<F, I, B>, X: (r: I, c: I) => I, rows: number, p: I, q: I, c: F, s: F): void {
  mapCols(M, X, rows, p, q, (x, y) => [M.sub(M.mul(c, x), M.mul(s, y)), M.add(M.mul(s, x), M.mul(c, y))]);
}

/** Swaps columns a and b of the block at `X` (rows 0..rows-1). */
function swapCols<F, I, B>(M: Machine<F, I, B>, X: (r: I, c: I) => I, rows: number, a: I, b: I): void {
  mapCols(M, X, rows, a, b, (x, y) => [y, x]);
}

/**
 * Insertion sort of `n` keys at `key(i)` (ascending, or descending) by
 * compare-exchanges of neighbours, moving the columns of the blocks along. Stable:
 * equal keys keep their order. A NaN key never moves (nor does any key pass it).
 */
function sortKeys<F, I, B>(
  M: Machine<F, I, B>,
  n: number,
  key: (i: I) => I,
  blocks: readonly { X: (r: I, c: I) => I; rows: number }[],
  descending: boolean,
): void {
  M.loop(M.i(1), M.i(n), (i) =>
    M.loop(M.i(0), i, (d) => {
      // j = i, i-1, …, 1: the key moving down exchanges with the one before it.
      const j = M.isub(i, d);
      const h = M.isub(j, M.i(1));
      const a = M.oload(key(h));
      const b = M.oload(key(j));
      M.when(descending ? M.lt(a, b) : M.gt(a, b), () => {
        M.store(key(h), b);
        M.store(key(j), a);
        for (const blk of blocks) swapCols(M, blk.X, blk.rows, h, j);
      });
    }),
  );
}

/**
 * Cyclic Jacobi for a symmetric matrix (its lower triangle read), at most `sweeps`
 * sweeps. A pair is rotated unless it is negligible: |a_pq| ≤ tol·√|a_pp|·√|a_qq|
 * (the relative test of Jacobi methods) or |a_pq| ≤ tiny·max|a_ij| (below any
 * normwise error); a sweep that rotates nothing ends the iteration. If the last
 * sweep still rotated, every pair is tested once more, and a matrix with a pair
 * that is still not negligible did not converge: its whole output is NaN (the
 * failure signal). NaN entries never pass the tests, so a NaN input gives NaN.
 * `J`: sweeps, tol, tiny and the form (`JacobiParams`; the fixed-sweep form skips the tests).
 */
function eigh<F, I, B>(M: Machine<F, I, B>, n: number, J: JacobiParams): void {
  const N = M.i(n);
  // The working matrix: the lower triangle of rows 0..n-1 (s(i, j) for any i, j).
  const s = (i: I, j: I): I => M.isel(M.ige(i, j), at(M, i, j, n), at(M, j, i, n));
  const V = (r: I, c: I): I => at(M, M.iadd(r, N), c, n);
  copyIn(M, 0, n, n, 0, 0, n);
  identity(M, n, n, n, 0, n);
  const floor = negligibleSize(M, J, () => largest(M, N, (i, j) => M.oload(s(i, j)), true));
  const pair = (p: I, q: I): JacobiPair<B> => ({
    negligible: () => {
      const apq = M.abs(M.oload(s(q, p)));
      const rel = M.mul(M.f(J.tol), M.mul(M.sqrt(M.abs(M.oload(s(p, p)))), M.sqrt(M.abs(M.oload(s(q, q))))));
      return M.or(M.le(apq, rel), M.le(apq, floor));
    },
    zero: () => M.eq(M.oload(s(q, p)), M.f(0)),
    rotate: (zero) => {
      const apq = M.oload(s(q, p));
      const app = M.oload(s(p, p));
      const aqq = M.oload(s(q, q));
      const { c, s: sn, t } = rotation(M, app, aqq, apq, zero);
      M.loop(
        M.i(0),
        N,
        (r) =>
          M.when(M.and(M.ine(r, p), M.ine(r, q)), () => {
            const arp = M.oload(s(r, p));
            const arq = M.oload(s(r, q));
            M.store(s(r, p), M.sub(M.mul(c, arp), M.mul(sn, arq)));
            M.store(s(r, q), M.add(M.mul(sn, arp), M.mul(c, arq)));
          }),
        n,
      );
      M.store(s(p, p), M.sub(app, M.mul(t, apq)));
      M.store(s(q, q), M.add(aqq, M.mul(t, apq)));
      M.store(s(q, p), M.f(0));
      rotateCols(M, V, n, p, q, c, sn);
    },
  });
  jacobiSweeps(M, N, J, pair, 2 * n * n);
  sortKeys(M, n, (i) => at(M, i, i, n), [{ X: V, rows: n }], false);
}

/** A pair p < q of a Jacobi sweep. */
interface JacobiPair<B> {
  /** Whether it is negligible (the convergence test; not in the fixed-sweep form). */
  negligible(): B;
  /** Whether its off-diagonal entry (inner product) is exactly 0. */
  zero(): B;
  /** Rotates it; by the identity where `zero` is given and holds. */
  rotate(zero?: B): void;
}

/**
 * The cyclic sweeps of the Jacobi routines over the pairs p < q of `N`. The fixed-sweep
 * form (`fixed`, see `RoutineSpec.fixedSweeps`) runs every sweep and rotates every
 * pair (the identity where it is zero). Otherwise a negligible pair is skipped, a
 * sweep runs only while the previous one rotated, and if the last one still rotated
 * `notConverged` tests the pairs once more (`size`: the output block's entries).
 */
function jacobiSweeps<F, I, B>(
  M: Machine<F, I, B>,
  N: I,
  { sweeps, fixed }: JacobiParams,
  pair: (p: I, q: I) => JacobiPair<B>,
  size: number,
): void {
  const pairs = (visit: (p: I, q: I) => void): void =>
    M.loop(M.i(0), N, (p) => M.loop(M.iadd(p, M.i(1)), N, (q) => visit(p, q)));
  if (fixed) {
    for (let k = 0; k < sweeps; k++) {
      if (k > 0) M.betweenSweeps?.();
      pairs((p, q) => {
        const pq = pair(p, q);
        pq.rotate(pq.zero());
      });
    }
    return;
  }
  const active = M.ivar(M.i(1));
  M.loop(M.i(0), M.i(sweeps), () =>
    M.when(M.ine(active.get(), M.i(0)), () => {
      active.set(M.i(0));
      pairs((p, q) => {
        const pq = pair(p, q);
        M.when(M.not(pq.negligible()), () => {
          active.set(M.i(1));
          pq.rotate();
        });
      });
    }),
  );
  notConverged(M, active, N, (p, q) => pair(p, q).negligible(), size);
}

/** The convergence test's negligible size, tiny·max|a_ij| (`max`); unused, 0, in the fixed-sweep form. */
function negligibleSize<F, I, B>(M: Machine<F, I, B>, J: JacobiParams, max: () => F): F {
  return J.fixed ? M.f(0) : M.mul(M.f(J.tiny), max());
}

/**
 * The largest |x(i, j)| over i, j < n (j ≤ i when `lower`), NaN if any is NaN.
 */
function largest<F, I, B>(M: Machine<F, I, B>, N: I, x: (i: I, j: I) => F, lower: boolean, rows?: I): F {
  const best = M.fvar(M.f(0));
  M.loop(M.i(0), rows ?? N, (i) =>
    M.loop(M.i(0), lower ? M.iadd(i, M.i(1)) : N, (j) => {
      const v = M.abs(x(i, j));
      best.set(M.sel(M.or(M.gt(v, best.get()), M.isnan(v)), v, best.get()));
    }),
  );
  return best.get();
}

/**
 * The Jacobi routines' non-convergence signal: when the last sweep still rotated
 * (`active`), every pair p < q is tested again, and if one is not negligible the
 * whole output block (`size` entries) becomes NaN.
 */
function notConverged<F, I, B>(
  M: Machine<F, I, B>,
  active: Var<I>,
  N: I,
  negligible: (p: I, q: I) => B,
  size: number,
): void {
  M.when(M.ine(active.get(), M.i(0)), () => {
    const bad = M.ivar(M.i(0));
    M.loop(M.i(0), N, (p) => M.loop(M.iadd(p, M.i(1)), N, (q) => bad.set(M.isel(negligible(p, q), bad.get(), M.i(1)))));
    M.when(M.ine(bad.get(), M.i(0)), () => M.loop(M.i(0), M.i(size), (k) => M.store(k, M.f(NaN))));
  });
}

/**
 * One-sided Jacobi (Hestenes) on the columns of a tall m×n matrix, at most
 * `sweeps` sweeps: a pair is rotated unless it is negligible, |g_p·g_q| ≤
 * tol·‖g_p‖·‖g_q‖ (gesvj's test) or one of the two columns has norm ≤
 * tiny·max|a_ij| (a rounding-sized column left parallel to a large one would
 * shrink only by a factor eps per sweep, as in a constant matrix); a sweep that
 * rotates nothing ends the iteration, and a matrix still not converged after the
 * last is NaN (see `notConverged`). Then σ_j = ‖g_j‖, sorted descending with the
 * columns of G and V. `J`: sweeps, tol, tiny and the form (`JacobiParams`).
 */
function svd<F, I, B>(M: Machine<F, I, B>, m: number, n: number, J: JacobiParams): void {
  const N = M.i(n);
  const G = (r: I, c: I): I => at(M, r, c, n);
  const V = (r: I, c: I): I => at(M, M.iadd(r, M.i(m)), c, n);
  const S = (c: I): I => at(M, M.i(m + n), c, n);
  copyIn(M, 0, m, n, 0, 0, n);
  identity(M, n, n, m, 0, n);
  const floor = negligibleSize(M, J, () => largest(M, N, (i, j) => M.oload(G(i, j)), false, M.i(m)));
  /** Columns p, q of G: their squared norms x, y and inner product z. */
  const dots = (p: I, q: I): { x: F; y: F; z: F } => {
    const al = M.fvar(M.f(0));
    const be = M.fvar(M.f(0));
    const ga = M.fvar(M.f(0));
    M.loop(
      M.i(0),
      M.i(m),
      (i) => {
        const x = M.oload(G(i, p));
        const y = M.oload(G(i, q));
        al.set(M.add(al.get(), M.mul(x, x)));
        be.set(M.add(be.get(), M.mul(y, y)));
        ga.set(M.add(ga.get(), M.mul(x, y)));
      },
      m,
    );
    return { x: al.get(), y: be.get(), z: ga.get() };
  };
  const pair = (p: I, q: I): JacobiPair<B> => {
    const { x, y, z } = dots(p, q);
    return {
      negligible: () => {
        const nx = M.sqrt(x);
        const ny = M.sqrt(y);
        const rel = M.le(M.abs(z), M.mul(M.f(J.tol), M.mul(nx, ny)));
        const thin = M.or(M.le(nx, floor), M.le(ny, floor));
        return M.or(rel, thin);
      },
      zero: () => M.eq(z, M.f(0)),
      rotate: (zero) => {
        const { c, s } = rotation(M, x, y, z, zero);
        rotateCols(M, G, m, p, q, c, s);
        rotateCols(M, V, n, p, q, c, s);
      },
    };
  };
  jacobiSweeps(M, N, J, pair, (m + n + 1) * n);
  M.loop(M.i(0), N, (j) => M.store(S(j), M.sqrt(dots(j, j).x)));
  sortKeys(
    M,
    n,
    S,
    [
      { X: G, rows: m },
      { X: V, rows: n },
    ],
    true,
  );
}

/**
 * Stable bottom-up merge sort of each of the R rows of length L: passes of width
 * 1, 2, 4, … merge runs from one half of the row's scratch to the other, the
 * positions moving along; a right element goes first only when it comes strictly
 * before the left one (so equal values keep their input order). NaN sorts last
 * (first when `descending`); -0 and +0 are equal.
 */
function mergeSort<F, I, B>(M: Machine<F, I, B>, R: number, L: number, descending: boolean, float: boolean): void {
  const w4 = 4 * L;
  /** Whether x (a right element) comes strictly before y (a left one). */
  const before = (x: F, y: F): B => {
    const strict = descending ? M.gt(x, y) : M.lt(x, y);
    if (!float) return strict;
    const nanFirst = descending ? M.and(M.isnan(x), M.not(M.isnan(y))) : M.and(M.isnan(y), M.not(M.isnan(x)));
    return M.or(strict, nanFirst);
  };
  M.loop(M.i(0), M.i(R), (row) => {
    const base = M.imul(row, M.i(w4));
    const cell = (half: number, k: I): I => M.iadd(base, M.iadd(M.i(half), k));
    M.loop(M.i(0), M.i(L), (i) => {
      M.store(cell(0, i), M.load(0, M.iadd(M.imul(row, M.i(L)), i)));
      M.store(cell(L, i), M.toF(i));
    });
    let src = 0;
    for (let w = 1; w < L; w *= 2) {
      const dst = src === 0 ? 2 * L : 0;
      const s0 = src;
      M.loop(M.i(0), M.i(Math.ceil(L / (2 * w))), (bi) => {
        const lo = M.imul(bi, M.i(2 * w));
        const mid = M.imin(M.iadd(lo, M.i(w)), M.i(L));
        const hi = M.imin(M.iadd(lo, M.i(2 * w)), M.i(L));
        const i = M.ivar(lo);
        const j = M.ivar(mid);
        M.loop(lo, hi, (t) => {
          const ii = i.get();
          const jj = j.get();
          const li = M.imin(ii, M.i(L - 1));
          const rj = M.imin(jj, M.i(L - 1));
          const a = M.oload(cell(s0, li));
          const b = M.oload(cell(s0, rj));
          const right = M.and(M.ilt(jj, hi), M.or(M.not(M.ilt(ii, mid)), before(b, a)));
          M.store(cell(dst, t), M.sel(right, b, a));
          M.store(cell(dst + L, t), M.sel(right, M.oload(cell(s0 + L, rj)), M.oload(cell(s0 + L, li))));
          i.set(M.isel(right, ii, M.iadd(ii, M.i(1))));
          j.set(M.isel(right, M.iadd(jj, M.i(1)), jj));
        });
      });
      src = dst;
    }
    if (src !== 0) M.loop(M.i(0), M.i(2 * L), (k) => M.store(cell(0, k), M.oload(cell(src, k))));
  });
}

/**
 * A machine on plain JS numbers, for one base matrix: the reference interpreter's,
 * and a trip counter's (`countTrips`). Float ops round to float32 when `dtype` is.
 */
export function numberMachine(
  dtype: DType,
  load: (input: number, at: number) => number,
  out: { get(at: number): number; set(at: number, v: number): void },
): Machine<number, number, boolean> {
  const r = dtype === "float32" ? Math.fround : (x: number) => x;
  const local = <T>(v: T): Var<T> => {
    let x = v;
    return { get: () => x, set: (y) => void (x = y) };
  };
  return {
    f: (v) => r(v),
    i: (v) => v,
    add: (a, b) => r(a + b),
    sub: (a, b) => r(a - b),
    mul: (a, b) => r(a * b),
    div: (a, b) => r(a / b),
    neg: (a) => -a,
    abs: (a) => Math.abs(a),
    sqrt: (a) => r(Math.sqrt(a)),
    lt: (a, b) => a < b,
    le: (a, b) => a <= b,
    gt: (a, b) => a > b,
    ge: (a, b) => a >= b,
    eq: (a, b) => a === b,
    isnan: (a) => Number.isNaN(a),
    not: (a) => !a,
    and: (a, b) => a && b,
    or: (a, b) => a || b,
    sel: (c, a, b) => (c ? a : b),
    isel: (c, a, b) => (c ? a : b),
    iadd: (a, b) => a + b,
    isub: (a, b) => a - b,
    imul: (a, b) => a * b,
    imin: (a, b) => Math.min(a, b),
    imax: (a, b) => Math.max(a, b),
    ieq: (a, b) => a === b,
    ine: (a, b) => a !== b,
    ige: (a, b) => a >= b,
    ilt: (a, b) => a < b,
    toF: (i) => i,
    toI: (f) => Math.trunc(f),
    load: (input, i) => load(input, i),
    oload: (i) => out.get(i),
    store: (i, v) => out.set(i, r(v)),
    loop: (from, to, body) => {
      for (let v = from; v < to; v++) body(v);
    },
    when: (c, then, otherwise) => (c ? then() : otherwise?.()),
    fvar: local,
    ivar: local,
  };
}

/**
 * The most loop iterations one run of a routine takes (every branch taken, every
 * Jacobi sweep run), counting loops marked `inner` only when longer than `unroll`
 * (a target that unrolls them up to that length). The WebGPU target checks it
 * against its loop budget; counting stops once past `stop`.
 */
export function countTrips(r: RoutineSpec, unroll: number, stop = Infinity): number {
  let trips = 0;
  const over = new Error("over");
  const base = numberMachine(r.dtype, () => 1, { get: () => 1, set: () => undefined });
  const M: Machine<number, number, boolean> = {
    ...base,
    toI: () => 0,
    loop: (from, to, body, inner) => {
      if (!(inner !== undefined && inner <= unroll)) trips += Math.max(0, to - from);
      if (trips > stop) throw over;
      for (let v = from; v < to; v++) body(v);
    },
    when: (_c, then, otherwise) => {
      then();
      otherwise?.();
    },
  };
  try {
    runRoutine(M, r);
  } catch (e) {
    if (e !== over) throw e;
  }
  return trips;
}
