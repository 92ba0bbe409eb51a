/**
 * Ragged segment planning: whether a kernel root runs as a plain kernel or as a
 * segmented kernel over the rows of a jagged tensor (reduce, map or pad; see
 * `Segment` in ir/kernel.ts), and which ragged nodes must get their own buffer first
 * (docs/ARCHITECTURE.md, Fusion and the schedule).
 */
import type { Node } from "../../ir/graph.js";
import type { Segment } from "../../ir/kernel.js";
import { isPad, isReduce, padOffsets, region, type PadNode } from "./placement.js";

/** How a root runs: as a plain kernel, or segmented over the rows of a jagged tensor. */
export type SegmentPlan = {
  readonly mode: Segment["mode"];
  readonly offsets: Node;
  readonly maxN?: number;
  readonly left?: boolean;
};
export type Plan = { readonly mode: "plain" } | SegmentPlan;

/**
 * Decides how a root runs. Returns the segment_expand nodes that must get their
 * own buffer first (an expand can only inline into a segmented kernel over the
 * same offsets).
 */
export function planRoot(root: Node, materialized: ReadonlySet<Node>): { plan: Plan; materialize: Node[] } {
  // segment_expand and segment_unpad read by row: they inline only into segmented kernels.
  const byRow = (m: Node): boolean => m.op === "segment_expand" || m.op === "segment_unpad";
  const expandsIn = (n: Node): Node[] => [...(byRow(n) ? [n] : []), ...region(n, materialized).filter(byRow)];
  const inline = (n: Node): boolean => !materialized.has(n) && n.op !== "input";
  let plan: Plan = { mode: "plain" };
  let expands: Node[];
  // Pads inline only on the row side of a pad kernel; anywhere else they get a buffer.
  const pads = [root, ...region(root, materialized)].filter(isPad);
  const side = rowSide(root, materialized);
  if (side.pads.length > 0 && padKernelFits(root, side)) {
    const p = side.pads[0]!;
    const offsets = padOffsets(p);
    const expandsOff = side.pads.flatMap((q) =>
      q.op === "segment_pad" && inline(q.inputs[0]!) ? expandsIn(q.inputs[0]!) : [],
    );
    return {
      plan: { mode: "pad", offsets, maxN: p.attrs.maxN, left: p.attrs.left },
      materialize: [
        ...pads.filter((q) => !side.pads.includes(q)),
        ...expandsOff.filter((e) => e.inputs[1] !== offsets),
      ],
    };
  }
  const inner = pads.filter((q) => q !== root);
  if (inner.length > 0) return { plan, materialize: inner };
  if (root.op === "segment_reduce") {
    const offsets = root.inputs[1]!;
    plan = { mode: "reduce", offsets };
    const values = root.inputs[0]!;
    expands = inline(values) ? expandsIn(values) : [];
    return { plan, materialize: expands.filter((e) => e.inputs[1] !== offsets) };
  }
  expands = isReduce(root) ? (inline(root.inputs[0]!) ? expandsIn(root.inputs[0]!) : []) : expandsIn(root);
  if (expands.length === 0) return { plan, materialize: [] };
  if (isReduce(root) || root.type.batch.length !== 1) return { plan, materialize: expands.filter((e) => e !== root) };
  const offsets = expands[0]!.inputs[1]!;
  return { plan: { mode: "map", offsets }, materialize: expands.filter((e) => e.inputs[1] !== offsets) };
}

/**
 * The row side of a root's kernel: the pads it reaches without entering one (the
 * root itself when it is a pad), the buffers read there, and whether a ragged op
 * that needs the packed positions (segment_expand, segment_unpad) is inlined there.
 * A mask that has its own buffer (a graph output) still counts as a pad: a pad
 * kernel recomputes it from the offsets rather than read a (B, maxN) buffer. A
 * padded tensor with a buffer is an ordinary (B, maxN) leaf.
 */
function rowSide(root: Node, materialized: ReadonlySet<Node>): { pads: PadNode[]; leaves: Node[]; packedOps: boolean } {
  const pads: PadNode[] = [];
  const leaves: Node[] = [];
  let packedOps = false;
  const seen = new Set<Node>();
  const visit = (n: Node): void => {
    if (isPad(n)) {
      pads.push(n);
      return;
    }
    if (n.op === "segment_expand" || n.op === "segment_unpad") packedOps = true;
    for (const i of n.inputs) {
      if (seen.has(i)) continue;
      seen.add(i);
      if (i.op !== "segment_mask" && (materialized.has(i) || i.op === "input")) leaves.push(i);
      else visit(i);
    }
  };
  visit(root);
  return { pads, leaves, packedOps };
}

/**
 * A root runs as a pad kernel (one element per row and padded position) when its
 * pads agree (offsets, length, side), it is elementwise over their (B, maxN) batch,
 * and everything else it reads is unbatched or per row (B, 1).
 */
function padKernelFits(root: Node, side: ReturnType<typeof rowSide>): boolean {
  const p = side.pads[0]!;
  const [rows] = p.type.batch;
  const same = (q: PadNode): boolean =>
    padOffsets(q) === padOffsets(p) && q.attrs.maxN === p.attrs.maxN && q.attrs.left === p.attrs.left;
  const perRow = (l: Node): boolean =>
    l.type.batch.length === 0 || (l.type.batch.length === 2 && l.type.batch[0] === rows && l.type.batch[1] === 1);
  return (
    !isReduce(root) &&
    !side.packedOps &&
    root.type.batch.length === 2 &&
    root.type.batch[0] === rows &&
    root.type.batch[1] === p.type.batch[1] &&
    side.pads.every(same) &&
    side.leaves.every(perRow)
  );
}
