/**
 * Kernel IR → loop form for the workgroup (GPU) target (docs/ARCHITECTURE.md,
 * Kernel forms). The launch structure is this target's: one invocation per output
 * element; kernels that reduce batch axes, and base reductions too long for one
 * loop, give each output element a workgroup whose threads share the reduced
 * elements and fold their accumulators in shared memory (`treeReduction`); no
 * invocation loops more than `WGSL_LOOP_BUDGET` times, so long reductions and rows
 * run in chunks whose partials combine passes fold (`lowerCombine`,
 * `lowerRowCombine`). Geometry (chunk sizes, uniform layout) comes from
 * codegen/wgsl-launch.ts; which passes a launch runs, from codegen/gpu-plan.ts. The
 * element expressions and the reductions' rules (start values, step, merge of
 * partials, final value) are the ones of codegen/lower-loops.ts, with float32
 * accumulation (WGSL has no float64).
 *
 * This file picks the lowering; each lives in codegen/workgroup/: the shared start
 * of a main pass (`kernel.ts`), elementwise, looped and tree reductions
 * (`reduce.ts`), segmented map, reduce and pad (`segment.ts`), scatter
 * (`scatter.ts`), the combine passes (`combine.ts`) and the partials they share
 * (`partials.ts`).
 */
import type { Kernel } from "../ir/kernel.js";
import { checkKernel } from "./lower-loops.js";
import type { LoopProgram } from "./loop.js";
import { lowerRoutineWorkgroup } from "./routines/lower.js";
import { workgroupKernel } from "./workgroup/kernel.js";
import { lowerElementwise, lowerLoopReduce, lowerTreeReduce } from "./workgroup/reduce.js";
import { lowerScatterWorkgroup } from "./workgroup/scatter.js";
import { lowerSegmentMap, lowerSegmentPad, lowerSegmentReduce } from "./workgroup/segment.js";

export { combineReadsOffsets, lowerCombine, lowerRowCombine } from "./workgroup/combine.js";
export { partialDType, partialOuts, WORKGROUP_TARGET, type PartialOut } from "./workgroup/partials.js";

/** Lowers a kernel for the workgroup target (the main pass of its launch). */
export function lowerKernelWorkgroup(k: Kernel): LoopProgram {
  if (k.scatter !== undefined) return lowerScatterWorkgroup(k);
  // Looped matrix routines: one invocation per batch element (codegen/routines/).
  if (k.routine !== undefined) return lowerRoutineWorkgroup(k);
  checkKernel(k);
  const w = workgroupKernel(k);
  const mode = k.segment?.mode;
  if (mode === "map") lowerSegmentMap(w);
  else if (mode === "reduce") lowerSegmentReduce(w);
  else if (mode !== undefined) lowerSegmentPad(w);
  else if (k.reduce === null) lowerElementwise(w);
  else if (w.tree) lowerTreeReduce(w);
  else lowerLoopReduce(w);
  return w.finish();
}
