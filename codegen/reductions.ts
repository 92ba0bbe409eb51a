/**
 * The semantics of reductions, defined once for every target (docs/ARCHITECTURE.md,
 * Kernel forms): the accumulator's dtype, its start value, the step, the merge of
 * two partial results, the fold of n equal values, and the final value. The
 * lowerings (codegen/lower-loops.ts, codegen/lower-workgroup.ts) call these; no
 * renderer knows a reduction.
 *
 * A sum (and a mean's sum) starts at -0, the exact additive identity (-0 + x = x
 * for every x, where +0 + -0 is +0), so a sum of -0s is -0 as in NumPy; an empty sum
 * is +0. With float64 accumulation (targets that have float64), sums, means and float
 * products accumulate in float64 and round once when stored. argmin/argmax keep the
 * first position on ties, and the first NaN wins and then sticks (as min/max
 * propagate NaN). A mean divides once, by the whole count.
 */
import type { DType } from "../ir/dtype.js";
import { intRange, isFloat } from "../ir/dtype.js";
import { UnsupportedOpError } from "../ir/errors.js";
import type { Accumulation } from "../ir/interpret.js";
import { IDEMPOTENT } from "../ir/elementwise.js";
import type { KReduceOp } from "../ir/kernel.js";
import { isInlineable, isPositional, reductionFacts } from "../ir/reductions.js";
import type { LoopBuilder } from "./loop-builder.js";

/** What a target offers the lowering. */
export interface LoopTarget {
  /** How float32 sums, means and products accumulate: in float64 (JS, WASM) or float32 (WGSL, which has no float64). */
  readonly accumulation: Accumulation;
}

/** The accumulator dtype of a sum or mean (and a float product): float64 where the target has it. */
const wide = (_v: DType, out: DType, t: LoopTarget): DType =>
  t.accumulation === "float64" ? "float64" : out === "float16" ? "float32" : out; // float16 as NumPy's: in float32
/** The accumulator dtype of every reduction, given the reduced values' and the output's dtypes (a missing one fails `tsc`). */
const ACC_TYPE: { readonly [K in KReduceOp]: (valueType: DType, outType: DType, t: LoopTarget) => DType } = {
  sum: wide,
  mean: wide,
  // float64 accumulation for float products only: integer products wrap in int32.
  prod: (v, out, t) => (isFloat(out) ? wide(v, out, t) : out),
  min: (v) => v,
  max: (v) => v,
  // The best value so far, compared in the values' dtype (bool as uint32).
  argmin: (v) => (v === "bool" ? "uint32" : v),
  argmax: (v) => (v === "bool" ? "uint32" : v),
  all: () => "bool",
  any: () => "bool",
};

/** The dtype a reduction accumulates in, given the reduced values' and the output's dtypes. */
export function accType(op: KReduceOp, valueType: DType, outType: DType, t: LoopTarget): DType {
  return ACC_TYPE[op](valueType, outType, t);
}

/**
 * One reduction's accumulator(s): `acc` holds the running value (argmin/argmax: the best
 * value), `arg` the best position (argmin/argmax only, int32).
 */
export interface Accumulator {
  readonly op: KReduceOp;
  readonly acc: number;
  readonly arg: number;
  readonly type: DType;
}

/**
 * Declares and starts an accumulator. `empty` gives a bool value telling whether the
 * reduction has no element, or null when it is known not to be empty (`true` literal
 * when known empty): an empty sum starts at +0, a non-empty one at -0.
 */
export function startAccumulator(
  b: LoopBuilder,
  op: KReduceOp,
  valueType: DType,
  outType: DType,
  t: LoopTarget,
  empty: (() => number) | "never" | "always",
): Accumulator {
  const type = accType(op, valueType, outType, t);
  const acc = b.local(type);
  const f = reductionFacts(op);
  const arg = f.positional ? b.local("int32") : -1;
  // The identity (see ir/reductions.ts); a sum that may be empty starts at +0 when it is (`emptyStart`).
  const identity = (): number =>
    b.lit(typeof f.identity === "number" ? f.identity : extreme(type, f.identity === "highest"), type);
  const e = f.emptyStart;
  const init =
    e === undefined || empty === "never"
      ? identity()
      : empty === "always"
        ? b.lit(e, type)
        : b.let(type, { k: "where", c: empty(), a: b.lit(e, type), b: identity() });
  b.set(acc, init);
  if (arg >= 0) b.set(arg, b.lit(0, "int32"));
  return { op, acc, arg, type };
}

/** The largest (`high`) or smallest value of a dtype: the start values of min and max. */
function extreme(d: DType, high: boolean): number {
  switch (d) {
    case "float32":
    case "float64":
      return high ? Infinity : -Infinity;
    case "int32":
      return high ? 2147483647 : -2147483648;
    case "uint32":
      return high ? 4294967295 : 0;
    case "bool":
      return high ? 1 : 0;
    case "float16":
      return high ? Infinity : -Infinity;
    default:
      return intRange(d)[high ? 1 : 0];
  }
}

/** The step of a (non-arg) reduction: `cur` combined with `v` (both of the accumulator's dtype `d`). */
export function reduceStep(b: LoopBuilder, op: KReduceOp, d: DType, cur: number, v: number): number {
  const f = reductionFacts(op);
  if (f.positional) throw new UnsupportedOpError(`loop form: ${op} has no plain step`);
  return b.let(d, { k: "binary", op: f.combine, a: cur, b: v });
}

const not = (b: LoopBuilder, x: number): number => b.let("bool", { k: "unary", op: "not", x });
const and = (b: LoopBuilder, x: number, y: number): number => b.let("bool", { k: "binary", op: "and", a: x, b: y });
const or = (b: LoopBuilder, x: number, y: number): number => b.let("bool", { k: "binary", op: "or", a: x, b: y });
const isnan = (b: LoopBuilder, x: number): number => b.let("bool", { k: "unary", op: "isnan", x });

/**
 * Whether value `x` replaces the running `best` of an argmin/argmax (sequential order):
 * strictly better keeps the first position on ties; a NaN wins once and then sticks.
 */
export function argBetter(b: LoopBuilder, op: KReduceOp, d: DType, x: number, best: number): number {
  const better = b.let("bool", { k: "binary", op: reductionFacts(op).combine, a: x, b: best });
  if (!isFloat(d)) return better;
  return and(b, not(b, isnan(b, best)), or(b, isnan(b, x), better));
}

/**
 * Whether candidate (qb at position qi) replaces (pb at pi) when two partial
 * argmin/argmax results merge (positions int32): strictly better, or equal and
 * earlier; for floats the earliest NaN beats everything. Gives what the sequential
 * rule (`argBetter`) gives over the concatenated ranges.
 */
export function pairBetter(
  b: LoopBuilder,
  op: KReduceOp,
  d: DType,
  qb: number,
  qi: number,
  pb: number,
  pi: number,
): number {
  const earlier = b.let("bool", { k: "binary", op: "lt", a: qi, b: pi });
  const strictly = b.let("bool", { k: "binary", op: reductionFacts(op).combine, a: qb, b: pb });
  const cond = or(b, strictly, and(b, b.let("bool", { k: "binary", op: "eq", a: qb, b: pb }), earlier));
  if (!isFloat(d)) return cond;
  const pNum = not(b, isnan(b, pb));
  return b.let("bool", { k: "where", c: isnan(b, qb), a: or(b, pNum, earlier), b: and(b, pNum, cond) });
}

/** Folds value `v` (at position `pos`, an index, for argmin/argmax) into the accumulator. */
export function accumulate(b: LoopBuilder, a: Accumulator, v: number, pos: number): void {
  const cur = b.get(a.acc);
  if (isPositional(a.op)) {
    const x = b.cast(v, a.type);
    b.when(argBetter(b, a.op, a.type, x, cur));
    b.set(a.acc, x);
    b.set(a.arg, b.cast(pos, "int32"));
    b.end();
    return;
  }
  b.set(a.acc, reduceStep(b, a.op, a.type, cur, b.cast(v, a.type)));
}

/**
 * Folds `n` copies of value `v` at once (`n` an index, at least 1; `pos` the first
 * copy's position): a sum or mean adds v × n, the idempotent reductions (min, max, all,
 * any; argmin/argmax keep the first position) fold v once.
 */
export function accumulateRepeated(b: LoopBuilder, a: Accumulator, v: number, n: number, pos: number): void {
  const f = reductionFacts(a.op);
  if (f.combine === "add") {
    const cur = b.get(a.acc);
    const times = b.let(a.type, { k: "binary", op: "mul", a: b.cast(v, a.type), b: b.cast(n, a.type) });
    b.set(a.acc, reduceStep(b, a.op, a.type, cur, times));
  } else if (f.positional || IDEMPOTENT.has(f.combine)) accumulate(b, a, v, pos);
  else throw new UnsupportedOpError(`loop form: ${a.op} of repeated values is not supported`);
}

/**
 * The final value in dtype `out` of a reduction whose accumulator holds `acc` (and,
 * for argmin/argmax, position `arg`, int32). A mean divides once by `count` (an index).
 */
export function finishValue(
  b: LoopBuilder,
  op: KReduceOp,
  type: DType,
  acc: number,
  arg: number,
  out: DType,
  count: () => number,
): number {
  const f = reductionFacts(op);
  if (f.positional) return b.cast(arg, out);
  let v = acc;
  if (f.divides) v = b.let(type, { k: "binary", op: "div", a: v, b: b.cast(count(), type) });
  return b.cast(v, out);
}

/** The reduction's result in dtype `out`; `count` (an index) is the number of reduced elements (a mean divides by it). */
export function finishAccumulator(b: LoopBuilder, a: Accumulator, out: DType, count: () => number): number {
  const arg = a.arg >= 0 ? b.get(a.arg) : -1;
  return finishValue(b, a.op, a.type, arg >= 0 ? -1 : b.get(a.acc), arg, out, count);
}

/**
 * A small reduction inlined into an element's expression (`combine`): combines `xs` in
 * order exactly as a reduction would, from its first term (it has at least one), in the
 * same accumulator dtype (`accType`: float64 for float32 sums, means and products on
 * targets that have it), so that a reduction's result does not depend on its length.
 */
export function combine(b: LoopBuilder, op: KReduceOp, xs: readonly number[], dtype: DType, t: LoopTarget): number {
  if (!isInlineable(op)) throw new UnsupportedOpError(`loop form: ${op} cannot be inlined`);
  const f = reductionFacts(op);
  // The accumulator of the loop form, also in a relaxed kernel: `relaxedFloat32` only lets a target keep
  // float32 intermediates wider, and one that rounds every float32 op (WebAssembly) summed a short float32
  // reduction in float32 (3e38 + 3e38 - 3e38 - 3e38 + 1 = Infinity where a long one, and JS, give 1).
  const ad = accType(op, dtype, dtype, t);
  const terms = xs.map((x) => b.cast(x, ad));
  let v = terms.slice(1).reduce((acc, x) => b.let(ad, { k: "binary", op: f.combine, a: acc, b: x }), terms[0]!);
  if (f.divides) v = b.let(ad, { k: "binary", op: "div", a: v, b: b.lit(xs.length, ad) });
  return b.cast(v, dtype);
}
