/**
 * The algebra the derivative rules (ir/derivatives.ts) are written in: a `Builder` that
 * records ops on values of a type `V` (lazy Tensors, graph Nodes), `Diff` — ops with the
 * symbolic zero (`null`) and a little constant folding on known constants and
 * concatenations of parts — and the types a rule sees (`Prim`, `Lin`, `Rule`).
 */
import { isFloat, type DType } from "./dtype.js";
import { UnsupportedOpError } from "./errors.js";
import type { Attrs, AttrsOf, Op } from "./ops.js";
import { broadcastShapes, fmtTypeShape, isConcrete, prod, type Dim, type TensorType } from "./types.js";

/** Records ops on values of type `V` (lazy tensors, graph nodes). */
export interface Builder<V> {
  /** Records `op` on `inputs` (its type rule runs). */
  make(op: Op, inputs: readonly V[], attrs?: Attrs): V;
  /** The type of a value. */
  typeOf(v: V): TensorType;
}

/** A value with its defining op, as the rules see it. */
export interface Prim<V, K extends Op = Op> {
  readonly op: K;
  readonly inputs: readonly V[];
  readonly attrs: AttrsOf<K>;
  /** The value the op computed. */
  readonly out: V;
}

/** A tangent or cotangent: a value, or null for the symbolic zero. */
export type Lin<V> = V | null;

/** The linear movement ops `Diff.move` folds, each with its own attributes. */
type MoveOp = "reshape" | "slice" | "permute" | "expand";
type MoveArgs<V> = { [K in MoveOp]: [op: K, a: Lin<V>, attrs: AttrsOf<K>] }[MoveOp];

/** The derivative rule of op `K`. */
export interface Rule<K extends Op> {
  /** The tangent of the result from the tangents of the inputs (not all null). */
  jvp<V>(d: Diff<V>, n: Prim<V, K>, t: readonly Lin<V>[]): Lin<V>;
  /** The cotangents of the inputs from the cotangent of the result. */
  vjp<V>(d: Diff<V>, n: Prim<V, K>, ct: V): readonly Lin<V>[];
}

/** A concatenation along a base axis, as its parts (null: zeros). */
interface Pieces<V> {
  readonly axis: number;
  readonly parts: readonly { readonly size: number; readonly v: Lin<V> }[];
}

/** A constant of batch shape `()` whose values the transform knows (seeds, and what slicing them gives). */
interface Known {
  readonly shape: readonly number[];
  readonly data: readonly number[];
}

/**
 * The algebra the rules are written in: ops on values with the symbolic zero
 * (`null`) and a little constant folding on known constants, so that the
 * one-hot seeds of a per-sample Jacobian become structural zeros and ones when
 * a formula picks the components of its argument.
 */
export class Diff<V> {
  private readonly known = new Map<V, Known>();

  constructor(readonly b: Builder<V>) {}

  type(v: V): TensorType {
    return this.b.typeOf(v);
  }
  op(op: Op, inputs: readonly V[], attrs: Attrs = {}): V {
    return this.b.make(op, inputs, attrs);
  }
  /** A scalar constant `(;)`. */
  scalar(value: number, dtype: DType): V {
    const v = this.b.make("const", [], { dtype, value });
    this.known.set(v, { shape: [], data: [value] });
    return v;
  }
  /** A constant of batch shape `()` and base `shape` with row-major `data`. */
  constant(shape: readonly number[], data: readonly number[], dtype: DType): V {
    let v: V;
    if (data.length > 0 && data.every((x) => Object.is(x, data[0]))) {
      v = this.scalar(data[0]!, dtype);
      if (shape.length > 0) v = this.op("expand", [v], { shape });
    } else if (data.length === 0) {
      v = this.op("expand", [this.scalar(0, dtype)], { shape });
    } else {
      // Runs of equal values, each an expanded scalar, concatenated and reshaped.
      const parts: V[] = [];
      for (let i = 0; i < data.length;) {
        let j = i + 1;
        while (j < data.length && Object.is(data[j], data[i])) j++;
        parts.push(this.op("expand", [this.scalar(data[i]!, dtype)], { shape: [j - i] }));
        i = j;
      }
      v = parts.length === 1 ? parts[0]! : this.op("concat", parts, { axis: 0 });
      v = this.op("reshape", [v], { shape });
    }
    this.known.set(v, { shape, data });
    return v;
  }
  private allEqual(v: Lin<V>, x: number): boolean {
    if (v === null) return x === 0;
    const k = this.known.get(v);
    return k !== undefined && k.data.length > 0 && k.data.every((y) => y === x);
  }
  /** Null when `v` is a known constant of zeros. */
  nz(v: Lin<V>): Lin<V> {
    return v !== null && this.allEqual(v, 0) ? null : v;
  }
  /** Zeros `(; base)` of `t`'s dtype (broadcasts over any batch). */
  zeros(t: TensorType): V {
    const z = this.scalar(0, t.dtype);
    return t.base.length === 0 ? z : this.op("expand", [z], { shape: t.base });
  }
  /** `v`, or zeros shaped like `t` when it is the symbolic zero. */
  orZeros(v: Lin<V>, t: TensorType): V {
    return v ?? this.zeros(t);
  }

  /** Makes a tangent's base exactly `t.base` (an expand where a fold left it smaller). */
  fit(v: Lin<V>, t: TensorType): Lin<V> {
    if (v === null) return null;
    const vt = this.type(v);
    if (vt.dtype !== t.dtype) v = this.op("cast", [v], { dtype: t.dtype });
    if (sameDims(vt.base, t.base)) return v;
    let x = v;
    if (vt.base.length < t.base.length) {
      x = this.op("reshape", [x], { shape: [...Array(t.base.length - vt.base.length).fill(1), ...vt.base] });
    }
    return this.op("expand", [x], { shape: t.base });
  }

  /**
   * `v` with the full batch shape of `like` (and its base): a batch expand where
   * the sizes are known, else `where(isnan(like), v, v)`, whose type is the
   * broadcast (no pass folds it: the result's type differs from `v`'s).
   */
  full(v: V, like: TensorType, likeValue?: V): V {
    const vt = this.type(v);
    const fitted = this.fit(v, { ...like, dtype: vt.dtype })!;
    if (sameDims(vt.batch, like.batch)) return fitted;
    if (isConcrete(like.batch)) {
      let x: V = fitted;
      for (let i = this.type(x).batch.length; i < like.batch.length; i++)
        x = this.op("batch_unsqueeze", [x], { dim: 0 });
      return this.op("batch_expand", [x], { shape: like.batch });
    }
    if (likeValue === undefined) {
      throw new UnsupportedOpError(
        `derivative: cannot broadcast a ${fmtTypeShape(vt)} derivative to ${fmtTypeShape(like)} with symbolic batch dims`,
      );
    }
    const c = this.op("isnan", [likeValue]);
    return this.op("where", [c, fitted, fitted]);
  }

  add(a: Lin<V>, b: Lin<V>): Lin<V> {
    a = this.nz(a);
    b = this.nz(b);
    if (a === null) return b;
    if (b === null) return a;
    const pw = this.piecewise2(a, b, (x, y) => this.add(x, y));
    if (pw !== undefined) return pw;
    return this.op("add", [a, b]);
  }
  sub(a: Lin<V>, b: Lin<V>): Lin<V> {
    a = this.nz(a);
    b = this.nz(b);
    if (b === null) return a;
    if (a === null) return this.neg(b);
    const pw = this.piecewise2(a, b, (x, y) => this.sub(x, y));
    if (pw !== undefined) return pw;
    return this.op("sub", [a, b]);
  }
  neg(a: Lin<V>): Lin<V> {
    a = this.nz(a);
    if (a === null) return null;
    const P = this.pieces.get(a);
    if (P !== undefined)
      return this.concatLin(
        P.axis,
        P.parts.map((p) => ({ size: p.size, v: this.neg(p.v) })),
        this.type(a),
      );
    return this.op("neg", [a]);
  }
  /** A (co)tangent times a primal factor. */
  mul(a: Lin<V>, f: V): Lin<V> {
    a = this.nz(a);
    if (a === null) return null;
    // x·1 = x, keeping the product's base (the one side may broadcast over the other).
    if (this.allEqual(a, 1)) return this.fitBase(f, a);
    if (this.allEqual(f, 1)) return this.fitBase(a, f);
    const pw = this.piecewiseScale(a, f, (x, g) => this.mul(x, g));
    if (pw !== undefined) return pw;
    return this.op("mul", [a, f]);
  }
  /** `v` expanded to the base it has when broadcast against `other`'s. */
  private fitBase(v: V, other: V): V {
    const vt = this.type(v);
    const ob = this.type(other).base;
    const r = broadcastShapes<number>(vt.base, ob);
    if (!r.ok || sameDims(r.shape, vt.base)) return v;
    return this.fit(v, { ...vt, base: r.shape })!;
  }
  /** A (co)tangent divided by a primal divisor. */
  div(a: Lin<V>, f: V): Lin<V> {
    a = this.nz(a);
    if (a === null) return null;
    const pw = this.piecewiseScale(a, f, (x, g) => this.div(x, g));
    if (pw !== undefined) return pw;
    return this.op("div", [a, f]);
  }
  where(c: V, a: Lin<V>, b: Lin<V>, like: TensorType): Lin<V> {
    a = this.nz(a);
    b = this.nz(b);
    if (a === null && b === null) return null;
    const z = this.scalar(0, like.dtype);
    return this.op("where", [c, a ?? z, b ?? z]);
  }
  /** A linear movement op on a (co)tangent, folded on known constants and on concatenations of parts. */
  move(...[op, a0, attrs]: MoveArgs<V>): Lin<V> {
    const a = this.nz(a0);
    if (a === null) return null;
    const k = this.known.get(a);
    if (k !== undefined && (op === "reshape" || op === "slice")) {
      const dtype = this.type(a).dtype;
      if (op === "reshape") return this.nz(this.constant(attrs.shape, k.data, dtype));
      const r = sliceHost(k, attrs);
      return this.nz(this.constant(r.shape, r.data, dtype));
    }
    if (op === "slice") {
      const { axis, start, stop, step } = attrs;
      if (step === 1 || stop - start <= 1) {
        const r = this.part(a, axis, start, step === 1 ? stop : start + 1);
        if (r !== undefined) return r;
      }
    }
    return this.op(op, [a], attrs);
  }

  // --- concatenations of parts (null parts are zeros) ---

  private readonly pieces = new Map<V, Pieces<V>>();

  /**
   * The concatenation along base `axis` of parts (null: zeros) whose result has
   * `like`'s dtype and base sizes off the axis. Remembered, so that slicing it
   * gives a part back and adding two of them adds part by part: a formula over
   * components keeps the structural zeros of its derivative.
   */
  concatLin(axis: number, parts: readonly { size: number; v: Lin<V> }[], like: TensorType): Lin<V> {
    const ps = parts.filter((p) => p.size > 0).map((p) => ({ size: p.size, v: this.nz(p.v) }));
    if (ps.every((p) => p.v === null)) return null;
    const baseOf = (size: number): number[] => like.base.map((d, i) => (i === axis ? size : d));
    const fitted = ps.map((p) => ({
      size: p.size,
      v: p.v === null ? null : this.fit(p.v, { dtype: like.dtype, batch: [], base: baseOf(p.size) }),
    }));
    if (fitted.length === 1) return fitted[0]!.v;
    const vs = fitted.map((p) => p.v ?? this.zeros({ dtype: like.dtype, batch: [], base: baseOf(p.size) }));
    const v = this.op("concat", vs, { axis });
    this.pieces.set(v, { axis, parts: fitted });
    return v;
  }

  /** The parts of `a` along a base axis: a remembered concatenation, or a known constant cut along axis 0. */
  private partsOf(a: V): Pieces<V> | undefined {
    const P = this.pieces.get(a);
    if (P !== undefined) return P;
    const k = this.known.get(a);
    if (k === undefined || k.shape.length === 0 || k.shape[0]! > 64 || k.shape[0]! < 2) return undefined;
    const dtype = this.type(a).dtype;
    const parts: { size: number; v: Lin<V> }[] = [];
    for (let i = 0; i < k.shape[0]!; i++) {
      const r = sliceHost(k, { axis: 0, start: i, stop: i + 1, step: 1 });
      parts.push({ size: 1, v: this.nz(this.constant(r.shape, r.data, dtype)) });
    }
    return { axis: 0, parts };
  }

  /** `a[start:stop]` along `axis` from its parts, or undefined when `a` has no parts on that axis. */
  private part(a: V, axis: number, start: number, stop: number): Lin<V> | undefined {
    const P = this.pieces.get(a);
    if (P === undefined || P.axis !== axis) return undefined;
    const out: { size: number; v: Lin<V> }[] = [];
    let off = 0;
    for (const p of P.parts) {
      const s = off;
      const e = off + p.size;
      off = e;
      const lo = Math.max(s, start);
      const hi = Math.min(e, stop);
      if (lo >= hi) continue;
      const v =
        p.v === null || (lo === s && hi === e)
          ? p.v
          : this.move("slice", p.v, { axis, start: lo - s, stop: hi - s, step: 1 });
      out.push({ size: hi - lo, v });
    }
    const t = this.type(a);
    return this.concatLin(axis, out, { ...t, base: t.base.map((d, i) => (i === axis ? stop - start : d)) });
  }

  /** `op(a, b)` part by part when both are concatenations along the same axis with the same base. */
  private piecewise2(a: V, b: V, f: (x: Lin<V>, y: Lin<V>) => Lin<V>): Lin<V> | undefined {
    const A = this.pieces.get(a);
    const B = this.pieces.get(b);
    if (A === undefined || B === undefined || A.axis !== B.axis) return undefined;
    const at = this.type(a);
    const bt = this.type(b);
    if (!sameDims(at.base, bt.base)) return undefined;
    const cuts = new Set<number>([0]);
    for (const P of [A, B]) {
      let off = 0;
      for (const p of P.parts) cuts.add((off += p.size));
    }
    const sorted = [...cuts].sort((x, y) => x - y);
    const parts: { size: number; v: Lin<V> }[] = [];
    for (let i = 0; i + 1 < sorted.length; i++) {
      const s = sorted[i]!;
      const e = sorted[i + 1]!;
      parts.push({ size: e - s, v: f(this.part(a, A.axis, s, e)!, this.part(b, A.axis, s, e)!) });
    }
    return this.concatLin(A.axis, parts, at);
  }

  /** `op(a, f)` part by part for a primal factor `f` (sliced along the parts when it is not broadcast there). */
  private piecewiseScale(a: V, f: V, op: (x: Lin<V>, g: V) => Lin<V>): Lin<V> | undefined {
    const P = this.partsOf(a);
    if (P === undefined) return undefined;
    const at = this.type(a);
    const ft = this.type(f);
    if (ft.base.length > at.base.length) return undefined;
    const fa = P.axis - (at.base.length - ft.base.length);
    const broadcast = fa < 0 || ft.base[fa] === 1;
    if (!broadcast && ft.base[fa] !== at.base[P.axis]) return undefined;
    const base = at.base.map((d, i) => {
      const j = i - (at.base.length - ft.base.length);
      return j >= 0 && d === 1 ? ft.base[j]! : d;
    });
    let off = 0;
    const parts = P.parts.map((p) => {
      const s = off;
      off += p.size;
      const g = broadcast ? f : this.op("slice", [f], { axis: fa, start: s, stop: s + p.size, step: 1 });
      return { size: p.size, v: p.v === null ? null : op(p.v, g) };
    });
    return this.concatLin(P.axis, parts, { dtype: at.dtype, batch: at.batch, base });
  }

  /** `sum` of a (co)tangent over some axes. */
  sum(a: Lin<V>, batchAxes: readonly number[], baseAxes: readonly number[], keep: boolean): Lin<V> {
    a = this.nz(a);
    if (a === null) return null;
    if (batchAxes.length === 0 && baseAxes.length === 0) return a;
    return this.op("sum", [a], { batchAxes, baseAxes, keep });
  }

  /**
   * Sums a cotangent (broadcast to some result type) back to the shape of the
   * input `x` it broadcast from: extra leading dims and dims where `x` has size 1
   * are summed. The result's batch may stay smaller than `x`'s (it broadcasts).
   */
  unbroadcast(ct: Lin<V>, x: TensorType): Lin<V> {
    ct = this.nz(ct);
    if (ct === null) return null;
    let t = this.type(ct);
    const P = this.pieces.get(ct);
    if (P !== undefined) {
      const lead0 = t.base.length - x.base.length;
      const xa = P.axis - lead0;
      if (xa < 0 || (x.base[xa] === 1 && t.base[P.axis] !== 1)) {
        // The parts' axis is summed away: sum each part, then add.
        let acc: Lin<V> = null;
        for (const p of P.parts) acc = this.add(acc, this.unbroadcast(p.v, x));
        return acc;
      }
    }
    // Base: extra leading axes summed away, size-1 axes of x summed with keep.
    const lead = t.base.length - x.base.length;
    const baseAxes: number[] = [];
    for (let i = 0; i < t.base.length; i++) {
      if (i < lead) baseAxes.push(i);
      else if (x.base[i - lead] === 1 && t.base[i] !== 1) baseAxes.push(i);
    }
    const blead = Math.max(0, t.batch.length - x.batch.length);
    const batchAxes: number[] = [];
    for (let i = 0; i < t.batch.length; i++) {
      if (i < blead) batchAxes.push(i);
      else {
        const xd = x.batch[i - blead + (x.batch.length - (t.batch.length - blead))];
        if (xd === 1 && t.batch[i] !== 1) batchAxes.push(i);
      }
    }
    let r: V = ct;
    if (batchAxes.length > 0 || baseAxes.length > 0) {
      r = this.op("sum", [r], { batchAxes, baseAxes, keep: true });
      t = this.type(r);
    }
    for (let i = 0; i < blead; i++) r = this.op("batch_squeeze", [r], { dim: 0 });
    if (!sameDims(this.type(r).base, x.base)) r = this.op("reshape", [r], { shape: x.base });
    return r;
  }
}

export function sameDims(a: readonly Dim[], b: readonly Dim[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

function stridesOf(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1]! * shape[i + 1]!;
  return s;
}

function sliceHost(k: Known, a: AttrsOf<"slice">): Known {
  const shape = [...k.shape];
  shape[a.axis] = Math.max(0, Math.ceil((a.stop - a.start) / a.step));
  const inS = stridesOf(k.shape);
  const out: number[] = [];
  const n = prod(shape);
  const outS = stridesOf(shape);
  for (let f = 0; f < n; f++) {
    let off = 0;
    for (let d = 0; d < shape.length; d++) {
      let i = Math.floor(f / outS[d]!) % shape[d]!;
      if (d === a.axis) i = a.start + i * a.step;
      off += i * inS[d]!;
    }
    out.push(k.data[off]!);
  }
  return { shape, data: out };
}

/** Whether a value of type `t` carries derivatives (a float). */
export const floatLike = (t: TensorType): boolean => isFloat(t.dtype);
