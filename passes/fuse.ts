/**
 * Fusion and scheduling: groups graph nodes into kernels (docs/ARCHITECTURE.md,
 * Fusion and the schedule). The entry point; the jobs live under passes/fuse/:
 *
 * - placement.ts: which nodes get a buffer (are materialized), which inline;
 * - segments.ts: whether a kernel root runs plain or segmented over jagged rows;
 * - lower.ts: a kernel's region → kernel expressions, one rule per op;
 * - schedule.ts: kernels in order, grouped under the backend's buffer limit.
 */
import type { Graph } from "../ir/graph.js";
import type { Schedule } from "../ir/schedule.js";
import { DEFAULT_FUSE_OPTIONS, type FuseOptions } from "./fuse/options.js";
import { schedule } from "./fuse/schedule.js";

export { DEFAULT_FUSE_OPTIONS, type FuseOptions } from "./fuse/options.js";
export { INLINE_REDUCE_LIMIT } from "./fuse/placement.js";

/**
 * Turns a graph into a schedule of kernel, view and copy steps. A kernel whose
 * buffers (inputs + outputs) exceed the backend's limit gets part of its inlined
 * region materialized into an earlier kernel.
 */
export function fuse(g: Graph, opts: FuseOptions = DEFAULT_FUSE_OPTIONS): Schedule {
  return schedule(g, opts);
}
