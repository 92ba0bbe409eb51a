/**
 * The closed op set of the graph IR and its one typed table (docs/ARCHITECTURE.md, The graph IR).
 * Adding an op to the union without its table entry fails `tsc`.
 */
import { isDType, isFloat, isInt, type DType } from "./dtype.js";
import { DTypeError, ShapeError } from "./errors.js";
import { ELEMENTWISE, factsOf, type KBinaryOp, type KUnaryOp } from "./elementwise.js";
import { ROUTINE_FACTS, ROUTINE_NAMES } from "./routine-facts.js";
import type { KReduceOp } from "./kernel.js";
import { reductionDType, reductionFacts, SEGMENT_REDUCE_OPS, type SegmentReduceOp } from "./reductions.js";
import {
  broadcastShapes,
  broadcastTypes,
  fmtShape,
  fmtTypeShape,
  isConcrete,
  prod,
  type Dim,
  type TensorType,
} from "./types.js";

export {
  ARITH_BINARY,
  BINARY_OPS,
  COMPARE_BINARY,
  FLOAT_BINARY,
  FLOAT_UNARY,
  LOGICAL_BINARY,
  PREDICATE_UNARY,
  UNARY_OPS,
} from "./elementwise.js";

export { REDUCE_OPS } from "./reductions.js";

export type MovementOp =
  | "reshape"
  | "permute"
  | "expand"
  | "slice"
  | "batch_reshape"
  | "batch_unsqueeze"
  | "batch_squeeze"
  | "batch_expand"
  | "batch_slice"
  | "batch_concat"
  | "rebatch";
export const MOVEMENT_OPS: ReadonlySet<MovementOp> = new Set<MovementOp>([
  "reshape",
  "permute",
  "expand",
  "slice",
  "batch_reshape",
  "batch_unsqueeze",
  "batch_squeeze",
  "batch_expand",
  "batch_slice",
  "batch_concat",
  "rebatch",
]);
/**
 * Ops that reinterpret a contiguous buffer without moving data: batch reshapes, and
 * `rebatch`, which moves the batch/base boundary (row-major storage is the same under any split).
 */
export const VIEW_OPS: ReadonlySet<Op> = new Set<Op>(["batch_reshape", "batch_unsqueeze", "batch_squeeze", "rebatch"]);
/** Ops that move whole blocks of a contiguous buffer (run as copies, not kernels). */
export const COPY_OPS: ReadonlySet<Op> = new Set<Op>(["batch_slice", "batch_concat"]);

/**
 * Ragged ops. A jagged tensor is `values (T; S)` (the rows packed one after the
 * other) plus `offsets (B+1;)` int32, row b being values[offsets[b] .. offsets[b+1]).
 */
export type SegmentOp = "segment_reduce" | "segment_expand" | "segment_pad" | "segment_mask" | "segment_unpad";
export const SEGMENT_OPS: ReadonlySet<string> = new Set<SegmentOp>([
  "segment_reduce",
  "segment_expand",
  "segment_pad",
  "segment_mask",
  "segment_unpad",
]);
export type { SegmentReduceOp } from "./reductions.js";

export type Op =
  | "input"
  | "const"
  | "cast"
  | "where"
  | "matmul"
  | "concat"
  | "take"
  | "scatter"
  | "routine"
  | SegmentOp
  | KUnaryOp
  | KBinaryOp
  | KReduceOp
  | MovementOp;

export type AttrValue = number | boolean | string | readonly number[];
export type Attrs = Readonly<Record<string, AttrValue>>;

/** How one op infers its result type from its input types and its attributes (typed by its spec `S`). */
export type TypeRule<S extends AttrSpec = AttrSpec> = (
  op: Op,
  ins: readonly TensorType[],
  attrs: SpecAttrs<S>,
) => TensorType;

export interface OpInfo {
  /** Number of inputs; -1 for one or more. */
  readonly arity: number;
  /** Argument names used in error messages. */
  readonly args: readonly string[];
  /** The attribute names and the kind of value each holds (exactly these keys). */
  readonly attrs: AttrSpec;
  /** Infers the result type; throws ShapeError/DTypeError naming the op and argument. */
  type(op: Op, ins: readonly TensorType[], attrs: Attrs): TensorType;
}

/** An `OpInfo` whose attribute spec `S` is kept literal, so that its type rule reads typed attributes. */
interface TypedOpInfo<S extends AttrSpec> {
  readonly arity: number;
  readonly args: readonly string[];
  readonly attrs: S;
  type(op: Op, ins: readonly TensorType[], attrs: SpecAttrs<S>): TensorType;
}

/**
 * The most elements a tensor may have: 2^31 - 1, so that every element index
 * (and every `argmax` result, an int32) fits a signed 32-bit integer, on both
 * backends. Larger sizes are a ShapeError when the tensor is made, not a
 * RangeError from an allocation, or a wrapped index in a kernel.
 */
export const MAX_ELEMENTS = 2 ** 31 - 1;

/**
 * Throws a ShapeError when a type with known sizes has more than MAX_ELEMENTS
 * elements (symbolic batch dims are checked when they bind to sizes).
 */
export function checkElementCount(
  op: string,
  t: { readonly batch: readonly Dim[]; readonly base: readonly number[] },
  what = "the result",
): void {
  let n = 1;
  for (const d of t.batch) if (typeof d === "number") n *= d;
  for (const d of t.base) n *= d;
  if (n > MAX_ELEMENTS) {
    throw new ShapeError(
      `${op}: ${what} ${fmtShape(t.batch, t.base)} would have ${n} elements, more than the limit ${MAX_ELEMENTS} (2^31 - 1)`,
    );
  }
}

/**
 * A type rule whose result can hold more elements than its inputs (broadcasts,
 * expands, matmul, concatenation, padding), checked against MAX_ELEMENTS. Rules
 * that only keep or shrink the element count skip the check.
 */
function sized<A>(
  rule: (op: Op, ins: readonly TensorType[], attrs: A) => TensorType,
): (op: Op, ins: readonly TensorType[], attrs: A) => TensorType {
  return (op, ins, attrs) => {
    const t = rule(op, ins, attrs);
    checkElementCount(op, t);
    return t;
  };
}

/**
 * The kind of an attribute value: `int` any integer, `nat` an integer >= 0,
 * `maxN` an integer >= -1, `number` any JS number (NaN, ±Infinity and -0
 * included), `bool`, `dtype` a dtype name, `ints` an array of integers, or a
 * list of the allowed strings.
 */
export type AttrKind = "int" | "nat" | "maxN" | "number" | "bool" | "dtype" | "ints" | readonly string[];
export type AttrSpec = Readonly<Record<string, AttrKind>>;

/** The TypeScript type of a value of attribute kind `T` (what `kindProblem` accepts). */
export type AttrKindValue<T extends AttrKind> = T extends "int" | "nat" | "maxN" | "number"
  ? number
  : T extends "bool"
    ? boolean
    : T extends "dtype"
      ? DType
      : T extends "ints"
        ? readonly number[]
        : T extends readonly (infer W extends string)[]
          ? W
          : never;

/**
 * The attributes a spec admits, as a TypeScript type: exactly its keys, each of
 * its kind's type (no keys at all for an empty spec). Distributes over a union
 * of specs.
 */
export type SpecAttrs<S extends AttrSpec> = S extends AttrSpec
  ? string extends keyof S
    ? S extends NoAttrSpec
      ? NoAttrs
      : { readonly [k: string]: AttrKindValue<S[string]> }
    : { readonly [P in keyof S]: AttrKindValue<S[P]> }
  : never;

/** The spec of an op without attributes, and its (empty) attributes. */
type NoAttrSpec = { readonly [k: string]: never };
export type NoAttrs = { readonly [k: string]: never };

/** An op's table entry with its attribute spec kept literal, so its type rule gets typed attributes. */
function def<const S extends AttrSpec>(info: TypedOpInfo<S>): TypedOpInfo<S> {
  return info;
}

const noAttrs: NoAttrSpec = {};
const reduceAttrs = { batchAxes: "ints", baseAxes: "ints", keep: "bool" } as const;
const rebatchSpec = { batchDim: "nat", base: "ints" } as const;
const sliceSpec = { axis: "nat", start: "int", stop: "int", step: "int" } as const;
const shapeSpec = { shape: "ints" } as const;
const axisSpec = { axis: "nat" } as const;
const maxNSpec = { maxN: "maxN" } as const;
type SliceAttrs = SpecAttrs<typeof sliceSpec>;

function kindProblem(kind: AttrKind, v: unknown): string | undefined {
  switch (kind) {
    case "int":
      return Number.isInteger(v) ? undefined : "must be an integer";
    case "nat":
      return Number.isInteger(v) && (v as number) >= 0 ? undefined : "must be an integer >= 0";
    case "maxN":
      return Number.isInteger(v) && (v as number) >= -1 ? undefined : "must be an integer >= -1";
    case "number":
      return typeof v === "number" ? undefined : "must be a number";
    case "bool":
      return typeof v === "boolean" ? undefined : "must be a boolean";
    case "dtype":
      return typeof v === "string" && isDType(v) ? undefined : "must be a dtype";
    case "ints":
      return Array.isArray(v) && v.every((x) => Number.isInteger(x)) ? undefined : "must be a list of integers";
    default:
      return typeof v === "string" && kind.includes(v) ? undefined : `must be one of ${kind.join(", ")}`;
  }
}

/**
 * Why `attrs` are not the attributes of `op` (exactly the keys of its spec, each
 * value of its kind), or undefined. A plain check, cheap enough for every node
 * creation: the IR text parser, the verifier and `Node.make` all rely on it.
 */
export function attrProblem(op: Op, attrs: unknown): string | undefined {
  if (attrs === null || typeof attrs !== "object" || Array.isArray(attrs)) return "not an object";
  const proto = Object.getPrototypeOf(attrs);
  if (proto !== Object.prototype && proto !== null) return "not a plain object";
  const spec = OPS[op].attrs;
  const a = attrs as Record<string, unknown>;
  for (const k of Object.keys(a)) {
    if (!Object.prototype.hasOwnProperty.call(spec, k)) return `unknown attribute ${JSON.stringify(k)}`;
  }
  for (const k of Object.keys(spec)) {
    if (!Object.prototype.hasOwnProperty.call(a, k)) return `${k} is missing`;
    const why = kindProblem(spec[k]!, a[k]);
    if (why !== undefined) return `${k} ${why}`;
  }
  return undefined;
}

function argType(op: Op, name: string, t: TensorType): string {
  return `${op}: ${name} ${fmtTypeShape(t)} of dtype ${t.dtype}`;
}

function unaryType(op: Op, [x]: readonly TensorType[]): TensorType {
  const rule = factsOf(op as KUnaryOp).dtype;
  if (rule === "float" && !isFloat(x!.dtype)) throw new DTypeError(`${argType(op, "x", x!)}: needs a float dtype`);
  if (rule === "logical" && x!.dtype !== "bool") throw new DTypeError(`${argType(op, "x", x!)}: needs bool`);
  if (rule === "arith" && x!.dtype === "bool") throw new DTypeError(`${argType(op, "x", x!)}: not defined on bool`);
  if (rule === "int" && !isInt(x!.dtype)) throw new DTypeError(`${argType(op, "x", x!)}: needs an integer dtype`);
  return { dtype: rule === "predicate" ? "bool" : x!.dtype, batch: x!.batch, base: x!.base };
}

function binaryType(op: Op, [x, y]: readonly TensorType[]): TensorType {
  const rule = factsOf(op as KBinaryOp).dtype;
  if (x!.dtype !== y!.dtype) {
    throw new DTypeError(`${op}: x ${fmtTypeShape(x!)} is ${x!.dtype} but y ${fmtTypeShape(y!)} is ${y!.dtype}`);
  }
  if (rule === "logical" && x!.dtype !== "bool") throw new DTypeError(`${argType(op, "x", x!)}: needs bool`);
  if ((rule === "arith" || rule === "float") && x!.dtype === "bool")
    throw new DTypeError(`${argType(op, "x", x!)}: not defined on bool`);
  if (rule === "float" && !isFloat(x!.dtype)) throw new DTypeError(`${argType(op, "x", x!)}: needs a float dtype`);
  if (rule === "int" && !isInt(x!.dtype)) throw new DTypeError(`${argType(op, "x", x!)}: needs an integer dtype`);
  const { batch, base } = broadcastTypes(op, [
    { name: "x", type: x! },
    { name: "y", type: y! },
  ]);
  return { dtype: rule === "compare" || rule === "logical" ? "bool" : x!.dtype, batch, base };
}

/**
 * Reduction axes are canonical: in range and strictly increasing. Kernels walk
 * the reduced axes in this order (an inlined reduction pairs the k-th reduced
 * coordinate with the k-th reduced axis of the input), so the attribute admits
 * one spelling per set of axes; the frontend sorts, and IR text with `[1,0]`
 * or `[0,0]` is refused here instead of reaching a kernel.
 */
function checkAxes(op: Op, what: "batch" | "base", axes: readonly number[], rank: number, x: TensorType): void {
  let prev = -1;
  for (const a of axes) {
    if (a < 0 || a >= rank) throw new ShapeError(`${op}: ${what} axis ${a} is out of range for x ${fmtTypeShape(x)}`);
    if (a === prev) throw new ShapeError(`${op}: repeated ${what} axis ${a} for x ${fmtTypeShape(x)}`);
    if (a < prev)
      throw new ShapeError(
        `${op}: ${what} axes (${axes.join(",")}) must be sorted in increasing order for x ${fmtTypeShape(x)}`,
      );
    prev = a;
  }
}

/** A size list of an attribute (`reshape`, `expand`, …): every entry `>= min` (-1 where a dim is kept or inferred). */
function checkSizes(op: Op, what: string, shape: readonly number[], min: number, x: TensorType): void {
  for (const d of shape) {
    if (d < min)
      throw new ShapeError(`${op}: ${what} (${shape.join(",")}) has an invalid size ${d} for x ${fmtTypeShape(x)}`);
  }
}

function reduceType(op: Op, [x]: readonly TensorType[], attrs: SpecAttrs<typeof reduceAttrs>): TensorType {
  const { batchAxes, baseAxes, keep } = attrs;
  checkAxes(op, "batch", batchAxes, x!.batch.length, x!);
  checkAxes(op, "base", baseAxes, x!.base.length, x!);
  const o = op as KReduceOp;
  const f = reductionFacts(o);
  if (f.positional && batchAxes.length + baseAxes.length !== 1) {
    throw new ShapeError(
      `${op}: needs exactly one axis, got ${batchAxes.length + baseAxes.length} for x ${fmtTypeShape(x!)}`,
    );
  }
  const shrink = <D>(dims: readonly D[], axes: readonly number[], one: D): D[] =>
    keep ? dims.map((d, i) => (axes.includes(i) ? one : d)) : dims.filter((_, i) => !axes.includes(i));
  // The dtype rule of the facts table: sums and products of bool are int32, of the narrow integers (as
  // NumPy's, which give its default 64-bit integers) the 32-bit integer of the same signedness; …
  const dtype = reductionDType(o, x!.dtype);
  for (const a of baseAxes) {
    if (x!.base[a] === 0 && f.nonEmpty) {
      throw new ShapeError(`${op}: cannot reduce an empty base axis ${a} of x ${fmtTypeShape(x!)}`);
    }
  }
  return { dtype, batch: shrink<Dim>(x!.batch, batchAxes, 1), base: shrink(x!.base, baseAxes, 1) };
}

function reshapeType(op: Op, [x]: readonly TensorType[], attrs: SpecAttrs<typeof shapeSpec>): TensorType {
  const shape = attrs.shape;
  if (shape.some((d) => d < 0) || prod(shape) !== prod(x!.base)) {
    throw new ShapeError(`${op}: cannot reshape the base of x ${fmtTypeShape(x!)} to (${shape.join(",")})`);
  }
  return { dtype: x!.dtype, batch: x!.batch, base: shape };
}

function permuteType(op: Op, [x]: readonly TensorType[], attrs: SpecAttrs<{ perm: "ints" }>): TensorType {
  const perm = attrs.perm;
  const n = x!.base.length;
  if (perm.length !== n || new Set(perm).size !== n || perm.some((p) => p < 0 || p >= n)) {
    throw new ShapeError(`${op}: (${perm.join(",")}) is not a permutation of the base axes of x ${fmtTypeShape(x!)}`);
  }
  return { dtype: x!.dtype, batch: x!.batch, base: perm.map((p) => x!.base[p]!) };
}

function expandType(op: Op, [x]: readonly TensorType[], attrs: SpecAttrs<typeof shapeSpec>): TensorType {
  const shape = attrs.shape;
  checkSizes(op, "shape", shape, 0, x!);
  const r = broadcastShapes<number>(x!.base, shape);
  if (shape.length < x!.base.length || !r.ok || r.shape.some((d, i) => d !== shape[i])) {
    throw new ShapeError(`${op}: cannot expand the base of x ${fmtTypeShape(x!)} to (${shape.join(",")})`);
  }
  return { dtype: x!.dtype, batch: x!.batch, base: shape };
}

function sliceType(op: Op, [x]: readonly TensorType[], attrs: SliceAttrs): TensorType {
  const { axis, start, stop, step } = attrs;
  const n = x!.base[axis];
  if (n === undefined) throw new ShapeError(`${op}: base axis ${axis} is out of range for x ${fmtTypeShape(x!)}`);
  if (step <= 0 || start < 0 || stop > n || start > stop) {
    throw new ShapeError(
      `${op}: ${start}:${stop}:${step} is not a valid slice of base axis ${axis} of x ${fmtTypeShape(x!)}`,
    );
  }
  const base = [...x!.base];
  base[axis] = Math.ceil((stop - start) / step);
  return { dtype: x!.dtype, batch: x!.batch, base };
}

function batchReshapeType(op: Op, [x]: readonly TensorType[], attrs: SpecAttrs<typeof shapeSpec>): TensorType {
  const shape = attrs.shape;
  const bad = (): never => {
    throw new ShapeError(`${op}: cannot reshape the batch of x ${fmtTypeShape(x!)} to (${shape.join(",")})`);
  };
  const inferred = shape.filter((d) => d === -1).length;
  if (inferred > 1 || shape.some((d) => d < -1)) bad();
  const known = prod(shape.filter((d) => d !== -1));
  if (isConcrete(x!.batch)) {
    const total = prod(x!.batch);
    if (inferred === 0 ? total !== known : known === 0 || total % known !== 0) bad();
    return { dtype: x!.dtype, batch: shape.map((d) => (d === -1 ? total / known : d)), base: x!.base };
  }
  if (inferred === 0) return { dtype: x!.dtype, batch: shape, base: x!.base };
  const num = x!.batch.filter((d) => d !== 1).join("*") || "1";
  const sym = known === 1 ? num : `${num}/${known}`;
  return { dtype: x!.dtype, batch: shape.map((d) => (d === -1 ? sym : d)), base: x!.base };
}

/**
 * The same dims split after `batchDim`. The new base is the attribute `base` (a
 * static shape): batch dims moving into it are checked against it when their
 * sizes are known, so a graph built with symbolic batch dims checks them per call.
 */
function rebatchType(op: Op, [x]: readonly TensorType[], attrs: SpecAttrs<typeof rebatchSpec>): TensorType {
  const k = attrs.batchDim;
  const base = attrs.base;
  checkSizes(op, "base", base, 0, x!);
  const full = [...x!.batch, ...x!.base];
  if (
    k > full.length ||
    full.length - k !== base.length ||
    full.slice(k).some((d, i) => typeof d === "number" && d !== base[i])
  ) {
    throw new ShapeError(
      `${op}: x ${fmtTypeShape(x!)} split after ${k} dims does not give the base (${base.join(",")})`,
    );
  }
  return { dtype: x!.dtype, batch: full.slice(0, k), base };
}

function batchSliceType(op: Op, [x]: readonly TensorType[], attrs: SliceAttrs): TensorType {
  const { axis, start, stop, step } = attrs;
  const d = x!.batch[axis];
  const bad = (why: string): never => {
    throw new ShapeError(
      `${op}: ${start}:${stop < 0 ? "" : stop}:${step} ${why} for batch axis ${axis} of x ${fmtTypeShape(x!)}`,
    );
  };
  if (d === undefined) bad("is out of range");
  const batch = [...x!.batch];
  if (step < 0) {
    // A negative step walks backwards from position n-1-start (start counts from the end,
    // so it is known for a symbolic size) through position 0 (stop must be -1): NumPy's
    // x[n-1-start::step], e.g. start 0, step -1 reverses the axis.
    if (start < 0 || stop !== -1)
      bad("is not a valid slice (a negative step needs start >= 0, counted from the end, and stop -1)");
    // Bounds past the size clamp as in NumPy (a start past the size gives an empty slice), so a
    // symbolic size that turns out small at run time slices as the eager call does.
    if (typeof d === "number") batch[axis] = start >= d ? 0 : Math.ceil((d - start) / -step);
    else batch[axis] = `(${d}-${start})/${-step}`;
    return { dtype: x!.dtype, batch, base: x!.base };
  }
  // stop -1 means "to the end" (the only way to say it for a symbolic size).
  if (step < 1 || start < 0 || stop < -1 || (stop >= 0 && stop < start)) bad("is not a valid slice");
  if (typeof d === "number") {
    // NumPy's clamping: bounds past the size stop at the size (eager batchSlice clamps the same way).
    const end = Math.min(stop < 0 ? d : stop, d);
    batch[axis] = start >= end ? 0 : Math.ceil((end - start) / step);
  } else {
    // With a stop, the size is that of NumPy's n[start:stop:step] at run time (b0[1:10]): a size of its
    // own, not stop - start.
    batch[axis] = stop >= 0 ? `${d}[${start}:${stop}${step === 1 ? "" : `:${step}`}]` : `(${d}-${start})/${step}`;
  }
  return { dtype: x!.dtype, batch, base: x!.base };
}

function batchConcatType(op: Op, ins: readonly TensorType[], attrs: SpecAttrs<typeof axisSpec>): TensorType {
  const axis = attrs.axis;
  const first = ins[0]!;
  if (axis >= first.batch.length)
    throw new ShapeError(`${op}: batch axis ${axis} is out of range for x0 ${fmtTypeShape(first)}`);
  const sizes: Dim[] = [];
  ins.forEach((t, i) => {
    if (t.dtype !== first.dtype)
      throw new DTypeError(
        `${op}: x${i} ${fmtTypeShape(t)} is ${t.dtype} but x0 ${fmtTypeShape(first)} is ${first.dtype}`,
      );
    const same = (a: readonly Dim[], b: readonly Dim[], skip: number): boolean =>
      a.length === b.length &&
      a.every((d, j) => j === skip || d === b[j] || typeof d === "string" || typeof b[j] === "string");
    if (!same(t.batch, first.batch, axis) || !same(t.base, first.base, -1)) {
      throw new ShapeError(
        `${op}: x${i} ${fmtTypeShape(t)} does not match x0 ${fmtTypeShape(first)} outside batch axis ${axis}`,
      );
    }
    sizes.push(t.batch[axis]!);
  });
  const batch = [...first.batch];
  batch[axis] = sizes.every((s) => typeof s === "number")
    ? (sizes as number[]).reduce((a, b) => a + b, 0)
    : sizes.join("+");
  return { dtype: first.dtype, batch, base: first.base };
}

function batchExpandType(op: Op, [x]: readonly TensorType[], attrs: SpecAttrs<typeof shapeSpec>): TensorType {
  const shape = attrs.shape;
  const n = shape.length;
  const xb = x!.batch;
  const bad = (why: string): never => {
    throw new ShapeError(`${op}: cannot expand the batch of x ${fmtTypeShape(x!)} to (${shape.join(",")}): ${why}`);
  };
  if (n < xb.length) bad("fewer dims than x");
  checkSizes(op, "shape", shape, -1, x!);
  const out: Dim[] = [];
  for (let i = 0; i < n; i++) {
    const t = shape[i]!;
    const d = xb[xb.length - n + i];
    if (d === undefined) {
      if (t < 0) bad(`new dim ${i} cannot be -1`);
      out.push(t);
    } else if (t === -1) out.push(d);
    else if (d === 1 || d === t || typeof d === "string") out.push(t);
    else bad(`dim ${i} is ${d} vs ${t}`);
  }
  return { dtype: x!.dtype, batch: out, base: x!.base };
}

function matmulType(op: Op, [a, b]: readonly TensorType[]): TensorType {
  if (a!.dtype !== b!.dtype) {
    throw new DTypeError(`${op}: x ${fmtTypeShape(a!)} is ${a!.dtype} but y ${fmtTypeShape(b!)} is ${b!.dtype}`);
  }
  if (a!.dtype === "bool") throw new DTypeError(`${argType(op, "x", a!)}: not defined on bool`);
  if (a!.base.length === 0 || b!.base.length === 0) {
    throw new ShapeError(`${op}: x ${fmtTypeShape(a!)} and y ${fmtTypeShape(b!)} need at least one base dim each`);
  }
  const am = a!.base.length === 1 ? [1, a!.base[0]!] : a!.base;
  const bm = b!.base.length === 1 ? [b!.base[0]!, 1] : b!.base;
  const k1 = am[am.length - 1]!;
  const k2 = bm[bm.length - 2]!;
  if (k1 !== k2) {
    throw new ShapeError(`${op}: x ${fmtTypeShape(a!)} has ${k1} columns but y ${fmtTypeShape(b!)} has ${k2} rows`);
  }
  // The batch dims and the leading (stacked) base dims broadcast; messages show the whole operands.
  const rb = broadcastShapes<Dim>(a!.batch, b!.batch);
  if (!rb.ok)
    throw new ShapeError(
      `${op}: cannot broadcast x ${fmtTypeShape(a!)} with y ${fmtTypeShape(b!)}: batch dim ${rb.dim} is ${rb.a} vs ${rb.b}`,
    );
  const rl = broadcastShapes<number>(am.slice(0, -2), bm.slice(0, -2));
  if (!rl.ok)
    throw new ShapeError(
      `${op}: cannot broadcast x ${fmtTypeShape(a!)} with y ${fmtTypeShape(b!)}: leading base dim ${rl.dim} is ${rl.a} vs ${rl.b}`,
    );
  const batch = rb.shape;
  const base = [...rl.shape];
  if (a!.base.length > 1) base.push(am[am.length - 2]!);
  if (b!.base.length > 1) base.push(bm[bm.length - 1]!);
  return { dtype: a!.dtype, batch, base };
}

function concatType(op: Op, ins: readonly TensorType[], attrs: SpecAttrs<typeof axisSpec>): TensorType {
  const axis = attrs.axis;
  const first = ins[0]!;
  if (axis >= first.base.length)
    throw new ShapeError(`${op}: base axis ${axis} is out of range for x0 ${fmtTypeShape(first)}`);
  let batch: Dim[] = [...first.batch];
  let size = 0;
  ins.forEach((t, i) => {
    if (t.dtype !== first.dtype)
      throw new DTypeError(
        `${op}: x${i} ${fmtTypeShape(t)} is ${t.dtype} but x0 ${fmtTypeShape(first)} is ${first.dtype}`,
      );
    if (t.base.length !== first.base.length || t.base.some((d, j) => j !== axis && d !== first.base[j])) {
      throw new ShapeError(
        `${op}: x${i} ${fmtTypeShape(t)} does not match x0 ${fmtTypeShape(first)} outside base axis ${axis}`,
      );
    }
    const r = broadcastShapes<Dim>(batch, t.batch);
    if (!r.ok)
      throw new ShapeError(
        `${op}: cannot broadcast x0 ${fmtTypeShape(first)} with x${i} ${fmtTypeShape(t)}: batch dim ${r.dim} is ${r.a} vs ${r.b}`,
      );
    batch = r.shape;
    size += t.base[axis]!;
  });
  const base = [...first.base];
  base[axis] = size;
  return { dtype: first.dtype, batch, base };
}

function checkOffsets(op: Op, o: TensorType): Dim {
  if (o.dtype !== "int32" || o.batch.length !== 1 || o.base.length !== 0) {
    throw new ShapeError(`${op}: offsets must be int32 (B+1;), got offsets ${fmtTypeShape(o)} of dtype ${o.dtype}`);
  }
  const r = o.batch[0]!;
  if (typeof r === "number") {
    if (r < 1) throw new ShapeError(`${op}: offsets ${fmtTypeShape(o)} needs at least one entry`);
    return r - 1;
  }
  return `${r}-1`;
}

/**
 * The padded length of segment_pad/segment_mask: `maxN`, or with `maxN: -1` the
 * longest row of the offsets, known only at run time: the symbol `~<offsets length>`
 * (bound per call by `inferConcrete`'s run-time lengths).
 */
function paddedLength(o: TensorType, attrs: SpecAttrs<typeof maxNSpec>): Dim {
  const maxN = attrs.maxN;
  return maxN >= 0 ? maxN : `~${o.batch[0]!}`;
}

function checkPacked(op: Op, name: string, t: TensorType): void {
  if (t.batch.length !== 1)
    throw new ShapeError(`${op}: ${name} must have one (packed) batch dim, got ${name} ${fmtTypeShape(t)}`);
}

const segmentReduceSpec = { op: SEGMENT_REDUCE_OPS } as const;
const segmentPadSpec = { maxN: "maxN", value: "number", left: "bool" } as const;
const segmentMaskSpec = { maxN: "maxN", left: "bool" } as const;

function segmentReduceType(op: Op, ins: readonly TensorType[], attrs: SpecAttrs<typeof segmentReduceSpec>): TensorType {
  const [v, o] = ins;
  checkPacked(op, "values", v!);
  const rows = checkOffsets(op, o!);
  const r: SegmentReduceOp = attrs.op;
  if (v!.dtype === "bool" && r !== "count")
    throw new DTypeError(`${op}: values ${fmtTypeShape(v!)} of dtype bool cannot be reduced with ${r}`);
  return { dtype: reductionDType(r, v!.dtype), batch: [rows], base: v!.base };
}

function segmentExpandType(op: Op, ins: readonly TensorType[]): TensorType {
  const [x, o, like] = ins;
  const rows = checkOffsets(op, o!);
  checkPacked(op, "like", like!);
  if (
    x!.batch.length !== 1 ||
    (typeof x!.batch[0] === "number" && typeof rows === "number" && x!.batch[0] !== rows && x!.batch[0] !== 1)
  ) {
    throw new ShapeError(
      `${op}: x ${fmtTypeShape(x!)} must have one batch dim of ${rows} rows (offsets ${fmtTypeShape(o!)})`,
    );
  }
  return { dtype: x!.dtype, batch: like!.batch, base: x!.base };
}

function segmentUnpadType(op: Op, ins: readonly TensorType[]): TensorType {
  // Rows of a right-padded (B, M; base) tensor, packed like `like`; positions >= M read 0.
  const [p, o, like] = ins;
  const rows = checkOffsets(op, o!);
  checkPacked(op, "like", like!);
  if (p!.batch.length !== 2 || (typeof p!.batch[0] === "number" && typeof rows === "number" && p!.batch[0] !== rows)) {
    throw new ShapeError(
      `${op}: padded ${fmtTypeShape(p!)} must be (B, M; base) with B = ${rows} rows (offsets ${fmtTypeShape(o!)})`,
    );
  }
  return { dtype: p!.dtype, batch: like!.batch, base: p!.base };
}

function segmentPadType(op: Op, ins: readonly TensorType[], attrs: SpecAttrs<typeof segmentPadSpec>): TensorType {
  const [v, o] = ins;
  checkPacked(op, "values", v!);
  return { dtype: v!.dtype, batch: [checkOffsets(op, o!), paddedLength(o!, attrs)], base: v!.base };
}

function segmentMaskType(op: Op, ins: readonly TensorType[], attrs: SpecAttrs<typeof segmentMaskSpec>): TensorType {
  const [o] = ins;
  return { dtype: "bool", batch: [checkOffsets(op, o!), paddedLength(o!, attrs)], base: [] };
}

function whereType(op: Op, [c, x, y]: readonly TensorType[]): TensorType {
  if (c!.dtype !== "bool") throw new DTypeError(`${argType(op, "cond", c!)}: needs bool`);
  if (x!.dtype !== y!.dtype) {
    throw new DTypeError(`${op}: x ${fmtTypeShape(x!)} is ${x!.dtype} but y ${fmtTypeShape(y!)} is ${y!.dtype}`);
  }
  const { batch, base } = broadcastTypes(op, [
    { name: "cond", type: c! },
    { name: "x", type: x! },
    { name: "y", type: y! },
  ]);
  return { dtype: x!.dtype, batch, base };
}

/**
 * `take` (NumPy's `np.take(x, idx, axis)` on base axis `axis`): base axis `axis`
 * of x is replaced by idx's base dims; x's and idx's batch dims broadcast.
 * `x (B; s…, n, t…)`, int32 `idx (B'; k…)` → `(B∘B'; s…, k…, t…)`. An index i
 * reads position i, or i + n when i < 0 (negative indices wrap once, as NumPy);
 * an index outside [-n, n) gives the fill value of JAX's default `mode="fill"`:
 * NaN for floats, the most negative int32, the largest uint32, true for bool.
 */
function takeType(op: Op, [x, idx]: readonly TensorType[], attrs: SpecAttrs<typeof axisSpec>): TensorType {
  const axis = attrs.axis;
  if (idx!.dtype !== "int32") throw new DTypeError(`${argType(op, "idx", idx!)}: needs int32 indices`);
  if (axis >= x!.base.length)
    throw new ShapeError(`${op}: base axis ${axis} is out of range for x ${fmtTypeShape(x!)}`);
  const rb = broadcastShapes<Dim>(x!.batch, idx!.batch);
  if (!rb.ok)
    throw new ShapeError(
      `${op}: cannot broadcast x ${fmtTypeShape(x!)} with idx ${fmtTypeShape(idx!)}: batch dim ${rb.dim} is ${rb.a} vs ${rb.b}`,
    );
  const base = [...x!.base.slice(0, axis), ...idx!.base, ...x!.base.slice(axis + 1)];
  return { dtype: x!.dtype, batch: rb.shape, base };
}

// --- scatter (functional updates, JAX's x.at[idx].set/add/mul/min/max) ---

/** How `scatter` combines an update with the value at its position. */
export type ScatterMode = "set" | "add" | "mul" | "min" | "max";
const scatterSpec = { axis: "nat", mode: ["set", "add", "mul", "min", "max"] } as const;

/**
 * `scatter` (JAX's `x.at[..., idx, ...].<mode>(upd)` on base axis `axis`, a
 * functional update): `x (B; s…, n, t…)`, int32 `idx (B'; k…)`, `upd (B''; u…)`
 * where `u…` broadcasts to the update shape `(s…, k…, t…)` (the shape
 * `take(x, idx, axis)` has) → `(B∘B'∘B''; s…, n, t…)`, x's dtype. Each element of
 * the update shape, in row-major order, combines `upd` into position
 * (s…, p, t…) of a copy of x: p = i, or i + n when i < 0 (negative indices wrap
 * once); an index outside [-n, n) is dropped (JAX's default `mode="drop"` for
 * updates). Duplicate positions combine in that order: `add`, `mul`, `min`,
 * `max` accumulate (min/max propagate NaN), and for `set` the last write wins.
 * upd has x's dtype; `add`, `mul`, `min`, `max` are not defined on bool.
 */
function scatterType(op: Op, [x, idx, upd]: readonly TensorType[], attrs: SpecAttrs<typeof scatterSpec>): TensorType {
  // take's rule checks idx and the axis and gives the update shape (and x's and idx's batch).
  const u = takeType(op, [x!, idx!], { axis: attrs.axis });
  if (upd!.dtype !== x!.dtype)
    throw new DTypeError(`${op}: upd ${fmtTypeShape(upd!)} is ${upd!.dtype} but x ${fmtTypeShape(x!)} is ${x!.dtype}`);
  if (attrs.mode !== "set" && x!.dtype === "bool")
    throw new DTypeError(`${argType(op, "x", x!)}: mode ${attrs.mode} is not defined on bool (only set is)`);
  const ub = broadcastShapes<number>(upd!.base, u.base);
  if (!ub.ok || ub.shape.length > u.base.length || ub.shape.some((d, i) => d !== u.base[i]))
    throw new ShapeError(
      `${op}: upd ${fmtTypeShape(upd!)} does not broadcast to the update shape (${u.base.join(",")}) of x ${fmtTypeShape(x!)} at idx ${fmtTypeShape(idx!)} on base axis ${attrs.axis}`,
    );
  const rb = broadcastShapes<Dim>(u.batch, upd!.batch);
  if (!rb.ok)
    throw new ShapeError(
      `${op}: cannot broadcast x ${fmtTypeShape(x!)} and idx ${fmtTypeShape(idx!)} with upd ${fmtTypeShape(upd!)}: batch dim ${rb.dim} is ${rb.a} vs ${rb.b}`,
    );
  return { dtype: x!.dtype, batch: rb.shape, base: x!.base };
}
// --- looped matrix routines ---
// arg: the routine's integer argument: qr's Q columns, eigh's and svd's sweeps, sort's order (1: descending).
const routineSpec = { name: ROUTINE_NAMES, arg: "nat" } as const;

/**
 * `routine` (ir/routines.ts): a looped routine on the 2-D base matrices of its
 * inputs, of a float dtype (`sort`: any numeric dtype; `lu_solve`'s b is cast to
 * the factors' dtype when loaded); batch dims broadcast.
 * `lu`, `cholesky`, `eigh` need square matrices; `lu_solve` lu's (n, n+2) factors
 * and b (n, k); `qr` Q columns (arg) of m or n (the frontend asks for min(m, n) or m); `svd` m ≥ n. The result's base is the
 * routine's output layout (see ir/routines.ts). Kept small: the runtime page ships it.
 */
function routineType(op: Op, ins: readonly TensorType[], a: SpecAttrs<typeof routineSpec>): TensorType {
  const [x, y] = ins as [TensorType, TensorType?];
  const name = a.name;
  const facts = ROUTINE_FACTS[name];
  const [m = -1, n = -1] = x.base;
  const rb = broadcastShapes<Dim>(x.batch, y?.batch ?? []);
  const base = facts.base(m, n, a.arg, y?.base ?? []);
  if (
    !rb.ok ||
    !ins.every((t) => t.base.length === 2) ||
    (facts.dtypes === "float" ? !isFloat(x.dtype) : x.dtype === "bool") ||
    base === undefined
  )
    throw new ShapeError(`${op} ${name}: bad ${JSON.stringify(ins)}`);
  return { dtype: x.dtype, batch: rb.shape, base };
}
// --- end looped matrix routines ---

const unary = def({ arity: 1, args: ["x"], attrs: noAttrs, type: unaryType });
const binary = def({ arity: 2, args: ["x", "y"], attrs: noAttrs, type: sized(binaryType) });
const reduce = def({ arity: 1, args: ["x"], attrs: reduceAttrs, type: reduceType });

/** The graph-IR entry of every elementwise op: its kind says unary or binary; the type rules read its dtype rule. */
const ELEMENTWISE_ENTRIES = Object.fromEntries(
  Object.entries(ELEMENTWISE).map(([op, f]) => [op, f.kind === "unary" ? unary : binary]),
) as { readonly [K in KUnaryOp]: typeof unary } & { readonly [K in KBinaryOp]: typeof binary };

/**
 * The op table with each attribute spec kept literal: `AttrsOf` reads the
 * attribute types from it. Code that does not know its op statically reads the
 * same entries through `OPS`.
 */
const OP_TABLE = {
  input: def({
    arity: 0,
    args: [],
    attrs: { index: "nat" },
    type: () => {
      throw new ShapeError("input: the type of an input is given, not inferred");
    },
  }),
  const: def({
    arity: 0,
    args: [],
    attrs: { dtype: "dtype", value: "number" },
    type: (_op, _ins, attrs) => ({ dtype: attrs.dtype, batch: [], base: [] }),
  }),
  cast: def({
    arity: 1,
    args: ["x"],
    attrs: { dtype: "dtype" },
    type: (_op, [x], attrs) => ({ dtype: attrs.dtype, batch: x!.batch, base: x!.base }),
  }),
  where: def({ arity: 3, args: ["cond", "x", "y"], attrs: noAttrs, type: sized(whereType) }),
  matmul: def({ arity: 2, args: ["x", "y"], attrs: noAttrs, type: sized(matmulType) }),
  segment_reduce: def({
    arity: 2,
    args: ["values", "offsets"],
    attrs: segmentReduceSpec,
    type: sized(segmentReduceType),
  }),
  segment_expand: def({ arity: 3, args: ["x", "offsets", "like"], attrs: noAttrs, type: sized(segmentExpandType) }),
  segment_unpad: def({ arity: 3, args: ["padded", "offsets", "like"], attrs: noAttrs, type: sized(segmentUnpadType) }),
  segment_pad: def({
    arity: 2,
    args: ["values", "offsets"],
    // maxN -1: the longest row, read from the offsets at run time.
    attrs: segmentPadSpec,
    type: sized(segmentPadType),
  }),
  segment_mask: def({
    arity: 1,
    args: ["offsets"],
    attrs: segmentMaskSpec,
    type: sized(segmentMaskType),
  }),
  concat: def({ arity: -1, args: [], attrs: axisSpec, type: sized(concatType) }),
  take: def({ arity: 2, args: ["x", "idx"], attrs: axisSpec, type: sized(takeType) }),
  scatter: def({ arity: 3, args: ["x", "idx", "upd"], attrs: scatterSpec, type: sized(scatterType) }),
  routine: def({ arity: -1, args: [], attrs: routineSpec, type: sized(routineType) }),
  // Every elementwise op of the op-facts table (ir/elementwise.ts), in its order.
  ...ELEMENTWISE_ENTRIES,
  sum: reduce,
  mean: reduce,
  prod: reduce,
  min: reduce,
  max: reduce,
  argmin: reduce,
  argmax: reduce,
  all: reduce,
  any: reduce,
  reshape: def({ arity: 1, args: ["x"], attrs: shapeSpec, type: reshapeType }),
  permute: def({ arity: 1, args: ["x"], attrs: { perm: "ints" }, type: permuteType }),
  expand: def({ arity: 1, args: ["x"], attrs: shapeSpec, type: sized(expandType) }),
  slice: def({
    arity: 1,
    args: ["x"],
    attrs: sliceSpec,
    type: sliceType,
  }),
  batch_reshape: def({ arity: 1, args: ["x"], attrs: shapeSpec, type: batchReshapeType }),
  rebatch: def({ arity: 1, args: ["x"], attrs: rebatchSpec, type: rebatchType }),
  batch_unsqueeze: def({
    arity: 1,
    args: ["x"],
    attrs: { dim: "nat" },
    type: (op, [x], attrs) => {
      const d = attrs.dim;
      if (d > x!.batch.length) throw new ShapeError(`${op}: dim ${d} is out of range for x ${fmtTypeShape(x!)}`);
      const batch = [...x!.batch];
      batch.splice(d, 0, 1);
      return { dtype: x!.dtype, batch, base: x!.base };
    },
  }),
  batch_squeeze: def({
    arity: 1,
    args: ["x"],
    attrs: { dim: "nat" },
    type: (op, [x], attrs) => {
      const d = attrs.dim;
      const size = x!.batch[d];
      if (size === undefined || (typeof size === "number" && size !== 1)) {
        throw new ShapeError(`${op}: batch dim ${d} of x ${fmtTypeShape(x!)} is not of size 1`);
      }
      return { dtype: x!.dtype, batch: x!.batch.filter((_, i) => i !== d), base: x!.base };
    },
  }),
  batch_slice: def({
    arity: 1,
    args: ["x"],
    attrs: sliceSpec,
    type: batchSliceType,
  }),
  batch_concat: def({ arity: -1, args: [], attrs: axisSpec, type: sized(batchConcatType) }),
  batch_expand: def({ arity: 1, args: ["x"], attrs: shapeSpec, type: sized(batchExpandType) }),
};

/** Each op's arity, argument names, attribute spec and type rule. */
export const OPS: { readonly [K in Op]: OpInfo } = OP_TABLE;

/**
 * The attributes of op `K` as a TypeScript type, inferred from its spec in the
 * table (`ints` is `readonly number[]`, `dtype` is `DType`, a word list is its
 * string-literal union, …). For a union of ops, the union of their attributes.
 */
export type AttrsOf<K extends Op> = SpecAttrs<(typeof OP_TABLE)[K]["attrs"]>;

export const ALL_OPS = Object.keys(OPS) as Op[];

export function isOp(s: string): s is Op {
  return Object.prototype.hasOwnProperty.call(OPS, s);
}
