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
 * Reductions are defined once here (`REDUCE_RULES`): start value, step, final
 * value. A sum (and a mean's sum) starts at -0, the exact additive identity
 * (-0 + x = x for every x, where +0 + -0 is +0), so a sum of -0s is -0 as in
 * NumPy; an empty sum is +0. With float64 accumulation (targets that have float64)
 * float32 sums, means and products accumulate in float64 and round once when
 * stored. argmin/argmax keep the first position on ties, and the first NaN wins
 * and then sticks (as min/max propagate NaN). A mean divides once, by the whole count.
 */
import type { DType } from "../ir/dtype.js";
import { isFloat } from "../ir/dtype.js";
import { UnsupportedOpError } from "../ir/errors.js";
import type { Accumulation } from "../ir/interpret.js";
import {
  constSlots,
  contiguousStrides,
  ix,
  numel,
  type IndexExpr,
  type KExpr,
  type KReduceOp,
  type Kernel,
} from "../ir/kernel.js";
import {
  operands,
  verifyLoop,
  type IndexCmp,
  type IndexOp,
  type LExpr,
  type LStmt,
  type LType,
  type LoopProgram,
} from "./loop.js";

/** What a target offers the lowering. */
export interface LoopTarget {
  /** How float32 sums, means and products accumulate: in float64 (JS, WASM) or float32 (WGSL, which has no float64). */
  readonly accumulation: Accumulation;
}

/** The sequential CPU target: float64 accumulation. */
export const SEQUENTIAL_TARGET: LoopTarget = { accumulation: "float64" };

interface Block {
  readonly stmts: LStmt[];
  readonly memo: Map<string, number>;
}

/**
 * Builds a loop program: values are hash-consed per block and placed in the
 * outermost open block where all their operands are visible.
 */
export class LoopBuilder {
  private readonly types: LType[] = [];
  private readonly depth: number[] = [];
  readonly locals: LType[] = [];
  private readonly stack: Block[] = [{ stmts: [], memo: new Map() }];
  private readonly pending: ({ k: "loop"; var: number; from: number; to: number } | { k: "if"; cond: number })[] = [];
  private readonly elses: (LStmt[] | null)[] = [];

  typeOf(id: number): LType {
    return this.types[id]!;
  }

  /** Defines (or finds) the value `e` of type `type`. `get` reads are never shared or moved. */
  let(type: LType, e: LExpr): number {
    const cur = this.stack.length - 1;
    let at = 0;
    if (e.k === "get") at = cur;
    for (const o of operands(e)) at = Math.max(at, this.depth[o]!);
    // JSON spells -0 as 0 and NaN, ±Infinity as null: a literal's key spells its value exactly.
    const key =
      e.k === "get"
        ? ""
        : e.k === "lit"
          ? `${type}|lit|${Object.is(e.v, -0) ? "-0" : String(e.v)}`
          : `${type}|${JSON.stringify(e)}`;
    if (key !== "") {
      const hit = this.stack[at]!.memo.get(key);
      if (hit !== undefined) return hit;
    }
    const id = this.types.length;
    this.types.push(type);
    this.depth.push(at);
    this.stack[at]!.stmts.push({ k: "let", id, type, e });
    if (e.k === "lit") this.lits.set(id, e.v);
    if (key !== "") this.stack[at]!.memo.set(key, id);
    return id;
  }

  lit(v: number, type: LType): number {
    return this.let(type, { k: "lit", v });
  }
  index(v: number): number {
    return this.lit(v, "index");
  }

  /** `x` as type `to` (no cast when it already is). */
  cast(x: number, to: LType): number {
    if (this.typeOf(x) === to) return x;
    // A literal converts at build time when exact (index literals to dtypes, small ints).
    return this.let(to, { k: "cast", x });
  }

  /** Index arithmetic, folding literals and identities. */
  idx(op: IndexOp, a: number, b: number): number {
    const av = this.litValue(a);
    const bv = this.litValue(b);
    if (av !== undefined && bv !== undefined) {
      const v =
        op === "add"
          ? av + bv
          : op === "sub"
            ? av - bv
            : op === "mul"
              ? av * bv
              : op === "div"
                ? Math.floor(av / bv)
                : op === "mod"
                  ? av % bv
                  : op === "min"
                    ? Math.min(av, bv)
                    : Math.max(av, bv);
      return this.index(v);
    }
    if (op === "add" && av === 0) return b;
    if ((op === "add" || op === "sub") && bv === 0) return a;
    if (op === "mul" && (av === 0 || bv === 0)) return this.index(0);
    if (op === "mul" && av === 1) return b;
    if ((op === "mul" || op === "div") && bv === 1) return a;
    if (op === "mod" && bv === 1) return this.index(0);
    return this.let("index", { k: "idx", op, a, b });
  }

  icmp(op: IndexCmp, a: number, b: number): number {
    return this.let("bool", { k: "icmp", op, a, b });
  }

  /** The number a literal value holds (undefined for other values). */
  litValue(id: number): number | undefined {
    return this.lits.get(id);
  }

  private readonly lits = new Map<number, number>();

  local(type: LType): number {
    this.locals.push(type);
    return this.locals.length - 1;
  }
  get(local: number): number {
    return this.let(this.locals[local]!, { k: "get", local });
  }
  set(local: number, value: number): void {
    this.top().push({ k: "set", local, value });
  }
  store(buf: number, at: number, value: number): void {
    this.top().push({ k: "store", buf, at, value });
  }

  /** Opens `for (v = from; v < to; v++)` and returns v. Close with `end()`. */
  loop(from: number, to: number): number {
    const v = this.types.length;
    this.types.push("index");
    this.pending.push({ k: "loop", var: v, from, to });
    this.elses.push(null);
    this.stack.push({ stmts: [], memo: new Map() });
    this.depth.push(this.stack.length - 1);
    return v;
  }

  /** Opens `if (cond)`; `otherwise()` switches to its else branch; close with `end()`. */
  when(cond: number): void {
    this.pending.push({ k: "if", cond });
    this.elses.push(null);
    this.stack.push({ stmts: [], memo: new Map() });
  }

  otherwise(): void {
    const then = this.stack.pop()!;
    this.elses[this.elses.length - 1] = then.stmts;
    this.stack.push({ stmts: [], memo: new Map() });
  }

  end(): void {
    const b = this.stack.pop()!;
    const p = this.pending.pop()!;
    const thenStmts = this.elses.pop();
    if (p.k === "loop") this.top().push({ ...p, body: b.stmts });
    else if (thenStmts === null || thenStmts === undefined)
      this.top().push({ k: "if", cond: p.cond, then: b.stmts, else: [] });
    else this.top().push({ k: "if", cond: p.cond, then: thenStmts, else: b.stmts });
  }

  private top(): LStmt[] {
    return this.stack[this.stack.length - 1]!.stmts;
  }

  finish(k: Kernel, sizes: number, strides: number): LoopProgram {
    if (this.stack.length !== 1) throw new Error("loop builder: unclosed block");
    const consts: DType[] = [];
    for (const e of k.exprs) if (e.k === "const") consts.push(e.dtype);
    return verifyLoop({
      inputs: k.inputs.map((i) => i.dtype),
      outputs: k.outputs.map((o) => o.dtype),
      sizes,
      strides,
      consts,
      locals: [...this.locals],
      values: this.types.length,
      relaxedFloat32: k.relaxedFloat32 === true,
      body: this.stack[0]!.stmts,
    });
  }
}

// ---- reductions: defined once ----

/** The dtype a reduction accumulates in, given the reduced values' and the output's dtypes. */
export function accType(op: KReduceOp, valueType: DType, outType: DType, t: LoopTarget): DType {
  switch (op) {
    case "all":
    case "any":
      return "bool";
    case "argmin":
    case "argmax":
      // The best value so far, compared in the values' dtype (bool as uint32).
      return valueType === "bool" ? "uint32" : valueType;
    case "min":
    case "max":
      return valueType;
    case "sum":
    case "mean":
    case "prod":
      // float64 accumulation: every sum and mean, and float products (integer products wrap in int32).
      if (t.accumulation === "float64" && (op !== "prod" || isFloat(outType))) return "float64";
      return outType;
  }
}

/**
 * One reduction's accumulator(s): `acc` holds the running value (argmin/argmax: the best
 * value), `arg` the best position (argmin/argmax only, int32).
 */
export interface Accumulator {
  readonly op: KReduceOp;
  readonly acc: number;
  readonly arg: number;
  readonly type: DType;
}

/**
 * Declares and starts an accumulator. `empty` gives a bool value telling whether the
 * reduction has no element, or null when it is known not to be empty (`true` literal
 * when known empty): an empty sum starts at +0, a non-empty one at -0.
 */
export function startAccumulator(
  b: LoopBuilder,
  op: KReduceOp,
  valueType: DType,
  outType: DType,
  t: LoopTarget,
  empty: (() => number) | "never" | "always",
): Accumulator {
  const type = accType(op, valueType, outType, t);
  const acc = b.local(type);
  const arg = op === "argmin" || op === "argmax" ? b.local("int32") : -1;
  let init: number;
  switch (op) {
    case "sum":
      init =
        empty === "never"
          ? b.lit(-0, type)
          : empty === "always"
            ? b.lit(0, type)
            : b.let(type, { k: "where", c: empty(), a: b.lit(0, type), b: b.lit(-0, type) });
      break;
    case "mean":
      init = b.lit(-0, type);
      break;
    case "prod":
    case "all":
      init = b.lit(1, type);
      break;
    case "any":
      init = b.lit(0, type);
      break;
    case "min":
    case "argmin":
      init = b.lit(extreme(type, true), type);
      break;
    case "max":
    case "argmax":
      init = b.lit(extreme(type, false), type);
      break;
  }
  b.set(acc, init);
  if (arg >= 0) b.set(arg, b.lit(0, "int32"));
  return { op, acc, arg, type };
}

/** The largest (`high`) or smallest value of a dtype: the start values of min and max. */
function extreme(d: DType, high: boolean): number {
  switch (d) {
    case "float32":
    case "float64":
      return high ? Infinity : -Infinity;
    case "int32":
      return high ? 2147483647 : -2147483648;
    case "uint32":
      return high ? 4294967295 : 0;
    case "bool":
      return high ? 1 : 0;
  }
}

/** Folds value `v` (at position `pos`, an index, for argmin/argmax) into the accumulator. */
export function accumulate(b: LoopBuilder, a: Accumulator, v: number, pos: number): void {
  const cur = b.get(a.acc);
  switch (a.op) {
    case "sum":
    case "mean":
      b.set(a.acc, b.let(a.type, { k: "binary", op: "add", a: cur, b: b.cast(v, a.type) }));
      return;
    case "prod":
      b.set(a.acc, b.let(a.type, { k: "binary", op: "mul", a: cur, b: b.cast(v, a.type) }));
      return;
    case "min":
    case "max":
      b.set(a.acc, b.let(a.type, { k: "binary", op: a.op === "min" ? "minimum" : "maximum", a: cur, b: v }));
      return;
    case "all":
    case "any":
      b.set(a.acc, b.let("bool", { k: "binary", op: a.op === "all" ? "and" : "or", a: cur, b: b.cast(v, "bool") }));
      return;
    case "argmin":
    case "argmax": {
      // Strictly better keeps the first position on ties; a NaN wins once and then sticks.
      const x = b.cast(v, a.type);
      let better = b.let("bool", { k: "binary", op: a.op === "argmax" ? "gt" : "lt", a: x, b: cur });
      if (isFloat(a.type)) {
        const xNaN = b.let("bool", { k: "unary", op: "isnan", x });
        const curNum = b.let("bool", { k: "unary", op: "not", x: b.let("bool", { k: "unary", op: "isnan", x: cur }) });
        better = b.let("bool", {
          k: "binary",
          op: "and",
          a: curNum,
          b: b.let("bool", { k: "binary", op: "or", a: xNaN, b: better }),
        });
      }
      b.when(better);
      b.set(a.acc, x);
      b.set(a.arg, b.cast(pos, "int32"));
      b.end();
      return;
    }
  }
}

/** The reduction's result in dtype `out`; `count` (an index) is the number of reduced elements (a mean divides by it). */
export function finishAccumulator(b: LoopBuilder, a: Accumulator, out: DType, count: () => number): number {
  if (a.op === "argmin" || a.op === "argmax") return b.cast(b.get(a.arg), out);
  let v = b.get(a.acc);
  if (a.op === "mean") v = b.let(a.type, { k: "binary", op: "div", a: v, b: b.cast(count(), a.type) });
  return b.cast(v, out);
}

/**
 * A small reduction inlined into an element's expression (`combine`): combines `xs` in
 * order exactly as a reduction would, from its first term (it has at least one).
 */
function combine(b: LoopBuilder, op: KReduceOp, xs: readonly number[], dtype: DType, t: LoopTarget): number {
  if (op === "argmin" || op === "argmax") throw new UnsupportedOpError(`loop form: ${op} cannot be inlined`);
  const bin = (o: "add" | "mul" | "minimum" | "maximum" | "and" | "or", d: DType, terms: number[]): number =>
    terms.slice(1).reduce((acc, x) => b.let(d, { k: "binary", op: o, a: acc, b: x }), terms[0]!);
  switch (op) {
    case "sum":
    case "mean":
    case "prod": {
      const ad = accType(op, dtype, dtype, t);
      const terms = xs.map((x) => b.cast(x, ad));
      let v = bin(op === "prod" ? "mul" : "add", ad, terms);
      if (op === "mean") v = b.let(ad, { k: "binary", op: "div", a: v, b: b.lit(xs.length, ad) });
      return b.cast(v, dtype);
    }
    case "min":
    case "max":
      return bin(
        op === "min" ? "minimum" : "maximum",
        dtype,
        xs.map((x) => b.cast(x, dtype)),
      );
    case "all":
    case "any":
      return b.cast(
        bin(
          op === "all" ? "and" : "or",
          "bool",
          xs.map((x) => b.cast(x, "bool")),
        ),
        dtype,
      );
  }
}

// ---- the element expression ----

/** Where the element expressions of a kernel are lowered: loop variables, pointers, `inside`. */
interface Scope {
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

class ExprLowering {
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

/** The batch-stride index of each input's first batch dim. */
function strideBase(k: Kernel): number[] {
  let at = 0;
  return k.inputs.map((inp) => {
    const s = at;
    at += inp.batchRank;
    return s;
  });
}

/** Checks what the lowering relies on; a malformed kernel is an UnsupportedOpError. */
function checkKernel(k: Kernel): void {
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
              : [];
    for (const m of refs) if (!(m >= 0 && m < n)) fail(`value %${n} refers to %${m}, which is not before it`);
  });
  for (const out of k.outputs) {
    if (out.value < 0 || out.value >= k.exprs.length) fail(`an output stores %${out.value}, which does not exist`);
    if ((k.reduce === null) !== (out.reduce === null))
      fail("an output's reduce op must be set exactly when the kernel reduces");
    if ((out.reduce === "argmin" || out.reduce === "argmax") && out.dtype !== "int32")
      fail(`${out.reduce} gives int32, not ${out.dtype}`);
    if ((out.reduce === "argmin" || out.reduce === "argmax") && k.segment === undefined && rb.length + rs.length !== 1)
      fail(`${out.reduce} must reduce exactly one axis, got ${rb.length + rs.length}`);
  }
}

/**
 * Lowers a kernel to the loop form for a sequential target (one invocation runs the
 * whole launch). The result is verified (`verifyLoop`).
 */
export function lowerKernel(k: Kernel, t: LoopTarget = SEQUENTIAL_TARGET): LoopProgram {
  checkKernel(k);
  const b = new LoopBuilder();
  const strides = strideBase(k);
  const nStrides = k.inputs.reduce((n, inp) => n + inp.batchRank, 0);
  if (k.segment !== undefined) lowerSegmented(b, k, t, strides);
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
  const pointer = (i: number): number => {
    const inp = k.inputs[i]!;
    let p = b.index(0);
    for (let d = 0; d < inp.batchRank; d++) {
      const s = b.let("index", { k: "stride", i: strideAt[i]! + d });
      p = b.idx("add", p, b.idx("mul", batchVar.get(R - inp.batchRank + d)!, s));
    }
    return p;
  };
  const scope: Scope = { axisVar, pointer };
  const outShape = keptBase.map((a) => k.baseShape[a]!);
  const outStrides = contiguousStrides(outShape);
  const mixed = red === null && k.outputs.some((out) => out.baseShape !== undefined);
  if (mixed && !k.unroll)
    throw new UnsupportedOpError("loop form: outputs of different base shapes need a fully unrolled kernel");

  // The output offset of the current batch element: a running counter over the kept batch loops.
  const counter = b.local("index");
  b.set(counter, b.index(0));
  for (const a of keptBatch) batchVar.set(a, b.loop(b.index(0), size(a)));
  const ob = b.get(counter);
  const step = mixed ? 1 : numel(outShape);
  b.set(counter, b.idx("add", ob, b.index(step)));
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
    k.outputs.forEach((out, oi) => {
      const shape = out.baseShape ?? k.baseShape;
      points(shape).forEach((p, f) => {
        const pt = new Map(p.map((v, a) => [a, v] as [number, number]));
        const v = lowering.value(out.value, pt, scope, new Map());
        b.store(oi, b.idx("add", b.idx("mul", ob, b.index(numel(shape))), b.index(f)), b.cast(v, out.dtype));
      });
    });
  } else if (red === null) {
    for (const kp of keptPoints) {
      const memo = new Map<number, number>();
      k.outputs.forEach((out, oi) => {
        b.store(oi, outOffset(kp), b.cast(lowering.value(out.value, kp, scope, memo), out.dtype));
      });
    }
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
          accumulate(b, accs[q]![oi]!, v, pos);
        });
      }
    });
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
    if (op === "argmin" || op === "prod" || op === "all" || op === "any")
      throw new UnsupportedOpError(`loop form: segment reduction ${op} is not supported`);
    openBase();
    const vd = k.exprs[out.value]!.dtype;
    const accs = pts.map(() => startAccumulator(b, op, vd, out.dtype, t, () => b.icmp("eq", n, b.index(0))));
    tVar = b.loop(lo, hi);
    pts.forEach((pt, q) => {
      const v = lowering.value(out.value, pt, scope, new Map());
      accumulate(b, accs[q]!, v, b.idx("sub", tVar, lo));
    });
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
    for (const pt of pts) {
      const at = b.idx("add", b.idx("mul", tVar, b.index(S)), offset(pt));
      b.store(0, at, b.cast(lowering.value(out.value, pt, scope, new Map()), out.dtype));
    }
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
    for (const pt of pts) {
      const at = b.idx("add", b.idx("mul", b.idx("add", b.idx("mul", i0, maxN), nVar), b.index(S)), offset(pt));
      b.store(0, at, b.cast(lowering.value(out.value, pt, scope, new Map()), out.dtype));
    }
    closeBase();
    b.end();
  }
  b.end();
}
