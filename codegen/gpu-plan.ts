/**
 * GPU pass planning (docs/ARCHITECTURE.md, Backends): a pure function from a kernel and
 * its launch to the ordered passes the WebGPU backend dispatches. Each pass names its
 * program (the kernel's main pass, a combine pass, the row-combine pass), its whole
 * uniform, its workgroup count and the buffers it reads and writes (the launch's inputs
 * and outputs, or scratch buffers of partials the plan sizes). The backend only creates
 * the buffers, binds them in the order given (reads, then writes) and dispatches; the
 * loop-form interpreter runs the same plan without a GPU (codegen/loop-interpret.ts).
 *
 * The passes: a scatter kernel runs its copy pass, then its update passes in order
 * (`scatterPasses`). A reduction whose launch is cut into chunks (`wgslLaunchPlan`)
 * writes partials, folded by combine passes (`WGSL_COMBINE_CHUNK` partials per
 * workgroup and pass) until the final one writes the outputs. A segmented reduce over
 * packed values with long rows runs the rows pass, the windows pass (the same
 * program, `chunks` = 2) and the row-combine pass (two when a row has more than
 * `WGSL_ROW_COMBINE_CHUNK` chunk partials). Every other kernel is one pass.
 */
import { isNarrowInt, type DType } from "../ir/dtype.js";
import { BackendError } from "../ir/errors.js";
import { kernelConsts, numel, type Kernel, type Launch } from "../ir/kernel.js";
import { isPositional } from "../ir/reductions.js";
import { combineReadsOffsets, partialDType, partialOuts, type PartialOut } from "./lower-workgroup.js";
import {
  WGSL_COMBINE_CHUNK,
  WGSL_WORKGROUP_SIZE,
  outputCount,
  reducedCount,
  scatterPasses,
  segmentRowBound,
  treeReduction,
  wgslLaunchPlan,
  wgslParamLayout,
} from "./wgsl-launch.js";

/**
 * The program a pass runs: the kernel's own (`lowerKernelWorkgroup`), a combine pass
 * folding partials into partials or (`combine-final`) into the outputs (`lowerCombine`),
 * or the row-combine pass (`lowerRowCombine`).
 */
export type GpuProgram = "main" | "combine" | "combine-final" | "row-combine";

/** A buffer a pass binds: input `i` or output `j` of the launch, or scratch buffer `s` of the plan. */
export type GpuBuffer =
  | { readonly k: "input"; readonly i: number }
  | { readonly k: "output"; readonly j: number }
  | { readonly k: "scratch"; readonly s: number };

/** A scratch buffer of partials: its element dtype and length (elements; 4 bytes each on the device). */
export interface GpuScratch {
  readonly dtype: DType;
  readonly length: number;
}

/** One dispatch. Its program's bindings are `reads` (inputs) then `writes` (outputs), after the uniform. */
export interface GpuPass {
  readonly program: GpuProgram;
  /** The whole uniform (u32 slots; a multiple of 4). */
  readonly params: Uint32Array<ArrayBuffer>;
  /** Workgroups (before splitting over x and y). */
  readonly workgroups: number;
  readonly reads: readonly GpuBuffer[];
  readonly writes: readonly GpuBuffer[];
}

export interface GpuPlan {
  /** Output elements of the launch (`outputCount`). */
  readonly count: number;
  /** Chunks per output element of the main pass (see `wgslLaunchPlan`). */
  readonly chunks: number;
  /** Indices the main pass counts in u32: workgroups for a tree reduction, else invocations. */
  readonly indexed: number;
  readonly scratch: readonly GpuScratch[];
  /** In dispatch order; empty when the launch has nothing to do (no output elements, or all rows empty). */
  readonly passes: readonly GpuPass[];
}

/** What the plan needs of the launch's buffers: their lengths in elements. */
export interface GpuBufferLengths {
  readonly inputs: readonly number[];
  readonly outputs: readonly number[];
}

/**
 * Whether the main pass cuts its long loop into the `chunks` parameter's chunks (tree
 * reductions and segmented kernels): WGSL of such a kernel written before chunking
 * existed must not run (it would loop unbounded and write finals where partials go).
 */
export function mainReadsChunks(kernel: Kernel): boolean {
  return treeReduction(kernel) || kernel.segment !== undefined;
}

/** Elements of the scratch buffer holding an output's partials for `count` elements × `chunks`. */
export function partialLength(o: PartialOut, count: number, chunks: number): number {
  return count * chunks * (isPositional(o.op) ? 2 : 1);
}

function u32(v: number, what: string): number {
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff)
    throw new BackendError(`webgpu: dispatch: ${what} ${v} is not a u32`);
  return v;
}

/**
 * Writes a kernel's constants into the uniform at `at` (one u32 slot each, in expr
 * order): the bits of the value in its dtype, so NaN, ±Inf and -0 arrive exactly.
 */
function writeConsts(kernel: Kernel, given: Float64Array | undefined, params: Uint32Array, at: number): void {
  // A direct dispatch without constants runs with the values of the compiled kernel's own IR.
  const consts = given ?? kernelConsts(kernel);
  let slot = 0;
  const f32 = new Float32Array(params.buffer);
  const i32 = new Int32Array(params.buffer);
  for (const e of kernel.exprs) {
    if (e.k !== "const") continue;
    const v = consts[slot];
    if (v === undefined)
      throw new BackendError(`webgpu: dispatch: the kernel has more constants than the ${consts.length} passed`);
    const i = at + slot++;
    if (e.dtype === "float32" || e.dtype === "float16") f32[i] = v;
    else if (e.dtype === "int32" || isNarrowInt(e.dtype)) i32[i] = v;
    else if (e.dtype === "bool") params[i] = v !== 0 ? 1 : 0;
    else params[i] = v;
  }
}

/**
 * The main pass's uniform before chunking (see `wgslParamLayout`): the output element
 * count, the batch sizes, each input's batch strides (as many as its batch rank, of
 * those given) and the constants' bits. A value that is not a u32 is a BackendError.
 */
export function wgslUniform(kernel: Kernel, launch: Launch): Uint32Array<ArrayBuffer> {
  const layout = wgslParamLayout(kernel);
  const params = new Uint32Array(Math.max(1, Math.ceil(layout.length / 4)) * 4);
  params[layout.count] = u32(outputCount(kernel, launch.batchSizes), "output element count");
  launch.batchSizes.forEach((n, a) => (params[layout.batchSizes + a] = u32(n, `batch size ${a}`)));
  writeConsts(kernel, launch.consts, params, layout.consts);
  kernel.inputs.forEach((spec, i) =>
    (launch.inputBatchStrides[i] ?? [])
      .slice(0, spec.batchRank)
      .forEach((st, j) => (params[layout.inputStrides[i]! + j] = u32(st, `input ${i} batch stride ${j}`))),
  );
  return params;
}

/**
 * The longest row a segmented kernel's loop may walk, from what the host knows: the
 * packed inputs' lengths, a map kernel's output length (it writes every position), or
 * for a reduce kernel reading only right-padded inputs their padded length M (past it
 * the body is the same and folded in closed form, see `segmentRowBound`).
 */
export function rowBound(kernel: Kernel, lengths: GpuBufferLengths, strides: Launch["inputBatchStrides"]): number {
  const seg = kernel.segment;
  if (seg === undefined || seg.mode === "pad") return 0;
  let rows = 0;
  kernel.inputs.forEach((inp, i) => {
    if (inp.packed === true) rows = Math.max(rows, Math.ceil(lengths.inputs[i]! / Math.max(1, numel(inp.baseShape))));
  });
  // A map writes every packed position: its output has exactly the packed rows.
  if (seg.mode === "map")
    return numel(kernel.baseShape) === 0 ? 0 : Math.floor(lengths.outputs[0]! / numel(kernel.baseShape));
  const bound = segmentRowBound(kernel);
  if (bound === "none") return 0;
  if (bound === "packed") return rows;
  kernel.inputs.forEach((inp, i) => {
    const [s0, s1] = strides[i] ?? [];
    if (inp.padded === true && s0 !== undefined && s1 !== undefined && s1 > 0)
      rows = Math.max(rows, Math.floor(s0 / s1));
  });
  return rows;
}

const W = WGSL_WORKGROUP_SIZE;
const groupsFor = (invocations: number): number => Math.ceil(invocations / W);

/**
 * The passes of one launch of `kernel` (see the module comment). Long loops are cut
 * into chunks (see `wgslLaunchPlan`): no invocation loops more than `WGSL_LOOP_BUDGET`
 * times, on any adapter; a reduction in chunks writes partials that combine passes
 * fold into the outputs.
 */
export function planGpuLaunch(kernel: Kernel, launch: Launch, lengths: GpuBufferLengths): GpuPlan {
  const { batchSizes } = launch;
  const count = outputCount(kernel, batchSizes);
  const layout = wgslParamLayout(kernel);
  const params = wgslUniform(kernel, launch);
  const plan = wgslLaunchPlan(kernel, batchSizes, rowBound(kernel, lengths, launch.inputBatchStrides));
  // The kernel indexes (element, chunk) pairs in u32: by workgroup for a tree, else by invocation.
  const indexed = treeReduction(kernel) ? plan.workgroups : plan.workgroups * W;
  const scratch: GpuScratch[] = [];
  const passes: GpuPass[] = [];
  const result: GpuPlan = { count, chunks: plan.chunks, indexed, scratch, passes };
  // No output elements, or e.g. a map over rows that are all empty: nothing to dispatch.
  if (count === 0 || plan.workgroups === 0) return result;
  params[layout.count] = plan.count;
  params[layout.chunks] = plan.chunks;

  const ins: GpuBuffer[] = kernel.inputs.map((_, i) => ({ k: "input", i }));
  const outs: GpuBuffer[] = kernel.outputs.map((_, j) => ({ k: "output", j }));
  const partialsOf = plan.partial || plan.windows > 0 ? partialOuts(kernel) : [];
  /** Scratch buffers for `n` elements × `chunks` partials of each output. */
  const scratchFor = (n: number, chunks: number): GpuBuffer[] =>
    partialsOf.map((o) => {
      scratch.push({ dtype: partialDType(o), length: partialLength(o, n, chunks) });
      return { k: "scratch", s: scratch.length - 1 };
    });
  const offsets = kernel.segment !== undefined ? [ins[kernel.segment.offsets]!] : [];
  const pass = (
    program: GpuProgram,
    values: Uint32Array<ArrayBuffer>,
    reads: readonly GpuBuffer[],
    writes: readonly GpuBuffer[],
    workgroups: number,
  ): void => {
    passes.push({ program, params: values, workgroups, reads, writes });
  };
  /** The main program's uniform with `count` and `chunks` replaced. */
  const mainParams = (n: number, chunks: number): Uint32Array<ArrayBuffer> => {
    const v = params.slice();
    v[layout.count] = n;
    v[layout.chunks] = chunks;
    return v;
  };

  if (kernel.scatter !== undefined) {
    // The copy pass (an invocation per output element), then the update passes in order
    // (an invocation per batch element, WGSL_SCATTER_CHUNK positions each).
    const elements = count / numel(kernel.baseShape);
    pass("main", mainParams(count, 0), ins, outs, groupsFor(count));
    const updates = scatterPasses(kernel);
    for (let p = 1; p <= updates; p++) pass("main", mainParams(elements, p), ins, outs, groupsFor(elements));
    return result;
  }
  if (!plan.partial) pass("main", params, ins, outs, plan.workgroups);
  else {
    let partials = scratchFor(count, plan.chunks);
    pass("main", params, ins, partials, plan.workgroups);
    // Combine passes folding `gin` partials per output element, until one writes the outputs.
    const readsOffsets = combineReadsOffsets(kernel);
    const rn = kernel.segment === undefined ? reducedCount(kernel, batchSizes) : 0;
    for (let gin = plan.chunks; ;) {
      const gout = Math.ceil(gin / WGSL_COMBINE_CHUNK);
      const final = gout === 1;
      const next = final ? outs : scratchFor(count, gout);
      pass(
        final ? "combine-final" : "combine",
        Uint32Array.of(count, gin, gout, rn >>> 0),
        [...partials, ...(final && readsOffsets ? offsets : [])],
        next,
        count * gout,
      );
      if (final) break;
      partials = next;
      gin = gout;
    }
  }
  if (plan.windows > 0) {
    // Long rows of a segmented reduce: the windows pass (the same kernel), then the row-combine pass.
    const S = Math.max(1, numel(kernel.baseShape));
    const slots = plan.windows * 2 * S;
    const windowPartials = scratchFor(slots, 1);
    pass("main", mainParams(slots, 2), ins, windowPartials, groupsFor(slots));
    const parts = plan.rowChunks;
    const rowPartials = parts > 1 ? scratchFor(count, parts) : outs;
    pass(
      "row-combine",
      Uint32Array.of(count, parts, 0, 0),
      [...windowPartials, ...offsets],
      rowPartials,
      groupsFor(count * parts),
    );
    if (parts > 1)
      pass("row-combine", Uint32Array.of(count, parts, 1, 0), [...rowPartials, ...offsets], outs, groupsFor(count));
  }
  return result;
}
