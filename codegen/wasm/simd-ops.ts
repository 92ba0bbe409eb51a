/** Four-lane (SIMD128) WebAssembly for the loop form's unary and binary expressions. */
import { UnsupportedOpError } from "../../ir/errors.js";
import type { KBinaryOp, KUnaryOp } from "../../ir/kernel.js";
import type { LType } from "../loop.js";
import { Op, Simd, V128, type Code } from "./encoder.js";
import type { Host } from "./host.js";
import { emitExp, emitLog, emitSigmoid, emitSinCos, emitTanh, type MathFn } from "./math.js";
import { F32_MATH } from "./simd-rules.js";

/** Pushes the four-lane value of an expression whose operands are pushed by the callbacks. */
export class SimdOps {
  constructor(
    private readonly c: Code,
    private readonly math: ReadonlyMap<MathFn, number>,
    private readonly host: Host,
  ) {}

  /** An f32x4 comparison mask to bool lanes (0/1). */
  private maskToBool(): void {
    this.c.i32x4c(1).simd(Simd.v128_and);
  }

  unary(op: KUnaryOp, d: LType, x: () => void): void {
    const c = this.c;
    if (d === "float32") {
      switch (op) {
        case "neg":
          return (x(), void c.simd(Simd.f32x4_neg));
        case "abs":
          return (x(), void c.simd(Simd.f32x4_abs));
        case "sqrt":
          return (x(), void c.simd(Simd.f32x4_sqrt));
        case "rsqrt":
          return (x(), void c.op(Op.call).u32(this.math.get("rsqrt") ?? this.needRsqrt()));
        case "floor":
          return (x(), void c.simd(Simd.f32x4_floor));
        case "ceil":
          return (x(), void c.simd(Simd.f32x4_ceil));
        case "round":
          return (x(), void c.simd(Simd.f32x4_nearest));
        case "trunc":
          return (x(), void c.simd(Simd.f32x4_trunc));
        case "sign": {
          const t = c.local(V128);
          (x(), c.set(t));
          // x > 0 ? 1 : x < 0 ? -1 : x
          c.f32x4c(1);
          c.f32x4c(-1).get(t).get(t).f32x4c(0).simd(Simd.f32x4_lt).simd(Simd.v128_bitselect);
          c.get(t).f32x4c(0).simd(Simd.f32x4_gt).simd(Simd.v128_bitselect);
          return;
        }
        case "not":
          return (x(), c.f32x4c(0).simd(Simd.f32x4_eq), this.maskToBool());
        case "isnan": {
          const t = c.local(V128);
          return (x(), c.tee(t).get(t).simd(Simd.f32x4_ne), this.maskToBool());
        }
        case "isinf":
          return (x(), c.simd(Simd.f32x4_abs).f32x4c(Infinity).simd(Simd.f32x4_eq), this.maskToBool());
        case "isfinite":
          return (x(), c.simd(Simd.f32x4_abs).f32x4c(Infinity).simd(Simd.f32x4_lt), this.maskToBool());
        case "exp":
          return emitExp(c, x)(c);
        case "log":
          return emitLog(c, x)(c);
        case "sin":
        case "cos":
          return emitSinCos(c, x, op, this.host.sin32[op])(c);
        case "tanh":
          return emitTanh(c, x)(c);
        case "sigmoid":
          return emitSigmoid(c, x)(c);
        default: {
          // The float64-inside functions stay calls (long bodies, used less).
          const fn = F32_MATH[op]!;
          return (x(), void c.op(Op.call).u32(this.math.get(fn)!));
        }
      }
    }
    // integer lanes
    switch (op) {
      case "neg":
        return (c.i32x4c(0), x(), void c.simd(Simd.i32x4_sub));
      case "abs":
        if (d === "int32") return (x(), void c.simd(0xa0 /* i32x4.abs */));
        return x();
      case "not":
        return (x(), c.i32x4c(0).simd(Simd.i32x4_eq), this.maskToBool());
      case "isnan":
      case "isinf":
        return void c.i32x4c(0);
      case "isfinite":
        return void c.i32x4c(1);
      default:
        throw new UnsupportedOpError(`wasm: ${op} on ${d} lanes`);
    }
  }

  private needRsqrt(): number {
    throw new UnsupportedOpError("wasm: rsqrt vector function missing");
  }

  binary(op: KBinaryOp, d: LType, a: () => void, b: () => void): void {
    const c = this.c;
    if (d === "float32") {
      const m = {
        add: Simd.f32x4_add,
        sub: Simd.f32x4_sub,
        mul: Simd.f32x4_mul,
        div: Simd.f32x4_div,
        maximum: Simd.f32x4_max,
        minimum: Simd.f32x4_min,
        eq: Simd.f32x4_eq,
        ne: Simd.f32x4_ne,
        lt: Simd.f32x4_lt,
        le: Simd.f32x4_le,
        gt: Simd.f32x4_gt,
        ge: Simd.f32x4_ge,
      } as Partial<Record<KBinaryOp, number>>;
      (a(), b());
      if (op === "pow" || op === "atan2") return void c.op(Op.call).u32(this.math.get(op)!);
      c.simd(m[op]!);
      if (op === "eq" || op === "ne" || op === "lt" || op === "le" || op === "gt" || op === "ge") this.maskToBool();
      return;
    }
    const u = d === "uint32" || d === "bool";
    (a(), b());
    switch (op) {
      case "add":
        return void c.simd(Simd.i32x4_add);
      case "sub":
        return void c.simd(Simd.i32x4_sub);
      case "mul":
        return void c.simd(Simd.i32x4_mul);
      case "maximum":
        return void c.simd(u ? 0xb9 /* max_u */ : Simd.i32x4_max_s);
      case "minimum":
        return void c.simd(u ? 0xb7 /* min_u */ : Simd.i32x4_min_s);
      case "and":
        return void c.simd(Simd.v128_and);
      case "or":
        return void c.simd(Simd.v128_or);
      case "xor":
        return void c.simd(Simd.v128_xor);
      case "eq":
        c.simd(Simd.i32x4_eq);
        break;
      case "ne":
        c.simd(Simd.i32x4_ne);
        break;
      case "lt":
        c.simd(u ? Simd.i32x4_lt_u : Simd.i32x4_lt_s);
        break;
      case "le":
        c.simd(u ? 0x3e /* le_u */ : Simd.i32x4_le_s);
        break;
      case "gt":
        c.simd(u ? Simd.i32x4_gt_u : Simd.i32x4_gt_s);
        break;
      case "ge":
        c.simd(u ? 0x40 /* ge_u */ : Simd.i32x4_ge_s);
        break;
      default:
        throw new UnsupportedOpError(`wasm: ${op} on ${d} lanes`);
    }
    this.maskToBool();
    void this.host;
  }
}
