/** Hand-made kernels for the backend tests (any backend: type-only imports). */
import type { DType } from "../../ir/dtype.js";
import type { KExpr, Kernel } from "../../ir/kernel.js";

/**
 * A kernel over one batch dim of scalars (batch rank 1, base shape [], no reduction):
 * an input of each dtype in `inputs`, then `exprs` and `outputs` as given; `unroll` as given (default false).
 */
export function scalarBatchKernel(
  inputs: readonly DType[],
  exprs: KExpr[],
  outputs: Kernel["outputs"],
  unroll = false,
): Kernel {
  return {
    batchRank: 1,
    baseShape: [],
    reduce: null,
    unroll,
    inputs: inputs.map((dtype) => ({ dtype, batchRank: 1, baseShape: [] })),
    exprs,
    outputs,
  };
}
