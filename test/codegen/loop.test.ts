/**
 * The loop form on its own: lowered kernels run by the loop-form interpreter
 * against the reference interpreter (no renderer involved), reduction rules on
 * hand-built kernels with values computed by hand, and the verifier's refusals.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runLoop } from "../../codegen/loop-interpret.js";
import { verifyLoop, type LoopProgram, type LStmt } from "../../codegen/loop.js";
import { lowerKernel } from "../../codegen/lower-loops.js";
import { loopToJS } from "../../codegen/js.js";
import { ARRAY_CTOR, type DType, type TypedArray } from "../../ir/dtype.js";
import { IRError, UnsupportedOpError } from "../../ir/errors.js";
import { interpret } from "../../ir/interpret.js";
import { kernelConsts, type Kernel } from "../../ir/kernel.js";
import { printGraph } from "../../ir/print.js";
import { runPipeline } from "../../passes/pipeline.js";
import { JsHostBackend, type JsCompiled } from "../../runtime/js-host.js";
import { Program } from "../../runtime/program.js";
import { makeGraph, Node } from "../../ir/graph.js";
import type { Graph } from "../../ir/graph.js";
import type { Value } from "../../ir/interpret.js";
import { closeEnough, randomCase, randomInputs, seedArb, type Family } from "../helpers/random-graph.js";
import { raggedCase, raggedInputs, segmentGraphs } from "../helpers/ragged.js";
import { FC_SEED } from "../helpers/run.js";

/** A JS backend whose kernels run in the loop-form interpreter. */
const loopBackend = new JsHostBackend({
  source: (k: Kernel) => JSON.stringify(lowerKernel(k)),
  compile(kernel: Kernel): JsCompiled {
    const p = lowerKernel(kernel);
    return {
      kernel,
      source: "",
      consts: kernelConsts(kernel),
      fn: (ins, outs, sizes, strides, consts) => runLoop(p, ins, outs, sizes, strides, consts),
    };
  },
});

const TOL: Record<Family, number> = { float64: 1e-9, float32: 1e-6, int32: 0, uint32: 0 };

/** Runs a graph through the pipeline and the loop-form interpreter; compares with the reference. */
function checkGraph(g: Graph, inputs: readonly Value[], tol: number, what: string, unrollLimit = 64): void {
  const expected = interpret(g, inputs);
  const { schedule } = runPipeline(g, { maxKernelBuffers: Infinity, unrollLimit, mixedBaseOutputs: true });
  const program = Program.create(schedule, loopBackend) as Program;
  const outs = program.run(
    inputs.map((v) => ({ buffer: loopBackend.wrap(v.type.dtype, v.data.slice()), type: v.type })),
  );
  outs.forEach((o, i) => {
    expect(o.type).toEqual(expected[i]!.type);
    const err = closeEnough(loopBackend.readSync(o.buffer), expected[i]!.data, tol);
    if (err !== undefined) throw new Error(`${what}: output ${i} ${err}\n${printGraph(g)}`);
  });
}

describe("lowered kernels, run by the loop-form interpreter, equal the reference interpreter", () => {
  for (const family of ["float64", "float32", "int32", "uint32"] as const) {
    it(`${family} random graphs, unrolled and looped base`, () => {
      fc.assert(
        fc.property(seedArb, fc.boolean(), (seed, unroll) => {
          const c = randomCase(seed, family, { specials: seed % 3 === 0 });
          checkGraph(c.graph, randomInputs(c), TOL[family], `seed ${seed} (${family})`, unroll ? 64 : 0);
        }),
        { numRuns: 40, seed: FC_SEED },
      );
    });
  }
});

describe("segmented (ragged) kernels in the loop-form interpreter equal the reference interpreter", () => {
  const ragged = (seed: number, unrollLimit: number, build: (v: Node, o: Node, rows: Node) => Node[]): void => {
    const c = raggedCase(seed);
    const [v, o, rows] = raggedInputs(c.S);
    const g = makeGraph("ragged", [v, o, rows], build(v, o, rows), ["values", "offsets", "rows"]);
    checkGraph(g, [c.values, c.offsets, c.rows], 1e-6, `lengths ${c.lengths}`, unrollLimit);
  };
  it("segment_reduce (every op) over a prologue reading a per-row tensor, segment_expand maps, unpad and pads", () => {
    fc.assert(
      fc.property(seedArb, fc.boolean(), fc.integer({ min: -1, max: 6 }), fc.boolean(), (seed, unroll, maxN, left) => {
        const lim = unroll ? 64 : 0;
        for (const op of ["sum", "mean", "max", "min", "argmax", "count"] as const)
          ragged(seed, lim, segmentGraphs.reduceCentred(op));
        ragged(seed, lim, segmentGraphs.expandMap);
        ragged(seed, lim, segmentGraphs.unpadPadded(maxN));
        ragged(seed, lim, segmentGraphs.padAndMask(maxN, left));
      }),
      { numRuns: 25, seed: FC_SEED },
    );
  });
});

/** Runs a one-kernel launch in the interpreter: batch sizes, one input's data, strides. */
function run(k: Kernel, input: readonly number[], sizes: number[], strides: number[], outLen: number): TypedArray {
  const out = new ARRAY_CTOR[k.outputs[0]!.dtype](outLen);
  runLoop(lowerKernel(k), [Float64Array.from(input)], [out], sizes, strides, kernelConsts(k));
  return out;
}

/** A kernel reducing batch axis 0 of a (B;) input of dtype `d` with `op`. */
function reduceBatch(op: Kernel["outputs"][number]["reduce"], d: DType, out: DType): Kernel {
  return {
    batchRank: 1,
    baseShape: [],
    reduce: { batchAxes: [0], baseAxes: [] },
    inputs: [{ dtype: d, batchRank: 1, baseShape: [] }],
    outputs: [{ dtype: out, value: 0, reduce: op }],
    exprs: [{ k: "load", input: 0, index: [], dtype: d }],
    unroll: true,
  };
}

describe("reductions in the loop form (values by hand from the documented rules)", () => {
  it("a sum of -0s is -0, an empty sum is +0 (float64 accumulation rounds once)", () => {
    const s = run(reduceBatch("sum", "float32", "float32"), [-0, -0, -0], [3], [1], 1);
    expect(Object.is(s[0], -0)).toBe(true);
    const e = run(reduceBatch("sum", "float32", "float32"), [], [0], [1], 1);
    expect(Object.is(e[0], 0)).toBe(true);
    // 2^24 + 1 + 1: float64 accumulation gives 16777218 (float32 steps would stay at 16777216).
    const big = run(reduceBatch("sum", "float32", "float32"), [16777216, 1, 1], [3], [1], 1);
    expect(big[0]).toBe(16777218);
  });

  it("argmax keeps the first of equal values, and the first NaN wins", () => {
    expect(run(reduceBatch("argmax", "float32", "int32"), [1, 5, 5, 2], [4], [1], 1)[0]).toBe(1);
    expect(run(reduceBatch("argmax", "float32", "int32"), [1, NaN, 7, NaN], [4], [1], 1)[0]).toBe(1);
    expect(run(reduceBatch("argmin", "float32", "int32"), [3, -Infinity, -Infinity], [3], [1], 1)[0]).toBe(1);
  });

  it("a mean divides once by the count; max propagates NaN", () => {
    expect(run(reduceBatch("mean", "float64", "float64"), [1, 2, 6], [3], [1], 1)[0]).toBe(3);
    expect(Number.isNaN(run(reduceBatch("max", "float32", "float32"), [1, NaN, 2], [3], [1], 1)[0])).toBe(true);
  });

  it("argmax over two axes is refused with a typed error", () => {
    const k: Kernel = { ...reduceBatch("argmax", "float32", "int32"), batchRank: 2 };
    const bad: Kernel = { ...k, reduce: { batchAxes: [0, 1], baseAxes: [] } };
    expect(() => lowerKernel(bad)).toThrow(UnsupportedOpError);
  });
});

describe("verifyLoop refuses malformed loop programs", () => {
  const base: LoopProgram = {
    inputs: ["float32"],
    outputs: ["float32"],
    sizes: 1,
    strides: 1,
    consts: [],
    locals: ["float32"],
    values: 4,
    relaxedFloat32: false,
    body: [],
  };
  const refuses = (body: LStmt[], msg: RegExp, p: Partial<LoopProgram> = {}): void => {
    expect(() => verifyLoop({ ...base, ...p, body })).toThrow(IRError);
    expect(() => verifyLoop({ ...base, ...p, body })).toThrow(msg);
  };

  it("accepts a well-formed program", () => {
    const body: LStmt[] = [
      { k: "let", id: 0, type: "index", e: { k: "size", i: 0 } },
      { k: "let", id: 1, type: "index", e: { k: "lit", v: 0 } },
      {
        k: "loop",
        var: 2,
        from: 1,
        to: 0,
        body: [
          { k: "let", id: 3, type: "float32", e: { k: "load", buf: 0, at: 2 } },
          { k: "store", buf: 0, at: 2, value: 3 },
        ],
      },
    ];
    expect(verifyLoop({ ...base, body }).body).toBe(body);
  });

  it("a value read before its definition", () => {
    refuses(
      [
        { k: "store", buf: 0, at: 0, value: 1 },
        { k: "let", id: 0, type: "index", e: { k: "lit", v: 0 } },
      ],
      /not defined before it/,
    );
  });

  it("a loop variable read after its loop", () => {
    refuses(
      [
        { k: "let", id: 0, type: "index", e: { k: "lit", v: 0 } },
        { k: "loop", var: 1, from: 0, to: 0, body: [] },
        { k: "let", id: 2, type: "float32", e: { k: "load", buf: 0, at: 1 } },
      ],
      /not defined before it/,
    );
  });

  it("a value defined twice", () => {
    refuses(
      [
        { k: "let", id: 0, type: "index", e: { k: "lit", v: 0 } },
        { k: "let", id: 0, type: "index", e: { k: "lit", v: 1 } },
      ],
      /already defined/,
    );
  });

  it("binary operands of different dtypes, and index arithmetic through binary", () => {
    refuses(
      [
        { k: "let", id: 0, type: "float32", e: { k: "lit", v: 1 } },
        { k: "let", id: 1, type: "int32", e: { k: "lit", v: 1 } },
        { k: "let", id: 2, type: "float32", e: { k: "binary", op: "add", a: 0, b: 1 } },
      ],
      /operands differ/,
    );
    refuses(
      [
        { k: "let", id: 0, type: "index", e: { k: "lit", v: 1 } },
        { k: "let", id: 1, type: "index", e: { k: "binary", op: "add", a: 0, b: 0 } },
      ],
      /not index/,
    );
  });

  it("a store of the wrong dtype, an offset that is not an index, a buffer out of range", () => {
    refuses(
      [
        { k: "let", id: 0, type: "index", e: { k: "lit", v: 0 } },
        { k: "let", id: 1, type: "int32", e: { k: "lit", v: 1 } },
        { k: "store", buf: 0, at: 0, value: 1 },
      ],
      /needs float32/,
    );
    refuses(
      [
        { k: "let", id: 0, type: "float32", e: { k: "lit", v: 0 } },
        { k: "store", buf: 0, at: 0, value: 0 },
      ],
      /needs index/,
    );
    refuses(
      [
        { k: "let", id: 0, type: "index", e: { k: "lit", v: 0 } },
        { k: "let", id: 1, type: "float32", e: { k: "load", buf: 3, at: 0 } },
      ],
      /input 3 is out of range/,
    );
  });

  it("a local set with a value of another type, an if on a non-bool, a fractional index literal", () => {
    refuses(
      [
        { k: "let", id: 0, type: "int32", e: { k: "lit", v: 0 } },
        { k: "set", local: 0, value: 0 },
      ],
      /set l0 needs float32/,
    );
    refuses(
      [
        { k: "let", id: 0, type: "int32", e: { k: "lit", v: 0 } },
        { k: "if", cond: 0, then: [], else: [] },
      ],
      /if condition needs bool/,
    );
    refuses([{ k: "let", id: 0, type: "index", e: { k: "lit", v: 0.5 } }], /not a index/);
  });

  it("workgroup-only kinds in a sequential program, a break outside a loop, a shared array out of range", () => {
    refuses([{ k: "barrier" }], /barrier appears in a sequential program/);
    refuses([{ k: "let", id: 0, type: "index", e: { k: "builtin", name: "lane" } }], /sequential program/);
    refuses([{ k: "break" }], /break outside a loop/);
    refuses(
      [
        { k: "let", id: 0, type: "index", e: { k: "lit", v: 0 } },
        { k: "let", id: 1, type: "float32", e: { k: "sload", buf: 0, at: 0 } },
      ],
      /shared array 0 is out of range/,
      { workgroupSize: 64, params: 1, shared: [] },
    );
  });
});

describe("oload: a kernel reads back its own output (in-place updates)", () => {
  // out[0] = in[0]; for i in 1..n: out[i] = out[i-1] + in[i], an in-place running sum.
  const body: LStmt[] = [
    { k: "let", id: 0, type: "index", e: { k: "size", i: 0 } },
    { k: "let", id: 1, type: "index", e: { k: "lit", v: 0 } },
    { k: "let", id: 2, type: "index", e: { k: "lit", v: 1 } },
    { k: "let", id: 3, type: "float32", e: { k: "load", buf: 0, at: 1 } },
    { k: "store", buf: 0, at: 1, value: 3 },
    {
      k: "loop",
      var: 4,
      from: 2,
      to: 0,
      body: [
        { k: "let", id: 5, type: "index", e: { k: "idx", op: "sub", a: 4, b: 2 } },
        { k: "let", id: 6, type: "float32", e: { k: "oload", buf: 0, at: 5 } },
        { k: "let", id: 7, type: "float32", e: { k: "load", buf: 0, at: 4 } },
        { k: "let", id: 8, type: "float32", e: { k: "binary", op: "add", a: 6, b: 7 } },
        { k: "store", buf: 0, at: 4, value: 8 },
      ],
    },
  ];
  const prog: LoopProgram = {
    inputs: ["float32"],
    outputs: ["float32"],
    sizes: 1,
    strides: 0,
    consts: [],
    locals: [],
    values: 9,
    relaxedFloat32: false,
    body,
  };
  const input = Float32Array.from([1, 2, 0.5, -4, Infinity]);
  const expected = [1, 3, 3.5, -0.5, Infinity]; // by hand

  it("the loop-form interpreter and the JS printer both see earlier stores", () => {
    verifyLoop(prog);
    const a = new Float32Array(5);
    runLoop(prog, [input], [a], [5], [], []);
    expect(Array.from(a)).toEqual(expected);
    const { body: js } = loopToJS(prog);
    const b = new Float32Array(5);
    new Function("ins", "outs", "sizes", "strides", "consts", js)([input], [b], [5], [], []);
    expect(Array.from(b)).toEqual(expected);
  });

  it("verifyLoop refuses an oload of another dtype or past the outputs", () => {
    const bad = (e: LStmt): void =>
      expect(() => verifyLoop({ ...prog, values: 2, body: [body[0]!, e] })).toThrow(IRError);
    bad({ k: "let", id: 1, type: "int32", e: { k: "oload", buf: 0, at: 0 } });
    bad({ k: "let", id: 1, type: "float32", e: { k: "oload", buf: 1, at: 0 } });
  });
});
