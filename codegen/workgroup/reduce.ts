/**
 * The main passes of unsegmented kernels on the workgroup target, one invocation (or,
 * for a tree, one workgroup) per output element: `lowerElementwise` (no reduction),
 * `lowerLoopReduce` (a short base reduction, looped by the invocation) and
 * `lowerTreeReduce` (reduced batch axes or a long base reduction: the workgroup's
 * invocations share a chunk of the reduced space and fold their accumulators in shared
 * memory; with several chunks each writes a partial for the combine passes).
 */
import { numel } from "../../ir/kernel.js";
import { accumulate, finishValue, startAccumulator, type Accumulator } from "../lower-loops.js";
import { WGSL_WORKGROUP_SIZE, wgslChunk } from "../wgsl-launch.js";
import type { WorkgroupKernel } from "./kernel.js";
import { foldTree, isArg, partialOuts, sharedTree, storePartial } from "./partials.js";

const W = WGSL_WORKGROUP_SIZE;

/** Elementwise: each output at the invocation's element. */
export function lowerElementwise(w: WorkgroupKernel): void {
  w.k.outputs.forEach((out, j) => w.b.store(j, w.gi, w.b.cast(w.value(out.value), out.dtype)));
}

/** The reduced axes, their element count, and the outputs' accumulators (started). */
interface Reduction {
  readonly reduced: readonly { set: (v: number) => void; size: () => number; len: number }[];
  readonly rn: () => number;
  readonly accs: readonly Accumulator[];
  /** Folds every output's value at the current point (position `pos`) into its accumulator. */
  readonly fold: (pos: number) => void;
}

function reduction(w: WorkgroupKernel): Reduction {
  const { k, b, lit } = w;
  const reduced = [
    ...w.redBatch.map((a) => ({ set: (v: number) => w.batchVar.set(a, v), size: () => w.size(a), len: -1 })),
    ...w.redBase.map((a) => ({
      set: (v: number) => w.axisVar.set(a, v),
      size: () => lit(k.baseShape[a]!),
      len: k.baseShape[a]!,
    })),
  ];
  const rn = (): number => reduced.reduce((c, x) => b.idx("mul", c, x.size()), lit(1));
  const baseCount = numel(w.redBase.map((a) => k.baseShape[a]!));
  // Whether the reduction is empty (an empty sum starts at +0).
  const empty =
    baseCount === 0
      ? ("always" as const)
      : w.redBatch.length === 0
        ? ("never" as const)
        : () => b.icmp("eq", rn(), lit(0));
  const accs = k.outputs.map((out) =>
    startAccumulator(b, out.reduce!, k.exprs[out.value]!.dtype, out.dtype, w.t, empty),
  );
  const fold = (pos: number): void => {
    k.outputs.forEach((out, j) => accumulate(b, accs[j]!, w.value(out.value), pos));
  };
  return { reduced, rn, accs, fold };
}

/** A reduction one invocation loops over whole (the reduced axes' nested loops). */
export function lowerLoopReduce(w: WorkgroupKernel): void {
  const { k, b } = w;
  const { reduced, rn, accs, fold } = reduction(w);
  for (const x of reduced) x.set(b.loop(w.lit(0), x.size()));
  const first = w.redBatch.length > 0 ? w.batchVar.get(w.redBatch[0]!)! : w.axisVar.get(w.redBase[0]!)!;
  fold(first);
  for (const _ of reduced) b.end();
  k.outputs.forEach((out, j) => {
    const a = accs[j]!;
    const arg = a.arg >= 0 ? b.get(a.arg) : -1;
    b.store(j, w.gi, finishValue(b, a.op, a.type, arg >= 0 ? -1 : b.get(a.acc), arg, out.dtype, rn));
  });
}

/** A workgroup tree reduction over chunk `g` of the reduced space (see the module comment). */
export function lowerTreeReduce(w: WorkgroupKernel): void {
  const { k, b, lit, lane, gi, g, chunks } = w;
  const { reduced, rn, accs, fold } = reduction(w);
  // The workgroup's chunk of the reduced space, [r0, r1), strided over its invocations.
  const C = wgslChunk(k);
  const r0 = b.idx("mul", g, lit(C));
  const r1 = b.idx("min", rn(), b.idx("add", r0, lit(C)));
  const ri = b.loop(b.idx("add", r0, lane), r1, lit(W));
  let rq = ri;
  const vars: number[] = [];
  for (let i = reduced.length - 1; i >= 1; i--) {
    // An empty reduced base axis makes rn 0 (no iteration); 1 keeps `% 0` out of the source.
    const s = reduced[i]!.len === 0 ? lit(1) : reduced[i]!.size();
    vars[i] = b.idx("mod", rq, s);
    rq = b.idx("div", rq, s);
  }
  vars[0] = rq;
  reduced.forEach((x, i) => x.set(vars[i]!));
  fold(vars[0]);
  b.end();
  const outs = partialOuts(k);
  const shared = sharedTree(b, outs);
  foldTree(b, outs, accs, shared);
  const lane0 = b.icmp("eq", lane, lit(0));
  const and = (x: number, y: number): number => b.let("bool", { k: "binary", op: "and", a: x, b: y });
  // One chunk: the result. Several: this chunk's partial, folded by combine passes.
  b.when(and(lane0, b.icmp("gt", chunks, lit(1))));
  const pk = b.idx("add", b.idx("mul", gi, chunks), g);
  outs.forEach((o, j) => {
    const v = b.let(isArg(o.op) ? "int32" : o.type, { k: "sload", buf: shared.acc[j]!, at: lit(0) });
    if (isArg(o.op)) storePartial(b, o, j, pk, b.let(o.type, { k: "sload", buf: shared.best[j]!, at: lit(0) }), v);
    else storePartial(b, o, j, pk, b.cast(v, k.outputs[j]!.dtype), -1);
  });
  b.end();
  b.when(and(lane0, b.icmp("eq", chunks, lit(1))));
  outs.forEach((o, j) => {
    const v = b.let(isArg(o.op) ? "int32" : o.type, { k: "sload", buf: shared.acc[j]!, at: lit(0) });
    b.store(j, gi, finishValue(b, o.op, o.type, v, v, k.outputs[j]!.dtype, rn));
  });
  b.end();
}
