/**
 * Routine kernels → loop form (docs/ARCHITECTURE.md, Kernel forms): the looped
 * matrix routines of ir/routines.ts, staged on a `LoopBuilder`. The routine's
 * algorithm runs once per batch element: on the sequential target inside loops
 * over the batch dims, on the workgroup target (WGSL) in one invocation per batch
 * element. Every value the algorithm computes becomes a `let`, its loops `loop`
 * statements, its branches `if`s, its locals mutable locals, and its reads of the
 * output `oload`s (a routine works in place in its output block).
 *
 * On the workgroup target an invocation may loop at most `WGSL_LOOP_BUDGET` times
 * in all (Mesa's llvmpipe silently leaves loops past 65,535 iterations), so innermost
 * loops of at most `GPU_UNROLL` iterations unroll into guarded copies, and a routine
 * whose remaining loops would still pass the budget is an UnsupportedOpError when
 * its kernel is lowered, naming the routine and its size.
 */
import { isFloat, type DType } from "../../ir/dtype.js";
import { UnsupportedOpError } from "../../ir/errors.js";
import { launchRank, numel, type Kernel } from "../../ir/kernel.js";
import {
  countTrips,
  ROUTINE_FACTS,
  routineSpec,
  runRoutine,
  type Machine,
  type RoutineSpec,
  type Var,
} from "../../ir/routines.js";
import type { LoopProgram } from "../loop.js";
import { batchPointer, LoopBuilder, strideBase } from "../loop-builder.js";
import { WGSL_LOOP_BUDGET, WGSL_WORKGROUP_SIZE, wgslParamLayout } from "../wgsl-launch.js";

/** Innermost routine loops up to this length unroll on the workgroup target. */
export const GPU_UNROLL = 64;

/** The routine spec of a routine kernel. */
export function kernelRoutineSpec(k: Kernel): RoutineSpec {
  const r = k.routine!;
  const dtype = k.outputs[0]!.dtype;
  if (ROUTINE_FACTS[r.name].dtypes === "float" ? !isFloat(dtype) : dtype === "bool")
    throw new UnsupportedOpError(`loop form: routine ${r.name} on ${dtype}`);
  return routineSpec(r.name, k.inputs[0]!.baseShape, r, dtype, k.inputs[1]?.baseShape[1] ?? 0);
}

/**
 * A machine that stages a routine on a builder. `ptr(i)` is input i's batch
 * offset, `out` the output block's; `unroll` the longest innermost loop unrolled.
 */
function builderMachine(
  b: LoopBuilder,
  dt: DType,
  k: Kernel,
  ptr: (input: number) => number,
  out: number,
  unroll: number,
): Machine<number, number, number> {
  const bin = (op: "add" | "sub" | "mul" | "div") => (x: number, y: number) =>
    b.let(dt, { k: "binary", op, a: x, b: y });
  const cmp = (op: "lt" | "le" | "gt" | "ge" | "eq") => (x: number, y: number) =>
    b.let("bool", { k: "binary", op, a: x, b: y });
  const un = (op: "neg" | "abs" | "sqrt") => (x: number) => b.let(dt, { k: "unary", op, x });
  const local = (type: DType | "index", init: number): Var<number> => {
    const l = b.local(type);
    b.set(l, init);
    return { get: () => b.get(l), set: (v) => b.set(l, v) };
  };
  return {
    f: (v) => b.lit(v, dt),
    i: (v) => b.index(v),
    add: bin("add"),
    sub: bin("sub"),
    mul: bin("mul"),
    div: bin("div"),
    neg: un("neg"),
    abs: un("abs"),
    sqrt: un("sqrt"),
    lt: cmp("lt"),
    le: cmp("le"),
    gt: cmp("gt"),
    ge: cmp("ge"),
    eq: cmp("eq"),
    isnan: (x) => b.let("bool", { k: "unary", op: "isnan", x }),
    or: (x, y) => b.let("bool", { k: "binary", op: "or", a: x, b: y }),
    not: (x) => b.let("bool", { k: "unary", op: "not", x }),
    and: (x, y) => b.let("bool", { k: "binary", op: "and", a: x, b: y }),
    sel: (c, x, y) => b.let(dt, { k: "where", c, a: x, b: y }),
    isel: (c, x, y) => (x === y ? x : b.let("index", { k: "where", c, a: x, b: y })),
    iadd: (x, y) => b.idx("add", x, y),
    isub: (x, y) => b.idx("sub", x, y),
    imul: (x, y) => b.idx("mul", x, y),
    imin: (x, y) => b.idx("min", x, y),
    imax: (x, y) => b.idx("max", x, y),
    ieq: (x, y) => b.icmp("eq", x, y),
    ine: (x, y) => b.icmp("ne", x, y),
    ige: (x, y) => b.icmp("ge", x, y),
    ilt: (x, y) => b.icmp("lt", x, y),
    toF: (x) => b.cast(x, dt),
    toI: (x) => b.cast(x, "index"),
    load: (input, at) => {
      const v = b.let(k.inputs[input]!.dtype, { k: "load", buf: input, at: b.idx("add", ptr(input), at) });
      return b.cast(v, dt);
    },
    oload: (at) => b.let(dt, { k: "oload", buf: 0, at: b.idx("add", out, at) }),
    store: (at, v) => b.store(0, b.idx("add", out, at), v),
    loop: (from, to, body, inner) => {
      if (inner !== undefined && inner <= unroll) {
        // Unrolled: `inner` copies, each guarded by from <= c < to unless that is known.
        const lo = b.litValue(from);
        const hi = b.litValue(to);
        for (let c = 0; c < inner; c++) {
          if ((lo !== undefined && c < lo) || (hi !== undefined && c >= hi)) continue;
          const cv = b.index(c);
          const guards: number[] = [];
          if (lo === undefined) guards.push(b.icmp("ge", cv, from));
          if (hi === undefined) guards.push(b.icmp("lt", cv, to));
          if (guards.length === 0) body(cv);
          else {
            const g =
              guards.length === 1
                ? guards[0]!
                : b.let("bool", { k: "binary", op: "and", a: guards[0]!, b: guards[1]! });
            b.when(g);
            body(cv);
            b.end();
          }
        }
        return;
      }
      const v = b.loop(from, to);
      body(v);
      b.end();
    },
    when: (c, then, otherwise) => {
      b.when(c);
      then();
      if (otherwise !== undefined) {
        b.otherwise();
        otherwise();
      }
      b.end();
    },
    fvar: (init) => local(dt, init),
    ivar: (init) => local("index", init),
  };
}

/** Lowers a routine kernel for the sequential target: loops over the batch, the routine inside. */
export function lowerRoutine(k: Kernel): LoopProgram {
  const spec = kernelRoutineSpec(k);
  const b = new LoopBuilder();
  const R = k.batchRank;
  const strideAt = strideBase(k);
  const S = numel(k.baseShape);
  const batchVar: number[] = [];
  const counter = b.local("index");
  b.set(counter, b.index(0));
  for (let a = 0; a < R; a++) batchVar.push(b.loop(b.index(0), b.let("index", { k: "size", i: a })));
  const ob = b.get(counter);
  b.set(counter, b.idx("add", ob, b.index(1)));
  const pointer = inputPointers(b, k, strideAt, batchVar);
  const M = builderMachine(b, spec.dtype, k, pointer, b.idx("mul", ob, b.index(S)), 0);
  runRoutine(M, spec);
  for (let a = 0; a < R; a++) b.end();
  return b.finish(
    k,
    R,
    k.inputs.reduce((n, inp) => n + inp.batchRank, 0),
  );
}

/** Per input, its batch offset (made once, on demand) from the batch variables. */
function inputPointers(
  b: LoopBuilder,
  k: Kernel,
  strideAt: readonly number[],
  batchVar: readonly number[],
): (i: number) => number {
  const memo = new Map<number, number>();
  return (i) => {
    const hit = memo.get(i);
    if (hit !== undefined) return hit;
    const p = batchPointer(b, k, strideAt, (a) => batchVar[a]!, i);
    memo.set(i, p);
    return p;
  };
}

/**
 * Lowers a routine kernel for the workgroup target: one invocation per batch element
 * (the launch's `count`), innermost loops of up to `GPU_UNROLL` iterations unrolled.
 */
export function lowerRoutineWorkgroup(k: Kernel): LoopProgram {
  const spec = kernelRoutineSpec(k);
  const trips = countTrips(spec, GPU_UNROLL, WGSL_LOOP_BUDGET);
  if (trips > WGSL_LOOP_BUDGET)
    throw new UnsupportedOpError(
      `webgpu: routine ${spec.name} on ${k.inputs[0]!.baseShape.join("×")} base matrices runs more than the ${WGSL_LOOP_BUDGET} loop iterations one WebGPU invocation may run (Mesa's software rasterizer stops loops silently past 65,535); use a smaller size there, or the JS or WebAssembly backend`,
    );
  const b = new LoopBuilder();
  const layout = wgslParamLayout(k);
  const R = k.batchRank;
  const wg = b.let("index", { k: "builtin", name: "workgroup" });
  const lane = b.let("index", { k: "builtin", name: "lane" });
  const gi = b.idx("add", b.idx("mul", wg, b.index(WGSL_WORKGROUP_SIZE)), lane);
  b.when(b.icmp("ge", gi, b.let("index", { k: "param", i: layout.count, name: "count" })));
  b.stmt({ k: "return" });
  b.end();
  // gi over the batch dims (row-major).
  const batchVar = new Array<number>(R);
  let r = gi;
  for (let a = R - 1; a >= 1; a--) {
    const s = b.let("index", { k: "size", i: a });
    batchVar[a] = b.idx("mod", r, s);
    r = b.idx("div", r, s);
  }
  if (R > 0) batchVar[0] = r;
  const pointer = inputPointers(b, k, strideBase(k), batchVar);
  const out = b.idx("mul", gi, b.index(numel(k.baseShape)));
  runRoutine(builderMachine(b, spec.dtype, k, pointer, out, GPU_UNROLL), spec);
  return b.finish(
    k,
    launchRank(k),
    k.inputs.reduce((n, inp) => n + inp.batchRank, 0),
    {
      workgroupSize: WGSL_WORKGROUP_SIZE,
      params: layout.length,
    },
  );
}
