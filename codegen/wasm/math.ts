/**
 * float32 vector math for the WebAssembly backend: each function takes and
 * returns four float32 lanes (an f32x4 `v128`), emitted as WebAssembly with the
 * encoder in ./encoder.ts. Measured accuracy (max distance in float32 ulps to
 * `Math.fround` of the float64 result, whole float32 range sampled densely plus
 * edge grids; test/wasm/math.test.ts asserts it, the README's "float32 vector math: tested accuracy" lists it):
 *
 *   exp, log, sin, cos, tanh, sigmoid   float32 arithmetic (the hot ones)
 *   tan, atan, atan2, asin, acos, pow   float64 arithmetic inside, rounded once
 *   sqrt                                native, correctly rounded
 *   rsqrt                               float64 inside, rounded once
 *
 * Special values (NaN, ±Infinity, ±0, subnormal inputs and results) give what the
 * JS backend gives (`Math.fround(Math.f(x))`). A few inputs are handed to the
 * host's float64 `Math` through an import, lane by lane, where a vector
 * polynomial would need much more code for little use: sin/cos of |x| > 8192 (an
 * exact reduction modulo pi/2 of a huge argument), tan of |x| > 2^22, atan2 with a
 * zero, infinite or NaN operand, pow with a zero, infinite or NaN operand.
 *
 * The polynomials are Taylor series (exp, expm1 for tanh, sin, cos, atan, the atanh
 * series of log) truncated where the first omitted term is far below float32 precision.
 * Rounding to an integer goes through `ROUNDER` (two instructions where nearest and a
 * conversion take six on x64) and clamps through pmin/pmax (one where min/max take
 * seven): together with tanh's single expm1 these took B1's kernel from 8.7 to about
 * 5 ms per million elements on one thread.
 */
import { UnsupportedOpError } from "../../ir/errors.js";
import { Code, F64, ModuleBuilder, Op, Simd, V128, type ValType } from "./encoder.js";

/**
 * The vector functions, in one table: arity (1 for f32x4 -> f32x4, 2 for atan2(y, x) and
 * pow(x, y)) and the tested bound, the max distance in float32 ulps to `Math.fround` of
 * the float64 result (NaN, ±Infinity and ±0 results exact). Measured maxima are in the
 * README's WebAssembly section (bench/wasm-math-ulp.ts); test/wasm/math.test.ts asserts
 * these. `defineMath` has a case for each (a missing one fails `tsc`).
 */
export const MATH_FNS = {
  exp: { arity: 1, ulp: 1 },
  log: { arity: 1, ulp: 1 },
  sin: { arity: 1, ulp: 2 },
  cos: { arity: 1, ulp: 2 },
  tan: { arity: 1, ulp: 1 },
  tanh: { arity: 1, ulp: 2 },
  sigmoid: { arity: 1, ulp: 2 },
  atan: { arity: 1, ulp: 1 },
  asin: { arity: 1, ulp: 1 },
  acos: { arity: 1, ulp: 1 },
  sqrt: { arity: 1, ulp: 0 },
  rsqrt: { arity: 1, ulp: 1 },
  atan2: { arity: 2, ulp: 1 },
  pow: { arity: 2, ulp: 1 },
} as const satisfies Readonly<Record<string, { readonly arity: 1 | 2; readonly ulp: number }>>;

export type MathFn = keyof typeof MATH_FNS;
/** The unary vector functions. */
export type MathFn1 = { [K in MathFn]: (typeof MATH_FNS)[K]["arity"] extends 1 ? K : never }[MathFn];
/** The binary vector functions. */
export type MathFn2 = Exclude<MathFn, MathFn1>;
const ALL_FNS = Object.keys(MATH_FNS) as MathFn[];
export const MATH_FN1: readonly MathFn1[] = ALL_FNS.filter((f): f is MathFn1 => MATH_FNS[f].arity === 1);
export const MATH_FN2: readonly MathFn2[] = ALL_FNS.filter((f): f is MathFn2 => MATH_FNS[f].arity === 2);
/** The tested bound per function (see `MATH_FNS`). */
export const ULP_BOUND: Readonly<Record<MathFn, number>> = Object.fromEntries(
  ALL_FNS.map((f) => [f, MATH_FNS[f].ulp]),
) as Record<MathFn, number>;

/** IEEE pow with the JS backend's two exceptions: 1 ** y = 1 (y NaN too) and (-1) ** ±Infinity = 1. */
function hostPow(a: number, b: number): number {
  return a === 1 || (a === -1 && (b === Infinity || b === -Infinity)) ? 1 : Math.pow(a, b);
}

/**
 * The host functions a math module imports (module "m"): float64 `Math`, used for
 * the rare lanes listed above. Workers instantiate kernels with the same object.
 */
export const MATH_HOST = {
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  atan2: Math.atan2,
  pow: hostPow,
} as const;

/** `MATH_HOST` as JS source (for worker threads, which get it as code, not as an object). */
export const MATH_HOST_SOURCE = `{ sin: Math.sin, cos: Math.cos, tan: Math.tan, atan2: Math.atan2, pow: ${String(hostPow)} }`;

/** Function indices of the imported host functions. */
export interface MathImports {
  readonly sin: number;
  readonly cos: number;
  readonly tan: number;
  readonly atan2: number;
  readonly pow: number;
}

/** Declares the host imports (before any function of the module). */
export function importMath(m: ModuleBuilder): MathImports {
  return {
    sin: m.importFunc("m", "sin", [F64], [F64]),
    cos: m.importFunc("m", "cos", [F64], [F64]),
    tan: m.importFunc("m", "tan", [F64], [F64]),
    atan2: m.importFunc("m", "atan2", [F64, F64], [F64]),
    pow: m.importFunc("m", "pow", [F64, F64], [F64]),
  };
}

// ---------------------------------------------------------------- a tiny expression layer

/** Code that pushes one v128 (an expression the emitters below compose). */
export type E = (c: Code) => void;

export const get =
  (l: number): E =>
  (c) =>
    c.get(l);
const op1 =
  (o: number) =>
  (a: E): E =>
  (c) => {
    a(c);
    c.simd(o);
  };
const op2 =
  (o: number) =>
  (a: E, b: E): E =>
  (c) => {
    a(c);
    b(c);
    c.simd(o);
  };
/** A lane shift by the constant `n` bits (the count an i32 operand). */
const shift =
  (o: number) =>
  (a: E, n: number): E =>
    op2(o)(a, (c) => c.i32(n));
const kf =
  (v: number): E =>
  (c) =>
    c.f32x4c(v);
const ki =
  (v: number): E =>
  (c) =>
    c.i32x4c(v);
const kd =
  (v: number): E =>
  (c) =>
    c.f64x2c(v);
const kl =
  (v: bigint): E =>
  (c) =>
    c.i64x2c(v);

// float32 lanes
const fadd = op2(Simd.f32x4_add);
const fsub = op2(Simd.f32x4_sub);
const fmul = op2(Simd.f32x4_mul);
const fdiv = op2(Simd.f32x4_div);
/**
 * Pseudo-min/max (`b < a ? b : a`, `a < b ? b : a`): one instruction where min/max's
 * NaN and signed-zero rules take seven. With a constant as `b`, a NaN `a` passes through.
 */
const fpmin = op2(Simd.f32x4_pmin);
const fpmax = op2(Simd.f32x4_pmax);
const fabs = op1(Simd.f32x4_abs);
const fneg = op1(Simd.f32x4_neg);
const flt = op2(Simd.f32x4_lt);
const fgt = op2(Simd.f32x4_gt);
const fge = op2(Simd.f32x4_ge);
const feq = op2(Simd.f32x4_eq);
const itof = op1(Simd.f32x4_convert_i32x4_s);
// int32 lanes
const iadd = op2(Simd.i32x4_add);
const isub = op2(Simd.i32x4_sub);
const ishl = shift(Simd.i32x4_shl);
const ishr_u = shift(Simd.i32x4_shr_u);
const ishr_s = shift(Simd.i32x4_shr_s);
// float64 lanes
const dadd = op2(Simd.f64x2_add);
const dsub = op2(Simd.f64x2_sub);
const dmul = op2(Simd.f64x2_mul);
const ddiv = op2(Simd.f64x2_div);
const dmin = op2(Simd.f64x2_min);
const dmax = op2(Simd.f64x2_max);
const dabs = op1(Simd.f64x2_abs);
const dsqrt = op1(Simd.f64x2_sqrt);
const dnearest = op1(Simd.f64x2_nearest);
const dtrunc = op1(Simd.f64x2_trunc);
const dlt = op2(Simd.f64x2_lt);
const dgt = op2(Simd.f64x2_gt);
const deq = op2(Simd.f64x2_eq);
const dne = op2(Simd.f64x2_ne);
const lshl = shift(Simd.i64x2_shl);
const lshr_u = shift(Simd.i64x2_shr_u);
const lshr_s = shift(Simd.i64x2_shr_s);
// bits
const and = op2(Simd.v128_and);
const or = op2(Simd.v128_or);
const xor = op2(Simd.v128_xor);
/** Lanes of `a` where `mask` is set, else of `b`. */
const sel =
  (mask: E, a: E, b: E): E =>
  (c) => {
    a(c);
    b(c);
    mask(c);
    c.simd(Simd.v128_bitselect);
  };

/** Evaluates `e` into a new v128 local and returns its getter. */
function let_(c: Code, e: E): E {
  e(c);
  const l = c.local(V128);
  c.set(l);
  return get(l);
}

/** Horner: coefficients from the highest power down, `x` a local getter. */
function horner(x: E, coeffs: readonly number[], k: (v: number) => E, mul: typeof fmul, add: typeof fadd): E {
  let acc: E = k(coeffs[0]!);
  for (let i = 1; i < coeffs.length; i++) acc = add(mul(acc, x), k(coeffs[i]!));
  return acc;
}
const fpoly = (x: E, coeffs: readonly number[]): E => horner(x, coeffs, kf, fmul, fadd);
const dpoly = (x: E, coeffs: readonly number[]): E => horner(x, coeffs, kd, dmul, dadd);

const SIGN32 = -0x80000000;
const SIGN64 = -0x8000000000000000n;
/** `mag` with the sign bit of `s` (float32 lanes). */
const fcopysign = (mag: E, s: E): E => or(and(mag, ki(0x7fffffff)), and(s, ki(SIGN32)));
const dcopysign = (mag: E, s: E): E => or(and(mag, kl(0x7fffffffffffffffn)), and(s, kl(SIGN64)));

// ---------------------------------------------------------------- constants

const LOG2E = Math.LOG2E;
/**
 * 1.5 * 2^23: adding it to a float32 of magnitude below 2^22 rounds that value to the
 * nearest integer (ties to even, as f32x4.nearest), and the sum's low mantissa bits then
 * hold that integer: bits(sum) - bits(ROUNDER) is it as an int32. Two cheap
 * instructions instead of nearest plus a saturating conversion (five on x64).
 */
const ROUNDER = 12582912;
const ROUNDER_BITS = 0x4b400000;
/** ln 2 split: the high part has 9 significant bits, so n * LN2_HI is exact for |n| < 2^15. */
const LN2_HI = 0.693359375;
const LN2_LO = Math.fround(Math.LN2 - LN2_HI);
/** 1/k!, k = 7 … 2: (expm1(r) - r) / r^2 on |r| <= ln2/2 (tanh). */
const EXPM1_TAYLOR = [1 / 5040, 1 / 720, 1 / 120, 1 / 24, 1 / 6, 1 / 2];
/** 1/k!, k = 7 … 0: exp(r) on |r| <= ln2/2; the first omitted term is < 6e-9 relative. */
const EXP_TAYLOR = [1 / 5040, 1 / 720, 1 / 120, 1 / 24, 1 / 6, 1 / 2, 1, 1];

/** pi/2 to 107 bits: a float64 and its remainder. */
const PIO2_HI = 1.5707963267948966;
const PIO2_LO = 6.123233995736766e-17;

/** Truncates `v` to `bits` significant bits (toward zero). */
function truncBits(v: number, bits: number): number {
  if (v === 0) return 0;
  const e = Math.floor(Math.log2(Math.abs(v)));
  const scale = 2 ** (bits - 1 - e);
  return Math.trunc(v * scale) / scale;
}

/**
 * pi/2 as four float32 pieces (Cody and Waite's reduction): the first three have 11
 * significant bits, so k * piece is exact for |k| < 2^13; together they carry ~57 bits.
 */
function pio2Pieces32(): [number, number, number, number] {
  const p1 = truncBits(PIO2_HI, 11);
  let rem = PIO2_HI - p1 + PIO2_LO;
  const p2 = truncBits(rem, 11);
  rem -= p2;
  const p3 = truncBits(rem, 11);
  rem -= p3;
  return [p1, p2, p3, Math.fround(rem)];
}
const PIO2_32 = pio2Pieces32();
/** sin/cos vector reduction bound; larger |x| go to the host (see the file comment). */
export const TRIG_VECTOR_LIMIT = 8192;

/** pi/2 as three float64 pieces of 30, 30 and 53 bits: k * piece exact for |k| < 2^23. */
function pio2Pieces64(): [number, number, number] {
  const p1 = truncBits(PIO2_HI, 30);
  let rem = PIO2_HI - p1 + PIO2_LO;
  const p2 = truncBits(rem, 30);
  rem -= p2;
  return [p1, p2, rem];
}
const PIO2_64 = pio2Pieces64();
const TAN_VECTOR_LIMIT = 2 ** 22;

/** sin(r) = r + r^3 * S(r^2): Taylor, -1/3! … ; the first omitted term (r^11/11!) is < 2^-28 relative on |r| <= pi/4. */
const SIN32 = [1 / 362880, -1 / 5040, 1 / 120, -1 / 6];
/** cos(r) = 1 - r^2/2 + r^4 * C(r^2): 1/4! … 1/10!; the first omitted term (r^12/12!) is < 2^-33. */
const COS32 = [-1 / 3628800, 1 / 40320, -1 / 720, 1 / 24];
/** float64 inside: more terms (first omitted term < 2^-40). */
const SIN64 = [-1 / 1307674368000, 1 / 6227020800, -1 / 39916800, 1 / 362880, -1 / 5040, 1 / 120, -1 / 6];
const COS64 = [1 / 20922789888000, -1 / 87178291200, 1 / 479001600, -1 / 3628800, 1 / 40320, -1 / 720, 1 / 24];

/** log(1+f) = f - hfsq + s*(hfsq + R), R = z*(2/3 + 2/5 z + 2/7 z^2 + 2/9 z^3), s = f/(2+f), z = s^2 <= 0.0295. */
const LOG32 = [2 / 9, 2 / 7, 2 / 5, 2 / 3];

/** atan(u) = u + u^3 * A(u^2) on |u| <= tan(pi/8): Taylor to u^27 (first omitted term < 2^-44). */
const ATAN64: number[] = [];
for (let n = 13; n >= 1; n--) ATAN64.push((n % 2 === 0 ? 1 : -1) / (2 * n + 1));

/** 2 atanh(s) = 2s(1 + z/3 + … + z^9/19), z = s^2 <= 0.0295: the first omitted term is < 2^-52 relative. */
const ATANH64: number[] = [];
for (let n = 9; n >= 0; n--) ATANH64.push(2 / (2 * n + 1));

/** e^(f ln2) = 2^f on |f| <= 1/2: Taylor to degree 11 (first omitted term < 2^-47). */
const EXP2_64: number[] = [];
for (let n = 11; n >= 0; n--) {
  let fact = 1;
  for (let i = 2; i <= n; i++) fact *= i;
  EXP2_64.push(Math.LN2 ** n / fact);
}

// ---------------------------------------------------------------- float32 cores

/** exp on float32 lanes (pushes the result). */
export function emitExp(c: Code, x: E): E {
  // Clamped: exp(89) overflows float32 and exp(-104) rounds to 0; NaN passes (pmin/pmax keep `a`).
  const xc = let_(c, fpmax(fpmin(x, kf(89)), kf(-104)));
  // n = nearest(xc * log2 e), as a float (n) and as an int32 (ni), through ROUNDER.
  const t = let_(c, fadd(fmul(xc, kf(LOG2E)), kf(ROUNDER)));
  const n = let_(c, fsub(t, kf(ROUNDER)));
  const r = let_(c, fsub(fsub(xc, fmul(n, kf(LN2_HI))), fmul(n, kf(LN2_LO))));
  const p = fpoly(r, EXP_TAYLOR);
  // 2^n = 2^n1 * 2^n2 with both halves normal: a subnormal result rounds once, in the last product.
  const ni = let_(c, isub(t, ki(ROUNDER_BITS)));
  const n1 = let_(c, ishr_s(ni, 1));
  const s1 = ishl(iadd(n1, ki(127)), 23);
  const s2 = ishl(iadd(isub(ni, n1), ki(127)), 23);
  return let_(c, fmul(fmul(p, s1), s2));
}

/** log on float32 lanes. */
export function emitLog(c: Code, x: E): E {
  const x0 = let_(c, x);
  // Subnormals: scaled by 2^23 first.
  const sub = let_(c, flt(x0, kf(2 ** -126)));
  const xs = let_(c, sel(sub, fmul(x0, kf(2 ** 23)), x0));
  let e = let_(c, isub(isub(ishr_u(xs, 23), ki(127)), and(sub, ki(23))));
  const m0 = let_(c, or(and(xs, ki(0x7fffff)), ki(0x3f800000)));
  const big = let_(c, fgt(m0, kf(Math.SQRT2)));
  const m = let_(c, sel(big, fmul(m0, kf(0.5)), m0));
  e = let_(c, isub(e, big)); // big is -1 where set
  const f = let_(c, fsub(m, kf(1)));
  const s = let_(c, fdiv(f, fadd(kf(2), f)));
  const z = let_(c, fmul(s, s));
  const R = let_(c, fmul(z, fpoly(z, LOG32)));
  const hfsq = let_(c, fmul(kf(0.5), fmul(f, f)));
  const ef = let_(c, itof(e));
  const core = fsub(fmul(ef, kf(LN2_HI)), fsub(fsub(hfsq, fadd(fmul(s, fadd(hfsq, R)), fmul(ef, kf(LN2_LO)))), f));
  let res = let_(c, core);
  res = let_(c, sel(feq(x0, kf(0)), kf(-Infinity), res));
  res = let_(c, sel(feq(x0, kf(Infinity)), kf(Infinity), res));
  // x < 0 and NaN: NaN (not (x >= 0) holds for both).
  return let_(c, sel(fge(x0, kf(0)), res, kf(NaN)));
}

/**
 * sin or cos on float32 lanes: reduction modulo pi/2 in float32 (four pieces), both
 * polynomials, the quadrant picks one and the sign. Lanes with |x| > 8192 (and ±Infinity)
 * are recomputed by the host's float64 Math, one by one.
 */
export function emitSinCos(c: Code, x: E, which: "sin" | "cos", host: number): E {
  const x0 = let_(c, x);
  // On |x| (sin is odd, cos even), so that sin(-0) = -0 survives the reduction.
  const ax = let_(c, fabs(x0));
  // k = nearest(|x| * 2/pi) as a float and q as an int32, through ROUNDER (|x| * 2/pi < 2^22
  // on the lanes this reduction serves; larger ones go to the host below).
  const kt = let_(c, fadd(fmul(ax, kf(2 / Math.PI)), kf(ROUNDER)));
  const k = let_(c, fsub(kt, kf(ROUNDER)));
  const [p1, p2, p3, p4] = PIO2_32;
  const r = let_(c, fsub(fsub(fsub(fsub(ax, fmul(k, kf(p1))), fmul(k, kf(p2))), fmul(k, kf(p3))), fmul(k, kf(p4))));
  const z = let_(c, fmul(r, r));
  const sp = let_(c, fadd(r, fmul(fmul(r, z), fpoly(z, SIN32))));
  const cp = let_(c, fadd(fsub(kf(1), fmul(kf(0.5), z)), fmul(fmul(z, z), fpoly(z, COS32))));
  const q = let_(c, isub(kt, ki(ROUNDER_BITS)));
  const odd = let_(c, ishl(q, 31)); // the sign bit holds q & 1
  const swap = let_(c, ishr_s(odd, 31)); // all ones where q is odd
  const v = which === "sin" ? sel(swap, cp, sp) : sel(swap, sp, cp);
  const signBit =
    which === "sin" ? xor(ishl(and(q, ki(2)), 30), and(x0, ki(SIGN32))) : ishl(and(iadd(q, ki(1)), ki(2)), 30);
  const res = c.local(V128);
  xor(v, signBit)(c);
  c.set(res);
  const big = let_(c, fgt(ax, kf(TRIG_VECTOR_LIMIT)));
  hostLanes32(c, big, res, [x0], host);
  return get(res);
}

/** For each lane set in `mask`: res[lane] = fround(host(x[lane], …)). */
function hostLanes32(c: Code, mask: E, res: number, args: readonly E[], host: number): void {
  mask(c);
  c.simd(Simd.v128_any_true).op(Op.if).byte(0x40);
  for (let lane = 0; lane < 4; lane++) {
    mask(c);
    c.lane(Simd.i32x4_extract_lane, lane).op(Op.if).byte(0x40);
    c.get(res);
    for (const a of args) {
      a(c);
      c.lane(Simd.f32x4_extract_lane, lane).op(Op.f64_promote_f32);
    }
    c.op(Op.call).u32(host).op(Op.f32_demote_f64).lane(Simd.f32x4_replace_lane, lane).set(res);
    c.op(Op.end);
  }
  c.op(Op.end);
}

/** For each lane set in `mask` (float64 lanes): res[lane] = host(x[lane], …). */
function hostLanes64(c: Code, mask: E, res: number, args: readonly E[], host: number): void {
  mask(c);
  c.simd(Simd.v128_any_true).op(Op.if).byte(0x40);
  for (let lane = 0; lane < 2; lane++) {
    mask(c);
    c.lane(Simd.i32x4_extract_lane, 2 * lane)
      .op(Op.if)
      .byte(0x40);
    c.get(res);
    for (const a of args) {
      a(c);
      c.lane(Simd.f64x2_extract_lane, lane);
    }
    c.op(Op.call).u32(host).lane(Simd.f64x2_replace_lane, lane).set(res);
    c.op(Op.end);
  }
  c.op(Op.end);
}

/**
 * tanh on float32 lanes: with y = -2|x| and E = expm1(y), tanh(|x|) = -E / (2 + E), the
 * sign put back last (tanh(-0) = -0). expm1 reduces as exp does, y = n ln2 + r, then
 * expm1(y) = 2^n expm1(r) + (2^n - 1), with expm1(r) = r + r^2 (1/2! + r/3! + … + r^5/7!);
 * for |x| < 0.17 (n = 0) that is expm1(r) itself, so small arguments keep their relative
 * accuracy without a second polynomial, and no lane needs both a polynomial and an exp
 * (the form before this one computed both and chose). y is clamped at -40, where tanh is
 * 1 in float32.
 */
export function emitTanh(c: Code, x: E): E {
  const x0 = let_(c, x);
  const y = let_(c, fpmax(fmul(fabs(x0), kf(-2)), kf(-40)));
  const t = let_(c, fadd(fmul(y, kf(LOG2E)), kf(ROUNDER)));
  const n = let_(c, fsub(t, kf(ROUNDER)));
  const r = let_(c, fsub(fsub(y, fmul(n, kf(LN2_HI))), fmul(n, kf(LN2_LO))));
  const q = let_(c, fadd(r, fmul(fmul(r, r), fpoly(r, EXPM1_TAYLOR))));
  // 2^n for n in [-58, 0]: a normal float32.
  const scale = let_(c, ishl(iadd(isub(t, ki(ROUNDER_BITS)), ki(127)), 23));
  const e = let_(c, fadd(fmul(scale, q), fsub(scale, kf(1))));
  return let_(c, fcopysign(fdiv(e, fsub(kf(-2), e)), x0));
}

/** sigmoid = 1 / (1 + exp(-x)), evaluated as e/(1+e) with e = exp(-|x|) <= 1 for x < 0. */
export function emitSigmoid(c: Code, x: E): E {
  const x0 = let_(c, x);
  const e = emitExp(c, fneg(fabs(x0)));
  const d = let_(c, fadd(kf(1), e));
  return let_(c, sel(fge(x0, kf(0)), fdiv(kf(1), d), fdiv(e, d)));
}

// ---------------------------------------------------------------- float64 cores (two lanes)

/** atan on float64 lanes. */
function emitAtan64(c: Code, x: E): E {
  const x0 = let_(c, x);
  const a = let_(c, dabs(x0));
  const inv = let_(c, dgt(a, kd(1)));
  const t = let_(c, sel(inv, ddiv(kd(1), a), a));
  const mid = let_(c, dgt(t, kd(Math.SQRT2 - 1)));
  const u = let_(c, sel(mid, ddiv(dsub(t, kd(1)), dadd(t, kd(1))), t));
  const z = let_(c, dmul(u, u));
  let p = let_(c, dadd(u, dmul(dmul(u, z), dpoly(z, ATAN64))));
  p = let_(c, sel(mid, dadd(p, kd(Math.PI / 4)), p));
  p = let_(c, sel(inv, dsub(kd(Math.PI / 2), p), p));
  return let_(c, dcopysign(p, x0));
}

/** log2 of positive, finite, nonzero float64 lanes. */
function emitLog2_64(c: Code, x: E): E {
  const bits = let_(c, x);
  const TWO52 = 2 ** 52;
  // The exponent field read as a number: 2^52 + e_bits, minus 2^52 + 1023.
  const e0 = let_(c, dsub(or(lshr_u(bits, 52), kd(TWO52)), kd(TWO52 + 1023)));
  const m0 = let_(c, or(and(bits, kl(0x000fffffffffffffn)), kd(1)));
  const big = let_(c, dgt(m0, kd(Math.SQRT2)));
  const m = let_(c, sel(big, dmul(m0, kd(0.5)), m0));
  const e = let_(c, sel(big, dadd(e0, kd(1)), e0));
  const s = let_(c, ddiv(dsub(m, kd(1)), dadd(m, kd(1))));
  const z = let_(c, dmul(s, s));
  return let_(c, dadd(e, dmul(dmul(s, dpoly(z, ATANH64)), kd(LOG2E))));
}

/** 2^z on float64 lanes, z clamped to [-300, 300] (float32 results overflow or vanish well inside). */
function emitExp2_64(c: Code, z: E): E {
  const zc = let_(c, dmax(dmin(z, kd(300)), kd(-300)));
  const n = let_(c, dnearest(zc));
  const f = let_(c, dsub(zc, n));
  const p = dpoly(f, EXP2_64);
  // 2^n from n's low bits: n + 2^52 + 1023 holds n + 1023 in its low mantissa bits.
  const scale = lshl(dadd(n, kd(2 ** 52 + 1023)), 52);
  return let_(c, dmul(p, scale));
}

/** tan on float64 lanes (float32 inputs): reduction by three pieces, sin/cos quotient. */
function emitTan64(c: Code, x: E, host: number): E {
  const x0 = let_(c, x);
  // On |x| (tan is odd), the sign put back last: tan(-0) = -0.
  const ax = let_(c, dabs(x0));
  const k = let_(c, dnearest(dmul(ax, kd(2 / Math.PI))));
  const [p1, p2, p3] = PIO2_64;
  const r = let_(c, dsub(dsub(dsub(ax, dmul(k, kd(p1))), dmul(k, kd(p2))), dmul(k, kd(p3))));
  const z = let_(c, dmul(r, r));
  const s = let_(c, dadd(r, dmul(dmul(r, z), dpoly(z, SIN64))));
  const co = let_(c, dadd(dsub(kd(1), dmul(kd(0.5), z)), dmul(dmul(z, z), dpoly(z, COS64))));
  // k's parity from the low bit of k + 2^52 (exact for |k| < 2^51), spread to the whole lane.
  const odd = let_(c, lshr_s(lshl(dadd(k, kd(2 ** 52)), 63), 63));
  const res = c.local(V128);
  xor(sel(odd, xor(ddiv(co, s), kl(SIGN64)), ddiv(s, co)), and(x0, kl(SIGN64)))(c);
  c.set(res);
  const big = let_(c, or(dgt(dabs(x0), kd(TAN_VECTOR_LIMIT)), dne(x0, x0)));
  hostLanes64(c, big, res, [x0], host);
  return get(res);
}

/** Wraps a float64 two-lane body as a float32 four-lane function. */
function via64(m: ModuleBuilder, body: number, arity: 1 | 2, exportName?: string): number {
  const params: ValType[] = arity === 1 ? [V128] : [V128, V128];
  return m.func(
    params,
    [V128],
    (c) => {
      const HI = [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15];
      const halves: [E, E] = [
        (cc) => {
          for (let p = 0; p < arity; p++) cc.get(p).simd(Simd.f64x2_promote_low_f32x4);
          cc.op(Op.call).u32(body).simd(Simd.f32x4_demote_f64x2_zero);
        },
        (cc) => {
          for (let p = 0; p < arity; p++)
            cc.get(p).get(p).simd(Simd.i8x16_shuffle).bytes(HI).simd(Simd.f64x2_promote_low_f32x4);
          cc.op(Op.call).u32(body).simd(Simd.f32x4_demote_f64x2_zero);
        },
      ];
      halves[0](c);
      halves[1](c);
      c.simd(Simd.i8x16_shuffle).bytes([0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]);
    },
    exportName,
  );
}

/**
 * Defines the vector math functions `fns` (and what they need) in module `m`, after
 * `importMath(m)`. Each takes f32x4 (two for atan2 and pow, `atan2(y, x)` and
 * `pow(x, y)`) and returns f32x4. With `exportPrefix`, each is exported as prefix + name.
 */
export function defineMath(
  m: ModuleBuilder,
  host: MathImports,
  fns: Iterable<MathFn>,
  exportPrefix?: string,
): Map<MathFn, number> {
  const out = new Map<MathFn, number>();
  const ex = (name: string): string | undefined => (exportPrefix === undefined ? undefined : exportPrefix + name);
  const x = get(0);
  const y = get(1);
  const define = (fn: MathFn): number => {
    const f32 = (build: (c: Code) => E): number => m.func([V128], [V128], (c) => build(c)(c), ex(fn));
    /** A float64 body on `arity` operands, called on each f64x2 half of the f32x4 operands (`via64`). */
    const wide = (arity: 1 | 2, build: (c: Code) => E): number =>
      via64(
        m,
        m.func(arity === 1 ? [V128] : [V128, V128], [V128], (c) => build(c)(c)),
        arity,
        ex(fn),
      );
    switch (fn) {
      case "exp":
        return f32((c) => emitExp(c, x));
      case "log":
        return f32((c) => emitLog(c, x));
      case "sin":
        return f32((c) => emitSinCos(c, x, "sin", host.sin));
      case "cos":
        return f32((c) => emitSinCos(c, x, "cos", host.cos));
      case "tanh":
        return f32((c) => emitTanh(c, x));
      case "sigmoid":
        return f32((c) => emitSigmoid(c, x));
      case "sqrt":
        return f32(() => op1(Simd.f32x4_sqrt)(x));
      case "rsqrt":
        return wide(1, () => ddiv(kd(1), dsqrt(x)));
      case "tan":
        return wide(1, (c) => emitTan64(c, x, host.tan));
      case "atan":
        return wide(1, (c) => emitAtan64(c, x));
      case "asin":
        // asin x = atan(x / sqrt((1-x)(1+x))): exact enough in float64 up to |x| = 1 (x/0 = ±Inf gives ±pi/2).
        return wide(1, (c) => emitAtan64(c, ddiv(x, dsqrt(dmul(dsub(kd(1), x), dadd(kd(1), x))))));
      case "acos":
        // acos x = 2 atan(sqrt((1-x)/(1+x))): no cancellation near x = 1; x = -1 gives 2 atan(Inf) = pi.
        return wide(1, (c) => dmul(kd(2), emitAtan64(c, dsqrt(ddiv(dsub(kd(1), x), dadd(kd(1), x))))));
      case "atan2":
        return wide(2, (c) => emitAtan2_64(c, x, y, host.atan2));
      case "pow":
        return wide(2, (c) => emitPow64(c, x, y, host.pow));
      default: {
        const missing: never = fn;
        throw new UnsupportedOpError(`wasm math: no body for ${String(missing)}`);
      }
    }
  };
  for (const fn of new Set(fns)) out.set(fn, define(fn));
  return out;
}

/** Lanes where `v` is ±0, ±Infinity or NaN (float64). */
const dspecial = (v: E): E => or(deq(v, kd(0)), dne(dsub(v, v), kd(0)));

/** atan2(y, x) on float64 lanes; a zero, infinite or NaN operand goes to the host. */
function emitAtan2_64(c: Code, y: E, x: E, host: number): E {
  const y0 = let_(c, y);
  const x0 = let_(c, x);
  // |y|/|x| of float32 values cannot overflow or underflow in float64.
  const a = emitAtan64(c, ddiv(dabs(y0), dabs(x0)));
  const res = c.local(V128);
  dcopysign(sel(dlt(x0, kd(0)), dsub(kd(Math.PI), a), a), y0)(c);
  c.set(res);
  hostLanes64(c, or(dspecial(x0), dspecial(y0)), res, [y0, x0], host);
  return get(res);
}

/** pow(x, y) on float64 lanes: 2^(y log2|x|), the sign for negative x and integer y; zero, infinite or NaN operands go to the host. */
function emitPow64(c: Code, x: E, y: E, host: number): E {
  const x0 = let_(c, x);
  const y0 = let_(c, y);
  const l = emitLog2_64(c, dabs(x0));
  const r = let_(c, emitExp2_64(c, dmul(y0, l)));
  const yint = let_(c, deq(dtrunc(y0), y0));
  const half = let_(c, dmul(y0, kd(0.5)));
  const yodd = let_(c, and(yint, dne(dtrunc(half), half)));
  const negRes = sel(yint, sel(yodd, xor(r, kl(SIGN64)), r), kd(NaN));
  const res = c.local(V128);
  sel(dlt(x0, kd(0)), negRes, r)(c);
  c.set(res);
  hostLanes64(c, or(dspecial(x0), dspecial(y0)), res, [x0, y0], host);
  return get(res);
}

/** A module exporting each function as `f_<name>` plus `map1_<name>(in, out, n)` / `map2_<name>(a, b, out, n)` loops (tests, benches). */
export function mathTestModule(
  fns: readonly MathFn[],
  memory: { initial: number; maximum?: number; shared?: boolean },
): Uint8Array {
  const m = new ModuleBuilder();
  m.importMemory({ module: "env", name: "memory", ...memory });
  const host = importMath(m);
  const idx = defineMath(m, host, fns, "f_");
  for (const fn of fns) {
    const arity = MATH_FNS[fn].arity;
    const I32 = 0x7f;
    const params: ValType[] = arity === 1 ? [I32, I32, I32] : [I32, I32, I32, I32];
    m.func(
      params,
      [],
      (c) => {
        // for (i = 0; i < n; i += 4) out[i..] = f(in[i..]) ; n a multiple of 4 (byte offsets).
        const nArg = arity + 1;
        const outArg = arity;
        const i = c.local(I32);
        c.op(Op.block).byte(0x40).op(Op.loop).byte(0x40);
        c.get(i).get(nArg).op(Op.i32_ge_u).op(Op.br_if).u32(1);
        c.get(outArg).get(i).op(Op.i32_add);
        for (let a = 0; a < arity; a++) {
          c.get(a).get(i).op(Op.i32_add).simd(Simd.v128_load).memarg(4, 0);
        }
        c.op(Op.call).u32(idx.get(fn)!);
        c.simd(Simd.v128_store).memarg(4, 0);
        c.get(i).i32(16).op(Op.i32_add).set(i);
        c.op(Op.br).u32(0);
        c.op(Op.end).op(Op.end);
      },
      `map_${fn}`,
    );
  }
  return m.encode();
}
