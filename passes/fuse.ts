/**
 * Fusion and scheduling: groups graph nodes into kernels (docs/ARCHITECTURE.md, Fusion and the schedule).
 *
 * A node is *materialized* (written to a buffer) when it is a graph output, a
 * reduction, the source of a batch view, or used more than once with a base
 * larger than the unroll limit. Other multi-use nodes (constants, casts, base
 * movements, and anything with a small base) are inlined into each consumer:
 * inside one unrolled kernel the emitter numbers values by their code, so a
 * shared subexpression (a determinant used by all nine entries of an inverse)
 * is still computed once per batch element. Everything else is inlined into the kernel of its
 * consumer: elementwise ops, casts and base movement ops become scalar
 * expressions and index arithmetic, and an elementwise prologue inlines into
 * the reduction that reads it. Batch reshapes are zero-copy views of a
 * contiguous buffer.
 */
import { castScalar } from "../ir/dtype.js";
import { canonicalKey } from "../ir/key.js";
import { BackendError, UnsupportedOpError } from "../ir/errors.js";
import { fmtType } from "../ir/types.js";
import { attrsOf, hasOp, isReduceNode, Node, topoOrder, useCounts, type Graph, type NodeOf } from "../ir/graph.js";
import {
  contiguousStrides,
  ix,
  numel,
  type IndexExpr,
  type KExpr,
  type KReduceOp,
  type Kernel,
  type KernelInput,
  type KernelOutput,
  type Segment,
} from "../ir/kernel.js";
import { COPY_OPS, SEGMENT_OPS, VIEW_OPS } from "../ir/ops.js";
import type { Schedule, Step } from "../ir/schedule.js";
import { CHEAP, isBinaryOp, isUnaryOp } from "../ir/elementwise.js";

export interface FuseOptions {
  /** Most storage buffers one kernel may bind (inputs + outputs). */
  readonly maxKernelBuffers: number;
  /** Unroll base loops when the iteration space's base has at most this many elements. */
  readonly unrollLimit: number;
  /** false: every op gets its own kernel and buffer (op-by-op evaluation, for comparison). */
  readonly fusion?: boolean;
  /**
   * The backend can write outputs of different small base shapes from one unrolled
   * kernel (JS). Then a small output that other kernels read is recomputed by them
   * instead of loaded, and written by the same kernel (a determinant and the inverse
   * that divides by it: one kernel, two outputs).
   */
  readonly mixedBaseOutputs?: boolean;
  /** Let kernels keep float32 intermediates at higher precision (see `Kernel.relaxedFloat32`). */
  readonly relaxedFloat32?: boolean;
}

export const DEFAULT_FUSE_OPTIONS: FuseOptions = { maxKernelBuffers: Infinity, unrollLimit: 64 };

/** Maps an index of a broadcast result to an index of an operand (size-1 dims read index 0). */
function broadcastIndex(inBase: readonly number[], outBase: readonly number[], idx: readonly IndexExpr[]): IndexExpr[] {
  const off = outBase.length - inBase.length;
  return inBase.map((d, i) => (d === 1 && outBase[off + i] !== 1 ? ix.c(0) : idx[off + i]!));
}

/** Maps an index of a reshaped base to an index of its source (row-major order is preserved). */
function reshapeIndex(inBase: readonly number[], outBase: readonly number[], idx: readonly IndexExpr[]): IndexExpr[] {
  const inKept = inBase.filter((d) => d !== 1);
  const outKept = outBase.filter((d) => d !== 1);
  if (inKept.length === outKept.length && inKept.every((d, i) => d === outKept[i])) {
    // Only size-1 dims differ: carry the other dims' indices across in order.
    const kept = idx.filter((_, i) => outBase[i] !== 1);
    let k = 0;
    return inBase.map((d) => (d === 1 ? ix.c(0) : kept[k++]!));
  }
  const os = contiguousStrides(outBase);
  let flat: IndexExpr = ix.c(0);
  idx.forEach((e, i) => (flat = ix.add(flat, ix.mul(e, ix.c(os[i]!)))));
  const is = contiguousStrides(inBase);
  return inBase.map((d, i) => {
    const q = ix.div(flat, ix.c(is[i]!));
    return i === 0 ? q : ix.mod(q, ix.c(d));
  });
}

class KernelBuilder {
  readonly exprs: KExpr[] = [];
  readonly inputs: Node[] = [];
  /** Per input slot: read at the segment position t (segmented kernels) rather than by row. */
  readonly packed: boolean[] = [];
  /** Inside a segmented kernel's packed region (flipped back to rows by segment_expand). */
  inPacked = false;
  /** Reading a right-padded (B, M; base) tensor at the segment position (segment_unpad). */
  inPadded = false;
  /** Per input slot: read as a padded tensor. */
  readonly padded: boolean[] = [];
  /** In a pad kernel (the row side): segment_pad and segment_mask inline as `inside` selections. */
  padKernel = false;
  private readonly memo = new Map<string, number>();

  constructor(private readonly materialized: ReadonlySet<Node>) {}

  private push(e: KExpr): number {
    // Canonical (injective) key: constants NaN and Infinity, or 0 and -0, stay distinct.
    const key = canonicalKey(e);
    const found = this.memo.get(key);
    if (found !== undefined) return found;
    this.exprs.push(e);
    this.memo.set(key, this.exprs.length - 1);
    return this.exprs.length - 1;
  }

  private load(n: Node, idx: readonly IndexExpr[]): number {
    const packed = this.inPacked && !this.inPadded;
    let slot = this.inputs.findIndex(
      (m, i) => m === n && this.packed[i] === packed && this.padded[i] === this.inPadded,
    );
    if (slot < 0) {
      slot = this.inputs.push(n) - 1;
      this.packed.push(packed);
      this.padded.push(this.inPadded);
    }
    return this.push({ k: "load", input: slot, index: idx, dtype: n.type.dtype });
  }

  /** Values already generated, by node, index and context: shared subexpressions are walked once. */
  private readonly genMemo = new Map<string, number>();

  /** The value of node `n` at base index `idx` (batch index implicit). */
  gen(n: Node, idx: readonly IndexExpr[], root: boolean): number {
    const key = `${n.id}|${root ? 1 : 0}|${this.inPacked ? 1 : 0}${this.inPadded ? 1 : 0}|${canonicalKey(idx)}`;
    const hit = this.genMemo.get(key);
    if (hit !== undefined) return hit;
    const v = this.genUncached(n, idx, root);
    this.genMemo.set(key, v);
    return v;
  }

  private genUncached(n: Node, idx: readonly IndexExpr[], root: boolean): number {
    // On a pad kernel's row side, a mask is recomputed even when it also has a buffer (see `rowSide`).
    const padHere =
      this.padKernel && !this.inPacked && isPad(n) && (n.op === "segment_mask" || !this.materialized.has(n));
    if (!root && !padHere && (this.materialized.has(n) || n.op === "input")) return this.load(n, idx);
    const op = n.op;
    const t = n.type;
    if (hasOp(n, "const")) return this.push({ k: "const", value: castScalar(n.attrs.value, t.dtype), dtype: t.dtype });
    if (op === "cast") return this.push({ k: "cast", x: this.gen(n.inputs[0]!, idx, false), dtype: t.dtype });
    if (isUnaryOp(op)) {
      return this.push({ k: "unary", op, x: this.gen(n.inputs[0]!, idx, false), dtype: t.dtype });
    }
    const operand = (i: number): number =>
      this.gen(n.inputs[i]!, broadcastIndex(n.inputs[i]!.type.base, t.base, idx), false);
    if (isBinaryOp(op)) {
      return this.push({ k: "binary", op, a: operand(0), b: operand(1), dtype: t.dtype });
    }
    if (op === "where") return this.push({ k: "where", c: operand(0), a: operand(1), b: operand(2), dtype: t.dtype });
    if (op === "expand" || op === "batch_expand") return operand(0);
    if (op === "reshape") return this.gen(n.inputs[0]!, reshapeIndex(n.inputs[0]!.type.base, t.base, idx), false);
    if (inlineReduce(n)) {
      // A small reduction over base axes: each output element combines its few inputs.
      const x = n.inputs[0]!;
      const axes = n.attrs.baseAxes;
      const keep = n.attrs.keep;
      const xs: number[] = [];
      for (const p of basePoints(axes.map((a) => x.type.base[a]!))) {
        let k = 0;
        let j = 0;
        const inIdx = x.type.base.map((_, d) => (axes.includes(d) ? ix.c(p[k++]!) : keep ? idx[d]! : idx[j++]!));
        xs.push(this.gen(x, inIdx, false));
      }
      return this.push({ k: "combine", op: op as KReduceOp, xs, dtype: t.dtype });
    }
    if (hasOp(n, "concat")) {
      const axis = n.attrs.axis;
      const pieces = n.inputs.map((x, i) => {
        const start = n.inputs.slice(0, i).reduce((s, y) => s + y.type.base[axis]!, 0);
        return { x, start, end: start + x.type.base[axis]! };
      });
      const at = idx[axis]!;
      const piece = (p: (typeof pieces)[number]): number =>
        this.gen(
          p.x,
          broadcastIndex(
            p.x.type.base,
            t.base,
            idx.map((e, d) => (d === axis ? ix.add(e, ix.c(-p.start)) : e)),
          ),
          false,
        );
      if (at.k === "const") return piece(pieces.find((p) => at.v >= p.start && at.v < p.end)!);
      // index < end of piece 0 ? piece 0 : (index < end of piece 1 ? piece 1 : ...)
      let value = piece(pieces[pieces.length - 1]!);
      for (let i = pieces.length - 2; i >= 0; i--) {
        value = this.push({
          k: "select",
          index: at,
          bound: pieces[i]!.end,
          a: piece(pieces[i]!),
          b: value,
          dtype: t.dtype,
        });
      }
      return value;
    }
    if (op === "segment_unpad") {
      if (!this.inPacked || this.inPadded)
        throw new UnsupportedOpError("fuse: segment_unpad must be materialized outside segmented kernels");
      this.inPadded = true;
      const v = this.gen(n.inputs[0]!, broadcastIndex(n.inputs[0]!.type.base, t.base, idx), false);
      this.inPadded = false;
      return v;
    }
    if (op === "segment_pad" || op === "segment_mask") {
      if (!this.padKernel || this.inPacked)
        throw new UnsupportedOpError(`fuse: ${op} must be materialized outside pad kernels`);
      const inside = this.push({ k: "inside", dtype: "bool" });
      if (op === "segment_mask") return inside;
      // The row's entry where there is one (packed values read at the segment position), else the padding value.
      this.inPacked = true;
      const v = this.gen(n.inputs[0]!, idx, false);
      this.inPacked = false;
      const padValue = attrsOf(n, "segment_pad").value;
      const pad = this.push({ k: "const", value: castScalar(padValue, t.dtype), dtype: t.dtype });
      return this.push({ k: "where", c: inside, a: v, b: pad, dtype: t.dtype });
    }
    if (op === "segment_expand") {
      if (!this.inPacked)
        throw new UnsupportedOpError("fuse: segment_expand must be materialized outside segmented kernels");
      const padded = this.inPadded;
      this.inPacked = false;
      this.inPadded = false;
      const v = this.gen(n.inputs[0]!, broadcastIndex(n.inputs[0]!.type.base, t.base, idx), false);
      this.inPacked = true;
      this.inPadded = padded;
      return v;
    }
    if (hasOp(n, "slice")) {
      const { axis, start, step } = n.attrs;
      const inIdx = idx.map((e, d) => (d === axis ? ix.add(ix.c(start), ix.mul(e, ix.c(step))) : e));
      return this.gen(n.inputs[0]!, inIdx, false);
    }
    if (hasOp(n, "permute")) {
      const perm = n.attrs.perm;
      const inIdx = new Array<IndexExpr>(perm.length);
      perm.forEach((p, d) => (inIdx[p] = idx[d]!));
      return this.gen(n.inputs[0]!, inIdx, false);
    }
    throw new UnsupportedOpError(`fuse: op ${op} must be materialized or lowered before fusion`);
  }
}

/** Reductions over base axes only, of at most this many elements per output, inline as `combine`. */
export const INLINE_REDUCE_LIMIT = 16;

const INLINE_REDUCE_OPS: ReadonlySet<string> = new Set(["sum", "mean", "prod", "min", "max", "all", "any"]);

/** Whether `n` is a small base-axes reduction that inlines (then it is a reduction node). */
function inlineReduce(n: Node): n is NodeOf<KReduceOp> {
  if (!INLINE_REDUCE_OPS.has(n.op) || !isReduceNode(n) || n.attrs.batchAxes.length > 0) return false;
  const x = n.inputs[0]!;
  const count = numel(n.attrs.baseAxes.map((a) => x.type.base[a]!));
  return count >= 1 && count <= INLINE_REDUCE_LIMIT;
}

/** All points of a small static shape, row-major. */
function basePoints(shape: readonly number[]): number[][] {
  const out: number[][] = [[]];
  for (const d of shape) {
    const next: number[][] = [];
    for (const p of out) for (let i = 0; i < d; i++) next.push([...p, i]);
    out.splice(0, out.length, ...next);
  }
  return out;
}

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

function inputDescs(b: KernelBuilder): KernelInput[] {
  return b.inputs.map((n, i) => ({
    dtype: n.type.dtype,
    batchRank: n.type.batch.length,
    baseShape: n.type.base,
    ...(b.packed[i] ? { packed: true } : {}),
    ...(b.padded[i] ? { padded: true } : {}),
  }));
}

/** Reductions that get their own reduction kernel (small base reductions inline instead). */
const isReduce = (n: Node): n is NodeOf<KReduceOp> => isReduceNode(n) && !inlineReduce(n);

/** Axes of at most 4 elements (xyz, quaternion components) are unrolled inside looped kernels. */
function smallAxes(shape: readonly number[], opts: FuseOptions): number[] {
  const axes: number[] = [];
  let total = 1;
  shape.forEach((d, a) => {
    if (d <= 4 && total * d <= opts.unrollLimit) {
      axes.push(a);
      total *= d;
    }
  });
  return axes;
}

/** How a root runs: as a plain kernel, or segmented over the rows of a jagged tensor. */
type SegmentPlan = {
  readonly mode: Segment["mode"];
  readonly offsets: Node;
  readonly maxN?: number;
  readonly left?: boolean;
};
type Plan = { readonly mode: "plain" } | SegmentPlan;

/** Builds a segmented kernel (ragged ops; see `Segment` in ir/kernel.ts). */
function buildSegmentKernel(
  root: Node,
  plan: SegmentPlan,
  materialized: ReadonlySet<Node>,
  opts: FuseOptions,
): Step & { kind: "kernel" } {
  const b = new KernelBuilder(materialized);
  b.inputs.push(plan.offsets);
  b.packed.push(false);
  b.padded.push(false);
  b.inPacked = true;
  const inline = (n: Node): boolean => !materialized.has(n) && n.op !== "input";
  let base: readonly number[];
  let outputs: KernelOutput[];
  let segment: Segment = { offsets: 0, mode: plan.mode };
  if (plan.mode === "reduce") {
    const values = root.inputs[0]!;
    base = values.type.base;
    const op = attrsOf(root, "segment_reduce").op;
    const value =
      op === "count"
        ? b.gen(Node.make("const", [], { dtype: "int32", value: 1 }), [], false)
        : b.gen(
            values,
            base.map((_, i) => ix.v(i)),
            inline(values),
          );
    outputs = [{ dtype: root.type.dtype, value, reduce: op === "count" ? "sum" : (op as KReduceOp) }];
  } else if (plan.mode === "map") {
    base = root.type.base;
    outputs = [
      {
        dtype: root.type.dtype,
        value: b.gen(
          root,
          base.map((_, i) => ix.v(i)),
          true,
        ),
        reduce: null,
      },
    ];
  } else {
    // pad: the root (a segment_pad or segment_mask, or an elementwise consumer of them) per padded position.
    b.inPacked = false;
    b.padKernel = true;
    base = root.type.base;
    outputs = [
      {
        dtype: root.type.dtype,
        value: b.gen(
          root,
          base.map((_, i) => ix.v(i)),
          true,
        ),
        reduce: null,
      },
    ];
    segment = { ...segment, maxN: plan.maxN!, left: plan.left! };
  }
  const kernel: Kernel = {
    segment,
    batchRank: 1,
    baseShape: base,
    reduce: plan.mode === "reduce" ? { batchAxes: [], baseAxes: [] } : null,
    inputs: inputDescs(b),
    outputs,
    exprs: b.exprs,
    unroll: numel(base) <= opts.unrollLimit,
    unrollAxes: smallAxes(base, opts),
    ...(opts.relaxedFloat32 ? { relaxedFloat32: true } : {}),
  };
  return { kind: "kernel", kernel, inputs: b.inputs, outputs: [root], space: plan.offsets };
}

/**
 * Decides how a root runs. Returns the segment_expand nodes that must get their
 * own buffer first (an expand can only inline into a segmented kernel over the
 * same offsets).
 */
function planRoot(root: Node, materialized: ReadonlySet<Node>): { plan: Plan; materialize: Node[] } {
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

type PadNode = NodeOf<"segment_pad" | "segment_mask">;
const isPad = (n: Node): n is PadNode => hasOp(n, "segment_pad", "segment_mask");
const padOffsets = (n: Node): Node => (n.op === "segment_pad" ? n.inputs[1]! : n.inputs[0]!);

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

/** Builds one kernel writing every node of `group` (all share one iteration space). */
function buildKernel(
  group: readonly Node[],
  materialized: ReadonlySet<Node>,
  opts: FuseOptions,
): Step & { kind: "kernel" } {
  const b = new KernelBuilder(materialized);
  const root = group[0]!;
  if (isReduce(root)) {
    const x = root.inputs[0]!;
    const idx = x.type.base.map((_, i) => ix.v(i));
    const value = b.gen(x, idx, !materialized.has(x) && x.op !== "input");
    const kernel: Kernel = {
      batchRank: x.type.batch.length,
      baseShape: x.type.base,
      reduce: { batchAxes: root.attrs.batchAxes, baseAxes: root.attrs.baseAxes },
      inputs: inputDescs(b),
      outputs: group.map((n) => ({ dtype: n.type.dtype, value, reduce: n.op as KReduceOp })),
      exprs: b.exprs,
      unroll: numel(x.type.base) <= opts.unrollLimit,
      unrollAxes: smallAxes(x.type.base, opts),
      ...(opts.relaxedFloat32 ? { relaxedFloat32: true } : {}),
    };
    return { kind: "kernel", kernel, inputs: b.inputs, outputs: group, space: x };
  }
  // Each output is indexed by its own base axes (they differ only in unrolled mixed-base kernels).
  const values = group.map((n) => {
    const idx = n.type.base.map((_, i) => ix.v(i));
    return n.op === "input" ? b.gen(n, idx, false) : b.gen(n, idx, true);
  });
  const sameBase = (n: Node): boolean =>
    n.type.base.length === root.type.base.length && n.type.base.every((d, i) => d === root.type.base[i]);
  const kernel: Kernel = {
    batchRank: root.type.batch.length,
    baseShape: root.type.base,
    reduce: null,
    inputs: inputDescs(b),
    outputs: group.map((n, i) => ({
      dtype: n.type.dtype,
      value: values[i]!,
      reduce: null,
      ...(sameBase(n) ? {} : { baseShape: n.type.base }),
    })),
    exprs: b.exprs,
    unroll: group.every((n) => numel(n.type.base) <= opts.unrollLimit),
    unrollAxes: smallAxes(root.type.base, opts),
    ...(opts.relaxedFloat32 ? { relaxedFloat32: true } : {}),
  };
  return { kind: "kernel", kernel, inputs: b.inputs, outputs: group, space: root };
}

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

/** The buffers (materialized nodes and inputs) that the inlined region of `n` reads. */
function regionReads(n: Node, materialized: ReadonlySet<Node>, memo: Map<Node, ReadonlySet<Node>>): ReadonlySet<Node> {
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
function region(root: Node, materialized: ReadonlySet<Node>): Node[] {
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

/** Kernels that may share a launch: reductions of one value over the same axes, or elementwise results of the same buffers and shape. */
function groupKey(
  n: Node,
  materialized: ReadonlySet<Node>,
  memo: Map<Node, ReadonlySet<Node>>,
  opts: FuseOptions,
): string {
  if (isReduce(n)) return `reduce ${n.inputs[0]!.id} ${String(n.attrs.batchAxes)} ${String(n.attrs.baseAxes)}`;
  const reads = [...regionReads(n, materialized, memo)].map((r) => r.id).sort((a, b) => a - b);
  // Small bases unroll completely; with mixed-base outputs they may share a kernel whatever their shapes.
  const base = opts.mixedBaseOutputs && numel(n.type.base) <= opts.unrollLimit ? "small" : n.type.base.join(",");
  return `map ${reads.join(",")} ${n.type.batch.join(",")};${base}`;
}

/**
 * Decides which nodes get buffers and groups them into kernels, in order. A kernel
 * whose buffers (inputs + outputs) exceed the backend's limit gets part of its
 * inlined region materialized into an earlier kernel, and scheduling starts again.
 */
export function fuse(g: Graph, opts: FuseOptions = DEFAULT_FUSE_OPTIONS): Schedule {
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
  // Small elementwise outputs that nothing else forces into a buffer: with mixed-base
  // outputs their readers recompute them (and share the kernel that writes them).
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
  for (let attempt = 0; attempt <= order.length; attempt++) {
    const memo = new Map<Node, ReadonlySet<Node>>();
    const groups = new Map<string, Node[]>();
    const steps: (Step | Node[])[] = [];
    const plans = new Map<Node, Plan>();
    let replan = false;
    const isRoot = (n: Node): boolean => materialized.has(n) || softOutputs.has(n);
    for (const n of order) {
      if (!isRoot(n) || VIEW_OPS.has(n.op) || COPY_OPS.has(n.op)) continue;
      const { plan, materialize } = planRoot(n, materialized);
      for (const m of materialize) materialized.add(m);
      replan ||= materialize.length > 0;
      plans.set(n, plan);
    }
    if (replan) continue;
    for (const n of order) {
      if (!isRoot(n)) continue;
      if (VIEW_OPS.has(n.op)) {
        steps.push({ kind: "view", node: n, source: n.inputs[0]! });
        continue;
      }
      if (COPY_OPS.has(n.op)) {
        steps.push({ kind: "copy", node: n, sources: n.inputs });
        continue;
      }
      const plan = plans.get(n)!;
      if (plan.mode !== "plain") {
        steps.push(buildSegmentKernel(n, plan, materialized, opts));
        continue;
      }
      const key = groupKey(n, materialized, memo, opts);
      const group = opts.fusion === false ? undefined : groups.get(key);
      const buffers = group
        ? new Set([
            ...group,
            ...group.flatMap((m) => [...regionReads(m, materialized, memo)]),
            n,
            ...regionReads(n, materialized, memo),
          ]).size
        : Infinity;
      if (group && buffers <= opts.maxKernelBuffers) group.push(n);
      else {
        const fresh = [n];
        groups.set(key, fresh);
        steps.push(fresh);
      }
    }
    const built = steps.map((s) => (Array.isArray(s) ? buildKernel(s, materialized, opts) : s));
    const over = built.find(
      (s): s is Step & { kind: "kernel" } =>
        s.kind === "kernel" && s.inputs.length + s.outputs.length > opts.maxKernelBuffers,
    );
    if (over === undefined) return { graph: g, order, steps: built };
    const split = splitCandidate(over, materialized, opts, memo);
    if (split === undefined) {
      throw new BackendError(
        `fuse: a kernel writing ${fmtType(over.outputs[0]!.type)} reads ${over.inputs.length} buffers and no part of it can be split off; the backend allows ${opts.maxKernelBuffers} per kernel`,
      );
    }
    materialized.add(split);
  }
  throw new BackendError("fuse: could not fit the kernels into the backend's buffer limit");
}

/** The inlined node whose own kernel would take the most loads off an oversized kernel. */
function splitCandidate(
  step: Step & { kind: "kernel" },
  materialized: ReadonlySet<Node>,
  opts: FuseOptions,
  memo: Map<Node, ReadonlySet<Node>>,
): Node | undefined {
  let best: Node | undefined;
  let bestReads = 1;
  for (const root of step.outputs) {
    const candidates =
      isReduce(root) && !materialized.has(root.inputs[0]!) && root.inputs[0]!.op !== "input"
        ? [root.inputs[0]!, ...region(root.inputs[0]!, materialized)]
        : region(root, materialized);
    for (const n of candidates) {
      const reads = regionReads(n, materialized, memo).size;
      if (reads > bestReads && reads + 1 <= opts.maxKernelBuffers) {
        best = n;
        bestReads = reads;
      }
    }
  }
  return best;
}
