/**
 * Launch geometry of WGSL kernels: the uniform parameter layout, output counts,
 * workgroup counts and loop bounds. Shared by the code generator and the backend.
 */
import { launchRank, numel, type Kernel } from "../ir/kernel.js";

/** Invocations per workgroup (compatibility mode guarantees 128). */
export const WGSL_WORKGROUP_SIZE = 64;

/**
 * Where each run-time value sits in the u32 parameter array:
 * `[count, batchSizes..., strides of input 0..., strides of input 1..., ..., constants...]`,
 * where `count` is the number of output elements (invocations that do work).
 */
export interface WGSLParamLayout {
  readonly count: number;
  readonly batchSizes: number;
  readonly inputStrides: readonly number[];
  /**
   * First slot of the kernel's constants (`Launch.consts`, one slot each, in expr
   * order): the bits of the value in its dtype (f32, i32, u32; bool as 0/1), so
   * NaN, ±Inf and -0 arrive exactly and the source does not depend on them.
   */
  readonly consts: number;
  /** Number of u32 slots used; the uniform holds `ceil(length / 4)` vec4s. */
  readonly length: number;
}

export function wgslParamLayout(kernel: Kernel): WGSLParamLayout {
  // A pad/mask kernel padding to the longest row gets that length as a second batch size.
  let at = 1 + launchRank(kernel);
  const inputStrides = kernel.inputs.map((inp) => {
    const start = at;
    at += inp.batchRank;
    return start;
  });
  const consts = at;
  for (const e of kernel.exprs) if (e.k === "const") at++;
  return { count: 0, batchSizes: 1, inputStrides, consts, length: at };
}

/**
 * Whether a kernel runs as a workgroup tree reduction: one workgroup per output
 * element whose threads share the reduced elements (batch axes reduced, not segmented).
 * Other kernels run one invocation per output element.
 */
export function treeReduction(kernel: Kernel): boolean {
  return kernel.segment === undefined && kernel.reduce !== null && kernel.reduce.batchAxes.length > 0;
}

/**
 * The most loop iterations one invocation of a launch can run (an upper bound).
 * Some adapters cap loops (Mesa's llvmpipe stops after 65,535 iterations and says
 * nothing), so the backend checks this before dispatching. `packedRows` bounds a
 * segment's length (the packed input's length) for segmented kernels.
 */
export function wgslLoopTrips(kernel: Kernel, batchSizes: readonly number[], packedRows: number): number {
  const seg = kernel.segment;
  if (seg !== undefined) return seg.mode === "pad" ? (seg.maxN === -1 ? batchSizes[1]! : (seg.maxN ?? 0)) : packedRows;
  if (kernel.reduce === null) return 0;
  const reducedBase = numel(kernel.reduce.baseAxes.map((a) => kernel.baseShape[a]!));
  const reducedBatch = kernel.reduce.batchAxes.reduce((p, a) => p * batchSizes[a]!, 1);
  const total = reducedBase * reducedBatch;
  return treeReduction(kernel) ? Math.ceil(total / WGSL_WORKGROUP_SIZE) : total;
}

/** Workgroups a launch needs (before splitting over x and y): see `treeReduction`. */
export function wgslWorkgroups(kernel: Kernel, batchSizes: readonly number[]): number {
  const count = outputCount(kernel, batchSizes);
  return treeReduction(kernel) ? count : Math.ceil(count / WGSL_WORKGROUP_SIZE);
}

/** Number of output elements of a launch: kept batch sizes × kept base sizes. */
export function outputCount(kernel: Kernel, batchSizes: readonly number[]): number {
  // Segmented kernels: one invocation per row and base point (batchSizes[0] is the offsets' length).
  if (kernel.segment !== undefined) return Math.max(0, batchSizes[0]! - 1) * numel(kernel.baseShape);
  const reducedBatch = new Set(kernel.reduce?.batchAxes ?? []);
  const reducedBase = new Set(kernel.reduce?.baseAxes ?? []);
  let n = numel(kernel.baseShape.filter((_, a) => !reducedBase.has(a)));
  batchSizes.forEach((s, a) => {
    if (!reducedBatch.has(a)) n *= s;
  });
  return n;
}
