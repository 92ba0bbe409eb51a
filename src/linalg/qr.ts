/**
 * QR by Householder reflections, as LAPACK's geqrf/orgqr: reflector j maps
 * column j below the diagonal onto `beta·e_j` with `beta = -sign(a_jj)·‖x‖`,
 * so R's diagonal may be negative (NumPy's and LAPACK's convention). A column
 * that is exactly zero below the diagonal gets no reflection (tau = 0), and the
 * others are computed from the column scaled by its largest entry (LAPACK's
 * larfg), so Q stays orthonormal for rank-deficient and tiny or huge input.
 */
import { where, type Tensor } from "../tensor.js";
import { Alg, type Sc } from "./scalar.js";
import { assembleMat, comps, LOOP_ABOVE, matrixArg, MAX_DIRECT_SIZE } from "./matrix.js";
import { qrLooped } from "./looped.js";
import { checkChoice } from "./options.js";

interface Reflector {
  readonly j: number;
  /** v[i] for rows i > j (v[j] = 1). */
  readonly v: Sc[];
  readonly tau: Sc;
}

/** Householder QR of the component matrix `a` (m×n): the reflectors and R (m×n, zeros below the diagonal). */
export function householder(
  alg: Alg,
  a: readonly (readonly Sc[])[],
  m: number,
  n: number,
): { refl: Reflector[]; r: Sc[][] } {
  const r = a.map((row) => [...row]);
  const refl: Reflector[] = [];
  for (let j = 0; j < Math.min(m - 1, n); j++) {
    const alpha = r[j]![j]!;
    // The largest |x_i| below the diagonal (NaN wins, so that it spreads).
    let xm: Sc = 0;
    for (let i = j + 1; i < m; i++) {
      const x = r[i]![j]!;
      if (x === 0) continue;
      const ax = alg.t(alg.abs(x));
      xm = xm === 0 ? ax : where(ax.gt(alg.t(xm)).logicalOr(ax.isNan()), ax, alg.t(xm));
    }
    if (xm === 0) continue; // structurally zero below the diagonal: H = I
    // As LAPACK's larfg (see ir/routines.ts, qr): an exactly zero sub-column gets H = I
    // (tau = 0); otherwise the reflector comes from the column divided by
    // sc = max(|alpha|, max|x_i|), so that no square under- or overflows.
    const xmax = alg.t(xm);
    const zero = xmax.eq(0);
    const aa = alg.t(alg.abs(alpha));
    const sc = where(aa.gt(xmax), aa, xmax);
    const y: Sc[] = [];
    for (let i = j + 1; i < m; i++) y[i] = alg.div(r[i]![j]!, sc);
    let x2: Sc = 0;
    for (let i = j + 1; i < m; i++) x2 = alg.add(x2, alg.mul(y[i]!, y[i]!));
    const as = alg.div(alpha, sc);
    const norm = alg.sqrt(alg.add(alg.mul(as, as), x2));
    // beta = -sign(alpha)·‖(alpha, x)‖: alpha - beta adds magnitudes, no cancellation.
    const bs = alg.where(alg.t(alpha).ge(0), alg.neg(norm), norm);
    const tau = alg.where(zero, 0, alg.div(alg.sub(bs, as), bs));
    const den = alg.sub(as, bs);
    const v: Sc[] = [];
    for (let i = j + 1; i < m; i++) v[i] = y[i] === 0 ? 0 : alg.where(zero, 0, alg.div(y[i]!, den));
    r[j]![j] = alg.where(zero, alpha, alg.mul(bs, sc));
    for (let i = j + 1; i < m; i++) r[i]![j] = 0;
    for (let c = j + 1; c < n; c++) applyColumn(alg, r, j, m, c, v, tau);
    refl.push({ j, v, tau });
  }
  return { refl, r };
}

/** Column c of `x` := H·x[:, c] with H = I - tau·v·vᵀ acting on rows j.. (v[j] = 1). */
function applyColumn(alg: Alg, x: Sc[][], j: number, m: number, c: number, v: readonly Sc[], tau: Sc): void {
  let w: Sc = x[j]![c]!;
  for (let i = j + 1; i < m; i++) w = alg.add(w, alg.mul(v[i]!, x[i]![c]!));
  const tw = alg.mul(tau, w);
  if (tw === 0) return;
  x[j]![c] = alg.sub(x[j]![c]!, tw);
  for (let i = j + 1; i < m; i++) x[i]![c] = alg.sub(x[i]![c]!, alg.mul(tw, v[i]!));
}

/** The first `cols` columns of Q = H_0·H_1·…, accumulated backwards from the identity (as orgqr). */
export function formQ(alg: Alg, refl: readonly Reflector[], m: number, cols: number): Sc[][] {
  const q: Sc[][] = Array.from({ length: m }, (_, i) => Array.from({ length: cols }, (_, c) => (i === c ? 1 : 0)));
  for (let k = refl.length - 1; k >= 0; k--) {
    const { j, v, tau } = refl[k]!;
    for (let c = 0; c < cols; c++) applyColumn(alg, q, j, m, c, v, tau);
  }
  return q;
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
  const { refl, r } = householder(alg, comps(A), m, n);
  const qCols = mode === "complete" ? m : k;
  return {
    Q: assembleMat(alg, formQ(alg, refl, m, qCols), lead, A.x),
    R: assembleMat(alg, mode === "complete" ? r : r.slice(0, k), lead, A.x),
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
