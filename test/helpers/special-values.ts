/**
 * The special-values grid shared by the JS and WebGPU tests: every elementwise op
 * on {NaN, ±Inf, ±0, ±1, ±tiny, ±huge, integer extremes} × the same grid, with the
 * expected results written here from the documented rules (NumPy's semantics,
 * IEEE 754 for pow and signed zeros), using only Math.*, Math.fround and BigInt.
 * Nothing here calls the library's reference interpreter or kernels.
 *
 * Rules written down here (the README's, else NumPy's):
 * - float32 ops compute on float32 values and round the exact (float64) result
 *   to float32, as NumPy does per op.
 * - maximum/minimum propagate NaN and order -0 below +0 (IEEE 754-2019 maximum
 *   and minimum; Math.max/Math.min).
 * - mod is NumPy's floor modulo (npy_divmod): fmod, then add the divisor when the
 *   signs differ; a zero result has the divisor's sign; x % 0 and ±Inf % y are
 *   NaN; integers: x % 0 = 0.
 * - pow follows IEEE 754 / C99 Annex F (1 ** y = 1 and (-1) ** ±Inf = 1, where
 *   Math.pow gives NaN); integer pow wraps modulo 2^32 and a negative exponent
 *   gives trunc(1 / a^|b|) (1, ±1 for a = -1, 0 otherwise).
 * - sign keeps the sign of a zero (Math.sign), NaN stays NaN.
 * - round is half to even; float -> integer casts truncate and wrap modulo 2^32
 *   (NaN and ±Inf give 0); -> bool is x != 0 (NaN is true).
 */
import type { NoneLeft } from "../../ir/checks.js";
import { baseCat, Tensor, where } from "../../src/index.js";
import type { DType } from "../../ir/dtype.js";
import type { ELEMENTWISE, KBinaryOp, KUnaryOp } from "../../ir/elementwise.js";
import { METHOD_OF } from "../../src/api/tensor-op-names.js";

const f32 = Math.fround;

export const F32_GRID: readonly number[] = [
  NaN,
  Infinity,
  -Infinity,
  0,
  -0,
  1,
  -1,
  0.5,
  -2.5,
  1e-38,
  -1e-38,
  1.4e-45,
  -1.4e-45,
  3e38,
  -3e38,
  -100,
].map(f32);
export const I32_GRID: readonly number[] = [0, 1, -1, 2, 7, 31, -3, 2147483647, -2147483648];
export const U32_GRID: readonly number[] = [0, 1, 2, 7, 31, 2147483648, 4294967295];
export const BOOL_GRID: readonly number[] = [0, 1];

/** float64 (JS backend only): subnormal and huge doubles. */
export const F64_GRID: readonly number[] = [
  NaN,
  Infinity,
  -Infinity,
  0,
  -0,
  1,
  -1,
  0.5,
  -2.5,
  1e-308,
  -1e-308,
  5e-324,
  -5e-324,
  1.7e308,
  -1.7e308,
];

export const GRIDS: { readonly [D in "float32" | "int32" | "uint32" | "bool"]: readonly number[] } = {
  float32: F32_GRID,
  int32: I32_GRID,
  uint32: U32_GRID,
  bool: BOOL_GRID,
};

// ---- the reference, from the rules above ----

const isOddInt = (y: number): boolean => Number.isInteger(y) && Math.abs(y) % 2 === 1;

/** IEEE 754 / C99 Annex F pow, case by case; Math.pow only for finite x > 0 or finite x < 0 with integer y. */
export function powRef(x: number, y: number): number {
  if (y === 0) return 1; // pow(x, ±0) = 1 for every x, NaN included
  if (x === 1) return 1; // pow(+1, y) = 1 for every y, NaN included
  if (Number.isNaN(x) || Number.isNaN(y)) return NaN;
  if (y === Infinity) return Math.abs(x) === 1 ? 1 : Math.abs(x) < 1 ? 0 : Infinity;
  if (y === -Infinity) return Math.abs(x) === 1 ? 1 : Math.abs(x) < 1 ? Infinity : 0;
  if (x === 0) {
    const neg = Object.is(x, -0) && isOddInt(y);
    if (y < 0) return neg ? -Infinity : Infinity;
    return neg ? -0 : 0;
  }
  if (x === Infinity) return y < 0 ? 0 : Infinity;
  if (x === -Infinity) {
    if (y < 0) return isOddInt(y) ? -0 : 0;
    return isOddInt(y) ? -Infinity : Infinity;
  }
  if (x < 0 && !Number.isInteger(y)) return NaN;
  const m = Math.pow(Math.abs(x), y);
  return x < 0 && isOddInt(y) ? -m : m;
}

/** NumPy's float floor modulo (npy_divmod's `mod`). */
export function modRef(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b) || !Number.isFinite(a) || b === 0) return NaN;
  let m = a % b; // C fmod: exact, sign of a; a % ±Inf = a
  if (m === 0) return b < 0 ? -0 : 0;
  if (m < 0 !== b < 0) m += b;
  return m;
}

export function maxRef(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return NaN;
  if (a === b) return Object.is(a, -0) ? b : a; // max(-0, +0) = +0
  return a > b ? a : b;
}
export function minRef(a: number, b: number): number {
  if (Number.isNaN(a) || Number.isNaN(b)) return NaN;
  if (a === b) return Object.is(a, -0) ? a : b; // min(-0, +0) = -0
  return a < b ? a : b;
}

function roundHalfEvenRef(x: number): number {
  if (!Number.isFinite(x)) return x;
  const f = Math.floor(x);
  const d = x - f;
  const r = d < 0.5 ? f : d > 0.5 ? f + 1 : f % 2 === 0 ? f : f + 1;
  // A zero result keeps the sign of x (rint(-0.4) is -0).
  return r === 0 ? (x < 0 || Object.is(x, -0) ? -0 : 0) : r;
}

/** ToInt32 / ToUint32 of trunc(x) with BigInt: wrap modulo 2^32; NaN and ±Inf give 0. */
export function floatToInt(x: number, to: "int32" | "uint32"): number {
  if (!Number.isFinite(x)) return 0;
  const t = BigInt(Math.trunc(x));
  return Number(to === "int32" ? BigInt.asIntN(32, t) : BigInt.asUintN(32, t));
}

const wrapInt = (v: bigint, d: DType): number => Number(d === "uint32" ? BigInt.asUintN(32, v) : BigInt.asIntN(32, v));

function intPowRef(a: number, b: number, d: DType): number {
  if (b < 0) return a === 1 ? 1 : a === -1 ? (Math.abs(b) % 2 === 1 ? -1 : 1) : 0;
  // (a^b) mod 2^32 by square-and-multiply on BigInts (the exact power would be huge).
  const M = 1n << 32n;
  let r = 1n;
  let base = ((BigInt(a) % M) + M) % M;
  for (let e = BigInt(b); e > 0n; e >>= 1n) {
    if (e & 1n) r = (r * base) % M;
    base = (base * base) % M;
  }
  return wrapInt(r, d);
}

function intFloorMod(a: number, b: number, d: DType): number {
  if (b === 0) return 0;
  const A = BigInt(a);
  const B = BigInt(b);
  let r = A % B;
  if (r !== 0n && r < 0n !== B < 0n) r += B;
  return wrapInt(r, d);
}

/** How the WebGPU result must match: bit for bit, or (finite, non-zero expected values only) within a tolerance. */
export type Match = "exact" | "approx";

export interface UnaryCase {
  readonly name: string;
  readonly apply: (x: Tensor) => Tensor;
  /** The expected result for a float32 operand (ints are cast to float32 first unless `int` says how). */
  readonly float: (x: number) => number;
  /** The expected result on int32/uint32/bool operands, in the output dtype; absent: cast to float32 and use `float`. */
  readonly int?: (x: number, d: DType) => number;
  readonly out: (d: DType) => DType;
  readonly gpu: Match;
  /**
   * WebGPU: beyond this |x| the op is as accurate as the device's builtin, which WGSL
   * bounds only on [-π, π] (Mesa's sin/cos/tan track Math to |x| ≈ 1e7 and give ±1
   * from 2^31); there the test only checks the range.
   */
  readonly gpuBound?: number;
}

const floatOut = (d: DType): DType => (d === "float64" ? "float64" : "float32");
const sameOut = (d: DType): DType => (d === "bool" ? "int32" : d);
const boolOut = (): DType => "bool";

const UNARY_CASE_LIST = [
  {
    name: "neg",
    apply: (x) => x.neg(),
    float: (x) => -x,
    int: (x, d) => wrapInt(-BigInt(x), d),
    out: sameOut,
    gpu: "exact",
  },
  {
    name: "square",
    apply: (x) => x.square(),
    float: (x) => x * x,
    int: (x, d) => wrapInt(BigInt(x) * BigInt(x), d),
    out: sameOut,
    gpu: "exact",
  },
  {
    name: "abs",
    apply: (x) => x.abs(),
    float: (x) => Math.abs(x),
    int: (x, d) => wrapInt(BigInt(Math.abs(x)), d),
    out: sameOut,
    gpu: "exact",
  },
  { name: "sqrt", apply: (x) => x.sqrt(), float: (x) => Math.sqrt(x), out: floatOut, gpu: "approx" },
  { name: "rsqrt", apply: (x) => x.rsqrt(), float: (x) => 1 / Math.sqrt(x), out: floatOut, gpu: "approx" },
  { name: "exp", apply: (x) => x.exp(), float: (x) => Math.exp(x), out: floatOut, gpu: "approx" },
  { name: "log", apply: (x) => x.log(), float: (x) => Math.log(x), out: floatOut, gpu: "approx" },
  { name: "sin", apply: (x) => x.sin(), float: (x) => Math.sin(x), out: floatOut, gpu: "approx", gpuBound: 1e7 },
  { name: "cos", apply: (x) => x.cos(), float: (x) => Math.cos(x), out: floatOut, gpu: "approx", gpuBound: 1e7 },
  { name: "tan", apply: (x) => x.tan(), float: (x) => Math.tan(x), out: floatOut, gpu: "approx", gpuBound: 1e7 },
  { name: "tanh", apply: (x) => x.tanh(), float: (x) => Math.tanh(x), out: floatOut, gpu: "approx" },
  { name: "sigmoid", apply: (x) => x.sigmoid(), float: (x) => 1 / (1 + Math.exp(-x)), out: floatOut, gpu: "approx" },
  { name: "asin", apply: (x) => x.asin(), float: (x) => Math.asin(x), out: floatOut, gpu: "approx" },
  { name: "acos", apply: (x) => x.acos(), float: (x) => Math.acos(x), out: floatOut, gpu: "approx" },
  { name: "atan", apply: (x) => x.atan(), float: (x) => Math.atan(x), out: floatOut, gpu: "approx" },
  { name: "floor", apply: (x) => x.floor(), float: (x) => Math.floor(x), int: (x) => x, out: sameOut, gpu: "exact" },
  { name: "ceil", apply: (x) => x.ceil(), float: (x) => Math.ceil(x), int: (x) => x, out: sameOut, gpu: "exact" },
  { name: "round", apply: (x) => x.round(), float: roundHalfEvenRef, int: (x) => x, out: sameOut, gpu: "exact" },
  { name: "trunc", apply: (x) => x.trunc(), float: (x) => Math.trunc(x), int: (x) => x, out: sameOut, gpu: "exact" },
  {
    name: "sign",
    apply: (x) => x.sign(),
    float: (x) => (Number.isNaN(x) ? NaN : x > 0 ? 1 : x < 0 ? -1 : x),
    int: (x) => (x > 0 ? 1 : x < 0 ? -1 : 0),
    out: sameOut,
    gpu: "exact",
  },
  {
    name: "isNan",
    apply: (x) => x.isNan(),
    float: (x) => (Number.isNaN(x) ? 1 : 0),
    int: () => 0,
    out: boolOut,
    gpu: "exact",
  },
  {
    name: "isInf",
    apply: (x) => x.isInf(),
    float: (x) => (Math.abs(x) === Infinity ? 1 : 0),
    int: () => 0,
    out: boolOut,
    gpu: "exact",
  },
  {
    name: "isFinite",
    apply: (x) => x.isFinite(),
    float: (x) => (Number.isFinite(x) ? 1 : 0),
    int: () => 1,
    out: boolOut,
    gpu: "exact",
  },
  // NaN is not 0, so it is true.
  {
    name: "logicalNot",
    apply: (x) => x.logicalNot(),
    float: (x) => (x === 0 ? 1 : 0),
    int: (x) => (x === 0 ? 1 : 0),
    out: boolOut,
    gpu: "exact",
  },
] as const satisfies readonly UnaryCase[];
/** The unary special-value cases; `tsc` checks below that every unary op's method has one. */
export const UNARY_CASES: readonly UnaryCase[] = UNARY_CASE_LIST;

export interface BinaryCase {
  readonly name: string;
  readonly apply: (x: Tensor, y: Tensor | number) => Tensor;
  readonly float: (a: number, b: number) => number;
  /** On int32/uint32 operands (bool operands compute in int32); absent: cast both to float32 and use `float`. */
  readonly int?: (a: number, b: number, d: DType) => number;
  readonly out: (d: DType) => DType;
  readonly gpu: Match;
  /** WebGPU relative tolerance when `gpu` is "approx" (default 2e-5). */
  readonly rtol?: number;
}

const truthy = (v: number): boolean => v !== 0; // NaN is truthy

const BINARY_CASE_LIST = [
  {
    name: "add",
    apply: (x, y) => x.add(y),
    float: (a, b) => a + b,
    int: (a, b, d) => wrapInt(BigInt(a) + BigInt(b), d),
    out: sameOut,
    gpu: "exact",
  },
  {
    name: "sub",
    apply: (x, y) => x.sub(y),
    float: (a, b) => a - b,
    int: (a, b, d) => wrapInt(BigInt(a) - BigInt(b), d),
    out: sameOut,
    gpu: "exact",
  },
  {
    name: "mul",
    apply: (x, y) => x.mul(y),
    float: (a, b) => a * b,
    int: (a, b, d) => wrapInt(BigInt(a) * BigInt(b), d),
    out: sameOut,
    gpu: "exact",
  },
  // True division: integers are cast to float32 first.
  { name: "div", apply: (x, y) => x.div(y), float: (a, b) => a / b, out: floatOut, gpu: "exact" },
  { name: "pow", apply: (x, y) => x.pow(y), float: powRef, int: intPowRef, out: sameOut, gpu: "approx" },
  {
    name: "maximum",
    apply: (x, y) => x.maximum(y),
    float: maxRef,
    int: (a, b) => Math.max(a, b),
    out: sameOut,
    gpu: "exact",
  },
  {
    name: "minimum",
    apply: (x, y) => x.minimum(y),
    float: minRef,
    int: (a, b) => Math.min(a, b),
    out: sameOut,
    gpu: "exact",
  },
  { name: "mod", apply: (x, y) => x.mod(y), float: modRef, int: intFloorMod, out: sameOut, gpu: "exact" },
  // Mesa's atan2 is good to about 2e-5 relative (README).
  {
    name: "atan2",
    apply: (x, y) => x.atan2(y),
    float: (a, b) => Math.atan2(a, b),
    out: floatOut,
    gpu: "approx",
    rtol: 3e-5,
  },
  {
    name: "eq",
    apply: (x, y) => x.eq(y),
    float: (a, b) => (a === b ? 1 : 0),
    int: (a, b) => (a === b ? 1 : 0),
    out: boolOut,
    gpu: "exact",
  },
  {
    name: "ne",
    apply: (x, y) => x.ne(y),
    float: (a, b) => (a !== b ? 1 : 0),
    int: (a, b) => (a !== b ? 1 : 0),
    out: boolOut,
    gpu: "exact",
  },
  {
    name: "lt",
    apply: (x, y) => x.lt(y),
    float: (a, b) => (a < b ? 1 : 0),
    int: (a, b) => (a < b ? 1 : 0),
    out: boolOut,
    gpu: "exact",
  },
  {
    name: "le",
    apply: (x, y) => x.le(y),
    float: (a, b) => (a <= b ? 1 : 0),
    int: (a, b) => (a <= b ? 1 : 0),
    out: boolOut,
    gpu: "exact",
  },
  {
    name: "gt",
    apply: (x, y) => x.gt(y),
    float: (a, b) => (a > b ? 1 : 0),
    int: (a, b) => (a > b ? 1 : 0),
    out: boolOut,
    gpu: "exact",
  },
  {
    name: "ge",
    apply: (x, y) => x.ge(y),
    float: (a, b) => (a >= b ? 1 : 0),
    int: (a, b) => (a >= b ? 1 : 0),
    out: boolOut,
    gpu: "exact",
  },
  {
    name: "logicalAnd",
    apply: (x, y) => x.logicalAnd(y),
    float: (a, b) => (truthy(a) && truthy(b) ? 1 : 0),
    int: (a, b) => (truthy(a) && truthy(b) ? 1 : 0),
    out: boolOut,
    gpu: "exact",
  },
  {
    name: "logicalOr",
    apply: (x, y) => x.logicalOr(y),
    float: (a, b) => (truthy(a) || truthy(b) ? 1 : 0),
    int: (a, b) => (truthy(a) || truthy(b) ? 1 : 0),
    out: boolOut,
    gpu: "exact",
  },
  {
    name: "logicalXor",
    apply: (x, y) => x.logicalXor(y),
    float: (a, b) => (truthy(a) !== truthy(b) ? 1 : 0),
    int: (a, b) => (truthy(a) !== truthy(b) ? 1 : 0),
    out: boolOut,
    gpu: "exact",
  },
] as const satisfies readonly BinaryCase[];
/**
 * The binary special-value cases; `tsc` checks below that every binary op's method has one,
 * but the integer-only (bitwise) ops', which test/numerics/bitwise-cases.ts holds (its `REF`, checked there).
 */
export const BINARY_CASES: readonly BinaryCase[] = BINARY_CASE_LIST;

type MethodOf = typeof METHOD_OF;
/** The binary ops defined on integers only (bitwise): their grid is test/numerics/bitwise-cases.ts. */
export type IntOnlyBinaryOp = {
  [K in KBinaryOp]: (typeof ELEMENTWISE)[K] extends { readonly dtype: "int" } ? K : never;
}[KBinaryOp];
type UnaryWithoutCase = Exclude<MethodOf[KUnaryOp], (typeof UNARY_CASE_LIST)[number]["name"]>;
type BinaryWithoutCase = Exclude<
  MethodOf[Exclude<KBinaryOp, IntOnlyBinaryOp>],
  (typeof BINARY_CASE_LIST)[number]["name"]
>;
// Each fails `tsc` with the methods at fault: a new elementwise op without its special-value case.
const EVERY_UNARY_OP_HAS_A_CASE: NoneLeft<UnaryWithoutCase, "unaryMethodsWithoutACase"> = true;
const EVERY_BINARY_OP_HAS_A_CASE: NoneLeft<BinaryWithoutCase, "binaryMethodsWithoutACase"> = true;
void EVERY_UNARY_OP_HAS_A_CASE;
void EVERY_BINARY_OP_HAS_A_CASE;

/** Ops whose bool operands are first cast to int32 (arithmetic); logical and comparison ops keep them. */
const ARITH = new Set(["add", "sub", "mul", "div", "pow", "maximum", "minimum", "mod", "atan2"]);

/** A value as stored in dtype `d`. */
export function store(v: number, d: DType): number {
  switch (d) {
    case "float32":
      return f32(v);
    case "int32":
      return v | 0;
    case "uint32":
      return v >>> 0;
    case "bool":
      return v !== 0 ? 1 : 0;
    default:
      return v;
  }
}

export function expectedUnary(c: UnaryCase, x: number, d: DType): number {
  const out = c.out(d);
  if (d === "float32" || d === "float64") return store(c.float(x), out);
  if (c.int) return store(c.int(x, d === "bool" ? "int32" : d), out);
  return store(c.float(f32(x)), out);
}

export function expectedBinary(c: BinaryCase, a: number, b: number, d: DType): number {
  const out = c.out(d);
  if (d === "float32" || d === "float64") return store(c.float(a, b), out);
  const cd = d === "bool" && ARITH.has(c.name) ? "int32" : d;
  if (c.int && out !== "float32") return store(c.int(a, b, cd), out);
  return store(c.float(f32(a), f32(b)), out);
}

/** Every (a, b) of the grid, a outer. */
export function pairs(g: readonly number[]): { a: number[]; b: number[] } {
  const a: number[] = [];
  const b: number[] = [];
  for (const x of g) for (const y of g) (a.push(x), b.push(y));
  return { a, b };
}

/**
 * `op(x, c)` (or `op(c, x)`) for every constant c of the grid, concatenated along the
 * base axis: one kernel in which every constant is a `const` node of the graph (on
 * the left through `Tensor._const`, as `where` and `clip` build them; `scalar(c)`
 * would be a buffer).
 */
export function withConstants(c: BinaryCase, x: Tensor, g: readonly number[], left = false): Tensor {
  return baseCat(
    g.map((v) => (left ? c.apply(Tensor._const(v, x.dtype), x) : c.apply(x, v))),
    0,
  );
}

/** Expected results of `withConstants`: for each constant, every x. */
export function expectedWithConstants(c: BinaryCase, g: readonly number[], d: DType, left = false): number[] {
  return g.flatMap((v) => g.map((x) => (left ? expectedBinary(c, v, x, d) : expectedBinary(c, x, v, d))));
}

/**
 * Mismatches between `got` and `want` (at most a few), naming the operands.
 * `approx`: a finite, non-zero expected value may differ by rtol (relative) or atol;
 * NaN, ±Inf and zeros (with their sign) must match exactly either way.
 */
export function mismatches(
  what: string,
  got: ArrayLike<number>,
  want: readonly number[],
  label: (i: number) => string,
  approx = false,
  rtol = 2e-5,
  atol = 0,
): string[] {
  const out: string[] = [];
  if (got.length !== want.length) return [`${what}: ${got.length} values, expected ${want.length}`];
  for (let i = 0; i < want.length; i++) {
    const g = got[i]!;
    const w = want[i]!;
    let ok: boolean;
    if (Number.isNaN(w)) ok = Number.isNaN(g);
    else if (w === 0 || !Number.isFinite(w) || !approx) ok = Object.is(g, w);
    else ok = Math.sign(g) === Math.sign(w) && Math.abs(g - w) <= atol + rtol * Math.abs(w);
    if (!ok) out.push(`${what} ${label(i)}: got ${fmt(g)}, expected ${fmt(w)}`);
  }
  return out;
}

export const fmt = (v: number): string => (Object.is(v, -0) ? "-0" : String(v));

/**
 * Algebraic identities that are wrong for NaN, ±Inf or -0 must not be applied:
 * each pattern's expected value computes the written expression literally.
 * `r` rounds an intermediate float32 value (exact mode and WebGPU); relaxed JS
 * kernels keep intermediates in float64 (r = identity) and round the stored result.
 */
export const PATTERNS: readonly {
  name: string;
  f: (x: Tensor) => Tensor;
  ref: (a: number, r: (v: number) => number) => number;
  /** WebGPU: finite non-zero results within the device's pow accuracy. */
  approx?: boolean;
}[] = [
  { name: "x*0", f: (x) => x.mul(0), ref: (a) => a * 0 },
  { name: "x*-0", f: (x) => x.mul(-0), ref: (a) => a * -0 },
  { name: "x+0", f: (x) => x.add(0), ref: (a) => a + 0 },
  { name: "x+-0", f: (x) => x.add(-0), ref: (a) => a + -0 },
  { name: "x-0", f: (x) => x.sub(0), ref: (a) => a - 0 },
  { name: "x-(-0)", f: (x) => x.sub(-0), ref: (a) => a - -0 },
  { name: "0-x", f: (x) => x.neg().add(0), ref: (a) => -a + 0 },
  { name: "x-x", f: (x) => x.sub(x), ref: (a) => a - a },
  { name: "x+(-x)", f: (x) => x.add(x.neg()), ref: (a) => a + -a },
  { name: "-x+x", f: (x) => x.neg().add(x), ref: (a) => -a + a },
  { name: "x/x", f: (x) => x.div(x), ref: (a) => a / a },
  { name: "x*1", f: (x) => x.mul(1), ref: (a) => a * 1 },
  { name: "x/1", f: (x) => x.div(1), ref: (a) => a / 1 },
  { name: "x*-1", f: (x) => x.mul(-1), ref: (a) => a * -1 },
  { name: "x/2", f: (x) => x.div(2), ref: (a) => a / 2 },
  { name: "x/0.5", f: (x) => x.div(0.5), ref: (a) => a / 0.5 },
  { name: "x/3", f: (x) => x.div(3), ref: (a) => a / 3 },
  { name: "x/0", f: (x) => x.div(0), ref: (a) => a / 0 },
  { name: "x/-0", f: (x) => x.div(-0), ref: (a) => a / -0 },
  { name: "x**0", f: (x) => x.pow(0), ref: () => 1 },
  { name: "x**1", f: (x) => x.pow(1), ref: (a) => a },
  { name: "x**2", f: (x) => x.pow(2), ref: (a) => a * a },
  { name: "x**-1", f: (x) => x.pow(-1), ref: (a) => powRef(a, -1), approx: true },
  { name: "x**0.5", f: (x) => x.pow(0.5), ref: (a) => powRef(a, 0.5), approx: true },
  { name: "x*2-x", f: (x) => x.mul(2).sub(x), ref: (a, r) => r(a * 2) - a },
  { name: "x mod 1", f: (x) => x.mod(1), ref: (a) => modRef(a, 1) },
  { name: "max(x,x)", f: (x) => x.maximum(x), ref: (a) => a },
  { name: "min(x,x)", f: (x) => x.minimum(x), ref: (a) => a },
  { name: "max(x,0)", f: (x) => x.maximum(0), ref: (a) => maxRef(a, 0) },
  { name: "min(x,-0)", f: (x) => x.minimum(-0), ref: (a) => minRef(a, -0) },
  { name: "--x", f: (x) => x.neg().neg(), ref: (a) => a },
  { name: "abs(-x)", f: (x) => x.neg().abs(), ref: (a) => Math.abs(a) },
  { name: "(x+1)-x", f: (x) => x.add(1).sub(x), ref: (a, r) => r(a + 1) - a },
  { name: "(x*3)-(x*3)", f: (x) => x.mul(3).sub(x.mul(3)), ref: (a, r) => r(a * 3) - r(a * 3) },
  { name: "x*x-x*x", f: (x) => x.mul(x).sub(x.mul(x)), ref: (a, r) => r(a * a) - r(a * a) },
  { name: "x==x", f: (x) => x.eq(x).cast("float32"), ref: (a) => (a === a ? 1 : 0) },
  { name: "x!=x", f: (x) => x.ne(x).cast("float32"), ref: (a) => (a !== a ? 1 : 0) },
  { name: "x<=x", f: (x) => x.le(x).cast("float32"), ref: (a) => (a <= a ? 1 : 0) },
  { name: "!(x<1)", f: (x) => x.lt(1).logicalNot().cast("float32"), ref: (a) => (!(a < 1) ? 1 : 0) },
  { name: "where(x>0,x,x)", f: (x) => where(x.gt(0), x, x), ref: (a) => a },
  { name: "x*0+x", f: (x) => x.mul(0).add(x), ref: (a) => a * 0 + a },
];
