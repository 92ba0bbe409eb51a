/**
 * The eager operations of Tensor (elementwise arithmetic and comparisons, `clip`,
 * the reductions, base and batch reshaping, slicing and indexing, `matmul`): they
 * record graph nodes that only the compiler can run, so they are installed on
 * `Tensor.prototype` with the compiler (`installCompiler`, src/compiler.ts, which
 * the full entry and `jit` call). `batchwise/runtime`, which only runs bundles,
 * carries neither them nor their argument checks; there, calling one is a
 * BackendError that names the full entry (src/runtime-entry.ts).
 */
import type { NoneLeft } from "../../ir/checks.js";
import { isFloat, isInt, promote, promoteWithNumber, type DType } from "../../ir/dtype.js";
import { DTypeError, ShapeError, TraceError, UnsupportedOpError } from "../../ir/errors.js";
import { ELEMENTWISE, factsOf, isUnaryOp, type KBinaryOp, type KUnaryOp } from "../../ir/elementwise.js";
import type { KReduceOp } from "../../ir/kernel.js";
import type { PositionalReduceOp } from "../../ir/reductions.js";
import { REDUCE_OPS } from "../../ir/ops.js";
import { prod } from "../../ir/types.js";
import { asCalled, checkSizes, describe } from "../check.js";
import { METHOD_OF, OTHER_OP_NAMES, REDUCTION_METHODS } from "./tensor-op-names.js";
import { checkOperand, normAxis, Tensor, weakConst, type ReduceOptions } from "../tensor.js";

/**
 * The Tensor method of every elementwise op (`METHOD_OF`, src/api/tensor-op-names.ts): a
 * unary op's method takes no argument, a binary op's one operand. Their bodies are made
 * from the op-facts table (`elementwiseMethods` below); `tsc` checks that each method here
 * is the method of an op and each op's method is declared here, with its kind's signature.
 */
export interface ElementwiseMethods {
  /** Elementwise `-x`. */
  neg(): Tensor;
  /** Elementwise absolute value. */
  abs(): Tensor;
  /** Elementwise `x * x` (integers wrap, as NumPy's `square`; bool gives int32). */
  square(): Tensor;
  /** Elementwise square root (NaN for negatives; integers give float32). */
  sqrt(): Tensor;
  /** Elementwise `1 / sqrt(x)`. */
  rsqrt(): Tensor;
  /** Elementwise `e^x`. */
  exp(): Tensor;
  /** Elementwise natural logarithm. */
  log(): Tensor;
  /** Elementwise sine (radians). */
  sin(): Tensor;
  /** Elementwise cosine (radians). */
  cos(): Tensor;
  /** Elementwise tangent (radians). */
  tan(): Tensor;
  /** Elementwise hyperbolic tangent. */
  tanh(): Tensor;
  /** Elementwise logistic function `1 / (1 + e^-x)`. */
  sigmoid(): Tensor;
  /** Inverse sine in [-π/2, π/2]; NaN outside [-1, 1] (NumPy `arcsin`). */
  asin(): Tensor;
  /** Inverse cosine in [0, π]; NaN outside [-1, 1] (NumPy `arccos`). */
  acos(): Tensor;
  /** Inverse tangent in [-π/2, π/2]. */
  atan(): Tensor;
  /** Rounds down elementwise. */
  floor(): Tensor;
  /** Rounds up elementwise. */
  ceil(): Tensor;
  /** Rounds half to even, as NumPy and PyTorch do. */
  round(): Tensor;
  /** Rounds toward zero elementwise. */
  trunc(): Tensor;
  /** Elementwise -1, 0 or 1 by the sign of `x` (NaN stays NaN). */
  sign(): Tensor;
  /** Elementwise bool: `x` is NaN. */
  isNan(): Tensor;
  /** Elementwise bool: `x` is +∞ or -∞. */
  isInf(): Tensor;
  /** Elementwise bool: `x` is neither infinite nor NaN. */
  isFinite(): Tensor;
  /** Elementwise bool NOT (non-zero is true). */
  logicalNot(): Tensor;
  /**
   * `x + y`, broadcast over batch and base; dtypes promote and plain numbers take `x`'s dtype where they fit.
   * @example tensor([1, 2]).add(10) // [11, 12]
   */
  add(y: Tensor | number): Tensor;
  /** `x - y`, broadcast; dtypes promote as in `add`. */
  sub(y: Tensor | number): Tensor;
  /** `x * y`, broadcast; dtypes promote as in `add`. */
  mul(y: Tensor | number): Tensor;
  /** True division: integer operands give float32 (as NumPy and PyTorch). */
  div(y: Tensor | number): Tensor;
  /** `x ** y`, broadcast; dtypes promote as in `add`. */
  pow(y: Tensor | number): Tensor;
  /** The larger of `x` and `y` elementwise, broadcast (NaN if either is NaN). */
  maximum(y: Tensor | number): Tensor;
  /** The smaller of `x` and `y` elementwise, broadcast (NaN if either is NaN). */
  minimum(y: Tensor | number): Tensor;
  /** Floor modulo: the result has the sign of the divisor (NumPy `%`). */
  mod(y: Tensor | number): Tensor;
  /**
   * The angle of the point (x, y) with `this` as y, in [-π, π], as `Math.atan2`
   * (signed zeros and infinities included); integers give float32.
   * @example tensor([1, 0, -0]).atan2(tensor([0, -1, -1])) // [π/2, π, -π]
   */
  atan2(x: Tensor | number): Tensor;
  /** Elementwise bool `x == y`, broadcast. */
  eq(y: Tensor | number): Tensor;
  /** Elementwise bool `x != y`, broadcast. */
  ne(y: Tensor | number): Tensor;
  /** Elementwise bool `x < y`, broadcast. */
  lt(y: Tensor | number): Tensor;
  /** Elementwise bool `x <= y`, broadcast. */
  le(y: Tensor | number): Tensor;
  /** Elementwise bool `x > y`, broadcast. */
  gt(y: Tensor | number): Tensor;
  /** Elementwise bool `x >= y`, broadcast. */
  ge(y: Tensor | number): Tensor;
  /** Elementwise bool AND (non-zero is true), broadcast. */
  logicalAnd(y: Tensor | number): Tensor;
  /** Elementwise bool OR (non-zero is true), broadcast. */
  logicalOr(y: Tensor | number): Tensor;
  /** Elementwise bool XOR (non-zero is true), broadcast. */
  logicalXor(y: Tensor | number): Tensor;
  /**
   * Elementwise bitwise AND of integers (int32, uint32; dtypes promote, a plain number
   * takes `x`'s dtype and must fit it). Floats and bool are a DTypeError.
   * @example tensor([12], { dtype: "uint32" }).bitwiseAnd(10) // [8]
   */
  bitwiseAnd(y: Tensor | number): Tensor;
  /** Elementwise bitwise OR of integers (int32, uint32), as `bitwiseAnd`. */
  bitwiseOr(y: Tensor | number): Tensor;
  /** Elementwise bitwise XOR of integers (int32, uint32), as `bitwiseAnd`. */
  bitwiseXor(y: Tensor | number): Tensor;
  /**
   * Elementwise `x << y` on integers (int32, uint32), wrapping to 32 bits. As NumPy, a
   * shift count outside [0, 32) (32 or more, or negative) shifts every bit out: 0.
   */
  leftShift(y: Tensor | number): Tensor;
  /**
   * Elementwise `x >> y` on integers: logical on uint32, arithmetic on int32 (the sign
   * fills), as NumPy. A count outside [0, 32) gives 0, or -1 for a negative int32.
   */
  rightShift(y: Tensor | number): Tensor;
}

/**
 * The Tensor methods of every reduction (`REDUCTION_METHODS`, src/api/tensor-op-names.ts):
 * over base axes (named as the op) and over batch axes (`batch…`). A positional reduction
 * (argmin, argmax) takes one axis, the others an axis or a list of them (all by default).
 * Their bodies are made from the table (`reductionMethods` below); `tsc` checks that each
 * method here is a reduction's, with its kind's signature, and each reduction's are declared.
 */
export interface ReductionMethods {
  /** Sum over base axes (all base axes by default). */
  sum(axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
  /** Mean over base axes (all base axes by default); integers give float32. */
  mean(axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
  /** Product over base axes (all base axes by default). */
  prod(axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
  /** Minimum over base axes (all base axes by default). */
  min(axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
  /** Maximum over base axes (all base axes by default). */
  max(axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
  /**
   * True where every value over the base axes is non-zero (all base axes by default); on
   * any dtype, as NumPy's `all` (int32 `[0, 2]` gives false, NaN counts as non-zero), a bool result.
   */
  all(axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
  /**
   * True where some value over the base axes is non-zero (all base axes by default); on any
   * dtype, as NumPy's `any` (int32 `[0, 2]` gives true, NaN counts as non-zero), a bool result.
   */
  any(axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
  /** Position of the smallest value along one base axis (first on ties; NaN counts as smallest). */
  argmin(axis: number, opts?: ReduceOptions): Tensor;
  /** Position of the largest value along one base axis (first on ties; NaN counts as largest). */
  argmax(axis: number, opts?: ReduceOptions): Tensor;
  /** Sum over batch axes (all batch axes by default). */
  batchSum(axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
  /** Mean over batch axes (all batch axes by default). */
  batchMean(axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
  /** Product over batch axes (all batch axes by default). */
  batchProd(axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
  /** Minimum over batch axes (all batch axes by default). */
  batchMin(axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
  /** Maximum over batch axes (all batch axes by default). */
  batchMax(axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
  /** True where every value over the batch axes is non-zero (all batch axes by default). */
  batchAll(axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
  /** True where some value over the batch axes is non-zero (all batch axes by default). */
  batchAny(axes?: number | readonly number[], opts?: ReduceOptions): Tensor;
  /** Position of the smallest value along one batch axis (first on ties; NaN counts as smallest). */
  batchArgmin(axis: number, opts?: ReduceOptions): Tensor;
  /** Position of the largest value along one batch axis (first on ties; NaN counts as largest). */
  batchArgmax(axis: number, opts?: ReduceOptions): Tensor;
}

declare module "../tensor.js" {
  interface Tensor extends ElementwiseMethods, ReductionMethods {
    /** Limits values to [lo, hi]; if lo > hi every element becomes hi (Open3D). NaN stays NaN. */
    clip(lo: number | Tensor, hi: number | Tensor): Tensor;
    /** Reduces over base and batch axes at once; `op` is sum, mean, prod, min, max, argmin, argmax, all or any. */
    reduce(
      op: KReduceOp,
      spec?: { batchAxes?: readonly number[]; baseAxes?: readonly number[]; keepdim?: boolean },
    ): Tensor;
    /** Reshapes the base (one -1 is inferred); the batch is untouched. */
    reshape(shape: readonly number[]): Tensor;
    /** Flattens base axes `start..end` (inclusive) into one. */
    flatten(start?: number, end?: number): Tensor;
    /** Reorders the base axes. */
    permute(...perm: number[]): Tensor;
    /** Swaps two base axes (the last two by default). */
    transpose(a?: number, b?: number): Tensor;
    /** Broadcasts the base to `shape` (size-1 and missing leading dims grow; -1 keeps a dim). */
    expand(shape: readonly number[]): Tensor;
    /** Inserts a size-1 base axis at `axis` (negative counts from the end). */
    unsqueeze(axis: number): Tensor;
    /**
     * Removes size-1 base axes (all of them, or the one given). A given axis whose size is not 1
     * is left as it is (as PyTorch's `squeeze(dim)`; NumPy raises).
     */
    squeeze(axis?: number): Tensor;
    /**
     * Slices one base axis: `start:stop:step` with Python defaults, negative start/stop
     * counting from the end and out-of-range values clamped (Open3D); step must be positive (NEML2).
     */
    slice(axis: number, start?: number, stop?: number, step?: number): Tensor;
    /** Picks index `i` of a base axis and drops the axis: `r.select(0, 2)` is row 2 of each matrix. */
    select(axis: number, i: number): Tensor;
    /** Matrix product over the last base dims (NumPy `matmul` rules), batched and broadcast. */
    matmul(y: Tensor): Tensor;
    /** Reshapes the batch dims (one -1 is inferred); the base is untouched. */
    batchReshape(shape: readonly number[]): Tensor;
    /** Inserts a size-1 batch dim (negative `d` counts from the end of the batch block). */
    batchUnsqueeze(d: number): Tensor;
    /** Removes a size-1 batch dim. */
    batchSqueeze(d: number): Tensor;
    /**
     * Slices one batch dim, `start:stop:step` (Python defaults, positive step); eagerly,
     * negative bounds count from the end and out-of-range bounds clamp. Inside `jit`
     * (symbolic sizes) bounds must be non-negative. Runs as block copies.
     */
    batchSlice(axis: number, start?: number, stop?: number, step?: number): Tensor;
    /** Picks index `i` of a batch dim and drops the dim (NEML2's batch_index with an int). */
    batchIndex(axis: number, i: number): Tensor;
    // The index-list form, batchIndex(list), is declared and installed by src/api/tensor-api.ts.
    /**
     * The same values (same row-major order) with the first `batchDim` dims as the
     * batch and the rest as the base: `(2,5; 3).rebatch(1)` is `(2; 5,3)`. A view, no
     * copy. Dims moving into the base must be static (not symbolic inside `jit`).
     */
    rebatch(batchDim: number): Tensor;
    /** Merges all batch dims into one. */
    batchFlatten(): Tensor;
    /** Broadcasts the batch to `shape` (size-1 and missing leading dims grow; -1 keeps a dim). */
    batchExpand(shape: readonly number[]): Tensor;
  }
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

/** A slice bound or an index: an integer (out-of-range bounds clamp where the method says so). */
function checkBound(op: string, name: string, v: unknown, t: Tensor): asserts v is number {
  if (typeof v !== "number" || !Number.isInteger(v))
    throw new ShapeError(`${op}: ${name} must be an integer, got ${describe(v)} for x ${t.toString()}`);
}

function unary(t: Tensor, op: KUnaryOp): Tensor {
  let x: Tensor = t;
  // The op's dtype rule (ir/elementwise.ts): float-only ops take ints as float32, logical
  // ops cast to bool, predicates take any dtype, and arithmetic takes bool as int32.
  const rule = factsOf(op).dtype;
  if (rule === "float" && !isFloat(x.dtype)) x = x.cast("float32");
  if (rule === "logical" && x.dtype !== "bool") x = x.cast("bool");
  if (rule === "arith" && x.dtype === "bool") x = x.cast("int32");
  return Tensor._op(op, [x]);
}

function binary(t: Tensor, op: KBinaryOp, other: Tensor | number): Tensor {
  const name = METHOD_OF[op];
  checkOperand(name, "y", other, t);
  // The op's dtype rule (ir/elementwise.ts): operands promote; logical ops compute in
  // bool, arithmetic takes bool as int32, float-only ops and true division take ints as
  // float32, and integer-only ops refuse floats and bool (a plain number takes `x`'s dtype).
  const facts = factsOf(op);
  let dtype: DType = typeof other === "number" ? promoteWithNumber(t.dtype, other) : promote(t.dtype, other.dtype);
  if (facts.dtype === "logical") dtype = "bool";
  else if ((facts.dtype === "arith" || facts.dtype === "float") && dtype === "bool") dtype = "int32";
  if ((facts.dtype === "float" || facts.trueDivision === true) && !isFloat(dtype)) dtype = "float32";
  if (facts.dtype === "int") {
    if (typeof other === "number" && t.dtype === "bool") dtype = "bool";
    if (!isInt(dtype)) {
      const y = typeof other === "number" ? `y = ${other}` : `y ${other.toString()} of dtype ${other.dtype}`;
      throw new DTypeError(
        `${name}: needs integer operands (int32, uint32, int16, uint16, int8 or uint8), got x ${t.toString()} of dtype ${t.dtype} and ${y}`,
      );
    }
  }
  const y = typeof other === "number" ? weakConst(name, "y", other, dtype, t) : other.cast(dtype);
  return Tensor._op(op, [t.cast(dtype), y]);
}

type Op = KUnaryOp | KBinaryOp;
type MethodOf = typeof METHOD_OF;
/** The signature of an op's method by the op's kind. */
type MethodType<K extends Op> = K extends KUnaryOp ? () => Tensor : (y: Tensor | number) => Tensor;
/** The ops whose declared method (in `ElementwiseMethods`) has not the signature of the op's kind. */
type WrongSignature = {
  [K in Op]: MethodOf[K] extends keyof ElementwiseMethods
    ? [MethodType<K>, ElementwiseMethods[MethodOf[K]]] extends [ElementwiseMethods[MethodOf[K]], MethodType<K>]
      ? never
      : K
    : K;
}[Op];
/** The declared elementwise methods that are the method of no op (they would have no body). */
type Undefined = Exclude<keyof ElementwiseMethods, MethodOf[Op]>;
// Each fails `tsc` with the names at fault: an op whose method is not declared in
// ElementwiseMethods or has the wrong signature, and a declared method of no op.
const EVERY_OP_DECLARED: NoneLeft<WrongSignature, "opsWithoutTheirMethod"> = true;
const EVERY_METHOD_HAS_AN_OP: NoneLeft<Undefined, "methodsOfNoOp"> = true;
void EVERY_OP_DECLARED;
void EVERY_METHOD_HAS_AN_OP;

/**
 * The bodies of the elementwise methods, made from the op-facts table: each op's method
 * (`METHOD_OF`) applies its dtype rule (`unary`, `binary`) and records the op.
 */
function elementwiseMethods(): ElementwiseMethods {
  const out: Record<string, (this: Tensor, y: Tensor | number) => Tensor> = {};
  for (const op of Object.keys(ELEMENTWISE) as Op[]) {
    const fn = isUnaryOp(op)
      ? function (this: Tensor): Tensor {
          return unary(this, op);
        }
      : function (this: Tensor, y: Tensor | number): Tensor {
          return binary(this, op, y);
        };
    out[METHOD_OF[op]] = Object.defineProperty(fn, "name", { value: METHOD_OF[op] });
  }
  // Complete and of the right signatures: every op has a method (the loop above), whose
  // signature is its kind's (EVERY_OP_DECLARED), and every method is an op's (EVERY_METHOD_HAS_AN_OP).
  return out as unknown as ElementwiseMethods;
}

function baseReduce(
  t: Tensor,
  op: KReduceOp,
  axes: number | readonly number[] | undefined,
  opts?: ReduceOptions,
): Tensor {
  return Tensor._op(op, [t], {
    batchAxes: NO_AXES,
    baseAxes: normAxes(op, axes, t.baseDim, "base", t),
    keep: keepdimOf(op, opts),
  });
}

function batchReduce(
  t: Tensor,
  op: KReduceOp,
  axes: number | readonly number[] | undefined,
  opts?: ReduceOptions,
): Tensor {
  return Tensor._op(op, [t], {
    batchAxes: normAxes(op, axes, t.batchDim, "batch", t),
    baseAxes: NO_AXES,
    keep: keepdimOf(op, opts),
  });
}

type ReductionsTable = typeof REDUCTION_METHODS;
/** The signature of a reduction's methods: one axis for a positional reduction, else an axis or a list. */
type ReductionMethodType<K extends KReduceOp> = K extends PositionalReduceOp
  ? (axis: number, opts?: ReduceOptions) => Tensor
  : (axes?: number | readonly number[], opts?: ReduceOptions) => Tensor;
type SameType<A, B> = [A, B] extends [B, A] ? true : false;
/** The reductions whose two methods are not both declared in `ReductionMethods` with their kind's signature. */
type WrongReduction = {
  [K in KReduceOp]: ReductionsTable[K][number] extends infer M
    ? M extends keyof ReductionMethods
      ? SameType<ReductionMethods[M], ReductionMethodType<K>> extends true
        ? never
        : K
      : K
    : never;
}[KReduceOp];
/** The declared reduction methods that are the methods of no reduction. */
type UndefinedReduction = Exclude<keyof ReductionMethods, ReductionsTable[KReduceOp][number]>;
// Each fails `tsc` with the names at fault, as the elementwise checks above.
const EVERY_REDUCTION_DECLARED: NoneLeft<WrongReduction, "reductionsWithoutTheirMethods"> = true;
const EVERY_REDUCTION_METHOD_HAS_A_REDUCTION: NoneLeft<UndefinedReduction, "methodsOfNoReduction"> = true;
void EVERY_REDUCTION_DECLARED;
void EVERY_REDUCTION_METHOD_HAS_A_REDUCTION;

/** The bodies of the reduction methods: each records its reduction over base or batch axes. */
function reductionMethods(): ReductionMethods {
  type Body = (this: Tensor, axes?: number | readonly number[], opts?: ReduceOptions) => Tensor;
  const out: Record<string, Body> = {};
  for (const op of REDUCE_OPS) {
    const [base, batch] = REDUCTION_METHODS[op];
    const overBase: Body = function (axes, opts) {
      return baseReduce(this, op, axes, opts);
    };
    const overBatch: Body = function (axes, opts) {
      return batchReduce(this, op, axes, opts);
    };
    out[base] = Object.defineProperty(overBase, "name", { value: base });
    out[batch] = Object.defineProperty(overBatch, "name", { value: batch });
  }
  // Complete and of the right signatures by the two checks above and the loop over REDUCE_OPS.
  return out as unknown as ReductionMethods;
}

function methods() {
  return {
    ...elementwiseMethods(),
    ...reductionMethods(),
    ...otherMethods(),
  };
}

/** The eager operations that are not the method of one elementwise op (`OTHER_OP_NAMES`). */
function otherMethods() {
  return {
    clip(this: Tensor, lo: number | Tensor, hi: number | Tensor): Tensor {
      if (this.dtype === "bool") throw new DTypeError(`clip: x ${this.toString()} of dtype bool cannot be clipped`);
      checkOperand("clip", "lo", lo, this);
      checkOperand("clip", "hi", hi, this);
      const x = this.maximum(
        typeof lo === "number" ? weakConst("clip", "lo", lo, this.dtype, this) : lo.cast(this.dtype),
      );
      return x.minimum(typeof hi === "number" ? weakConst("clip", "hi", hi, this.dtype, this) : hi.cast(this.dtype));
    },
    reduce(
      this: Tensor,
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
    },
    reshape(this: Tensor, shape: readonly number[]): Tensor {
      checkSizes("reshape", "shape", shape, -1, this);
      return Tensor._op("reshape", [this], { shape: inferShape("reshape", shape, prod(this.baseShape), this, "base") });
    },
    flatten(this: Tensor, start = 0, end = -1): Tensor {
      if (this.baseDim === 0) {
        // As PyTorch: a 0-d base counts as one axis, so start and end may be 0 or -1 only.
        normAxis("flatten", start, 1, "base", this);
        normAxis("flatten", end, 1, "base", this);
        return this.reshape([1]);
      }
      const s = normAxis("flatten", start, this.baseDim, "base", this);
      const e = normAxis("flatten", end, this.baseDim, "base", this);
      if (s > e) throw new ShapeError(`flatten: start ${start} is after end ${end} for x ${this.toString()}`);
      const b = this.baseShape;
      return this.reshape([...b.slice(0, s), prod(b.slice(s, e + 1)), ...b.slice(e + 1)]);
    },
    permute(this: Tensor, ...perm: number[]): Tensor {
      return Tensor._op("permute", [this], {
        perm: perm.map((p) => normAxis("permute", p, this.baseDim, "base", this)),
      });
    },
    transpose(this: Tensor, a = -2, b = -1): Tensor {
      const n = this.baseDim;
      const i = normAxis("transpose", a, n, "base", this);
      const j = normAxis("transpose", b, n, "base", this);
      const perm = [...Array(n).keys()];
      perm[i] = j;
      perm[j] = i;
      return Tensor._op("permute", [this], { perm });
    },
    expand(this: Tensor, shape: readonly number[]): Tensor {
      checkSizes("expand", "shape", shape, -1, this);
      const off = shape.length - this.baseDim;
      const target = shape.map((d, i) => (d === -1 && i >= off ? this.baseShape[i - off]! : d));
      return Tensor._op("expand", [this], { shape: target });
    },
    unsqueeze(this: Tensor, axis: number): Tensor {
      const a = normAxis("unsqueeze", axis, this.baseDim + 1, "base", this);
      const b = [...this.baseShape];
      b.splice(a, 0, 1);
      return this.reshape(b);
    },
    squeeze(this: Tensor, axis?: number): Tensor {
      if (axis === undefined) return this.reshape(this.baseShape.filter((d) => d !== 1));
      const a = normAxis("squeeze", axis, this.baseDim, "base", this);
      if (this.baseShape[a] !== 1) return this;
      return this.reshape(this.baseShape.filter((_, i) => i !== a));
    },
    slice(this: Tensor, axis: number, start = 0, stop?: number, step = 1): Tensor {
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
    },
    select(this: Tensor, axis: number, i: number): Tensor {
      const a = normAxis("select", axis, this.baseDim, "base", this);
      const n = this.baseShape[a]!;
      checkBound("select", "index", i, this);
      const k = i < 0 ? i + n : i;
      if (!Number.isInteger(k) || k < 0 || k >= n)
        throw new ShapeError(`select: index ${i} is out of range for base axis ${axis} of x ${this.toString()}`);
      return this.slice(a, k, k + 1).squeeze(a);
    },
    matmul(this: Tensor, y: Tensor): Tensor {
      if (!(y instanceof Tensor))
        throw new DTypeError(`matmul: y must be a Tensor, got ${describe(y)} (x ${this.toString()})`);
      const d = promote(this.dtype, y.dtype);
      const dt = d === "bool" ? "int32" : d;
      return Tensor._op("matmul", [this.cast(dt), y.cast(dt)]);
    },
    batchReshape(this: Tensor, shape: readonly number[]): Tensor {
      checkSizes("batchReshape", "shape", shape, -1, this);
      if (this._type.batch.every((d) => typeof d === "number")) {
        inferShape("batchReshape", shape, prod(this.batchShape), this, "batch");
      }
      return Tensor._op("batch_reshape", [this], { shape: [...shape] });
    },
    batchUnsqueeze(this: Tensor, d: number): Tensor {
      const dim = normAxis("batchUnsqueeze", d, this.batchDim + 1, "batch", this);
      return Tensor._op("batch_unsqueeze", [this], { dim });
    },
    batchSqueeze(this: Tensor, d: number): Tensor {
      return Tensor._op("batch_squeeze", [this], { dim: normAxis("batchSqueeze", d, this.batchDim, "batch", this) });
    },
    batchSlice(this: Tensor, axis: number, start = 0, stop?: number, step = 1): Tensor {
      const a = normAxis("batchSlice", axis, this.batchDim, "batch", this);
      checkBound("batchSlice", "start", start, this);
      if (stop !== undefined) checkBound("batchSlice", "stop", stop, this);
      if (!Number.isInteger(step) || step <= 0)
        throw new ShapeError(`batchSlice: step ${step} must be a positive integer for x ${this.toString()}`);
      const n = this.batchShape[a]!;
      if (n < 0) {
        if (start < 0 || (stop !== undefined && stop < 0)) {
          throw new TraceError(
            `batchSlice: negative bounds need a concrete batch size, x ${this.toString()} is traced`,
          );
        }
        return Tensor._op("batch_slice", [this], { axis: a, start, stop: stop ?? -1, step });
      }
      const clamp = (v: number) => Math.min(n, Math.max(0, v < 0 ? v + n : v));
      const s = clamp(start);
      const e = Math.max(s, clamp(stop ?? n));
      if (s === 0 && e === n && step === 1) return this;
      return Tensor._op("batch_slice", [this], { axis: a, start: s, stop: e, step });
    },
    batchIndex(this: Tensor, axis: number | readonly unknown[], i?: number): Tensor {
      const a = normAxis("batchIndex", axis as number, this.batchDim, "batch", this);
      const n = this.batchShape[a]!;
      checkBound("batchIndex", "index", i, this);
      if (n < 0 && i < 0)
        throw new TraceError(
          `batchIndex: a negative index needs a concrete batch size, x ${this.toString()} is traced`,
        );
      const k = i < 0 ? i + n : i;
      if (!Number.isInteger(k) || k < 0 || (n >= 0 && k >= n)) {
        throw new ShapeError(`batchIndex: index ${i} is out of range for batch dim ${axis} of x ${this.toString()}`);
      }
      return Tensor._op(
        "batch_squeeze",
        [Tensor._op("batch_slice", [this], { axis: a, start: k, stop: k + 1, step: 1 })],
        { dim: a },
      );
    },
    rebatch(this: Tensor, batchDim: number): Tensor {
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
    },
    batchFlatten(this: Tensor): Tensor {
      return Tensor._op("batch_reshape", [this], { shape: [-1] });
    },
    batchExpand(this: Tensor, shape: readonly number[]): Tensor {
      checkSizes("batchExpand", "shape", shape, -1, this);
      return asCalled("batchExpand", () => Tensor._op("batch_expand", [this], { shape: [...shape] }));
    },
  } satisfies { [M in (typeof OTHER_OP_NAMES)[number]]: Tensor[M] };
}

/** The names of the methods `installTensorOps` puts on `Tensor.prototype` (batchwise/runtime stubs each of them). */
export const TENSOR_OP_NAMES: readonly string[] = Object.freeze(Object.keys(methods()));

/** Installs the methods above on `Tensor.prototype` (`installCompiler` calls it; repeated calls do nothing more). */
export function installTensorOps(): void {
  const P = Tensor.prototype as unknown as Record<string, unknown>;
  // A batchwise/runtime stub (or nothing) until now: put the real method in its place.
  if (Object.hasOwn(P, "add") && !(P.add as { stub?: true }).stub) return;
  for (const [name, fn] of Object.entries(methods()))
    Object.defineProperty(P, name, { value: fn, writable: true, configurable: true, enumerable: false });
}
