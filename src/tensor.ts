/**
 * Tensor: a lazily evaluated array whose shape is split into batch and base
 * dims, `(batch; base)` (docs/ARCHITECTURE.md, Shapes and types). Every op records a node; nothing runs
 * until a value is read, and then the whole pending graph is compiled (cached by
 * structure, not by batch size) and run.
 */
import {
  ARRAY_CTOR,
  isFloat,
  promote,
  promoteWithNumber,
  castScalar,
  type DType,
  type TypedArray,
} from "../ir/dtype.js";
import { BackendError, DTypeError, ShapeError, TraceError, UnsupportedOpError } from "../ir/errors.js";
import { factsOf, type KBinaryOp, type KUnaryOp } from "../ir/elementwise.js";
import type { KReduceOp } from "../ir/kernel.js";
import { OPS, REDUCE_OPS, type Attrs, type Op } from "../ir/ops.js";
import type { AttrsArg } from "../ir/graph.js";
import { fmtShape, prod, type Dim, type TensorType } from "../ir/types.js";
import type { Backend, DeviceBuffer } from "../runtime/backend.js";
import { checkDType, checkSizes, describe, fitsDType } from "./check.js";
import { resolveBackend } from "./backend.js";
import { readTensor, readTensorSync, realize } from "./realize.js";

/** Where a tensor's value comes from. */
export type TensorSource =
  | { readonly kind: "buffer"; readonly buffer: DeviceBuffer; readonly backend: Backend }
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

function normAxis(op: string, axis: number, rank: number, what: "batch" | "base", t: Tensor): number {
  if (typeof axis !== "number" || !Number.isInteger(axis)) {
    throw new ShapeError(`${op}: ${what} axis must be an integer, got ${describe(axis)} for x ${t.toString()}`);
  }
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    throw new ShapeError(`${op}: ${what} axis ${axis} is out of range for x ${t.toString()}`);
  }
  return a;
}

const NO_AXES: readonly number[] = Object.freeze([]);

/**
 * Axes as the IR takes them: non-negative and in increasing order (negative axes
 * count from the end; the order given does not matter, a repeated axis is an error).
 */
function normAxes(op: string, axes: unknown, rank: number, what: "batch" | "base", t: Tensor): readonly number[] {
  if (axes === undefined) return [...Array(rank).keys()];
  if (typeof axes === "number") return [normAxis(op, axes, rank, what, t)];
  if (!Array.isArray(axes))
    throw new ShapeError(
      `${op}: ${what} axes must be an integer or an array of integers, got ${describe(axes)} for x ${t.toString()}`,
    );
  if (axes.length === 0) return NO_AXES;
  const out = axes.map((a: number) => normAxis(op, a, rank, what, t));
  if (out.length > 1) {
    out.sort((a, b) => a - b);
    for (let i = 1; i < out.length; i++) {
      if (out[i] === out[i - 1])
        throw new ShapeError(
          `${op}: ${what} axis ${out[i]} appears twice in (${axes.join(",")}) for x ${t.toString()}`,
        );
    }
  }
  return out;
}

function keepdimOf(op: string, opts: ReduceOptions | undefined): boolean {
  const k: unknown = opts === undefined || opts === null ? undefined : opts.keepdim;
  if (k === undefined) return false;
  if (typeof k !== "boolean") throw new ShapeError(`${op}: keepdim must be true or false, got ${describe(k)}`);
  return k;
}

/**
 * The Tensor method of every elementwise op of the op-facts table (ir/elementwise.ts), also its
 * name in messages. A mapped type over the op unions: an op without its method fails `tsc`.
 */
const METHOD_OF: { readonly [K in KUnaryOp | KBinaryOp]: keyof Tensor } = {
  neg: "neg",
  abs: "abs",
  sqrt: "sqrt",
  rsqrt: "rsqrt",
  exp: "exp",
  log: "log",
  sin: "sin",
  cos: "cos",
  tan: "tan",
  tanh: "tanh",
  sigmoid: "sigmoid",
  asin: "asin",
  acos: "acos",
  atan: "atan",
  floor: "floor",
  ceil: "ceil",
  round: "round",
  trunc: "trunc",
  sign: "sign",
  not: "logicalNot",
  isnan: "isNan",
  isinf: "isInf",
  isfinite: "isFinite",
  add: "add",
  sub: "sub",
  mul: "mul",
  div: "div",
  pow: "pow",
  maximum: "maximum",
  minimum: "minimum",
  mod: "mod",
  atan2: "atan2",
  eq: "eq",
  ne: "ne",
  lt: "lt",
  le: "le",
  gt: "gt",
  ge: "ge",
  and: "logicalAnd",
  or: "logicalOr",
  xor: "logicalXor",
  // --- numerics/random: integer bitwise ops ---
  bitwise_and: "bitwiseAnd",
  bitwise_or: "bitwiseOr",
  bitwise_xor: "bitwiseXor",
  left_shift: "leftShift",
  right_shift: "rightShift",
};

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

/** Resolves one -1 in a target shape against a known element count. */
function inferShape(op: string, target: readonly number[], total: number, t: Tensor, what: string): number[] {
  const neg = target.filter((d) => d === -1).length;
  const known = prod(target.filter((d) => d !== -1));
  if (
    neg > 1 ||
    target.some((d) => d < -1 || !Number.isInteger(d)) ||
    (neg === 1 && (known === 0 || total % known !== 0)) ||
    (neg === 0 && known !== total)
  ) {
    throw new ShapeError(`${op}: cannot reshape the ${what} of x ${t.toString()} to (${target.join(",")})`);
  }
  return target.map((d) => (d === -1 ? total / known : d));
}

/**
 * Buffers are shared when a program returns an input unchanged or a view of it,
 * so they are reference counted: a buffer goes back to its backend when the last
 * tensor holding it is disposed or garbage collected.
 */
const collected = new FinalizationRegistry<{ buffer: DeviceBuffer; backend: Backend }>(({ buffer, backend }) => {
  // Runs during garbage collection: a failure here (say, a destroyed device) must not crash the process.
  try {
    releaseBuffer(buffer, backend);
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
    const t = new Tensor(type, { kind: "buffer", buffer, backend });
    // Host buffers are the garbage collector's: nothing to count (this runs per list element in the ragged helpers).
    if (!backend.hostMemory) t._track(buffer, backend);
    return t;
  }

  /** @internal Makes this (lazy) tensor hold a computed buffer. */
  _adopt(buffer: DeviceBuffer, backend: Backend): void {
    this._src = { kind: "buffer", buffer, backend };
    // Host memory is the garbage collector's; device memory is counted and freed by us.
    if (!backend.hostMemory) this._track(buffer, backend);
  }

  private _track(buffer: DeviceBuffer, backend: Backend): void {
    retainBuffer(buffer);
    collected.register(this, { buffer, backend }, this);
  }

  /**
   * Frees the tensor's device memory now (WebGPU buffers go back to the pool);
   * using the tensor afterwards is an error. Lazy tensors just drop their graph.
   */
  dispose(): void {
    const s = this._src;
    this._src = { kind: "disposed" };
    if (s.kind === "buffer" && !s.backend.hostMemory) {
      collected.unregister(this);
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

  /** `(3,100,5; 13,2)`: NEML2's notation. */
  toString(): string {
    return fmtShape(this._type.batch, this._type.base);
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
  async to(backend: Backend | "js" | "webgpu" | "wasm"): Promise<Tensor> {
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

  // ---- elementwise ----

  private unary(op: KUnaryOp): Tensor {
    let x: Tensor = this;
    // The op's dtype rule (ir/elementwise.ts): float-only ops take ints as float32, logical
    // ops cast to bool, predicates take any dtype, and arithmetic takes bool as int32.
    const rule = factsOf(op).dtype;
    if (rule === "float" && !isFloat(x.dtype)) x = x.cast("float32");
    if (rule === "logical" && x.dtype !== "bool") x = x.cast("bool");
    if (rule === "arith" && x.dtype === "bool") x = x.cast("int32");
    return Tensor._op(op, [x]);
  }

  /** Elementwise `-x`. */
  neg(): Tensor {
    return this.unary("neg");
  }
  /** Elementwise absolute value. */
  abs(): Tensor {
    return this.unary("abs");
  }
  /** Elementwise square root (NaN for negatives; integers give float32). */
  sqrt(): Tensor {
    return this.unary("sqrt");
  }
  /** Elementwise `1 / sqrt(x)`. */
  rsqrt(): Tensor {
    return this.unary("rsqrt");
  }
  /** Elementwise `e^x`. */
  exp(): Tensor {
    return this.unary("exp");
  }
  /** Elementwise natural logarithm. */
  log(): Tensor {
    return this.unary("log");
  }
  /** Elementwise sine (radians). */
  sin(): Tensor {
    return this.unary("sin");
  }
  /** Elementwise cosine (radians). */
  cos(): Tensor {
    return this.unary("cos");
  }
  /** Elementwise tangent (radians). */
  tan(): Tensor {
    return this.unary("tan");
  }
  /** Elementwise hyperbolic tangent. */
  tanh(): Tensor {
    return this.unary("tanh");
  }
  /** Elementwise logistic function `1 / (1 + e^-x)`. */
  sigmoid(): Tensor {
    return this.unary("sigmoid");
  }
  /** Inverse sine in [-π/2, π/2]; NaN outside [-1, 1] (NumPy `arcsin`). */
  asin(): Tensor {
    return this.unary("asin");
  }
  /** Inverse cosine in [0, π]; NaN outside [-1, 1] (NumPy `arccos`). */
  acos(): Tensor {
    return this.unary("acos");
  }
  /** Inverse tangent in [-π/2, π/2]. */
  atan(): Tensor {
    return this.unary("atan");
  }
  /** Rounds down elementwise. */
  floor(): Tensor {
    return this.unary("floor");
  }
  /** Rounds up elementwise. */
  ceil(): Tensor {
    return this.unary("ceil");
  }
  /** Rounds half to even, as NumPy and PyTorch do. */
  round(): Tensor {
    return this.unary("round");
  }
  /** Rounds toward zero elementwise. */
  trunc(): Tensor {
    return this.unary("trunc");
  }
  /** Elementwise -1, 0 or 1 by the sign of `x` (NaN stays NaN). */
  sign(): Tensor {
    return this.unary("sign");
  }
  /** Elementwise bool: `x` is NaN. */
  isNan(): Tensor {
    return this.unary("isnan");
  }
  /** Elementwise bool: `x` is +∞ or -∞. */
  isInf(): Tensor {
    return this.unary("isinf");
  }
  /** Elementwise bool: `x` is neither infinite nor NaN. */
  isFinite(): Tensor {
    return this.unary("isfinite");
  }
  /** Elementwise bool NOT (non-zero is true). */
  logicalNot(): Tensor {
    return this.unary("not");
  }

  private binary(op: KBinaryOp, other: Tensor | number): Tensor {
    checkOperand(METHOD_OF[op], "y", other, this);
    // The op's dtype rule (ir/elementwise.ts): operands promote; logical ops compute in
    // bool, arithmetic takes bool as int32, float-only ops and true division take ints as float32.
    const facts = factsOf(op);
    let dtype: DType =
      typeof other === "number" ? promoteWithNumber(this.dtype, other) : promote(this.dtype, other.dtype);
    if (facts.dtype === "logical") dtype = "bool";
    else if ((facts.dtype === "arith" || facts.dtype === "float") && dtype === "bool") dtype = "int32";
    if ((facts.dtype === "float" || facts.trueDivision === true) && !isFloat(dtype)) dtype = "float32";
    const y = typeof other === "number" ? weakConst(METHOD_OF[op], "y", other, dtype, this) : other.cast(dtype);
    return Tensor._op(op, [this.cast(dtype), y]);
  }

  /**
   * `x + y`, broadcast over batch and base; dtypes promote and plain numbers take `x`'s dtype where they fit.
   * @example tensor([1, 2]).add(10) // [11, 12]
   */
  add(y: Tensor | number): Tensor {
    return this.binary("add", y);
  }
  /** `x - y`, broadcast; dtypes promote as in `add`. */
  sub(y: Tensor | number): Tensor {
    return this.binary("sub", y);
  }
  /** `x * y`, broadcast; dtypes promote as in `add`. */
  mul(y: Tensor | number): Tensor {
    return this.binary("mul", y);
  }
  /** True division: integer operands give float32 (as NumPy and PyTorch). */
  div(y: Tensor | number): Tensor {
    return this.binary("div", y);
  }
  /** `x ** y`, broadcast; dtypes promote as in `add`. */
  pow(y: Tensor | number): Tensor {
    return this.binary("pow", y);
  }
  /** The larger of `x` and `y` elementwise, broadcast (NaN if either is NaN). */
  maximum(y: Tensor | number): Tensor {
    return this.binary("maximum", y);
  }
  /** The smaller of `x` and `y` elementwise, broadcast (NaN if either is NaN). */
  minimum(y: Tensor | number): Tensor {
    return this.binary("minimum", y);
  }
  /** Floor modulo: the result has the sign of the divisor (NumPy `%`). */
  mod(y: Tensor | number): Tensor {
    return this.binary("mod", y);
  }
  /**
   * The angle of the point (x, y) with `this` as y, in [-π, π], as `Math.atan2`
   * (signed zeros and infinities included); integers give float32.
   * @example tensor([1, 0, -0]).atan2(tensor([0, -1, -1])) // [π/2, π, -π]
   */
  atan2(x: Tensor | number): Tensor {
    return this.binary("atan2", x);
  }
  /** Elementwise bool `x == y`, broadcast. */
  eq(y: Tensor | number): Tensor {
    return this.binary("eq", y);
  }
  /** Elementwise bool `x != y`, broadcast. */
  ne(y: Tensor | number): Tensor {
    return this.binary("ne", y);
  }
  /** Elementwise bool `x < y`, broadcast. */
  lt(y: Tensor | number): Tensor {
    return this.binary("lt", y);
  }
  /** Elementwise bool `x <= y`, broadcast. */
  le(y: Tensor | number): Tensor {
    return this.binary("le", y);
  }
  /** Elementwise bool `x > y`, broadcast. */
  gt(y: Tensor | number): Tensor {
    return this.binary("gt", y);
  }
  /** Elementwise bool `x >= y`, broadcast. */
  ge(y: Tensor | number): Tensor {
    return this.binary("ge", y);
  }
  /** Elementwise bool AND (non-zero is true), broadcast. */
  logicalAnd(y: Tensor | number): Tensor {
    return this.binary("and", y);
  }
  /** Elementwise bool OR (non-zero is true), broadcast. */
  logicalOr(y: Tensor | number): Tensor {
    return this.binary("or", y);
  }
  /** Elementwise bool XOR (non-zero is true), broadcast. */
  logicalXor(y: Tensor | number): Tensor {
    return this.binary("xor", y);
  }

  /** Limits values to [lo, hi]; if lo > hi every element becomes hi (Open3D). NaN stays NaN. */
  clip(lo: number | Tensor, hi: number | Tensor): Tensor {
    if (this.dtype === "bool") throw new DTypeError(`clip: x ${this.toString()} of dtype bool cannot be clipped`);
    checkOperand("clip", "lo", lo, this);
    checkOperand("clip", "hi", hi, this);
    const x = this.maximum(
      typeof lo === "number" ? weakConst("clip", "lo", lo, this.dtype, this) : lo.cast(this.dtype),
    );
    return x.minimum(typeof hi === "number" ? weakConst("clip", "hi", hi, this.dtype, this) : hi.cast(this.dtype));
  }

  /** Converts to another dtype (float to int truncates toward zero; to bool is `x != 0`). */
  cast(dtype: DType): Tensor {
    return dtype === this.dtype ? this : Tensor._op("cast", [this], { dtype: checkDType("cast", dtype) });
  }

  // ---- reductions ----

  /** Reduces over base and batch axes at once; `op` is sum, mean, prod, min, max, argmin, argmax, all or any. */
  reduce(
    op: KReduceOp,
    spec: { batchAxes?: readonly number[]; baseAxes?: readonly number[]; keepdim?: boolean } = {},
  ): Tensor {
    if (!REDUCE_OPS.has(op)) {
      throw new UnsupportedOpError(
        `reduce: unknown reduction ${typeof op === "string" ? JSON.stringify(op) : describe(op)} for x ${this.toString()} (reductions are ${[...REDUCE_OPS].join(", ")})`,
      );
    }
    if (typeof spec !== "object" || spec === null)
      throw new ShapeError(`${op}: the axes spec must be an object, got ${describe(spec)} for x ${this.toString()}`);
    const batchAxes = normAxes(op, spec.batchAxes ?? NO_AXES, this.batchDim, "batch", this);
    const baseAxes = normAxes(op, spec.baseAxes ?? NO_AXES, this.baseDim, "base", this);
    return Tensor._op(op, [this], { batchAxes, baseAxes, keep: keepdimOf(op, spec) });
  }

  private baseReduce(op: KReduceOp, axes: number | readonly number[] | undefined, opts?: ReduceOptions): Tensor {
    return Tensor._op(op, [this], {
      batchAxes: NO_AXES,
      baseAxes: normAxes(op, axes, this.baseDim, "base", this),
      keep: keepdimOf(op, opts),
    });
  }

  private batchReduce(op: KReduceOp, axes: number | readonly number[] | undefined, opts?: ReduceOptions): Tensor {
    return Tensor._op(op, [this], {
      batchAxes: normAxes(op, axes, this.batchDim, "batch", this),
      baseAxes: NO_AXES,
      keep: keepdimOf(op, opts),
    });
  }

  /** Sum over base axes (all base axes by default). */
  sum(axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
    return this.baseReduce("sum", axes, opts);
  }
  /** Mean over base axes (all base axes by default); integers give float32. */
  mean(axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
    return this.baseReduce("mean", axes, opts);
  }
  /** Product over base axes (all base axes by default). */
  prod(axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
    return this.baseReduce("prod", axes, opts);
  }
  /** Minimum over base axes (all base axes by default). */
  min(axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
    return this.baseReduce("min", axes, opts);
  }
  /** Maximum over base axes (all base axes by default). */
  max(axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
    return this.baseReduce("max", axes, opts);
  }
  /** True where every value over the base axes is non-zero (all base axes by default). */
  all(axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
    return this.baseReduce("all", axes, opts);
  }
  /** True where some value over the base axes is non-zero (all base axes by default). */
  any(axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
    return this.baseReduce("any", axes, opts);
  }
  /** Position of the smallest value along one base axis (first on ties; NaN counts as smallest). */
  argmin(axis: number, opts?: ReduceOptions): Tensor {
    return this.baseReduce("argmin", axis, opts);
  }
  /** Position of the largest value along one base axis (first on ties; NaN counts as largest). */
  argmax(axis: number, opts?: ReduceOptions): Tensor {
    return this.baseReduce("argmax", axis, opts);
  }

  /** Sum over batch axes (all batch axes by default). */
  batchSum(axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
    return this.batchReduce("sum", axes, opts);
  }
  /** Mean over batch axes (all batch axes by default). */
  batchMean(axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
    return this.batchReduce("mean", axes, opts);
  }
  /** Product over batch axes (all batch axes by default). */
  batchProd(axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
    return this.batchReduce("prod", axes, opts);
  }
  /** Minimum over batch axes (all batch axes by default). */
  batchMin(axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
    return this.batchReduce("min", axes, opts);
  }
  /** Maximum over batch axes (all batch axes by default). */
  batchMax(axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
    return this.batchReduce("max", axes, opts);
  }
  /** True where every value over the batch axes is non-zero (all batch axes by default). */
  batchAll(axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
    return this.batchReduce("all", axes, opts);
  }
  /** True where some value over the batch axes is non-zero (all batch axes by default). */
  batchAny(axes?: number | readonly number[], opts?: ReduceOptions): Tensor {
    return this.batchReduce("any", axes, opts);
  }
  /** Position of the smallest value along one batch axis (first on ties; NaN counts as smallest). */
  batchArgmin(axis: number, opts?: ReduceOptions): Tensor {
    return this.batchReduce("argmin", axis, opts);
  }
  /** Position of the largest value along one batch axis (first on ties; NaN counts as largest). */
  batchArgmax(axis: number, opts?: ReduceOptions): Tensor {
    return this.batchReduce("argmax", axis, opts);
  }

  // ---- base shape ----

  /** Reshapes the base (one -1 is inferred); the batch is untouched. */
  reshape(shape: readonly number[]): Tensor {
    checkSizes("reshape", "shape", shape, -1, this);
    return Tensor._op("reshape", [this], { shape: inferShape("reshape", shape, prod(this.baseShape), this, "base") });
  }

  /** Flattens base axes `start..end` (inclusive) into one. */
  flatten(start = 0, end = -1): Tensor {
    if (this.baseDim === 0) return this.reshape([1]);
    const s = normAxis("flatten", start, this.baseDim, "base", this);
    const e = normAxis("flatten", end, this.baseDim, "base", this);
    if (s > e) throw new ShapeError(`flatten: start ${start} is after end ${end} for x ${this.toString()}`);
    const b = this.baseShape;
    return this.reshape([...b.slice(0, s), prod(b.slice(s, e + 1)), ...b.slice(e + 1)]);
  }

  /** Reorders the base axes. */
  permute(...perm: number[]): Tensor {
    return Tensor._op("permute", [this], { perm: perm.map((p) => normAxis("permute", p, this.baseDim, "base", this)) });
  }

  /** Swaps two base axes (the last two by default). */
  transpose(a = -2, b = -1): Tensor {
    const n = this.baseDim;
    const i = normAxis("transpose", a, n, "base", this);
    const j = normAxis("transpose", b, n, "base", this);
    const perm = [...Array(n).keys()];
    perm[i] = j;
    perm[j] = i;
    return Tensor._op("permute", [this], { perm });
  }

  /** Broadcasts the base to `shape` (size-1 and missing leading dims grow; -1 keeps a dim). */
  expand(shape: readonly number[]): Tensor {
    checkSizes("expand", "shape", shape, -1, this);
    const off = shape.length - this.baseDim;
    const target = shape.map((d, i) => (d === -1 && i >= off ? this.baseShape[i - off]! : d));
    return Tensor._op("expand", [this], { shape: target });
  }

  /** Inserts a size-1 base axis at `axis` (negative counts from the end). */
  unsqueeze(axis: number): Tensor {
    const a = normAxis("unsqueeze", axis, this.baseDim + 1, "base", this);
    const b = [...this.baseShape];
    b.splice(a, 0, 1);
    return this.reshape(b);
  }

  /** Removes size-1 base axes (all of them, or the one given). */
  squeeze(axis?: number): Tensor {
    if (axis === undefined) return this.reshape(this.baseShape.filter((d) => d !== 1));
    const a = normAxis("squeeze", axis, this.baseDim, "base", this);
    if (this.baseShape[a] !== 1) return this;
    return this.reshape(this.baseShape.filter((_, i) => i !== a));
  }

  /**
   * Slices one base axis: `start:stop:step` with Python defaults, negative start/stop
   * counting from the end and out-of-range values clamped (Open3D); step must be positive (NEML2).
   */
  slice(axis: number, start = 0, stop?: number, step = 1): Tensor {
    const a = normAxis("slice", axis, this.baseDim, "base", this);
    const n = this.baseShape[a]!;
    checkBound("slice", "start", start, this);
    if (stop !== undefined) checkBound("slice", "stop", stop, this);
    if (!Number.isInteger(step) || step <= 0)
      throw new ShapeError(`slice: step ${step} must be a positive integer for x ${this.toString()}`);
    const clamp = (v: number) => Math.min(n, Math.max(0, v < 0 ? v + n : v));
    const s = clamp(start);
    const e = Math.max(s, clamp(stop ?? n));
    return Tensor._op("slice", [this], { axis: a, start: s, stop: e, step });
  }

  /** Picks index `i` of a base axis and drops the axis: `r.select(0, 2)` is row 2 of each matrix. */
  select(axis: number, i: number): Tensor {
    const a = normAxis("select", axis, this.baseDim, "base", this);
    const n = this.baseShape[a]!;
    checkBound("select", "index", i, this);
    const k = i < 0 ? i + n : i;
    if (!Number.isInteger(k) || k < 0 || k >= n)
      throw new ShapeError(`select: index ${i} is out of range for base axis ${axis} of x ${this.toString()}`);
    return this.slice(a, k, k + 1).squeeze(a);
  }

  /** Matrix product over the last base dims (NumPy `matmul` rules), batched and broadcast. */
  matmul(y: Tensor): Tensor {
    if (!(y instanceof Tensor))
      throw new DTypeError(`matmul: y must be a Tensor, got ${describe(y)} (x ${this.toString()})`);
    const d = promote(this.dtype, y.dtype);
    const dt = d === "bool" ? "int32" : d;
    return Tensor._op("matmul", [this.cast(dt), y.cast(dt)]);
  }

  // ---- batch shape ----

  /** Reshapes the batch dims (one -1 is inferred); the base is untouched. */
  batchReshape(shape: readonly number[]): Tensor {
    checkSizes("batchReshape", "shape", shape, -1, this);
    if (this._type.batch.every((d) => typeof d === "number")) {
      inferShape("batchReshape", shape, prod(this.batchShape), this, "batch");
    }
    return Tensor._op("batch_reshape", [this], { shape: [...shape] });
  }

  /** Inserts a size-1 batch dim (negative `d` counts from the end of the batch block). */
  batchUnsqueeze(d: number): Tensor {
    const dim = normAxis("batchUnsqueeze", d, this.batchDim + 1, "batch", this);
    return Tensor._op("batch_unsqueeze", [this], { dim });
  }

  /** Removes a size-1 batch dim. */
  batchSqueeze(d: number): Tensor {
    return Tensor._op("batch_squeeze", [this], { dim: normAxis("batchSqueeze", d, this.batchDim, "batch", this) });
  }

  /**
   * Slices one batch dim, `start:stop:step` (Python defaults, positive step); eagerly,
   * negative bounds count from the end and out-of-range bounds clamp. Inside `jit`
   * (symbolic sizes) bounds must be non-negative. Runs as block copies.
   */
  batchSlice(axis: number, start = 0, stop?: number, step = 1): Tensor {
    const a = normAxis("batchSlice", axis, this.batchDim, "batch", this);
    checkBound("batchSlice", "start", start, this);
    if (stop !== undefined) checkBound("batchSlice", "stop", stop, this);
    if (!Number.isInteger(step) || step <= 0)
      throw new ShapeError(`batchSlice: step ${step} must be a positive integer for x ${this.toString()}`);
    const n = this.batchShape[a]!;
    if (n < 0) {
      if (start < 0 || (stop !== undefined && stop < 0)) {
        throw new TraceError(`batchSlice: negative bounds need a concrete batch size, x ${this.toString()} is traced`);
      }
      return Tensor._op("batch_slice", [this], { axis: a, start, stop: stop ?? -1, step });
    }
    const clamp = (v: number) => Math.min(n, Math.max(0, v < 0 ? v + n : v));
    const s = clamp(start);
    const e = Math.max(s, clamp(stop ?? n));
    if (s === 0 && e === n && step === 1) return this;
    return Tensor._op("batch_slice", [this], { axis: a, start: s, stop: e, step });
  }

  /** Picks index `i` of a batch dim and drops the dim (NEML2's batch_index with an int). */
  batchIndex(axis: number, i: number): Tensor;
  // The index-list form, batchIndex(list), is declared and installed by src/api/tensor-api.ts.
  batchIndex(axis: number | readonly unknown[], i?: number): Tensor {
    const a = normAxis("batchIndex", axis as number, this.batchDim, "batch", this);
    const n = this.batchShape[a]!;
    checkBound("batchIndex", "index", i, this);
    if (n < 0 && i < 0)
      throw new TraceError(`batchIndex: a negative index needs a concrete batch size, x ${this.toString()} is traced`);
    const k = i < 0 ? i + n : i;
    if (!Number.isInteger(k) || k < 0 || (n >= 0 && k >= n)) {
      throw new ShapeError(`batchIndex: index ${i} is out of range for batch dim ${axis} of x ${this.toString()}`);
    }
    return Tensor._op(
      "batch_squeeze",
      [Tensor._op("batch_slice", [this], { axis: a, start: k, stop: k + 1, step: 1 })],
      { dim: a },
    );
  }

  /**
   * The same values (same row-major order) with the first `batchDim` dims as the
   * batch and the rest as the base: `(2,5; 3).rebatch(1)` is `(2; 5,3)`. A view, no
   * copy. Dims moving into the base must be static (not symbolic inside `jit`).
   */
  rebatch(batchDim: number): Tensor {
    if (!Number.isInteger(batchDim) || batchDim < 0 || batchDim > this.rank) {
      throw new ShapeError(
        `rebatch: batchDim ${describe(batchDim)} does not fit x ${this.toString()} (rank ${this.rank})`,
      );
    }
    if (batchDim === this.batchDim) return this;
    const base = this.shape.slice(batchDim);
    if (base.some((d) => d < 0)) {
      throw new ShapeError(
        `rebatch: batchDim ${batchDim} would move symbolic batch dims of x ${this.toString()} into the base, which must be static`,
      );
    }
    return Tensor._op("rebatch", [this], { batchDim, base });
  }

  /** Merges all batch dims into one. */
  batchFlatten(): Tensor {
    return Tensor._op("batch_reshape", [this], { shape: [-1] });
  }

  /** Broadcasts the batch to `shape` (size-1 and missing leading dims grow; -1 keeps a dim). */
  batchExpand(shape: readonly number[]): Tensor {
    checkSizes("batchExpand", "shape", shape, -1, this);
    return Tensor._op("batch_expand", [this], { shape: [...shape] });
  }
}

// --- numerics/random: the integer dtype rule of the bitwise ops; the numerics compositions ---

/** A slice bound or an index: an integer (out-of-range bounds clamp where the method says so). */
function checkBound(op: string, name: string, v: unknown, t: Tensor): asserts v is number {
  if (typeof v !== "number" || !Number.isInteger(v))
    throw new ShapeError(`${op}: ${name} must be an integer, got ${describe(v)} for x ${t.toString()}`);
}

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
    : Tensor._op(
        "concat",
        tensors.map((t) => t.cast(dtype)),
        { axis: a },
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
