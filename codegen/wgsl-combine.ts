/**
 * Chunked reductions in WGSL: the combine passes that fold the partials a chunked
 * launch writes (one pass per `WGSL_COMBINE_CHUNK` factor), and what the backend
 * needs to allocate those partials. The passes are loop programs
 * (codegen/lower-workgroup.ts: `lowerCombine`, `lowerRowCombine`) printed by the
 * WGSL printer, with the reductions' rules of codegen/lower-loops.ts.
 *
 * A reduction whose space is too long for one bounded loop runs as a first pass over
 * `chunks` chunks per output element, each writing a partial at `element * chunks +
 * chunk`, then combine passes. Partials keep what the final value needs:
 * sum/prod/min/max/all/any their accumulator (in the output's storage type), mean its
 * sum (divided once, at the very end, by the whole count), argmin/argmax the pair
 * (best value as bits, position) at `2k, 2k + 1`. Combining pairs keeps the
 * sequential rule: a strictly better value wins, an equal one only from an earlier
 * position; the first NaN wins over any number.
 */
import type { KReduceOp, Kernel } from "../ir/kernel.js";
import { isPositional } from "../ir/reductions.js";
import { lowerCombine, lowerRowCombine, partialOuts } from "./lower-workgroup.js";
import { loopToWGSL } from "./wgsl.js";

export { combineReadsOffsets } from "./lower-workgroup.js";

/** What a chunked launch keeps per output: its reduce op. */
export interface TreeOut {
  readonly op: KReduceOp;
}

/** The partial description of each output of a reducing kernel. */
export function treeOuts(kernel: Kernel): TreeOut[] {
  return partialOuts(kernel);
}

/** Elements of the scratch buffer holding an output's partials for `count` elements × `chunks`. */
export function partialLength(o: TreeOut, count: number, chunks: number): number {
  return count * chunks * (isPositional(o.op) ? 2 : 1);
}

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
