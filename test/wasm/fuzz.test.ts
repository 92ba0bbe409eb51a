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
import type { Value } from "../../ir/interpret.js";
import { runPipeline } from "../../passes/pipeline.js";
import { Program } from "../../runtime/program.js";
import { WasmBackend } from "../../runtime/wasm/backend.js";
import { familyOf, fuzzCount, judge, reference, type Outcome } from "../helpers/fuzz.js";
import { randomCase, randomInputs, type RandomCase } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";

const wasm = new WasmBackend();

function run(c: RandomCase, inputs: readonly Value[], fusion: boolean): Outcome {
  try {
    const schedule = runPipeline(c.graph, {
      maxKernelBuffers: Infinity,
      unrollLimit: c.seed % 3 === 0 ? 0 : 64,
      fusion,
      mixedBaseOutputs: true,
      relaxedFloat32: false,
    }).schedule;
    const p = Program.create(schedule, wasm) as Program;
    const outs = p.run(inputs.map((v) => ({ buffer: wasm.wrap(v.type.dtype, v.data.slice()), type: v.type })));
    const values = outs.map((o) => ({ type: o.type, data: wasm.readSync(o.buffer) }));
    for (const o of outs) wasm.free(o.buffer);
    return { values };
  } catch (error) {
    return { error };
  }
}

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
        const why = judge(c, ref, run(c, inputs, fusion), "relaxed");
        if (why !== undefined) failures.push(`seed ${seed} ${fusion ? "fused" : "op-by-op"}: ${why}`);
      }
    }
    expect(failures.slice(0, 10), `${failures.length} failures`).toEqual([]);
    expect(wasm.stats.launches).toBeGreaterThan(n);
  });
});
