/**
 * The direct routines: LU with partial pivoting (and through it `det`, `inv`,
 * `solve`), Cholesky, triangles and the trace. LU, the LU solve and Cholesky are
 * the routines of ir/routines.ts (the looped kernels' algorithms), run by the
 * unrolling machine (./unroll.ts) over the matrix components into straight-line
 * code per matrix (pivot rows chosen with comparisons and `where`, no
 * data-dependent control flow), so a call fuses into one kernel that serves every
 * batch size.
 */
import { promote, type DType } from "../../ir/dtype.js";
import { DTypeError, ShapeError } from "../../ir/errors.js";
import { describe } from "../check.js";
import { arange } from "../creation.js";
import { Tensor, where } from "../tensor.js";
import type { RoutineSpec } from "../../ir/routines.js";
import { Alg, type Sc } from "./scalar.js";
import { block, unrolled, type Unroller } from "./unroll.js";
import {
  choleskyLooped,
  detLooped,
  invLooped,
  luFactorLooped,
  luLooped,
  luSolveLooped,
  solveLooped,
} from "./looped.js";
import {
  assembleMat,
  assembleSolution,
  assembleVec,
  comps,
  leadTensor,
  LOOP_ABOVE,
  matrixArg,
  MAX_DIRECT_SIZE,
  moreBatched,
  vecComps,
  type Mat,
} from "./matrix.js";

const I32 = new Alg("int32");

/** The spec of routine `name` of ir/routines.ts on the n×n operand `A` (`cols`: right-hand sides). */
function spec(name: "lu" | "lu_solve" | "cholesky", A: Mat, cols = 0): RoutineSpec {
  return { name, m: A.n, n: A.n, cols, sweeps: 0, dtype: A.x.dtype };
}

/**
 * LU with partial pivoting of ir/routines.ts (`lu`, LAPACK's getrf), unrolled: the
 * machine, whose `out` is the packed (n, n+2) block (U and L's multipliers, then
 * `perm` and `piv`).
 */
function factorUnrolled(A: Mat): Unroller {
  return unrolled(spec("lu", A), [comps(A).flat()], A.n * (A.n + 2));
}

/**
 * The LU solve of ir/routines.ts (`lu_solve`, LAPACK's getrs), unrolled: x (n×k) from
 * the packed factors and the rows of b. A zero or NaN on U's diagonal makes the
 * whole solution NaN (the failure signal, docs/linalg-accuracy.md).
 */
function solveUnrolled(
  A: Mat,
  factors: readonly Sc[],
  b: readonly (readonly Sc[])[],
  opts: { after?: Unroller; prepare?: (u: Unroller) => void } = {},
): Sc[][] {
  const n = A.n;
  const k = b[0]!.length;
  return block(unrolled(spec("lu_solve", A, k), [factors, b.flat()], n * k, opts).out, k, 0, n, 0, k);
}

/** Solves with the unrolled LU and LU solve: x (n×k) for the rows of b. */
function luSolveRows(A: Mat, b: readonly (readonly Sc[])[]): Sc[][] {
  const f = factorUnrolled(A);
  return solveUnrolled(A, f.out, b, { after: f });
}

function square(op: string, a: unknown, limit = MAX_DIRECT_SIZE): Mat {
  return matrixArg(op, "a", a, { square: true, limit });
}

/**
 * The determinant of each square base matrix: `(B; n,n)` gives `(B;)`.
 * Sizes up to 3 use the cofactor expansion; larger ones LU with partial
 * pivoting (the product of U's diagonal times the swap parity, as NumPy). A
 * singular matrix gives 0 (or a tiny value from rounding); NaN entries give NaN.
 * The determinant of a 0×0 matrix is 1.
 *
 * @example
 * ```ts
 * linalg.det(tensor([[1, 2], [3, 4]])).itemSync(); // -2
 * ```
 */
export function det(a: Tensor): Tensor {
  const A = square("linalg.det", a);
  const { alg, n, lead } = A;
  if (n === 0) return leadTensor(alg, 1, lead, A.x);
  if (n > LOOP_ABOVE) return detLooped(A);
  const m = comps(A);
  const e = (i: number, j: number): Tensor => m[i]![j]!;
  let d: Sc;
  if (n === 1) d = e(0, 0);
  else if (n === 2) d = alg.sub(alg.mul(e(0, 0), e(1, 1)), alg.mul(e(0, 1), e(1, 0)));
  else if (n === 3) {
    const minor = (r0: number, r1: number, c0: number, c1: number): Sc =>
      alg.sub(alg.mul(e(r0, c0), e(r1, c1)), alg.mul(e(r0, c1), e(r1, c0)));
    d = alg.dot(m[0]!, [minor(1, 2, 1, 2), minor(1, 2, 2, 0), minor(1, 2, 0, 1)]);
  } else {
    // U's diagonal product times the parity of the row swaps (step k swapped rows k and piv[k]).
    const f = factorUnrolled(A);
    const w = n + 2;
    d = 1;
    for (let k = 0; k < n; k++) {
      const swapped = f.ine(f.toI(f.out[k * w + n + 1]!), k);
      d = typeof swapped === "boolean" ? (swapped ? alg.neg(d) : d) : alg.where(swapped, alg.neg(d), d);
    }
    for (let k = 0; k < n; k++) d = alg.mul(d, f.out[k * w + k]!);
  }
  return leadTensor(alg, d, lead, A.x);
}

/**
 * The inverse of each square base matrix, by Gauss-Jordan elimination with
 * partial pivoting (LU, then the triangular solves, unrolled). A singular
 * matrix (an exactly zero pivot) gives NaN in every entry of its batch element
 * (NumPy raises instead; a batched, lazy call cannot); other batch elements are
 * unaffected. `invEx` also returns LAPACK's info per matrix.
 *
 * @example
 * ```ts
 * linalg.inv(tensor([[1, 2], [3, 4]])).toArraySync(); // [[-2, 1], [1.5, -0.5]]
 * ```
 */
export function inv(a: Tensor): Tensor {
  const A = square("linalg.inv", a);
  const { alg, n, lead } = A;
  if (n === 0) return A.x;
  if (n > LOOP_ABOVE) return invLooped(A);
  const eye = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
  return assembleMat(alg, luSolveRows(A, eye), lead, A.x);
}

/**
 * Solves `a x = b` for each batch element, by LU with partial pivoting (as
 * NumPy's `solve`, LAPACK's gesv). `a` is `(…; n,n)`; `b` is a vector
 * `(…; n)` when it has one base dim fewer than `a`, else a matrix `(…; n,k)`
 * of right-hand sides. Batch dims (and leading base dims) broadcast. A
 * singular `a` (an exactly zero pivot) gives NaN in every entry of its batch
 * element; `solveEx` also returns LAPACK's info per matrix.
 *
 * @example
 * ```ts
 * // NumPy's example: 3x + y = 9, x + 2y = 8
 * linalg.solve(tensor([[3, 1], [1, 2]]), tensor([9, 8])).toArraySync(); // [2, 3]
 * ```
 */
export function solve(a: Tensor, b: Tensor): Tensor {
  const op = "linalg.solve";
  if (!(b instanceof Tensor)) throw new DTypeError(`${op}: b must be a Tensor, got ${describe(b)}`);
  const probe = square(op, a);
  const dtype = promote(probe.x.dtype, b.dtype === "bool" ? probe.x.dtype : b.dtype);
  const A = matrixArg(op, "a", a, { square: true, limit: MAX_DIRECT_SIZE, dtype });
  if (b.dtype === "bool") throw new DTypeError(`${op}: b ${b.toString()} is bool; linear algebra needs numbers`);
  const { alg, n } = A;
  // PyTorch's rule: b is a vector when it has one base dim, or exactly a's base without its last dim.
  const aBase = A.x.baseShape;
  const vector = b.baseDim === 1 || (b.baseDim === aBase.length - 1 && b.baseShape.every((d, i) => d === aBase[i]));
  if (!vector && b.baseDim < 2) {
    throw new ShapeError(`${op}: b ${b.toString()} needs a vector or matrix base to solve with a ${A.x.toString()}`);
  }
  const bx = b.cast(dtype);
  const rowsOfB = vector ? bx.baseShape[bx.baseDim - 1]! : bx.baseShape[bx.baseDim - 2]!;
  if (rowsOfB !== n) {
    throw new ShapeError(`${op}: b ${b.toString()} has ${rowsOfB} rows but a ${A.x.toString()} is ${n}×${n}`);
  }
  const r = bx.baseDim - (vector ? 1 : 2);
  const bLead = bx.baseShape.slice(0, r);
  // The leading base dims broadcast like batch dims; the result has the broadcast lead.
  const lead = broadcastLead(op, A, b, bLead);
  if (n === 0) return bx;
  if (n > LOOP_ABOVE) {
    const x = solveLooped(A, vector ? bx.unsqueeze(-1) : bx, lead);
    return vector ? x.squeeze(-1) : x;
  }
  let rhs: Sc[][];
  if (vector) rhs = vecComps(bx, r, n).map((v) => [v]);
  else {
    const k = bx.baseShape[bx.baseDim - 1]!;
    rhs = Array.from({ length: n }, (_, i) => vecComps(bx.select(r, i), r, k));
  }
  const x = luSolveRows(A, rhs);
  return assembleSolution(alg, x, vector, lead, moreBatched(A.x, bx));
}

function broadcastLead(op: string, A: Mat, b: Tensor, bLead: readonly number[]): number[] {
  const a = A.lead;
  const len = Math.max(a.length, bLead.length);
  const out: number[] = [];
  for (let i = 0; i < len; i++) {
    const x = a[a.length - len + i] ?? 1;
    const y = bLead[bLead.length - len + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) {
      throw new ShapeError(
        `${op}: the leading base dims of a ${A.x.toString()} and b ${b.toString()} do not broadcast`,
      );
    }
    out.push(x === 1 ? y : x);
  }
  return out;
}

/** The factors of `lu`: `a = P·L·U`. */
export interface LU {
  /** The permutation matrix (0s and 1s in a's dtype). */
  readonly P: Tensor;
  /** Unit lower triangular. */
  readonly L: Tensor;
  /** Upper triangular. */
  readonly U: Tensor;
}

/**
 * LU decomposition with partial pivoting, `a = P·L·U` (SciPy's and PyTorch's
 * `lu`, Open3D's `LU`), for square base matrices. The pivots are LAPACK's
 * (getrf): the first largest |entry| of the column. A singular matrix gives a
 * zero on U's diagonal and finite factors.
 *
 * @example
 * ```ts
 * const { P, L, U } = linalg.lu(tensor([[1, 2], [3, 4]])); // P = [[0,1],[1,0]], L = [[1,0],[1/3,1]], U = [[3,4],[0,2/3]]
 * ```
 */
export function lu(a: Tensor): LU {
  const A = square("linalg.lu", a);
  const { alg, n, lead } = A;
  if (n === 0) return { P: A.x, L: A.x, U: A.x };
  if (n > LOOP_ABOVE) return luLooped(A);
  const F = block(factorUnrolled(A).out, n + 2, 0, n, 0, n + 1);
  const L = F.map((row, i) => row.slice(0, n).map((v, j) => (i === j ? 1 : j < i ? v : 0)));
  const U = F.map((row, i) => row.slice(0, n).map((v, j) => (j < i ? 0 : v)));
  // Row r of L·U is row perm[r] of a, so P[i][r] = (perm[r] == i).
  const P = Array.from({ length: n }, (_, i) =>
    F.map(({ [n]: pr }) => (typeof pr === "number" ? (pr === i ? 1 : 0) : alg.where(pr!.eq(i), 1, 0))),
  );
  return {
    P: assembleMat(alg, P, lead, A.x),
    L: assembleMat(alg, L, lead, A.x),
    U: assembleMat(alg, U, lead, A.x),
  };
}

/** The packed factors of `luFactor`. */
export interface LUFactor {
  /** U on and above the diagonal, L's multipliers below it (L's unit diagonal is implied). */
  readonly LU: Tensor;
  /**
   * int32 `(…; n)`, 1-based as LAPACK's `ipiv`: step k swapped row k with row
   * `pivots[k] - 1` (PyTorch's `lu_factor`, Open3D's `LUIpiv`).
   */
  readonly pivots: Tensor;
}

/**
 * LU decomposition with partial pivoting in LAPACK's packed form (getrf):
 * `LU` holds U and L's multipliers, `pivots` the 1-based row swaps
 * (PyTorch's `lu_factor`, Open3D's `LUIpiv`).
 */
export function luFactor(a: Tensor): LUFactor {
  const A = square("linalg.luFactor", a);
  const { alg, n, lead } = A;
  if (n === 0) return { LU: A.x, pivots: A.x.cast("int32").sum([A.x.baseDim - 1]) };
  if (n > LOOP_ABOVE) return luFactorLooped(A);
  const f = factorUnrolled(A);
  const w = n + 2;
  const piv = Array.from({ length: n }, (_, k) => f.toI(f.out[k * w + n + 1]!));
  return {
    LU: assembleMat(alg, block(f.out, w, 0, n, 0, n), lead, A.x),
    // The pivots as 1-based int32 (the routine's are indices, kept as floats in its block).
    pivots: assembleVec(
      I32,
      piv.map((p) => (typeof p === "number" ? p + 1 : f.intOf(f.iadd(p, 1)))),
      lead,
      A.x,
    ),
  };
}

/**
 * Solves `a x = b` from `luFactor(a)`'s packed factors (PyTorch's `lu_solve`,
 * LAPACK's getrs): the row swaps of `pivots`, then the unit lower and the upper
 * triangular solves. `b` is a vector or a matrix of right-hand sides, as in
 * `solve`. Factor once, solve for many right-hand sides. A pivot out of range
 * is clamped: step k swaps row k with row `min(max(pivots[k] - 1, k), n - 1)`.
 */
export function luSolve(factors: LUFactor, b: Tensor): Tensor {
  const op = "linalg.luSolve";
  if (
    factors === null ||
    typeof factors !== "object" ||
    !(factors.LU instanceof Tensor) ||
    !(factors.pivots instanceof Tensor)
  )
    throw new DTypeError(`${op}: factors must be luFactor's { LU, pivots }, got ${describe(factors)}`);
  if (!(b instanceof Tensor)) throw new DTypeError(`${op}: b must be a Tensor, got ${describe(b)}`);
  if (b.dtype === "bool") throw new DTypeError(`${op}: b ${b.toString()} is bool; linear algebra needs numbers`);
  const probe = matrixArg(op, "LU", factors.LU, { square: true, limit: MAX_DIRECT_SIZE });
  const dtype = promote(probe.x.dtype, b.dtype === "float64" ? "float64" : probe.x.dtype);
  const A = matrixArg(op, "LU", factors.LU, { square: true, limit: MAX_DIRECT_SIZE, dtype });
  const { alg, n } = A;
  const piv = factors.pivots;
  if (piv.dtype !== "int32" || piv.baseDim < 1 || piv.baseShape[piv.baseDim - 1] !== n)
    throw new ShapeError(
      `${op}: pivots ${piv.toString()} of dtype ${piv.dtype} must be int32 with ${n} entries per matrix (LU ${A.x.toString()})`,
    );
  const { rhs, vector, r, bx } = rightHandSides(op, A, b, dtype, n <= LOOP_ABOVE);
  if (n === 0) return bx;
  const lead = broadcastLead(op, A, b, bx.baseShape.slice(0, r));
  if (n > LOOP_ABOVE) {
    const x = luSolveLooped(A, piv, vector ? bx.unsqueeze(-1) : bx, lead);
    return vector ? x.squeeze(-1) : x;
  }
  // The routine's (n, n+2) block: the factors, an unused perm column, then the pivots
  // (1-based int32 components, known to the machine as indices `pivots - 1`).
  const pv = vecComps(piv, piv.baseDim - 1, n);
  const factorsBlock = comps(A).flatMap((row, i) => [...row, 0, pv[i]!]);
  const x = solveUnrolled(A, factorsBlock, rhs, { prepare: (u) => pv.forEach((p) => u.oneBased(p)) });
  return assembleSolution(alg, x, vector, lead, moreBatched(A.x, bx));
}

/** The right-hand sides of `b` for the n×n operand `A` as component rows (see `solve` for the vector rule). */
function rightHandSides(
  op: string,
  A: Mat,
  b: Tensor,
  dtype: DType,
  components = true,
): { rhs: Sc[][]; vector: boolean; r: number; bx: Tensor } {
  const n = A.n;
  const aBase = A.x.baseShape;
  const vector = b.baseDim === 1 || (b.baseDim === aBase.length - 1 && b.baseShape.every((d, i) => d === aBase[i]));
  if (!vector && b.baseDim < 2) {
    throw new ShapeError(`${op}: b ${b.toString()} needs a vector or matrix base to solve with ${A.x.toString()}`);
  }
  const bx = b.cast(dtype);
  const rowsOfB = vector ? bx.baseShape[bx.baseDim - 1]! : bx.baseShape[bx.baseDim - 2]!;
  if (rowsOfB !== n)
    throw new ShapeError(`${op}: b ${b.toString()} has ${rowsOfB} rows but a ${A.x.toString()} is ${n}×${n}`);
  const r = bx.baseDim - (vector ? 1 : 2);
  if (n === 0 || !components) return { rhs: [], vector, r, bx };
  const k = vector ? 1 : bx.baseShape[bx.baseDim - 1]!;
  const rhs = vector
    ? vecComps(bx, r, n).map((v) => [v as Sc])
    : Array.from({ length: n }, (_, i) => vecComps(bx.select(r, i), r, k) as Sc[]);
  return { rhs, vector, r, bx };
}

/**
 * The Cholesky factor of each symmetric positive-definite base matrix: lower
 * triangular `L` with `a = L·Lᵀ` (`upper: true` gives `U = Lᵀ`, `a = Uᵀ·U`).
 * Only the lower triangle of `a` is read (NumPy's default). A matrix that is
 * not positive definite gives NaN from its first pivot that is not positive
 * (zero included) on, and the columns before it stay (NumPy raises; `choleskyEx`
 * also returns the failing pivot, as PyTorch's `cholesky_ex`).
 */
export function cholesky(a: Tensor, opts: { upper?: boolean } = {}): Tensor {
  const A = square("linalg.cholesky", a);
  const { alg, n, lead } = A;
  if (n === 0) return A.x;
  if (n > LOOP_ABOVE) return choleskyLooped(A, opts?.upper === true);
  const L = block(unrolled(spec("cholesky", A), [comps(A).flat()], n * n).out, n, 0, n, 0, n);
  const upper = opts?.upper === true;
  return assembleMat(alg, upper ? L.map((_, i) => L.map((row) => row[i]!)) : L, lead, A.x);
}

function triangle(op: string, x: unknown, k: unknown, upper: boolean): Tensor {
  if (!(x instanceof Tensor)) throw new DTypeError(`${op}: x must be a Tensor, got ${describe(x)}`);
  if (typeof k !== "number" || !Number.isInteger(k))
    throw new ShapeError(`${op}: k must be an integer, got ${describe(k)} for x ${x.toString()}`);
  if (x.baseDim < 2) throw new ShapeError(`${op}: x ${x.toString()} needs a matrix base (at least 2 base dims)`);
  const b = x.baseShape;
  const m = b[b.length - 2]!;
  const n = b[b.length - 1]!;
  const d = arange(n, undefined, 1, { dtype: "int32" })
    .reshape([1, n])
    .sub(arange(m, undefined, 1, { dtype: "int32" }).reshape([m, 1]));
  // NumPy's rule: triu keeps j - i >= k, tril keeps j - i <= k; the rest is 0 (NaN included).
  const keep = upper ? d.ge(k) : d.le(k);
  return where(keep, x, 0);
}

/**
 * The upper triangle of each base matrix: entries with `j - i >= k` kept, the
 * others 0 (NumPy's `triu`, Open3D's `Triu`). `k > 0` starts above the diagonal.
 */
export function triu(x: Tensor, k = 0): Tensor {
  return triangle("linalg.triu", x, k, true);
}

/** The lower triangle of each base matrix: entries with `j - i <= k` kept, the others 0 (NumPy's `tril`). */
export function tril(x: Tensor, k = 0): Tensor {
  return triangle("linalg.tril", x, k, false);
}

/** The sum of the main diagonal of each base matrix (rectangular too): `(B; m,n)` gives `(B;)`. */
export function trace(x: Tensor): Tensor {
  const op = "linalg.trace";
  if (!(x instanceof Tensor)) throw new DTypeError(`${op}: x must be a Tensor, got ${describe(x)}`);
  if (x.baseDim < 2) throw new ShapeError(`${op}: x ${x.toString()} needs a matrix base (at least 2 base dims)`);
  if (x.dtype === "bool") throw new DTypeError(`${op}: x ${x.toString()} is bool; linear algebra needs numbers`);
  const b = x.baseShape;
  const r = b.length - 2;
  const m = b[r]!;
  const n = b[r + 1]!;
  const k = Math.min(m, n);
  // The diagonal of the row-major m×n block is every (n+1)-th entry, k of them.
  const flat = x.reshape([...b.slice(0, r), m * n]);
  return flat.slice(r, 0, k === 0 ? 0 : (k - 1) * (n + 1) + 1, n + 1).sum([r]);
}

/**
 * LAPACK's `info` per matrix from a bool `(…; lead…, n)` of failing pivots: the
 * 1-based index of the first, or 0 when none fails (int32 `(…; lead…)`).
 */
export function firstFailure(bad: Tensor): Tensor {
  const ax = bad.baseDim - 1;
  const n = bad.baseShape[ax]!;
  if (n === 0) return bad.cast("int32").sum([ax]);
  const first = bad.cast("int32").argmax(ax).cast("int32").add(Tensor._const(1, "int32"));
  return where(bad.any([ax]), first, Tensor._const(0, "int32"));
}

/** The main diagonal `(…; n)` of square base matrices `(…; n,n)`. */
function diag(x: Tensor): Tensor {
  const r = x.baseDim - 2;
  const n = x.baseShape[r]!;
  return x.reshape([...x.baseShape.slice(0, r), n * n]).slice(r, 0, n * n, n + 1);
}

/** `choleskyEx`'s result. */
export interface CholeskyEx {
  /** The factor, as `cholesky` returns it (NaN from the failing pivot's column on). */
  readonly L: Tensor;
  /**
   * int32 `(…; lead…)`, as LAPACK's potrf `info` and PyTorch's `cholesky_ex`: 0 when the
   * matrix is positive definite, else k > 0, the 1-based index of the first pivot that
   * is not positive (zero, negative or NaN).
   */
  readonly info: Tensor;
}

/**
 * `cholesky` with a per-matrix status (PyTorch's `cholesky_ex`, LAPACK's potrf info):
 * `{ L, info }`, `L` exactly as `cholesky(a, opts)` gives it.
 */
export function choleskyEx(a: Tensor, opts: { upper?: boolean } = {}): CholeskyEx {
  square("linalg.choleskyEx", a);
  const L = cholesky(a, opts);
  // A failing pivot is NaN on L's diagonal, and so is every later one (they read it).
  return { L, info: firstFailure(diag(L).isNan()) };
}

/** `luFactorEx`'s result: `luFactor`'s, and LAPACK's getrf info. */
export interface LUFactorEx extends LUFactor {
  /** int32 `(…; lead…)`: 0, or the 1-based index of the first zero (or NaN) on U's diagonal (singular). */
  readonly info: Tensor;
}

/** The status of LU factors: the first zero or NaN on U's diagonal, 1-based (0: none). */
function luInfo(LU: Tensor): Tensor {
  return firstFailure(diag(LU).abs().gt(0).logicalNot());
}

/** `luFactor` with LAPACK's getrf info per matrix (PyTorch's `lu_factor_ex`). */
export function luFactorEx(a: Tensor): LUFactorEx {
  square("linalg.luFactorEx", a);
  const f = luFactor(a);
  return { ...f, info: luInfo(f.LU) };
}

/** `solveEx`'s and `invEx`'s result. */
export interface SolveEx {
  /** The solution (the inverse for `invEx`), as `solve`/`inv` give it: NaN for a singular matrix. */
  readonly result: Tensor;
  /** int32 `(…; lead…)` of a: 0, or the 1-based index of the first zero pivot (LAPACK's gesv info). */
  readonly info: Tensor;
}

/** `solve` with LAPACK's gesv info per matrix of `a` (PyTorch's `solve_ex`). */
export function solveEx(a: Tensor, b: Tensor): SolveEx {
  const result = solve(a, b);
  return { result, info: luInfo(luFactor(a).LU) };
}

/** `inv` with LAPACK's getrf info per matrix (PyTorch's `inv_ex`). */
export function invEx(a: Tensor): SolveEx {
  const result = inv(a);
  return { result, info: luInfo(luFactor(a).LU) };
}
