/**
 * Matrix operands of the linear-algebra routines: checks, components and
 * assembly. A matrix is the last two base axes of a tensor; batch dims and any
 * leading base dims are batched over (each component is a `(batch; lead…)`
 * tensor), so `(B; 4,3,3)` is 4·B matrices of size 3×3.
 */
import { isFloat, type DType } from "../../ir/dtype.js";
import { DTypeError, ShapeError, UnsupportedOpError } from "../../ir/errors.js";
import { describe } from "../check.js";
import { baseStack, Tensor, where } from "../tensor.js";
import { Alg, type Sc } from "./scalar.js";

/**
 * The largest matrix size (rows or columns) of the direct routines (`det`, `inv`,
 * `solve`, `lu`, `luFactor`, `luSolve`, `cholesky`, `qr`). Up to `LOOP_ABOVE` they
 * unroll into straight-line code per matrix; above, each runs as a looped kernel
 * (one run of the routine's loops per batch element, working in place in its
 * output), whose cost per matrix grows as n³ and whose code does not grow.
 */
export const MAX_DIRECT_SIZE = 256;
/**
 * The largest size of the Jacobi routines (`eigh`, `eigvalsh`, `svd`, `svdvals`,
 * `matrixNorm` with 2, -2 or "nuc"). Up to `LOOP_ABOVE_JACOBI` they unroll; above,
 * a looped kernel runs the sweeps (at most `defaultSweeps(n)`, fewer once a sweep
 * rotates nothing), O(n³) per sweep. `lstsq` unrolls only: its limit is `LOOP_ABOVE_JACOBI`.
 */
export const MAX_JACOBI_SIZE = 64;
/**
 * The direct routines unroll matrices up to this size and use looped kernels
 * above it. Unrolled code grows as n³: at 8 an `inv` is about 60 KB of JS, while
 * beyond about 150 KB (an `inv` above 10×10) V8 stops optimizing the kernel and it
 * runs about 50× slower per matrix.
 */
export const LOOP_ABOVE = 8;
/** The Jacobi routines unroll up to this size (covering the 6×6 Mandel forms) and loop above it. */
export const LOOP_ABOVE_JACOBI = 6;

/** A checked matrix operand: the tensor in its compute dtype, and its sizes. */
export interface Mat {
  readonly x: Tensor;
  readonly m: number;
  readonly n: number;
  /** The base dims before the matrix axes. */
  readonly lead: readonly number[];
  readonly alg: Alg;
}

/** The float dtype a routine computes in: float dtypes stay, integers compute in float32. */
function computeDType(op: string, name: string, x: Tensor): DType {
  if (x.dtype === "bool") throw new DTypeError(`${op}: ${name} ${x.toString()} is bool; linear algebra needs numbers`);
  return isFloat(x.dtype) ? x.dtype : "float32";
}

/**
 * Checks a matrix operand: a Tensor with at least two base dims (square when
 * `square`), at most `limit` rows and columns. Integers compute in float32.
 */
export function matrixArg(
  op: string,
  name: string,
  x: unknown,
  opts: { square?: boolean; limit?: number; dtype?: DType } = {},
): Mat {
  if (!(x instanceof Tensor)) throw new DTypeError(`${op}: ${name} must be a Tensor, got ${describe(x)}`);
  if (x.baseDim < 2) {
    throw new ShapeError(`${op}: ${name} ${x.toString()} needs a matrix base (at least 2 base dims)`);
  }
  const b = x.baseShape;
  const m = b[b.length - 2]!;
  const n = b[b.length - 1]!;
  if (opts.square && m !== n) {
    throw new ShapeError(`${op}: ${name} ${x.toString()} is not square (${m}×${n} base matrices)`);
  }
  if (opts.limit !== undefined && Math.max(m, n) > opts.limit) {
    throw new UnsupportedOpError(
      `${op}: ${name} ${x.toString()} has ${m}×${n} base matrices, larger than ${opts.limit}×${opts.limit}, the largest ${op} supports`,
    );
  }
  const dtype = opts.dtype ?? computeDType(op, name, x);
  return { x: x.cast(dtype), m, n, lead: b.slice(0, -2), alg: new Alg(dtype) };
}

/** The components `a[i][j]` of the matrices of `x` (each `(batch; lead…)`). */
export function comps(a: Mat): Tensor[][] {
  const r = a.lead.length;
  const rows: Tensor[][] = [];
  for (let i = 0; i < a.m; i++) {
    const row = a.x.select(r, i);
    const out: Tensor[] = [];
    for (let j = 0; j < a.n; j++) out.push(row.select(r, j));
    rows.push(out);
  }
  return rows;
}

/** The components of a vector operand `(…; lead…, n)`. */
export function vecComps(x: Tensor, r: number, n: number): Tensor[] {
  return Array.from({ length: n }, (_, i) => x.select(r, i));
}

/**
 * A tensor of base `(lead…, rows, cols)` from components (numbers become
 * constants of base `lead`). Its batch is that of `like` even when every
 * component is a constant (a 1×1 LU's `L`): such results are broadcast against
 * `like` so that each batch element has its own copy.
 */
export function assembleMat(alg: Alg, rows: readonly (readonly Sc[])[], lead: readonly number[], like: Tensor): Tensor {
  const r = lead.length;
  const t = (c: Sc): Tensor => (typeof c === "number" ? constLead(alg, c, lead) : c);
  const out = baseStack(
    rows.map((row) => baseStack(row.map(t), r)),
    r,
  );
  return batchLike(out, like);
}

/** A tensor of base `(lead…, n)` from components. */
export function assembleVec(alg: Alg, xs: readonly Sc[], lead: readonly number[], like: Tensor): Tensor {
  const r = lead.length;
  const out = baseStack(
    xs.map((c) => (typeof c === "number" ? constLead(alg, c, lead) : c)),
    r,
  );
  return batchLike(out, like);
}

/**
 * A solve's solution from its component rows `x` (n×k): `(…; lead…, n)` when the
 * right-hand side was a vector (`vector`, k = 1), else `(…; lead…, n, k)`.
 */
export function assembleSolution(
  alg: Alg,
  x: readonly (readonly Sc[])[],
  vector: boolean,
  lead: readonly number[],
  like: Tensor,
): Tensor {
  return vector
    ? assembleVec(
        alg,
        x.map((row) => row[0]!),
        lead,
        like,
      )
    : assembleMat(alg, x, lead, like);
}

/** Of a matrix operand and a right-hand side, the one with more batch dims (a result's batch follows it). */
export function moreBatched(a: Tensor, b: Tensor): Tensor {
  return a.batchDim >= b.batchDim ? a : b;
}

/** A component of base `lead` (a number becomes a constant broadcast to `lead`). */
export function leadTensor(alg: Alg, c: Sc, lead: readonly number[], like: Tensor): Tensor {
  return batchLike(typeof c === "number" ? constLead(alg, c, lead) : c, like);
}

function constLead(alg: Alg, v: number, lead: readonly number[]): Tensor {
  const c = alg.t(v);
  return lead.length === 0 ? c : c.expand(lead);
}

/** `x` broadcast to the batch of `like` when it has fewer batch dims (only all-constant results do). */
function batchLike(x: Tensor, like: Tensor): Tensor {
  if (x.batchDim >= like.batchDim) return x;
  // A condition that depends on every batch element's data, whatever the value: both branches are x.
  const c = like.baseDim === 0 ? like.isNan() : like.isNan().any();
  return where(c, x, x);
}
