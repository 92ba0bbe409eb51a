/**
 * The `routine` op (looped matrix routines) in random graphs
 * (test/helpers/random-graph.ts, `randomRoutineCase`) through the whole pass
 * pipeline on JS, WebAssembly and WebGPU against the reference interpreter, with
 * special values (NaN, ±Inf, -0, extremes, empty dims) in the data on JS and wasm.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { Graph } from "../../ir/graph.js";
import { interpret } from "../../ir/interpret.js";
import { parseGraph } from "../../ir/parse.js";
import { printGraph } from "../../ir/print.js";
import { runPipeline } from "../../passes/pipeline.js";
import { Program } from "../../runtime/program.js";
import { WasmBackend } from "../../runtime/wasm/backend.js";
import { closeEnough, randomInputs, randomRoutineCase, seedArb } from "../helpers/random-graph.js";
import { compileJs, FC_SEED, runJs } from "../helpers/run.js";
import { describeWebGPU, probeWebGPU } from "../helpers/webgpu.js";

const TOL = { float64: 1e-9, float32: 1e-5 } as const;

function fail(seed: number, where: string, err: string, g: Graph): never {
  throw new Error(`seed ${seed} (${where}): ${err}\n${printGraph(g)}`);
}

describe("routine in IR text", () => {
  it("prints and parses back to the same text; a bad routine name is refused", () => {
    fc.assert(
      fc.property(seedArb, (seed) => {
        const text = printGraph(randomRoutineCase(seed, "float32").graph);
        expect(printGraph(parseGraph(text))).toBe(text);
      }),
      { numRuns: 30, seed: FC_SEED },
    );
    const text = printGraph(randomRoutineCase(3, "float64").graph);
    expect(() => parseGraph(text.replace(/name=\w+/, "name=qz"))).toThrow(/name must be one of/);
  });
});

describe("routine in random graphs equals the reference interpreter", () => {
  for (const family of ["float64", "float32"] as const) {
    it(`JS ${family}`, () => {
      fc.assert(
        fc.property(seedArb, fc.boolean(), (seed, specials) => {
          const c = randomRoutineCase(seed, family, { specials });
          const inputs = randomInputs(c);
          const expected = interpret(c.graph, inputs);
          const actual = runJs(compileJs(c.graph), inputs);
          actual.forEach((a, i) => {
            expect(a.type).toEqual(expected[i]!.type);
            const err = closeEnough(a.data, expected[i]!.data, TOL[family]);
            if (err !== undefined) fail(seed, `${family} js`, err, c.graph);
          });
        }),
        { numRuns: 60, seed: FC_SEED },
      );
    });
  }

  const wasm = new WasmBackend();
  for (const family of ["float64", "float32"] as const) {
    it(`WebAssembly ${family}`, () => {
      fc.assert(
        fc.property(seedArb, fc.boolean(), (seed, specials) => {
          const c = randomRoutineCase(seed, family, { specials });
          const inputs = randomInputs(c);
          const expected = interpret(c.graph, inputs);
          const p = Program.create(
            runPipeline(c.graph, { maxKernelBuffers: Infinity, unrollLimit: 64, mixedBaseOutputs: true }).schedule,
            wasm,
          );
          if (p instanceof Promise) throw new Error("the wasm backend compiles synchronously");
          const outs = p.run(inputs.map((v) => ({ buffer: wasm.wrap(v.type.dtype, v.data.slice()), type: v.type })));
          outs.forEach((o, i) => {
            expect(o.type).toEqual(expected[i]!.type);
            const err = closeEnough(wasm.readSync(o.buffer), expected[i]!.data, TOL[family]);
            if (err !== undefined) fail(seed, `${family} wasm`, err, c.graph);
          });
        }),
        { numRuns: 30, seed: FC_SEED },
      );
    });
  }
});

const probe = await probeWebGPU();
afterAll(() => probe.backend?.destroy());

describeWebGPU(probe, "routine in random graphs on WebGPU equals the reference interpreter", (gpu) => {
  it("float32 (finite data: WGSL's division and square root may differ by an ulp or two)", async () => {
    for (let seed = 1; seed <= 3; seed++) {
      const c = randomRoutineCase(seed * 7919, "float32");
      const inputs = randomInputs(c);
      const expected = interpret(c.graph, inputs);
      const p = await Program.create(
        runPipeline(c.graph, { maxKernelBuffers: gpu.maxKernelBuffers, unrollLimit: 64 }).schedule,
        gpu,
      );
      const outs = p.run(
        inputs.map((v) => {
          const buffer = gpu.alloc(v.type.dtype, v.data.length);
          gpu.write(buffer, v.data);
          return { buffer, type: v.type };
        }),
      );
      for (const [i, o] of outs.entries()) {
        const err = closeEnough(await gpu.read(o.buffer), expected[i]!.data, 2e-3);
        if (err !== undefined) fail(seed, "float32 webgpu", err, c.graph);
      }
    }
  }, 120_000);
});
