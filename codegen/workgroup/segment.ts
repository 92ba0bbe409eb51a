/**
 * The main passes of segmented (jagged) kernels on the workgroup target: rows whose
 * lengths are data (the offsets). `lowerSegmentMap` writes every packed position (one
 * invocation per window of positions, walking their rows), `lowerSegmentReduce`
 * reduces each row (in chunks folded by combine passes, or over packed values in the
 * rows and windows passes folded by the row-combine pass), `lowerSegmentPad` writes
 * each row padded to a length.
 */
import { contiguousStrides, numel, type Segment } from "../../ir/kernel.js";
import { accumulate, accumulateRepeated, finishValue, startAccumulator } from "../lower-loops.js";
import { segmentRowBound, wgslChunk } from "../wgsl-launch.js";
import type { WorkgroupKernel } from "./kernel.js";
import { isArg, storePartial, type PartialOut } from "./partials.js";

/** What the three segmented lowerings share: the chunk, the output's base offset, the offsets' reads, row search. */
interface Rows {
  readonly seg: Segment;
  /** Positions of a row per invocation (or window). */
  readonly C: number;
  /** Base elements per position. */
  readonly S: number;
  /** The output's offset of the base point. */
  readonly at: () => number;
  /** Offset `i` (an index value) as an index. */
  readonly offs: (i: number) => number;
  /** The invocation's first batch variable: a row, or a window. */
  readonly bq: number;
  /** The current row (a local). */
  readonly rowLocal: number;
  /** Sets `rowLocal` to the row holding packed position `pos`. */
  readonly findRow: (pos: number) => void;
  /** The number of packed positions. */
  readonly packedN: () => number;
}

function rows(w: WorkgroupKernel): Rows {
  const { k, b, lit } = w;
  const seg = k.segment!;
  const C = wgslChunk(k);
  const S = numel(k.baseShape);
  const st = contiguousStrides(k.baseShape);
  const at = (): number => st.reduce((acc, s, a) => b.idx("add", acc, b.idx("mul", w.axisVar.get(a)!, lit(s))), lit(0));
  const offsType = k.inputs[seg.offsets]!.dtype;
  const offs = (i: number): number => b.cast(b.let(offsType, { k: "load", buf: seg.offsets, at: i }), "index");
  const bq = w.batchVar.get(0)!;
  const rowLocal = b.local("index");
  /** The row holding packed position `pos`: the last row whose offset is <= pos (at most 32 halvings). */
  const findRow = (pos: number): void => {
    const ra = b.local("index");
    const rz = b.local("index");
    b.set(ra, lit(0));
    b.set(rz, b.idx("sub", w.size(0), lit(1)));
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
  const packedN = (): number => offs(b.idx("sub", w.size(0), lit(1)));
  return { seg, C, S, at, offs, bq, rowLocal, findRow, packedN };
}

/** A map: one invocation per window of C packed positions (and base point); it walks their rows. */
export function lowerSegmentMap(w: WorkgroupKernel): void {
  const { k, b, lit } = w;
  const out = k.outputs[0]!;
  const { C, S, at, offs, bq, rowLocal, findRow, packedN } = rows(w);
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
  w.seg.b0 = () => b.get(rowLocal);
  w.seg.lo = () => b.get(loL);
  const tv = b.loop(t0, t1);
  w.seg.t = () => tv;
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
  const v = w.value(out.value);
  b.store(0, b.idx("add", b.idx("mul", tv, lit(S)), at()), b.cast(v, out.dtype));
  b.end();
}

/**
 * The invocation's row: for a reduce over packed values (`windowed`, see
 * `WGSLLaunchPlan.windows`) the windows pass (chunks = 2) finds it from its window,
 * else it is the first batch variable. Sets the scope's row and segment start.
 */
function rowOf(w: WorkgroupKernel, r: Rows, windowed: boolean): { row: number; loV: number; hiV: number; wv: number } {
  const { b, lit } = w;
  const { C, offs, bq, rowLocal, findRow, packedN } = r;
  let wv = -1;
  if (windowed) {
    const phase = w.chunks;
    wv = b.idx("div", bq, lit(2));
    b.set(rowLocal, bq);
    b.when(b.icmp("eq", phase, lit(2)));
    // Window w covers positions [w C, (w + 1) C); slot 0 the row holding its first position, slot 1 its last.
    const pn = packedN();
    b.when(b.icmp("ge", b.idx("mul", wv, lit(C)), pn));
    b.stmt({ k: "return" });
    b.end();
    const first = b.idx("mul", wv, lit(C));
    const last = b.idx("sub", b.idx("min", pn, b.idx("mul", b.idx("add", wv, lit(1)), lit(C))), lit(1));
    const odd = b.icmp("eq", b.idx("mod", bq, lit(2)), lit(1));
    findRow(b.let("index", { k: "where", c: odd, a: last, b: first }));
    b.end();
  } else b.set(rowLocal, bq);
  const row = b.get(rowLocal);
  const loV = offs(row);
  const hiV = offs(b.idx("add", row, lit(1)));
  w.seg.b0 = () => row;
  w.seg.lo = () => loV;
  return { row, loV, hiV, wv };
}

/** A per-row reduction (see the module comment). */
export function lowerSegmentReduce(w: WorkgroupKernel): void {
  const { k, b, lit, gi, g, chunks } = w;
  const out = k.outputs[0]!;
  const r = rows(w);
  const { C } = r;
  const bound = segmentRowBound(k);
  // A reduce over packed values runs in passes (see `WGSLLaunchPlan.windows`): the rows
  // pass (chunks = 1) and the windows pass (chunks = 2) of the same kernel.
  const windowed = bound === "packed";
  const { loV, hiV, wv } = rowOf(w, r, windowed);
  const op = out.reduce!;
  const n = b.idx("sub", hiV, loV);
  const a = startAccumulator(b, op, k.exprs[out.value]!.dtype, out.dtype, w.t, () => b.icmp("eq", n, lit(0)));
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
    const phase = chunks;
    const bq = r.bq;
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
    const kk = b.idx("div", b.idx("add", b.idx("sub", b.idx("mul", wv, lit(C)), loV), lit(C - 1)), lit(C));
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
        a: b.icmp("lt", loV, b.idx("mul", wv, lit(C))),
        b: b.icmp("le", n, lit(C)),
      }),
    );
    b.stmt({ k: "return" });
    b.end();
    b.set(t1L, b.idx("add", loV, lit(C)));
    b.end();
    b.end();
    const tv = b.loop(b.get(t0L), b.get(t1L));
    w.seg.t = () => tv;
    accumulate(b, a, w.value(out.value), b.idx("sub", tv, loV));
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
      inp.padded && loaded.has(i) ? [b.idx("div", w.stride(i, 0), b.idx("max", w.stride(i, 1), lit(1)))] : [],
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
      w.seg.t = () => tv;
      accumulate(b, a, w.value(out.value), b.idx("sub", tv, loV));
      b.end();
    }
    b.when(b.let("bool", { k: "binary", op: "and", a: b.icmp("eq", g, lit(0)), b: b.icmp("lt", span, n) }));
    const tc = b.idx("add", loV, span);
    w.seg.t = () => tc;
    accumulateRepeated(b, a, w.value(out.value), b.idx("sub", n, span), span);
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
}

/** Each row padded to maxN positions (chunk g: positions [g C, (g + 1) C)); the output expression says what padding holds. */
export function lowerSegmentPad(w: WorkgroupKernel): void {
  const { k, b, lit, g } = w;
  const out = k.outputs[0]!;
  const r = rows(w);
  const { seg, C, S, at } = r;
  const { row, loV, hiV } = rowOf(w, r, false);
  // pad: maxN -1 pads to the longest row, a run-time size (the launch's second batch size).
  const maxN = seg.maxN! >= 0 ? lit(seg.maxN!) : w.size(1);
  const len = b.idx("min", b.idx("sub", hiV, loV), maxN);
  const start = seg.left ? b.idx("sub", maxN, len) : lit(0);
  const n1 = b.idx("min", maxN, b.idx("mul", b.idx("add", g, lit(1)), lit(C)));
  const nv = b.loop(b.idx("min", maxN, b.idx("mul", g, lit(C))), n1);
  w.seg.inside = b.let("bool", {
    k: "binary",
    op: "and",
    a: b.icmp("ge", nv, start),
    b: b.icmp("lt", nv, b.idx("add", start, len)),
  });
  const tv = b.let("index", { k: "where", c: w.seg.inside, a: b.idx("sub", b.idx("add", loV, nv), start), b: loV });
  w.seg.t = () => tv;
  // The output expression says what padding positions hold (see `Segment`).
  const v = w.value(out.value);
  const pos = b.idx("add", b.idx("mul", b.idx("add", b.idx("mul", row, maxN), nv), lit(S)), at());
  b.store(0, pos, b.cast(v, out.dtype));
  b.end();
}
