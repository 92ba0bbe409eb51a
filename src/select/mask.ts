/**
 * Boolean-mask selection and `nonzero`: ops whose output shape is the number of
 * true (non-zero) values, that is, data. They run eagerly on the host, as NumPy's
 * `x[mask]` and `nonzero` do; inside `jit` the values are not known while tracing,
 * so they are a TraceError there (JAX raises a concretization error for the same
 * reason: a traced function must have shapes that do not depend on values).
 */
import { ARRAY_CTOR, type TypedArray } from "../../ir/dtype.js";
import { BackendError, DTypeError, ShapeError, TraceError } from "../../ir/errors.js";
import { fmtShape, prod } from "../../ir/types.js";
import { describe } from "../check.js";
import { fromTypedArray } from "../creation.js";
import { Tensor } from "../tensor.js";

/** Whether `t`'s value depends on a `jit`/`trace` argument (so it is not known while tracing). */
function traced(t: Tensor): boolean {
  const seen = new Set<Tensor>();
  const stack = [t];
  while (stack.length > 0) {
    const x = stack.pop()!;
    if (seen.has(x)) continue;
    seen.add(x);
    if (x._src.kind === "param") return true;
    if (x._src.kind === "lazy") stack.push(...x._src.inputs);
  }
  return t.batchShape.some((d) => d < 0);
}

/** A TraceError when `t`'s values are not known yet (inside `jit`): `op`'s output shape would depend on them. */
export function checkEager(op: string, name: string, t: Tensor): void {
  if (traced(t))
    throw new TraceError(
      `${op}: the output shape depends on the values of ${name} ${t.toString()}, which are not known while tracing (as in JAX, where this is a concretization error inside jit); call ${op} outside jit, or use where() to keep the shape`,
    );
}

function needTensor(op: string, name: string, t: unknown): asserts t is Tensor {
  if (!(t instanceof Tensor)) throw new DTypeError(`${op}: ${name} must be a Tensor, got ${describe(t)}`);
}

/** The values of `t` now (a BackendError naming the async form when its backend reads asynchronously). */
function readNow(op: string, t: Tensor): TypedArray {
  const s = t._src;
  const backend = s.kind === "buffer" ? s.backend : undefined;
  if (backend !== undefined && backend.readSync === undefined)
    throw new BackendError(
      `${op}: ${t.toString()} is on ${backend.displayName}, which reads asynchronously; use await ${op}Async(…)`,
    );
  return t.dataSync({ copy: false });
}

/** Checks that `mask` covers the leading dims of `x` (see `booleanMask`) and returns how many batch and base dims it covers. */
function maskDims(op: string, x: Tensor, mask: Tensor): { kb: number; kbase: number } {
  const kb = mask.batchDim;
  const kbase = mask.baseDim;
  const fits =
    kb <= x.batchDim &&
    mask.batchShape.every((d, i) => d === x.batchShape[i]) &&
    (kbase === 0 || (kb === x.batchDim && kbase <= x.baseDim && mask.baseShape.every((d, i) => d === x.baseShape[i])));
  if (!fits)
    throw new ShapeError(
      `${op}: mask ${mask.toString()} must have the shape of the leading dims of x ${x.toString()} (its batch dims a prefix of x's batch dims; base dims only when it covers every batch dim)`,
    );
  return { kb, kbase };
}

/**
 * `op`'s checks of `x` and `mask` (tensors, known now, `mask` covering the leading
 * dims of `x`): the dims `mask` covers (see `maskDims`) and `mask` as bool.
 */
function checkMask(op: string, x: Tensor, mask: Tensor): { kb: number; kbase: number; m: Tensor } {
  needTensor(op, "x", x);
  needTensor(op, "mask", mask);
  checkEager(op, "x", x);
  checkEager(op, "mask", mask);
  const { kb, kbase } = maskDims(op, x, mask);
  return { kb, kbase, m: mask.dtype === "bool" ? mask : mask.ne(0) };
}

function select(x: Tensor, xs: TypedArray, mask: Tensor, ms: TypedArray, kb: number, kbase: number): Tensor {
  const restBatch = x.batchShape.slice(kb);
  const restBase = x.baseShape.slice(kbase);
  const unit = prod(restBatch) * prod(restBase);
  let n = 0;
  for (let i = 0; i < ms.length; i++) if (ms[i] !== 0) n++;
  const out = new ARRAY_CTOR[x.dtype](n * unit);
  let at = 0;
  for (let i = 0; i < ms.length; i++) {
    if (ms[i] === 0) continue;
    out.set(xs.subarray(i * unit, (i + 1) * unit), at);
    at += unit;
  }
  return fromTypedArray(out, [n, ...restBatch, ...restBase], {
    batchDim: 1 + restBatch.length,
    dtype: x.dtype,
    copy: false,
  });
}

/**
 * NumPy's `x[mask]`: the entries of `x` where the bool `mask` is true, in
 * row-major order, stacked on a new leading batch dim. `mask` has the shape of
 * `x`'s leading dims: a prefix of its batch dims `(B0,B1;)`, or all batch dims
 * and a prefix of the base. The masked dims become one batch dim of the count
 * of true values; the rest stay as they were: x `(4,5; 3)` with mask `(4;)`
 * gives `(n,5; 3)`, with mask `(4,5; 3)` gives `(n;)`. A non-bool mask is
 * compared with 0 (NaN is true).
 *
 * Eager only (the output shape is data): a TraceError inside `jit`. Synchronous
 * on the JS backend; `booleanMaskAsync` reads from any backend.
 *
 * ```ts
 * const gc = tensor([0.5, 1.0, 0.25], { batchDim: 1 });
 * booleanMask(gc, gc.gt(0.4)).toArraySync(); // [0.5, 1]
 * ```
 */
export function booleanMask(x: Tensor, mask: Tensor): Tensor {
  const op = "booleanMask";
  const { kb, kbase, m } = checkMask(op, x, mask);
  // Both are computed (if lazy) before either view is taken: computing one may allocate,
  // and a growing WebAssembly memory detaches a view of it taken before.
  readNow(op, x);
  readNow(op, m);
  return select(x, readNow(op, x), m, readNow(op, m), kb, kbase);
}

/** `booleanMask` reading the values from any backend (WebGPU too); the result is on the current backend. */
export async function booleanMaskAsync(x: Tensor, mask: Tensor): Promise<Tensor> {
  const op = "booleanMaskAsync";
  const { kb, kbase, m } = checkMask(op, x, mask);
  const [xs, ms] = await Promise.all([x.data(), m.data()]);
  return select(x, xs, m, ms, kb, kbase);
}

function indicesOf(x: Tensor, xs: TypedArray): Tensor {
  const shape = x.shape;
  const r = shape.length;
  const hits: number[] = [];
  for (let i = 0; i < xs.length; i++) if (xs[i] !== 0) hits.push(i);
  const out = new Int32Array(hits.length * r);
  hits.forEach((flat, k) => {
    let rem = flat;
    for (let d = r - 1; d >= 0; d--) {
      const n = shape[d]!;
      out[k * r + d] = rem % n;
      rem = Math.floor(rem / n);
    }
  });
  return fromTypedArray(out, [hits.length, r], { batchDim: 1, copy: false });
}

/**
 * The indices of the non-zero (true) elements of `x` (PyTorch's `nonzero`,
 * NumPy's `argwhere`): an int32 `(n; rank)` tensor, one row per element in
 * row-major order, over the full shape (batch dims first, then base). NaN is
 * non-zero, -0 is zero. Eager only, as `booleanMask`; `nonzeroAsync` reads from
 * any backend.
 *
 * ```ts
 * nonzero(tensor([[0, 3], [NaN, 0]])).toArraySync(); // [[0, 1], [1, 0]]
 * ```
 */
export function nonzero(x: Tensor): Tensor {
  needTensor("nonzero", "x", x);
  checkEager("nonzero", "x", x);
  if (x.rank === 0)
    throw new ShapeError(`nonzero: x ${fmtShape([], [])} has no dims to index (NumPy refuses 0-d input too)`);
  return indicesOf(x, readNow("nonzero", x));
}

/** `nonzero` reading the values from any backend (WebGPU too). */
export async function nonzeroAsync(x: Tensor): Promise<Tensor> {
  needTensor("nonzeroAsync", "x", x);
  checkEager("nonzeroAsync", "x", x);
  if (x.rank === 0)
    throw new ShapeError(`nonzeroAsync: x ${fmtShape([], [])} has no dims to index (NumPy refuses 0-d input too)`);
  return indicesOf(x, await x.data());
}
