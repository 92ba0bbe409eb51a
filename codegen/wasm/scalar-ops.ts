/** Scalar WebAssembly for the loop form's unary, binary, index and cast expressions. */
import { F16_UNAVAILABLE, isNarrowInt } from "../../ir/dtype.js";
import { DTypeError, UnsupportedOpError } from "../../ir/errors.js";
import type { KBinaryOp, KUnaryOp } from "../../ir/kernel.js";
import type { LExpr, LType } from "../loop.js";
import { F64, I32, Op, Simd, type Code } from "./encoder.js";
import type { Host } from "./host.js";
import type { MathFn } from "./math.js";
import { isInt, wasmType, X } from "./types.js";

/** Pushes the scalar value of an expression whose operands are pushed by the callbacks. */
export class ScalarOps {
  constructor(
    private readonly c: Code,
    private readonly math: ReadonlyMap<MathFn, number>,
    private readonly host: Host,
  ) {}

  /** Converts the float64 on the stack (a launch constant) to type `t`. */
  fromF64(t: LType): void {
    const c = this.c;
    if (t === "float64") return;
    if (t === "float32") c.op(Op.f32_demote_f64);
    else c.byte(0xfc).u32(X.i64_trunc_sat_f64_s).op(X.i32_wrap_i64);
  }

  idx(op: Extract<LExpr, { k: "idx" }>["op"], a: () => void, b: () => void): void {
    const c = this.c;
    switch (op) {
      case "add":
      case "sub":
      case "mul":
      case "mod":
        // `mod` as the JS printer's `%` (truncating; offsets are non-negative).
        (a(), b(), c.op({ add: Op.i32_add, sub: Op.i32_sub, mul: Op.i32_mul, mod: Op.i32_rem_s }[op]));
        return;
      case "div": {
        // Floor division by a positive divisor: trunc, minus one when the remainder is negative.
        (a(), b(), c.op(Op.i32_div_s));
        (a(), b(), c.op(Op.i32_rem_s).i32(0).op(Op.i32_lt_s).op(Op.i32_sub));
        return;
      }
      case "min":
        (a(), b(), a(), b(), c.op(Op.i32_lt_s).op(Op.select));
        return;
      case "max":
        (a(), b(), a(), b(), c.op(Op.i32_gt_s).op(Op.select));
        return;
      default: {
        const missing: never = op;
        throw new UnsupportedOpError(`wasm: no rule for the index op ${String(missing)}`);
      }
    }
  }

  /** `x` of type `from` as `to` (the loop form's cast rules, as the JS printer's). */
  cast(from: LType, to: LType, x: () => void): void {
    const c = this.c;
    if (from === "float16" || to === "float16") throw new DTypeError(F16_UNAVAILABLE("the wasm backend"));
    if (to !== "index" && isNarrowInt(to)) {
      // The int32 cast, then the low 8 or 16 bits (sign-extended for int8/int16).
      this.cast(from, "int32", x);
      if (to === "int8") c.op(0xc0 /* i32.extend8_s */);
      else if (to === "int16") c.op(0xc1 /* i32.extend16_s */);
      else c.i32(to === "uint8" ? 0xff : 0xffff).op(Op.i32_and);
      return;
    }
    x();
    if (from === to) return;
    const fromInt = isInt(from);
    if (to === "bool") {
      if (from === "float32") c.f32c(0).op(Op.f32_ne);
      else if (from === "float64") c.f64c(0).op(Op.f64_ne);
      else c.i32(0).op(Op.i32_ne);
      return;
    }
    if (to === "float32") {
      if (from === "float64") c.op(Op.f32_demote_f64);
      else c.op(from === "uint32" ? X.f32_convert_i32_u : X.f32_convert_i32_s);
      return;
    }
    if (to === "float64") {
      if (from === "float32") c.op(Op.f64_promote_f32);
      else c.op(from === "uint32" ? Op.f64_convert_i32_u : Op.f64_convert_i32_s);
      return;
    }
    // to an integer type (int32, uint32, index): integers keep their bits.
    if (fromInt) return;
    if (from === "float32") c.op(Op.f64_promote_f32);
    this.f64ToInt32Wrapping();
  }

  /** ToInt32 of the float64 on the stack: truncate, wrap modulo 2^32, NaN and ±Infinity give 0. */
  private f64ToInt32Wrapping(): void {
    const c = this.c;
    const t = c.local(F64);
    c.tee(t);
    // |x| >= 2^63 (or NaN, ±Inf): reduce modulo 2^32 first (exact for finite x; NaN stays NaN -> 0).
    c.op(Op.f64_abs)
      .f64c(2 ** 63)
      .op(Op.f64_lt)
      .op(Op.i32_eqz)
      .op(Op.if)
      .byte(0x40);
    c.get(t)
      .get(t)
      .f64c(2 ** -32)
      .op(Op.f64_mul)
      .op(Op.f64_trunc)
      .f64c(2 ** 32)
      .op(Op.f64_mul)
      .op(Op.f64_sub)
      .set(t);
    c.op(Op.end);
    c.get(t).byte(0xfc).u32(X.i64_trunc_sat_f64_s).op(X.i32_wrap_i64);
  }

  /** Calls an f32x4 math function on a splat of the scalar on the stack, keeps lane 0. */
  private f32Math(fn: MathFn, arity: 1 | 2, a: () => void, b?: () => void): void {
    const c = this.c;
    a();
    c.simd(Simd.f32x4_splat);
    if (arity === 2) {
      b!();
      c.simd(Simd.f32x4_splat);
    }
    c.op(Op.call).u32(this.math.get(fn)!).lane(Simd.f32x4_extract_lane, 0);
  }

  unary(op: KUnaryOp, d: LType, x: () => void): void {
    const c = this.c;
    const f32 = d === "float32";
    const f64 = d === "float64";
    const tmp = (): number => c.local(wasmType(d));
    switch (op) {
      case "neg":
        if (f32) (x(), c.op(Op.f32_neg));
        else if (f64) (x(), c.op(Op.f64_neg));
        else (c.i32(0), x(), c.op(Op.i32_sub));
        return;
      case "abs":
        if (f32) (x(), c.op(Op.f32_abs));
        else if (f64) (x(), c.op(Op.f64_abs));
        else if (d === "int32") {
          const t = tmp();
          (c.i32(0), x(), c.tee(t).op(Op.i32_sub).get(t).get(t).i32(0).op(Op.i32_lt_s).op(Op.select));
        } else x();
        return;
      case "square": {
        const t = tmp();
        (x(),
          c
            .tee(t)
            .get(t)
            .op(f32 ? Op.f32_mul : f64 ? Op.f64_mul : Op.i32_mul));
        return;
      }
      case "sqrt":
        (x(), c.op(f32 ? Op.f32_sqrt : Op.f64_sqrt));
        return;
      case "rsqrt":
        // 1 / sqrt in float64, rounded once (as the JS backend).
        c.f64c(1);
        x();
        if (f32) c.op(Op.f64_promote_f32);
        c.op(Op.f64_sqrt).op(Op.f64_div);
        if (f32) c.op(Op.f32_demote_f64);
        return;
      case "exp":
      case "log":
      case "sin":
      case "cos":
      case "tan":
      case "tanh":
      case "sigmoid":
      case "asin":
      case "acos":
      case "atan":
        if (f32) this.f32Math(op, 1, x);
        else (x(), c.op(Op.call).u32(this.host.f64[op]));
        return;
      case "floor":
      case "ceil":
      case "round":
      case "trunc": {
        x();
        if (f32) c.op({ floor: X.f32_floor, ceil: X.f32_ceil, round: X.f32_nearest, trunc: X.f32_trunc }[op]);
        else if (f64) c.op({ floor: Op.f64_floor, ceil: Op.f64_ceil, round: Op.f64_nearest, trunc: Op.f64_trunc }[op]);
        return;
      }
      case "sign": {
        const t = tmp();
        if (f32 || f64) {
          // x > 0 ? 1 : x < 0 ? -1 : x (keeps ±0 and NaN).
          const k = (v: number): void => void (f32 ? c.f32c(v) : c.f64c(v));
          k(1);
          k(-1);
          (x(), c.tee(t));
          (c.get(t), k(0), c.op(f32 ? Op.f32_lt : Op.f64_lt), c.op(Op.select));
          (c.get(t), k(0), c.op(f32 ? Op.f32_gt : Op.f64_gt), c.op(Op.select));
        } else if (d === "int32") {
          (x(), c.tee(t).i32(0).op(Op.i32_gt_s).get(t).i32(0).op(Op.i32_lt_s).op(Op.i32_sub));
        } else {
          (x(), c.i32(0).op(Op.i32_ne));
        }
        return;
      }
      case "not":
        x();
        if (f32) c.f32c(0).op(Op.f32_eq);
        else if (f64) c.f64c(0).op(Op.f64_eq);
        else c.op(Op.i32_eqz);
        return;
      case "isnan": {
        if (!(f32 || f64)) return void c.i32(0);
        const t = tmp();
        (x(),
          c
            .tee(t)
            .get(t)
            .op(f32 ? Op.f32_ne : Op.f64_ne));
        return;
      }
      case "isinf":
      case "isfinite": {
        // |x| == Infinity, or |x| < Infinity; integers are all finite.
        const inf = op === "isinf";
        if (!(f32 || f64)) return void c.i32(inf ? 0 : 1);
        x();
        if (f32)
          c.op(Op.f32_abs)
            .f32c(Infinity)
            .op(inf ? Op.f32_eq : Op.f32_lt);
        else
          c.op(Op.f64_abs)
            .f64c(Infinity)
            .op(inf ? Op.f64_eq : Op.f64_lt);
        return;
      }
      default: {
        // Every op of the op-facts table needs a case: a missing one fails tsc here.
        const missing: never = op;
        throw new UnsupportedOpError(`wasm: no rule for the unary op ${String(missing)}`);
      }
    }
  }

  binary(op: KBinaryOp, d: LType, a: () => void, b: () => void): void {
    const c = this.c;
    const f32 = d === "float32";
    const f64 = d === "float64";
    const u = d === "uint32" || d === "bool";
    const pick = (i: number, f: number, g: number): number => (f32 ? f : f64 ? g : i);
    const simple = (i: number, f: number, g: number): void => {
      (a(), b(), c.op(pick(i, f, g)));
    };
    switch (op) {
      case "add":
        return simple(Op.i32_add, Op.f32_add, Op.f64_add);
      case "sub":
        return simple(Op.i32_sub, Op.f32_sub, Op.f64_sub);
      case "mul":
        return simple(Op.i32_mul, Op.f32_mul, Op.f64_mul);
      case "div": {
        if (f32 || f64) return simple(0, Op.f32_div, Op.f64_div);
        // b == 0 -> 0; int32 b == -1 -> -a (wraps; div_s would trap on INT_MIN / -1).
        const ta = c.local(I32);
        const tb = c.local(I32);
        (a(), c.set(ta), b(), c.set(tb));
        c.get(tb).op(Op.i32_eqz).op(Op.if).byte(I32).i32(0).op(Op.else);
        if (u) c.get(ta).get(tb).op(Op.i32_div_u);
        else {
          c.get(tb).i32(-1).op(Op.i32_eq).op(Op.if).byte(I32).i32(0).get(ta).op(Op.i32_sub).op(Op.else);
          c.get(ta).get(tb).op(Op.i32_div_s).op(Op.end);
        }
        c.op(Op.end);
        return;
      }
      case "pow":
        if (f32) return this.f32Math("pow", 2, a, b);
        if (f64) return (a(), b(), void c.op(Op.call).u32(this.host.pow));
        (a(),
          b(),
          c
            .i32(u ? 1 : 0)
            .op(Op.call)
            .u32(this.host.ipow));
        return;
      case "maximum":
      case "minimum": {
        if (f32 || f64)
          return simple(0, op === "maximum" ? X.f32_max : X.f32_min, op === "maximum" ? Op.f64_max : Op.f64_min);
        const ta = c.local(I32);
        const tb = c.local(I32);
        (a(), c.tee(ta), b(), c.tee(tb));
        c.get(ta).get(tb);
        c.op(op === "maximum" ? (u ? Op.i32_gt_u : Op.i32_gt_s) : u ? Op.i32_lt_u : Op.i32_lt_s).op(Op.select);
        return;
      }
      case "mod": {
        if (f32 || f64) {
          a();
          if (f32) c.op(Op.f64_promote_f32);
          b();
          if (f32) c.op(Op.f64_promote_f32);
          c.op(Op.call).u32(this.host.fmod);
          if (f32) c.op(Op.f32_demote_f64);
          return;
        }
        const ta = c.local(I32);
        const tb = c.local(I32);
        const r = c.local(I32);
        (a(), c.set(ta), b(), c.set(tb));
        c.get(tb).op(Op.i32_eqz).op(Op.if).byte(I32).i32(0).op(Op.else);
        if (u) c.get(ta).get(tb).op(Op.i32_rem_u);
        else {
          // Floor modulo: the remainder takes the divisor's sign.
          c.get(ta).get(tb).op(Op.i32_rem_s).set(r);
          c.get(r).get(tb).op(Op.i32_add).get(r);
          c.get(r).i32(0).op(Op.i32_ne);
          c.get(r).i32(0).op(Op.i32_lt_s).get(tb).i32(0).op(Op.i32_lt_s).op(Op.i32_ne).op(Op.i32_and);
          c.op(Op.select);
        }
        c.op(Op.end);
        return;
      }
      case "atan2":
        if (f32) return this.f32Math("atan2", 2, a, b);
        (a(), b(), c.op(Op.call).u32(this.host.atan2));
        return;
      case "eq":
        return simple(Op.i32_eq, Op.f32_eq, Op.f64_eq);
      case "ne":
        return simple(Op.i32_ne, Op.f32_ne, Op.f64_ne);
      case "lt":
        return simple(u ? Op.i32_lt_u : Op.i32_lt_s, Op.f32_lt, Op.f64_lt);
      case "le":
        return simple(u ? Op.i32_le_u : Op.i32_le_s, Op.f32_le, Op.f64_le);
      case "gt":
        return simple(u ? Op.i32_gt_u : Op.i32_gt_s, Op.f32_gt, Op.f64_gt);
      case "ge":
        return simple(u ? Op.i32_ge_u : Op.i32_ge_s, Op.f32_ge, Op.f64_ge);
      // Logical ops on bool (0/1) and the integer bitwise ops (int32, uint32): the same bits.
      case "and":
      case "bitwise_and":
        return (a(), b(), void c.op(Op.i32_and));
      case "or":
      case "bitwise_or":
        return (a(), b(), void c.op(Op.i32_or));
      case "xor":
      case "bitwise_xor":
        return (a(), b(), void c.op(Op.i32_xor));
      case "left_shift":
      case "right_shift": {
        // NumPy's shift counts: a count outside [0, 32) (unsigned compare: a negative int32
        // count is one) shifts every bit out, giving 0, or for an arithmetic right shift of a
        // negative int32 the sign in every bit (a >> 31). wasm's shifts take the count mod 32,
        // so the out-of-range result is selected explicitly.
        const ta = c.local(I32);
        const tb = c.local(I32);
        (a(), c.set(ta), b(), c.set(tb));
        const shift = op === "left_shift" ? Op.i32_shl : u ? Op.i32_shr_u : Op.i32_shr_s;
        c.get(ta).get(tb).op(shift);
        if (op === "right_shift" && !u) c.get(ta).i32(31).op(Op.i32_shr_s);
        else c.i32(0);
        c.get(tb).i32(32).op(Op.i32_lt_u).op(Op.select);
        return;
      }
      default: {
        // Every op of the op-facts table needs a case: a missing one fails tsc here.
        const missing: never = op;
        throw new UnsupportedOpError(`wasm: no rule for the binary op ${String(missing)}`);
      }
    }
  }
}
