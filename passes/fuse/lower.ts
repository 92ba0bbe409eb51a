/**
 * Graph → kernel-expression lowering (docs/ARCHITECTURE.md, Fusion and the
 * schedule): the nodes of a kernel's region become one scalar expression DAG per
 * output element (`KExpr`, ir/kernel.ts). Elementwise ops, casts and `where`
 * become expressions, base movement ops become index arithmetic on the loads of
 * the buffers they read, small base reductions inline as `combine`. One rule per
 * op (`LOWER`); an op without a rule must be materialized or lowered before fusion.
 *
 * Ragged ops change how the buffers below them are read (by row, at the packed
 * segment position, or as a right-padded tensor). That is the `RaggedContext`,
 * an immutable argument: a rule that changes it passes a new one down.
 */
import { castScalar } from "../../ir/dtype.js";
import { UnsupportedOpError } from "../../ir/errors.js";
import { BINARY_OPS, UNARY_OPS, type KBinaryOp, type KUnaryOp } from "../../ir/elementwise.js";
import { hasOp, Node, type NodeOf } from "../../ir/graph.js";
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
} from "../../ir/kernel.js";
import { canonicalKey } from "../../ir/key.js";
import { REDUCE_OPS, type Op } from "../../ir/ops.js";
import type { Step } from "../../ir/schedule.js";
import type { FuseOptions } from "./options.js";
import { inlineReduce, isPad, isReduce } from "./placement.js";
import type { SegmentPlan } from "./segments.js";

/** How the buffers below a node are read (see the module comment). Never mutated. */
export interface RaggedContext {
  /** Inside a segmented kernel's packed region: batched inputs are read at the segment position t. */
  readonly packed: boolean;
  /** Below a segment_unpad: a right-padded (B, M; base) tensor read at the segment position. */
  readonly padded: boolean;
}

/** Plain kernels and a pad kernel's row side: buffers read by row. */
const BY_ROW: RaggedContext = { packed: false, padded: false };
/** Segmented reduce and map kernels: buffers read at the packed position. */
const PACKED: RaggedContext = { packed: true, padded: false };

/** Lowers node `n` (of op K) at base index `idx` to an expression of the kernel being built. */
export type LowerRule<K extends Op> = (
  b: KernelBuilder,
  n: NodeOf<K>,
  idx: readonly IndexExpr[],
  ctx: RaggedContext,
) => number;

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

/** Operand `i` of `n` at the index of `n`'s element, broadcast to `n`'s base. */
const operand = (b: KernelBuilder, n: Node, i: number, idx: readonly IndexExpr[], ctx: RaggedContext): number =>
  b.gen(n.inputs[i]!, broadcastIndex(n.inputs[i]!.type.base, n.type.base, idx), false, ctx);

const unaryRule: LowerRule<KUnaryOp> = (b, n, idx, ctx) =>
  b.push({ k: "unary", op: n.op, x: b.gen(n.inputs[0]!, idx, false, ctx), dtype: n.type.dtype });
const binaryRule: LowerRule<KBinaryOp> = (b, n, idx, ctx) =>
  b.push({ k: "binary", op: n.op, a: operand(b, n, 0, idx, ctx), b: operand(b, n, 1, idx, ctx), dtype: n.type.dtype });
/** A small reduction over base axes: each output element combines its few inputs. */
const reduceRule: LowerRule<KReduceOp> = (b, n, idx, ctx) => {
  const op = n.op;
  if (!inlineReduce(n)) throw new UnsupportedOpError(`fuse: op ${op} must be materialized or lowered before fusion`);
  const x = n.inputs[0]!;
  const axes = n.attrs.baseAxes;
  const keep = n.attrs.keep;
  const xs: number[] = [];
  for (const p of basePoints(axes.map((a) => x.type.base[a]!))) {
    let k = 0;
    let j = 0;
    const inIdx = x.type.base.map((_, d) => (axes.includes(d) ? ix.c(p[k++]!) : keep ? idx[d]! : idx[j++]!));
    xs.push(b.gen(x, inIdx, false, ctx));
  }
  return b.push({ k: "combine", op, xs, dtype: n.type.dtype });
};
const each = <K extends Op>(ops: Iterable<K>, rule: LowerRule<K>): { [P in K]: LowerRule<P> } =>
  Object.fromEntries([...ops].map((op) => [op, rule])) as unknown as { [P in K]: LowerRule<P> };

/**
 * The lowering decision of every op (a missing op fails `tsc`): its rule when it can be inlined into a
 * kernel, or `null` when it never is (it always gets a buffer: it is a kernel, copy or view of its own,
 * or an input).
 */
const LOWER: { readonly [K in Op]: LowerRule<K> | null } = {
  // --- no lowering: read from a buffer ---
  input: null, // a graph input: always a buffer
  matmul: null, // lowered to elementwise products and a sum before fusion (passes/lower.ts)
  routine: null, // a looped routine kernel of its own (codegen/routines/)
  scatter: null, // a scatter kernel of its own (buildScatterKernel)
  segment_reduce: null, // the root of a segmented reduce kernel (buildSegmentKernel)
  batch_reshape: null, // views: the same buffer (VIEW_OPS)
  batch_unsqueeze: null,
  batch_squeeze: null,
  rebatch: null,
  batch_slice: null, // copies of whole blocks (COPY_OPS)
  batch_concat: null,
  // --- inlined ---
  ...each(UNARY_OPS, unaryRule),
  ...each(BINARY_OPS, binaryRule),
  ...each(REDUCE_OPS, reduceRule),
  const: (b, n) => b.push({ k: "const", value: castScalar(n.attrs.value, n.type.dtype), dtype: n.type.dtype }),
  cast: (b, n, idx, ctx) => b.push({ k: "cast", x: b.gen(n.inputs[0]!, idx, false, ctx), dtype: n.type.dtype }),
  where: (b, n, idx, ctx) =>
    b.push({
      k: "where",
      c: operand(b, n, 0, idx, ctx),
      a: operand(b, n, 1, idx, ctx),
      b: operand(b, n, 2, idx, ctx),
      dtype: n.type.dtype,
    }),
  expand: (b, n, idx, ctx) => operand(b, n, 0, idx, ctx),
  batch_expand: (b, n, idx, ctx) => operand(b, n, 0, idx, ctx),
  reshape: (b, n, idx, ctx) => b.gen(n.inputs[0]!, reshapeIndex(n.inputs[0]!.type.base, n.type.base, idx), false, ctx),
  slice: (b, n, idx, ctx) => {
    const { axis, start, step } = n.attrs;
    const inIdx = idx.map((e, d) => (d === axis ? ix.add(ix.c(start), ix.mul(e, ix.c(step))) : e));
    return b.gen(n.inputs[0]!, inIdx, false, ctx);
  },
  permute: (b, n, idx, ctx) => {
    const perm = n.attrs.perm;
    const inIdx = new Array<IndexExpr>(perm.length);
    perm.forEach((p, d) => (inIdx[p] = idx[d]!));
    return b.gen(n.inputs[0]!, inIdx, false, ctx);
  },
  concat: (b, n, idx, ctx) => {
    const axis = n.attrs.axis;
    const pieces = n.inputs.map((x, i) => {
      const start = n.inputs.slice(0, i).reduce((s, y) => s + y.type.base[axis]!, 0);
      return { x, start, end: start + x.type.base[axis]! };
    });
    const at = idx[axis]!;
    const piece = (p: (typeof pieces)[number]): number =>
      b.gen(
        p.x,
        broadcastIndex(
          p.x.type.base,
          n.type.base,
          idx.map((e, d) => (d === axis ? ix.add(e, ix.c(-p.start)) : e)),
        ),
        false,
        ctx,
      );
    if (at.k === "const") return piece(pieces.find((p) => at.v >= p.start && at.v < p.end)!);
    // index < end of piece 0 ? piece 0 : (index < end of piece 1 ? piece 1 : ...)
    let value = piece(pieces[pieces.length - 1]!);
    for (let i = pieces.length - 2; i >= 0; i--) {
      value = b.push({
        k: "select",
        index: at,
        bound: pieces[i]!.end,
        a: piece(pieces[i]!),
        b: value,
        dtype: n.type.dtype,
      });
    }
    return value;
  },
  take: (b, n, idx, ctx) => {
    // x always has a buffer (see placeBuffers): the position read on `axis` is data. x is read
    // as a load would be (by row, or at the packed position); a right-padded read (below a
    // segment_unpad) never happens, since placeBuffers gives a take read by a ragged op a buffer.
    if (ctx.padded) throw new UnsupportedOpError("fuse: take must be materialized below segment_unpad");
    const [x, ind] = n.inputs;
    const a = n.attrs.axis;
    const m = ind!.type.base.length;
    const pos = b.gen(ind!, idx.slice(a, a + m), false, ctx);
    const xIdx = [...idx.slice(0, a), ix.c(0), ...idx.slice(a + m)];
    return b.push({ k: "gather", input: b.slot(x!, ctx), index: xIdx, axis: a, pos, dtype: n.type.dtype });
  },
  segment_unpad: (b, n, idx, ctx) => {
    if (!ctx.packed || ctx.padded)
      throw new UnsupportedOpError("fuse: segment_unpad must be materialized outside segmented kernels");
    return b.gen(n.inputs[0]!, broadcastIndex(n.inputs[0]!.type.base, n.type.base, idx), false, {
      packed: true,
      padded: true,
    });
  },
  segment_expand: (b, n, idx, ctx) => {
    if (!ctx.packed)
      throw new UnsupportedOpError("fuse: segment_expand must be materialized outside segmented kernels");
    // Back to the rows: the expanded tensor is read per row.
    return b.gen(n.inputs[0]!, broadcastIndex(n.inputs[0]!.type.base, n.type.base, idx), false, BY_ROW);
  },
  segment_mask: (b, n, _idx, ctx) => {
    b.checkPad(n.op, ctx);
    return b.push({ k: "inside", dtype: "bool" });
  },
  segment_pad: (b, n, idx, ctx) => {
    b.checkPad(n.op, ctx);
    const inside = b.push({ k: "inside", dtype: "bool" });
    // The row's entry where there is one (packed values read at the segment position), else the padding value.
    const v = b.gen(n.inputs[0]!, idx, false, { ...ctx, packed: true });
    const pad = b.push({ k: "const", value: castScalar(n.attrs.value, n.type.dtype), dtype: n.type.dtype });
    return b.push({ k: "where", c: inside, a: v, b: pad, dtype: n.type.dtype });
  },
};

/** Collects one kernel's expressions and the buffers it reads. */
export class KernelBuilder {
  readonly exprs: KExpr[] = [];
  readonly inputs: Node[] = [];
  /** Per input slot: read at the segment position t (segmented kernels) rather than by row. */
  readonly packed: boolean[] = [];
  /** Per input slot: read as a padded tensor. */
  readonly padded: boolean[] = [];
  private readonly memo = new Map<string, number>();
  /** Values already generated, by node, index and context: shared subexpressions are walked once. */
  private readonly genMemo = new Map<string, number>();

  constructor(
    private readonly materialized: ReadonlySet<Node>,
    /** A pad kernel (its row side): segment_pad and segment_mask inline as `inside` selections. */
    readonly padKernel = false,
  ) {}

  push(e: KExpr): number {
    // Canonical (injective) key: constants NaN and Infinity, or 0 and -0, stay distinct.
    const key = canonicalKey(e);
    const found = this.memo.get(key);
    if (found !== undefined) return found;
    this.exprs.push(e);
    this.memo.set(key, this.exprs.length - 1);
    return this.exprs.length - 1;
  }

  /** Reads buffer `n` (an input slot per node and reading mode). */
  readBuffer(n: Node, idx: readonly IndexExpr[], ctx: RaggedContext): number {
    return this.push({ k: "load", input: this.slot(n, ctx), index: idx, dtype: n.type.dtype });
  }

  /** The input slot of buffer `n` read in context `ctx` (added on first use). */
  slot(n: Node, ctx: RaggedContext): number {
    const packed = ctx.packed && !ctx.padded;
    let slot = this.inputs.findIndex((m, i) => m === n && this.packed[i] === packed && this.padded[i] === ctx.padded);
    if (slot < 0) {
      slot = this.inputs.push(n) - 1;
      this.packed.push(packed);
      this.padded.push(ctx.padded);
    }
    return slot;
  }

  /** segment_pad and segment_mask inline only on the row side of a pad kernel. */
  checkPad(op: string, ctx: RaggedContext): void {
    if (!this.padKernel || ctx.packed)
      throw new UnsupportedOpError(`fuse: ${op} must be materialized outside pad kernels`);
  }

  /** The value of node `n` at base index `idx` (batch index implicit); `root`: `n` is the kernel's own node. */
  gen(n: Node, idx: readonly IndexExpr[], root: boolean, ctx: RaggedContext): number {
    const key = `${n.id}|${root ? 1 : 0}|${ctx.packed ? 1 : 0}${ctx.padded ? 1 : 0}|${canonicalKey(idx)}`;
    const hit = this.genMemo.get(key);
    if (hit !== undefined) return hit;
    // On a pad kernel's row side, a mask is recomputed even when it also has a buffer (see `rowSide`).
    const padHere = this.padKernel && !ctx.packed && isPad(n) && (n.op === "segment_mask" || !this.materialized.has(n));
    let v: number;
    if (!root && !padHere && (this.materialized.has(n) || n.op === "input")) v = this.readBuffer(n, idx, ctx);
    else {
      const rule = LOWER[n.op] as LowerRule<Op> | null;
      if (rule === null) throw new UnsupportedOpError(`fuse: op ${n.op} must be materialized or lowered before fusion`);
      v = rule(this, n as NodeOf<Op>, idx, ctx);
    }
    this.genMemo.set(key, v);
    return v;
  }
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

const axesOf = (base: readonly number[]): IndexExpr[] => base.map((_, i) => ix.v(i));

/** Builds a segmented kernel (ragged ops; see `Segment` in ir/kernel.ts). */
export function buildSegmentKernel(
  root: Node,
  plan: SegmentPlan,
  materialized: ReadonlySet<Node>,
  opts: FuseOptions,
): Step & { kind: "kernel" } {
  const b = new KernelBuilder(materialized, plan.mode === "pad");
  b.inputs.push(plan.offsets);
  b.packed.push(false);
  b.padded.push(false);
  const inline = (n: Node): boolean => !materialized.has(n) && n.op !== "input";
  let base: readonly number[];
  let outputs: KernelOutput[];
  let segment: Segment = { offsets: 0, mode: plan.mode };
  if (plan.mode === "reduce") {
    const values = root.inputs[0]!;
    base = values.type.base;
    const op = (root as NodeOf<"segment_reduce">).attrs.op;
    const value =
      op === "count"
        ? b.gen(Node.make("const", [], { dtype: "int32", value: 1 }), [], false, PACKED)
        : b.gen(values, axesOf(base), inline(values), PACKED);
    outputs = [{ dtype: root.type.dtype, value, reduce: op === "count" ? "sum" : (op as KReduceOp) }];
  } else {
    // map: one element per packed position; pad: the root (a segment_pad or segment_mask, or an
    // elementwise consumer of them) per padded position, its row side read by row.
    base = root.type.base;
    const value = b.gen(root, axesOf(base), true, plan.mode === "map" ? PACKED : BY_ROW);
    outputs = [{ dtype: root.type.dtype, value, reduce: null }];
    if (plan.mode === "pad") segment = { ...segment, maxN: plan.maxN!, left: plan.left! };
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

/** Builds one kernel writing every node of `group` (all share one iteration space). */
export function buildKernel(
  group: readonly Node[],
  materialized: ReadonlySet<Node>,
  opts: FuseOptions,
): Step & { kind: "kernel" } {
  const b = new KernelBuilder(materialized);
  const root = group[0]!;
  if (hasOp(root, "scatter")) return buildScatterKernel(root, b, opts);
  if (isReduce(root)) {
    const x = root.inputs[0]!;
    const value = b.gen(x, axesOf(x.type.base), !materialized.has(x) && x.op !== "input", BY_ROW);
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
  const values = group.map((n) => b.gen(n, axesOf(n.type.base), n.op !== "input", BY_ROW));
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

// --- scatter ---

/**
 * A scatter kernel (see `ScatterSpec` in ir/kernel.ts): inputs [x, idx, upd], all
 * buffers (placeBuffers gives them one); its one expr loads x at the space's index.
 */
function buildScatterKernel(root: NodeOf<"scatter">, b: KernelBuilder, opts: FuseOptions): Step & { kind: "kernel" } {
  const [x, idx, upd] = root.inputs as [Node, Node, Node];
  for (const n of [x, idx, upd]) {
    b.inputs.push(n);
    b.packed.push(false);
    b.padded.push(false);
  }
  const base = root.type.base;
  const value = b.push({ k: "load", input: 0, index: axesOf(x.type.base), dtype: x.type.dtype });
  const kernel: Kernel = {
    scatter: { axis: root.attrs.axis, mode: root.attrs.mode },
    batchRank: root.type.batch.length,
    baseShape: base,
    reduce: null,
    inputs: inputDescs(b),
    outputs: [{ dtype: root.type.dtype, value, reduce: null }],
    exprs: b.exprs,
    unroll: false,
    ...(opts.relaxedFloat32 ? { relaxedFloat32: true } : {}),
  };
  return { kind: "kernel", kernel, inputs: b.inputs, outputs: [root], space: root };
}
