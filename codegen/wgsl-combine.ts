/**
 * Chunked reductions in WGSL: the combine passes that fold the partials a chunked
 * launch writes (one pass per `WGSL_COMBINE_CHUNK` factor), and what the backend
 * needs to allocate those partials. The passes are loop programs
 * (codegen/lower-workgroup.ts: `lowerCombine`, `lowerRowCombine`) printed by the
 * WGSL printer, with the reductions' rules of codegen/lower-loops.ts.
 *
 * A reduction whose space is too long for one bounded loop runs as a first pass over
 * `chunks` chunks per output element, each writing a partial at `element * chunks +
 * chunk`, then combine passes (codegen/gpu-plan.ts plans them and sizes the partials). Partials keep what the final value needs:
 * sum/prod/min/max/all/any their accumulator (in the output's storage type), mean its
 * sum (divided once, at the very end, by the whole count), argmin/argmax the pair
 * (best value as bits, position) at `2k, 2k + 1`. Combining pairs keeps the
 * sequential rule: a strictly better value wins, an equal one only from an earlier
 * position; the first NaN wins over any number.
 */
import type { Kernel } from "../ir/kernel.js";
import { lowerCombine, lowerRowCombine } from "./lower-workgroup.js";
import { loopToWGSL } from "./wgsl.js";

/**
 * The combine kernel of a reducing kernel: folds `P.v.y` partials per output element
 * into `P.v.z` partials, or, when `final`, into the outputs (see `lowerCombine`).
 */
export function combineToWGSL(kernel: Kernel, final: boolean): string {
  return loopToWGSL(lowerCombine(kernel, final));
}

/** The row-combine kernel of a segmented reduce over packed values (see `lowerRowCombine`). */
export function rowCombineToWGSL(kernel: Kernel): string {
  return loopToWGSL(lowerRowCombine(kernel));
}
