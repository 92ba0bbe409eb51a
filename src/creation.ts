/** Creating tensors from data and by shape. */
import { ARRAY_CTOR, castScalar, isDType, type DType, type TypedArray } from "../ir/dtype.js";
import { DTypeError, ShapeError } from "../ir/errors.js";
import { fmtShape, prod } from "../ir/types.js";
import { JsBackend } from "../runtime/js.js";
import { getBackend } from "./backend.js";
import { Tensor, where, type NestedArray } from "./tensor.js";

export interface CreateOptions {
  readonly dtype?: DType;
}

export interface TensorOptions extends CreateOptions {
  /** How many leading dims are batch dims (default 0). */
  readonly batchDim?: number;
}

function checkShape(op: string, shape: readonly number[]): void {
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) throw new ShapeError(`${op}: shape (${shape.join(",")}) has an invalid size ${d}`);
  }
}

function checkDType(op: string, dtype: string): DType {
  if (!isDType(dtype)) throw new DTypeError(`${op}: unknown dtype ${dtype}`);
  return dtype;
}

/** Wraps data already laid out row-major, batch dims first. */
function fromData(dtype: DType, batch: readonly number[], base: readonly number[], data: TypedArray): Tensor {
  const backend = getBackend();
  if (dtype === "float64" && backend.name === "webgpu") {
    throw new DTypeError(`tensor ${fmtShape(batch, base)} is float64, which WebGPU cannot hold (WGSL has no f64): cast to float32 or use the js backend`);
  }
  const buf = backend.alloc(dtype, data.length);
  backend.write(buf, data);
  return Tensor._fromBuffer({ dtype, batch: [...batch], base: [...base] }, buf, backend);
}

function checkBatchDim(op: string, shape: readonly number[], batchDim: number): void {
  if (!Number.isInteger(batchDim) || batchDim < 0 || batchDim > shape.length) {
    throw new ShapeError(`${op}: batchDim ${batchDim} does not fit shape (${shape.join(",")})`);
  }
}

function splitShape(op: string, shape: readonly number[], batchDim: number): [number[], number[]] {
  checkBatchDim(op, shape, batchDim);
  return [shape.slice(0, batchDim), shape.slice(batchDim)];
}

/** The batch shape of tensors without batch dims; shared, never written. */
const NO_DIMS: readonly number[] = Object.freeze([]);

/**
 * A tensor from nested arrays: `tensor([[1, 2, 3], [4, 5, 6]], { batchDim: 1 })`
 * is `(2; 3)`. Booleans give a bool tensor; the default dtype is float32.
 */
export function tensor(data: NestedArray, opts: TensorOptions = {}): Tensor {
  const shape: number[] = [];
  let probe: NestedArray = data;
  while (Array.isArray(probe)) {
    shape.push(probe.length);
    probe = probe[0] as NestedArray;
    if (probe === undefined) break;
  }
  const dtype = checkDType("tensor", opts.dtype ?? (typeof probe === "boolean" ? "bool" : "float32"));
  const flat: number[] = [];
  const walk = (v: NestedArray, d: number): void => {
    if (d === shape.length) {
      if (Array.isArray(v)) throw new ShapeError(`tensor: nested data is ragged: deeper than shape (${shape.join(",")})`);
      flat.push(castScalar(typeof v === "boolean" ? (v ? 1 : 0) : v, dtype));
      return;
    }
    if (!Array.isArray(v) || v.length !== shape[d]) {
      throw new ShapeError(`tensor: nested data is ragged at depth ${d}: expected ${shape[d]} entries, shape (${shape.join(",")})`);
    }
    for (const x of v) walk(x, d + 1);
  };
  walk(data, 0);
  const [batch, base] = splitShape("tensor", shape, opts.batchDim ?? 0);
  return fromData(dtype, batch, base, new ARRAY_CTOR[dtype](flat));
}

function dtypeOfArray(a: TypedArray): DType {
  if (a instanceof Float32Array) return "float32";
  if (a instanceof Float64Array) return "float64";
  if (a instanceof Int32Array) return "int32";
  if (a instanceof Uint32Array) return "uint32";
  return "bool";
}

/**
 * A tensor over a typed array, row-major with batch dims first:
 * `fromTypedArray(xyz, [B, N, 3], { batchDim: 1 })` is `(B; N,3)`.
 * The dtype follows the array type (Uint8Array is bool). The data is copied,
 * unless `copy: false` on the JS backend, where the tensor then reads the
 * caller's array directly (the caller must not change it while the tensor lives).
 */
export function fromTypedArray(data: TypedArray, shape: readonly number[], opts: TensorOptions & { copy?: boolean } = {}): Tensor {
  checkShape("fromTypedArray", shape);
  const dtype = opts.dtype ?? dtypeOfArray(data);
  if (prod(shape) !== data.length) {
    throw new ShapeError(`fromTypedArray: ${data.length} values do not fill shape (${shape.join(",")})`);
  }
  const batchDim = opts.batchDim ?? 0;
  checkBatchDim("fromTypedArray", shape, batchDim);
  const same = data instanceof ARRAY_CTOR[dtype];
  const backend = getBackend();
  if (opts.copy === false && same && backend instanceof JsBackend) {
    // Lean on purpose: wrapping a list of a thousand arrays should make little garbage.
    const batch = batchDim === 0 ? NO_DIMS : shape.slice(0, batchDim);
    return Tensor._fromBuffer({ dtype, batch, base: shape.slice(batchDim) }, backend.wrap(dtype, data), backend);
  }
  return fromData(dtype, shape.slice(0, batchDim), shape.slice(batchDim), same ? data : new ARRAY_CTOR[dtype](data));
}

/** A tensor of `value` with the given batch and base shapes: `full([B], [3, 3], 0.5)` is `(B; 3,3)`. */
export function full(batchShape: readonly number[], baseShape: readonly number[], value: number, opts: CreateOptions = {}): Tensor {
  checkShape("full", batchShape);
  checkShape("full", baseShape);
  const dtype = checkDType("full", opts.dtype ?? "float32");
  const arr = new ARRAY_CTOR[dtype](prod(batchShape) * prod(baseShape));
  arr.fill(castScalar(value, dtype));
  return fromData(dtype, batchShape, baseShape, arr);
}

export function zeros(batchShape: readonly number[], baseShape: readonly number[], opts: CreateOptions = {}): Tensor {
  return full(batchShape, baseShape, 0, opts);
}

export function ones(batchShape: readonly number[], baseShape: readonly number[], opts: CreateOptions = {}): Tensor {
  return full(batchShape, baseShape, 1, opts);
}

/** Uninitialised in spirit; zero-filled in practice (typed arrays always are). */
export function empty(batchShape: readonly number[], baseShape: readonly number[], opts: CreateOptions = {}): Tensor {
  return full(batchShape, baseShape, 0, opts);
}

/**
 * `arange(stop)`, `arange(start, stop, step?)`: a base vector `(;n)`. Float32
 * unless `dtype` says otherwise. A zero step is an error; a step of the wrong
 * sign gives no elements (Open3D).
 */
export function arange(start: number, stop?: number, step = 1, opts: CreateOptions = {}): Tensor {
  if (stop === undefined) [start, stop] = [0, start];
  if (step === 0) throw new ShapeError("arange: step cannot be 0");
  const n = Math.max(0, Math.ceil((stop - start) / step));
  const dtype = checkDType("arange", opts.dtype ?? "float32");
  const arr = new ARRAY_CTOR[dtype](n);
  for (let i = 0; i < n; i++) arr[i] = castScalar(start + i * step, dtype);
  return fromData(dtype, [], [n], arr);
}

/** The identity matrix `(;n,n)`, or `(batchShape; n,n)` copies of it. */
export function eye(n: number, opts: CreateOptions & { batchShape?: readonly number[] } = {}): Tensor {
  checkShape("eye", [n]);
  const batch = opts.batchShape ?? [];
  checkShape("eye", batch);
  const dtype = checkDType("eye", opts.dtype ?? "float32");
  const arr = new ARRAY_CTOR[dtype](prod(batch) * n * n);
  for (let b = 0; b < prod(batch); b++) for (let i = 0; i < n; i++) arr[b * n * n + i * n + i] = 1;
  return fromData(dtype, batch, [n, n], arr);
}

/** A scalar `(;)` tensor. */
export function scalar(value: number, opts: CreateOptions = {}): Tensor {
  return full([], [], value, opts);
}

/**
 * NumPy's `diag` on the base: a vector base `(n)` gives the diagonal matrix
 * `(n, n)` (zeros elsewhere, whatever the values: NaN stays on the diagonal), a
 * matrix base `(m, n)` gives its diagonal `(min(m, n))`. Batch dims pass through.
 * ```ts
 * diag(tensor([[1, 2], [3, 4]], { batchDim: 1 })); // (2; 2,2): [[1,0],[0,2]] and [[3,0],[0,4]]
 * ```
 */
export function diag(x: Tensor): Tensor {
  const base = x.baseShape;
  if (base.length === 1) {
    const n = base[0]!;
    return where(eye(n, { dtype: "bool" }), x.reshape([n, 1]), 0);
  }
  if (base.length === 2) {
    const [m, n] = base as [number, number];
    const k = Math.min(m, n);
    if (k === 0) return x.reshape([m * n]).slice(0, 0, 0);
    return x.reshape([m * n]).slice(0, 0, (k - 1) * (n + 1) + 1, n + 1);
  }
  throw new ShapeError(`diag: x ${x.toString()} must have a base of rank 1 or 2`);
}