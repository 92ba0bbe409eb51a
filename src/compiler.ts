/**
 * The compiler of the full library, installed into the parts that
 * `batchwise/runtime` shares with it: the eager path's pass pipeline
 * (src/realize.ts) and the JS backend's kernel generator (runtime/js-host.ts).
 * `batchwise` (src/index.ts) and `jit` install it; the runtime entry never
 * imports this file, so its pages carry no passes, no code generators and no `eval`.
 */
import { runPipeline } from "../passes/pipeline.js";
import { fuseOptionsFor } from "../runtime/fuse-options.js";
import { JS_KERNEL_COMPILER } from "../runtime/js.js";
import { installTensorOps } from "./api/tensor-ops.js";
import { getJsBackend } from "./backend.js";
import { setEagerScheduler } from "./realize.js";

let installed = false;

export function installCompiler(): void {
  if (installed) return;
  installed = true;
  setEagerScheduler((graph, backend) => runPipeline(graph, fuseOptionsFor(backend)).schedule);
  getJsBackend().useCompiler(JS_KERNEL_COMPILER);
  // The eager Tensor operations (add, sum, reshape, …) record nodes that only the compiler runs.
  installTensorOps();
}
