/**
 * The reference interpreter: the living definition of every op and the oracle of
 * every differential test. Plain loops over multi-indices, no cleverness: each
 * node is computed in full (in float64 arithmetic) and stored in its dtype's
 * typed array, so float32 results round once per op.
 */
import {
  ARRAY_CTOR,
  castScalar,
  isFloat,
  isSignedInt,
  isUnsigned,
  roundFloat16,
  type DType,
  type TypedArray,
} from "./dtype.js";
import { UnsupportedOpError } from "./errors.js";
import { hasOp, isReduceNode, topoOrder, type Graph, type Node } from "./graph.js";
import { isBinaryOp, isUnaryOp, type KBinaryOp, type KUnaryOp } from "./elementwise.js";
import { takeFill, type KReduceOp } from "./kernel.js";
import { numberMachine, routineSpec, runRoutine } from "./routines.js";
import { inferConcrete, longestRow, runtimeLengthNodes, runtimeLengthOffsets, type ConcreteType } from "./shapes.js";
import { prod } from "./types.js";

export interface Value {
  readonly type: ConcreteType;
  readonly data: TypedArray;
}

function fullShape(t: ConcreteType): number[] {
  return [...t.batch, ...t.base];
}

function stridesOf(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length).fill(0);
  let acc = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    s[i] = acc;
    acc *= shape[i]!;
  }
  return s;
}

/** Calls `f(multiIndex, flat)` for every element of `shape`, row-major. */
function forEachIndex(shape: readonly number[], f: (idx: number[], flat: number) => void): void {
  const total = prod(shape);
  const idx = new Array<number>(shape.length).fill(0);
  for (let flat = 0; flat < total; flat++) {
    f(idx, flat);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d]! < shape[d]!) break;
      idx[d] = 0;
    }
  }
}

/** Offset into `src` for an element of `dst`, broadcasting batch against batch and base against base. */
function broadcastOffset(src: ConcreteType, dst: ConcreteType, idx: readonly number[]): number {
  const st = stridesOf(fullShape(src));
  let off = 0;
  const nb = dst.batch.length;
  for (let i = 0; i < src.batch.length; i++) {
    const d = nb - src.batch.length + i;
    if (src.batch[i] !== 1) off += idx[d]! * st[i]!;
  }
  const sb = src.batch.length;
  for (let i = 0; i < src.base.length; i++) {
    const d = nb + dst.base.length - src.base.length + i;
    if (src.base[i] !== 1) off += idx[d]! * st[sb + i]!;
  }
  return off;
}

/** Offset of `x[batch…, lead…, tail…]` where x's batch and leading base dims broadcast (size 1 reads index 0). */
function matmulOffset(
  x: ConcreteType,
  batchIdx: readonly number[],
  lead: readonly number[],
  tail: readonly number[],
): number {
  const st = stridesOf(fullShape(x));
  let off = 0;
  x.batch.forEach((d, i) => {
    if (d !== 1) off += batchIdx[batchIdx.length - x.batch.length + i]! * st[i]!;
  });
  const xLead = x.base.length - tail.length;
  for (let i = 0; i < xLead; i++) {
    if (x.base[i] !== 1) off += lead[lead.length - xLead + i]! * st[x.batch.length + i]!;
  }
  tail.forEach((v, i) => (off += v * st[x.batch.length + xLead + i]!));
  return off;
}

function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The definition of every unary op on one value (`int`: of an integer dtype; a missing op fails `tsc`). */
const UNARY_REF: { readonly [K in KUnaryOp]: (x: number, int: boolean) => number } = {
  neg: (x) => -x,
  abs: (x) => Math.abs(x),
  square: (x, int) => (int ? Math.imul(x, x) : x * x),
  sqrt: (x) => Math.sqrt(x),
  rsqrt: (x) => 1 / Math.sqrt(x),
  exp: (x) => Math.exp(x),
  log: (x) => Math.log(x),
  sin: (x) => Math.sin(x),
  cos: (x) => Math.cos(x),
  tan: (x) => Math.tan(x),
  tanh: (x) => Math.tanh(x),
  sigmoid: (x) => 1 / (1 + Math.exp(-x)),
  asin: (x) => Math.asin(x),
  acos: (x) => Math.acos(x),
  atan: (x) => Math.atan(x),
  floor: (x) => Math.floor(x),
  ceil: (x) => Math.ceil(x),
  round: (x) => roundHalfEven(x),
  trunc: (x) => Math.trunc(x),
  sign: (x) => (Number.isNaN(x) ? NaN : Math.sign(x)),
  not: (x) => (x === 0 ? 1 : 0),
  isnan: (x) => (Number.isNaN(x) ? 1 : 0),
  isinf: (x) => (x === Infinity || x === -Infinity ? 1 : 0),
  isfinite: (x) => (Number.isFinite(x) ? 1 : 0),
};

export function unaryRef(op: KUnaryOp, x: number, dtype: DType): number {
  return UNARY_REF[op](x, !isFloat(dtype));
}

/**
 * IEEE 754 pow: as Math.pow, except that 1 to any power (NaN included) and -1 to
 * ±Infinity are 1 (C99, NumPy), where Math.pow gives NaN.
 */
export function ieeePow(a: number, b: number): number {
  return a === 1 || (a === -1 && (b === Infinity || b === -Infinity)) ? 1 : Math.pow(a, b);
}

/**
 * Integer pow that wraps like the dtype: exponentiation by squaring on the low 32
 * bits (Math.imul), exact for every exponent (a float pow loses the low bits past
 * 2^53). A negative exponent gives trunc(1 / a^|b|): 1 for a = 1, ±1 for a = -1,
 * and 0 for every other a, 0 included (NumPy raises instead).
 */
export function intPow(a: number, b: number, dtype: DType): number {
  if (b < 0) return a === 1 ? 1 : a === -1 ? (b % 2 === 0 ? 1 : -1) : 0;
  let r = 1;
  let x = a | 0;
  for (let e = b >>> 0; e !== 0; e >>>= 1) {
    if ((e & 1) !== 0) r = Math.imul(r, x);
    x = Math.imul(x, x);
  }
  return dtype === "uint32" ? r >>> 0 : dtype === "int32" ? r | 0 : castScalar(r, dtype);
}

/**
 * NumPy's floor modulo (`%`): the sign of the divisor. A zero result is a zero
 * of the divisor's sign; x % ±Infinity is x when the signs agree (or x is 0) and
 * the divisor otherwise; x % 0 and ±Infinity % y are NaN. Integers: x % 0 is 0.
 */
export function floorMod(a: number, b: number, int: boolean): number {
  if (b === 0) return int ? 0 : NaN;
  const r = a % b;
  if (r === 0) return int ? 0 : b < 0 ? -0 : 0;
  return r < 0 !== b < 0 ? r + b : r;
}

/** A 32-bit pattern as a value of dtype `d` (uint32: 0 … 2^32-1; int32: signed; a narrow dtype: wrapped into it). */
function asInt(v: number, d: DType): number {
  return d === "uint32" ? v >>> 0 : d === "int32" ? v | 0 : castScalar(v, d);
}

/**
 * NumPy's `left_shift` on 32-bit integers (npy_lshift): a count in [0, 32) shifts, any
 * other count (32 and more, or negative on int32) shifts every bit out and gives 0.
 */
export function shiftLeft(a: number, b: number, d: DType): number {
  return b >= 0 && b < 32 ? asInt(a << b, d) : 0;
}

/**
 * NumPy's `right_shift` on 32-bit integers (npy_rshift): logical on uint32, arithmetic on
 * int32; a count outside [0, 32) gives 0, or -1 for a negative int32 (the sign fills every bit).
 */
export function shiftRight(a: number, b: number, d: DType): number {
  if (b >= 0 && b < 32) return isUnsigned(d) ? a >>> b : a >> b;
  return isSignedInt(d) && a < 0 ? -1 : 0;
}

/**
 * The definition of every binary op on two values of the operand dtype (`int`: an integer dtype);
 * a missing op fails `tsc`.
 */
const BINARY_REF: { readonly [K in KBinaryOp]: (a: number, b: number, dtype: DType, int: boolean) => number } = {
  add: (a, b) => a + b,
  sub: (a, b) => a - b,
  mul: (a, b, _d, int) => (int ? Math.imul(a, b) : a * b),
  div: (a, b, _d, int) => (int ? (b === 0 ? 0 : Math.trunc(a / b)) : a / b),
  pow: (a, b, dtype, int) => (int ? intPow(a, b, dtype) : ieeePow(a, b)),
  atan2: (a, b) => Math.atan2(a, b),
  maximum: (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.max(a, b)),
  minimum: (a, b) => (Number.isNaN(a) || Number.isNaN(b) ? NaN : Math.min(a, b)),
  mod: (a, b, _d, int) => floorMod(a, b, int),
  eq: (a, b) => (a === b ? 1 : 0),
  ne: (a, b) => (a !== b ? 1 : 0),
  lt: (a, b) => (a < b ? 1 : 0),
  le: (a, b) => (a <= b ? 1 : 0),
  gt: (a, b) => (a > b ? 1 : 0),
  ge: (a, b) => (a >= b ? 1 : 0),
  and: (a, b) => (a !== 0 && b !== 0 ? 1 : 0),
  or: (a, b) => (a !== 0 || b !== 0 ? 1 : 0),
  xor: (a, b) => ((a !== 0) !== (b !== 0) ? 1 : 0),
  // --- numerics/random: integer bitwise ops (int32/uint32 operands only) ---
  bitwise_and: (a, b, d) => asInt(a & b, d),
  bitwise_or: (a, b, d) => asInt(a | b, d),
  bitwise_xor: (a, b, d) => asInt(a ^ b, d),
  left_shift: (a, b, d) => shiftLeft(a, b, d),
  right_shift: (a, b, d) => shiftRight(a, b, d),
};

export function binaryRef(op: KBinaryOp, a: number, b: number, dtype: DType): number {
  return BINARY_REF[op](a, b, dtype, !isFloat(dtype));
}

/**
 * The sum of `values` in order, as NumPy: the sum of a non-empty group starts at -0 (the
 * exact additive identity, -0 + x = x for every x), so a group of -0s sums to -0; an
 * empty group sums to +0.
 */
export function sumRef(values: readonly number[], round: (v: number) => number = (v) => v): number {
  return values.length === 0 ? 0 : values.reduce((s, v) => round(s + v), -0);
}

/**
 * How float32 sums and products accumulate: "float64" (the reference, and the JS
 * backend: in float64, rounded once when stored) or "float32" (rounded after every
 * step, as WGSL, which has no float64, and NumPy's float32 reductions do; a running
 * value can then overflow or underflow where the float64 one does not).
 */
export type Accumulation = "float64" | "float32";

/** Combines the values of one reduction group. `values` in iteration order. */
export function reduceRef(
  op: KReduceOp,
  values: readonly number[],
  dtype: DType,
  acc: Accumulation = "float64",
): number {
  // The dtype the op accumulates in: a mean of integers is float32.
  const f32 = acc === "float32" && (dtype === "float32" || (op === "mean" && !isFloat(dtype)));
  return REDUCE_REF[op](values, dtype, f32 ? Math.fround : (v: number) => v);
}

/** The first position of the best value (`better`: strictly better); the first NaN wins and sticks. */
function argRef(values: readonly number[], better: (v: number, cur: number) => boolean): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) {
    const v = values[i]!;
    const cur = values[best]!;
    if (Number.isNaN(cur)) break;
    if (Number.isNaN(v) || better(v, cur)) best = i;
  }
  return best;
}

/**
 * The definition of every reduction on one group of values (in iteration order), `round`
 * rounding each running value to the accumulation dtype; a missing reduction fails `tsc`.
 */
const REDUCE_REF: {
  readonly [K in KReduceOp]: (values: readonly number[], dtype: DType, round: (v: number) => number) => number;
} = {
  sum: (values, _d, round) => sumRef(values, round),
  mean: (values, _d, round) => sumRef(values, round) / values.length,
  prod: (values, dtype, round) => values.reduce((s, v) => (isFloat(dtype) ? round(s * v) : Math.imul(s, v)), 1),
  min: (values) => values.reduce((m, v) => (Number.isNaN(m) || Number.isNaN(v) ? NaN : Math.min(m, v)), Infinity),
  max: (values) => values.reduce((m, v) => (Number.isNaN(m) || Number.isNaN(v) ? NaN : Math.max(m, v)), -Infinity),
  argmin: (values) => argRef(values, (v, cur) => v < cur),
  argmax: (values) => argRef(values, (v, cur) => v > cur),
  all: (values) => (values.every((v) => v !== 0) ? 1 : 0),
  any: (values) => (values.some((v) => v !== 0) ? 1 : 0),
};

function evalNode(n: Node, t: ConcreteType, ins: readonly Value[], acc: Accumulation): TypedArray {
  const out = new ARRAY_CTOR[t.dtype](prod(fullShape(t)));
  const op = n.op;
  if (hasOp(n, "const")) {
    out[0] = n.attrs.value;
  } else if (op === "cast") {
    const [x] = ins;
    forEachIndex(fullShape(t), (_i, flat) => {
      const v = x!.data[flat]!;
      out[flat] =
        t.dtype === "bool" ? (v !== 0 ? 1 : 0) : isFloat(t.dtype) ? v : Number.isFinite(v) ? Math.trunc(v) : 0;
    });
  } else if (isUnaryOp(op)) {
    const [x] = ins;
    forEachIndex(fullShape(t), (_i, flat) => {
      out[flat] = unaryRef(op, x!.data[flat]!, x!.type.dtype);
    });
  } else if (isBinaryOp(op)) {
    const [x, y] = ins;
    forEachIndex(fullShape(t), (idx, flat) => {
      const a = x!.data[broadcastOffset(x!.type, t, idx)]!;
      const b = y!.data[broadcastOffset(y!.type, t, idx)]!;
      out[flat] = binaryRef(op, a, b, x!.type.dtype);
    });
  } else if (op === "where") {
    const [c, x, y] = ins;
    forEachIndex(fullShape(t), (idx, flat) => {
      const cv = c!.data[broadcastOffset(c!.type, t, idx)]!;
      out[flat] = cv !== 0 ? x!.data[broadcastOffset(x!.type, t, idx)]! : y!.data[broadcastOffset(y!.type, t, idx)]!;
    });
  } else if (isReduceNode(n)) {
    const x = ins[0]!;
    const batchAxes = n.attrs.batchAxes;
    const baseAxes = n.attrs.baseAxes.map((a) => a + x.type.batch.length);
    const axes = [...batchAxes, ...baseAxes];
    const xs = fullShape(x.type);
    const keptAxes = xs.map((_, i) => i).filter((i) => !axes.includes(i));
    const groups = new Map<number, number[]>();
    const keptShape = keptAxes.map((a) => xs[a]!);
    const keptStrides = stridesOf(keptShape);
    forEachIndex(xs, (idx, flat) => {
      let o = 0;
      keptAxes.forEach((a, j) => (o += idx[a]! * keptStrides[j]!));
      let g = groups.get(o);
      if (g === undefined) groups.set(o, (g = []));
      g.push(x.data[flat]!);
    });
    for (let o = 0; o < out.length; o++) out[o] = reduceRef(op as KReduceOp, groups.get(o) ?? [], x.type.dtype, acc);
  } else if (hasOp(n, "batch_slice")) {
    const x = ins[0]!;
    const { axis, step } = n.attrs;
    // A negative step starts at position n-1-start (start counts from the end).
    const start = step < 0 ? x.type.batch[axis]! - 1 - n.attrs.start : n.attrs.start;
    const xst = stridesOf(fullShape(x.type));
    forEachIndex(fullShape(t), (idx, flat) => {
      let off = 0;
      idx.forEach((v, d) => (off += (d === axis ? start + v * step : v) * xst[d]!));
      out[flat] = x.data[off]!;
    });
  } else if (hasOp(n, "batch_concat")) {
    const axis = n.attrs.axis;
    forEachIndex(fullShape(t), (idx, flat) => {
      let k = 0;
      let at = idx[axis]!;
      while (at >= ins[k]!.type.batch[axis]!) at -= ins[k++]!.type.batch[axis]!;
      const x = ins[k]!;
      const xst = stridesOf(fullShape(x.type));
      let off = 0;
      idx.forEach((v, d) => (off += (d === axis ? at : v) * xst[d]!));
      out[flat] = x.data[off]!;
    });
  } else if (
    op === "reshape" ||
    op === "batch_reshape" ||
    op === "batch_unsqueeze" ||
    op === "batch_squeeze" ||
    op === "rebatch"
  ) {
    out.set(ins[0]!.data);
  } else if (hasOp(n, "permute")) {
    const x = ins[0]!;
    const perm = n.attrs.perm;
    const nb = t.batch.length;
    const xst = stridesOf(fullShape(x.type));
    forEachIndex(fullShape(t), (idx, flat) => {
      let off = 0;
      for (let d = 0; d < nb; d++) off += idx[d]! * xst[d]!;
      perm.forEach((p, d) => (off += idx[nb + d]! * xst[nb + p]!));
      out[flat] = x.data[off]!;
    });
  } else if (hasOp(n, "segment_reduce")) {
    const [v, o] = ins;
    const S = prod(v!.type.base);
    const r = n.attrs.op;
    for (let b = 0; b + 1 < o!.data.length; b++) {
      const lo = o!.data[b]!;
      const hi = o!.data[b + 1]!;
      for (let s = 0; s < S; s++) {
        const vals: number[] = [];
        for (let t = lo; t < hi; t++) vals.push(v!.data[t * S + s]!);
        // An empty row gives 0 for argmax (its position rule starts at 0), as for count.
        out[b * S + s] = r === "count" ? hi - lo : reduceRef(r, vals, v!.type.dtype, acc);
      }
    }
  } else if (op === "segment_expand") {
    const [x, o] = ins;
    const S = prod(x!.type.base);
    for (let b = 0; b + 1 < o!.data.length; b++) {
      const row = x!.type.batch[0] === 1 ? 0 : b;
      for (let t = o!.data[b]!; t < o!.data[b + 1]!; t++)
        for (let s = 0; s < S; s++) out[t * S + s] = x!.data[row * S + s]!;
    }
  } else if (op === "segment_unpad") {
    const [p, o] = ins;
    const M = p!.type.batch[1]!;
    const S = prod(t.base);
    for (let b = 0; b + 1 < o!.data.length; b++) {
      for (let t2 = o!.data[b]!; t2 < o!.data[b + 1]!; t2++) {
        const n = t2 - o!.data[b]!;
        for (let s = 0; s < S; s++) out[t2 * S + s] = n < M ? p!.data[(b * M + n) * S + s]! : 0;
      }
    }
  } else if (hasOp(n, "segment_pad", "segment_mask")) {
    const o = op === "segment_pad" ? ins[1]! : ins[0]!;
    const v = op === "segment_pad" ? ins[0]! : undefined;
    const maxN = t.batch[1]!; // attrs.maxN, or the longest row when it is -1
    const left = n.attrs.left;
    const padValue = hasOp(n, "segment_pad") ? n.attrs.value : 0;
    const S = prod(t.base);
    for (let b = 0; b + 1 < o.data.length; b++) {
      const lo = o.data[b]!;
      const len = Math.min(o.data[b + 1]! - lo, maxN);
      const start = left ? maxN - len : 0;
      for (let k = 0; k < maxN; k++) {
        const inside = k >= start && k < start + len;
        for (let s = 0; s < S; s++) {
          out[(b * maxN + k) * S + s] =
            v === undefined ? (inside ? 1 : 0) : inside ? v.data[(lo + k - start) * S + s]! : padValue;
        }
      }
    }
  } else if (hasOp(n, "routine")) {
    // --- looped matrix routines: the algorithm of ir/routines.ts on plain numbers, per batch element ---
    const dtype = t.dtype;
    const spec = routineSpec(
      n.attrs.name,
      ins[0]!.type.base,
      { cols: n.attrs.arg, sweeps: n.attrs.arg },
      dtype,
      ins[1]?.type.base[1] ?? 0,
    );
    const S = prod(t.base);
    const sizes = ins.map((x) => prod(x.type.base));
    forEachIndex(t.batch, (bi, flat) => {
      // Each input's batch dims align with the result's from the right; size 1 broadcasts.
      const starts = ins.map((x, k) => {
        let off = 0;
        let stride = sizes[k]!;
        for (let d = x.type.batch.length - 1; d >= 0; d--) {
          if (x.type.batch[d] !== 1) off += bi[t.batch.length - x.type.batch.length + d]! * stride;
          stride *= x.type.batch[d]!;
        }
        return off;
      });
      const o = flat * S;
      const M = numberMachine(dtype, (k, i) => ins[k]!.data[starts[k]! + i]!, {
        get: (i) => out[o + i]!,
        set: (i, v) => (out[o + i] = v),
      });
      runRoutine(M, spec);
    });
    // --- end looped matrix routines ---
  } else if (hasOp(n, "take")) {
    // np.take on a base axis; negative indices wrap once; out of range gives the fill value.
    const [x, ind] = ins;
    const a = n.attrs.axis;
    const len = x!.type.base[a]!;
    const m = ind!.type.base.length;
    const nb = t.batch.length;
    const fill = takeFill(t.dtype);
    forEachIndex(fullShape(t), (idx, flat) => {
      const batch = idx.slice(0, nb);
      const base = idx.slice(nb);
      const at = base.slice(a, a + m);
      let p = ind!.data[broadcastOffset(ind!.type, { ...t, base: ind!.type.base }, [...batch, ...at])]!;
      if (p < 0) p += len;
      if (p < 0 || p >= len) {
        out[flat] = fill;
        return;
      }
      const xi = [...batch, ...base.slice(0, a), p, ...base.slice(a + m)];
      out[flat] = x!.data[broadcastOffset(x!.type, { ...t, base: x!.type.base }, xi)]!;
    });
  } else if (hasOp(n, "scatter")) {
    // --- scatter --- A copy of x, then every element of the update shape in row-major
    // order (batch first): its index i names position p = i (i + n when i < 0) on the
    // axis; indices outside [-n, n) are dropped; the mode combines in that order (set:
    // the last write wins).
    const [x, ind, upd] = ins;
    const a = n.attrs.axis;
    const mode = n.attrs.mode;
    const len = x!.type.base[a]!;
    const m = ind!.type.base.length;
    const nb = t.batch.length;
    const int = t.dtype === "int32" || t.dtype === "uint32";
    forEachIndex(fullShape(t), (idx, flat) => {
      out[flat] = x!.data[broadcastOffset(x!.type, t, idx)]!;
    });
    const xb = x!.type.base;
    const ut: ConcreteType = { ...t, base: [...xb.slice(0, a), ...ind!.type.base, ...xb.slice(a + 1)] };
    const ost = stridesOf(fullShape(t));
    forEachIndex(fullShape(ut), (idx) => {
      const batch = idx.slice(0, nb);
      const base = idx.slice(nb);
      let p =
        ind!.data[broadcastOffset(ind!.type, { ...t, base: ind!.type.base }, [...batch, ...base.slice(a, a + m)])]!;
      if (p < 0) p += len;
      if (p < 0 || p >= len) return;
      const oi = [...batch, ...base.slice(0, a), p, ...base.slice(a + m)];
      let off = 0;
      oi.forEach((v, d) => (off += v * ost[d]!));
      const v = upd!.data[broadcastOffset(upd!.type, ut, idx)]!;
      const old = out[off]!;
      out[off] =
        mode === "set"
          ? v
          : mode === "add"
            ? BINARY_REF.add(old, v, t.dtype, int)
            : mode === "mul"
              ? BINARY_REF.mul(old, v, t.dtype, int)
              : mode === "min"
                ? BINARY_REF.minimum(old, v, t.dtype, int)
                : BINARY_REF.maximum(old, v, t.dtype, int);
    });
  } else if (hasOp(n, "concat")) {
    const axis = t.batch.length + n.attrs.axis;
    const starts: number[] = [];
    let acc = 0;
    for (const x of ins) {
      starts.push(acc);
      acc += x.type.base[n.attrs.axis]!;
    }
    forEachIndex(fullShape(t), (idx, flat) => {
      let k = ins.length - 1;
      while (idx[axis]! < starts[k]!) k--;
      const x = ins[k]!;
      const local = [...idx];
      local[axis] = idx[axis]! - starts[k]!;
      out[flat] = x.data[broadcastOffset(x.type, { ...t, base: x.type.base }, local)]!;
    });
  } else if (hasOp(n, "slice")) {
    const x = ins[0]!;
    const axis = x.type.batch.length + n.attrs.axis;
    const { start, step } = n.attrs;
    const xst = stridesOf(fullShape(x.type));
    forEachIndex(fullShape(t), (idx, flat) => {
      let off = 0;
      idx.forEach((v, d) => (off += (d === axis ? start + v * step : v) * xst[d]!));
      out[flat] = x.data[off]!;
    });
  } else if (op === "expand" || op === "batch_expand") {
    const x = ins[0]!;
    forEachIndex(fullShape(t), (idx, flat) => {
      out[flat] = x.data[broadcastOffset(x.type, t, idx)]!;
    });
  } else if (op === "matmul") {
    const [a, b] = ins;
    const av = a!.type.base.length === 1;
    const bv = b!.type.base.length === 1;
    const K = a!.type.base[a!.type.base.length - 1]!;
    const nb = t.batch.length;
    const leadRank = t.base.length - (av ? 0 : 1) - (bv ? 0 : 1);
    forEachIndex(fullShape(t), (idx, flat) => {
      const batchIdx = idx.slice(0, nb);
      const baseIdx = idx.slice(nb);
      const lead = baseIdx.slice(0, leadRank);
      const i = av ? 0 : baseIdx[leadRank]!;
      const j = bv ? 0 : baseIdx[baseIdx.length - 1]!;
      // The K-sum follows the sum rule (`sumRef`): -0 for K > 0 products that are all -0, +0 for K = 0.
      let s = K === 0 ? 0 : -0;
      for (let k = 0; k < K; k++) {
        const x = a!.data[matmulOffset(a!.type, batchIdx, lead, av ? [k] : [i, k])]!;
        const y = b!.data[matmulOffset(b!.type, batchIdx, lead, bv ? [k] : [k, j])]!;
        // Products round to the dtype, sums accumulate in float64 (as a mul feeding a sum does), or in
        // float32 with the "float32" accumulation.
        s += castScalar(isFloat(t.dtype) ? x * y : Math.imul(x, y), t.dtype);
        if (acc === "float32" && t.dtype === "float32") s = Math.fround(s);
      }
      out[flat] = s;
    });
  } else {
    throw new UnsupportedOpError(`interpret: no rule for op ${op}`);
  }
  // float16 values are held in a Float32Array: each op's result rounds to float16 once.
  if (t.dtype === "float16") for (let i = 0; i < out.length; i++) out[i] = roundFloat16(out[i]!);
  return out;
}

/**
 * Evaluates a graph on concrete inputs (data in each input's dtype, row-major).
 * `opts.accumulation` (default "float64") is how float32 sums and products accumulate (`Accumulation`).
 */
export function interpret(
  g: Graph,
  inputs: readonly Value[],
  opts: { readonly accumulation?: Accumulation } = {},
): Value[] {
  const acc = opts.accumulation ?? "float64";
  const order = topoOrder(g);
  const bound = new Map<Node, ConcreteType>();
  g.inputs.forEach((n, i) => bound.set(n, inputs[i]!.type));
  const lengths = new Map<Node, number>();
  for (const n of runtimeLengthNodes(order))
    lengths.set(n, longestRow(inputs[g.inputs.indexOf(runtimeLengthOffsets(n))]!.data));
  const types = inferConcrete(order, bound, lengths);
  const values = new Map<Node, Value>();
  g.inputs.forEach((n, i) => values.set(n, inputs[i]!));
  for (const n of order) {
    if (n.op === "input") continue;
    const t = types.get(n)!;
    values.set(n, {
      type: t,
      data: evalNode(
        n,
        t,
        n.inputs.map((i) => values.get(i)!),
        acc,
      ),
    });
  }
  return g.outputs.map((o) => values.get(o)!);
}
