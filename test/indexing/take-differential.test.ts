/**
 * `take` in random graphs (test/helpers/random-graph.ts, `randomTakeCase`) through
 * the whole pass pipeline on JS, WebAssembly and WebGPU against the reference
 * interpreter: in-range, negative and out-of-range indices, broadcast batch dims,
 * with special values (NaN, ±Inf, -0, integer extremes, empty dims) in the data.
 */
import { afterAll } from "vitest";
import { describeRandomJsAndWasm } from "../helpers/differential.js";
import { describeIrText, describeRandomOnWebGPU, graphHas } from "../helpers/op-in-random-graphs.js";
import { randomTakeCase } from "../helpers/random-graph.js";
import { probeWebGPU } from "../helpers/webgpu.js";

describeIrText(
  "take",
  "prints and parses back to the same text; bad attributes and types are refused by the type rule",
  (seed) => randomTakeCase(seed, "float32").graph,
  () => randomTakeCase(7, "float32").graph,
  [{ pattern: /\{axis=\d+\}/, replacement: "{axis=9}", error: /take: base axis 9 is out of range/ }],
);

describeRandomJsAndWasm("take", randomTakeCase, graphHas("take"), { js: 60, wasm: 30 });

const probe = await probeWebGPU();
afterAll(() => probe.backend?.destroy());

describeRandomOnWebGPU(probe, "take", randomTakeCase, 12);
