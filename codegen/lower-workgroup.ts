/**
 * Kernel IR → loop form for the workgroup (GPU) target (docs/ARCHITECTURE.md,
 * Kernel forms). The launch structure is this target's: one invocation per output
 * element; kernels that reduce batch axes, and base reductions too long for one
 * loop, give each output element a workgroup whose threads share the reduced
 * elements and fold their accumulators in shared memory (`treeReduction`); no
 * invocation loops more than `WGSL_LOOP_BUDGET` times, so long reductions and rows
 * run in chunks whose partials combine passes fold (`lowerCombine`,
 * `lowerRowCombine`). Geometry (chunk sizes, uniform layout) comes from
 * codegen/wgsl-launch.ts. The element expressions and the reductions' rules (start
 * values, step, merge of partials, final value) are the ones of
 * codegen/lower-loops.ts, with float32 accumulation (WGSL has no float64).
 */
import type { DType } from "../ir/dtype.js";
import { contiguousStrides, launchRank, numel, type KReduceOp, type Kernel } from "../ir/kernel.js";
import {
  accType,
  accumulate,
  accumulateRepeated,
  checkKernel,
  ExprLowering,
  finishValue,
  LoopBuilder,
  pairBetter,
  reduceStep,
  scatterShape,
  scatterUpdate,
  startAccumulator,
  strideBase,
  type Accumulator,
  type LoopTarget,
  type Scope,
} from "./lower-loops.js";
import type { LoopProgram } from "./loop.js";
import { lowerRoutineWorkgroup } from "./routines/lower.js";
import {
  WGSL_COMBINE_CHUNK,
  WGSL_ROW_COMBINE_CHUNK,
  WGSL_SCATTER_CHUNK,
  WGSL_WORKGROUP_SIZE,
  segmentRowBound,
  treeReduction,
  wgslChunk,
  wgslParamLayout,
} from "./wgsl-launch.js";

/** The GPU target: float32 accumulation. */
export const WORKGROUP_TARGET: LoopTarget = { accumulation: "float32" };

const W = WGSL_WORKGROUP_SIZE;
const isArg = (op: KReduceOp | null): boolean => op === "argmin" || op === "argmax";

/** What a tree or a combine pass keeps per output: its op and accumulator dtype (argmin/argmax: the compared values'). */
export interface PartialOut {
  readonly op: KReduceOp;
  readonly type: DType;
}

/** The partial description of each output of a reducing kernel. */
export function partialOuts(k: Kernel): PartialOut[] {
  return k.outputs.map((out) => ({
    op: out.reduce!,
    type: accType(out.reduce!, k.exprs[out.value]!.dtype, out.dtype, WORKGROUP_TARGET),
  }));
}

/** Dtype of an output's partials: pairs of int32 (value bits, position) for argmin/argmax, else the accumulator's. */
export function partialDType(o: PartialOut): DType {
  return isArg(o.op) ? "int32" : o.type;
}

const and = (b: LoopBuilder, x: number, y: number): number => b.let("bool", { k: "binary", op: "and", a: x, b: y });

/** The shared arrays of a workgroup tree: per output its accumulators (and argmin/argmax best values). */
interface Tree {
  readonly acc: number[];
  readonly best: number[];
}

function sharedTree(b: LoopBuilder, outs: readonly PartialOut[]): Tree {
  return {
    acc: outs.map((o) => b.sharedArray(isArg(o.op) ? "int32" : o.type, W)),
    best: outs.map((o) => (isArg(o.op) ? b.sharedArray(o.type, W) : -1)),
  };
}

/**
 * Folds the invocations' accumulators of the workgroup in shared memory: afterwards
 * element 0 of each shared array holds the workgroup's result. Every invocation runs it.
 */
function foldTree(b: LoopBuilder, outs: readonly PartialOut[], accs: readonly Accumulator[], tree: Tree): void {
  const lane = b.let("index", { k: "builtin", name: "lane" });
  outs.forEach((o, j) => {
    const a = accs[j]!;
    if (isArg(o.op)) {
      b.stmt({ k: "sstore", buf: tree.best[j]!, at: lane, value: b.get(a.acc) });
      b.stmt({ k: "sstore", buf: tree.acc[j]!, at: lane, value: b.get(a.arg) });
    } else b.stmt({ k: "sstore", buf: tree.acc[j]!, at: lane, value: b.get(a.acc) });
  });
  b.stmt({ k: "barrier" });
  for (let s = W >> 1; s > 0; s >>= 1) {
    b.when(b.icmp("lt", lane, b.index(s)));
    const other = b.idx("add", lane, b.index(s));
    outs.forEach((o, j) => {
      const sload = (buf: number, at: number, d: DType): number => b.let(d, { k: "sload", buf, at });
      if (isArg(o.op)) {
        const pb = sload(tree.best[j]!, lane, o.type);
        const pi = sload(tree.acc[j]!, lane, "int32");
        const qb = sload(tree.best[j]!, other, o.type);
        const qi = sload(tree.acc[j]!, other, "int32");
        // The upper half's candidate when it is better, or as good and earlier.
        b.when(pairBetter(b, o.op, o.type, qb, qi, pb, pi));
        b.stmt({ k: "sstore", buf: tree.best[j]!, at: lane, value: qb });
        b.stmt({ k: "sstore", buf: tree.acc[j]!, at: lane, value: qi });
        b.end();
      } else {
        const p = sload(tree.acc[j]!, lane, o.type);
        const q = sload(tree.acc[j]!, other, o.type);
        b.stmt({ k: "sstore", buf: tree.acc[j]!, at: lane, value: reduceStep(b, o.op, o.type, p, q) });
      }
    });
    b.end();
    b.stmt({ k: "barrier" });
  }
}

/** Writes a result held in (`best`, `acc`) values as partial `pk` of output j (pairs for argmin/argmax). */
function storePartial(b: LoopBuilder, o: PartialOut, j: number, pk: number, value: number, arg: number): void {
  if (isArg(o.op)) {
    const two = b.idx("mul", pk, b.index(2));
    b.store(j, two, b.let("int32", { k: "bits", x: value }));
    b.store(j, b.idx("add", two, b.index(1)), arg);
  } else b.store(j, pk, value);
}

/** Folds partial `k` of output j (read from input `buf`) into its accumulator. */
function foldPartial(b: LoopBuilder, o: PartialOut, a: Accumulator, buf: number, k: number): void {
  if (isArg(o.op)) {
    const two = b.idx("mul", k, b.index(2));
    const qb = b.let(o.type, { k: "bits", x: b.let("int32", { k: "load", buf, at: two }) });
    const qi = b.let("int32", { k: "load", buf, at: b.idx("add", two, b.index(1)) });
    b.when(pairBetter(b, o.op, o.type, qb, qi, b.get(a.acc), b.get(a.arg)));
    b.set(a.acc, qb);
    b.set(a.arg, qi);
    b.end();
  } else b.set(a.acc, reduceStep(b, o.op, o.type, b.get(a.acc), b.let(o.type, { k: "load", buf, at: k })));
}

/** Lowers a kernel for the workgroup target (the main pass of its launch). */
export function lowerKernelWorkgroup(k: Kernel): LoopProgram {
  if (k.scatter !== undefined) return lowerScatterWorkgroup(k);
  // Looped matrix routines: one invocation per batch element (codegen/routines/).
  if (k.routine !== undefined) return lowerRoutineWorkgroup(k);
  checkKernel(k);
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

  // Segmented kernels: the row b0, its segment [lo, hi) and the position t (set below).
  let b0 = (): number => batchVar.get(0)!;
  let lo = (): number => lit(0);
  let tVar = (): number => lit(0);
  let insideV = -1;
  const pointer = (i: number): number => {
    const inp = k.inputs[i]!;
    if (seg !== undefined) {
      if (inp.padded)
        return b.idx("add", b.idx("mul", b0(), stride(i, 0)), b.idx("mul", b.idx("sub", tVar(), lo()), stride(i, 1)));
      if (inp.batchRank === 1) return b.idx("mul", inp.packed ? tVar() : b0(), stride(i, 0));
      if (inp.batchRank === 2) return b.idx("mul", b0(), stride(i, 0));
      return lit(0);
    }
    let p = lit(0);
    for (let d = 0; d < inp.batchRank; d++)
      p = b.idx("add", p, b.idx("mul", batchVar.get(R - inp.batchRank + d)!, stride(i, d)));
    return p;
  };
  const padInside = (i: number): number => {
    const s0 = stride(i, 0);
    const s1 = stride(i, 1);
    const m = b.idx("div", s0, b.idx("max", s1, lit(1)));
    return b.icmp("lt", b.idx("sub", tVar(), lo()), m);
  };
  const scope: Scope = { axisVar, pointer, padInside, inside: () => insideV };
  // Every value of the kernel body is computed where the body is (dead values too, as the IR says).
  const value = (i: number): number => {
    const memo = new Map<number, number>();
    k.exprs.forEach((_, j) => lowering.value(j, new Map(), scope, memo));
    return memo.get(i)!;
  };

  if (seg !== undefined) {
    const out = k.outputs[0]!;
    const C = wgslChunk(k);
    const S = numel(k.baseShape);
    const st = contiguousStrides(k.baseShape);
    const at = (): number => st.reduce((acc, s, a) => b.idx("add", acc, b.idx("mul", axisVar.get(a)!, lit(s))), lit(0));
    const offsType = k.inputs[seg.offsets]!.dtype;
    const offs = (i: number): number => b.cast(b.let(offsType, { k: "load", buf: seg.offsets, at: i }), "index");
    const bq = batchVar.get(0)!;
    const bound = seg.mode === "reduce" ? segmentRowBound(k) : "none";
    // A reduce over packed values runs in passes (see `WGSLLaunchPlan.windows`): the rows
    // pass (chunks = 1) and the windows pass (chunks = 2) of the same kernel.
    const windowed = seg.mode === "reduce" && bound === "packed";
    const mapped = seg.mode === "map";
    const rowLocal = b.local("index");
    /** The row holding packed position `pos`: the last row whose offset is <= pos (at most 32 halvings). */
    const findRow = (pos: number): void => {
      const ra = b.local("index");
      const rz = b.local("index");
      b.set(ra, lit(0));
      b.set(rz, b.idx("sub", size(0), lit(1)));
      b.loop(lit(0), lit(32));
      b.when(b.icmp("ge", b.idx("add", b.get(ra), lit(1)), b.get(rz)));
      b.stmt({ k: "break" });
      b.end();
      const mid = b.idx("div", b.idx("add", b.get(ra), b.get(rz)), lit(2));
      b.when(b.icmp("le", offs(mid), pos));
      b.set(ra, mid);
      b.otherwise();
      b.set(rz, mid);
      b.end();
      b.end();
      b.set(rowLocal, b.get(ra));
    };
    const packedN = (): number => offs(b.idx("sub", size(0), lit(1)));
    let phase = -1;
    let w = -1;
    if (mapped) {
      // One invocation per window of C packed positions (and base point); it walks their rows.
      const t0 = b.idx("mul", bq, lit(C));
      const t1 = b.idx("min", packedN(), b.idx("add", t0, lit(C)));
      b.when(b.icmp("ge", t0, t1));
      b.stmt({ k: "return" });
      b.end();
      b.set(rowLocal, lit(0));
      findRow(t0);
      const loL = b.local("index");
      const hiL = b.local("index");
      b.set(loL, offs(b.get(rowLocal)));
      b.set(hiL, offs(b.idx("add", b.get(rowLocal), lit(1))));
      b0 = () => b.get(rowLocal);
      lo = () => b.get(loL);
      const tv = b.loop(t0, t1);
      tVar = () => tv;
      // The next rows: a few steps forward, then (past many empty rows) a binary search.
      b.loop(lit(0), lit(8));
      b.when(b.icmp("lt", tv, b.get(hiL)));
      b.stmt({ k: "break" });
      b.end();
      b.set(rowLocal, b.idx("add", b.get(rowLocal), lit(1)));
      b.set(loL, b.get(hiL));
      b.set(hiL, offs(b.idx("add", b.get(rowLocal), lit(1))));
      b.end();
      b.when(b.icmp("ge", tv, b.get(hiL)));
      findRow(tv);
      b.set(loL, offs(b.get(rowLocal)));
      b.set(hiL, offs(b.idx("add", b.get(rowLocal), lit(1))));
      b.end();
      const v = value(out.value);
      b.store(0, b.idx("add", b.idx("mul", tv, lit(S)), at()), b.cast(v, out.dtype));
      b.end();
    } else {
      if (windowed) {
        phase = chunks;
        w = b.idx("div", bq, lit(2));
        b.set(rowLocal, bq);
        b.when(b.icmp("eq", phase, lit(2)));
        // Window w covers positions [w C, (w + 1) C); slot 0 the row holding its first position, slot 1 its last.
        const pn = packedN();
        b.when(b.icmp("ge", b.idx("mul", w, lit(C)), pn));
        b.stmt({ k: "return" });
        b.end();
        const first = b.idx("mul", w, lit(C));
        const last = b.idx("sub", b.idx("min", pn, b.idx("mul", b.idx("add", w, lit(1)), lit(C))), lit(1));
        const odd = b.icmp("eq", b.idx("mod", bq, lit(2)), lit(1));
        findRow(b.let("index", { k: "where", c: odd, a: last, b: first }));
        b.end();
      } else b.set(rowLocal, bq);
      const row = b.get(rowLocal);
      const loV = offs(row);
      const hiV = offs(b.idx("add", row, lit(1)));
      b0 = () => row;
      lo = () => loV;
      if (seg.mode === "reduce") {
        const op = out.reduce!;
        const n = b.idx("sub", hiV, loV);
        const a = startAccumulator(b, op, k.exprs[out.value]!.dtype, out.dtype, t, () => b.icmp("eq", n, lit(0)));
        const o: PartialOut = { op, type: a.type };
        const partial = (pk: number): void => {
          storePartial(
            b,
            o,
            0,
            pk,
            isArg(op) ? b.get(a.acc) : b.cast(b.get(a.acc), out.dtype),
            isArg(op) ? b.get(a.arg) : -1,
          );
        };
        if (windowed) {
          // Rows pass: rows of at most C positions, whole. Windows pass: one chunk of a long
          // row, its partial in slot gi; a row-combine pass finishes long rows.
          const t0L = b.local("index");
          const t1L = b.local("index");
          b.set(t0L, loV);
          b.set(t1L, hiV);
          b.when(b.icmp("eq", phase, lit(1)));
          b.when(b.icmp("gt", n, lit(C)));
          b.stmt({ k: "return" });
          b.end();
          b.otherwise();
          b.when(b.icmp("eq", b.idx("mod", bq, lit(2)), lit(0)));
          const kk = b.idx("div", b.idx("add", b.idx("sub", b.idx("mul", w, lit(C)), loV), lit(C - 1)), lit(C));
          const t0 = b.idx("add", loV, b.idx("mul", kk, lit(C)));
          b.set(t0L, t0);
          b.set(t1L, b.idx("min", hiV, b.idx("add", t0, lit(C))));
          b.when(b.let("bool", { k: "binary", op: "or", a: b.icmp("eq", kk, lit(0)), b: b.icmp("ge", t0, hiV) }));
          b.stmt({ k: "return" });
          b.end();
          b.otherwise();
          b.when(
            b.let("bool", {
              k: "binary",
              op: "or",
              a: b.icmp("lt", loV, b.idx("mul", w, lit(C))),
              b: b.icmp("le", n, lit(C)),
            }),
          );
          b.stmt({ k: "return" });
          b.end();
          b.set(t1L, b.idx("add", loV, lit(C)));
          b.end();
          b.end();
          const tv = b.loop(b.get(t0L), b.get(t1L));
          tVar = () => tv;
          accumulate(b, a, value(out.value), b.idx("sub", tv, loV));
          b.end();
          b.when(b.icmp("eq", phase, lit(2)));
          partial(gi);
          b.stmt({ k: "return" });
          b.end();
        } else {
          // The loop walks the positions whose values depend on t (see `segmentRowBound`): the
          // first M (the padded length) when only padded tensors are read; none when nothing
          // depends on t. Past them every position gives the same value, folded once in
          // closed form. Chunk g of a row: positions [g C, (g + 1) C).
          const loaded = new Set(k.exprs.flatMap((e) => (e.k === "load" || e.k === "gather" ? [e.input] : [])));
          const ms = k.inputs.flatMap((inp, i) =>
            inp.padded && loaded.has(i) ? [b.idx("div", stride(i, 0), b.idx("max", stride(i, 1), lit(1)))] : [],
          );
          const span =
            bound === "padded"
              ? b.idx(
                  "min",
                  n,
                  ms.reduce((x, m) => b.idx("max", x, m)),
                )
              : lit(0);
          if (bound !== "none") {
            const t0 = b.idx("add", loV, b.idx("min", span, b.idx("mul", g, lit(C))));
            const t1 = b.idx("add", loV, b.idx("min", span, b.idx("mul", b.idx("add", g, lit(1)), lit(C))));
            const tv = b.loop(t0, t1);
            tVar = () => tv;
            accumulate(b, a, value(out.value), b.idx("sub", tv, loV));
            b.end();
          }
          b.when(b.let("bool", { k: "binary", op: "and", a: b.icmp("eq", g, lit(0)), b: b.icmp("lt", span, n) }));
          const tc = b.idx("add", loV, span);
          tVar = () => tc;
          accumulateRepeated(b, a, value(out.value), b.idx("sub", n, span), span);
          b.end();
          // Several chunks: this chunk's partial (mean: the sum), folded by combine passes.
          b.when(b.icmp("gt", chunks, lit(1)));
          partial(b.idx("add", b.idx("mul", gi, chunks), g));
          b.stmt({ k: "return" });
          b.end();
        }
        const arg = a.arg >= 0 ? b.get(a.arg) : -1;
        b.store(
          0,
          gi,
          finishValue(b, op, a.type, arg >= 0 ? -1 : b.get(a.acc), arg, out.dtype, () => n),
        );
      } else {
        // pad: maxN -1 pads to the longest row, a run-time size (the launch's second batch size).
        const maxN = seg.maxN! >= 0 ? lit(seg.maxN!) : size(1);
        const len = b.idx("min", b.idx("sub", hiV, loV), maxN);
        const start = seg.left ? b.idx("sub", maxN, len) : lit(0);
        // Chunk g of a padded row: positions [g C, (g + 1) C).
        const n1 = b.idx("min", maxN, b.idx("mul", b.idx("add", g, lit(1)), lit(C)));
        const nv = b.loop(b.idx("min", maxN, b.idx("mul", g, lit(C))), n1);
        insideV = b.let("bool", {
          k: "binary",
          op: "and",
          a: b.icmp("ge", nv, start),
          b: b.icmp("lt", nv, b.idx("add", start, len)),
        });
        const tv = b.let("index", { k: "where", c: insideV, a: b.idx("sub", b.idx("add", loV, nv), start), b: loV });
        tVar = () => tv;
        // The output expression says what padding positions hold (see `Segment`).
        const v = value(out.value);
        const pos = b.idx("add", b.idx("mul", b.idx("add", b.idx("mul", row, maxN), nv), lit(S)), at());
        b.store(0, pos, b.cast(v, out.dtype));
        b.end();
      }
    }
  } else if (k.reduce === null) {
    k.outputs.forEach((out, j) => b.store(j, gi, b.cast(value(out.value), out.dtype)));
  } else {
    const reduced = [
      ...redBatch.map((a) => ({ set: (v: number) => batchVar.set(a, v), size: () => size(a), len: -1 })),
      ...redBase.map((a) => ({
        set: (v: number) => axisVar.set(a, v),
        size: () => lit(k.baseShape[a]!),
        len: k.baseShape[a]!,
      })),
    ];
    const rn = (): number => reduced.reduce((c, x) => b.idx("mul", c, x.size()), lit(1));
    const baseCount = numel(redBase.map((a) => k.baseShape[a]!));
    // Whether the reduction is empty (an empty sum starts at +0).
    const empty =
      baseCount === 0
        ? ("always" as const)
        : redBatch.length === 0
          ? ("never" as const)
          : () => b.icmp("eq", rn(), lit(0));
    const accs = k.outputs.map((out) =>
      startAccumulator(b, out.reduce!, k.exprs[out.value]!.dtype, out.dtype, t, empty),
    );
    const fold = (pos: number): void => {
      k.outputs.forEach((out, j) => accumulate(b, accs[j]!, value(out.value), pos));
    };
    if (tree) {
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
      // One chunk: the result. Several: this chunk's partial, folded by combine passes.
      b.when(and(b, lane0, b.icmp("gt", chunks, lit(1))));
      const pk = b.idx("add", b.idx("mul", gi, chunks), g);
      outs.forEach((o, j) => {
        const v = b.let(isArg(o.op) ? "int32" : o.type, { k: "sload", buf: shared.acc[j]!, at: lit(0) });
        if (isArg(o.op)) storePartial(b, o, j, pk, b.let(o.type, { k: "sload", buf: shared.best[j]!, at: lit(0) }), v);
        else storePartial(b, o, j, pk, b.cast(v, k.outputs[j]!.dtype), -1);
      });
      b.end();
      b.when(and(b, lane0, b.icmp("eq", chunks, lit(1))));
      outs.forEach((o, j) => {
        const v = b.let(isArg(o.op) ? "int32" : o.type, { k: "sload", buf: shared.acc[j]!, at: lit(0) });
        b.store(j, gi, finishValue(b, o.op, o.type, v, v, k.outputs[j]!.dtype, rn));
      });
      b.end();
    } else {
      for (const x of reduced) x.set(b.loop(lit(0), x.size()));
      const first = redBatch.length > 0 ? batchVar.get(redBatch[0]!)! : axisVar.get(redBase[0]!)!;
      fold(first);
      for (const _ of reduced) b.end();
      k.outputs.forEach((out, j) => {
        const a = accs[j]!;
        const arg = a.arg >= 0 ? b.get(a.arg) : -1;
        b.store(j, gi, finishValue(b, a.op, a.type, arg >= 0 ? -1 : b.get(a.acc), arg, out.dtype, rn));
      });
    }
  }
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

/**
 * Whether the final combine pass reads the offsets (after the partials): a segmented
 * mean divides by its row's length, a segmented float32 sum of an empty row is +0.
 */
export function combineReadsOffsets(k: Kernel): boolean {
  return (
    k.segment !== undefined &&
    k.outputs.some((o) => o.reduce === "mean" || (o.reduce === "sum" && o.dtype === "float32"))
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

// --- scatter kernels ---

/**
 * A scatter kernel on the workgroup target (see `ScatterSpec` in ir/kernel.ts). The
 * `chunks` parameter slot holds the pass: pass 0 copies x, one invocation per output
 * element (`count` of them); pass p >= 1 runs update positions [(p-1) C, p C) of the
 * update shape in order, one invocation per batch element (`count` is then the batch
 * element count), so no invocation loops more than C = WGSL_SCATTER_CHUNK times and
 * duplicate positions of a batch element combine in update order. The backend
 * dispatches the passes one after another (`scatterPasses`).
 */
function lowerScatterWorkgroup(k: Kernel): LoopProgram {
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
  const pointer = (i: number): number => {
    const inp = k.inputs[i]!;
    let p = lit(0);
    for (let d = 0; d < inp.batchRank; d++) {
      const s = b.let("index", { k: "stride", i: strideAt[i]! + d });
      p = b.idx("add", p, b.idx("mul", batchVar.get(R - inp.batchRank + d)!, s));
    }
    return p;
  };
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
