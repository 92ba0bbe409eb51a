/**
 * `scatter` in random graphs (test/helpers/random-graph.ts, `randomScatterCase`)
 * through the whole pass pipeline on JS, WebAssembly and WebGPU against the
 * reference interpreter: every mode, duplicate, negative and out-of-range indices
 * (indices in [-5, 5] on small axes), broadcast batch and base dims of the updates,
 * with special values (NaN, ±Inf, -0, integer extremes, empty dims) in the data.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { Graph } from "../../ir/graph.js";
import { interpret } from "../../ir/interpret.js";
import { parseGraph } from "../../ir/parse.js";
import { printGraph } from "../../ir/print.js";
import { scatterPasses } from "../../codegen/wgsl-launch.js";
import { runPipeline } from "../../passes/pipeline.js";
import { Program } from "../../runtime/program.js";
import { counters } from "../../runtime/stats.js";
import { WasmBackend } from "../../runtime/wasm/backend.js";
import { closeEnough, randomInputs, randomScatterCase, seedArb, type Family } from "../helpers/random-graph.js";
import { compileJs, FC_SEED, runJs } from "../helpers/run.js";
import { describeWebGPU, probeWebGPU } from "../helpers/webgpu.js";

const TOL: Record<Family, number> = { float64: 1e-9, float32: 1e-5, int32: 0, uint32: 0 };
const FAMILIES: readonly Family[] = ["float64", "float32", "int32", "uint32"];

function fail(seed: number, where: string, err: string, g: Graph): never {
  throw new Error(`seed ${seed} (${where}): ${err}\n${printGraph(g)}`);
}

function hasScatter(g: Graph): boolean {
  return printGraph(g).includes("scatter");
}

describe("scatter in IR text", () => {
  it("prints and parses back to the same text; bad attributes and types are refused by the type rule", () => {
    fc.assert(
      fc.property(seedArb, (seed) => {
        const text = printGraph(randomScatterCase(seed, "float32").graph);
        expect(printGraph(parseGraph(text))).toBe(text);
      }),
      { numRuns: 30, seed: FC_SEED },
    );
    const text = printGraph(randomScatterCase(7, "float32").graph);
    const bad = text.replace(/\{axis=\d+,/, "{axis=9,");
    expect(bad).not.toBe(text);
    expect(() => parseGraph(bad)).toThrow(/scatter: base axis 9 is out of range/);
    const badMode = text.replace(/mode=[a-z]+/, "mode=sub");
    expect(badMode).not.toBe(text);
    expect(() => parseGraph(badMode)).toThrow(/mode/);
  });
});

describe("scatter in random graphs on JS equals the reference interpreter", () => {
  for (const family of FAMILIES) {
    it(family, () => {
      fc.assert(
        fc.property(seedArb, fc.boolean(), fc.boolean(), (seed, unroll, specials) => {
          const c = randomScatterCase(seed, family, { specials });
          expect(hasScatter(c.graph)).toBe(true);
          const inputs = randomInputs(c);
          const expected = interpret(c.graph, inputs);
          const program = compileJs(c.graph, unroll ? 64 : 0);
          const before = counters.dispatches;
          const actual = runJs(program, inputs);
          expect(counters.dispatches - before).toBe(program.schedule.steps.filter((s) => s.kind === "kernel").length);
          actual.forEach((a, i) => {
            expect(a.type).toEqual(expected[i]!.type);
            const err = closeEnough(a.data, expected[i]!.data, TOL[family]);
            if (err !== undefined) fail(seed, `${family} js`, err, c.graph);
          });
        }),
        { numRuns: 50, seed: FC_SEED },
      );
    });
  }
});

describe("scatter in random graphs on WebAssembly equals the reference interpreter", () => {
  const wasm = new WasmBackend();
  for (const family of FAMILIES) {
    it(family, () => {
      fc.assert(
        fc.property(seedArb, fc.boolean(), fc.boolean(), (seed, unroll, specials) => {
          const c = randomScatterCase(seed, family, { specials });
          const inputs = randomInputs(c);
          const expected = interpret(c.graph, inputs);
          const p = Program.create(
            runPipeline(c.graph, { maxKernelBuffers: Infinity, unrollLimit: unroll ? 64 : 0, mixedBaseOutputs: true })
              .schedule,
            wasm,
          );
          if (p instanceof Promise) throw new Error("the wasm backend compiles synchronously");
          const before = wasm.stats.launches;
          const outs = p.run(inputs.map((v) => ({ buffer: wasm.wrap(v.type.dtype, v.data.slice()), type: v.type })));
          expect(wasm.stats.launches - before).toBe(p.schedule.steps.filter((s) => s.kind === "kernel").length);
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

describeWebGPU(probe, "scatter in random graphs on WebGPU equals the reference interpreter", (gpu) => {
  for (const family of ["float32", "int32", "uint32"] as const) {
    it(
      family,
      async () => {
        await fc.assert(
          fc.asyncProperty(seedArb, fc.boolean(), async (seed, specials) => {
            // Smooth float graphs: the GPU rounds transcendentals differently (see test/webgpu/graphs.test.ts).
            const c = randomScatterCase(seed, family, { specials, smooth: true, steps: 2 });
            const inputs = randomInputs(c);
            const expected = interpret(c.graph, inputs);
            const { schedule } = runPipeline(c.graph, { maxKernelBuffers: gpu.maxKernelBuffers, unrollLimit: 64 });
            const program = await Program.create(schedule, gpu);
            const bufs = inputs.map((v) => {
              const b = gpu.alloc(v.type.dtype, v.data.length);
              gpu.write(b, v.data);
              return { buffer: b, type: v.type };
            });
            const before = gpu.stats.dispatches;
            const outs = program.run(bufs);
            // Empty launches dispatch nothing; a non-empty result proves the WGSL path ran.
            // A scatter kernel dispatches its copy pass and then its update passes.
            const kernels = schedule.steps
              .map((s) => (s.kind !== "kernel" ? 0 : s.kernel.scatter !== undefined ? 1 + scatterPasses(s.kernel) : 1))
              .reduce((a, b) => a + b, 0);
            if (expected.every((v) => v.data.length > 0)) expect(gpu.stats.dispatches - before).toBeGreaterThan(0);
            expect(gpu.stats.dispatches - before).toBeLessThanOrEqual(kernels);
            for (let i = 0; i < outs.length; i++) {
              const data = await gpu.read(outs[i]!.buffer);
              const err = closeEnough(data, expected[i]!.data, family === "float32" ? 2e-4 : 0);
              if (err !== undefined) fail(seed, `${family} webgpu`, err, c.graph);
            }
          }),
          { numRuns: 10, seed: FC_SEED },
        );
      },
      120_000,
    );
  }
});
