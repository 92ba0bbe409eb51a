/**
 * `scatter` in random graphs (test/helpers/random-graph.ts, `randomScatterCase`)
 * through the whole pass pipeline on JS, WebAssembly and WebGPU against the
 * reference interpreter: every mode, duplicate, negative and out-of-range indices
 * (indices in [-5, 5] on small axes), broadcast batch and base dims of the updates,
 * with special values (NaN, ±Inf, -0, integer extremes, empty dims) in the data.
 */
import { afterAll } from "vitest";
import { scatterPasses } from "../../codegen/wgsl-launch.js";
import type { Schedule } from "../../ir/schedule.js";
import { describeRandomJsAndWasm } from "../helpers/differential.js";
import { describeIrText, describeRandomOnWebGPU, graphHas } from "../helpers/op-in-random-graphs.js";
import { randomScatterCase } from "../helpers/random-graph.js";
import { probeWebGPU } from "../helpers/webgpu.js";

describeIrText(
  "scatter",
  "prints and parses back to the same text; bad attributes and types are refused by the type rule",
  (seed) => randomScatterCase(seed, "float32").graph,
  () => randomScatterCase(7, "float32").graph,
  [
    { pattern: /\{axis=\d+,/, replacement: "{axis=9,", error: /scatter: base axis 9 is out of range/ },
    { pattern: /mode=[a-z]+/, replacement: "mode=sub", error: /mode/ },
  ],
);

describeRandomJsAndWasm("scatter", randomScatterCase, graphHas("scatter"), { js: 50, wasm: 30 });

const probe = await probeWebGPU();
afterAll(() => probe.backend?.destroy());

// A scatter kernel dispatches its copy pass and then its update passes.
const scatterDispatches = (s: Schedule): number =>
  s.steps
    .map((st) => (st.kind !== "kernel" ? 0 : st.kernel.scatter !== undefined ? 1 + scatterPasses(st.kernel) : 1))
    .reduce((a, b) => a + b, 0);

describeRandomOnWebGPU(probe, "scatter", randomScatterCase, 10, scatterDispatches);
