/**
 * The `routine` op (looped matrix routines) in random graphs
 * (test/helpers/random-graph.ts, `randomRoutineCase`) through the whole pass
 * pipeline on JS, WebAssembly and WebGPU against the reference interpreter, with
 * special values (NaN, ±Inf, -0, extremes, empty dims) in the data on JS and wasm.
 */
import fc from "fast-check";
import { afterAll, describe, it } from "vitest";
import { WasmBackend } from "../../runtime/wasm/backend.js";
import { checkOnJs, checkOnWasm, checkOnWebGPU } from "../helpers/differential.js";
import { randomRoutineCase, seedArb } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";
import { describeIrText } from "../helpers/op-in-random-graphs.js";
import { describeWebGPU, probeWebGPU } from "../helpers/webgpu.js";

const TOL = { float64: 1e-9, float32: 1e-5 } as const;

describeIrText(
  "routine",
  "prints and parses back to the same text; a bad routine name is refused",
  (seed) => randomRoutineCase(seed, "float32").graph,
  () => randomRoutineCase(3, "float64").graph,
  [{ pattern: /name=\w+/, replacement: "name=qz", error: /name must be one of/ }],
);

describe("routine in random graphs equals the reference interpreter", () => {
  for (const family of ["float64", "float32"] as const) {
    it(`JS ${family}`, () => {
      fc.assert(
        fc.property(seedArb, fc.boolean(), (seed, specials) =>
          checkOnJs(randomRoutineCase(seed, family, { specials }), family, TOL[family]),
        ),
        { numRuns: 60, seed: FC_SEED },
      );
    });
  }

  const wasm = new WasmBackend();
  for (const family of ["float64", "float32"] as const) {
    it(`WebAssembly ${family}`, () => {
      fc.assert(
        fc.property(seedArb, fc.boolean(), (seed, specials) =>
          checkOnWasm(wasm, randomRoutineCase(seed, family, { specials }), family, TOL[family]),
        ),
        { numRuns: 30, seed: FC_SEED },
      );
    });
  }
});

const probe = await probeWebGPU();
afterAll(() => probe.backend?.destroy());

describeWebGPU(probe, "routine in random graphs on WebGPU equals the reference interpreter", (gpu) => {
  it("float32 (finite data: WGSL's division and square root may differ by an ulp or two)", async () => {
    for (let seed = 1; seed <= 3; seed++)
      await checkOnWebGPU(gpu, randomRoutineCase(seed * 7919, "float32"), "float32", 2e-3);
  }, 120_000);
});
