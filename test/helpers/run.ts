/** Runs a graph through the pass pipeline and the JS backend, the way jit does. */
import type { Graph } from "../../ir/graph.js";
import type { Value } from "../../ir/interpret.js";
import { runPipeline } from "../../passes/pipeline.js";
import { JsBackend } from "../../runtime/js.js";
import { Program } from "../../runtime/program.js";

export const js = new JsBackend();

export function compileJs(g: Graph, unrollLimit = 64, maxKernelBuffers = Infinity, relaxedFloat32 = false): Program {
  const p = Program.create(
    runPipeline(g, { maxKernelBuffers, unrollLimit, mixedBaseOutputs: true, relaxedFloat32 }).schedule,
    js,
  );
  if (p instanceof Promise) throw new Error("the JS backend compiles synchronously");
  return p;
}

export function runJs(p: Program, inputs: readonly Value[]): Value[] {
  const outs = p.run(inputs.map((v) => ({ buffer: js.wrap(v.type.dtype, v.data.slice()), type: v.type })));
  return outs.map((o) => ({ type: o.type, data: js.readSync(o.buffer) }));
}

/** Seed for fast-check: fixed in CI for reproducibility, overridable with FC_SEED. */
export const FC_SEED = Number(process.env.FC_SEED ?? 20261130);
