/**
 * `take` in random graphs (test/helpers/random-graph.ts, `randomTakeCase`) through
 * the whole pass pipeline on JS, WebAssembly and WebGPU against the reference
 * interpreter: in-range, negative and out-of-range indices, broadcast batch dims,
 * with special values (NaN, ±Inf, -0, integer extremes, empty dims) in the data.
 */
import { afterAll, describe, it } from "vitest";
import type { Graph } from "../../ir/graph.js";
import { printGraph } from "../../ir/print.js";
import { describeRandomJsAndWasm } from "../helpers/differential.js";
import { describeRandomOnWebGPU, expectEditRefused, expectTextRoundTrips } from "../helpers/op-in-random-graphs.js";
import { randomTakeCase } from "../helpers/random-graph.js";
import { probeWebGPU } from "../helpers/webgpu.js";

function hasTake(g: Graph): boolean {
  return printGraph(g).includes("take");
}

describe("take in IR text", () => {
  it("prints and parses back to the same text; bad attributes and types are refused by the type rule", () => {
    expectTextRoundTrips((seed) => randomTakeCase(seed, "float32").graph);
    const text = printGraph(randomTakeCase(7, "float32").graph);
    expectEditRefused(text, /\{axis=\d+\}/, "{axis=9}", /take: base axis 9 is out of range/);
  });
});

describeRandomJsAndWasm("take", randomTakeCase, hasTake, { js: 60, wasm: 30 });

const probe = await probeWebGPU();
afterAll(() => probe.backend?.destroy());

describeRandomOnWebGPU(probe, "take", randomTakeCase, 12);
