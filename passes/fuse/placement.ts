/**
 * Buffer placement: which graph nodes get a buffer (are *materialized*) and which
 * inline into the kernels of their consumers (docs/ARCHITECTURE.md, Fusion and the
 * schedule), and the regions of inlined nodes a kernel covers.
 *
 * A node is materialized when it is a graph output, a reduction, the source of a
 * batch view, or used more than once with a base larger than the unroll limit.
 * Other multi-use nodes (constants, casts, base movements, anything with a small
 * base, a few cheap ops) are inlined into each consumer: inside one unrolled kernel
 * the code generators share equal values, so a shared subexpression (a determinant
 * used by all nine entries of an inverse) is still computed once per batch element.
 */
import { CHEAP } from "../../ir/elementwise.js";
import { isReduceNode, topoOrder, useCounts, type Graph, type Node, type NodeOf } from "../../ir/graph.js";
import { numel, type KReduceOp } from "../../ir/kernel.js";
import { COPY_OPS, SEGMENT_OPS, VIEW_OPS } from "../../ir/ops.js";
import { isInlineable } from "../../ir/reductions.js";
import type { FuseOptions } from "./options.js";

/** Reductions over base axes only, of at most this many elements per output, inline as `combine`. */
export const INLINE_REDUCE_LIMIT = 16;

/** Whether `n` is a small base-axes reduction that inlines (then it is a reduction node). */
export function inlineReduce(n: Node): n is NodeOf<KReduceOp> {
  if (!isReduceNode(n) || !isInlineable(n.op) || n.attrs.batchAxes.length > 0) return false;
  const x = n.inputs[0]!;
  const count = numel(n.attrs.baseAxes.map((a) => x.type.base[a]!));
  return count >= 1 && count <= INLINE_REDUCE_LIMIT;
}

/** Reductions that get their own reduction kernel (small base reductions inline instead). */
export const isReduce = (n: Node): n is NodeOf<KReduceOp> => isReduceNode(n) && !inlineReduce(n);

/** Ops cheap enough to recompute in every consumer instead of writing a buffer: index arithmetic and casts. */
const RECOMPUTE: ReadonlySet<string> = new Set([
  "const",
  "cast",
  "reshape",
  "permute",
  "expand",
  "slice",
  "batch_expand",
  "concat",
]);

/**
 * Ops cheap enough to recompute in several consumers instead of writing a buffer: the
 * elementwise ops the op-facts table marks `cheap`, and `where`.
 */
const CHEAP_ARITH: ReadonlySet<string> = new Set<string>([...CHEAP, "where"]);
/** At most this many cheap ops may be recomputed per use. */
const CHEAP_REGION = 4;

/** True when `n`'s inlined region is a few cheap ops: recomputing it costs less than a buffer round trip. */
function cheapToRecompute(n: Node, materialized: ReadonlySet<Node>): boolean {
  if (!CHEAP_ARITH.has(n.op)) return false;
  let ops = 0;
  const seen = new Set<Node>();
  const visit = (m: Node): boolean => {
    if (seen.has(m) || materialized.has(m) || m.op === "input" || m.op === "const") return true;
    seen.add(m);
    if (RECOMPUTE.has(m.op)) return m.inputs.every(visit);
    if (!CHEAP_ARITH.has(m.op) || ++ops > CHEAP_REGION) return false;
    return m.inputs.every(visit);
  };
  return visit(n);
}

export type PadNode = NodeOf<"segment_pad" | "segment_mask">;
export const isPad = (n: Node): n is PadNode => n.op === "segment_pad" || n.op === "segment_mask";
/** The offsets a pad (or mask) pads the rows of. */
export const padOffsets = (n: Node): Node => (n.op === "segment_pad" ? n.inputs[1]! : n.inputs[0]!);

/** The placement of a graph's nodes: the materialized ones, and the soft outputs (see `placeBuffers`). */
export interface Placement {
  readonly order: readonly Node[];
  /** Nodes with a buffer; scheduling adds to it (split-off regions, segment_expand sources). */
  readonly materialized: Set<Node>;
  /**
   * Small elementwise graph outputs that nothing else forces into a buffer: with
   * mixed-base outputs their readers recompute them (and share the kernel that writes them).
   */
  readonly softOutputs: ReadonlySet<Node>;
}

/** Decides which nodes get buffers before scheduling. */
export function placeBuffers(g: Graph, opts: FuseOptions): Placement {
  const order = topoOrder(g);
  const uses = useCounts(order, g.outputs);
  const materialized = new Set<Node>();
  for (const n of order) {
    if (n.op === "input") continue;
    // Pads are not: they inline into the pad kernel of an elementwise consumer (see `planRoot`).
    if (SEGMENT_OPS.has(n.op)) {
      // A segmented kernel reads its rows' offsets from a buffer: offsets the graph computes get one.
      const o = isPad(n) ? padOffsets(n) : n.inputs[1]!;
      if (o.op !== "input") materialized.add(o);
    }
    // take reads its x at data-dependent positions, so x needs a buffer; a take read by a
    // ragged op gets one too (it is then never read as a right-padded tensor).
    if (n.op === "take" && n.inputs[0]!.op !== "input") materialized.add(n.inputs[0]!);
    if (SEGMENT_OPS.has(n.op)) for (const i of n.inputs) if (i.op === "take") materialized.add(i);
    // --- scatter --- a kernel of its own (see `ScatterSpec`), reading x, idx and upd from buffers.
    // A routine kernel reads whole base matrices of its inputs from buffers (see fuse/routine.ts).
    if (n.op === "scatter" || n.op === "routine") {
      materialized.add(n);
      for (const i of n.inputs) if (i.op !== "input") materialized.add(i);
      continue;
    }
    if (isReduce(n) || n.op === "segment_reduce") materialized.add(n);
    else if (VIEW_OPS.has(n.op) || COPY_OPS.has(n.op)) {
      // Views and copies work on whole contiguous buffers: their sources get buffers too.
      materialized.add(n);
      for (const i of n.inputs) if (i.op !== "input") materialized.add(i);
    } else if (
      (uses.get(n) ?? 0) > 1 &&
      !RECOMPUTE.has(n.op) &&
      numel(n.type.base) > opts.unrollLimit &&
      !cheapToRecompute(n, materialized)
    ) {
      materialized.add(n);
    }
  }
  const softOutputs = new Set<Node>();
  for (const o of g.outputs) {
    if (o.op === "input" || materialized.has(o)) continue;
    const soft =
      opts.mixedBaseOutputs === true &&
      opts.fusion !== false &&
      numel(o.type.base) <= opts.unrollLimit &&
      !SEGMENT_OPS.has(o.op) &&
      !VIEW_OPS.has(o.op) &&
      !isReduce(o);
    (soft ? softOutputs : materialized).add(o);
  }
  if (opts.fusion === false) for (const n of order) if (n.op !== "input" && n.op !== "const") materialized.add(n);
  return { order, materialized, softOutputs };
}

/** The buffers (materialized nodes and inputs) that the inlined region of `n` reads. */
export function regionReads(
  n: Node,
  materialized: ReadonlySet<Node>,
  memo: Map<Node, ReadonlySet<Node>>,
): ReadonlySet<Node> {
  const hit = memo.get(n);
  if (hit) return hit;
  const reads = new Set<Node>();
  for (const i of n.inputs) {
    if (materialized.has(i) || i.op === "input") reads.add(i);
    else for (const r of regionReads(i, materialized, memo)) reads.add(r);
  }
  memo.set(n, reads);
  return reads;
}

/** Nodes inlined into the kernel of `root` (its region, root excluded). */
export function region(root: Node, materialized: ReadonlySet<Node>): Node[] {
  const out: Node[] = [];
  const seen = new Set<Node>();
  const visit = (n: Node): void => {
    for (const i of n.inputs) {
      if (seen.has(i) || materialized.has(i) || i.op === "input") continue;
      seen.add(i);
      out.push(i);
      visit(i);
    }
  };
  visit(root);
  return out;
}
