/**
 * Launch geometry of WGSL kernels: the uniform parameter layout, output counts,
 * workgroup counts, chunking and loop bounds. Shared by the code generator and the backend.
 */
import { launchRank, numel, type Kernel } from "../ir/kernel.js";

/** Invocations per workgroup (compatibility mode guarantees 128). */
export const WGSL_WORKGROUP_SIZE = 64;

/**
 * Where each run-time value sits in the u32 parameter array:
 * `[count, batchSizes..., strides of input 0..., strides of input 1..., ..., constants..., chunks]`,
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
  /** Chunks per output element: tree reductions and segmented kernels split long loops over this many. */
  readonly chunks: number;
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
  // The chunk count (see `wgslLaunchPlan`) comes last.
  return { count: 0, batchSizes: 1, inputStrides, consts, chunks: at, length: at + 1 };
}

/**
 * The most loop iterations (all loops together, nested or one after another) that
 * one invocation of any generated kernel runs, whatever the sizes. Long loops are
 * split into chunks over more invocations instead (see `wgslLaunchPlan`). Mesa's
 * llvmpipe counts the iterations of every loop of an invocation in one counter and
 * silently leaves all loops once it reaches 65,535; real GPUs gain parallelism.
 */
export const WGSL_LOOP_BUDGET = 4096;

/** Iterations the main loop of an invocation may take; the rest of the budget is the shared-memory combine (6). */
const MAIN_TRIPS = 2048;
/** Elements one thread of a tree reduction (or of a combine pass) visits per chunk. */
const TREE_TRIPS = 256;

/**
 * Loop iterations one element of the kernel body costs: 1, plus 33 for every integer
 * `pow` (its helper loops over the exponent's 32 bits).
 */
export function elementLoopCost(kernel: Kernel): number {
  let cost = 1;
  for (const e of kernel.exprs)
    if (e.k === "binary" && e.op === "pow" && (e.dtype === "int32" || e.dtype === "uint32")) cost += 33;
  return cost;
}

/** Total iterations of the nested loops over the reduced base axes (outer loops' own iterations included). */
function baseLoopTrips(kernel: Kernel): number {
  if (kernel.reduce === null) return 0;
  let trips = 0;
  let outer = 1;
  for (const a of [...kernel.reduce.baseAxes].sort((x, y) => x - y)) {
    outer *= kernel.baseShape[a]!;
    trips += outer;
  }
  return trips + outer * (elementLoopCost(kernel) - 1);
}

/**
 * Whether a kernel runs as a workgroup tree reduction: workgroups whose threads share
 * the reduced elements, one per output element and chunk of the reduced space. That is
 * every kernel that reduces batch axes (run-time sizes, possibly huge) and every base
 * reduction whose loops would pass the loop budget. Other kernels run one invocation
 * per output element (and chunk, for segmented kernels).
 */
export function treeReduction(kernel: Kernel): boolean {
  if (kernel.segment !== undefined || kernel.reduce === null) return false;
  return kernel.reduce.batchAxes.length > 0 || baseLoopTrips(kernel) > MAIN_TRIPS;
}

/**
 * Elements of the chunked space one chunk covers: for a tree reduction, reduced
 * elements per workgroup; for a segmented kernel, positions of a row per invocation.
 * A constant of the kernel (it is written into the WGSL).
 */
export function wgslChunk(kernel: Kernel): number {
  const cost = elementLoopCost(kernel);
  if (treeReduction(kernel)) return WGSL_WORKGROUP_SIZE * Math.max(1, Math.floor(TREE_TRIPS / cost));
  // A map also steps to the next row per position: up to 8 steps and a 32-step binary search.
  if (kernel.segment?.mode === "map") return Math.max(1, Math.floor(MAIN_TRIPS / (cost + 40)));
  return Math.max(1, Math.floor(MAIN_TRIPS / cost));
}

/**
 * What bounds the loop of a segmented reduce kernel, whose rows' lengths are data:
 * `packed` when the body reads packed values (a row is at most the packed length);
 * `padded` when it reads only right-padded inputs (positions past the padded length M
 * read 0, so the body is the same there and is folded once, in closed form); `none`
 * when nothing it reads depends on the position (e.g. a count): closed form only.
 * Map kernels always walk the row (they write every position).
 */
export function segmentRowBound(kernel: Kernel): "packed" | "padded" | "none" {
  const loaded = new Set(kernel.exprs.flatMap((e) => (e.k === "load" || e.k === "gather" ? [e.input] : [])));
  if (kernel.inputs.some((inp, i) => inp.packed === true && loaded.has(i))) return "packed";
  if (kernel.inputs.some((inp, i) => inp.padded === true && loaded.has(i))) return "padded";
  return "none";
}

/** Partials one workgroup of a combine pass folds (see codegen/wgsl-combine.ts). */
export const WGSL_COMBINE_CHUNK = WGSL_WORKGROUP_SIZE * TREE_TRIPS;

export interface WGSLLaunchPlan {
  /** Output elements (invocations, or workgroups of a tree reduction, that do work per chunk); packed positions × base for a map. */
  readonly count: number;
  /** Chunks per output element (the `chunks` parameter); 1 unless a reduced space or row is long. */
  readonly chunks: number;
  /** Workgroups of the launch (before splitting over x and y). */
  readonly workgroups: number;
  /** Whether the launch writes partials (chunks > 1 on a reducing kernel), folded by combine passes. */
  readonly partial: boolean;
  /**
   * Segmented reduce over packed values whose rows may be longer than a chunk: the
   * number of chunk-long windows of the packed positions (0 when no row can be long).
   * Then the rows pass finishes the short rows only, a windows pass (the same kernel,
   * `chunks` = 2) folds each long row's chunks into partials (two slots per window: at
   * most one row's chunk starts in a window besides the first chunk of a row starting
   * there), and a row-combine pass folds a long row's partials (see wgsl-combine.ts),
   * in `rowChunks` parts per row, folded in turn by a second row-combine pass.
   */
  readonly windows: number;
  readonly rowChunks: number;
}

/** Chunk partials of a long row one invocation of a row-combine pass folds. */
export const WGSL_ROW_COMBINE_CHUNK = MAIN_TRIPS;

/**
 * How a launch is cut so that no invocation loops more than `WGSL_LOOP_BUDGET` times.
 * `packedRows` bounds a row's length for segmented kernels (packed positions; for a
 * reduce reading only padded inputs, their padded length; for a map, its output rows).
 */
export function wgslLaunchPlan(kernel: Kernel, batchSizes: readonly number[], packedRows = 0): WGSLLaunchPlan {
  const count = outputCount(kernel, batchSizes);
  const seg = kernel.segment;
  const C = wgslChunk(kernel);
  const plain = { windows: 0, rowChunks: 0 };
  if (seg?.mode === "map") {
    // One invocation per window of C packed positions and base point; it walks their rows.
    const n = Math.ceil(packedRows / C) * numel(kernel.baseShape);
    return { count: n, chunks: 1, workgroups: Math.ceil(n / WGSL_WORKGROUP_SIZE), partial: false, ...plain };
  }
  if (seg?.mode === "reduce" && segmentRowBound(kernel) === "packed") {
    const windows = packedRows > C ? Math.ceil(packedRows / C) : 0;
    return {
      count,
      chunks: 1,
      workgroups: Math.ceil(count / WGSL_WORKGROUP_SIZE),
      partial: false,
      windows,
      rowChunks: Math.max(1, Math.ceil(windows / WGSL_ROW_COMBINE_CHUNK)),
    };
  }
  let span = 0;
  if (seg !== undefined) span = seg.mode === "pad" ? (seg.maxN === -1 ? batchSizes[1]! : (seg.maxN ?? 0)) : packedRows;
  else if (treeReduction(kernel)) span = reducedCount(kernel, batchSizes);
  const chunks = Math.max(1, Math.ceil(span / C));
  const workgroups = treeReduction(kernel) ? count * chunks : Math.ceil((count * chunks) / WGSL_WORKGROUP_SIZE);
  const partial = chunks > 1 && kernel.reduce !== null && (seg === undefined || seg.mode === "reduce");
  return { count, chunks, workgroups, partial, ...plain };
}

/** Reduced elements per output element: reduced batch sizes × reduced base sizes. */
export function reducedCount(kernel: Kernel, batchSizes: readonly number[]): number {
  if (kernel.reduce === null) return 1;
  const reducedBase = numel(kernel.reduce.baseAxes.map((a) => kernel.baseShape[a]!));
  return kernel.reduce.batchAxes.reduce((p, a) => p * batchSizes[a]!, reducedBase);
}

/**
 * The most loop iterations one invocation of a launch runs (main loop and, for tree
 * reductions, the shared-memory combine): at most `WGSL_LOOP_BUDGET` by construction.
 */
export function wgslLoopTrips(kernel: Kernel, batchSizes: readonly number[], packedRows = 0): number {
  const cost = elementLoopCost(kernel);
  const { chunks } = wgslLaunchPlan(kernel, batchSizes, packedRows);
  const seg = kernel.segment;
  if (kernel.scatter !== undefined) return WGSL_SCATTER_CHUNK;
  if (seg !== undefined) {
    // A chunk of positions, plus at most 32 steps of a binary search for a row.
    if (seg.mode === "map") return Math.min(packedRows, wgslChunk(kernel)) * (cost + 40) + 32;
    const span = seg.mode === "pad" ? (seg.maxN === -1 ? batchSizes[1]! : (seg.maxN ?? 0)) : packedRows;
    return Math.min(Math.ceil(span / chunks), wgslChunk(kernel)) * cost + 32;
  }
  if (kernel.reduce === null) return cost - 1;
  if (!treeReduction(kernel)) return baseLoopTrips(kernel);
  const perChunk = Math.min(reducedCount(kernel, batchSizes), wgslChunk(kernel));
  return Math.ceil(perChunk / WGSL_WORKGROUP_SIZE) * cost + Math.log2(WGSL_WORKGROUP_SIZE);
}

/** Workgroups a launch needs (before splitting over x and y): see `wgslLaunchPlan`. */
export function wgslWorkgroups(kernel: Kernel, batchSizes: readonly number[], packedRows = 0): number {
  return wgslLaunchPlan(kernel, batchSizes, packedRows).workgroups;
}

/** Number of output elements of a launch: kept batch sizes × kept base sizes. */
export function outputCount(kernel: Kernel, batchSizes: readonly number[]): number {
  // Routine kernels (looped matrix routines): one invocation per batch element.
  if (kernel.routine !== undefined) return batchSizes.reduce((n, s) => n * s, 1);
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

// --- scatter kernels ---

/** Update positions one invocation of a scatter kernel's update pass walks (see `ScatterSpec`). */
export const WGSL_SCATTER_CHUNK = MAIN_TRIPS;

/**
 * The update passes of a scatter kernel: ceil(update positions / WGSL_SCATTER_CHUNK)
 * (none when the axis is empty: every index is dropped). Pass 0, the copy, comes first.
 */
export function scatterPasses(kernel: Kernel): number {
  const { axis } = kernel.scatter!;
  if (kernel.baseShape[axis] === 0) return 0;
  const u = (numel(kernel.baseShape) / kernel.baseShape[axis]!) * numel(kernel.inputs[1]!.baseShape);
  return Math.ceil(u / WGSL_SCATTER_CHUNK);
}
