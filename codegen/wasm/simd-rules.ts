/**
 * Which loop bodies run in four SIMD lanes (see print.ts, Vectorisation), and which
 * float32 vector math functions (./math.ts) a program needs.
 */
import type { KBinaryOp, KUnaryOp } from "../../ir/kernel.js";
import { operands as operandsOf, walkStmts, type LExpr, type LType, type LoopProgram } from "../loop.js";
import type { MathFn } from "./math.js";
import type { Let, Shard } from "./shard.js";
import { isNarrowL } from "./types.js";

export const F32_MATH: Partial<Record<KUnaryOp, MathFn>> = {
  exp: "exp",
  log: "log",
  sin: "sin",
  cos: "cos",
  tan: "tan",
  tanh: "tanh",
  sigmoid: "sigmoid",
  asin: "asin",
  acos: "acos",
  atan: "atan",
};

/** The f32x4 math functions and host imports a program needs. */
export function mathNeeds(p: LoopProgram, defs: readonly (Let | undefined)[]): Set<MathFn> {
  const need = new Set<MathFn>();
  walkStmts(p.body, (s) => {
    if (s.k !== "let") return;
    const e = s.e;
    if (e.k === "unary" && defs[e.x]?.type === "float32") {
      const fn = F32_MATH[e.op];
      if (fn !== undefined) need.add(fn);
    }
    if (e.k === "unary" && e.op === "rsqrt" && defs[e.x]?.type === "float32") need.add("rsqrt");
    if (e.k === "binary" && defs[e.a]?.type === "float32" && (e.op === "pow" || e.op === "atan2")) need.add(e.op);
  });
  return need;
}

/** Whether the shard loop's body can run in four SIMD lanes (see the file comment). */
export function vectorizable(p: LoopProgram, shard: Shard, defs: readonly (Let | undefined)[]): boolean {
  void defs;
  // Kernels that touch a narrow dtype run scalar (their loads and stores are 8 or 16 bits wide).
  if ([...p.inputs, ...p.outputs].some(isNarrowL)) return false;
  for (const s of shard.loop.body) {
    if (s.k === "loop" || s.k === "if") return false;
    if (s.k === "set") {
      if (shard.counter === null || s.local !== shard.counter.local) return false;
      continue;
    }
    if (s.k === "store") {
      if (p.outputs[s.buf] === "float64") return false;
      continue;
    }
    if (s.k !== "let") return false; // workgroup-only kinds (never in a sequential program)
    if (isNarrowL(s.type)) return false;
    const e = s.e;
    // float64 values run in two f64x2 halves, but only the float64 accumulation of a short float32
    // reduction (codegen/reductions.ts, `combine`): promotes, + - × ÷, and the demote back.
    if (s.type === "float64" || operandsOf(e).some((o) => defs[o]?.type === "float64")) {
      if (!float64Lanes(s.type, e, defs)) return false;
      continue;
    }
    switch (e.k) {
      case "get":
        if (shard.counter === null || e.local !== shard.counter.local) return false;
        break;
      case "unary":
        if (s.type !== "float32" && s.type !== "bool" && defs[e.x]?.type === "float32") {
          // predicates on float32: fine
        }
        if (!VEC_UNARY.has(e.op)) return false;
        if (defs[e.x]?.type !== "float32" && !["neg", "abs", "not", "isnan", "isinf", "isfinite"].includes(e.op))
          return false;
        break;
      case "binary": {
        const d = defs[e.a]?.type;
        if (d === "float32") {
          if (!VEC_BINARY_F32.has(e.op)) return false;
        } else if (!VEC_BINARY_INT.has(e.op)) return false;
        break;
      }
      case "cast": {
        const from = defs[e.x]?.type;
        if (from === "float64") return false;
        // float -> int casts wrap modulo 2^32 (not saturate): lane by lane is not worth it here.
        if (from === "float32" && s.type !== "float32" && s.type !== "bool") return false;
        break;
      }
      case "idx":
        if (e.op === "div" || e.op === "mod") return false;
        break;
      case "param":
      case "builtin":
      case "bits":
      case "sload":
      case "oload":
        return false;
      default:
        break;
    }
  }
  return true;
}

/** The float64 values a four-lane body computes (as two f64x2 halves): see `vectorizable`. */
const VEC_BINARY_F64 = new Set<KBinaryOp>(["add", "sub", "mul", "div"]);
function float64Lanes(t: LType, e: LExpr, defs: readonly (Let | undefined)[]): boolean {
  const from = (id: number): LType | undefined => defs[id]?.type;
  if (e.k === "cast") return t === "float64" ? from(e.x) === "float32" || from(e.x) === "float64" : t === "float32";
  return (
    t === "float64" &&
    e.k === "binary" &&
    VEC_BINARY_F64.has(e.op) &&
    from(e.a) === "float64" &&
    from(e.b) === "float64"
  );
}

const VEC_UNARY = new Set<KUnaryOp>([
  "neg",
  "abs",
  "sqrt",
  "rsqrt",
  "exp",
  "log",
  "sin",
  "cos",
  "tan",
  "tanh",
  "sigmoid",
  "asin",
  "acos",
  "atan",
  "floor",
  "ceil",
  "round",
  "trunc",
  "sign",
  "not",
  "isnan",
  "isinf",
  "isfinite",
]);
const VEC_BINARY_F32 = new Set<KBinaryOp>([
  "add",
  "sub",
  "mul",
  "div",
  "pow",
  "maximum",
  "minimum",
  "atan2",
  "eq",
  "ne",
  "lt",
  "le",
  "gt",
  "ge",
]);
const VEC_BINARY_INT = new Set<KBinaryOp>([
  "add",
  "sub",
  "mul",
  "maximum",
  "minimum",
  "eq",
  "ne",
  "lt",
  "le",
  "gt",
  "ge",
  "and",
  "or",
  "xor",
]);
