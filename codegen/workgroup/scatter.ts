/**
 * Scatter kernels on the workgroup target: a copy pass, then update passes of
 * `WGSL_SCATTER_CHUNK` positions, one invocation per batch element.
 */
import { launchRank, numel, type Kernel } from "../../ir/kernel.js";
import { batchPointer, strideBase } from "../loop-builder.js";
import { checkKernel, LoopBuilder, scatterShape, scatterUpdate } from "../lower-loops.js";
import type { LoopProgram } from "../loop.js";
import { WGSL_SCATTER_CHUNK, WGSL_WORKGROUP_SIZE, wgslParamLayout } from "../wgsl-launch.js";

const W = WGSL_WORKGROUP_SIZE;

/**
 * A scatter kernel on the workgroup target (see `ScatterSpec` in ir/kernel.ts). The
 * `chunks` parameter slot holds the pass: pass 0 copies x, one invocation per output
 * element (`count` of them); pass p >= 1 runs update positions [(p-1) C, p C) of the
 * update shape in order, one invocation per batch element (`count` is then the batch
 * element count), so no invocation loops more than C = WGSL_SCATTER_CHUNK times and
 * duplicate positions of a batch element combine in update order. The plan (codegen/gpu-plan.ts) runs the passes one after
 * another (`scatterPasses`).
 */
export function lowerScatterWorkgroup(k: Kernel): LoopProgram {
  checkKernel(k);
  const b = new LoopBuilder();
  const layout = wgslParamLayout(k);
  const strideAt = strideBase(k);
  const R = k.batchRank;
  const S = numel(k.baseShape);
  const lit = (v: number): number => b.index(v);
  const param = (slot: number, name: string): number => b.let("index", { k: "param", i: slot, name });
  const gw = b.idx(
    "add",
    b.idx("mul", b.let("index", { k: "builtin", name: "workgroup" }), lit(W)),
    b.let("index", { k: "builtin", name: "lane" }),
  );
  const pass = param(layout.chunks, "chunks");
  b.when(b.icmp("ge", gw, param(layout.count, "count")));
  b.stmt({ k: "return" });
  b.end();
  const batchVar = new Map<number, number>();
  /** Sets the batch variables from a flat batch element index. */
  const batchOf = (e: number): void => {
    let r = e;
    for (let a = R - 1; a >= 1; a--) {
      const size = b.let("index", { k: "size", i: a });
      batchVar.set(a, b.idx("mod", r, size));
      r = b.idx("div", r, size);
    }
    if (R > 0) batchVar.set(0, r);
  };
  const pointer = (i: number): number => batchPointer(b, k, strideAt, (a) => batchVar.get(a)!, i);
  // Pass 0: out[gw] = x at (batch element gw / S, base position gw % S).
  b.when(b.icmp("eq", pass, lit(0)));
  const Sd = lit(Math.max(1, S));
  batchOf(b.idx("div", gw, Sd));
  const x = k.inputs[0]!;
  const at = b.idx("add", pointer(0), b.idx("mod", gw, Sd));
  b.store(0, gw, b.cast(b.let(x.dtype, { k: "load", buf: 0, at }), k.outputs[0]!.dtype));
  b.stmt({ k: "return" });
  b.end();
  // Pass p >= 1: batch element gw, update positions [(p-1) C, min(U, p C)).
  batchVar.clear();
  batchOf(gw);
  const u = scatterShape(k);
  const U = numel(u);
  const C = WGSL_SCATTER_CHUNK;
  const u0 = b.idx("mul", b.idx("sub", pass, lit(1)), lit(C));
  const uv = b.loop(u0, b.idx("min", lit(U), b.idx("add", u0, lit(C))));
  const coords: number[] = new Array<number>(u.length);
  let r = uv;
  for (let d = u.length - 1; d >= 1; d--) {
    coords[d] = u[d] === 1 ? lit(0) : b.idx("mod", r, lit(u[d]!));
    r = u[d] === 1 ? r : b.idx("div", r, lit(u[d]!));
  }
  if (u.length > 0) coords[0] = r;
  scatterUpdate(b, k, b.idx("mul", gw, lit(S)), pointer, coords);
  b.end();
  return b.finish(
    k,
    launchRank(k),
    k.inputs.reduce((n, inp) => n + inp.batchRank, 0),
    {
      workgroupSize: W,
      params: layout.length,
    },
  );
}
