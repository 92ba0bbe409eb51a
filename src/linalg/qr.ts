/**
 * QR by Householder reflections (ir/routines.ts's `qr`, unrolled for small
 * matrices by ./unroll.ts), as LAPACK's geqrf/orgqr: reflector j maps
 * column j below the diagonal onto `beta·e_j` with `beta = -sign(a_jj)·‖x‖`,
 * so R's diagonal may be negative (NumPy's and LAPACK's convention). A column
 * that is exactly zero below the diagonal gets no reflection (tau = 0), and the
 * others are computed from the column scaled by its largest entry (LAPACK's
 * larfg), so Q stays orthonormal for rank-deficient and tiny or huge input.
 */
import type { DType } from "../../ir/dtype.js";
import { where, type Tensor } from "../tensor.js";
import type { Alg, Sc } from "./scalar.js";
import { block, unrolled } from "./unroll.js";
import { assembleMat, comps, LOOP_ABOVE, matrixArg, MAX_DIRECT_SIZE } from "./matrix.js";
import { qrLooped } from "./looped.js";
import { checkChoice } from "./options.js";

/**
 * Householder QR of the component matrix `a` (m×n) by ir/routines.ts's `qr`, unrolled:
 * the first `cols` columns of Q (m×cols) and R (m×n, zeros below the diagonal).
 */
export function householderQR(
  dtype: DType,
  a: readonly (readonly Sc[])[],
  m: number,
  n: number,
  cols: number,
): { Q: Sc[][]; R: Sc[][] } {
  const w = cols + n + 1;
  const { out } = unrolled({ name: "qr", m, n, cols, sweeps: 0, dtype }, [a.flat()], m * w);
  return { Q: block(out, w, 0, m, 0, cols), R: block(out, w, 0, m, cols, cols + n) };
}

/** The factors of `qr`: `a = Q·R`. */
export interface QR {
  /** Orthonormal columns: `(…; m,k)` in "reduced" mode, `(…; m,m)` in "complete" mode (k = min(m, n)). */
  readonly Q: Tensor;
  /** Upper triangular: `(…; k,n)` in "reduced" mode, `(…; m,n)` in "complete" mode. */
  readonly R: Tensor;
}

/** Options of `qr`. */
export interface QROptions {
  /** "reduced" (default, NumPy's): Q is m×k and R k×n; "complete": Q is m×m and R m×n. */
  readonly mode?: "reduced" | "complete";
}

/**
 * QR decomposition of each base matrix (any m×n), by Householder reflections
 * as LAPACK's geqrf: `a = Q·R` with `Qᵀ·Q = I` and R upper triangular, whose
 * diagonal may be negative (NumPy's sign convention). NaN or Inf entries give
 * NaN in their batch element.
 *
 * @example
 * ```ts
 * const { Q, R } = linalg.qr(tensor([[3], [4]])); // Q = [[-0.6], [-0.8]], R = [[-5]]
 * ```
 */
export function qr(a: Tensor, opts: QROptions = {}): QR {
  const op = "linalg.qr";
  const mode = checkChoice(op, "mode", opts?.mode ?? "reduced", ["reduced", "complete"] as const);
  const A = matrixArg(op, "a", a, { limit: MAX_DIRECT_SIZE });
  const { alg, m, n, lead } = A;
  const k = Math.min(m, n);
  if (k === 0) {
    // Empty factors (and an identity Q when complete): built from a's own values so that the batch follows a.
    const qCols = mode === "complete" ? m : 0;
    const Q = Array.from({ length: m }, (_, i) => Array.from({ length: qCols }, (_, c) => (i === c ? 1 : 0)));
    const rRows = mode === "complete" ? m : 0;
    const R = Array.from({ length: rRows }, () => Array<Sc>(n).fill(0));
    return { Q: emptyOr(alg, Q, m, qCols, lead, A.x), R: emptyOr(alg, R, rRows, n, lead, A.x) };
  }
  if (Math.max(m, n) > LOOP_ABOVE) return qrLooped(A, mode === "complete");
  const qCols = mode === "complete" ? m : k;
  const { Q, R } = householderQR(A.x.dtype, comps(A), m, n, qCols);
  return {
    Q: assembleMat(alg, Q, lead, A.x),
    R: assembleMat(alg, mode === "complete" ? R : R.slice(0, k), lead, A.x),
  };
}

/** A matrix result that may have a zero-size dim: then a zero-size slice of a's broadcast zeros. */
function emptyOr(alg: Alg, rows: Sc[][], m: number, n: number, lead: readonly number[], like: Tensor): Tensor {
  if (m > 0 && n > 0) return assembleMat(alg, rows, lead, like);
  const z = where(like.isNan(), alg.t(0), alg.t(0)).reshape([
    ...like.baseShape.slice(0, -2),
    like.baseShape.at(-2)! * like.baseShape.at(-1)!,
  ]);
  return z.slice(lead.length, 0, 0).reshape([...lead, m, n]);
}
