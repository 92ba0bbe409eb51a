/**
 * `take` in random graphs (test/helpers/random-graph.ts, `randomTakeCase`) through
 * the whole pass pipeline on JS, WebAssembly and WebGPU against the reference
 * interpreter: in-range, negative and out-of-range indices, broadcast batch dims,
 * with special values (NaN, ±Inf, -0, integer extremes, empty dims) in the data.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type { Graph } from "../../ir/graph.js";
import { parseGraph } from "../../ir/parse.js";
import { printGraph } from "../../ir/print.js";
import { checkOnWebGPU, describeRandomJsAndWasm } from "../helpers/differential.js";
import { randomTakeCase, seedArb } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";
import { describeWebGPU, probeWebGPU } from "../helpers/webgpu.js";

function hasTake(g: Graph): boolean {
  return printGraph(g).includes("take");
}

describe("take in IR text", () => {
  it("prints and parses back to the same text; bad attributes and types are refused by the type rule", () => {
    fc.assert(
      fc.property(seedArb, (seed) => {
        const text = printGraph(randomTakeCase(seed, "float32").graph);
        expect(printGraph(parseGraph(text))).toBe(text);
      }),
      { numRuns: 30, seed: FC_SEED },
    );
    const text = printGraph(randomTakeCase(7, "float32").graph);
    const bad = text.replace(/\{axis=\d+\}/, "{axis=9}");
    expect(bad).not.toBe(text);
    expect(() => parseGraph(bad)).toThrow(/take: base axis 9 is out of range/);
  });
});

describeRandomJsAndWasm("take", randomTakeCase, hasTake, { js: 60, wasm: 30 });

const probe = await probeWebGPU();
afterAll(() => probe.backend?.destroy());

describeWebGPU(probe, "take in random graphs on WebGPU equals the reference interpreter", (gpu) => {
  for (const family of ["float32", "int32", "uint32"] as const) {
    it(
      family,
      async () => {
        await fc.assert(
          fc.asyncProperty(seedArb, fc.boolean(), async (seed, specials) =>
            // Smooth float graphs: the GPU rounds transcendentals differently (see test/webgpu/graphs.test.ts).
            checkOnWebGPU(
              gpu,
              randomTakeCase(seed, family, { specials, smooth: true, steps: 2 }),
              family,
              family === "float32" ? 2e-4 : 0,
            ),
          ),
          { numRuns: 12, seed: FC_SEED },
        );
      },
      120_000,
    );
  }
});
