/**
 * Tensor: a lazily evaluated array whose shape is split into batch and base
 * dims, `(batch; base)` (docs/ARCHITECTURE.md, Shapes and types). Every op records a node; nothing runs
 * until a value is read, and then the whole pending graph is compiled (cached by
 * structure, not by batch size) and run.
 */
import { ARRAY_CTOR, promote, promoteWithNumber, castScalar, type DType, type TypedArray } from "../ir/dtype.js";
import { BackendError, DTypeError, ShapeError } from "../ir/errors.js";
import { OPS, type Attrs, type Op } from "../ir/ops.js";
import type { AttrsArg } from "../ir/graph.js";
import { fmtShape, prod, type Dim, type TensorType } from "../ir/types.js";
import type { Backend, BackendName, DeviceBuffer } from "../runtime/backend.js";
import { asCalled, checkDType, describe, fitsDType } from "./check.js";
import { resolveBackend } from "./backend.js";
import { readTensor, readTensorSync, realize } from "./realize.js";
import {
  defineInspect,
  formatOptions,
  formatTensor,
  inspectTensor,
  printTensor,
  type FormatOptions,
} from "./format.js";

/** Where a tensor's value comes from. */
export type TensorSource =
  | {
      readonly kind: "buffer";
      readonly buffer: DeviceBuffer;
      readonly backend: Backend;
      /** Set once the tensor's reference to a device buffer was given back (dispose or collection). */
      released?: boolean;
    }
  | { readonly kind: "disposed" }
  | { readonly kind: "lazy"; readonly op: Op; readonly inputs: readonly Tensor[]; readonly attrs: Attrs }
  | { readonly kind: "param"; readonly traceId: number; readonly index: number };

/** Nested JavaScript arrays of numbers or booleans (one level per dim), or a single value: what `tensor` takes and `toArray` gives. */
export type NestedArray = number | boolean | NestedArray[];

/** Options of the reductions (`sum`, `batchMean`, …). */
export interface ReduceOptions {
  /** Keep reduced dims with size 1 (default false). */
  readonly keepdim?: boolean;
}

/** @internal A base or batch axis, negative counting from the end, or a ShapeError naming it. */
export function normAxis(op: string, axis: number, rank: number, what: "batch" | "base", t: Tensor): number {
  if (typeof axis !== "number" || !Number.isInteger(axis)) {
    throw new ShapeError(`${op}: ${what} axis must be an integer, got ${describe(axis)} for x ${t.toString()}`);
  }
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    throw new ShapeError(`${op}: ${what} axis ${axis} is out of range for x ${t.toString()}`);
  }
  return a;
}

/**
 * A JS number operand as a constant of `dtype` (the dtype it computes in). An
 * integer dtype must hold it: 2**40 or -1 meeting an int32 or uint32 tensor is
 * an error (as in NumPy 2), not a silently wrapped constant.
 */
/** @internal */
export function weakConst(op: string, name: string, v: number, dtype: DType, x: Tensor): Tensor {
  if (!fitsDType(v, dtype)) {
    throw new DTypeError(
      `${op}: ${name} = ${v} does not fit ${dtype}, the dtype ${op} computes in with x ${x.toString()} of dtype ${x.dtype}; cast to a wider dtype first`,
    );
  }
  return Tensor._const(v, dtype);
}

/** A Tensor-or-number operand, or a DTypeError naming it. */
/** @internal */
export function checkOperand(op: string, name: string, v: unknown, x: Tensor): void {
  if (typeof v !== "number" && !(v instanceof Tensor)) {
    throw new DTypeError(`${op}: ${name} must be a Tensor or a number, got ${describe(v)} (x ${x.toString()})`);
  }
}

/**
 * Buffers are shared when a program returns an input unchanged or a view of it,
 * so they are reference counted: a buffer goes back to its backend when the last
 * tensor holding it is disposed or garbage collected.
 */
type BufferRecord = Extract<TensorSource, { kind: "buffer" }>;
/**
 * The held value is the tensor's own source record (it does not reference the tensor).
 * `dispose` marks it released instead of unregistering: unregistering by token costs a
 * lookup in the registry's token table and registering with one an insertion, which
 * showed as a fifth of a 16-element call's profile on wasm; the cell of a disposed tensor
 * just finds its record released when the tensor is collected.
 */
const collected = new FinalizationRegistry<BufferRecord>((src) => {
  if (src.released === true) return;
  src.released = true;
  // Runs during garbage collection: a failure here (say, a destroyed device) must not crash the process.
  try {
    releaseBuffer(src.buffer, src.backend);
  } catch {
    // The buffer is unreachable either way.
  }
});

function retainBuffer(buffer: DeviceBuffer): void {
  buffer.refs = (buffer.refs ?? 0) + 1;
}

function releaseBuffer(buffer: DeviceBuffer, backend: Backend): void {
  const n = (buffer.refs ?? 1) - 1;
  buffer.refs = n;
  if (n <= 0) backend.free(buffer);
}

/**
 * A tensor with a `(batch; base)` shape: leading batch dims (sizes that vary
 * between calls, symbolic inside `jit`) and trailing base dims (static).
 * Operations are lazy: they record a graph that runs, fused, when a value is read
 * (`data`, `dataSync`, `toArray`) or at the end of a `jit` function. Make tensors
 * with `tensor`, `fromTypedArray`, `zeros`, ….
 *
 * @example
 * ```ts
 * const x = tensor([[1, 2], [3, 4]], { batchDim: 1 }); // (2; 2)
 * x.mul(2).sum().toArraySync(); // [6, 14]
 * ```
 */
export class Tensor {
  /** @internal */
  _src: TensorSource;
  /** @internal The IR type: concrete dims, or symbols inside a trace. */
  readonly _type: TensorType;

  /** @internal */
  constructor(type: TensorType, src: TensorSource) {
    this._type = type;
    this._src = src;
  }

  /** @internal Records an op. The type rule runs now, so bad shapes fail at the call. */
  static _op<K extends Op>(op: K, inputs: readonly Tensor[], ...attrs: AttrsArg<K>): Tensor;
  static _op(op: Op, inputs: readonly Tensor[], attrs: Attrs = {}): Tensor {
    const type = OPS[op].type(
      op,
      inputs.map((t) => t._type),
      attrs,
    );
    return new Tensor(type, { kind: "lazy", op, inputs, attrs });
  }

  /** @internal A tensor owning (a reference to) a device buffer. */
  static _fromBuffer(type: TensorType, buffer: DeviceBuffer, backend: Backend): Tensor {
    const src: BufferRecord = { kind: "buffer", buffer, backend };
    const t = new Tensor(type, src);
    // Host buffers are the garbage collector's: nothing to count (this runs per list element in the ragged helpers).
    if (!backend.hostMemory) t._track(src);
    return t;
  }

  /** @internal Makes this (lazy) tensor hold a computed buffer. */
  _adopt(buffer: DeviceBuffer, backend: Backend): void {
    const src: BufferRecord = { kind: "buffer", buffer, backend };
    this._src = src;
    // Host memory is the garbage collector's; device memory is counted and freed by us.
    if (!backend.hostMemory) this._track(src);
  }

  private _track(src: BufferRecord): void {
    retainBuffer(src.buffer);
    collected.register(this, src);
  }

  /**
   * Frees the tensor's device memory now (WebGPU buffers go back to the pool);
   * using the tensor afterwards is an error. Lazy tensors just drop their graph.
   */
  dispose(): void {
    const s = this._src;
    this._src = { kind: "disposed" };
    if (s.kind === "buffer" && !s.backend.hostMemory && s.released !== true) {
      s.released = true;
      releaseBuffer(s.buffer, s.backend);
    }
  }

  /** True once `dispose` has been called. */
  get isDisposed(): boolean {
    return this._src.kind === "disposed";
  }

  /** @internal A scalar constant `(;)`. */
  static _const(value: number, dtype: DType): Tensor {
    return Tensor._op("const", [], { dtype, value: castScalar(value, dtype) });
  }

  /** The element type. */
  get dtype(): DType {
    return this._type.dtype;
  }
  /** Number of leading batch dims. */
  get batchDim(): number {
    return this._type.batch.length;
  }
  /** Number of trailing base dims. */
  get baseDim(): number {
    return this._type.base.length;
  }
  /** Batch sizes; inside `jit` a symbolic size reads as -1 (see `symbolicBatchShape`). */
  get batchShape(): readonly number[] {
    return this._type.batch.map((d) => (typeof d === "number" ? d : -1));
  }
  /** Batch dims as the IR sees them: sizes, or symbols such as `b0` inside `jit`. */
  get symbolicBatchShape(): readonly Dim[] {
    return this._type.batch;
  }
  /** Base sizes (static, also inside `jit`). */
  get baseShape(): readonly number[] {
    return this._type.base;
  }
  /** The full shape, batch dims first. */
  get shape(): readonly number[] {
    return [...this.batchShape, ...this.baseShape];
  }
  /** Number of dims, batch and base. */
  get rank(): number {
    return this.batchDim + this.baseDim;
  }
  /** Number of elements (batch and base sizes multiplied). */
  get size(): number {
    return prod(this.shape);
  }

  /**
   * The shape alone, `(3,100,5; 13,2)` (NEML2's notation), as error messages show a
   * tensor; `format()` gives the dtype, the backend and the values too.
   */
  toString(): string {
    return fmtShape(this._type.batch, this._type.base);
  }

  /**
   * The tensor as text, NumPy-style: dtype, `(batch; base)` shape, backend and values
   * (past `threshold` elements only the ends of each dim, with `…`). A lazy tensor
   * shows that it is lazy and is not computed unless `values: true` (JS and WebAssembly;
   * `print()` anywhere). `console.log(t)` in Node shows the same (`util.inspect`).
   *
   * @example
   * ```ts
   * tensor([[1, 2], [3, 4]], { batchDim: 1 }).format();
   * // Tensor float32 (2; 2) js
   * // [[1., 2.],
   * //  [3., 4.]]
   * ```
   */
  format(opts?: FormatOptions): string {
    return formatTensor(this, formatOptions("format", opts));
  }

  /**
   * Logs `format({ values: true })`: computes a lazy tensor first. On JS and WebAssembly
   * it logs before returning; from WebGPU once the values are read back (await it).
   */
  print(opts?: FormatOptions): Promise<void> {
    return printTensor(this, opts);
  }

  // ---- read-back ----

  /** The values as a typed array (row-major, batch dims first). */
  data(): Promise<TypedArray> {
    return readTensor(this);
  }

  /**
   * Synchronous read-back; JS backend only. A copy, unless `copy: false`, which
   * returns the tensor's own storage (fast; do not modify it).
   */
  dataSync(opts: { copy?: boolean } = {}): TypedArray {
    return readTensorSync(this, opts?.copy ?? true);
  }

  /**
   * A copy of the tensor on another backend: `await t.to("webgpu")`, `await t.to("js")`,
   * or `await t.to(backend)` with a Backend object. A lazy tensor is computed first (on
   * the current backend); a tensor already on `backend` is returned as it is. The values
   * are read back from the source backend and written to the target; the source tensor
   * stays valid. A dtype the target cannot hold (float64 on WebGPU) is a DTypeError, an
   * unknown or uninitialised backend a BackendError.
   */
  async to(backend: Backend | BackendName): Promise<Tensor> {
    const target = resolveBackend("to", backend);
    if (this._src.kind === "buffer" && this._src.backend === target) return this;
    if (!target.dtypes.includes(this.dtype)) {
      throw new DTypeError(
        `to: x ${this.toString()} is ${this.dtype}, which ${target.displayName} cannot hold${target.shippedKernel === "wgsl" && this.dtype === "float64" ? " (WGSL has no f64)" : ""}: cast it first, e.g. x.cast("float32")`,
      );
    }
    await realize(this);
    const s = this._src;
    if (s.kind !== "buffer") throw new BackendError(`to: ${this.toString()} was disposed while it was being computed`);
    if (s.backend === target) return this;
    const read = await s.backend.read(s.buffer);
    const data = read instanceof ARRAY_CTOR[this.dtype] ? read : new ARRAY_CTOR[this.dtype](read);
    const buf = target.alloc(this.dtype, data.length);
    target.write(buf, data);
    return Tensor._fromBuffer(this._type, buf, target);
  }

  /** The values as nested arrays (bool tensors give booleans). */
  async toArray(): Promise<NestedArray> {
    return nest(await this.data(), this.shape, this.dtype === "bool");
  }

  /** Synchronous `toArray`; JS backend only. */
  toArraySync(): NestedArray {
    return nest(this.dataSync(), this.shape, this.dtype === "bool");
  }

  /** The single value of a one-element tensor. */
  itemSync(): number {
    const d = this.dataSync();
    if (d.length !== 1) throw new ShapeError(`item: x ${this.toString()} has ${d.length} elements, not 1`);
    return d[0]!;
  }

  /** Converts to another dtype (float to int truncates toward zero; to bool is `x != 0`). */
  cast(dtype: DType): Tensor {
    return dtype === this.dtype ? this : Tensor._op("cast", [this], { dtype: checkDType("cast", dtype) });
  }
}

// Node's util.inspect (console.log(t)): format(), which computes nothing.
defineInspect(Tensor, inspectTensor);

// --- numerics/random: the integer dtype rule of the bitwise ops; the numerics compositions ---

function nest(data: TypedArray, shape: readonly number[], bool: boolean): NestedArray {
  const conv = (v: number): number | boolean => (bool ? v !== 0 : v);
  if (shape.length === 0) return conv(data[0]!);
  const rec = (off: number, d: number): NestedArray[] => {
    const n = shape[d]!;
    const stride = prod(shape.slice(d + 1));
    const out: NestedArray[] = [];
    for (let i = 0; i < n; i++) out.push(d === shape.length - 1 ? conv(data[off + i]!) : rec(off + i * stride, d + 1));
    return out;
  };
  return rec(0, 0);
}

/** `where(cond, x, y)`: x where cond is true, else y; all three broadcast. */
export function where(cond: Tensor, x: Tensor | number, y: Tensor | number): Tensor {
  if (!(cond instanceof Tensor)) throw new DTypeError(`where: cond must be a Tensor, got ${describe(cond)}`);
  checkOperand("where", "x", x, cond);
  checkOperand("where", "y", y, cond);
  const c = cond.cast("bool");
  let dtype: DType;
  if (typeof x === "number" && typeof y === "number")
    dtype = Number.isInteger(x) && Number.isInteger(y) ? "int32" : "float32";
  else if (typeof x === "number") dtype = promoteWithNumber((y as Tensor).dtype, x);
  else if (typeof y === "number") dtype = promoteWithNumber(x.dtype, y);
  else dtype = promote(x.dtype, y.dtype);
  const xt = typeof x === "number" ? weakConst("where", "x", x, dtype, cond) : x.cast(dtype);
  const yt = typeof y === "number" ? weakConst("where", "y", y, dtype, cond) : y.cast(dtype);
  return Tensor._op("where", [c, xt, yt]);
}

/**
 * Concatenates tensors along a base axis (NEML2's `base_cat`); batch shapes
 * broadcast, base shapes must match elsewhere, dtypes promote:
 * `baseCat([a (B; 2), b (; 1)], 0)` is `(B; 3)`.
 */
export function baseCat(tensors: readonly Tensor[], axis = 0): Tensor {
  checkTensorList("baseCat", tensors);
  const first = tensors[0]!;
  const a = normAxis("baseCat", axis, first.baseDim, "base", first);
  const dtype = tensors.map((t) => t.dtype).reduce(promote);
  return tensors.length === 1
    ? first.cast(dtype)
    : asCalled("baseCat", () =>
        Tensor._op(
          "concat",
          tensors.map((t) => t.cast(dtype)),
          { axis: a },
        ),
      );
}

/**
 * Stacks tensors along a new base axis (NEML2's `base_stack`):
 * three `(B;)` components stacked at axis 0 give a `(B; 3)` vector.
 */
export function baseStack(tensors: readonly Tensor[], axis = 0): Tensor {
  checkTensorList("baseStack", tensors);
  const first = tensors[0]!;
  const a = normAxis("baseStack", axis, first.baseDim + 1, "base", first);
  return baseCat(
    tensors.map((t) => t.unsqueeze(a)),
    a,
  );
}

/** A non-empty array of Tensors. */
function checkTensorList(op: string, tensors: unknown): void {
  if (!Array.isArray(tensors))
    throw new DTypeError(`${op}: tensors must be an array of Tensors, got ${describe(tensors)}`);
  if (tensors.length === 0) throw new ShapeError(`${op}: needs at least one tensor`);
  tensors.forEach((t: unknown, i) => {
    if (!(t instanceof Tensor)) throw new DTypeError(`${op}: tensors[${i}] must be a Tensor, got ${describe(t)}`);
  });
}
