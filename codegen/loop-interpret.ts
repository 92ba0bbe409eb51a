/**
 * A plain interpreter of the loop form (codegen/loop.ts): the meaning of a loop
 * program, independent of every renderer. Elementwise ops use the reference
 * interpreter's definitions (`unaryRef`, `binaryRef`), and every result is
 * converted to its type (float32 rounded, int32/uint32 wrapped, bool 0/1), so a
 * relaxed program runs as an exact one. Tests run lowered kernels here against
 * `ir/interpret.ts`, which proves the lowering apart from the JS, WGSL and WASM
 * printers. Slow; never used by a backend.
 */
import { castScalar, type TypedArray } from "../ir/dtype.js";
import { IRError } from "../ir/errors.js";
import { binaryRef, unaryRef } from "../ir/interpret.js";
import type { LExpr, LStmt, LType, LoopProgram } from "./loop.js";

/** `v` converted to type `t` (the kernel IR's cast rules; index values are exact integers). */
export function toType(v: number, t: LType): number {
  if (t !== "index") return castScalar(v, t);
  if (!Number.isInteger(v)) throw new IRError(`loop form: index value ${v} is not an integer`);
  return v;
}

/**
 * Runs a loop program on buffers, with the launch arguments the JS backend passes:
 * `sizes` (batch sizes), `strides` (inputs' batch strides, concatenated), `consts`.
 */
export function runLoop(
  p: LoopProgram,
  ins: readonly ArrayLike<number>[],
  outs: readonly TypedArray[],
  sizes: readonly number[],
  strides: readonly number[],
  consts: ArrayLike<number>,
): void {
  const val = new Float64Array(p.values);
  const types: LType[] = new Array<LType>(p.values);
  const locals = new Float64Array(p.locals.length);
  const expr = (t: LType, e: LExpr): number => {
    switch (e.k) {
      case "size":
        return sizes[e.i]!;
      case "stride":
        return strides[e.i]!;
      case "const":
        return toType(consts[e.slot]!, t);
      case "lit":
        return e.v;
      case "load": {
        const at = val[e.at]!;
        // Out of range only where the value is not used (a `where` branch not taken).
        const v = ins[e.buf]![at];
        return v === undefined ? NaN : v;
      }
      case "oload":
        return outs[e.buf]![val[e.at]!]!;
      case "get":
        return locals[e.local]!;
      case "unary":
        return toType(unaryRef(e.op, val[e.x]!), t);
      case "binary":
        return toType(binaryRef(e.op, val[e.a]!, val[e.b]!, types[e.a] as Exclude<LType, "index">), t);
      case "where":
        return val[e.c] !== 0 ? val[e.a]! : val[e.b]!;
      case "cast": {
        const x = val[e.x]!;
        // float → index truncates (offsets are read from integer buffers; this only guards).
        return toType(t === "index" ? Math.trunc(x) : x, t);
      }
      case "idx": {
        const a = val[e.a]!;
        const b = val[e.b]!;
        switch (e.op) {
          case "add":
            return a + b;
          case "sub":
            return a - b;
          case "mul":
            return a * b;
          case "div":
            return Math.floor(a / b);
          case "mod":
            return a % b;
          case "min":
            return Math.min(a, b);
          case "max":
            return Math.max(a, b);
        }
      }
      case "icmp": {
        const a = val[e.a]!;
        const b = val[e.b]!;
        const r = { lt: a < b, le: a <= b, gt: a > b, ge: a >= b, eq: a === b, ne: a !== b }[e.op];
        return r ? 1 : 0;
      }
      default:
        throw new IRError(`loop form: the interpreter runs sequential programs, not ${e.k}`);
    }
  };
  const block = (stmts: readonly LStmt[]): void => {
    for (const s of stmts) {
      switch (s.k) {
        case "let":
          types[s.id] = s.type;
          val[s.id] = expr(s.type, s.e);
          break;
        case "set":
          locals[s.local] = val[s.value]!;
          break;
        case "store":
          outs[s.buf]![val[s.at]!] = val[s.value]!;
          break;
        case "loop": {
          const to = val[s.to]!;
          for (let v = val[s.from]!; v < to; v++) {
            types[s.var] = "index";
            val[s.var] = v;
            block(s.body);
          }
          break;
        }
        case "if":
          block(val[s.cond] !== 0 ? s.then : s.else);
          break;
        default:
          throw new IRError(`loop form: the interpreter runs sequential programs, not ${s.k}`);
      }
    }
  };
  block(p.body);
}
