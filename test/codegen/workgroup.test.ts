/**
 * The WebGPU target without a GPU: every launch is planned by codegen/gpu-plan.ts and
 * its passes (main, combine, row-combine; scatter's copy and update passes) run as
 * workgroup programs in the loop-form interpreter (invocations in lockstep between
 * barriers, shared memory, u32 index arithmetic), compared with the reference
 * interpreter on random graphs: elementwise kernels, random reductions of every op
 * (looped and tree kernels), trees in one chunk and in several with a combine
 * pass, scatter, jagged segment reduce/map/pad/unpad, and long rows (windows and
 * row-combine passes).
 */
import { describe, expect, it } from "vitest";
import { lowerCombine } from "../../codegen/lower-workgroup.js";
import { runGpuPlan, runWorkgroups } from "../../codegen/loop-interpret.js";
import type { GpuProgram } from "../../codegen/gpu-plan.js";
import type { LoopProgram } from "../../codegen/loop.js";
import { WGSL_COMBINE_CHUNK } from "../../codegen/wgsl-launch.js";
import { interpret, type Value } from "../../ir/interpret.js";
import { kernelConsts, numel, type Kernel } from "../../ir/kernel.js";
import { makeGraph, Node, type Graph } from "../../ir/graph.js";
import { printGraph } from "../../ir/print.js";
import { runPipeline } from "../../passes/pipeline.js";
import { JsHostBackend, type JsCompiled } from "../../runtime/js-host.js";
import { Program } from "../../runtime/program.js";
import { closeEnough, randomCase, randomInputs, randomScatterCase, rng, type Family } from "../helpers/random-graph.js";
import { ARRAY_CTOR } from "../../ir/dtype.js";
import { isPositional, NON_EMPTY_REDUCE, REDUCE_OPS } from "../../ir/reductions.js";
import { treeReduction } from "../../codegen/wgsl-launch.js";
import { raggedCase, raggedInputs, segmentGraphs } from "../helpers/ragged.js";

/** Programs the plans ran, over the whole file (the coverage check at the end). */
const ran = new Set<GpuProgram>();
class NoFloat64 extends Error {}

/** A host backend whose kernels run as the WebGPU backend's plans, in the loop-form interpreter. */
const gpuless = new JsHostBackend({
  source: (k: Kernel) => JSON.stringify(k),
  compile(kernel: Kernel): JsCompiled {
    // WGSL has no float64: such a graph never reaches a WebGPU kernel.
    if ([...kernel.inputs, ...kernel.outputs, ...kernel.exprs].some((x) => x.dtype === "float64"))
      throw new NoFloat64();
    const programs = new Map<GpuProgram, LoopProgram>();
    return {
      kernel,
      source: "",
      consts: kernelConsts(kernel),
      fn: (ins, outs, sizes, strides, consts) => {
        let at = 0;
        const inputBatchStrides = kernel.inputs.map((inp) => strides.slice(at, (at += inp.batchRank)));
        const plan = runGpuPlan(kernel, { batchSizes: sizes, inputBatchStrides, consts }, ins, outs, programs);
        for (const p of plan.passes) ran.add(p.program);
      },
    };
  },
});

const REDUCE_OPS_LIST = [...REDUCE_OPS];
const TOL: Record<Family, number> = { float64: 0, float32: 1e-4, int32: 0, uint32: 0 };

/** Runs a graph's WebGPU plans in the interpreter and compares with the reference; false when it holds float64. */
function check(g: Graph, inputs: readonly Value[], tol: number, what: string, unrollLimit = 64): boolean {
  const expected = interpret(g, inputs);
  const { schedule } = runPipeline(g, { maxKernelBuffers: 8, unrollLimit, mixedBaseOutputs: false });
  let program: Program;
  try {
    program = Program.create(schedule, gpuless) as Program;
  } catch (e) {
    if (e instanceof NoFloat64) return false;
    throw e;
  }
  const outs = program.run(inputs.map((v) => ({ buffer: gpuless.wrap(v.type.dtype, v.data.slice()), type: v.type })));
  outs.forEach((o, i) => {
    expect(o.type).toEqual(expected[i]!.type);
    const err = closeEnough(gpuless.readSync(o.buffer), expected[i]!.data, tol);
    if (err !== undefined) throw new Error(`${what}: output ${i} ${err}\n${printGraph(g)}`);
  });
  return true;
}

const SEEDS = Array.from({ length: 24 }, (_, i) => 1 + i * 7919);

describe("WebGPU plans and workgroup lowering in the loop-form interpreter equal the reference interpreter", () => {
  for (const family of ["float32", "int32", "uint32"] as const) {
    it(`${family} random graphs (elementwise, looped and tree reductions; special values and empty dims)`, () => {
      let run = 0;
      for (const seed of SEEDS) {
        const specials = seed % 3 === 0;
        const c = randomCase(seed, family, { specials, smooth: family === "float32" });
        if (check(c.graph, randomInputs(c), TOL[family], `seed ${seed} (${family})`, seed % 2 ? 64 : 0)) run++;
      }
      expect(run).toBeGreaterThan(SEEDS.length / 2);
    });
  }

  it("random reductions: every op over random batch and base axes (looped and tree kernels; NaN, ±Inf, -0, empty axes)", () => {
    const kinds = new Set<string>();
    for (const seed of Array.from({ length: 40 }, (_, i) => 1 + i * 104729)) {
      const r = rng(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
      const family = pick(["float32", "int32"] as const);
      const op = pick(REDUCE_OPS_LIST.filter((o) => family === "float32" || (o !== "mean" && o !== "prod")));
      const emptyOk = !NON_EMPTY_REDUCE.has(op);
      const batch = Array.from({ length: 1 + Math.floor(r() * 2) }, () =>
        emptyOk && r() < 0.08 ? 0 : 1 + Math.floor(r() * 5),
      );
      const base = Array.from({ length: Math.floor(r() * 3) }, () => pick([1, 2, 3, 7, 40, 300]));
      const axes = [...batch.map((_, a) => ({ batch: true, a })), ...base.map((_, a) => ({ batch: false, a }))];
      // argmin/argmax reduce one axis; the others a random non-empty subset.
      let chosen = axes.filter(() => r() < 0.5);
      if (isPositional(op) || chosen.length === 0) chosen = [pick(axes)];
      const reducedBase = numel(chosen.filter((x) => !x.batch).map((x) => base[x.a]!));
      if (op === "prod" && reducedBase > 16) continue; // float32 products of many factors over/underflow at different steps
      const x = Node.make("input", [], { index: 0 }, { dtype: family, batch: batch.map((_, j) => `b${j}`), base });
      const pre = family === "float32" ? Node.make("mul", [x, Node.make("abs", [x])]) : Node.make("add", [x, x]);
      const y = Node.make(op, [pre], {
        batchAxes: chosen.filter((c) => c.batch).map((c) => c.a),
        baseAxes: chosen.filter((c) => !c.batch).map((c) => c.a),
        keep: r() < 0.3,
      });
      const n = numel([...batch, ...base]);
      const specials = family === "float32" ? [NaN, Infinity, -Infinity, -0, 0] : [2147483647, -2147483648];
      const data = new ARRAY_CTOR[family](n).map(() =>
        r() < 0.1
          ? pick(specials)
          : family === "float32"
            ? Math.round((r() * 4 - 2) * 1000) / 1000
            : Math.floor(r() * 11) - 5,
      );
      const g = makeGraph("reduction", [x], [y], ["x"]);
      const { schedule } = runPipeline(g, { maxKernelBuffers: 8, unrollLimit: 64, mixedBaseOutputs: false });
      for (const st of schedule.steps)
        if (st.kind === "kernel" && st.kernel.reduce !== null) kinds.add(treeReduction(st.kernel) ? "tree" : "looped");
      check(g, [{ type: { dtype: family, batch, base }, data }], TOL[family], `reduction seed ${seed} (${op})`);
    }
    expect([...kinds].sort()).toEqual(["looped", "tree"]);
  });

  it("scatter (copy pass, update passes) on random graphs", () => {
    for (const seed of SEEDS)
      for (const family of ["float32", "int32"] as const) {
        const c = randomScatterCase(seed, family, { specials: seed % 4 === 0, smooth: true });
        check(c.graph, randomInputs(c), TOL[family], `scatter seed ${seed} (${family})`);
      }
  });

  it("jagged segment_reduce (every op), segment_expand maps, pads, masks and unpads", () => {
    for (const seed of SEEDS.slice(0, 12)) {
      const c = raggedCase(seed);
      const rag = (tag: string, build: (v: Node, o: Node, rows: Node) => Node[]): void => {
        const [v, o, rows] = raggedInputs(c.S);
        const g = makeGraph("ragged", [v, o, rows], build(v, o, rows), ["values", "offsets", "rows"]);
        check(g, [c.values, c.offsets, c.rows], 1e-5, `${tag}, lengths ${c.lengths}`);
      };
      for (const op of ["sum", "mean", "max", "min", "argmax", "count"] as const)
        rag(op, segmentGraphs.reduceCentred(op));
      rag("expand", segmentGraphs.expandMap);
      const maxN = (seed % 6) - 1;
      const left = seed % 2 === 0;
      rag("pad", segmentGraphs.padAndMask(maxN, left));
      rag("unpad", segmentGraphs.unpadPadded(maxN));
    }
  });

  /** Values in [-2, 2), three decimals, from a fixed pattern. */
  const pattern = (n: number, S: number): Value => ({
    type: { dtype: "float32", batch: [n], base: [S] },
    data: Float32Array.from({ length: n * S }, (_, i) => ((i * 7919) % 1000) / 250 - 2),
  });

  it("tree reductions over a batch of 20,000 (two chunks: partials, then the final combine pass)", () => {
    for (const op of ["sum", "mean", "argmax", "argmin", "min", "all"] as const) {
      const x = Node.make("input", [], { index: 0 }, { dtype: "float32", batch: ["b"], base: [2] });
      const g = makeGraph("tree", [x], [Node.make(op, [x], { batchAxes: [0], baseAxes: [], keep: false })], ["x"]);
      // float32 accumulation over 20,000 values against the reference's float64.
      check(g, [pattern(20000, 2)], 1e-3, `tree ${op}`);
    }
  });

  it("jagged rows longer than a chunk (rows pass, windows pass, row-combine pass)", () => {
    for (const op of ["sum", "mean", "argmax", "min"] as const)
      for (const lengths of [
        [2100, 3, 0, 2500],
        [1, 4200],
      ]) {
        const T = lengths.reduce((a, b) => a + b, 0);
        const offsets = new Int32Array(lengths.length + 1);
        lengths.forEach((l, i) => (offsets[i + 1] = offsets[i]! + l));
        const [v, o] = raggedInputs(2);
        const g = makeGraph(
          "long",
          [v, o],
          [Node.make("segment_reduce", [Node.make("exp", [v]), o], { op })],
          ["values", "offsets"],
        );
        const offs: Value = { type: { dtype: "int32", batch: [lengths.length + 1], base: [] }, data: offsets };
        check(g, [pattern(T, 2), offs], 1e-3, `long rows ${op} ${lengths}`);
      }
  });

  it("ran every pass program a plan has at these sizes", () => {
    // "combine" (partials to partials) needs more than WGSL_COMBINE_CHUNK chunks: see the next test.
    expect([...ran].sort()).toEqual(["combine-final", "main", "row-combine"]);
  });
});

describe("workgroup programs on their own", () => {
  /** A (B;) float32 sum over batch axis 0. */
  const sumKernel: Kernel = {
    batchRank: 1,
    baseShape: [],
    reduce: { batchAxes: [0], baseAxes: [] },
    inputs: [{ dtype: "float32", batchRank: 1, baseShape: [] }],
    outputs: [{ dtype: "float32", value: 0, reduce: "sum" }],
    exprs: [{ k: "load", input: 0, index: [], dtype: "float32" }],
    unroll: true,
  };

  it("combine passes fold partials in two levels: partials to partials, then to the output", () => {
    // 20,000 partials of one output element (integers, so float32 sums are exact): the sum by hand is n(n-1)/2 mod 7 pattern.
    const n = WGSL_COMBINE_CHUNK + 3616;
    const partials = Float32Array.from({ length: n }, (_, i) => i % 7);
    let expected = 0;
    for (let i = 0; i < n; i++) expected += i % 7;
    const gout = Math.ceil(n / WGSL_COMBINE_CHUNK);
    expect(gout).toBe(2);
    const mid = new Float32Array(gout);
    runWorkgroups(lowerCombine(sumKernel, false), [partials], [mid], Uint32Array.of(1, n, gout, n), gout);
    expect(mid[0]! + mid[1]!).toBe(expected);
    const out = new Float32Array(1);
    runWorkgroups(lowerCombine(sumKernel, true), [mid], [out], Uint32Array.of(1, gout, 1, n), 1);
    expect(out[0]).toBe(expected);
  });

  it("refuses a barrier that only some invocations reach, and a shared-memory race", () => {
    const base = {
      inputs: [],
      outputs: ["float32" as const],
      sizes: 0,
      strides: 0,
      consts: [],
      locals: [],
      relaxedFloat32: false,
      workgroupSize: 2,
      params: 1,
      shared: [{ dtype: "float32" as const, length: 2 }],
    };
    // if (lane == 0) { barrier }
    const nonUniform: LoopProgram = {
      ...base,
      values: 3,
      body: [
        { k: "let", id: 0, type: "index", e: { k: "builtin", name: "lane" } },
        { k: "let", id: 1, type: "index", e: { k: "lit", v: 0 } },
        { k: "let", id: 2, type: "bool", e: { k: "icmp", op: "eq", a: 0, b: 1 } },
        { k: "if", cond: 2, then: [{ k: "barrier" }], else: [] },
      ],
    };
    expect(() => runWorkgroups(nonUniform, [], [new Float32Array(2)], Uint32Array.of(0), 1)).toThrow(
      /non-uniform control flow/,
    );
    // Every lane writes shared element 0 with no barrier between.
    const race: LoopProgram = {
      ...base,
      values: 2,
      body: [
        { k: "let", id: 0, type: "index", e: { k: "lit", v: 0 } },
        { k: "let", id: 1, type: "float32", e: { k: "lit", v: 1 } },
        { k: "sstore", buf: 0, at: 0, value: 1 },
      ],
    };
    expect(() => runWorkgroups(race, [], [new Float32Array(2)], Uint32Array.of(0), 1)).toThrow(/race/);
  });
});
