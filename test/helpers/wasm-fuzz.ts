/** A random case run on the WebAssembly backend as the wasm fuzzers run it. */
import type { Value } from "../../ir/interpret.js";
import { runPipeline } from "../../passes/pipeline.js";
import { Program } from "../../runtime/program.js";
import type { WasmBackend } from "../../runtime/wasm/backend.js";
import type { Outcome } from "./fuzz.js";
import type { RandomCase } from "./random-graph.js";

/**
 * `c` through the pass pipeline (no buffer limit; unrolled to 64 but for every third
 * seed; mixed base outputs) with `fusion` and `relaxedFloat32` as given, run on `wasm`
 * over copies of `inputs`: its outputs read back (and freed), or the error thrown.
 */
export function runOnWasm(
  wasm: WasmBackend,
  c: RandomCase,
  inputs: readonly Value[],
  opts: { readonly fusion: boolean; readonly relaxedFloat32: boolean },
): Outcome {
  try {
    const schedule = runPipeline(c.graph, {
      maxKernelBuffers: Infinity,
      unrollLimit: c.seed % 3 === 0 ? 0 : 64,
      fusion: opts.fusion,
      mixedBaseOutputs: true,
      relaxedFloat32: opts.relaxedFloat32,
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
