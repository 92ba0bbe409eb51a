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
import { parseGraph } from "../../ir/parse.js";
import { printGraph } from "../../ir/print.js";
import { scatterPasses } from "../../codegen/wgsl-launch.js";
import type { Schedule } from "../../ir/schedule.js";
import { checkOnWebGPU, describeRandomJsAndWasm } from "../helpers/differential.js";
import { randomScatterCase, seedArb } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";
import { describeWebGPU, probeWebGPU } from "../helpers/webgpu.js";

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

describeRandomJsAndWasm("scatter", randomScatterCase, hasScatter, { js: 50, wasm: 30 });

const probe = await probeWebGPU();
afterAll(() => probe.backend?.destroy());

// A scatter kernel dispatches its copy pass and then its update passes.
const scatterDispatches = (s: Schedule): number =>
  s.steps
    .map((st) => (st.kind !== "kernel" ? 0 : st.kernel.scatter !== undefined ? 1 + scatterPasses(st.kernel) : 1))
    .reduce((a, b) => a + b, 0);

describeWebGPU(probe, "scatter in random graphs on WebGPU equals the reference interpreter", (gpu) => {
  for (const family of ["float32", "int32", "uint32"] as const) {
    it(
      family,
      async () => {
        await fc.assert(
          fc.asyncProperty(seedArb, fc.boolean(), async (seed, specials) =>
            // Smooth float graphs: the GPU rounds transcendentals differently (see test/webgpu/graphs.test.ts).
            checkOnWebGPU(
              gpu,
              randomScatterCase(seed, family, { specials, smooth: true, steps: 2 }),
              family,
              family === "float32" ? 2e-4 : 0,
              scatterDispatches,
            ),
          ),
          { numRuns: 10, seed: FC_SEED },
        );
      },
      120_000,
    );
  }
});
