/** Creating tensors from data and by shape. */
import { ARRAY_CTOR, castScalar, DTYPES, promote, type DType, type TypedArray } from "../ir/dtype.js";
import { BackendError, DTypeError, ShapeError } from "../ir/errors.js";
import { checkElementCount } from "../ir/shapes.js";
import { fmtShape, prod } from "../ir/types.js";
import {
  checkDType,
  checkFinite,
  checkInt,
  checkOptions,
  checkSizes,
  describe,
  fitsDType,
  typedArrayName,
} from "./check.js";
import { getBackend } from "./backend.js";
import { Tensor, where, type NestedArray } from "./tensor.js";

/** Options of the tensor constructors. */
export interface CreateOptions {
  /** The element type (default float32; `tensor` of booleans gives bool). */
  readonly dtype?: DType;
}

/** Options of `tensor` and `fromTypedArray`. */
export interface TensorOptions extends CreateOptions {
  /** How many leading dims are batch dims (default 0). */
  readonly batchDim?: number;
}

/** The deepest nesting `tensor` accepts (NumPy allows 64 dims). */
export const MAX_NESTING = 64;

/** A shape argument of a creation function: sizes, and an element count within the limit. */
function checkShape(op: string, name: string, shape: unknown): readonly number[] {
  return checkSizes(op, name, shape, 0);
}

/** Wraps data already laid out row-major, batch dims first. */
function fromData(dtype: DType, batch: readonly number[], base: readonly number[], data: TypedArray): Tensor {
  const backend = getBackend();
  if (!backend.dtypes.includes(dtype)) {
    throw new DTypeError(
      `tensor ${fmtShape(batch, base)} is ${dtype}, which ${backend.displayName} cannot hold${dtype === "float64" && backend.shippedKernel === "wgsl" ? " (WGSL has no f64)" : dtype === "float16" ? ' (float16 needs a WebGPU device with "shader-f16")' : ""}: cast to float32${dtype === "float16" ? "" : " or use the js backend"}`,
    );
  }
  const buf = backend.alloc(dtype, data.length);
  backend.write(buf, data);
  return Tensor._fromBuffer({ dtype, batch: [...batch], base: [...base] }, buf, backend);
}

/** A zero-filled array of `n` elements; an allocation the engine refuses is a BackendError, not a RangeError. */
function allocate(op: string, dtype: DType, n: number, batch: readonly number[], base: readonly number[]): TypedArray {
  try {
    return new ARRAY_CTOR[dtype](n);
  } catch (e) {
    if (e instanceof RangeError)
      throw new BackendError(
        `${op}: cannot allocate ${n} ${dtype} elements for ${fmtShape(batch, base)}: ${e.message}`,
      );
    throw e;
  }
}

function checkBatchDim(op: string, shape: readonly number[], batchDim: unknown): number {
  if (typeof batchDim !== "number" || !Number.isInteger(batchDim) || batchDim < 0 || batchDim > shape.length) {
    throw new ShapeError(`${op}: batchDim ${describe(batchDim)} does not fit shape (${shape.join(",")})`);
  }
  return batchDim;
}

/** The batch shape of tensors without batch dims; shared, never written. */
const NO_DIMS: readonly number[] = Object.freeze([]);

/** `data[1][0]`: where a nested value sits, for messages. */
function pathOf(path: readonly number[], depth = path.length): string {
  let s = "data";
  for (let i = 0; i < depth; i++) s += `[${path[i]}]`;
  return s;
}

/**
 * A tensor from nested arrays: `tensor([[1, 2, 3], [4, 5, 6]], { batchDim: 1 })`
 * is `(2; 3)`. The leaves must be numbers or booleans, the nesting regular (every
 * list at one depth has the same length) and at most 64 deep; anything else (a
 * string, null, a hole, a cycle) is an error naming where it is. All-boolean
 * data gives a bool tensor; the default dtype is otherwise float32. Integer dtypes
 * refuse values they cannot hold (NaN, ±Infinity, out of range), as NumPy 2 does.
 * A typed array gives a 1-D tensor of its own dtype, as `fromTypedArray` (a
 * Uint8Array is uint8, an Int16Array int16, …).
 *
 * @example
 * ```ts
 * const x = tensor([[1, 2, 3], [4, 5, 6]], { batchDim: 1 }); // two vectors of 3
 * x.toString(); // "(2; 3)"
 * tensor([1, 2], { dtype: "int32" }).mul(2).toArraySync(); // [2, 4]
 * ```
 */
export function tensor(data: NestedArray | TypedArray, opts: TensorOptions = {}): Tensor {
  const o = checkOptions("tensor", opts);
  // A typed array is a 1-D tensor of its own dtype (as fromTypedArray).
  if (ArrayBuffer.isView(data) && typedArrayName(data) !== undefined) {
    const d = data as TypedArray;
    return fromTypedArray(d, [d.length], o);
  }
  // The shape is read off the first element at each depth; a cycle there would never end.
  const shape: number[] = [];
  const firstPath: number[] = [];
  const chain: unknown[] = [];
  let probe: unknown = data;
  while (Array.isArray(probe)) {
    if (chain.includes(probe))
      throw new ShapeError(`tensor: ${pathOf(firstPath)} is an array that contains itself (cyclic nesting)`);
    if (shape.length === MAX_NESTING) throw new ShapeError(`tensor: data is nested deeper than ${MAX_NESTING} levels`);
    chain.push(probe);
    shape.push(probe.length);
    if (probe.length === 0) break;
    probe = probe[0];
    firstPath.push(0);
  }
  let dtype: DType | undefined = o.dtype === undefined ? undefined : checkDType("tensor", o.dtype);
  const n = prod(shape);
  checkElementCount("tensor", { batch: [], base: shape }, "data");
  const flat: number[] = new Array<number>(n);
  let k = 0;
  let allBool = true;
  const path: number[] = [];
  const walk = (v: unknown, d: number): void => {
    if (d === shape.length) {
      if (typeof v === "number") {
        allBool = false;
        if (dtype !== undefined && !fitsDType(v, dtype)) {
          throw new DTypeError(
            `tensor: ${pathOf(path)} is ${v}, which ${dtype} cannot hold (integer dtypes take finite values in range)`,
          );
        }
        flat[k++] = v;
      } else if (typeof v === "boolean") flat[k++] = v ? 1 : 0;
      else {
        const what = Array.isArray(v)
          ? `an array, deeper than the shape (${shape.join(",")}) read off the first elements (ragged nesting)`
          : v === undefined
            ? "undefined (a hole or a missing element)"
            : typedArrayName(v) !== undefined
              ? `${describe(v)} (typed arrays go to fromTypedArray)`
              : describe(v);
        throw new (Array.isArray(v) ? ShapeError : DTypeError)(
          `tensor: ${pathOf(path)} is ${what}; entries must be numbers or booleans`,
        );
      }
      return;
    }
    if (!Array.isArray(v)) {
      throw new ShapeError(
        `tensor: ${pathOf(path)} is ${describe(v)}, but the data has shape (${shape.join(",")}) read off the first elements, so it must be a list of ${shape[d]} (ragged nesting)`,
      );
    }
    if (v.length !== shape[d]) {
      throw new ShapeError(
        `tensor: ${pathOf(path)} has ${v.length} entries, but the data has shape (${shape.join(",")}) read off the first elements, so it must have ${shape[d]} (ragged nesting)`,
      );
    }
    for (let i = 0; i < v.length; i++) {
      path[d] = i;
      walk(v[i], d + 1);
    }
    path.length = d;
  };
  walk(data, 0);
  dtype ??= allBool && n > 0 ? "bool" : "float32";
  const arr = allocate("tensor", dtype, n, [], shape);
  if (dtype === "bool") for (let i = 0; i < n; i++) arr[i] = flat[i]! !== 0 ? 1 : 0;
  else arr.set(flat);
  const batchDim = checkBatchDim("tensor", shape, o.batchDim ?? 0);
  return fromData(dtype, shape.slice(0, batchDim), shape.slice(batchDim), arr);
}

/**
 * The dtype each accepted typed array type holds, by the array's name: each holds its own
 * dtype, as NumPy's frombuffer (Float32Array float32, …, Uint8Array uint8, Int16Array int16).
 */
const DTYPE_OF_ARRAY: Readonly<Record<string, DType>> = Object.fromEntries(
  DTYPES.filter((d) => d !== "bool" && d !== "float16").map((d) => [ARRAY_CTOR[d].name, d]),
);

/**
 * The dtype of an accepted typed array, or a DTypeError naming the array type:
 * batchwise never guesses what a Uint8ClampedArray, a BigInt64Array or a Float16Array should become.
 */
function dtypeOfArray(op: string, a: unknown): DType {
  if (a instanceof Float32Array) return "float32";
  const name = typedArrayName(a);
  const d = name === undefined ? undefined : DTYPE_OF_ARRAY[name];
  if (d !== undefined) return d;
  throw new DTypeError(
    `${op}: data is ${describe(a)}; accepted are ${Object.entries(DTYPE_OF_ARRAY)
      .map(([n, t]) => `${n} (${t})`)
      .join(", ")}` +
      (name !== undefined
        ? `: convert first, e.g. Float32Array.from(data)`
        : ArrayBuffer.isView(a) || /^\[object (Shared)?ArrayBuffer\]$/.test(Object.prototype.toString.call(a))
          ? ": raw bytes have no element type: view them as the one they hold, e.g. new Float32Array(buffer, byteOffset, length) (a byteOffset that is a multiple of 4), or read a .npy file with loadNpy"
          : ""),
  );
}

/**
 * A tensor over a typed array, row-major with batch dims first:
 * `fromTypedArray(xyz, [B, N, 3], { batchDim: 1 })` is `(B; N,3)`.
 * The dtype follows the array type: Float32Array, Float64Array, Int32Array,
 * Uint32Array, Uint8Array, Int8Array, Uint16Array and Int16Array hold float32,
 * float64, int32, uint32, uint8, int8, uint16 and int16 (as NumPy's `frombuffer`).
 * A bool tensor's `dataSync()` is a Uint8Array of 0/1: read it back with
 * `{ dtype: "bool" }`. Other typed arrays are refused (DTypeError). `dtype`
 * converts as `cast` does (to bool is `x != 0`; to an integer dtype truncates and
 * wraps). The data is copied, unless `copy: false` on the JS backend with no
 * conversion, where the tensor then reads the caller's array directly (the caller
 * must not change it while the tensor lives). Any view works: a `subarray`, an
 * array over part of a larger or a `SharedArrayBuffer`, a Node `Buffer` (uint8);
 * only its own elements are read. A `DataView` or an `ArrayBuffer` has no element
 * type and is refused: view it as the typed array it holds.
 */
export function fromTypedArray(
  data: TypedArray,
  shape: readonly number[],
  opts: TensorOptions & { copy?: boolean } = {},
): Tensor {
  const from = dtypeOfArray("fromTypedArray", data);
  // A subclass (a Node Buffer is a Uint8Array) becomes a plain array over the same elements:
  // a Buffer's `slice` does not copy, so a tensor wrapping one would hand out views of the
  // caller's memory (and of the rest of Node's pool) where `dataSync()` promises a copy.
  if (data.constructor !== ARRAY_CTOR[from]) data = new ARRAY_CTOR[from](data.buffer, data.byteOffset, data.length);
  shape = checkShape("fromTypedArray", "shape", shape);
  const o = checkOptions("fromTypedArray", opts);
  const dtype = o.dtype === undefined ? from : checkDType("fromTypedArray", o.dtype);
  if (prod(shape) !== data.length) {
    throw new ShapeError(`fromTypedArray: ${data.length} values do not fill shape (${shape.join(",")})`);
  }
  const batchDim = checkBatchDim("fromTypedArray", shape, o.batchDim ?? 0);
  // A Uint8Array of 0/1 (a bool tensor's storage) is read as bool without a copy; other values become x != 0.
  let same = from === dtype || (dtype === "bool" && from === "uint8");
  if (same && dtype === "bool") {
    for (let i = 0; i < data.length; i++) {
      if (data[i]! > 1) {
        same = false;
        break;
      }
    }
  }
  const backend = getBackend();
  if (o.copy === false && same && backend.wrap !== undefined) {
    // Lean on purpose: wrapping a list of a thousand arrays should make little garbage.
    const batch = batchDim === 0 ? NO_DIMS : shape.slice(0, batchDim);
    return Tensor._fromBuffer({ dtype, batch, base: shape.slice(batchDim) }, backend.wrap(dtype, data), backend);
  }
  let values: TypedArray;
  // A device backend gets shared memory copied out first: WebGPU's writeBuffer (Dawn in Node) takes no SharedArrayBuffer.
  if (same) values = !backend.hostMemory && isShared(data.buffer) ? data.slice() : data;
  else if (dtype === "bool") {
    values = new Uint8Array(data.length);
    for (let i = 0; i < data.length; i++) values[i] = data[i]! !== 0 ? 1 : 0;
  } else if (dtype === "float16") {
    // Held in a Float32Array, each value rounded to float16 (as `cast`).
    values = new ARRAY_CTOR[dtype](data.length);
    for (let i = 0; i < data.length; i++) values[i] = castScalar(data[i]!, dtype);
  } else values = new ARRAY_CTOR[dtype](data);
  return fromData(dtype, shape.slice(0, batchDim), shape.slice(batchDim), values);
}

/** Whether `b` is a SharedArrayBuffer (by its tag: one from another realm too; false where there are none). */
function isShared(b: ArrayBufferLike): boolean {
  return Object.prototype.toString.call(b) === "[object SharedArrayBuffer]";
}

/** A fill value: a number (or boolean) that `dtype` can hold. */
function checkFill(op: string, value: unknown, dtype: DType): number {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value !== "number") throw new DTypeError(`${op}: value must be a number, got ${describe(value)}`);
  if (!fitsDType(value, dtype))
    throw new DTypeError(`${op}: value ${value} does not fit ${dtype} (integer dtypes hold finite values in range)`);
  return value;
}

function fill(
  op: string,
  batchShape: readonly number[],
  baseShape: readonly number[],
  value: unknown,
  opts: CreateOptions | undefined,
): Tensor {
  batchShape = checkShape(op, "batchShape", batchShape);
  baseShape = checkShape(op, "baseShape", baseShape);
  const dtype = checkDType(op, checkOptions(op, opts).dtype ?? "float32");
  const v = checkFill(op, value, dtype);
  checkElementCount(op, { batch: batchShape, base: baseShape });
  const arr = allocate(op, dtype, prod(batchShape) * prod(baseShape), batchShape, baseShape);
  if (v !== 0) arr.fill(castScalar(v, dtype));
  return fromData(dtype, batchShape, baseShape, arr);
}

/** A tensor of `value` with the given batch and base shapes: `full([B], [3, 3], 0.5)` is `(B; 3,3)`. */
export function full(
  batchShape: readonly number[],
  baseShape: readonly number[],
  value: number,
  opts: CreateOptions = {},
): Tensor {
  return fill("full", batchShape, baseShape, value, opts);
}

/** A tensor of zeros: `zeros([B], [3])` is `(B; 3)`. */
export function zeros(batchShape: readonly number[], baseShape: readonly number[], opts: CreateOptions = {}): Tensor {
  return fill("zeros", batchShape, baseShape, 0, opts);
}

/** A tensor of ones: `ones([B], [3])` is `(B; 3)`. */
export function ones(batchShape: readonly number[], baseShape: readonly number[], opts: CreateOptions = {}): Tensor {
  return fill("ones", batchShape, baseShape, 1, opts);
}

/** Uninitialised in spirit; zero-filled in practice (typed arrays always are). */
export function empty(batchShape: readonly number[], baseShape: readonly number[], opts: CreateOptions = {}): Tensor {
  return fill("empty", batchShape, baseShape, 0, opts);
}

/**
 * `arange(stop)`, `arange(start, stop, step?)`: a base vector `(;n)`. Float32
 * unless `dtype` says otherwise. Bounds and step must be finite; a zero step is
 * an error; a step of the wrong sign gives no elements (Open3D).
 */
export function arange(start: number, stop?: number, step = 1, opts: CreateOptions = {}): Tensor {
  checkFinite("arange", "start", start);
  if (stop === undefined) [start, stop] = [0, start];
  else checkFinite("arange", "stop", stop);
  checkFinite("arange", "step", step);
  if (step === 0) throw new ShapeError("arange: step cannot be 0");
  const dtype = checkDType("arange", checkOptions("arange", opts).dtype ?? "float32");
  const n = Math.max(0, Math.ceil((stop - start) / step));
  checkElementCount("arange", { batch: [], base: [n] });
  const last = start + (n - 1) * step;
  if (n > 0 && (!fitsDType(start, dtype) || !fitsDType(last, dtype))) {
    throw new DTypeError(`arange: the values ${start} … ${last} do not fit ${dtype}`);
  }
  const arr = allocate("arange", dtype, n, [], [n]);
  for (let i = 0; i < n; i++) arr[i] = castScalar(start + i * step, dtype);
  return fromData(dtype, [], [n], arr);
}

/** The identity matrix `(;n,n)`, or `(batchShape; n,n)` copies of it. */
export function eye(n: number, opts: CreateOptions & { batchShape?: readonly number[] } = {}): Tensor {
  checkInt("eye", "n", n, 0);
  const o = checkOptions("eye", opts);
  const batch = checkShape("eye", "batchShape", o.batchShape ?? []);
  const dtype = checkDType("eye", o.dtype ?? "float32");
  checkElementCount("eye", { batch, base: [n, n] });
  const arr = allocate("eye", dtype, prod(batch) * n * n, batch, [n, n]);
  for (let b = 0; b < prod(batch); b++) for (let i = 0; i < n; i++) arr[b * n * n + i * n + i] = 1;
  return fromData(dtype, batch, [n, n], arr);
}

/** A scalar `(;)` tensor. */
export function scalar(value: number, opts: CreateOptions = {}): Tensor {
  return fill("scalar", [], [], value, opts);
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
  if (!(x instanceof Tensor)) throw new DTypeError(`diag: x must be a Tensor, got ${describe(x)}`);
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

// --- api: linspace/logspace on plain tensors (typed tensors are rewrapped) ---

/** A typed tensor (NEML2's primitive types wrap their Tensor in `t`), as `linspace` and `logspace` take them. */
export interface TypedLike {
  /** The underlying `(batch; base)` tensor. */
  readonly t: Tensor;
}

function isTypedLike(x: unknown): x is TypedLike {
  return typeof x === "object" && x !== null && !(x instanceof Tensor) && (x as { t?: unknown }).t instanceof Tensor;
}

/** The Tensors of linspace's endpoints (numbers are weak: they take the tensor's float dtype), in one float dtype. */
function endpoints(op: string, start: unknown, end: unknown, nstep: unknown): [Tensor, Tensor] {
  const check = (name: string, v: unknown): void => {
    if (typeof v !== "number" && !(v instanceof Tensor))
      throw new DTypeError(`${op}: ${name} must be a Tensor, a typed tensor or a number, got ${describe(v)}`);
  };
  check("start", start);
  check("end", end);
  if (typeof nstep !== "number" || !Number.isInteger(nstep) || nstep < 0)
    throw new ShapeError(`${op}: nstep must be an integer >= 0, got ${describe(nstep)}`);
  const tensors = [start, end].filter((v): v is Tensor => v instanceof Tensor);
  let dt: DType = tensors.length === 0 ? "float32" : tensors.map((t) => t.dtype).reduce(promote);
  if (dt !== "float32" && dt !== "float64") dt = "float32";
  const of = (v: Tensor | number): Tensor => (typeof v === "number" ? Tensor._const(v, dt) : v.cast(dt));
  return [of(start as Tensor | number), of(end as Tensor | number)];
}

/**
 * The endpoints of `op` (see `endpoints`) and its new dim of the steps among
 * their broadcast `kind` dims (`rank` of them): `dim` normalized to `d`, and the
 * `shape` of the steps that broadcasts along it (`nstep` then a 1 for each dim after it).
 */
function stepsDim(
  op: string,
  kind: "batch" | "base",
  start: unknown,
  end: unknown,
  nstep: number,
  dim: number,
): { s0: Tensor; e0: Tensor; rank: number; d: number; shape: number[] } {
  const [s0, e0] = endpoints(op, start, end, nstep);
  checkInt(op, "dim", dim);
  const rank = kind === "batch" ? Math.max(s0.batchDim, e0.batchDim) : Math.max(s0.baseDim, e0.baseDim);
  const d = dim < 0 ? dim + rank + 1 : dim;
  if (d < 0 || d > rank)
    throw new ShapeError(
      `${op}: dim ${dim} is out of range for a new ${kind} dim of start ${s0.toString()} and end ${e0.toString()} (${kind} rank ${rank})`,
    );
  checkElementCount(op, kind === "batch" ? { batch: [nstep], base: [] } : { batch: [], base: [nstep] }, "the steps");
  return { s0, e0, rank, d, shape: [nstep, ...Array<number>(rank - d).fill(1)] };
}

/**
 * `start + (end - start)·k/(nstep-1)` for k = 0…nstep-1 along a new dim, the last
 * step exactly `end` and one step exactly `start` (NumPy's endpoints). `steps`
 * holds k/(nstep-1) and `last` is true at k = nstep-1, both shaped to broadcast
 * along the new dim.
 */
function spaced(s: Tensor, e: Tensor, nstep: number, shape: readonly number[], batchDim: number): Tensor {
  const f = new Float64Array(nstep).map((_, k) => (nstep === 1 ? 0 : k / (nstep - 1)));
  const last = new Uint8Array(nstep);
  if (nstep > 1) last[nstep - 1] = 1;
  const steps = fromTypedArray(f, shape, { batchDim, dtype: s.dtype });
  const lastMask = fromTypedArray(last, shape, { batchDim, dtype: "bool" });
  // nstep = 1 gives start broadcast against end (NEML2), not start + 0·(end - start), which is NaN for infinite ends.
  if (nstep === 1) return where(lastMask, e, s);
  return where(lastMask, e, s.add(e.sub(s).mul(steps)));
}

function rewrapTyped<T>(like: unknown, t: Tensor): T {
  return new ((like as object).constructor as new (t: Tensor) => T)(t);
}

function checkLogBase(op: string, base: unknown): number {
  if (typeof base !== "number" || !(base > 0) || base === Infinity)
    throw new DTypeError(`${op}: base must be a positive finite number, got ${describe(base)}`);
  return base;
}

/**
 * `nstep` evenly spaced values from `start` to `end` along a new **batch** dim
 * `dim` of the broadcast batch (NEML2's `linspace`/`dynamic_linspace`): start
 * `(5,3,1,2; 6)` and end `(;6)` with nstep 101 and dim 2 give `(5,3,101,1,2; 6)`.
 * Starts and ends are tensors (batched, any base; they broadcast) or numbers;
 * integers compute in float32. The first value is `start` and the last is exactly
 * `end` (NumPy); `nstep = 1` gives `start`, `nstep = 0` an empty dim. Typed tensors
 * (R2, Scalar, …) give their own type. Works inside `jit`. `baseLinspace` puts the
 * new dim in the base instead.
 *
 * ```ts
 * linspace(tensor([0, 10], { batchDim: 1 }), 1, 3, 1).toArraySync(); // (2,3;): [[0, 0.5, 1], [10, 5.5, 1]]
 * ```
 */
export function linspace<T extends TypedLike>(start: T, end: T, nstep: number, dim?: number): T;
export function linspace(start: Tensor | number, end: Tensor | number, nstep: number, dim?: number): Tensor;
export function linspace(start: unknown, end: unknown, nstep: number, dim = 0): unknown {
  const op = "linspace";
  if (isTypedLike(start) || isTypedLike(end)) {
    // Typed tensors: NEML2's rules (typed start and end of one type, nstep >= 1), checked in this order.
    if (!isTypedLike(start)) throw new DTypeError(`${op}: start must be a typed tensor, got ${describe(start)}`);
    checkInt(op, "dim", dim);
    if (!isTypedLike(end)) throw new DTypeError(`${op}: end must be a typed tensor, got ${describe(end)}`);
    if (start.constructor !== end.constructor)
      throw new DTypeError(
        `${op}: start and end must be typed tensors of one type, got ${describe(start)} and ${describe(end)}`,
      );
    if (!Number.isInteger(nstep) || nstep < 1)
      throw new ShapeError(`${op}: nstep ${describe(nstep)} must be a positive integer`);
    return rewrapTyped(start, linspace(start.t, end.t, nstep, dim));
  }
  const { s0, e0, rank, d, shape } = stepsDim(op, "batch", start, end, nstep, dim);
  const toRank = (t: Tensor): Tensor => {
    let x = t;
    while (x.batchDim < rank) x = x.batchUnsqueeze(0);
    return x.batchUnsqueeze(d);
  };
  return spaced(toRank(s0), toRank(e0), nstep, shape, shape.length);
}

/**
 * `linspace` with the new dim in the **base** (NEML2's `base_linspace`): at base
 * axis `dim` of the broadcast base, batch dims broadcast as usual. Start `(B; 3)`
 * and end `(;3)` with nstep 5 give `(B; 5,3)`; numbers give `(;nstep)`.
 *
 * ```ts
 * baseLinspace(0, 1, 5).toArraySync(); // [0, 0.25, 0.5, 0.75, 1]
 * ```
 */
export function baseLinspace(start: Tensor | number, end: Tensor | number, nstep: number, dim = 0): Tensor {
  const op = "baseLinspace";
  const { s0, e0, rank, d, shape } = stepsDim(op, "base", start, end, nstep, dim);
  const toRank = (t: Tensor): Tensor =>
    t.reshape([...Array<number>(rank - t.baseDim).fill(1), ...t.baseShape]).unsqueeze(d);
  return spaced(toRank(s0), toRank(e0), nstep, shape, 0);
}

/**
 * `base ** linspace(start, end, nstep, dim)` (NumPy's and NEML2's `logspace`,
 * base 10 by default): the new dim is a batch dim; typed tensors keep their type.
 */
export function logspace<T extends TypedLike>(start: T, end: T, nstep: number, dim?: number, base?: number): T;
export function logspace(
  start: Tensor | number,
  end: Tensor | number,
  nstep: number,
  dim?: number,
  base?: number,
): Tensor;
export function logspace(start: unknown, end: unknown, nstep: number, dim = 0, base = 10): unknown {
  const b = checkLogBase("logspace", base);
  if (isTypedLike(start) || isTypedLike(end)) {
    const l = linspace(start as TypedLike, end as TypedLike, nstep, dim);
    return rewrapTyped(start, powOf(b, l.t));
  }
  return powOf(b, linspace(start as Tensor | number, end as Tensor | number, nstep, dim));
}

/** `base ** baseLinspace(start, end, nstep, dim)`: the new dim is a base dim. */
export function baseLogspace(start: Tensor | number, end: Tensor | number, nstep: number, dim = 0, base = 10): Tensor {
  return powOf(checkLogBase("baseLogspace", base), baseLinspace(start, end, nstep, dim));
}

/** `base ** x` elementwise, in x's dtype. */
function powOf(base: number, x: Tensor): Tensor {
  return Tensor._const(base, x.dtype).pow(x);
}
