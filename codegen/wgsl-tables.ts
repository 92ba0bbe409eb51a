/**
 * The WGSL code generator's tables: dtype spellings, helper functions emitted on
 * demand, and per-op templates (docs/ARCHITECTURE.md, Kernels). kernelToWGSL in ./wgsl.ts uses them.
 */
import { castScalar, isNarrowInt, type DType, type NarrowInt } from "../ir/dtype.js";
import { DTypeError, UnsupportedOpError } from "../ir/errors.js";
import type { ArithBinaryOp, CompareOp, LogicalBinaryOp } from "../ir/elementwise.js";
import type { KUnaryOp } from "../ir/kernel.js";

/**
 * WGSL spelling of each dtype as held in registers and in storage. WGSL has no 8- or
 * 16-bit storage types: the narrow integers are held widened, one i32 per element,
 * in registers and in device buffers (the backend widens at upload and narrows at
 * download), and float16 is an `f16` register value stored as one f32 per element
 * (every float16 value is exactly a float32).
 */
export const REG: { readonly [D in DType]: string } = {
  float32: "f32",
  float64: "f64",
  int32: "i32",
  uint32: "u32",
  bool: "bool",
  uint8: "i32",
  int8: "i32",
  uint16: "i32",
  int16: "i32",
  float16: "f16",
};
export const STORE: { readonly [D in DType]: string } = { ...REG, bool: "u32", float16: "f32" };

/** The low 8 or 16 bits of an i32, sign-extended for the signed narrow integers (the wrap into the dtype). */
const NARROW_WGSL: { readonly [D in NarrowInt]: (x: string) => string } = {
  uint8: (x) => `(${x} & 255i)`,
  int8: (x) => `((${x} << 24u) >> 24u)`,
  uint16: (x) => `(${x} & 65535i)`,
  int16: (x) => `((${x} << 16u) >> 16u)`,
};

/**
 * Helper functions, emitted only when a kernel uses them. Each names the helpers
 * it calls (`deps`) so they are emitted first.
 */
export const HELPERS = {
  opaque: {
    deps: [],
    // WGSL lets a compiler assume there is no NaN or infinity, and drivers fold
    // floats as if that held: with a known 0.0 they turn x * 0 into 0, x + 0 into x
    // and x / 0 into 0 (Mesa); with one value on both sides, x - x into 0 and
    // (x + 1) - x into 1. A value read from workgroup memory is unknown to the
    // compiler, so `bw_k(bits)` is a float constant it cannot fold, and `bw_id(x)`
    // is x without the identity that lets it cancel x against itself. WGSL
    // zero-initialises workgroup variables and nothing writes this one, so both
    // are exact: bits | 0 = bits.
    code: [
      `var<workgroup> bw_wz: u32;`,
      `fn bw_k(bits: u32) -> f32 { return bitcast<f32>(bits | bw_wz); }`,
      `fn bw_id(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) | bw_wz); }`,
    ].join("\n"),
  },
  nan: {
    deps: ["opaque"],
    code: `fn bw_nan() -> f32 { return bw_k(0x7fc00000u); }`,
  },
  inf: {
    deps: ["opaque"],
    code: `fn bw_inf() -> f32 { return bw_k(0x7f800000u); }`,
  },
  isnan: {
    deps: [],
    code: `fn bw_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }`,
  },
  isinf: {
    deps: [],
    code: `fn bw_isinf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }`,
  },
  isfinite: {
    deps: [],
    code: `fn bw_isfinite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u; }`,
  },
  // IEEE 754-2019 maximum/minimum (Math.max/min): NaN propagates, -0 < +0. WGSL's
  // max/min leave both to the device; equal operands (±0 against ∓0) combine their bits.
  fmax: {
    deps: ["isnan", "nan"],
    code: [
      `fn bw_fmax(a: f32, b: f32) -> f32 {`,
      `  if (bw_isnan(a) || bw_isnan(b)) { return bw_nan(); }`,
      `  if (a == b) { return bitcast<f32>(bitcast<u32>(a) & bitcast<u32>(b)); }`,
      `  return max(a, b);`,
      `}`,
    ].join("\n"),
  },
  fmin: {
    deps: ["isnan", "nan"],
    code: [
      `fn bw_fmin(a: f32, b: f32) -> f32 {`,
      `  if (bw_isnan(a) || bw_isnan(b)) { return bw_nan(); }`,
      `  if (a == b) { return bitcast<f32>(bitcast<u32>(a) | bitcast<u32>(b)); }`,
      `  return min(a, b);`,
      `}`,
    ].join("\n"),
  },
  fsign: {
    deps: ["isnan"],
    code: `fn bw_fsign(x: f32) -> f32 { if (bw_isnan(x) || x == 0.0f) { return x; } return select(-1.0f, 1.0f, x > 0.0f); }`,
  },
  ftanh: {
    deps: ["isnan"],
    // tanh(15) rounds to 1 in f32; clamping avoids exp overflow inside tanh. Below 2^-12
    // tanh x rounds to x (Mesa's tanh is off by 3e-8 there and loses the sign of -0).
    code: [
      `fn bw_ftanh(x: f32) -> f32 {`,
      `  if (bw_isnan(x) || abs(x) < 0.000244140625f) { return x; }`,
      `  return tanh(clamp(x, -15.0f, 15.0f));`,
      `}`,
    ].join("\n"),
  },
  signbit: {
    deps: [],
    // Read from the bits: -0 == 0, and a compiler may drop a product with 0.0.
    code: `fn bw_signbit(x: f32) -> bool { return (bitcast<u32>(x) & 0x80000000u) != 0u; }`,
  },
  fatan: {
    deps: ["isnan", "isinf"],
    // WGSL may assume no NaN or infinity (Mesa's atan gives 0 for NaN); ±0 keeps its sign;
    // below 2^-12 atan x rounds to x (Mesa loses bits on subnormals).
    code: [
      `fn bw_fatan(x: f32) -> f32 {`,
      `  if (bw_isnan(x) || abs(x) < 0.000244140625f) { return x; }`,
      `  if (bw_isinf(x)) { return select(1.5707963705062866f, -1.5707963705062866f, x < 0.0f); }`,
      `  return atan(x);`,
      `}`,
    ].join("\n"),
  },
  fatan2: {
    deps: ["isnan", "isinf", "nan", "signbit"],
    // Math.atan2 (IEEE 754 atan2) where WGSL's atan2 is unbounded or undefined: NaN, the
    // origin and signed zeros, infinities, and x = 0 (or subnormal, when flushed to 0).
    code: [
      `fn bw_fatan2(y: f32, x: f32) -> f32 {`,
      `  if (bw_isnan(y) || bw_isnan(x)) { return bw_nan(); }`,
      `  let sy = select(1.0f, -1.0f, bw_signbit(y));`,
      `  let xneg = bw_signbit(x);`,
      `  if (y == 0.0f) { return select(y, sy * 3.1415927410125732f, xneg); }`,
      `  if (bw_isinf(x)) {`,
      `    if (bw_isinf(y)) { return sy * select(0.7853981852531433f, 2.356194496154785f, xneg); }`,
      `    return select(bitcast<f32>(bitcast<u32>(y) & 0x80000000u), sy * 3.1415927410125732f, xneg);`,
      `  }`,
      `  if (bw_isinf(y) || x == 0.0f) { return sy * 1.5707963705062866f; }`,
      // Below 2^-12, atan(y/x) rounds to y/x (Mesa's atan2 loses bits there, subnormals most).
      `  if (!xneg && abs(y) < abs(x) * 0.000244140625f) { return y / x; }`,
      `  return atan2(y, x);`,
      `}`,
    ].join("\n"),
  },
  fasin: {
    deps: ["isnan", "nan", "fatan2"],
    // WGSL leaves asin outside [-1, 1] undefined, and Mesa's asin is off by up to 4e-4;
    // asin x = atan2(x, sqrt((1-x)(1+x))) is as accurate as atan2 (1-x is exact near 1).
    code: [
      `fn bw_fasin(x: f32) -> f32 {`,
      `  if (bw_isnan(x) || abs(x) > 1.0f) { return bw_nan(); }`,
      `  if (abs(x) < 0.000244140625f) { return x; }`,
      `  return bw_fatan2(x, sqrt((1.0f - x) * (1.0f + x)));`,
      `}`,
    ].join("\n"),
  },
  facos: {
    deps: ["isnan", "nan", "fatan2"],
    // As bw_fasin: acos x = atan2(sqrt((1-x)(1+x)), x).
    code: [
      `fn bw_facos(x: f32) -> f32 {`,
      `  if (bw_isnan(x) || abs(x) > 1.0f) { return bw_nan(); }`,
      `  return bw_fatan2(sqrt((1.0f - x) * (1.0f + x)), x);`,
      `}`,
    ].join("\n"),
  },
  fmodabs: {
    deps: [],
    // fmod(|x|, |y|) exactly, for finite x and finite y != 0, as C's fmod: long division
    // on the integer significands (x = mx·2^(ex-150), y = my·2^(ey-150); subnormals
    // have exponent field 1 without the hidden bit), at most 253 steps. The float
    // formula x - y·trunc(x/y) is wrong whenever x/y rounds or overflows.
    code: [
      `fn bw_fmodabs(x: f32, y: f32) -> f32 {`,
      `  let xb = bitcast<u32>(x) & 0x7fffffffu;`,
      `  let yb = bitcast<u32>(y) & 0x7fffffffu;`,
      `  if (xb < yb) { return bitcast<f32>(xb); }`,
      `  var ex = i32(xb >> 23u); var mx = xb & 0x7fffffu;`,
      `  if (ex == 0) { ex = 1; } else { mx = mx | 0x800000u; }`,
      `  var ey = i32(yb >> 23u); var my = yb & 0x7fffffu;`,
      `  if (ey == 0) { ey = 1; } else { my = my | 0x800000u; }`,
      `  var r = mx % my;`,
      `  for (var k = ex - ey; k > 0; k = k - 1) { r = (r << 1u) % my; }`,
      `  if (r == 0u) { return 0.0f; }`,
      `  while (r < 0x800000u && ey > 1) { r = r << 1u; ey = ey - 1; }`,
      `  if (r < 0x800000u) { return bitcast<f32>(r); }`,
      `  return bitcast<f32>((u32(ey) << 23u) | (r & 0x7fffffu));`,
      `}`,
    ].join("\n"),
  },
  fmod: {
    deps: ["isfinite", "isnan", "isinf", "nan", "signbit", "fmodabs"],
    // NumPy's float `%` (npy_divmod): fmod, then add the divisor when the signs differ;
    // a zero result has the divisor's sign; x % ±Inf is x (or the divisor when the
    // signs differ); x % 0 and ±Inf % y are NaN.
    code: [
      `fn bw_fmod(a: f32, b: f32) -> f32 {`,
      `  if (!bw_isfinite(a) || bw_isnan(b) || b == 0.0f) { return bw_nan(); }`,
      `  var m = a;`,
      `  if (!bw_isinf(b)) { m = bw_fmodabs(a, b); if (bw_signbit(a)) { m = -m; } }`,
      `  if (m == 0.0f) { return bitcast<f32>(bitcast<u32>(b) & 0x80000000u); }`,
      `  if (bw_signbit(m) != bw_signbit(b)) { return m + b; }`,
      `  return m;`,
      `}`,
    ].join("\n"),
  },
  powpos: {
    deps: ["inf"],
    // m^b for finite m > 0 and finite b != 0, as exp2(b·log2 m). WGSL's log2 and exp2
    // are only accurate on normal numbers (Mesa's log2 of a subnormal is off by up
    // to 15, its exp2 flushes subnormal results), so both are scaled by 2^24 there.
    code: [
      `fn bw_powpos(m: f32, b: f32) -> f32 {`,
      `  var l: f32;`,
      `  if (m < 1.17549435e-38f) { l = log2(m * 16777216.0f) - 24.0f; } else { l = log2(m); }`,
      `  let y = b * l;`,
      `  if (y >= 128.0f) { return bw_inf(); }`,
      `  if (y < -152.0f) { return 0.0f; }`,
      `  if (y < -126.0f) { return exp2(y + 24.0f) * 5.9604644775390625e-8f; }`,
      `  return exp2(y);`,
      `}`,
    ].join("\n"),
  },
  fpow: {
    deps: ["isnan", "isinf", "nan", "inf", "signbit", "powpos"],
    // IEEE 754 pow (C99 Annex F, NumPy) where WGSL's pow is undefined (x <= 0, infinite
    // or NaN operands): pow(x, ±0) = 1 and pow(1, y) = 1 even for NaN; (-1)^±Inf = 1;
    // a negative base (-0 and -Inf included) takes the sign of an odd integer exponent.
    code: [
      `fn bw_fpow(a: f32, b: f32) -> f32 {`,
      `  if (b == 0.0f || a == 1.0f) { return 1.0f; }`,
      `  if (bw_isnan(a) || bw_isnan(b)) { return bw_nan(); }`,
      `  let m = abs(a);`,
      `  let bneg = b < 0.0f;`,
      `  if (bw_isinf(b)) {`,
      `    if (m == 1.0f) { return 1.0f; }`,
      `    return select(0.0f, bw_inf(), (m > 1.0f) != bneg);`,
      `  }`,
      `  let bint = trunc(b) == b;`,
      `  let odd = bint && abs(b) < 16777216.0f && trunc(b * 0.5f) != b * 0.5f;`,
      `  var r: f32;`,
      `  if (m == 0.0f) { r = select(0.0f, bw_inf(), bneg); }`,
      `  else if (bw_isinf(a)) { r = select(bw_inf(), 0.0f, bneg); }`,
      `  else if (a < 0.0f && !bint) { return bw_nan(); }`,
      `  else { r = bw_powpos(m, b); }`,
      `  return select(r, -r, bw_signbit(a) && odd);`,
      `}`,
    ].join("\n"),
  },
  fexp: {
    deps: [],
    // Mesa's exp flushes subnormal results (exp(-88) gives 0): below ln 2^-126 scale by
    // 2^24 (24·ln 2 = 16.6355...) and multiply back, which rounds once into the subnormals.
    code: `fn bw_fexp(x: f32) -> f32 { if (x < -87.33654475f) { return exp(x + 16.635532333438686f) * 5.9604644775390625e-8f; } return exp(x); }`,
  },
  fsigmoid: {
    deps: ["fexp"],
    // 1/(1 + e^-x); below -80 that is e^x to float32 precision (and subnormal past -87.3).
    code: `fn bw_fsigmoid(x: f32) -> f32 { if (x < -80.0f) { return bw_fexp(x); } return 1.0f / (1.0f + exp(-x)); }`,
  },
  flog: {
    deps: [],
    // Mesa's log of a subnormal is off by up to 15: scale by 2^24 (24·ln 2 = 16.6355...).
    code: `fn bw_flog(x: f32) -> f32 { if (x > 0.0f && x < 1.17549435e-38f) { return log(x * 16777216.0f) - 16.635532333438686f; } return log(x); }`,
  },
  idiv: {
    deps: [],
    code: `fn bw_idiv(a: i32, b: i32) -> i32 { if (b == 0i) { return 0i; } return a / b; }`,
  },
  udiv: {
    deps: [],
    code: `fn bw_udiv(a: u32, b: u32) -> u32 { if (b == 0u) { return 0u; } return a / b; }`,
  },
  imod: {
    deps: [],
    code: [
      `fn bw_imod(a: i32, b: i32) -> i32 {`,
      `  if (b == 0i) { return 0i; }`,
      `  let r = a % b;`,
      `  if (r != 0i && ((r < 0i) != (b < 0i))) { return r + b; }`,
      `  return r;`,
      `}`,
    ].join("\n"),
  },
  umod: {
    deps: [],
    code: `fn bw_umod(a: u32, b: u32) -> u32 { if (b == 0u) { return 0u; } return a % b; }`,
  },
  ipow: {
    deps: [],
    // Wrapping exponentiation by squaring; a negative exponent truncates 1/a^|b|.
    code: [
      `fn bw_ipow(a: i32, b: i32) -> i32 {`,
      `  if (b < 0i) {`,
      `    if (a == 1i) { return 1i; }`,
      `    if (a == -1i) { return select(1i, -1i, (b & 1i) != 0i); }`,
      `    return 0i;`,
      `  }`,
      `  var r = 1i; var x = a; var e = u32(b);`,
      `  while (e != 0u) { if ((e & 1u) != 0u) { r = r * x; } x = x * x; e = e >> 1u; }`,
      `  return r;`,
      `}`,
    ].join("\n"),
  },
  upow: {
    deps: [],
    code: [
      `fn bw_upow(a: u32, b: u32) -> u32 {`,
      `  var r = 1u; var x = a; var e = b;`,
      `  while (e != 0u) { if ((e & 1u) != 0u) { r = r * x; } x = x * x; e = e >> 1u; }`,
      `  return r;`,
      `}`,
    ].join("\n"),
  },
  f2u: {
    deps: ["isfinite"],
    // ToUint32(trunc(x)) as JS `>>> 0` computes it: wrap modulo 2^32, NaN/Inf -> 0.
    // Outside ±2^31 an f32 is a multiple of 256, so the float modulo below is exact.
    code: [
      `fn bw_f2u(x: f32) -> u32 {`,
      `  if (!bw_isfinite(x)) { return 0u; }`,
      `  let t = trunc(x);`,
      `  if (t >= 0.0f && t < 4294967296.0f) { return u32(t); }`,
      `  if (t < 0.0f && t >= -2147483648.0f) { return bitcast<u32>(i32(t)); }`,
      `  return u32(t - 4294967296.0f * floor(t / 4294967296.0f));`,
      `}`,
    ].join("\n"),
  },
  // --- narrow dtypes: f32 -> f16. WGSL leaves the conversion of NaN and of values past
  // float16's range undefined; NumPy gives NaN and ±Infinity (from 65520 up, which rounds
  // to even past 65504). The bits come from a u32 pair (low half first). ---
  f2h: {
    deps: ["isnan"],
    code: [
      `fn bw_f2h(x: f32) -> f16 {`,
      `  if (bw_isnan(x)) { return bitcast<vec2<f16>>(0x7e00u).x; }`,
      `  if (abs(x) < 65520.0f) { return f16(x); }`,
      `  return bitcast<vec2<f16>>(select(0x7c00u, 0xfc00u, x < 0.0f)).x;`,
      `}`,
    ].join("\n"),
  },
  // --- numerics/random: NumPy's shifts. WGSL takes the count modulo 32 (a runtime count of 32
  // shifts by 0); NumPy shifts every bit out for a count outside [0, 32): 0, or -1 for a
  // negative int32 shifted right. A negative i32 count is >= 32 as a u32 bit pattern.
  shlu: {
    deps: [],
    code: `fn bw_shlu(a: u32, b: u32) -> u32 { return select(0u, a << (b & 31u), b < 32u); }`,
  },
  shli: {
    deps: [],
    code: `fn bw_shli(a: i32, b: i32) -> i32 { let n = bitcast<u32>(b); return select(0i, a << (n & 31u), n < 32u); }`,
  },
  shru: {
    deps: [],
    code: `fn bw_shru(a: u32, b: u32) -> u32 { return select(0u, a >> (b & 31u), b < 32u); }`,
  },
  shri: {
    deps: [],
    code: `fn bw_shri(a: i32, b: i32) -> i32 { let n = bitcast<u32>(b); return select(select(0i, -1i, a < 0i), a >> (n & 31u), n < 32u); }`,
  },
} as const satisfies Record<string, { readonly deps: readonly string[]; readonly code: string }>;

export type Helper = keyof typeof HELPERS;

export function fail(msg: string): never {
  throw new UnsupportedOpError(`wgsl: ${msg}`);
}

/** A WGSL literal holding exactly the value `v` has in dtype `d` (non-finite floats via helpers). */
export function literal(v: number, d: DType, use: (h: Helper) => void): string {
  switch (d) {
    case "float32": {
      const f = Math.fround(v);
      // Zeros, subnormals, NaN and ±Inf as bits the compiler cannot see (HELPERS.opaque):
      // a known 0.0 lets it fold x * 0 to 0 and x + 0 to x, and it may flush a
      // subnormal literal or assume a non-finite one away.
      if (!(Math.abs(f) >= 1.1754943508222875e-38) || !Number.isFinite(f)) {
        use("opaque");
        return `bw_k(0x${f32Bits(f).toString(16).padStart(8, "0")}u)`;
      }
      const s = f.toString();
      return /[.e]/.test(s) ? `${s}f` : `${s}.0f`;
    }
    case "int32": {
      const i = Number.isFinite(v) ? Math.trunc(v) | 0 : 0;
      return i === -2147483648 ? "i32(-2147483648)" : `${i}i`;
    }
    case "uint32":
      return `${Number.isFinite(v) ? Math.trunc(v) >>> 0 : 0}u`;
    case "bool":
      return v !== 0 ? "true" : "false";
    case "float64":
      throw new DTypeError("wgsl: float64 is not available on WebGPU (WGSL has no f64)");
    case "float16":
      return `f16(${literal(castScalar(v, "float16"), "float32", use)})`;
    default:
      // A narrow integer: its wrapped value as an i32 literal.
      return literal(castScalar(v, d), "int32", use);
  }
}

const BITS_VIEW = new DataView(new ArrayBuffer(4));
/** The float32 bit pattern of `f` (NaN as the quiet NaN 0x7fc00000). */
function f32Bits(f: number): number {
  if (Number.isNaN(f)) return 0x7fc00000;
  BITS_VIEW.setFloat32(0, f);
  return BITS_VIEW.getUint32(0);
}

/** `x` of dtype `from` as dtype `to`, with the JS backend's cast semantics. */
export function castTo(x: string, from: DType, to: DType, use: (h: Helper) => void): string {
  if (from === to) return x;
  // float16 converts through float32 (which holds every float16 value exactly); a narrow
  // integer is an i32 register holding its value, and a cast to one wraps the int32 cast.
  if (from === "float16") return castTo(`f32(${x})`, "float32", to, use);
  if (to === "float16") return (use("f2h"), `bw_f2h(${castTo(x, from, "float32", use)})`);
  if (isNarrowInt(from)) return castTo(x, "int32", to, use);
  if (isNarrowInt(to)) return NARROW_WGSL[to](castTo(x, from, "int32", use));
  if (to === "bool") {
    // By the bits (x is not ±0): a driver that assumes no NaN/Inf rewrites a + b != 0 as a != -b,
    // which is false for -Inf + Inf = NaN (Mesa does).
    if (from === "float32") return `((bitcast<u32>(${x}) & 0x7fffffffu) != 0u)`;
    return from === "int32" ? `(${x} != 0i)` : `(${x} != 0u)`;
  }
  if (from === "bool") return `select(${literal(0, to, use)}, ${literal(1, to, use)}, ${x})`;
  if (from === "float32") {
    use("f2u");
    return to === "uint32" ? `bw_f2u(${x})` : `bitcast<i32>(bw_f2u(${x}))`;
  }
  if (to === "float32") return `f32(${x})`;
  return to === "int32" ? `bitcast<i32>(${x})` : `bitcast<u32>(${x})`;
}

export type UnaryRule = (x: string, d: DType, use: (h: Helper) => void) => string;

/** Unary ops; `d` is the operand dtype (already converted to the result dtype for math ops). */
export const UNARY: { readonly [K in KUnaryOp]: UnaryRule } = {
  neg: (x, d) => (d === "uint32" ? `(0u - ${x})` : `(-${x})`),
  abs: (x, d) => (d === "uint32" ? x : `abs(${x})`),
  square: (x) => `(${x} * ${x})`,
  sqrt: (x) => `sqrt(${x})`,
  // 1 / sqrt(x) with the root through bw_id: Mesa fuses it into its own inverse square root, and
  // tanh(rsqrt(-0)) then gave -Inf, not tanh(-Inf) = -1.
  rsqrt: (x, _d, use) => (use("opaque"), `(1.0f / bw_id(sqrt(${x})))`),
  exp: (x, _d, use) => (use("fexp"), `bw_fexp(${x})`),
  log: (x, _d, use) => (use("flog"), `bw_flog(${x})`),
  sin: (x) => `sin(${x})`,
  cos: (x) => `cos(${x})`,
  tan: (x) => `tan(${x})`,
  tanh: (x, _d, use) => (use("ftanh"), `bw_ftanh(${x})`),
  sigmoid: (x, _d, use) => (use("fsigmoid"), `bw_fsigmoid(${x})`),
  asin: (x, _d, use) => (use("fasin"), `bw_fasin(${x})`),
  acos: (x, _d, use) => (use("facos"), `bw_facos(${x})`),
  atan: (x, _d, use) => (use("fatan"), `bw_fatan(${x})`),
  floor: (x, d) => (d === "float32" ? `floor(${x})` : x),
  ceil: (x, d) => (d === "float32" ? `ceil(${x})` : x),
  round: (x, d) => (d === "float32" ? `round(${x})` : x),
  trunc: (x, d) => (d === "float32" ? `trunc(${x})` : x),
  sign: (x, d, use) =>
    d === "float32" ? (use("fsign"), `bw_fsign(${x})`) : d === "uint32" ? `select(0u, 1u, ${x} > 0u)` : `sign(${x})`,
  not: (x, d) => (d === "bool" ? `(!${x})` : `(~${x})`),
  isnan: (x, d, use) => (d === "float32" ? (use("isnan"), `bw_isnan(${x})`) : "false"),
  isinf: (x, d, use) => (d === "float32" ? (use("isinf"), `bw_isinf(${x})`) : "false"),
  isfinite: (x, d, use) => (d === "float32" ? (use("isfinite"), `bw_isfinite(${x})`) : "true"),
};

export type BinaryRule = (a: string, b: string, d: DType, use: (h: Helper) => void) => string;

/** By operand dtype (bool operands of arithmetic are rejected before these run). */
export const ARITH: { readonly [K in ArithBinaryOp]: BinaryRule } = {
  // float: the right operand through bw_id, so the compiler cannot cancel x - x, -x + x
  // or (x + 1) - x to a constant (wrong for NaN and ±Inf); integers wrap exactly.
  add: (a, b, d, use) => (d === "float32" ? (use("opaque"), `(${a} + bw_id(${b}))`) : `(${a} + ${b})`),
  sub: (a, b, d, use) => (d === "float32" ? (use("opaque"), `(${a} - bw_id(${b}))`) : `(${a} - ${b})`),
  // float x * x: the right operand through bw_id, or a driver folds sqrt(a) * sqrt(a) to a (Mesa gives 1 for a = -1, not NaN).
  mul: (a, b, d, use) => (d === "float32" && a === b ? (use("opaque"), `(${a} * bw_id(${b}))`) : `(${a} * ${b})`),
  div: (a, b, d, use) =>
    d === "float32"
      ? `(${a} / ${b})`
      : d === "int32"
        ? (use("idiv"), `bw_idiv(${a}, ${b})`)
        : (use("udiv"), `bw_udiv(${a}, ${b})`),
  pow: (a, b, d, use) =>
    d === "float32"
      ? (use("fpow"), `bw_fpow(${a}, ${b})`)
      : d === "int32"
        ? (use("ipow"), `bw_ipow(${a}, ${b})`)
        : (use("upow"), `bw_upow(${a}, ${b})`),
  maximum: (a, b, d, use) => (d === "float32" ? (use("fmax"), `bw_fmax(${a}, ${b})`) : `max(${a}, ${b})`),
  minimum: (a, b, d, use) => (d === "float32" ? (use("fmin"), `bw_fmin(${a}, ${b})`) : `min(${a}, ${b})`),
  mod: (a, b, d, use) =>
    d === "float32"
      ? (use("fmod"), `bw_fmod(${a}, ${b})`)
      : d === "int32"
        ? (use("imod"), `bw_imod(${a}, ${b})`)
        : (use("umod"), `bw_umod(${a}, ${b})`),
  atan2: (a, b, d, use) =>
    d === "float32" ? (use("fatan2"), `bw_fatan2(${a}, ${b})`) : fail(`atan2 on ${d} (needs float32)`),
  // --- numerics/random: integer bitwise ops (int32/uint32) ---
  bitwise_and: (a, b, d) => intOnly("bitwise_and", d, `(${a} & ${b})`),
  bitwise_or: (a, b, d) => intOnly("bitwise_or", d, `(${a} | ${b})`),
  bitwise_xor: (a, b, d) => intOnly("bitwise_xor", d, `(${a} ^ ${b})`),
  left_shift: (a, b, d, use) =>
    intOnly(
      "left_shift",
      d,
      d === "uint32" ? (use("shlu"), `bw_shlu(${a}, ${b})`) : (use("shli"), `bw_shli(${a}, ${b})`),
    ),
  right_shift: (a, b, d, use) =>
    intOnly(
      "right_shift",
      d,
      d === "uint32" ? (use("shru"), `bw_shru(${a}, ${b})`) : (use("shri"), `bw_shri(${a}, ${b})`),
    ),
};

/** `code` when `d` is an integer dtype (the bitwise ops take int32 and uint32 only). */
function intOnly(op: string, d: DType, code: string): string {
  return d === "int32" || d === "uint32" ? code : fail(`${op} on ${d} (needs int32 or uint32)`);
}

export const COMPARE: { readonly [K in CompareOp]: string } = {
  eq: "==",
  ne: "!=",
  lt: "<",
  le: "<=",
  gt: ">",
  ge: ">=",
};

export const LOGIC: { readonly [K in LogicalBinaryOp]: { readonly bool: string; readonly bits: string } } = {
  and: { bool: "&&", bits: "&" },
  or: { bool: "||", bits: "|" },
  xor: { bool: "!=", bits: "^" },
};

export function checkDType(d: DType, what: string): void {
  if (d === "float64") {
    throw new DTypeError(`wgsl: ${what} is float64, which WebGPU cannot hold (WGSL has no f64); cast to float32 first`);
  }
}
