/**
 * Four-lane (SIMD128) rules of the elementwise ops, in one table per arity: mapped types
 * over the op unions of ir/elementwise.ts, so an op added there without a four-lane
 * decision here fails `tsc`. Each entry says, per lane kind, how the op runs four at a
 * time or `"scalar"` (a body that holds it runs the scalar loop only; `vectorizable`
 * in ./simd-rules.ts reads these entries), and which vector math function of ./math.ts
 * it needs (`math`: `mathNeeds` defines it in the module; the scalar body calls it too).
 *
 * Lane kinds: `f32` float32 lanes (f32x4); `int` int32, uint32, bool and index lanes
 * (i32x4; bool lanes hold 0/1); `f64` (binary only) the float64 accumulation of a short
 * float32 reduction, in two f64x2 halves: one f64x2 instruction or `"scalar"`.
 */
import type { KBinaryOp, KUnaryOp } from "../../ir/elementwise.js";
import { UnsupportedOpError } from "../../ir/errors.js";
import type { LType } from "../loop.js";
import { Op, Simd, V128, type Code } from "./encoder.js";
import type { Host } from "./host.js";
import {
  emitExp,
  emitLog,
  emitSigmoid,
  emitSinCos,
  emitTanh,
  type MathFn,
  type MathFn1,
  type MathFn2,
} from "./math.js";

/** What a rule emits with. */
export interface Lanes {
  readonly c: Code;
  /** The module's vector math functions (`mathNeeds`). */
  readonly math: ReadonlyMap<MathFn, number>;
  readonly host: Host;
}

/** Pushes the four-lane result; `x` pushes the operand, `d` is its lane type. */
type Emit1 = (l: Lanes, x: () => void, d: LType) => void;
type Emit2 = (l: Lanes, a: () => void, b: () => void, d: LType) => void;

export interface UnaryRule {
  readonly f32: Emit1 | "scalar";
  readonly int: Emit1 | "scalar";
  readonly math?: MathFn1;
}
export interface BinaryRule {
  readonly f32: Emit2 | "scalar";
  readonly int: Emit2 | "scalar";
  readonly f64: number | "scalar";
  readonly math?: MathFn2;
}

/** An f32x4 or i32x4 comparison mask to bool lanes (0/1). */
const maskToBool = (c: Code): void => void c.i32x4c(1).simd(Simd.v128_and);

// ---- unary rule makers
const one =
  (o: number): Emit1 =>
  ({ c }, x) =>
    void (x(), c.simd(o));
/** Then the mask as bool lanes. */
const pred =
  (f: (c: Code) => void): Emit1 =>
  ({ c }, x) =>
    void (x(), f(c), maskToBool(c));
/** The vector library's function, called (the float64-inside ones: long bodies, used less). */
const call = (fn: MathFn1): { f32: Emit1; math: MathFn1 } => ({
  math: fn,
  f32: ({ c, math }, x) => void (x(), c.op(Op.call).u32(math.get(fn)!)),
});
/** The vector library's body, inlined (the hot float32 ones); the scalar body calls the function. */
const inline = (fn: MathFn1, f32: Emit1): { f32: Emit1; math: MathFn1 } => ({ math: fn, f32 });
const f32Only = "scalar" as const;
/** x * x: the operand once, into a local, multiplied by itself. */
const squared =
  (mul: number): Emit1 =>
  ({ c }, x) => {
    const t = c.local(V128);
    (x(), c.tee(t).get(t).simd(mul));
  };

export const SIMD_UNARY: { readonly [K in KUnaryOp]: UnaryRule } = {
  neg: { f32: one(Simd.f32x4_neg), int: ({ c }, x) => void (c.i32x4c(0), x(), c.simd(Simd.i32x4_sub)) },
  abs: {
    f32: one(Simd.f32x4_abs),
    int: ({ c }, x, d) => (d === "int32" ? void (x(), c.simd(0xa0 /* i32x4.abs */)) : x()),
  },
  square: { f32: squared(Simd.f32x4_mul), int: squared(Simd.i32x4_mul) },
  sqrt: { f32: one(Simd.f32x4_sqrt), int: f32Only },
  rsqrt: { ...call("rsqrt"), int: f32Only },
  exp: { ...inline("exp", ({ c }, x) => emitExp(c, x)(c)), int: f32Only },
  log: { ...inline("log", ({ c }, x) => emitLog(c, x)(c)), int: f32Only },
  sin: { ...inline("sin", ({ c, host }, x) => emitSinCos(c, x, "sin", host.sin32.sin)(c)), int: f32Only },
  cos: { ...inline("cos", ({ c, host }, x) => emitSinCos(c, x, "cos", host.sin32.cos)(c)), int: f32Only },
  tan: { ...call("tan"), int: f32Only },
  tanh: { ...inline("tanh", ({ c }, x) => emitTanh(c, x)(c)), int: f32Only },
  sigmoid: { ...inline("sigmoid", ({ c }, x) => emitSigmoid(c, x)(c)), int: f32Only },
  asin: { ...call("asin"), int: f32Only },
  acos: { ...call("acos"), int: f32Only },
  atan: { ...call("atan"), int: f32Only },
  floor: { f32: one(Simd.f32x4_floor), int: f32Only },
  ceil: { f32: one(Simd.f32x4_ceil), int: f32Only },
  round: { f32: one(Simd.f32x4_nearest), int: f32Only },
  trunc: { f32: one(Simd.f32x4_trunc), int: f32Only },
  sign: {
    f32: ({ c }, x) => {
      const t = c.local(V128);
      (x(), c.set(t));
      // x > 0 ? 1 : x < 0 ? -1 : x
      c.f32x4c(1);
      c.f32x4c(-1).get(t).get(t).f32x4c(0).simd(Simd.f32x4_lt).simd(Simd.v128_bitselect);
      c.get(t).f32x4c(0).simd(Simd.f32x4_gt).simd(Simd.v128_bitselect);
    },
    int: f32Only,
  },
  not: { f32: pred((c) => c.f32x4c(0).simd(Simd.f32x4_eq)), int: pred((c) => c.i32x4c(0).simd(Simd.i32x4_eq)) },
  isnan: {
    f32: ({ c }, x) => {
      const t = c.local(V128);
      (x(), c.tee(t).get(t).simd(Simd.f32x4_ne), maskToBool(c));
    },
    int: ({ c }) => void c.i32x4c(0),
  },
  isinf: {
    f32: pred((c) => c.simd(Simd.f32x4_abs).f32x4c(Infinity).simd(Simd.f32x4_eq)),
    int: ({ c }) => void c.i32x4c(0),
  },
  isfinite: {
    f32: pred((c) => c.simd(Simd.f32x4_abs).f32x4c(Infinity).simd(Simd.f32x4_lt)),
    int: ({ c }) => void c.i32x4c(1),
  },
};

// ---- binary rule makers
const two =
  (o: number): Emit2 =>
  ({ c }, a, b) =>
    void (a(), b(), c.simd(o));
/** Signed or unsigned (uint32 and bool lanes) instruction. */
const signed =
  (s: number, u: number): Emit2 =>
  ({ c }, a, b, d) =>
    void (a(), b(), c.simd(d === "uint32" || d === "bool" ? u : s));
const cmp =
  (e: Emit2): Emit2 =>
  (l, a, b, d) =>
    void (e(l, a, b, d), maskToBool(l.c));
const call2 = (fn: MathFn2): { f32: Emit2; math: MathFn2 } => ({
  math: fn,
  f32: ({ c, math }, a, b) => void (a(), b(), c.op(Op.call).u32(math.get(fn)!)),
});
const none = { f32: "scalar", int: "scalar", f64: "scalar" } as const;

export const SIMD_BINARY: { readonly [K in KBinaryOp]: BinaryRule } = {
  add: { f32: two(Simd.f32x4_add), int: two(Simd.i32x4_add), f64: Simd.f64x2_add },
  sub: { f32: two(Simd.f32x4_sub), int: two(Simd.i32x4_sub), f64: Simd.f64x2_sub },
  mul: { f32: two(Simd.f32x4_mul), int: two(Simd.i32x4_mul), f64: Simd.f64x2_mul },
  div: { f32: two(Simd.f32x4_div), int: "scalar", f64: Simd.f64x2_div },
  pow: { ...call2("pow"), int: "scalar", f64: "scalar" },
  maximum: { f32: two(Simd.f32x4_max), int: signed(Simd.i32x4_max_s, 0xb9 /* max_u */), f64: "scalar" },
  minimum: { f32: two(Simd.f32x4_min), int: signed(Simd.i32x4_min_s, 0xb7 /* min_u */), f64: "scalar" },
  mod: none,
  atan2: { ...call2("atan2"), int: "scalar", f64: "scalar" },
  eq: { f32: cmp(two(Simd.f32x4_eq)), int: cmp(two(Simd.i32x4_eq)), f64: "scalar" },
  ne: { f32: cmp(two(Simd.f32x4_ne)), int: cmp(two(Simd.i32x4_ne)), f64: "scalar" },
  lt: { f32: cmp(two(Simd.f32x4_lt)), int: cmp(signed(Simd.i32x4_lt_s, Simd.i32x4_lt_u)), f64: "scalar" },
  le: { f32: cmp(two(Simd.f32x4_le)), int: cmp(signed(Simd.i32x4_le_s, 0x3e /* le_u */)), f64: "scalar" },
  gt: { f32: cmp(two(Simd.f32x4_gt)), int: cmp(signed(Simd.i32x4_gt_s, Simd.i32x4_gt_u)), f64: "scalar" },
  ge: { f32: cmp(two(Simd.f32x4_ge)), int: cmp(signed(Simd.i32x4_ge_s, 0x40 /* ge_u */)), f64: "scalar" },
  and: { f32: "scalar", int: two(Simd.v128_and), f64: "scalar" },
  or: { f32: "scalar", int: two(Simd.v128_or), f64: "scalar" },
  xor: { f32: "scalar", int: two(Simd.v128_xor), f64: "scalar" },
  bitwise_and: none,
  bitwise_or: none,
  bitwise_xor: none,
  left_shift: none,
  right_shift: none,
};

/** The lane kind of an operand type. */
export const laneKind = (d: LType | undefined): "f32" | "int" => (d === "float32" ? "f32" : "int");

/** Pushes four lanes of `op` on operands of type `d` (a rule `vectorizable` admitted). */
export function simdUnary(l: Lanes, op: KUnaryOp, d: LType, x: () => void): void {
  const emit = SIMD_UNARY[op][laneKind(d)];
  if (emit === "scalar") throw new UnsupportedOpError(`wasm: ${op} on ${d} lanes`);
  emit(l, x, d);
}
export function simdBinary(l: Lanes, op: KBinaryOp, d: LType, a: () => void, b: () => void): void {
  const emit = SIMD_BINARY[op][laneKind(d)];
  if (emit === "scalar") throw new UnsupportedOpError(`wasm: ${op} on ${d} lanes`);
  emit(l, a, b, d);
}
