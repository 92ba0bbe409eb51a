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
import type { KReduceOp } from "../ir/kernel.js";
import type { LoopBuilder } from "./loop-builder.js";

/** What a target offers the lowering. */
export interface LoopTarget {
  /** How float32 sums, means and products accumulate: in float64 (JS, WASM) or float32 (WGSL, which has no float64). */
  readonly accumulation: Accumulation;
}

/** The dtype a reduction accumulates in, given the reduced values' and the output's dtypes. */
export function accType(op: KReduceOp, valueType: DType, outType: DType, t: LoopTarget): DType {
  switch (op) {
    case "all":
    case "any":
      return "bool";
    case "argmin":
    case "argmax":
      // The best value so far, compared in the values' dtype (bool as uint32).
      return valueType === "bool" ? "uint32" : valueType;
    case "min":
    case "max":
      return valueType;
    case "sum":
    case "mean":
    case "prod":
      // float64 accumulation: every sum and mean, and float products (integer products wrap in int32).
      if (t.accumulation === "float64" && (op !== "prod" || isFloat(outType))) return "float64";
      // float16 accumulates in float32 (as NumPy's float16 reductions), rounded once at the end.
      return outType === "float16" ? "float32" : outType;
  }
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
  const arg = op === "argmin" || op === "argmax" ? b.local("int32") : -1;
  let init: number;
  switch (op) {
    case "sum":
      init =
        empty === "never"
          ? b.lit(-0, type)
          : empty === "always"
            ? b.lit(0, type)
            : b.let(type, { k: "where", c: empty(), a: b.lit(0, type), b: b.lit(-0, type) });
      break;
    case "mean":
      init = b.lit(-0, type);
      break;
    case "prod":
    case "all":
      init = b.lit(1, type);
      break;
    case "any":
      init = b.lit(0, type);
      break;
    case "min":
    case "argmin":
      init = b.lit(extreme(type, true), type);
      break;
    case "max":
    case "argmax":
      init = b.lit(extreme(type, false), type);
      break;
  }
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
  switch (op) {
    case "sum":
    case "mean":
      return b.let(d, { k: "binary", op: "add", a: cur, b: v });
    case "prod":
      return b.let(d, { k: "binary", op: "mul", a: cur, b: v });
    case "min":
    case "max":
      return b.let(d, { k: "binary", op: op === "min" ? "minimum" : "maximum", a: cur, b: v });
    case "all":
    case "any":
      return b.let("bool", { k: "binary", op: op === "all" ? "and" : "or", a: cur, b: v });
    case "argmin":
    case "argmax":
      throw new UnsupportedOpError(`loop form: ${op} has no plain step`);
  }
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
  const better = b.let("bool", { k: "binary", op: op === "argmax" ? "gt" : "lt", a: x, b: best });
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
  const strictly = b.let("bool", { k: "binary", op: op === "argmax" ? "gt" : "lt", a: qb, b: pb });
  const cond = or(b, strictly, and(b, b.let("bool", { k: "binary", op: "eq", a: qb, b: pb }), earlier));
  if (!isFloat(d)) return cond;
  const pNum = not(b, isnan(b, pb));
  return b.let("bool", { k: "where", c: isnan(b, qb), a: or(b, pNum, earlier), b: and(b, pNum, cond) });
}

/** Folds value `v` (at position `pos`, an index, for argmin/argmax) into the accumulator. */
export function accumulate(b: LoopBuilder, a: Accumulator, v: number, pos: number): void {
  const cur = b.get(a.acc);
  if (a.op === "argmin" || a.op === "argmax") {
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
 * copy's position): a sum or mean adds v × n, the other reductions fold v once (they
 * are idempotent; argmin/argmax keep the first position).
 */
export function accumulateRepeated(b: LoopBuilder, a: Accumulator, v: number, n: number, pos: number): void {
  if (a.op === "sum" || a.op === "mean") {
    const cur = b.get(a.acc);
    const times = b.let(a.type, { k: "binary", op: "mul", a: b.cast(v, a.type), b: b.cast(n, a.type) });
    b.set(a.acc, reduceStep(b, a.op, a.type, cur, times));
  } else accumulate(b, a, v, pos);
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
  if (op === "argmin" || op === "argmax") return b.cast(arg, out);
  let v = acc;
  if (op === "mean") v = b.let(type, { k: "binary", op: "div", a: v, b: b.cast(count(), type) });
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
  if (op === "argmin" || op === "argmax") throw new UnsupportedOpError(`loop form: ${op} cannot be inlined`);
  const bin = (o: "add" | "mul" | "minimum" | "maximum" | "and" | "or", d: DType, terms: number[]): number =>
    terms.slice(1).reduce((acc, x) => b.let(d, { k: "binary", op: o, a: acc, b: x }), terms[0]!);
  switch (op) {
    case "sum":
    case "mean":
    case "prod": {
      // The accumulator of the loop form, also in a relaxed kernel: `relaxedFloat32` only lets a target keep
      // float32 intermediates wider, and one that rounds every float32 op (WebAssembly) summed a short float32
      // reduction in float32 (3e38 + 3e38 - 3e38 - 3e38 + 1 = Infinity where a long one, and JS, give 1).
      const ad = accType(op, dtype, dtype, t);
      const terms = xs.map((x) => b.cast(x, ad));
      let v = bin(op === "prod" ? "mul" : "add", ad, terms);
      if (op === "mean") v = b.let(ad, { k: "binary", op: "div", a: v, b: b.lit(xs.length, ad) });
      return b.cast(v, dtype);
    }
    case "min":
    case "max":
      return bin(
        op === "min" ? "minimum" : "maximum",
        dtype,
        xs.map((x) => b.cast(x, dtype)),
      );
    case "all":
    case "any":
      return b.cast(
        bin(
          op === "all" ? "and" : "or",
          "bool",
          xs.map((x) => b.cast(x, "bool")),
        ),
        dtype,
      );
  }
}
