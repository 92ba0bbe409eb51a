/**
 * Which loop bodies run in four SIMD lanes (see print.ts, Vectorisation), and which
 * float32 vector math functions (./math.ts) a program needs: both read the per-op
 * four-lane rules of ./simd-ops.ts (`SIMD_UNARY`, `SIMD_BINARY`).
 */
import { UnsupportedOpError } from "../../ir/errors.js";
import { operands as operandsOf, walkStmts, type LExpr, type LType, type LoopProgram } from "../loop.js";
import type { MathFn } from "./math.js";
import type { Let, Shard } from "./shard.js";
import { laneKind, SIMD_BINARY, SIMD_UNARY } from "./simd-ops.js";
import { isNarrowL } from "./types.js";

/** The f32x4 math functions a program needs (each float32 unary or binary op's `math`, in program order). */
export function mathNeeds(p: LoopProgram, defs: readonly (Let | undefined)[]): Set<MathFn> {
  const need = new Set<MathFn>();
  walkStmts(p.body, (s) => {
    if (s.k !== "let") return;
    const e = s.e;
    const fn =
      e.k === "unary" && defs[e.x]?.type === "float32"
        ? SIMD_UNARY[e.op].math
        : e.k === "binary" && defs[e.a]?.type === "float32"
          ? SIMD_BINARY[e.op].math
          : undefined;
    if (fn !== undefined) need.add(fn);
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
        if (SIMD_UNARY[e.op][laneKind(defs[e.x]?.type)] === "scalar") return false;
        break;
      case "binary":
        if (SIMD_BINARY[e.op][laneKind(defs[e.a]?.type)] === "scalar") return false;
        break;
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
      case "size":
      case "stride":
      case "const":
      case "lit":
      case "load":
      case "where":
      case "icmp":
        break;
      default: {
        const kind: never = e;
        throw new UnsupportedOpError(`wasm: no four-lane decision for ${String(kind)}`);
      }
    }
  }
  return true;
}

/** The float64 values a four-lane body computes (as two f64x2 halves): see `vectorizable`. */
function float64Lanes(t: LType, e: LExpr, defs: readonly (Let | undefined)[]): boolean {
  const from = (id: number): LType | undefined => defs[id]?.type;
  if (e.k === "cast") return t === "float64" ? from(e.x) === "float32" || from(e.x) === "float64" : t === "float32";
  return (
    t === "float64" &&
    e.k === "binary" &&
    SIMD_BINARY[e.op].f64 !== "scalar" &&
    from(e.a) === "float64" &&
    from(e.b) === "float64"
  );
}
