/**
 * Loop form -> WebAssembly: the third printer of the loop form (codegen/loop.ts),
 * beside the JS and WGSL ones. The module imports the backend's memory
 * (`env.memory`) and host functions (`m.*`), and exports
 *
 *   run(args, begin, end)   the kernel; launch arguments at byte offset `args`
 *   units(args)             how many iterations the sharded loop has (0 if none)
 *
 * Launch arguments (`argsLayout`): per input its byte pointer and its element count,
 * per output its byte pointer, the batch sizes, the batch strides (int32 each), then
 * the constants as float64 at an 8-aligned offset.
 *
 * Sharding: when the program's first top-level loop may run its iterations in any
 * order on disjoint ranges (no local set before it is read inside it, except the
 * output counter the lowering keeps, whose start is computed from the range),
 * `run` executes only iterations [begin, end) of it (and everything outside it, which
 * only defines values); a worker pool splits that range over threads.
 *
 * Vectorisation: when that loop's body is straight-line (only values and stores) over
 * float32, int32, uint32, bool and index values, it also runs four iterations at a
 * time in SIMD lanes: loads and stores whose four addresses are consecutive use one
 * vector access (checked at run time), others go lane by lane; the rest of the range
 * runs the scalar body. float32 math (exp, log, sin, …) uses the vector library of
 * ./math.ts in both paths, so a result does not depend on its lane. The float64
 * accumulation of a short float32 sum, mean or product (codegen/reductions.ts,
 * `combine`) runs in two f64x2 halves per four lanes (promote, + - × ÷, demote), with
 * the scalar body's rounding; no other float64 value is vectorised.
 *
 * Arithmetic: float32 ops round to float32 after each op (the loop form allows a
 * wider intermediate with `relaxedFloat32`; this target never uses it). float64
 * transcendental functions, float `mod` and integer `pow` call the host's JS
 * implementations (the same as the JS backend's), element by element.
 * A load's element offset is clamped into its buffer (a `where` branch that is not
 * taken may compute an out-of-range offset; WebAssembly would trap on it).
 */
import { F16_UNAVAILABLE, isNarrowInt, type DType } from "../../ir/dtype.js";
import { DTypeError, UnsupportedOpError } from "../../ir/errors.js";
import type { KBinaryOp, KUnaryOp } from "../../ir/kernel.js";
import { operands as operandsOf, walkStmts, type LExpr, type LStmt, type LType, type LoopProgram } from "../loop.js";
import { Code, F32, F64, I32, ModuleBuilder, Op, Simd, V128, type ValType } from "./encoder.js";
import {
  defineMath,
  emitExp,
  emitLog,
  emitSinCos,
  emitSigmoid,
  emitTanh,
  importMath,
  MATH_HOST,
  type MathFn,
} from "./math.js";

// ---------------------------------------------------------------- host functions

/** NumPy's float `%` (the JS backend's floatMod). */
function floatMod(a: number, b: number): number {
  if (b === 0) return NaN;
  const r = a % b;
  return r === 0 ? (b < 0 ? -0 : 0) : r < 0 !== b < 0 ? r + b : r;
}
/** Wrapping integer pow by squaring (the JS backend's intPow); u = 1 for uint32 (whose bits arrive as int32). */
function intPow(a: number, b: number, u: number): number {
  if (u) b = b >>> 0;
  if (b < 0) return a === 1 ? 1 : a === -1 ? (b % 2 === 0 ? 1 : -1) : 0;
  let r = 1;
  let x = a | 0;
  for (let e = b >>> 0; e !== 0; e >>>= 1) {
    if (e & 1) r = Math.imul(r, x);
    x = Math.imul(x, x);
  }
  return u ? r >>> 0 : r | 0;
}
function sigmoid64(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** Host functions of a kernel module (module "m"): the vector math's, float64 math, float mod, integer pow. */
export const KERNEL_HOST = {
  ...MATH_HOST,
  exp: Math.exp,
  log: Math.log,
  tanh: Math.tanh,
  asin: Math.asin,
  acos: Math.acos,
  atan: Math.atan,
  sigmoid: sigmoid64,
  fmod: floatMod,
  ipow: intPow,
} as const;

/** `KERNEL_HOST` as JS source, for worker threads. */
export const KERNEL_HOST_SOURCE = `{ sin: Math.sin, cos: Math.cos, tan: Math.tan, atan2: Math.atan2, pow: ${String(
  MATH_HOST.pow,
)}, exp: Math.exp, log: Math.log, tanh: Math.tanh, asin: Math.asin, acos: Math.acos, atan: Math.atan, sigmoid: ${String(
  sigmoid64,
)}, fmod: ${String(floatMod)}, ipow: ${String(intPow)} }`;

const F64_UNARY_HOST = ["exp", "log", "sin", "cos", "tan", "tanh", "asin", "acos", "atan", "sigmoid"] as const;
type F64UnaryHost = (typeof F64_UNARY_HOST)[number];

interface Host {
  readonly f64: Record<F64UnaryHost, number>;
  /** The host sin/cos imports the float32 vector sin/cos hand huge arguments to. */
  readonly sin32: { readonly sin: number; readonly cos: number };
  readonly atan2: number;
  readonly pow: number;
  readonly fmod: number;
  readonly ipow: number;
}

// ---------------------------------------------------------------- launch arguments

/** Byte offsets of the launch arguments inside the args block. */
export interface ArgsLayout {
  readonly inPtr: (i: number) => number;
  readonly inLen: (i: number) => number;
  readonly outPtr: (i: number) => number;
  readonly size: (i: number) => number;
  readonly stride: (i: number) => number;
  readonly constAt: (slot: number) => number;
  /** Total bytes. */
  readonly bytes: number;
}

/**
 * Launch arguments at the bottom of the memory: int32 words in this order (the backend's
 * dispatch writes them one after another), then the float64 constants, 8-byte aligned.
 */
export function argsLayout(p: Pick<LoopProgram, "inputs" | "outputs" | "sizes" | "strides" | "consts">): ArgsLayout {
  const nIn = p.inputs.length;
  const nOut = p.outputs.length;
  const ints = 2 * nIn + nOut + p.sizes + p.strides;
  const constBase = Math.ceil((ints * 4) / 8) * 8;
  return {
    inPtr: (i) => 8 * i,
    inLen: (i) => 8 * i + 4,
    outPtr: (i) => 8 * nIn + 4 * i,
    size: (i) => 4 * (2 * nIn + nOut + i),
    stride: (i) => 4 * (2 * nIn + nOut + p.sizes + i),
    constAt: (s) => constBase + 8 * s,
    bytes: constBase + 8 * p.consts.length,
  };
}

// ---------------------------------------------------------------- analysis

type Let = Extract<LStmt, { k: "let" }>;
type Loop = Extract<LStmt, { k: "loop" }>;

/** The sharded loop: the first top-level loop, and the counter local it advances (if any). */
export interface Shard {
  readonly loop: Loop;
  /** The local counting output elements, advanced by `step` per iteration, set to 0 before the loop. */
  readonly counter: { readonly local: number; readonly step: number } | null;
}

function letsOf(p: LoopProgram): (Let | undefined)[] {
  const defs: (Let | undefined)[] = new Array(p.values);
  walkStmts(p.body, (s) => {
    if (s.k === "let") defs[s.id] = s;
  });
  return defs;
}

/** Whether (and how) the first top-level loop can be split into independent ranges. */
export function findShard(p: LoopProgram, defs: readonly (Let | undefined)[]): Shard | null {
  const at = p.body.findIndex((s) => s.k === "loop");
  if (at < 0) return null;
  const loop = p.body[at] as Loop;
  // Locals set before the loop (at top level) and read inside it.
  const setBefore = new Map<number, number>();
  for (const s of p.body.slice(0, at)) if (s.k === "set") setBefore.set(s.local, s.value);
  for (const s of p.body.slice(at + 1)) if (s.k !== "let") return null; // only the first loop does work
  const readInside = new Set<number>();
  walkStmts(loop.body, (s) => {
    if (s.k === "let" && s.e.k === "get") readInside.add(s.e.local);
  });
  let counter: Shard["counter"] = null;
  for (const l of readInside) {
    if (!setBefore.has(l)) continue;
    // The counter pattern: l = 0 before; inside, at the loop's top level: g = get l; n = g + step; set l = n.
    const init = defs[setBefore.get(l)!];
    if (counter !== null || init?.e.k !== "lit" || init.e.v !== 0) return null;
    const sets: Extract<LStmt, { k: "set" }>[] = [];
    walkStmts(loop.body, (s) => {
      if (s.k === "set" && s.local === l) sets.push(s);
    });
    if (sets.length !== 1 || !loop.body.includes(sets[0]!)) return null;
    const next = defs[sets[0]!.value];
    if (next?.e.k !== "idx" || next.e.op !== "add") return null;
    const g = defs[next.e.a];
    const stepDef = defs[next.e.b];
    if (g?.e.k !== "get" || g.e.local !== l || stepDef?.e.k !== "lit") return null;
    counter = { local: l, step: stepDef.e.v };
  }
  return { loop, counter };
}

/**
 * A second way to split a launch, for when the sharded loop has too few iterations
 * (a batch of shape (1, N) or (2, N)): the one loop directly inside it, when that loop's
 * bounds are top-level values (a batch size) and nothing inside it sets a local (no
 * accumulator, so its iterations are independent), and the sharded loop's body otherwise
 * only defines values. `run_inner` runs every iteration of the outer loop and, of the
 * inner one, only iterations [begin, end).
 */
export function findInnerShard(p: LoopProgram, outer: Shard): Shard | null {
  if (outer.counter !== null) return null;
  const loops = outer.loop.body.filter((s): s is Loop => s.k === "loop");
  if (loops.length !== 1) return null;
  const inner = loops[0]!;
  for (const s of outer.loop.body) if (s !== inner && s.k !== "let") return null;
  const top = new Set<number>();
  for (const s of p.body) {
    if (s === outer.loop) break;
    if (s.k === "let") top.add(s.id);
  }
  if (!top.has(inner.from) || !top.has(inner.to)) return null;
  let sets = false;
  walkStmts(inner.body, (s) => {
    if (s.k === "set") sets = true;
  });
  return sets ? null : { loop: inner, counter: null };
}

// ---------------------------------------------------------------- types

const wasmType = (t: LType): ValType => (t === "float32" ? F32 : t === "float64" ? F64 : I32);
const isInt = (t: LType): boolean => t !== "float32" && t !== "float64";
// --- narrow dtypes: stored narrow in the memory (load8/16_s/u, store8/16), i32 in locals ---
const NARROW_BYTES = { uint8: 1, int8: 1, uint16: 2, int16: 2, float16: 4 } as const;
const NARROW_ALIGN = { uint8: 0, int8: 0, uint16: 1, int16: 1, float16: 2 } as const;
const BYTES: Record<DType, number> = { float32: 4, float64: 8, int32: 4, uint32: 4, bool: 1, ...NARROW_BYTES };
const ALIGN: Record<DType, number> = { float32: 2, float64: 3, int32: 2, uint32: 2, bool: 0, ...NARROW_ALIGN };
const isNarrowL = (t: LType): boolean => t !== "index" && (isNarrowInt(t) || t === "float16");
/** The integer load and store opcodes of each non-float dtype (the narrow ones sign- or zero-extend). */
function intLoad(d: DType): number {
  return d === "bool" || d === "uint8"
    ? 0x2d
    : d === "int8"
      ? 0x2c
      : d === "uint16"
        ? 0x2f
        : d === "int16"
          ? 0x2e
          : Op.i32_load;
}
function intStore(d: DType): number {
  return BYTES[d] === 1 ? 0x3a : BYTES[d] === 2 ? 0x3b : Op.i32_store;
}

const F32_MATH: Partial<Record<KUnaryOp, MathFn>> = {
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

/** Extra opcodes not in the encoder's core table. */
const X = {
  f32_ceil: 0x8d,
  f32_floor: 0x8e,
  f32_trunc: 0x8f,
  f32_nearest: 0x90,
  f32_min: 0x96,
  f32_max: 0x97,
  i32_wrap_i64: 0xa7,
  f32_convert_i32_s: 0xb2,
  f32_convert_i32_u: 0xb3,
  i32_load8_u: 0x2d,
  i32_store8: 0x3a,
  // 0xFC prefix
  i32_trunc_sat_f64_s: 2,
  i64_trunc_sat_f64_s: 6,
} as const;

/** The f32x4 math functions and host imports a program needs. */
function mathNeeds(p: LoopProgram, defs: readonly (Let | undefined)[]): Set<MathFn> {
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

// ---------------------------------------------------------------- the printer

export interface WasmKernel {
  readonly bytes: Uint8Array;
  readonly layout: ArgsLayout;
  /** Whether `run` honours [begin, end) (the pool may split the range). */
  readonly sharded: boolean;
  /** Whether the sharded loop also has a four-lane SIMD body. */
  readonly vectorized: boolean;
  /**
   * Rough work per iteration of the sharded loop (statements, nested constant loops
   * multiplied out), to be multiplied by the launch's batch sizes at `workSizes` (inner
   * loops over a batch dim).
   */
  readonly workPerUnit: number;
  readonly workSizes: readonly number[];
  /**
   * The exports `run_inner`/`units_inner` (see `findInnerShard`), with the work per inner
   * iteration (times the launch's batch sizes at `workSizes`): null when there are none.
   */
  readonly inner: {
    readonly vectorized: boolean;
    readonly workPerUnit: number;
    readonly workSizes: readonly number[];
  } | null;
  /** Inner loops that also got four-lane versions. */
  readonly innerVectorLoops: number;
}

export interface PrintOptions {
  /** Memory import: shared (threads) or not, and its maximum in pages. */
  readonly shared: boolean;
  readonly maximumPages: number;
}

/** Prints a loop program as a WebAssembly module (see the file comment). */
export function loopToWasm(p: LoopProgram, opts: PrintOptions): WasmKernel {
  // A sequential target: one invocation runs the whole launch (workgroup programs are WGSL's).
  if (p.workgroupSize !== undefined)
    throw new UnsupportedOpError("wasm: a workgroup program (workgroupSize set) is not a sequential program");
  walkStmts(p.body, (s) => {
    if (s.k === "loop" && s.step !== undefined)
      throw new UnsupportedOpError("wasm: a loop with a step belongs to workgroup programs");
  });
  const defs = letsOf(p);
  const shard = findShard(p, defs);
  const layout = argsLayout(p);
  const m = new ModuleBuilder();
  m.importMemory({ module: "env", name: "memory", initial: 1, maximum: opts.maximumPages, shared: opts.shared });
  const mathImports = importMath(m);
  const f64Host = {} as Record<F64UnaryHost, number>;
  for (const name of F64_UNARY_HOST) {
    const existing = (mathImports as unknown as Record<string, number>)[name];
    f64Host[name] = existing ?? m.importFunc("m", name, [F64], [F64]);
  }
  const host: Host = {
    f64: f64Host,
    sin32: { sin: mathImports.sin, cos: mathImports.cos },
    atan2: mathImports.atan2,
    pow: mathImports.pow,
    fmod: m.importFunc("m", "fmod", [F64, F64], [F64]),
    ipow: m.importFunc("m", "ipow", [I32, I32, I32], [I32]),
  };
  const math = defineMath(m, mathImports, mathNeeds(p, defs));
  const vectorized = shard !== null && vectorizable(p, shard, defs);
  const workSizes: number[] = [];
  let innerVectorLoops = 0;
  m.func(
    [I32, I32, I32],
    [],
    (c) => {
      const printer = new Printer(p, defs, layout, c, math, host, shard, vectorized);
      printer.run();
      innerVectorLoops = printer.innerVectorLoops;
    },
    "run",
  );
  m.func([I32], [I32], (c) => new Printer(p, defs, layout, c, math, host, shard, false, false).units(), "units");
  const innerShard = shard === null ? null : findInnerShard(p, shard);
  let inner: WasmKernel["inner"] = null;
  if (innerShard !== null) {
    const innerVectorized = vectorizable(p, innerShard, defs);
    m.func(
      [I32, I32, I32],
      [],
      (c) => new Printer(p, defs, layout, c, math, host, innerShard, innerVectorized).run(),
      "run_inner",
    );
    m.func(
      [I32],
      [I32],
      (c) => new Printer(p, defs, layout, c, math, host, innerShard, false, false).units(),
      "units_inner",
    );
    const innerSizes: number[] = [];
    inner = {
      vectorized: innerVectorized,
      workPerUnit: work(innerShard.loop.body, defs, innerSizes),
      workSizes: innerSizes,
    };
  }
  return {
    bytes: m.encode(),
    layout,
    sharded: shard !== null,
    vectorized,
    workPerUnit: shard ? work(shard.loop.body, defs, workSizes) : 1,
    workSizes,
    inner,
    innerVectorLoops,
  };
}

/**
 * Rough cost of a block: one per statement, loops with literal bounds multiplied out.
 * A loop from 0 to a batch size counts its body once and adds that size's index to
 * `sizes` (the launch multiplies the cost by those sizes); other loops count 16 times.
 */
function work(body: readonly LStmt[], defs: readonly (Let | undefined)[], sizes: number[] = []): number {
  let w = 0;
  for (const s of body) {
    if (s.k === "loop") {
      const from = defs[s.from]?.e;
      const to = defs[s.to]?.e;
      const batch = from?.k === "lit" && from.v === 0 && to?.k === "size";
      if (batch) sizes.push(to.i);
      const n = batch ? 1 : from?.k === "lit" && to?.k === "lit" ? Math.max(0, to.v - from.v) : 16;
      w += 1 + n * work(s.body, defs, sizes);
    } else if (s.k === "if") w += 1 + Math.max(work(s.then, defs, sizes), work(s.else, defs, sizes));
    else w += 1;
  }
  return w;
}

/** Whether the shard loop's body can run in four SIMD lanes (see the file comment). */
function vectorizable(p: LoopProgram, shard: Shard, defs: readonly (Let | undefined)[]): boolean {
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

class Printer {
  /** Scalar local of each value id. */
  private readonly slot: number[];
  private readonly localSlot: number[];
  private readonly inPtr: number[] = [];
  private readonly inMax: number[] = [];
  private readonly outPtr: number[] = [];
  private readonly args = 0;
  /** Inner loops printed with four-lane versions. */
  innerVectorLoops = 0;
  private readonly begin = 1;
  private readonly end = 2;

  constructor(
    private readonly p: LoopProgram,
    private readonly defs: readonly (Let | undefined)[],
    private readonly layout: ArgsLayout,
    private readonly c: Code,
    private readonly math: ReadonlyMap<MathFn, number>,
    private readonly host: Host,
    private readonly shard: Shard | null,
    private readonly vector: boolean,
    private readonly vectorInnerOn = true,
  ) {
    this.slot = new Array(p.values).fill(-1);
    this.localSlot = p.locals.map((t) => c.local(wasmType(t)));
  }

  private typeOf(id: number): LType {
    return this.defs[id]?.type ?? "index";
  }

  private val(id: number): number {
    let s = this.slot[id]!;
    if (s < 0) {
      s = this.c.local(wasmType(this.typeOf(id)));
      this.slot[id] = s;
    }
    return s;
  }

  private prologue(): void {
    const c = this.c;
    this.p.inputs.forEach((_, i) => {
      const ptr = c.local(I32);
      c.get(this.args).op(Op.i32_load).memarg(2, this.layout.inPtr(i)).set(ptr);
      this.inPtr.push(ptr);
      // Largest valid element offset (loads are clamped into the buffer).
      const mx = c.local(I32);
      c.get(this.args).op(Op.i32_load).memarg(2, this.layout.inLen(i)).i32(1).op(Op.i32_sub).set(mx);
      c.get(mx).i32(0).get(mx).i32(0).op(Op.i32_gt_s).op(Op.select).set(mx);
      this.inMax.push(mx);
    });
    this.p.outputs.forEach((_, i) => {
      const ptr = c.local(I32);
      c.get(this.args).op(Op.i32_load).memarg(2, this.layout.outPtr(i)).set(ptr);
      this.outPtr.push(ptr);
    });
  }

  /** `units(args)`: the sharded loop's trip count (top-level values before it, then to - from). */
  units(): void {
    const c = this.c;
    if (this.shard === null) {
      c.i32(0);
      return;
    }
    this.prologue();
    // The values before the first loop (the sharded loop, or the one holding the inner
    // sharded loop, whose bounds are among them).
    for (const s of this.p.body) {
      if (s.k === "loop") break;
      if (s.k === "let") this.letStmt(s);
    }
    const { from, to } = this.shard.loop;
    // max(to - from, 0)
    c.get(this.val(to)).get(this.val(from)).op(Op.i32_sub).set(this.val(to));
    c.get(this.val(to)).i32(0).get(this.val(to)).i32(0).op(Op.i32_gt_s).op(Op.select);
  }

  run(): void {
    this.prologue();
    this.block(this.p.body);
  }

  private block(stmts: readonly LStmt[]): void {
    const c = this.c;
    for (const s of stmts) {
      switch (s.k) {
        case "let":
          this.letStmt(s);
          break;
        case "set":
          c.get(this.val(s.value)).set(this.localSlot[s.local]!);
          break;
        case "store":
          this.store(
            s.buf,
            () => c.get(this.val(s.at)),
            () => c.get(this.val(s.value)),
          );
          break;
        case "loop":
          if (this.shard !== null && s === this.shard.loop) this.shardLoop(s);
          else if (this.vectorInner(s)) {
            // A straight-line inner loop: four lanes through the check-free paths when its
            // addresses allow (decided at run time), the scalar loop for the rest.
            const lo = c.local(I32);
            const hi = c.local(I32);
            c.get(this.val(s.from)).set(lo).get(this.val(s.to)).set(hi);
            this.vectorLoops(s, { loop: s, counter: null }, lo, hi, false);
            this.innerVectorLoops++;
            this.loop(
              s.var,
              () => c.get(lo),
              () => c.get(hi),
              s.body,
            );
          } else
            this.loop(
              s.var,
              () => c.get(this.val(s.from)),
              () => c.get(this.val(s.to)),
              s.body,
            );
          break;
        case "sstore":
        case "barrier":
        case "break":
        case "return":
          throw new UnsupportedOpError(`wasm: ${s.k} belongs to workgroup programs (a sequential program has none)`);
        case "if":
          c.get(this.val(s.cond)).op(Op.if).byte(0x40);
          this.block(s.then);
          if (s.else.length > 0) {
            c.op(Op.else);
            this.block(s.else);
          }
          c.op(Op.end);
          break;
      }
    }
  }

  private loop(
    v: number,
    from: () => void,
    to: () => void,
    body: readonly LStmt[],
    step = 1,
    bodyEmit?: () => void,
  ): void {
    const c = this.c;
    const iv = this.val(v);
    const hi = c.local(I32);
    from();
    c.set(iv);
    to();
    c.set(hi);
    c.op(Op.block).byte(0x40).op(Op.loop).byte(0x40);
    if (step === 1) c.get(iv).get(hi).op(Op.i32_ge_s);
    else c.get(iv).i32(step).op(Op.i32_add).get(hi).op(Op.i32_gt_s);
    c.op(Op.br_if).u32(1);
    if (bodyEmit) bodyEmit();
    else this.block(body);
    c.get(iv).i32(step).op(Op.i32_add).set(iv);
    c.op(Op.br).u32(0);
    c.op(Op.end).op(Op.end);
  }

  /** The sharded loop over [max(from, begin), min(to, end)), the counter started where that range starts. */
  private shardLoop(s: Loop): void {
    const c = this.c;
    const shard = this.shard!;
    const lo = c.local(I32);
    const hi = c.local(I32);
    // lo = max(from, from + begin); hi = min(to, from + end): begin/end count from the loop's start.
    c.get(this.val(s.from)).get(this.begin).op(Op.i32_add).set(lo);
    c.get(this.val(s.from)).get(this.end).op(Op.i32_add).set(hi);
    c.get(hi).get(this.val(s.to)).get(hi).get(this.val(s.to)).op(Op.i32_lt_s).op(Op.select).set(hi);
    if (shard.counter !== null) {
      const l = this.localSlot[shard.counter.local]!;
      c.get(l).get(this.begin).i32(shard.counter.step).op(Op.i32_mul).op(Op.i32_add).set(l);
    }
    const iv = this.val(s.var);
    if (this.vector) {
      // Four iterations at a time while they fit, then the scalar body for the rest. When
      // every address is base + loop variable (and loads stay in range), a fast version
      // without per-access checks runs instead (decided once, before the loop).
      this.vectorLoops(s, shard, lo, hi, true);
    }
    this.loop(
      s.var,
      () => c.get(lo),
      () => c.get(hi),
      s.body,
    );
    void iv;
  }

  /**
   * The four-lane loops of loop `s` over [lo, hi) (they advance lo; the scalar loop does
   * the rest): when every address is affine in the loop variable (`affineBases`), a
   * contiguous version (every coefficient 1) and a strided one (any coefficient >= 0), both
   * without per-access checks, chosen once before the loop; otherwise (and, with
   * `general`, when neither applies) the version that checks each access.
   */
  private vectorLoops(s: Loop, shard: Shard, lo: number, hi: number, general: boolean): void {
    const c = this.c;
    const fast = this.affineBases(s, shard.counter, lo, hi);
    const body = (f: ReadonlyMap<number, FastAccess> | null, copies = 1): void =>
      new VectorBody(this, c, s, shard, this.defs, this.math, this.host, f).emit(lo, hi, copies);
    if (fast === null) {
      if (general) body(null);
      return;
    }
    const contiguous = new Map([...fast.access].map(([at, a]) => [at, { base: a.base, coef: null }]));
    c.get(fast.okOne).op(Op.if).byte(0x40);
    // Contiguous: eight lanes per iteration, then four for what is left.
    body(contiguous, 2);
    body(contiguous);
    c.op(Op.else).get(fast.okStrided).op(Op.if).byte(0x40);
    body(fast.access);
    if (general) {
      c.op(Op.else);
      body(null);
    }
    c.op(Op.end).op(Op.end);
  }

  /**
   * For a loop's loads and stores: each address as base + coef * var with base and coef
   * computed before the loop (locals). `okOne`: every coef is 1 and every load's range
   * [base + lo, base + hi - 1] is inside its buffer; `okStrided`: every coef >= 0 and every
   * load's range [base + lo·coef, base + (hi-1)·coef] inside (ranges computed in float64,
   * so no int32 overflow can pass them). Null when some address is not of that form.
   */
  private affineBases(
    s: Loop,
    counter: Shard["counter"],
    lo: number,
    hi: number,
  ): { access: Map<number, FastAccess>; okOne: number; okStrided: number } | null {
    type Aff = { base: () => void; coef: () => void } | null;
    const c = this.c;
    const inLoop = new Set<number>([s.var]);
    for (const st of s.body) if (st.k === "let") inLoop.add(st.id);
    const memo = new Map<number, Aff>();
    const counter0 = c.local(I32);
    if (counter !== null) {
      // The counter's value at iteration var is counter0 + (var - lo) * step.
      c.get(this.localSlot[counter.local]!).get(lo).i32(counter.step).op(Op.i32_mul).op(Op.i32_sub).set(counter0);
    }
    const aff = (id: number): Aff => {
      if (memo.has(id)) return memo.get(id)!;
      let r: Aff = null;
      if (id === s.var) r = { base: () => void c.i32(0), coef: () => void c.i32(1) };
      else if (!inLoop.has(id)) r = { base: () => void c.get(this.val(id)), coef: () => void c.i32(0) };
      else {
        const e = this.defs[id]!.e;
        if (e.k === "get" && counter !== null && e.local === counter.local)
          r = { base: () => void c.get(counter0), coef: () => void c.i32(counter.step) };
        else if (e.k === "idx" && (e.op === "add" || e.op === "sub")) {
          const a = aff(e.a);
          const b = aff(e.b);
          const o = e.op === "add" ? Op.i32_add : Op.i32_sub;
          if (a !== null && b !== null)
            r = {
              base: () => (a.base(), b.base(), void c.op(o)),
              coef: () => (a.coef(), b.coef(), void c.op(o)),
            };
        } else if (e.k === "idx" && e.op === "mul") {
          const [x, k] = inLoop.has(e.a) ? [e.a, e.b] : [e.b, e.a];
          const a = aff(x);
          if (a !== null && !inLoop.has(k))
            r = {
              base: () => (a.base(), c.get(this.val(k)), void c.op(Op.i32_mul)),
              coef: () => (a.coef(), c.get(this.val(k)), void c.op(Op.i32_mul)),
            };
        }
      }
      memo.set(id, r);
      return r;
    };
    const accesses: { at: number; input: number | null }[] = [];
    for (const st of s.body) {
      if (st.k === "store") accesses.push({ at: st.at, input: null });
      else if (st.k === "let" && st.e.k === "load") accesses.push({ at: st.e.at, input: st.e.buf });
    }
    if (accesses.some((a) => aff(a.at) === null)) return null;
    const access = new Map<number, FastAccess>();
    const okOne = c.local(I32);
    const okStrided = c.local(I32);
    c.i32(1).set(okOne).i32(1).set(okStrided);
    const f64 = (local: number): void => void c.get(local).op(Op.f64_convert_i32_s);
    for (const { at, input } of accesses) {
      const a = aff(at)!;
      let acc = access.get(at);
      if (acc === undefined) {
        const base = c.local(I32);
        const coef = c.local(I32);
        a.base();
        c.set(base);
        a.coef();
        c.set(coef);
        acc = { base, coef };
        access.set(at, acc);
      }
      const { base, coef } = acc;
      const coefLocal = coef!;
      c.get(okOne).get(coefLocal).i32(1).op(Op.i32_eq).op(Op.i32_and).set(okOne);
      c.get(okStrided).get(coefLocal).i32(0).op(Op.i32_ge_s).op(Op.i32_and).set(okStrided);
      if (input === null) continue;
      const max = this.inMax[input]!;
      // [base + lo·k, base + (hi-1)·k] inside [0, max], or an empty range (lo >= hi).
      const inRange = (k: () => void): void => {
        (f64(base), f64(lo), k(), c.op(Op.f64_mul).op(Op.f64_add).f64c(0).op(Op.f64_ge));
        (f64(base), f64(hi), c.f64c(1).op(Op.f64_sub), k(), c.op(Op.f64_mul).op(Op.f64_add));
        (f64(max), c.op(Op.f64_le).op(Op.i32_and));
        c.get(lo).get(hi).op(Op.i32_ge_s).op(Op.i32_or);
      };
      (c.get(okOne), inRange(() => void c.f64c(1)), c.op(Op.i32_and).set(okOne));
      (c.get(okStrided), inRange(() => f64(coefLocal)), c.op(Op.i32_and).set(okStrided));
    }
    return { access, okOne, okStrided };
  }

  /** Whether an inner loop (not the shard loop) gets four-lane versions: straight-line, not a short literal count. */
  private vectorInner(s: Loop): boolean {
    if (!this.vectorInnerOn) return false;
    const from = this.defs[s.from]?.e;
    const to = this.defs[s.to]?.e;
    if (from?.k === "lit" && to?.k === "lit" && to.v - from.v < 8) return false;
    return vectorizable(this.p, { loop: s, counter: null }, this.defs);
  }

  // ---- scalar statements

  /** @internal Used by VectorBody. */
  scalarSlot(id: number): number {
    return this.val(id);
  }
  counterSlot(): number {
    return this.localSlot[this.shard!.counter!.local]!;
  }
  inputPtr(i: number): number {
    return this.inPtr[i]!;
  }
  inputMax(i: number): number {
    return this.inMax[i]!;
  }
  outputPtr(i: number): number {
    return this.outPtr[i]!;
  }

  private store(buf: number, at: () => void, value: () => void): void {
    const c = this.c;
    const d = this.p.outputs[buf]!;
    c.get(this.outPtr[buf]!);
    at();
    c.i32(BYTES[d] === 1 ? 0 : Math.log2(BYTES[d]))
      .op(Op.i32_shl)
      .op(Op.i32_add);
    value();
    c.op(d === "float32" ? Op.f32_store : d === "float64" ? Op.f64_store : intStore(d));
    c.memarg(ALIGN[d], 0);
  }

  private letStmt(s: Let): void {
    const c = this.c;
    this.expr(s.id, s.type, s.e);
    c.set(this.val(s.id));
  }

  /** Pushes the value of `e` (of type `t`). */
  private expr(id: number, t: LType, e: LExpr): void {
    const c = this.c;
    const g = (v: number): void => void c.get(this.val(v));
    switch (e.k) {
      case "size":
        c.get(this.args).op(Op.i32_load).memarg(2, this.layout.size(e.i));
        return;
      case "stride":
        c.get(this.args).op(Op.i32_load).memarg(2, this.layout.stride(e.i));
        return;
      case "const": {
        c.get(this.args).op(Op.f64_load).memarg(3, this.layout.constAt(e.slot));
        this.fromF64(t);
        return;
      }
      case "lit":
        if (t === "float32") c.f32c(e.v);
        else if (t === "float64") c.f64c(e.v);
        else c.i32(e.v | 0);
        return;
      case "load": {
        const d = this.p.inputs[e.buf]!;
        c.get(this.inPtr[e.buf]!);
        // Clamped offset: min_u(at, max).
        g(e.at);
        c.get(this.inMax[e.buf]!);
        g(e.at);
        c.get(this.inMax[e.buf]!).op(Op.i32_lt_u).op(Op.select);
        if (BYTES[d] > 1) c.i32(Math.log2(BYTES[d])).op(Op.i32_shl);
        c.op(Op.i32_add);
        c.op(d === "float32" ? Op.f32_load : d === "float64" ? Op.f64_load : intLoad(d));
        c.memarg(ALIGN[d], 0);
        return;
      }
      case "oload": {
        // A read of this launch's own output (in-place kernels): the offset is in range by construction.
        const d = this.p.outputs[e.buf]!;
        c.get(this.outPtr[e.buf]!);
        g(e.at);
        if (BYTES[d] > 1) c.i32(Math.log2(BYTES[d])).op(Op.i32_shl);
        c.op(Op.i32_add);
        c.op(
          d === "float32" ? Op.f32_load : d === "float64" ? Op.f64_load : d === "bool" ? X.i32_load8_u : Op.i32_load,
        );
        c.memarg(ALIGN[d], 0);
        return;
      }
      case "get":
        c.get(this.localSlot[e.local]!);
        return;
      case "unary":
        this.unary(e.op, this.typeOf(e.x), () => g(e.x));
        return;
      case "binary":
        this.binary(
          e.op,
          this.typeOf(e.a),
          () => g(e.a),
          () => g(e.b),
        );
        return;
      case "where":
        g(e.a);
        g(e.b);
        g(e.c);
        c.op(Op.select);
        return;
      case "cast":
        this.cast(this.typeOf(e.x), t, () => g(e.x));
        return;
      case "idx":
        this.idx(
          e.op,
          () => g(e.a),
          () => g(e.b),
        );
        return;
      case "param":
      case "builtin":
      case "bits":
      case "sload":
        throw new UnsupportedOpError(`wasm: ${e.k} belongs to workgroup programs (a sequential program has none)`);
      case "icmp":
        g(e.a);
        g(e.b);
        c.op(
          { lt: Op.i32_lt_s, le: Op.i32_le_s, gt: Op.i32_gt_s, ge: Op.i32_ge_s, eq: Op.i32_eq, ne: Op.i32_ne }[e.op],
        );
        return;
    }
    void id;
  }

  /** Converts the float64 on the stack (a launch constant) to type `t`. */
  private fromF64(t: LType): void {
    const c = this.c;
    if (t === "float64") return;
    if (t === "float32") c.op(Op.f32_demote_f64);
    else c.byte(0xfc).u32(X.i64_trunc_sat_f64_s).op(X.i32_wrap_i64);
  }

  private idx(op: Extract<LExpr, { k: "idx" }>["op"], a: () => void, b: () => void): void {
    const c = this.c;
    switch (op) {
      case "add":
        (a(), b(), c.op(Op.i32_add));
        return;
      case "sub":
        (a(), b(), c.op(Op.i32_sub));
        return;
      case "mul":
        (a(), b(), c.op(Op.i32_mul));
        return;
      case "mod":
        // As the JS printer's `%` (truncating; offsets are non-negative).
        (a(), b(), c.op(Op.i32_rem_s));
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
    }
  }

  /** `x` of type `from` as `to` (the loop form's cast rules, as the JS printer's). */
  private cast(from: LType, to: LType, x: () => void): void {
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

  private unary(op: KUnaryOp, d: LType, x: () => void): void {
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
        if (f32) this.f32Math(F32_MATH[op]!, 1, x);
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
        if (!(f32 || f64)) return void c.i32(0);
        x();
        if (f32) c.op(Op.f32_abs).f32c(Infinity).op(Op.f32_eq);
        else c.op(Op.f64_abs).f64c(Infinity).op(Op.f64_eq);
        return;
      case "isfinite":
        if (!(f32 || f64)) return void c.i32(1);
        x();
        if (f32) c.op(Op.f32_abs).f32c(Infinity).op(Op.f32_lt);
        else c.op(Op.f64_abs).f64c(Infinity).op(Op.f64_lt);
        return;
      default: {
        // Every op of the op-facts table needs a case: a missing one fails tsc here.
        const missing: never = op;
        throw new UnsupportedOpError(`wasm: no rule for the unary op ${String(missing)}`);
      }
    }
  }

  private binary(op: KBinaryOp, d: LType, a: () => void, b: () => void): void {
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
      case "and":
        return simple(Op.i32_and, Op.i32_and, Op.i32_and);
      case "or":
        return simple(Op.i32_or, Op.i32_or, Op.i32_or);
      case "xor":
        return simple(Op.i32_xor, Op.i32_xor, Op.i32_xor);
      // Integer bitwise ops (int32, uint32 only; the graph refuses floats and bool).
      case "bitwise_and":
        return simple(Op.i32_and, Op.i32_and, Op.i32_and);
      case "bitwise_or":
        return simple(Op.i32_or, Op.i32_or, Op.i32_or);
      case "bitwise_xor":
        return simple(Op.i32_xor, Op.i32_xor, Op.i32_xor);
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

// ---------------------------------------------------------------- the four-lane body

/** i8x16.shuffle lanes: bytes 8-15 (float lanes 2-3) in both halves; the low halves of two vectors. */
const HIGH_HALF = [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15];
const LOW_HALVES = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];

/** A check-free access: element offset base + coef·var (coef null: 1, contiguous lanes). */
interface FastAccess {
  readonly base: number;
  readonly coef: number | null;
}

/**
 * The shard loop's straight-line body on four consecutive iterations: every value a
 * v128 (float32 lanes, or int32 lanes for int32, uint32, bool and index values).
 */
class VectorBody {
  private readonly slot = new Map<number, number>();
  /** float64 values: `slot` holds lanes 0-1 (an f64x2), `high` lanes 2-3. */
  private readonly high = new Map<number, number>();

  constructor(
    private readonly scalar: Printer,
    private readonly c: Code,
    private readonly loop: Loop,
    private readonly shard: Shard,
    private readonly defs: readonly (Let | undefined)[],
    private readonly math: ReadonlyMap<MathFn, number>,
    private readonly host: Host,
    /**
     * Fast path: per address value, the local holding its base, when every address is
     * base + loop variable and every load stays inside its buffer (checked before the loop):
     * plain vector loads and stores, no per-access checks.
     */
    private readonly fast: ReadonlyMap<number, FastAccess> | null = null,
  ) {}

  /** Values defined inside the loop get vector locals; outer ones are splatted when read. */
  private vec(id: number): void {
    const c = this.c;
    const s = this.slot.get(id);
    if (s !== undefined) return void c.get(s);
    // A value from outside the loop (a scalar): splat it.
    const t = this.defs[id]?.type ?? "index";
    if (t === "float64") throw new UnsupportedOpError("wasm: a float64 value has two halves (vec64)");
    c.get(this.scalar.scalarSlot(id)).simd(t === "float32" ? Simd.f32x4_splat : Simd.i32x4_splat);
  }

  /** Half `h` of a float64 value (lanes 0-1 or 2-3, an f64x2); an outer one (a scalar) is splatted. */
  private vec64(id: number, h: 0 | 1): void {
    const c = this.c;
    const s = (h === 0 ? this.slot : this.high).get(id);
    if (s !== undefined) return void c.get(s);
    c.get(this.scalar.scalarSlot(id)).simd(Simd.f64x2_splat);
  }

  /** Half `h` of float64 value `e` (see `float64Lanes` for what it may be). */
  private expr64(e: LExpr, h: 0 | 1): void {
    const c = this.c;
    if (e.k === "cast") {
      if (this.defs[e.x]?.type === "float64") return this.vec64(e.x, h);
      this.vec(e.x);
      if (h === 1) (this.vec(e.x), c.simd(Simd.i8x16_shuffle).bytes(HIGH_HALF));
      c.simd(Simd.f64x2_promote_low_f32x4);
      return;
    }
    if (e.k !== "binary") throw new UnsupportedOpError(`wasm: ${e.k} on float64 lanes`);
    (this.vec64(e.a, h), this.vec64(e.b, h));
    c.simd({ add: Simd.f64x2_add, sub: Simd.f64x2_sub, mul: Simd.f64x2_mul, div: Simd.f64x2_div }[e.op as "add"]);
  }

  /**
   * while (lo + 4·copies <= hi) { `copies` times: body on lanes lo..lo+3; lo += 4 }.
   * Two copies per iteration give the CPU two independent chains of vector math to
   * overlap (measured on B1's printed kernel: 2-3% faster than one copy; 10-20% on a
   * hand-assembled kernel); the rest of the range is left to the caller's next loop.
   */
  emit(lo: number, hi: number, copies = 1): void {
    const c = this.c;
    const iv = this.scalar.scalarSlot(this.loop.var);
    c.op(Op.block).byte(0x40).op(Op.loop).byte(0x40);
    c.get(lo)
      .i32(4 * copies)
      .op(Op.i32_add)
      .get(hi)
      .op(Op.i32_gt_s)
      .op(Op.br_if)
      .u32(1);
    for (let k = 0; k < copies; k++) {
      // Each copy is the one-copy body as it stands: its own vector locals, the scalar
      // loop variable and the output counter advanced by the copy before.
      this.slot.clear();
      this.high.clear();
      const vv = c.local(V128);
      this.slot.set(this.loop.var, vv);
      c.get(lo).set(iv);
      // The loop variable's lanes: lo, lo+1, lo+2, lo+3.
      c.get(lo).simd(Simd.i32x4_splat);
      c.v128(new Uint8Array(new Int32Array([0, 1, 2, 3]).buffer))
        .simd(Simd.i32x4_add)
        .set(vv);
      for (const s of this.loop.body) this.stmt(s);
      c.get(lo).i32(4).op(Op.i32_add).set(lo);
    }
    c.op(Op.br).u32(0);
    c.op(Op.end).op(Op.end);
  }

  private stmt(s: LStmt): void {
    const c = this.c;
    switch (s.k) {
      case "let": {
        if (s.type === "float64") {
          const lo = c.local(V128);
          const hi = c.local(V128);
          (this.expr64(s.e, 0), c.set(lo), this.expr64(s.e, 1), c.set(hi));
          this.slot.set(s.id, lo);
          this.high.set(s.id, hi);
          return;
        }
        if (s.e.k === "get") {
          // The output counter: lane j holds counter + j * step.
          const step = this.shard.counter!.step;
          c.get(this.scalar.counterSlot()).simd(Simd.i32x4_splat);
          c.v128(new Uint8Array(new Int32Array([0, step, 2 * step, 3 * step]).buffer)).simd(Simd.i32x4_add);
        } else this.expr(s.type, s.e);
        const l = c.local(V128);
        c.set(l);
        this.slot.set(s.id, l);
        return;
      }
      case "set": {
        // counter += 4 * step (the scalar counter, read by the next four lanes).
        const l = this.scalar.counterSlot();
        c.get(l)
          .i32(4 * this.shard.counter!.step)
          .op(Op.i32_add)
          .set(l);
        return;
      }
      case "store":
        this.store(s.buf, s.at, s.value);
        return;
      default:
        throw new UnsupportedOpError("wasm: a vectorised body holds only values and stores");
    }
  }

  private store(buf: number, at: number, value: number): void {
    const c = this.c;
    const d = this.scalarOutputType(buf);
    const ptr = this.scalar.outputPtr(buf);
    const fa = this.fast?.get(at);
    if (fa !== undefined && d !== "bool") {
      if (fa.coef === null) {
        this.fastAddress(ptr, fa);
        this.vec(value);
        c.simd(Simd.v128_store).memarg(0, 0);
        return;
      }
      // Strided: lane j at address a0 + j·coef·4.
      const a0 = c.local(I32);
      const step = c.local(I32);
      this.fastAddress(ptr, fa);
      c.set(a0).get(fa.coef).i32(2).op(Op.i32_shl).set(step);
      for (let j = 0; j < 4; j++) {
        c.get(a0);
        if (j > 0) c.get(step).i32(j).op(Op.i32_mul).op(Op.i32_add);
        this.vec(value);
        if (d === "float32") c.lane(Simd.f32x4_extract_lane, j).op(Op.f32_store).memarg(2, 0);
        else c.lane(Simd.i32x4_extract_lane, j).op(Op.i32_store).memarg(2, 0);
      }
      return;
    }
    const addr = c.local(V128);
    this.vec(at);
    c.set(addr);
    if (d === "bool") {
      for (let j = 0; j < 4; j++) {
        c.get(ptr).get(addr).lane(Simd.i32x4_extract_lane, j).op(Op.i32_add);
        this.vec(value);
        c.lane(Simd.i32x4_extract_lane, j).op(X.i32_store8).memarg(0, 0);
      }
      return;
    }
    // Consecutive offsets: one vector store; otherwise lane by lane.
    this.consecutive(addr);
    c.op(Op.if).byte(0x40);
    c.get(ptr).get(addr).lane(Simd.i32x4_extract_lane, 0).i32(2).op(Op.i32_shl).op(Op.i32_add);
    this.vec(value);
    c.simd(Simd.v128_store).memarg(0, 0);
    c.op(Op.else);
    for (let j = 0; j < 4; j++) {
      c.get(ptr).get(addr).lane(Simd.i32x4_extract_lane, j).i32(2).op(Op.i32_shl).op(Op.i32_add);
      this.vec(value);
      if (d === "float32") c.lane(Simd.f32x4_extract_lane, j).op(Op.f32_store).memarg(2, 0);
      else c.lane(Simd.i32x4_extract_lane, j).op(Op.i32_store).memarg(2, 0);
    }
    c.op(Op.end);
  }

  /** Pushes ptr + (base + coef·var)·4 for a check-free access (coef null: 1). */
  private fastAddress(ptr: number, fa: FastAccess): void {
    const c = this.c;
    c.get(ptr).get(fa.base).get(this.scalar.scalarSlot(this.loop.var));
    if (fa.coef !== null) c.get(fa.coef).op(Op.i32_mul);
    c.op(Op.i32_add).i32(2).op(Op.i32_shl).op(Op.i32_add);
  }

  private outputs: readonly DType[] | undefined;
  private scalarOutputType(buf: number): DType {
    return (this.outputs ??= (this.scalar as unknown as { p: LoopProgram }).p.outputs)[buf]!;
  }
  private inputType(buf: number): DType {
    return (this.scalar as unknown as { p: LoopProgram }).p.inputs[buf]!;
  }

  /** Pushes whether the four offsets in local `addr` are a0, a0+1, a0+2, a0+3. */
  private consecutive(addr: number): void {
    const c = this.c;
    c.get(addr);
    c.get(addr).lane(Simd.i32x4_extract_lane, 0).simd(Simd.i32x4_splat);
    c.v128(new Uint8Array(new Int32Array([0, 1, 2, 3]).buffer)).simd(Simd.i32x4_add);
    c.simd(Simd.i32x4_eq).simd(Simd.i32x4_all_true);
  }

  private expr(t: LType, e: LExpr): void {
    const c = this.c;
    const typeOf = (id: number): LType => this.defs[id]?.type ?? "index";
    const v = (id: number): void => this.vec(id);
    switch (e.k) {
      case "size":
      case "stride":
      case "const":
      case "lit":
        throw new UnsupportedOpError("wasm: loop-invariant values are defined outside the loop");
      case "get":
        throw new UnsupportedOpError("wasm: counter reads are handled by the statement");
      case "load": {
        const d = this.inputType(e.buf);
        const ptr = this.scalar.inputPtr(e.buf);
        const fa = this.fast?.get(e.at);
        if (fa !== undefined && d !== "bool") {
          if (fa.coef === null) {
            this.fastAddress(ptr, fa);
            c.simd(Simd.v128_load).memarg(0, 0);
            return;
          }
          // Strided: lane j from address a0 + j·coef·4.
          const a0 = c.local(I32);
          const step = c.local(I32);
          const r = c.local(V128);
          this.fastAddress(ptr, fa);
          c.set(a0).get(fa.coef).i32(2).op(Op.i32_shl).set(step);
          const ld = (): void =>
            void (d === "float32" ? c.op(Op.f32_load).memarg(2, 0) : c.op(Op.i32_load).memarg(2, 0));
          c.get(a0);
          ld();
          c.simd(d === "float32" ? Simd.f32x4_splat : Simd.i32x4_splat).set(r);
          for (let j = 1; j < 4; j++) {
            c.get(r).get(a0).get(step).i32(j).op(Op.i32_mul).op(Op.i32_add);
            ld();
            c.lane(d === "float32" ? Simd.f32x4_replace_lane : Simd.i32x4_replace_lane, j).set(r);
          }
          c.get(r);
          return;
        }
        const addr = c.local(V128);
        // Clamped offsets (unsigned min with the largest valid offset).
        v(e.at);
        c.get(this.scalar.inputMax(e.buf)).simd(Simd.i32x4_splat).simd(0xb7 /* i32x4.min_u */);
        c.set(addr);
        const res = c.local(V128);
        if (d === "bool") {
          c.i32x4c(0).set(res);
          for (let j = 0; j < 4; j++) {
            c.get(res).get(ptr).get(addr).lane(Simd.i32x4_extract_lane, j).op(Op.i32_add);
            c.op(X.i32_load8_u).memarg(0, 0).lane(Simd.i32x4_replace_lane, j).set(res);
          }
          c.get(res);
          return;
        }
        this.consecutive(addr);
        c.op(Op.if).byte(V128);
        c.get(ptr).get(addr).lane(Simd.i32x4_extract_lane, 0).i32(2).op(Op.i32_shl).op(Op.i32_add);
        c.simd(Simd.v128_load).memarg(0, 0);
        c.op(Op.else);
        // Same offset in every lane (a broadcast input): one load, splatted; else a gather.
        c.get(addr)
          .get(addr)
          .lane(Simd.i32x4_extract_lane, 0)
          .simd(Simd.i32x4_splat)
          .simd(Simd.i32x4_eq)
          .simd(Simd.i32x4_all_true);
        c.op(Op.if).byte(V128);
        c.get(ptr).get(addr).lane(Simd.i32x4_extract_lane, 0).i32(2).op(Op.i32_shl).op(Op.i32_add);
        if (d === "float32") c.op(Op.f32_load).memarg(2, 0).simd(Simd.f32x4_splat);
        else c.op(Op.i32_load).memarg(2, 0).simd(Simd.i32x4_splat);
        c.op(Op.else);
        c.i32x4c(0).set(res);
        for (let j = 0; j < 4; j++) {
          c.get(res).get(ptr).get(addr).lane(Simd.i32x4_extract_lane, j).i32(2).op(Op.i32_shl).op(Op.i32_add);
          if (d === "float32") c.op(Op.f32_load).memarg(2, 0).lane(Simd.f32x4_replace_lane, j);
          else c.op(Op.i32_load).memarg(2, 0).lane(Simd.i32x4_replace_lane, j);
          c.set(res);
        }
        c.get(res);
        c.op(Op.end);
        c.op(Op.end);
        return;
      }
      case "unary":
        return this.unary(e.op, typeOf(e.x), () => v(e.x));
      case "binary":
        return this.binary(
          e.op,
          typeOf(e.a),
          () => v(e.a),
          () => v(e.b),
        );
      case "where":
        // bool lanes are 0/1: a mask is 0 - c.
        (v(e.a), v(e.b), c.i32x4c(0), v(e.c), c.simd(Simd.i32x4_sub).simd(Simd.v128_bitselect));
        return;
      case "cast": {
        const from = typeOf(e.x);
        if (from === "float64") {
          // float32 (what `float64Lanes` admits): both halves demoted, put together.
          (this.vec64(e.x, 0), c.simd(Simd.f32x4_demote_f64x2_zero));
          (this.vec64(e.x, 1), c.simd(Simd.f32x4_demote_f64x2_zero));
          c.simd(Simd.i8x16_shuffle).bytes(LOW_HALVES);
          return;
        }
        v(e.x);
        if (from === t) return;
        if (t === "bool") {
          if (from === "float32") c.f32x4c(0).simd(Simd.f32x4_ne);
          else c.i32x4c(0).simd(Simd.i32x4_ne);
          c.i32x4c(1).simd(Simd.v128_and);
          return;
        }
        if (t === "float32") {
          if (from === "uint32") {
            // Lane by lane (no unsigned convert in SIMD128).
            const s = c.local(V128);
            c.set(s).get(s);
            for (let j = 0; j < 4; j++) {
              c.get(s).lane(Simd.i32x4_extract_lane, j).op(X.f32_convert_i32_u).lane(Simd.f32x4_replace_lane, j);
            }
            return;
          }
          c.simd(Simd.f32x4_convert_i32x4_s);
          return;
        }
        // integer -> integer: same bits.
        return;
      }
      case "idx":
        (v(e.a), v(e.b));
        c.simd(
          {
            add: Simd.i32x4_add,
            sub: Simd.i32x4_sub,
            mul: Simd.i32x4_mul,
            min: Simd.i32x4_min_s,
            max: Simd.i32x4_max_s,
            div: -1,
            mod: -1,
          }[e.op],
        );
        return;
      case "icmp":
        (v(e.a), v(e.b));
        c.simd(
          {
            lt: Simd.i32x4_lt_s,
            le: Simd.i32x4_le_s,
            gt: Simd.i32x4_gt_s,
            ge: Simd.i32x4_ge_s,
            eq: Simd.i32x4_eq,
            ne: Simd.i32x4_ne,
          }[e.op],
        );
        c.i32x4c(1).simd(Simd.v128_and);
        return;
    }
  }

  /** An f32x4 comparison mask to bool lanes (0/1). */
  private maskToBool(): void {
    this.c.i32x4c(1).simd(Simd.v128_and);
  }

  private unary(op: KUnaryOp, d: LType, x: () => void): void {
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

  private binary(op: KBinaryOp, d: LType, a: () => void, b: () => void): void {
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
