/**
 * A plain interpreter of the loop form (codegen/loop.ts): the meaning of a loop
 * program, independent of every renderer. Elementwise ops use the reference
 * interpreter's definitions (`unaryRef`, `binaryRef`), and every result is
 * converted to its type (float32 rounded, int32/uint32 wrapped, bool 0/1), so a
 * relaxed program runs as an exact one. Tests run lowered kernels here against
 * `ir/interpret.ts`, which proves the lowering apart from the JS, WGSL and WASM
 * printers. Slow; never used by a backend.
 *
 * `runLoop` runs a sequential program. `runWorkgroups` runs a workgroup program
 * (the GPU target) over a grid: the invocations of a workgroup run as coroutines in
 * lockstep phases between barriers, with their own values and locals and the
 * workgroup's shared arrays; index values are u32 (they wrap; a division by zero
 * gives the dividend and a remainder by zero 0, as in WGSL). It refuses what a GPU
 * leaves undefined: a barrier that not every live invocation of the workgroup reaches
 * (non-uniform control flow), two invocations of a workgroup touching one shared
 * element in one phase when one of them writes it, two invocations writing one
 * output element in one pass, and stores out of range. `runGpuPlan` runs a whole
 * launch: the passes of codegen/gpu-plan.ts, with scratch buffers for the partials.
 */
import { ARRAY_CTOR, castScalar, isNarrowInt, type TypedArray } from "../ir/dtype.js";
import { IRError } from "../ir/errors.js";
import { binaryRef, unaryRef } from "../ir/interpret.js";
import type { Kernel, Launch } from "../ir/kernel.js";
import { planGpuLaunch, type GpuBuffer, type GpuPlan, type GpuProgram } from "./gpu-plan.js";
import type { IndexOp, LExpr, LStmt, LType, LoopProgram } from "./loop.js";
import { lowerCombine, lowerKernelWorkgroup, lowerRowCombine } from "./lower-workgroup.js";

/** `v` converted to type `t` (the kernel IR's cast rules; index values are exact integers). */
export function toType(v: number, t: LType): number {
  if (t !== "index") return castScalar(v, t);
  if (!Number.isInteger(v)) throw new IRError(`loop form: index value ${v} is not an integer`);
  return v;
}

/**
 * Where a program runs: one sequential run, or one invocation of a workgroup program
 * (the launch arguments, shared memory and stores differ; `evalExpr` and `exec` are
 * the same for both). A sequential machine refuses the workgroup programs' kinds.
 */
interface Machine {
  readonly val: Float64Array;
  readonly types: LType[];
  readonly locals: Float64Array;
  size(i: number): number;
  stride(i: number): number;
  konst(slot: number, t: LType): number;
  /** A workgroup program: index arithmetic wraps to u32; `barrier`, `break` and `return` run. */
  readonly u32: boolean;
  param(i: number): number;
  builtin(name: "workgroup" | "lane"): number;
  sload(buf: number, at: number): number;
  store(buf: number, at: number, v: number): void;
  sstore(buf: number, at: number, v: number): void;
  fail(msg: string): never;
}

/** Index arithmetic: exact integers, or (workgroup programs) u32 as WGSL computes it. */
function idxOp(op: IndexOp, a: number, b: number, u32: boolean): number {
  switch (op) {
    case "add":
      return u32 ? (a + b) >>> 0 : a + b;
    case "sub":
      return u32 ? (a - b) >>> 0 : a - b;
    case "mul":
      return u32 ? Math.imul(a, b) >>> 0 : a * b;
    case "div":
      return u32 && b === 0 ? a : Math.floor(a / b);
    case "mod":
      return u32 && b === 0 ? 0 : a % b;
    case "min":
      return Math.min(a, b);
    case "max":
      return Math.max(a, b);
  }
}

const BITS = new ArrayBuffer(4);
const BITS_AS = { float32: new Float32Array(BITS), int32: new Int32Array(BITS), uint32: new Uint32Array(BITS) };
/** The 32 bits of `v` (of type `from`) read as type `to` (float32, int32 or uint32; narrow ints as int32). */
function reinterpret(v: number, from: LType, to: LType): number {
  const reg = (t: LType): "float32" | "int32" | "uint32" => {
    if (t === "float32" || t === "float16") return "float32";
    if (t === "int32" || (t !== "index" && isNarrowInt(t))) return "int32";
    if (t === "uint32" || t === "index") return "uint32";
    throw new IRError(`loop form: bits of a ${t} value`);
  };
  BITS_AS[reg(from)][0] = v;
  return BITS_AS[reg(to)][0]!;
}

function evalExpr(
  m: Machine,
  ins: readonly ArrayLike<number>[],
  outs: readonly TypedArray[],
  t: LType,
  e: LExpr,
): number {
  const { val, types, locals } = m;
  switch (e.k) {
    case "size":
      return m.size(e.i);
    case "stride":
      return m.stride(e.i);
    case "const":
      return m.konst(e.slot, t);
    case "lit":
      return m.u32 && t === "index" ? e.v >>> 0 : e.v;
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
      return toType(unaryRef(e.op, val[e.x]!, types[e.x] as Exclude<LType, "index">), t);
    case "binary":
      return toType(binaryRef(e.op, val[e.a]!, val[e.b]!, types[e.a] as Exclude<LType, "index">), t);
    case "where":
      return val[e.c] !== 0 ? val[e.a]! : val[e.b]!;
    case "cast": {
      const x = val[e.x]!;
      // float → index truncates (offsets are read from integer buffers; this only guards).
      return toType(t === "index" ? Math.trunc(x) : x, t);
    }
    case "idx":
      return idxOp(e.op, val[e.a]!, val[e.b]!, m.u32);
    case "icmp": {
      const a = val[e.a]!;
      const b = val[e.b]!;
      const r = { lt: a < b, le: a <= b, gt: a > b, ge: a >= b, eq: a === b, ne: a !== b }[e.op];
      return r ? 1 : 0;
    }
    case "param":
      return m.param(e.i);
    case "builtin":
      return m.builtin(e.name);
    case "bits":
      return reinterpret(val[e.x]!, types[e.x]!, t);
    case "sload":
      return m.sload(e.buf, val[e.at]!);
  }
}

const sequentialOnly = (k: string): never => {
  throw new IRError(`loop form: ${k} appears only in workgroup programs (run them with runWorkgroups)`);
};

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
  if (p.workgroupSize !== undefined)
    throw new IRError("loop form: runLoop runs sequential programs; use runWorkgroups");
  const m: Machine = {
    val: new Float64Array(p.values),
    types: new Array<LType>(p.values),
    locals: new Float64Array(p.locals.length),
    size: (i) => sizes[i]!,
    stride: (i) => strides[i]!,
    konst: (slot, t) => toType(consts[slot]!, t),
    u32: false,
    param: () => sequentialOnly("param"),
    builtin: () => sequentialOnly("builtin"),
    sload: () => sequentialOnly("sload"),
    store: (buf, at, v) => {
      outs[buf]![at] = v;
    },
    sstore: () => sequentialOnly("sstore"),
    fail: (msg) => {
      throw new IRError(`loop form: ${msg}`);
    },
  };
  // Runs to the end at once: a sequential program has no barrier to yield at (exec refuses one).
  exec(m, ins, outs, p.body).next();
}

/** How a statement list ended: normally, by `break`, or by `return`. */
const NEXT = 0;
const BREAK = 1;
const RETURN = 2;

/**
 * Runs `stmts` on machine `m`; yields at each `barrier` (`runWorkgroups` runs the
 * invocations of a workgroup in lockstep between them) and returns how the list ended.
 */
function* exec(
  m: Machine,
  ins: readonly ArrayLike<number>[],
  outs: readonly TypedArray[],
  stmts: readonly LStmt[],
): Generator<void, number, void> {
  const { val, types, locals } = m;
  for (const s of stmts) {
    switch (s.k) {
      case "let":
        types[s.id] = s.type;
        val[s.id] = evalExpr(m, ins, outs, s.type, s.e);
        break;
      case "set":
        locals[s.local] = val[s.value]!;
        break;
      case "store":
        m.store(s.buf, val[s.at]!, val[s.value]!);
        break;
      case "sstore":
        m.sstore(s.buf, val[s.at]!, val[s.value]!);
        break;
      case "loop": {
        const to = val[s.to]!;
        const step = s.step === undefined ? 1 : val[s.step]!;
        if (step <= 0) m.fail(`loop step ${step}`);
        for (let v = val[s.from]!; v < to; v += step) {
          types[s.var] = "index";
          val[s.var] = v;
          const r = yield* exec(m, ins, outs, s.body);
          if (r === BREAK) break;
          if (r === RETURN) return RETURN;
        }
        break;
      }
      case "if": {
        const r = yield* exec(m, ins, outs, val[s.cond] !== 0 ? s.then : s.else);
        if (r !== NEXT) return r;
        break;
      }
      case "barrier":
        if (!m.u32) sequentialOnly(s.k);
        yield;
        break;
      case "break":
      case "return":
        if (!m.u32) sequentialOnly(s.k);
        return s.k === "break" ? BREAK : RETURN;
    }
  }
  return NEXT;
}

/** Bits of a uniform slot as the constant's dtype (what the WGSL printer's bitcasts read). */
function uniformConst(bits: number, t: LType): number {
  if (t === "bool") return bits !== 0 ? 1 : 0;
  if (t === "index") return bits;
  return toType(reinterpret(bits, "uint32", t), t);
}

/**
 * Runs a workgroup program over `workgroups` workgroups (see the module comment):
 * `params` is the uniform (every `param`, `size`, `stride` and `const` reads it),
 * `ins` and `outs` the bound storage buffers in binding order.
 */
export function runWorkgroups(
  p: LoopProgram,
  ins: readonly ArrayLike<number>[],
  outs: readonly TypedArray[],
  params: Uint32Array,
  workgroups: number,
): void {
  const W = p.workgroupSize;
  if (W === undefined) throw new IRError("loop form: runWorkgroups runs workgroup programs; use runLoop");
  const fail = (msg: string): never => {
    throw new IRError(`loop form (workgroup program): ${msg}`);
  };
  const slot = (i: number): number => {
    if (i >= params.length) fail(`uniform slot ${i} is past the ${params.length} given`);
    return params[i]!;
  };
  // Who wrote each output element in this pass (invocation + 1), to refuse two writers.
  const writers = outs.map((o) => new Float64Array(o.length));
  for (let wg = 0; wg < workgroups; wg++) {
    const shared = (p.shared ?? []).map((s) => new ARRAY_CTOR[s.dtype](s.length));
    // Per shared element: the phase and lane of its last write and read (-2: several lanes read).
    const wPhase = shared.map((s) => new Int32Array(s.length).fill(-1));
    const wLane = shared.map((s) => new Int32Array(s.length));
    const rPhase = shared.map((s) => new Int32Array(s.length).fill(-1));
    const rLane = shared.map((s) => new Int32Array(s.length));
    let phase = 0;
    const invocation = function* (lane: number): Generator<void, void, void> {
      const me = wg * W + lane + 1;
      const m: Machine = {
        val: new Float64Array(p.values),
        types: new Array<LType>(p.values),
        locals: new Float64Array(p.locals.length),
        size: (i) => slot(1 + i),
        stride: (i) => slot(1 + p.sizes + i),
        konst: (s, t) => uniformConst(slot(1 + p.sizes + p.strides + s), t),
        u32: true,
        param: (i) => slot(i),
        builtin: (name) => (name === "lane" ? lane : wg),
        sload: (buf, at) => {
          if (at >= shared[buf]!.length) fail(`sload of shared array ${buf} at ${at}, past its ${shared[buf]!.length}`);
          if (wPhase[buf]![at] === phase && wLane[buf]![at] !== lane)
            fail(
              `lane ${lane} reads shared ${buf}[${at}], which lane ${wLane[buf]![at]} wrote in the same phase (a race)`,
            );
          if (rPhase[buf]![at] !== phase) {
            rPhase[buf]![at] = phase;
            rLane[buf]![at] = lane;
          } else if (rLane[buf]![at] !== lane) rLane[buf]![at] = -2;
          return shared[buf]![at]!;
        },
        store: (buf, at, v) => {
          const out = outs[buf]!;
          if (at >= out.length) fail(`store to output ${buf} at ${at}, past its ${out.length} elements`);
          const w = writers[buf]!;
          if (w[at] !== 0 && w[at] !== me)
            fail(`output ${buf}[${at}] is written by invocations ${w[at]! - 1} and ${me - 1} (a race)`);
          w[at] = me;
          out[at] = v;
        },
        sstore: (buf, at, v) => {
          if (at >= shared[buf]!.length)
            fail(`sstore to shared array ${buf} at ${at}, past its ${shared[buf]!.length}`);
          if (wPhase[buf]![at] === phase && wLane[buf]![at] !== lane)
            fail(`lanes ${wLane[buf]![at]} and ${lane} write shared ${buf}[${at}] in the same phase (a race)`);
          if (rPhase[buf]![at] === phase && rLane[buf]![at] !== lane)
            fail(`lane ${lane} writes shared ${buf}[${at}], which another lane read in the same phase (a race)`);
          wPhase[buf]![at] = phase;
          wLane[buf]![at] = lane;
          shared[buf]![at] = v;
        },
        fail,
      };
      yield* exec(m, ins, outs, p.body);
    };
    // Lockstep: every live invocation runs to its next barrier (or its end), then the next phase.
    let live = Array.from({ length: W }, (_, lane) => invocation(lane));
    while (live.length > 0) {
      const waiting = live.filter((g) => g.next().done !== true);
      if (waiting.length > 0 && waiting.length < live.length)
        fail(
          `workgroup ${wg}: ${waiting.length} of ${live.length} invocations wait at a barrier the others never reach (non-uniform control flow)`,
        );
      live = waiting;
      phase++;
    }
  }
}

/** The workgroup program a pass of a plan runs (see `GpuProgram`). */
export function gpuPassProgram(kernel: Kernel, program: GpuProgram): LoopProgram {
  switch (program) {
    case "main":
      return lowerKernelWorkgroup(kernel);
    case "combine":
      return lowerCombine(kernel, false);
    case "combine-final":
      return lowerCombine(kernel, true);
    case "row-combine":
      return lowerRowCombine(kernel);
  }
}

/**
 * Runs one launch of `kernel` as the WebGPU backend does, with no GPU: plans it
 * (`planGpuLaunch`) and runs each pass's program with `runWorkgroups`, scratch
 * buffers of partials in between. `ins` and `outs` are the launch's buffers (host
 * typed arrays of the kernel's dtypes). Returns the plan.
 */
export function runGpuPlan(
  kernel: Kernel,
  launch: Launch,
  ins: readonly TypedArray[],
  outs: readonly TypedArray[],
  programs: Map<GpuProgram, LoopProgram> = new Map(),
): GpuPlan {
  const plan = planGpuLaunch(kernel, launch, { inputs: ins.map((a) => a.length), outputs: outs.map((a) => a.length) });
  const scratch = plan.scratch.map((s) => new ARRAY_CTOR[s.dtype](s.length));
  const buffer = (b: GpuBuffer): TypedArray =>
    b.k === "input" ? ins[b.i]! : b.k === "output" ? outs[b.j]! : scratch[b.s]!;
  for (const pass of plan.passes) {
    let prog = programs.get(pass.program);
    if (prog === undefined) {
      prog = gpuPassProgram(kernel, pass.program);
      programs.set(pass.program, prog);
    }
    runWorkgroups(prog, pass.reads.map(buffer), pass.writes.map(buffer), pass.params, pass.workgroups);
  }
  return plan;
}
