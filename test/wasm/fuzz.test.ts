/**
 * The fuzz on the WebAssembly backend: random graphs with NaN, ±Inf, -0, huge and tiny
 * magnitudes, integer extremes, empty and size-1 dims (the generator and the judging
 * rules of test/helpers/fuzz.ts), through the pass pipeline fused and op by op, against
 * the reference interpreter. float32 results are judged with the relaxed rule (within
 * 1e-4 of the float32 or the float64 evaluation: the vector math is within 2 ulp, not
 * correctly rounded); NaN, ±Inf, signed zeros, integers and float64 results exactly.
 * 600 graphs per run (BATCHWISE_FUZZ_RUNS scales it).
 */
import { describe, expect, it } from "vitest";
import { WasmBackend } from "../../runtime/wasm/backend.js";
import { familyOf, fuzzCount, judge, reference } from "../helpers/fuzz.js";
import { randomCase, randomInputs } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";
import { runOnWasm } from "../helpers/wasm-fuzz.js";

const wasm = new WasmBackend();

describe("wasm fuzz: random graphs with special values against the reference interpreter", () => {
  it(`${fuzzCount(600)} graphs × (fused, op-by-op)`, () => {
    const failures: string[] = [];
    const n = fuzzCount(600);
    for (let k = 0; k < n; k++) {
      const seed = (FC_SEED + 7919 * k) >>> 0;
      const c = randomCase(seed, familyOf(seed), { specials: true });
      const inputs = randomInputs(c);
      const ref = reference(c, inputs, true);
      for (const fusion of [true, false]) {
        const why = judge(c, ref, runOnWasm(wasm, c, inputs, { fusion, relaxedFloat32: false }), "relaxed");
        if (why !== undefined) failures.push(`seed ${seed} ${fusion ? "fused" : "op-by-op"}: ${why}`);
      }
    }
    expect(failures.slice(0, 10), `${failures.length} failures`).toEqual([]);
    expect(wasm.stats.launches).toBeGreaterThan(n);
  });
});
