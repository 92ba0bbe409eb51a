/**
 * What every main-pass lowering of the workgroup target starts from: the invocation's
 * linear index and chunk, the early return past the launch's count, the kept batch
 * and base axes' variables decoded from that index, and the scope the element
 * expressions are lowered in (pointers, the segmented kernels' row, segment start and
 * position, which a segmented lowering sets).
 */
import { launchRank, type Kernel } from "../../ir/kernel.js";
import { batchPointer, strideBase } from "../loop-builder.js";
import { ExprLowering, LoopBuilder, type LoopTarget, type Scope } from "../lower-loops.js";
import type { LoopProgram } from "../loop.js";
import { WGSL_WORKGROUP_SIZE, segmentRowBound, treeReduction, wgslParamLayout } from "../wgsl-launch.js";
import { WORKGROUP_TARGET } from "./partials.js";

const W = WGSL_WORKGROUP_SIZE;

/** A main pass being lowered (see the module comment). */
export interface WorkgroupKernel {
  readonly k: Kernel;
  readonly b: LoopBuilder;
  readonly t: LoopTarget;
  /** Whether the kernel is a workgroup tree reduction (`treeReduction`). */
  readonly tree: boolean;
  /** The reduced batch and base axes, ascending. */
  readonly redBatch: readonly number[];
  readonly redBase: readonly number[];
  /** The invocation's index in its workgroup. */
  readonly lane: number;
  /** The output element (or window, row) this invocation computes, and its chunk. */
  readonly gi: number;
  readonly g: number;
  /** The `chunks` parameter (trees and segmented kernels), else the literal 1. */
  readonly chunks: number;
  /** The variables of the kept and (once a lowering sets them) reduced axes. */
  readonly batchVar: Map<number, number>;
  readonly axisVar: Map<number, number>;
  /** A segmented kernel's row, segment start and position; `inside` is the pad mask's value (-1: none). */
  seg: { b0: () => number; lo: () => number; t: () => number; inside: number };
  size(a: number): number;
  stride(i: number, d: number): number;
  lit(v: number): number;
  param(slot: number, name: string): number;
  /** The value of expr `i` (every value of the kernel body is computed where the body is, dead ones too, as the IR says). */
  value(i: number): number;
  finish(): LoopProgram;
}

export function workgroupKernel(k: Kernel): WorkgroupKernel {
  const b = new LoopBuilder();
  const t = WORKGROUP_TARGET;
  const layout = wgslParamLayout(k);
  const strideAt = strideBase(k);
  const tree = treeReduction(k);
  const seg = k.segment;
  const R = k.batchRank;
  const redBatch = [...(k.reduce?.batchAxes ?? [])].sort((x, y) => x - y);
  const redBase = [...(k.reduce?.baseAxes ?? [])].sort((x, y) => x - y);
  const lowering = new ExprLowering(b, k, t);
  const param = (slot: number, name: string): number => b.let("index", { k: "param", i: slot, name });
  const size = (a: number): number => b.let("index", { k: "size", i: a });
  const stride = (i: number, d: number): number => b.let("index", { k: "stride", i: strideAt[i]! + d });
  const lit = (v: number): number => b.index(v);

  // The invocation's linear index: a tree reduction gives each output element and chunk a
  // whole workgroup; segmented kernels and trees cut their long loop into `chunks` chunks.
  const wg = b.let("index", { k: "builtin", name: "workgroup" });
  const lane = b.let("index", { k: "builtin", name: "lane" });
  const gw = tree ? wg : b.idx("add", b.idx("mul", wg, lit(W)), lane);
  const unchunked =
    seg !== undefined && (seg.mode === "map" || (seg.mode === "reduce" && segmentRowBound(k) === "packed"));
  const chunks = tree || seg !== undefined ? param(layout.chunks, "chunks") : lit(1);
  let gi = gw;
  let g = lit(0);
  if ((tree || seg !== undefined) && !unchunked) {
    gi = b.idx("div", gw, chunks);
    g = b.idx("mod", gw, chunks);
  }
  b.when(b.icmp("ge", gi, param(layout.count, "count")));
  b.stmt({ k: "return" });
  b.end();

  // gi over the kept axes: kept batch axes (outer), then kept base axes.
  const batchVar = new Map<number, number>();
  const axisVar = new Map<number, number>();
  const keptBatch = [...Array(R).keys()].filter((a) => !redBatch.includes(a));
  const keptBase = k.baseShape.map((_, a) => a).filter((a) => !redBase.includes(a));
  const kept = [
    ...keptBatch.map((a) => ({ set: (v: number) => batchVar.set(a, v), size: () => size(a) })),
    // An empty base axis means no output elements (the invocation returned above).
    ...keptBase.map((a) => ({ set: (v: number) => axisVar.set(a, v), size: () => lit(Math.max(1, k.baseShape[a]!)) })),
  ];
  let r = gi;
  for (let i = kept.length - 1; i >= 1; i--) {
    const s = kept[i]!.size();
    kept[i]!.set(b.idx("mod", r, s));
    r = b.idx("div", r, s);
  }
  if (kept.length > 0) kept[0]!.set(r);

  // Segmented kernels: the row b0, its segment [lo, hi) and the position t (set by the lowering).
  const segState = {
    b0: (): number => batchVar.get(0)!,
    lo: (): number => lit(0),
    t: (): number => lit(0),
    inside: -1,
  };
  const pointer = (i: number): number => {
    const inp = k.inputs[i]!;
    if (seg !== undefined) {
      if (inp.padded)
        return b.idx(
          "add",
          b.idx("mul", segState.b0(), stride(i, 0)),
          b.idx("mul", b.idx("sub", segState.t(), segState.lo()), stride(i, 1)),
        );
      if (inp.batchRank === 1) return b.idx("mul", inp.packed ? segState.t() : segState.b0(), stride(i, 0));
      if (inp.batchRank === 2) return b.idx("mul", segState.b0(), stride(i, 0));
      return lit(0);
    }
    return batchPointer(b, k, strideAt, (a) => batchVar.get(a)!, i);
  };
  const padInside = (i: number): number => {
    const s0 = stride(i, 0);
    const s1 = stride(i, 1);
    const m = b.idx("div", s0, b.idx("max", s1, lit(1)));
    return b.icmp("lt", b.idx("sub", segState.t(), segState.lo()), m);
  };
  const scope: Scope = { axisVar, pointer, padInside, inside: () => segState.inside };
  return {
    k,
    b,
    t,
    tree,
    redBatch,
    redBase,
    lane,
    gi,
    g,
    chunks,
    batchVar,
    axisVar,
    seg: segState,
    size,
    stride,
    lit,
    param,
    value(i: number): number {
      const memo = new Map<number, number>();
      k.exprs.forEach((_, j) => lowering.value(j, new Map(), scope, memo));
      return memo.get(i)!;
    },
    finish: () =>
      b.finish(
        k,
        launchRank(k),
        k.inputs.reduce((n, inp) => n + inp.batchRank, 0),
        { workgroupSize: W, params: layout.length },
      ),
  };
}
