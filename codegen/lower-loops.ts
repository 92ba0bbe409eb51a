/**
 * Kernel IR → loop form (docs/ARCHITECTURE.md, Kernel forms). The one place
 * that decides a kernel's loop nest, its index arithmetic and the semantics of
 * its reductions; every renderer prints the result (codegen/loop.ts).
 *
 * Loop nest (sequential target), outer to inner: the kept batch loops, the kept
 * base loops, and for reductions the reduced batch loops and the reduced base
 * loops. Unrolled base axes (`Kernel.unroll`, `Kernel.unrollAxes`) have no loop:
 * each of their points is lowered with constant indices. Values are hash-consed
 * and placed in the outermost block where everything they read is defined, so
 * loop-invariant code sits outside the loops and a value shared by several points
 * or outputs (a determinant used by every entry of an inverse) is computed once.
 *
 * The reductions' rules (start value, step, final value, the float64 accumulation of
 * sums, the signed-zero and empty rules, argmin/argmax ties and NaN) are defined
 * once, in codegen/reductions.ts; the workgroup target (codegen/lower-workgroup.ts)
 * uses the same rules and expression lowering.
 */
import type { DType } from "../ir/dtype.js";
import { UnsupportedOpError } from "../ir/errors.js";
import {
  constSlots,
  contiguousStrides,
  ix,
  numel,
  takeFill,
  type IndexExpr,
  type KExpr,
  type Kernel,
} from "../ir/kernel.js";
import { isPositional, reductionFacts } from "../ir/reductions.js";
import type { LoopProgram } from "./loop.js";
import { batchPointer, LoopBuilder, strideBase } from "./loop-builder.js";
import { lowerRoutine } from "./routines/lower.js";
import { accumulate, combine, finishAccumulator, startAccumulator, type LoopTarget } from "./reductions.js";

export { LoopBuilder } from "./loop-builder.js";
export * from "./reductions.js";

/** The sequential CPU target: float64 accumulation. */
export const SEQUENTIAL_TARGET: LoopTarget = { accumulation: "float64" };

// ---- the element expression ----

/** Where the element expressions of a kernel are lowered: loop variables, pointers, `inside`. */
export interface Scope {
  /** Value of each base axis variable that has a loop. */
  readonly axisVar: ReadonlyMap<number, number>;
  /** Per input: its element offset over the batch dims (an index value), made on demand. */
  readonly pointer: (input: number) => number;
  /** Per padded input: whether the position is inside its padded length (bool), made on demand. */
  readonly padInside?: (input: number) => number;
  /** Pad kernels: whether the position holds an entry of the row. */
  readonly inside?: () => number;
}

function lowerIndex(b: LoopBuilder, e: IndexExpr, point: ReadonlyMap<number, number>, s: Scope): number {
  switch (e.k) {
    case "var": {
      const p = point.get(e.axis);
      if (p !== undefined) return b.index(p);
      const v = s.axisVar.get(e.axis);
      if (v === undefined)
        throw new UnsupportedOpError(`loop form: index uses base axis ${e.axis}, which has no loop here`);
      return v;
    }
    case "const":
      if (!Number.isInteger(e.v)) throw new UnsupportedOpError(`loop form: index constant ${e.v} is not an integer`);
      return b.index(e.v);
    default:
      return b.idx(e.k, lowerIndex(b, e.a, point, s), lowerIndex(b, e.b, point, s));
  }
}

/** Replaces the variables of unrolled axes by their constants (folding as it goes). */
function substIndex(e: IndexExpr, point: ReadonlyMap<number, number>): IndexExpr {
  switch (e.k) {
    case "var": {
      const v = point.get(e.axis);
      return v === undefined ? e : ix.c(v);
    }
    case "const":
      return e;
    default:
      return ix[e.k](substIndex(e.a, point), substIndex(e.b, point));
  }
}

export class ExprLowering {
  private readonly slots: readonly number[];
  constructor(
    private readonly b: LoopBuilder,
    private readonly k: Kernel,
    private readonly t: LoopTarget,
  ) {
    this.slots = constSlots(k);
  }

  /** The value of expr `i` at a point (constants for the unrolled axes); `memo` is per point. */
  value(i: number, point: ReadonlyMap<number, number>, s: Scope, memo: Map<number, number>): number {
    const hit = memo.get(i);
    if (hit !== undefined) return hit;
    const { b, k } = this;
    const e: KExpr = k.exprs[i]!;
    const sub = (j: number): number => this.value(j, point, s, memo);
    const dt = (j: number): DType => k.exprs[j]!.dtype;
    let v: number;
    switch (e.k) {
      case "load": {
        const inp = k.inputs[e.input];
        if (inp === undefined)
          throw new UnsupportedOpError(`loop form: %${i} loads input ${e.input}, which does not exist`);
        if (e.index.length !== inp.baseShape.length)
          throw new UnsupportedOpError(
            `loop form: %${i} indexes input ${e.input} (base rank ${inp.baseShape.length}) with ${e.index.length} indices`,
          );
        const strides = contiguousStrides(inp.baseShape);
        let off: IndexExpr = ix.c(0);
        e.index.forEach((x, d) => (off = ix.add(off, ix.mul(substIndex(x, point), ix.c(strides[d]!)))));
        const at = b.idx("add", s.pointer(e.input), lowerIndex(b, off, point, s));
        v = b.cast(b.let(inp.dtype, { k: "load", buf: e.input, at }), e.dtype);
        // A right-padded input reads 0 past its padded length (segmented kernels).
        if (inp.padded) v = b.let(e.dtype, { k: "where", c: s.padInside!(e.input), a: v, b: b.lit(0, e.dtype) });
        break;
      }
      case "const":
        v = b.let(e.dtype, { k: "const", slot: this.slots[i]! });
        break;
      case "unary": {
        const pred = e.op === "isnan" || e.op === "isinf" || e.op === "isfinite";
        const x = pred ? sub(e.x) : b.cast(sub(e.x), e.op === "not" ? "bool" : e.dtype);
        v = b.cast(b.let(pred || e.op === "not" ? "bool" : e.dtype, { k: "unary", op: e.op, x }), e.dtype);
        break;
      }
      case "binary": {
        const bool = ["eq", "ne", "lt", "le", "gt", "ge"].includes(e.op);
        const logical = e.op === "and" || e.op === "or" || e.op === "xor";
        // Comparisons compare in the operands' dtype; other ops work in the result dtype.
        const od = bool ? dt(e.a) : logical && e.dtype !== "bool" ? e.dtype : logical ? "bool" : e.dtype;
        const r = b.let(bool ? "bool" : od, {
          k: "binary",
          op: e.op,
          a: b.cast(sub(e.a), od),
          b: b.cast(sub(e.b), od),
        });
        v = b.cast(r, e.dtype);
        break;
      }
      case "where":
        v = b.let(e.dtype, {
          k: "where",
          c: b.cast(sub(e.c), "bool"),
          a: b.cast(sub(e.a), e.dtype),
          b: b.cast(sub(e.b), e.dtype),
        });
        break;
      case "cast":
        v = b.cast(sub(e.x), e.dtype);
        break;
      case "combine":
        v = combine(b, e.op, e.xs.map(sub), e.dtype, this.t);
        break;
      case "inside":
        if (s.inside === undefined) throw new UnsupportedOpError(`loop form: %${i}: inside outside a pad kernel`);
        v = s.inside();
        break;
      case "gather": {
        const inp = k.inputs[e.input];
        if (inp === undefined || e.index.length !== inp.baseShape.length || e.axis >= inp.baseShape.length)
          throw new UnsupportedOpError(`loop form: %${i} gathers from input ${e.input} with a bad index or axis`);
        if (inp.padded) throw new UnsupportedOpError(`loop form: %${i} gathers from a padded input`);
        const n = inp.baseShape[e.axis]!;
        const fill = b.lit(takeFill(e.dtype), e.dtype);
        if (n === 0) {
          // Every index is out of range of an empty axis: nothing is read.
          v = fill;
          break;
        }
        // p = pos < 0 ? pos + n : pos (int32; the add may wrap only on the branch not taken).
        const pos = b.cast(sub(e.pos), "int32");
        const zero = b.lit(0, "int32");
        const len = b.lit(n, "int32");
        const neg = b.let("bool", { k: "binary", op: "lt", a: pos, b: zero });
        const p = b.let("int32", {
          k: "where",
          c: neg,
          a: b.let("int32", { k: "binary", op: "add", a: pos, b: len }),
          b: pos,
        });
        // 0 <= p < n as one unsigned compare (a negative p is 2^31 or more as uint32).
        const ok = b.let("bool", { k: "binary", op: "lt", a: b.cast(p, "uint32"), b: b.lit(n, "uint32") });
        // The position read is clamped into [0, n) before it becomes an offset, so the load is
        // always in range; the fill value replaces it where the index was out of range.
        const safe = b.cast(b.let("int32", { k: "where", c: ok, a: p, b: zero }), "index");
        const strides = contiguousStrides(inp.baseShape);
        let off: IndexExpr = ix.c(0);
        e.index.forEach((x, d) => {
          if (d !== e.axis) off = ix.add(off, ix.mul(substIndex(x, point), ix.c(strides[d]!)));
        });
        const at = b.idx(
          "add",
          b.idx("add", s.pointer(e.input), lowerIndex(b, off, point, s)),
          b.idx("mul", safe, b.index(strides[e.axis]!)),
        );
        const loaded = b.cast(b.let(inp.dtype, { k: "load", buf: e.input, at }), e.dtype);
        // A branch rather than a select of the two: `v = fill; if (ok) v = loaded` runs at the
        // speed of a plain gather loop in V8, a select about 2.5x slower (measured at 1e6 indices).
        const l = b.local(e.dtype);
        b.set(l, fill);
        b.when(ok);
        b.set(l, loaded);
        b.end();
        v = b.get(l);
        break;
      }
      case "select": {
        const idx = substIndex(e.index, point);
        // A known index: only the branch taken.
        if (idx.k === "const") v = b.cast(sub(idx.v < e.bound ? e.a : e.b), e.dtype);
        else
          v = b.let(e.dtype, {
            k: "where",
            c: b.icmp("lt", lowerIndex(b, idx, point, s), b.index(e.bound)),
            a: b.cast(sub(e.a), e.dtype),
            b: b.cast(sub(e.b), e.dtype),
          });
        break;
      }
    }
    memo.set(i, v);
    return v;
  }
}

// ---- kernels ----

/** Base axes that have no loop (fully unrolled kernels: all). */
function unrolledAxes(k: Kernel): Set<number> {
  if (k.unroll) return new Set(k.baseShape.map((_, a) => a));
  return new Set(k.unrollAxes ?? []);
}

/** All points of a static shape, row-major. */
export function points(shape: readonly number[]): number[][] {
  const out: number[][] = [];
  const n = numel(shape);
  for (let f = 0; f < n; f++) {
    const p = new Array<number>(shape.length);
    let r = f;
    for (let d = shape.length - 1; d >= 0; d--) {
      p[d] = r % shape[d]!;
      r = Math.floor(r / shape[d]!);
    }
    out.push(p);
  }
  return out;
}

const pointMaps = (axes: readonly number[], shape: readonly number[]): Map<number, number>[] =>
  points(axes.map((a) => shape[a]!)).map((p) => new Map(axes.map((a, i) => [a, p[i]!])));

/** Checks what the lowering relies on; a malformed kernel is an UnsupportedOpError. */
export function checkKernel(k: Kernel): void {
  const fail = (m: string): never => {
    throw new UnsupportedOpError(`loop form: ${m}`);
  };
  if (k.outputs.length === 0) fail("a kernel needs an output");
  const rb = k.reduce?.batchAxes ?? [];
  const rs = k.reduce?.baseAxes ?? [];
  for (const a of rb) if (a < 0 || a >= k.batchRank) fail(`reduced batch axis ${a} out of range`);
  for (const a of rs) if (a < 0 || a >= k.baseShape.length) fail(`reduced base axis ${a} out of range`);
  k.inputs.forEach((inp, i) => {
    if (k.segment === undefined && inp.batchRank > k.batchRank)
      fail(`input ${i} has batch rank ${inp.batchRank} > kernel batch rank ${k.batchRank}`);
  });
  k.exprs.forEach((e, n) => {
    const refs =
      e.k === "combine"
        ? e.xs
        : e.k === "unary" || e.k === "cast"
          ? [e.x]
          : e.k === "where"
            ? [e.c, e.a, e.b]
            : e.k === "binary" || e.k === "select"
              ? [e.a, e.b]
              : e.k === "gather"
                ? [e.pos]
                : [];
    for (const m of refs) if (!(m >= 0 && m < n)) fail(`value %${n} refers to %${m}, which is not before it`);
  });
  if (k.scatter !== undefined) checkScatterKernel(k, fail);
  for (const out of k.outputs) {
    if (out.value < 0 || out.value >= k.exprs.length) fail(`an output stores %${out.value}, which does not exist`);
    if ((k.reduce === null) !== (out.reduce === null))
      fail("an output's reduce op must be set exactly when the kernel reduces");
    if (isPositional(out.reduce) && out.dtype !== "int32") fail(`${out.reduce} gives int32, not ${out.dtype}`);
    if (isPositional(out.reduce) && k.segment === undefined && rb.length + rs.length !== 1)
      fail(`${out.reduce} must reduce exactly one axis, got ${rb.length + rs.length}`);
  }
}

/**
 * Lowers a kernel to the loop form for a sequential target (one invocation runs the
 * whole launch). The result is verified (`verifyLoop`).
 */
export function lowerKernel(k: Kernel, t: LoopTarget = SEQUENTIAL_TARGET): LoopProgram {
  // Looped matrix routines have a lowering of their own (codegen/routines/).
  if (k.routine !== undefined) return lowerRoutine(k);
  checkKernel(k);
  const b = new LoopBuilder();
  const strides = strideBase(k);
  const nStrides = k.inputs.reduce((n, inp) => n + inp.batchRank, 0);
  if (k.scatter !== undefined) lowerScatter(b, k, strides);
  else if (k.segment !== undefined) lowerSegmented(b, k, t, strides);
  else lowerPlain(b, k, t, strides);
  return b.finish(k, k.batchRank + (k.segment?.maxN === -1 ? 1 : 0), nStrides);
}

function lowerPlain(b: LoopBuilder, k: Kernel, t: LoopTarget, strideAt: readonly number[]): void {
  const R = k.batchRank;
  const red = k.reduce;
  const redBatch = red?.batchAxes ?? [];
  const redBase = red?.baseAxes ?? [];
  const unrolled = unrolledAxes(k);
  const keptBatch = [...Array(R).keys()].filter((a) => !redBatch.includes(a));
  const keptBase = k.baseShape.map((_, a) => a).filter((a) => !redBase.includes(a));
  const keptLooped = keptBase.filter((a) => !unrolled.has(a));
  const redLooped = redBase.filter((a) => !unrolled.has(a));
  const keptUnrolled = keptBase.filter((a) => unrolled.has(a));
  const redUnrolled = redBase.filter((a) => unrolled.has(a));
  const lowering = new ExprLowering(b, k, t);

  const size = (a: number): number => b.let("index", { k: "size", i: a });
  const batchVar = new Map<number, number>();
  const axisVar = new Map<number, number>();
  const pointer = (i: number): number => batchPointer(b, k, strideAt, (a) => batchVar.get(a)!, i);
  const scope: Scope = { axisVar, pointer };
  const outShape = keptBase.map((a) => k.baseShape[a]!);
  const outStrides = contiguousStrides(outShape);
  const mixed = red === null && k.outputs.some((out) => out.baseShape !== undefined);
  if (mixed && !k.unroll)
    throw new UnsupportedOpError("loop form: outputs of different base shapes need a fully unrolled kernel");

  // The output offset of the current batch element. Over one kept batch loop: a running
  // counter (targets split that loop into ranges and start the counter from the range).
  // Over several: the row-major flattening of the loop variables, each partial product
  // taken before the loop inside it opens, so that every batch loop's iterations are
  // independent (no local carried from one to the next): the outer one can be split over
  // threads and the inner one run in vector lanes.
  const step = mixed ? 1 : numel(outShape);
  let ob: number;
  if (keptBatch.length <= 1) {
    const counter = b.local("index");
    b.set(counter, b.index(0));
    for (const a of keptBatch) batchVar.set(a, b.loop(b.index(0), size(a)));
    ob = b.get(counter);
    b.set(counter, b.idx("add", ob, b.index(step)));
  } else {
    let flat = -1;
    for (const a of keptBatch) {
      const n = size(a);
      const scaled = flat < 0 ? -1 : b.idx("mul", flat, n);
      const v = b.loop(b.index(0), n);
      batchVar.set(a, v);
      flat = scaled < 0 ? v : b.idx("add", scaled, v);
    }
    ob = step === 1 ? flat : b.idx("mul", flat, b.index(step));
  }
  for (const a of keptLooped) axisVar.set(a, b.loop(b.index(0), b.index(k.baseShape[a]!)));
  const outOffset = (point: ReadonlyMap<number, number>): number => {
    let off = b.index(0);
    keptBase.forEach((a, i) => {
      const v = point.has(a) ? b.index(point.get(a)!) : axisVar.get(a)!;
      off = b.idx("add", off, b.idx("mul", v, b.index(outStrides[i]!)));
    });
    return b.idx("add", ob, off);
  };
  const keptPoints = pointMaps(keptUnrolled, k.baseShape);

  if (red === null && mixed) {
    // Outputs of different small bases (fully unrolled): each over its own points, at its
    // own offset (batch element) × (its base size).
    const stores: (() => void)[] = [];
    k.outputs.forEach((out, oi) => {
      const shape = out.baseShape ?? k.baseShape;
      points(shape).forEach((p, f) => {
        const pt = new Map(p.map((v, a) => [a, v] as [number, number]));
        const v = b.cast(lowering.value(out.value, pt, scope, new Map()), out.dtype);
        stores.push(() => b.store(oi, b.idx("add", b.idx("mul", ob, b.index(numel(shape))), b.index(f)), v));
      });
    });
    for (const st of stores) st();
  } else if (red === null) {
    const stores: (() => void)[] = [];
    for (const kp of keptPoints) {
      const memo = new Map<number, number>();
      k.outputs.forEach((out, oi) => {
        const v = b.cast(lowering.value(out.value, kp, scope, memo), out.dtype);
        stores.push(() => b.store(oi, outOffset(kp), v));
      });
    }
    for (const st of stores) st();
  } else {
    const baseCount = numel(redBase.map((a) => k.baseShape[a]!));
    const batchCount = (): number => redBatch.reduce((c, a) => b.idx("mul", c, size(a)), b.index(1));
    const count = (): number => b.idx("mul", batchCount(), b.index(baseCount));
    // Whether the reduction is empty is known before the loops (an empty sum starts at +0).
    const empty =
      baseCount === 0
        ? ("always" as const)
        : redBatch.length === 0
          ? ("never" as const)
          : () => b.icmp("eq", batchCount(), b.index(0));
    const accs = keptPoints.map(() =>
      k.outputs.map((out) => startAccumulator(b, out.reduce!, k.exprs[out.value]!.dtype, out.dtype, t, empty)),
    );
    for (const a of redBatch) batchVar.set(a, b.loop(b.index(0), size(a)));
    for (const a of redLooped) axisVar.set(a, b.loop(b.index(0), b.index(k.baseShape[a]!)));
    const redPoints = pointMaps(redUnrolled, k.baseShape);
    const folds: (() => void)[] = [];
    keptPoints.forEach((kp, q) => {
      for (const rp of redPoints) {
        const point = new Map([...kp, ...rp]);
        const memo = new Map<number, number>();
        k.outputs.forEach((out, oi) => {
          const v = lowering.value(out.value, point, scope, memo);
          // argmin/argmax reduce exactly one axis: the position is its index.
          const pos =
            redBatch.length === 1
              ? batchVar.get(redBatch[0]!)!
              : rp.has(redBase[0]!)
                ? b.index(rp.get(redBase[0]!)!)
                : (axisVar.get(redBase[0]!) ?? b.index(0));
          folds.push(() => accumulate(b, accs[q]![oi]!, v, pos));
        });
      }
    });
    for (const fold of folds) fold();
    for (const _ of redLooped) b.end();
    for (const _ of redBatch) b.end();
    keptPoints.forEach((kp, q) => {
      k.outputs.forEach((out, oi) => {
        b.store(oi, outOffset(kp), finishAccumulator(b, accs[q]![oi]!, out.dtype, count));
      });
    });
  }
  for (const _ of keptLooped) b.end();
  for (const _ of keptBatch) b.end();
}

/** A segmented kernel (ragged ops): rows outside, each row's segment inside (see `Segment` in ir/kernel.ts). */
function lowerSegmented(b: LoopBuilder, k: Kernel, t: LoopTarget, strideAt: readonly number[]): void {
  const seg = k.segment!;
  const out = k.outputs[0]!;
  const unrolled = unrolledAxes(k);
  const looped = k.baseShape.map((_, a) => a).filter((a) => !unrolled.has(a));
  const unrolledList = k.baseShape.map((_, a) => a).filter((a) => unrolled.has(a));
  const lowering = new ExprLowering(b, k, t);
  const S = numel(k.baseShape);
  const strides = contiguousStrides(k.baseShape);
  const axisVar = new Map<number, number>();
  const stride = (i: number, d: number): number => b.let("index", { k: "stride", i: strideAt[i]! + d });
  const offsType = k.inputs[seg.offsets]!.dtype;
  const offsAt = (at: number): number => b.cast(b.let(offsType, { k: "load", buf: seg.offsets, at }), "index");

  // Rows b in [0, sizes[0] - 1): the offsets have B + 1 entries.
  const size0 = b.let("index", { k: "size", i: 0 });
  const rows = b.idx("sub", b.idx("max", size0, b.index(1)), b.index(1));
  const maxN =
    seg.mode === "pad" ? (seg.maxN! >= 0 ? b.index(seg.maxN!) : b.let("index", { k: "size", i: 1 })) : b.index(0);
  const i0 = b.loop(b.index(0), rows);
  const lo = offsAt(i0);
  const hi = offsAt(b.idx("add", i0, b.index(1)));
  const n = b.idx("sub", hi, lo);
  let tVar = -1;
  let insideV = -1;
  const pointer = (i: number): number => {
    const inp = k.inputs[i]!;
    if (inp.padded) {
      // (B, M; base) with plain strides s0 = M·base, s1 = base: row i0, position t - lo.
      return b.idx("add", b.idx("mul", i0, stride(i, 0)), b.idx("mul", b.idx("sub", tVar, lo), stride(i, 1)));
    }
    if (inp.batchRank === 0) return b.index(0);
    return b.idx("mul", inp.packed ? tVar : i0, stride(i, 0));
  };
  const padInside = (i: number): number => {
    const m = b.idx("div", stride(i, 0), b.idx("max", stride(i, 1), b.index(1)));
    return b.icmp("lt", b.idx("sub", tVar, lo), m);
  };
  const scope: Scope = { axisVar, pointer, padInside, inside: () => insideV };
  const pts = pointMaps(unrolledList, k.baseShape);
  const offset = (pt: ReadonlyMap<number, number>): number => {
    let off = b.index(0);
    k.baseShape.forEach((_, a) => {
      const v = pt.has(a) ? b.index(pt.get(a)!) : axisVar.get(a)!;
      off = b.idx("add", off, b.idx("mul", v, b.index(strides[a]!)));
    });
    return off;
  };
  const openBase = (): void => {
    for (const a of looped) axisVar.set(a, b.loop(b.index(0), b.index(k.baseShape[a]!)));
  };
  const closeBase = (): void => {
    for (const _ of looped) b.end();
  };

  if (seg.mode === "reduce") {
    const op = out.reduce!;
    // A segmented kernel's reduce is a segment reduction (`count` lowers to a sum of ones).
    if (!reductionFacts(op).segment)
      throw new UnsupportedOpError(`loop form: segment reduction ${op} is not supported`);
    openBase();
    const vd = k.exprs[out.value]!.dtype;
    const accs = pts.map(() => startAccumulator(b, op, vd, out.dtype, t, () => b.icmp("eq", n, b.index(0))));
    tVar = b.loop(lo, hi);
    const vs = pts.map((pt) => lowering.value(out.value, pt, scope, new Map()));
    vs.forEach((v, q) => accumulate(b, accs[q]!, v, b.idx("sub", tVar, lo)));
    b.end();
    pts.forEach((pt, q) => {
      const at = b.idx("add", b.idx("mul", i0, b.index(S)), offset(pt));
      b.store(
        0,
        at,
        finishAccumulator(b, accs[q]!, out.dtype, () => n),
      );
    });
    closeBase();
  } else if (seg.mode === "map") {
    tVar = b.loop(lo, hi);
    openBase();
    const vs = pts.map((pt) => b.cast(lowering.value(out.value, pt, scope, new Map()), out.dtype));
    pts.forEach((pt, q) => b.store(0, b.idx("add", b.idx("mul", tVar, b.index(S)), offset(pt)), vs[q]!));
    closeBase();
    b.end();
  } else {
    // pad: the output expression says what padding positions hold (see `Segment`).
    const len = b.idx("min", n, maxN);
    const start = seg.left ? b.idx("sub", maxN, len) : b.index(0);
    const nVar = b.loop(b.index(0), maxN);
    insideV = b.let("bool", {
      k: "binary",
      op: "and",
      a: b.icmp("ge", nVar, start),
      b: b.icmp("lt", nVar, b.idx("add", start, len)),
    });
    // Padding positions read the row's first entry (in bounds), not past its end.
    tVar = b.let("index", { k: "where", c: insideV, a: b.idx("sub", b.idx("add", lo, nVar), start), b: lo });
    openBase();
    const vs = pts.map((pt) => b.cast(lowering.value(out.value, pt, scope, new Map()), out.dtype));
    pts.forEach((pt, q) => {
      const at = b.idx("add", b.idx("mul", b.idx("add", b.idx("mul", i0, maxN), nVar), b.index(S)), offset(pt));
      b.store(0, at, vs[q]!);
    });
    closeBase();
    b.end();
  }
  b.end();
}

// --- scatter kernels (see `ScatterSpec` in ir/kernel.ts) ---

/** The update shape of a scatter kernel: x's base with the axis replaced by idx's base. */
export function scatterShape(k: Kernel): number[] {
  const { axis } = k.scatter!;
  return [...k.baseShape.slice(0, axis), ...k.inputs[1]!.baseShape, ...k.baseShape.slice(axis + 1)];
}

function checkScatterKernel(k: Kernel, fail: (m: string) => never): void {
  const { axis, mode } = k.scatter!;
  const [x, idx, upd] = k.inputs;
  if (k.inputs.length !== 3 || k.outputs.length !== 1 || k.reduce !== null || k.segment !== undefined)
    fail("a scatter kernel has inputs [x, idx, upd], one output, and neither reduces nor segments");
  if (axis < 0 || axis >= k.baseShape.length) fail(`scatter axis ${axis} out of range`);
  if (idx!.dtype !== "int32") fail(`scatter indices must be int32, not ${idx!.dtype}`);
  const d = k.outputs[0]!.dtype;
  if (x!.dtype !== d || upd!.dtype !== d) fail("scatter's x, upd and output must share one dtype");
  if (mode !== "set" && d === "bool") fail(`scatter mode ${mode} on bool`);
  if (x!.baseShape.length !== k.baseShape.length || x!.baseShape.some((n, i) => n !== k.baseShape[i]))
    fail("scatter's x must have the kernel's base shape");
  const u = scatterShape(k);
  const lead = u.length - upd!.baseShape.length;
  if (lead < 0 || upd!.baseShape.some((n, i) => n !== 1 && n !== u[lead + i]))
    fail(`scatter's upd base (${upd!.baseShape.join(",")}) does not broadcast to (${u.join(",")})`);
}

/** A scatter kernel's per-batch-element copy: output[ob + j] = x[px + j] over x's base block. */
export function scatterCopy(b: LoopBuilder, k: Kernel, ob: number, px: number): void {
  const S = numel(k.baseShape);
  const j = b.loop(b.index(0), b.index(S));
  b.store(
    0,
    b.idx("add", ob, j),
    b.cast(b.let(k.inputs[0]!.dtype, { k: "load", buf: 0, at: b.idx("add", px, j) }), k.outputs[0]!.dtype),
  );
  b.end();
}

/**
 * One update of a scatter kernel at `coords` (index values, one per dim of the update
 * shape) for the batch element whose output block starts at `ob`: the index is wrapped
 * once and dropped outside [0, n); otherwise the output position is read back (`oload`),
 * combined with the update and stored.
 */
export function scatterUpdate(
  b: LoopBuilder,
  k: Kernel,
  ob: number,
  pointer: (input: number) => number,
  coords: readonly number[],
): void {
  const { axis, mode } = k.scatter!;
  const [, I, U] = k.inputs;
  const n = k.baseShape[axis]!;
  // Every index is out of range of an empty axis: nothing is written.
  if (n === 0) return;
  const m = I!.baseShape.length;
  const dt = k.outputs[0]!.dtype;
  const is = contiguousStrides(I!.baseShape);
  let ioff = pointer(1);
  for (let d = 0; d < m; d++) ioff = b.idx("add", ioff, b.idx("mul", coords[axis + d]!, b.index(is[d]!)));
  const pos = b.let("int32", { k: "load", buf: 1, at: ioff });
  const zero = b.lit(0, "int32");
  const len = b.lit(n, "int32");
  // p = pos < 0 ? pos + n : pos (the add may wrap only on the branch not taken).
  const p = b.let("int32", {
    k: "where",
    c: b.let("bool", { k: "binary", op: "lt", a: pos, b: zero }),
    a: b.let("int32", { k: "binary", op: "add", a: pos, b: len }),
    b: pos,
  });
  const ok = b.let("bool", {
    k: "binary",
    op: "and",
    a: b.let("bool", { k: "binary", op: "ge", a: p, b: zero }),
    b: b.let("bool", { k: "binary", op: "lt", a: p, b: len }),
  });
  b.when(ok);
  const xs = contiguousStrides(k.baseShape);
  let off = ob;
  for (let d = 0; d < k.baseShape.length; d++) {
    const c = d < axis ? coords[d]! : d === axis ? b.cast(p, "index") : coords[d - 1 + m]!;
    off = b.idx("add", off, b.idx("mul", c, b.index(xs[d]!)));
  }
  const us = contiguousStrides(U!.baseShape);
  const lead = coords.length - U!.baseShape.length;
  let uoff = pointer(2);
  U!.baseShape.forEach((size, i) => {
    if (size !== 1) uoff = b.idx("add", uoff, b.idx("mul", coords[lead + i]!, b.index(us[i]!)));
  });
  const v = b.cast(b.let(U!.dtype, { k: "load", buf: 2, at: uoff }), dt);
  const op = mode === "add" ? "add" : mode === "mul" ? "mul" : mode === "min" ? "minimum" : "maximum";
  const next = mode === "set" ? v : b.let(dt, { k: "binary", op, a: b.let(dt, { k: "oload", buf: 0, at: off }), b: v });
  b.store(0, off, next);
  b.end();
}

/** A scatter kernel on a sequential target: per batch element, the copy, then the updates in row-major order. */
function lowerScatter(b: LoopBuilder, k: Kernel, strideAt: readonly number[]): void {
  const R = k.batchRank;
  const S = numel(k.baseShape);
  const batchVar = new Map<number, number>();
  const pointer = (i: number): number => batchPointer(b, k, strideAt, (a) => batchVar.get(a)!, i);
  // The output offset of the current batch element: a running counter over the batch loops.
  const counter = b.local("index");
  b.set(counter, b.index(0));
  for (let a = 0; a < R; a++) batchVar.set(a, b.loop(b.index(0), b.let("index", { k: "size", i: a })));
  const ob = b.get(counter);
  b.set(counter, b.idx("add", ob, b.index(S)));
  scatterCopy(b, k, ob, pointer(0));
  const u = scatterShape(k);
  const coords = u.map((d) => (d === 1 ? b.index(0) : b.loop(b.index(0), b.index(d))));
  scatterUpdate(b, k, ob, pointer, coords);
  for (const d of u) if (d !== 1) b.end();
  for (let a = 0; a < R; a++) b.end();
}
