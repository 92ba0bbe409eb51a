/**
 * The looped forms of the linear-algebra routines, for matrices above the sizes
 * that unroll (`LOOP_ABOVE`, `LOOP_ABOVE_JACOBI`): each is one `routine` op (a
 * kernel of its own that runs the routine's loops per batch element, working in
 * place in its output; ir/routines.ts) plus slices of its packed result. Leading
 * base dims (`(B; 4,n,n)`) move into the batch for the routine and back after.
 */
import type { DType } from "../../ir/dtype.js";
import type { RoutineName } from "../../ir/routines.js";
import { arange } from "../creation.js";
import { baseCat, Tensor, where } from "../tensor.js";
import type { Mat } from "./matrix.js";

/** `x (B; lead…, r, c)` as `(B, lead…; r, c)`. */
function toBatch(x: Tensor, lead: number): Tensor {
  return lead === 0 ? x : x.rebatch(x.batchDim + lead);
}

/** `y (B, lead…; base…)` back to `(B; lead…, base…)`. */
function fromBatch(y: Tensor, lead: number): Tensor {
  return lead === 0 ? y : y.rebatch(y.batchDim - lead);
}

function routine(name: RoutineName, ins: readonly Tensor[], cols = 0, sweeps = 0): Tensor {
  return Tensor._op("routine", ins, { name, arg: cols + sweeps });
}

/** The n×n identity of a dtype, as a computed `(; n,n)` tensor. */
function identity(n: number, dtype: DType): Tensor {
  const i = arange(n, undefined, 1, { dtype: "int32" });
  return where(i.reshape([n, 1]).eq(i.reshape([1, n])), Tensor._const(1, dtype), Tensor._const(0, dtype));
}

/** The main diagonal of the base matrices `(…; n,n)` as `(…; n)`. */
function diagonal(x: Tensor, n: number): Tensor {
  const r = x.baseDim - 2;
  return x.reshape([...x.baseShape.slice(0, r), n * n]).slice(r, 0, n * n, n + 1);
}

/** Packed LU factors `(B, lead…; n, n+2)` of a checked square operand (see ir/routines.ts). */
function factor(A: Mat): Tensor {
  return routine("lu", [toBatch(A.x, A.lead.length)]);
}

/** The determinant by LU: U's diagonal product times the parity of the row swaps. */
export function detLooped(A: Mat): Tensor {
  const n = A.n;
  const F = factor(A);
  const u = diagonal(F.slice(1, 0, n), n).prod([0]);
  const piv = F.select(1, n + 1);
  const flips = where(piv.eq(arange(n, undefined, 1, { dtype: A.x.dtype })), A.alg.t(1), A.alg.t(-1)).prod([0]);
  return fromBatch(u.mul(flips), A.lead.length);
}

/**
 * Solves with the looped LU: `b` is `(…; lead…, n, k)` already in the compute
 * dtype, its lead broadcast with a's to `lead`. The result is `(…; lead…, n, k)`.
 */
export function solveLooped(A: Mat, b: Tensor, lead: readonly number[]): Tensor {
  const r = lead.length;
  const n = A.n;
  const a = r === 0 ? A.x : A.x.expand([...lead, n, n]);
  const bb = r === 0 ? b : b.expand([...lead, ...b.baseShape.slice(-2)]);
  const F = routine("lu", [toBatch(a, r)]);
  return fromBatch(routine("lu_solve", [F, toBatch(bb, r)]), r);
}

/** The inverse: the LU solve of the identity. */
export function invLooped(A: Mat): Tensor {
  const F = factor(A);
  return fromBatch(routine("lu_solve", [F, identity(A.n, A.x.dtype)]), A.lead.length);
}

/** `lu`'s P, L, U from the looped factors. */
export function luLooped(A: Mat): { P: Tensor; L: Tensor; U: Tensor } {
  const n = A.n;
  const dt = A.x.dtype;
  const F = factor(A);
  const LU = F.slice(1, 0, n);
  const i = arange(n, undefined, 1, { dtype: "int32" });
  const below = i.reshape([n, 1]).gt(i.reshape([1, n]));
  const eye = identity(n, dt);
  const L = where(below, LU, eye);
  const U = where(below, A.alg.t(0), LU);
  // Row r of L·U is row perm[r] of a, so P[i][r] = (perm[r] == i).
  const perm = F.select(1, n).reshape([1, n]);
  const P = where(perm.eq(arange(n, undefined, 1, { dtype: dt }).reshape([n, 1])), A.alg.t(1), A.alg.t(0));
  const k = A.lead.length;
  return { P: fromBatch(P, k), L: fromBatch(L, k), U: fromBatch(U, k) };
}

/** `luFactor`'s packed LU and 1-based int32 pivots from the looped factors. */
export function luFactorLooped(A: Mat): { LU: Tensor; pivots: Tensor } {
  const n = A.n;
  const F = factor(A);
  const k = A.lead.length;
  return {
    LU: fromBatch(F.slice(1, 0, n), k),
    pivots: fromBatch(
      F.select(1, n + 1)
        .cast("int32")
        .add(Tensor._const(1, "int32")),
      k,
    ),
  };
}

/**
 * `luSolve` with the looped solve: the factors `(…; lead…, n, n)` and int32 1-based
 * pivots `(…; lead…, n)` packed as the routine's `(n, n+2)` (pivots clamped into
 * [0, n-1], so no pivot reads out of range), b `(…; lead…, n, k)`.
 */
export function luSolveLooped(A: Mat, pivots: Tensor, b: Tensor, lead: readonly number[]): Tensor {
  const r = lead.length;
  const n = A.n;
  const dt = A.x.dtype;
  const piv = pivots
    .sub(Tensor._const(1, "int32"))
    .clip(0, n - 1)
    .cast(dt)
    .unsqueeze(-1);
  const F = baseCat([A.x, piv, piv], A.x.baseDim - 1);
  const Fx = r === 0 ? F : F.expand([...lead, n, n + 2]);
  const bb = r === 0 ? b : b.expand([...lead, ...b.baseShape.slice(-2)]);
  return fromBatch(routine("lu_solve", [toBatch(Fx, r), toBatch(bb, r)]), r);
}

/** The Cholesky factor (lower, or its transpose). */
export function choleskyLooped(A: Mat, upper: boolean): Tensor {
  const L = fromBatch(routine("cholesky", [toBatch(A.x, A.lead.length)]), A.lead.length);
  return upper ? L.transpose() : L;
}

/** Householder QR: Q (m×cols) and R (rows×n), cols = rows = min(m,n) (reduced) or m (complete). */
export function qrLooped(A: Mat, complete: boolean): { Q: Tensor; R: Tensor } {
  const { m, n } = A;
  const cols = complete ? m : Math.min(m, n);
  const out = routine("qr", [toBatch(A.x, A.lead.length)], cols);
  const Q = out.slice(1, 0, cols);
  const R = out.slice(1, cols, cols + n).slice(0, 0, cols);
  return { Q: fromBatch(Q, A.lead.length), R: fromBatch(R, A.lead.length) };
}

/** Jacobi eigenvalues (ascending) and eigenvectors. */
export function eighLooped(A: Mat, sweeps: number): { values: Tensor; vectors: Tensor } {
  const n = A.n;
  const out = routine("eigh", [toBatch(A.x, A.lead.length)], 0, sweeps);
  const values = diagonal(out.slice(0, 0, n), n);
  return { values: fromBatch(values, A.lead.length), vectors: fromBatch(out.slice(0, n, 2 * n), A.lead.length) };
}

/**
 * One-sided Jacobi SVD: σ (descending), and when `vectors`, U (from a Householder
 * QR of the rotated columns, each column signed by R's diagonal) and Vh.
 */
export function svdLooped(
  A: Mat,
  sweeps: number,
  vectors: boolean,
  full: boolean,
): { S: Tensor; U?: Tensor; Vh?: Tensor } {
  const { m, n } = A;
  const k = A.lead.length;
  const tall = m >= n;
  const x = toBatch(A.x, k);
  const g = tall ? x : x.transpose();
  const [rm, rn] = tall ? [m, n] : [n, m];
  const out = routine("svd", [g], 0, sweeps);
  const S = out.select(0, rm + rn);
  if (!vectors) return { S: fromBatch(S, k) };
  const G = out.slice(0, 0, rm);
  const V = out.slice(0, rm, rm + rn);
  const cols = full ? rm : rn;
  const qr = routine("qr", [G], cols);
  const Q = qr.slice(1, 0, cols);
  const rdiag = diagonal(qr.slice(1, cols, cols + rn).slice(0, 0, rn), rn);
  // Column j < rn takes the sign of R_jj (+ for 0); the completing columns stay.
  const sign = where(rdiag.lt(A.alg.t(0)), A.alg.t(-1), A.alg.t(1));
  const signed = Q.slice(1, 0, rn).mul(sign.reshape([1, rn]));
  const U = cols > rn ? baseCat([signed, Q.slice(1, rn, cols)], 1) : signed;
  // tall: a = U S Vᵀ; wide: aᵀ = U' S V'ᵀ, so a = V' S U'ᵀ.
  return tall
    ? { S: fromBatch(S, k), U: fromBatch(U, k), Vh: fromBatch(V.transpose(), k) }
    : { S: fromBatch(S, k), U: fromBatch(V, k), Vh: fromBatch(U.transpose(), k) };
}
