/**
 * The combine passes of a chunked reduction on the workgroup target: `lowerCombine`
 * folds the partials a chunked launch writes (into partials again, or into the
 * outputs), `lowerRowCombine` the chunk partials of a segmented reduce's long rows.
 * codegen/gpu-plan.ts plans when they run; codegen/wgsl-combine.ts prints them.
 */
import { numel, type Kernel } from "../../ir/kernel.js";
import { reductionFacts } from "../../ir/reductions.js";
import { finishValue, LoopBuilder, startAccumulator } from "../lower-loops.js";
import type { LoopProgram } from "../loop.js";
import { WGSL_COMBINE_CHUNK, WGSL_ROW_COMBINE_CHUNK, WGSL_WORKGROUP_SIZE, wgslChunk } from "../wgsl-launch.js";
import {
  foldPartial,
  foldTree,
  isArg,
  partialDType,
  partialOuts,
  sharedTree,
  storePartial,
  WORKGROUP_TARGET,
} from "./partials.js";

const W = WGSL_WORKGROUP_SIZE;

/**
 * Whether the final combine pass reads the offsets (after the partials): a segmented
 * reduction that divides (mean) divides by its row's length; one whose empty start
 * differs from its identity (sum: +0, not -0) needs to know a float32 row is empty
 * (ir/reductions.ts).
 */
export function combineReadsOffsets(k: Kernel): boolean {
  return (
    k.segment !== undefined &&
    k.outputs.some((o) => {
      const f = reductionFacts(o.reduce!);
      return f.divides === true || (f.emptyStart !== undefined && o.dtype === "float32");
    })
  );
}

/**
 * A combine pass of a reducing kernel: folds `partials` (param 1) partials per output
 * element into `chunksOut` (param 2) partials (each workgroup up to
 * `WGSL_COMBINE_CHUNK` of them), or, when `final`, into the outputs (a mean divides by
 * `reduced`, param 3, the whole reduced count, or for a segmented kernel by its row's
 * length read from the offsets). Inputs: one partials buffer per output, then the
 * offsets (final segmented passes that need them); outputs: the kernel's (final) or
 * partials again.
 */
export function lowerCombine(k: Kernel, final: boolean): LoopProgram {
  const b = new LoopBuilder();
  const outs = partialOuts(k);
  const seg = k.segment;
  const lit = (v: number): number => b.index(v);
  const param = (i: number, name: string): number => b.let("index", { k: "param", i, name });
  const needOffsets = final && combineReadsOffsets(k);
  const offsBuf = outs.length;
  const shared = sharedTree(b, outs);
  const lane = b.let("index", { k: "builtin", name: "lane" });
  const gw = b.let("index", { k: "builtin", name: "workgroup" });
  const chunksOut = param(2, "chunks_out");
  const partials = param(1, "partials");
  const gi = b.idx("div", gw, chunksOut);
  const g = b.idx("mod", gw, chunksOut);
  b.when(b.icmp("ge", gi, param(0, "count")));
  b.stmt({ k: "return" });
  b.end();
  let rows = -1;
  if (needOffsets) {
    const offsType = k.inputs[seg!.offsets]!.dtype;
    const offs = (at: number): number => b.cast(b.let(offsType, { k: "load", buf: offsBuf, at }), "index");
    const b0 = b.idx("div", gi, lit(Math.max(1, numel(k.baseShape))));
    rows = b.idx("sub", offs(b.idx("add", b0, lit(1))), offs(b0));
  }
  // An empty sum is +0: only a segmented row can be empty (its partials are then +0 too).
  const accs = k.outputs.map((out) =>
    startAccumulator(
      b,
      out.reduce!,
      k.exprs[out.value]!.dtype,
      out.dtype,
      WORKGROUP_TARGET,
      rows >= 0 ? () => b.icmp("eq", rows, lit(0)) : "never",
    ),
  );
  const r0 = b.idx("mul", g, lit(WGSL_COMBINE_CHUNK));
  const r1 = b.idx("min", partials, b.idx("add", r0, lit(WGSL_COMBINE_CHUNK)));
  const ri = b.loop(b.idx("add", r0, lane), r1, lit(W));
  const kk = b.idx("add", b.idx("mul", gi, partials), ri);
  outs.forEach((o, j) => foldPartial(b, o, accs[j]!, j, kk));
  b.end();
  foldTree(b, outs, accs, shared);
  b.when(b.icmp("eq", lane, lit(0)));
  outs.forEach((o, j) => {
    const v = b.let(isArg(o.op) ? "int32" : o.type, { k: "sload", buf: shared.acc[j]!, at: lit(0) });
    if (!final) {
      const pk = b.idx("add", b.idx("mul", gi, chunksOut), g);
      if (isArg(o.op)) storePartial(b, o, j, pk, b.let(o.type, { k: "sload", buf: shared.best[j]!, at: lit(0) }), v);
      else storePartial(b, o, j, pk, v, -1);
    } else {
      const count = (): number => (seg !== undefined ? rows : param(3, "reduced"));
      b.store(j, gi, finishValue(b, o.op, o.type, v, v, k.outputs[j]!.dtype, count));
    }
  });
  b.end();
  return b.finish(k, 0, 0, {
    inputs: [...outs.map(partialDType), ...(needOffsets ? [k.inputs[seg!.offsets]!.dtype] : [])],
    outputs: final ? k.outputs.map((o) => o.dtype) : outs.map(partialDType),
    workgroupSize: W,
    params: 4,
  });
}

/**
 * The row-combine pass of a segmented reduce over packed values: one invocation per
 * row, base point and part. Short rows (at most C positions, finished by the rows
 * pass) return at once. A long row's chunk partials from the windows pass sit in slot
 * 1 of window lo / C (chunk 0) and slot 0 of window lo / C + k (chunk k >= 1). Pass 0
 * (param 2 = 0) folds up to `WGSL_ROW_COMBINE_CHUNK` of them per part: the output when
 * there is one part (param 1), else the part's partial; pass 1 folds the parts'
 * partials into the output. Inputs: the partials, the offsets; output: the result (or
 * the parts' partials).
 */
export function lowerRowCombine(k: Kernel): LoopProgram {
  const b = new LoopBuilder();
  const o = partialOuts(k)[0]!;
  const out = k.outputs[0]!;
  const seg = k.segment!;
  const C = wgslChunk(k);
  const S = Math.max(1, numel(k.baseShape));
  const lit = (v: number): number => b.index(v);
  const param = (i: number, name: string): number => b.let("index", { k: "param", i, name });
  const gw = b.idx(
    "add",
    b.idx("mul", b.let("index", { k: "builtin", name: "workgroup" }), lit(W)),
    b.let("index", { k: "builtin", name: "lane" }),
  );
  const parts = param(1, "parts");
  const pass1 = b.icmp("eq", param(2, "pass"), lit(1));
  const gi = b.let("index", { k: "where", c: pass1, a: gw, b: b.idx("div", gw, parts) });
  const g = b.let("index", { k: "where", c: pass1, a: lit(0), b: b.idx("mod", gw, parts) });
  b.when(b.icmp("ge", gi, param(0, "count")));
  b.stmt({ k: "return" });
  b.end();
  const offsType = k.inputs[seg.offsets]!.dtype;
  const offs = (at: number): number => b.cast(b.let(offsType, { k: "load", buf: 1, at }), "index");
  const b0 = b.idx("div", gi, lit(S));
  const p = b.idx("mod", gi, lit(S));
  const lo = offs(b0);
  const n = b.idx("sub", offs(b.idx("add", b0, lit(1))), lo);
  b.when(b.icmp("le", n, lit(C)));
  b.stmt({ k: "return" });
  b.end();
  const nk = b.idx("div", b.idx("add", n, lit(C - 1)), lit(C));
  const w0 = b.idx("div", lo, lit(C));
  const a = startAccumulator(b, o.op, k.exprs[out.value]!.dtype, out.dtype, WORKGROUP_TARGET, "never");
  b.when(pass1);
  const j = b.loop(lit(0), parts);
  foldPartial(b, o, a, 0, b.idx("add", b.idx("mul", gi, parts), j));
  b.end();
  b.otherwise();
  const r1 = b.idx("min", nk, b.idx("mul", b.idx("add", g, lit(1)), lit(WGSL_ROW_COMBINE_CHUNK)));
  const kv = b.loop(b.idx("mul", g, lit(WGSL_ROW_COMBINE_CHUNK)), r1);
  const slot = b.let("index", {
    k: "where",
    c: b.icmp("eq", kv, lit(0)),
    a: b.idx("add", b.idx("mul", w0, lit(2)), lit(1)),
    b: b.idx("mul", b.idx("add", w0, kv), lit(2)),
  });
  foldPartial(b, o, a, 0, b.idx("add", b.idx("mul", slot, lit(S)), p));
  b.end();
  b.end();
  b.when(
    b.let("bool", {
      k: "binary",
      op: "and",
      a: b.let("bool", { k: "unary", op: "not", x: pass1 }),
      b: b.icmp("gt", parts, lit(1)),
    }),
  );
  storePartial(b, o, 0, b.idx("add", b.idx("mul", gi, parts), g), b.get(a.acc), isArg(o.op) ? b.get(a.arg) : -1);
  b.stmt({ k: "return" });
  b.end();
  const arg = a.arg >= 0 ? b.get(a.arg) : -1;
  b.store(
    0,
    gi,
    finishValue(b, o.op, o.type, arg >= 0 ? -1 : b.get(a.acc), arg, partialDType(o), () => n),
  );
  return b.finish(k, 0, 0, {
    inputs: [partialDType(o), offsType],
    outputs: [partialDType(o)],
    workgroupSize: W,
    params: 4,
  });
}
