/**
 * Derivative rules: one JVP (tangent propagation) and one VJP (cotangent
 * propagation) rule per op of the op table; ir/derivative-transforms.ts applies them and
 * ir/diff.ts is the algebra they are written in. The table is a mapped type over `Op` (and the elementwise part a
 * mapped type over the op-facts table's union), so an op added to the IR
 * without its derivative rule fails `tsc`.
 *
 * The rules are written once, generically over a value type `V` and a
 * `Builder<V>` that records ops (ir/diff.ts): the frontend instantiates them on lazy
 * Tensors (so the derivative of a traced function is part of the traced graph
 * and goes through the same passes and kernels; nothing is taped at run time),
 * and `passes/autodiff.ts` on graph Nodes (graph-to-graph transforms).
 *
 * Conventions:
 *  - A tangent or cotangent is a value or `null`, the symbolic zero.
 *  - Its base shape equals its primal's; its batch shape may be smaller (fewer
 *    leading dims, or size 1 where the primal has a size or a symbol): it
 *    broadcasts to the primal's. Batch elements are independent samples, so a
 *    constant seed of batch shape `()` is the same direction for every sample.
 *  - Only float values carry derivatives: a non-float (integer, bool) result has
 *    a zero tangent and a non-float input a zero cotangent.
 *  - Non-differentiable points follow JAX: `abs'(0) = sign(0) = 0`, `maximum`
 *    and `minimum` ties split the derivative 0.5/0.5, a `max`/`min` reduction
 *    shares it among the tied elements, `sqrt'(0) = inf`, rounding ops,
 *    comparisons and casts to integers have zero derivatives.
 *  - The cotangent of `where(c, x, y)` is selected with `where` (never multiplied
 *    by a 0/1 mask), so the branch not taken cannot leak NaN or Inf.
 */
import { ELEMENTWISE, type ElementwiseOp } from "./elementwise.js";
import { UnsupportedOpError } from "./errors.js";
import type { AttrsOf, Op } from "./ops.js";
import { fmtTypeShape, isConcrete, prod, type TensorType } from "./types.js";
import { Diff, floatLike, sameDims, type Lin, type Prim, type Rule } from "./diff.js";

// ---------------------------------------------------------------------------
// Elementwise ops: a factor (or two partials) per op of the op-facts table.

/** d y / d x of a unary op, from x and y = op(x) ("zero": piecewise constant or not a float result). */
type UnaryD = "zero" | (<V>(d: Diff<V>, x: V, y: V) => V);
/** (d z / d x, d z / d y) of a binary op, from x, y and z = op(x, y). */
type BinaryD = "zero" | (<V>(d: Diff<V>, x: V, y: V, z: V) => readonly [Lin<V>, Lin<V>]);

type ElementwiseD = {
  readonly [K in ElementwiseOp]: (typeof ELEMENTWISE)[K]["kind"] extends "unary" ? UnaryD : BinaryD;
};

const c = <V>(d: Diff<V>, like: V, v: number): V => d.scalar(v, d.type(like).dtype);
const E = <V>(d: Diff<V>, op: Op, ...ins: V[]): V => d.op(op, ins);

/**
 * The elementwise derivative table: a mapped type over the op-facts table's
 * union, so a new elementwise op needs an entry here (`"zero"` for an op whose
 * result is piecewise constant, boolean or integer, e.g. bitwise ops).
 */
export const ELEMENTWISE_DERIVATIVES: ElementwiseD = {
  neg: (d, x) => c(d, x, -1),
  abs: (d, x) => E(d, "sign", x),
  square: (d, x) => E(d, "mul", c(d, x, 2), x),
  sqrt: (d, _x, y) => E(d, "div", c(d, y, 0.5), y),
  // y = x^-1/2: dy/dx = -y / (2x)
  rsqrt: (d, x, y) => E(d, "div", E(d, "mul", y, c(d, y, -0.5)), x),
  exp: (_d, _x, y) => y,
  log: (d, x) => E(d, "div", c(d, x, 1), x),
  sin: (d, x) => E(d, "cos", x),
  cos: (d, x) => E(d, "neg", E(d, "sin", x)),
  tan: (d, _x, y) => E(d, "add", c(d, y, 1), E(d, "mul", y, y)),
  tanh: (d, _x, y) => E(d, "sub", c(d, y, 1), E(d, "mul", y, y)),
  sigmoid: (d, _x, y) => E(d, "mul", y, E(d, "sub", c(d, y, 1), y)),
  asin: (d, x) => E(d, "rsqrt", E(d, "sub", c(d, x, 1), E(d, "mul", x, x))),
  acos: (d, x) => E(d, "neg", E(d, "rsqrt", E(d, "sub", c(d, x, 1), E(d, "mul", x, x)))),
  atan: (d, x) => E(d, "div", c(d, x, 1), E(d, "add", c(d, x, 1), E(d, "mul", x, x))),
  floor: "zero",
  ceil: "zero",
  round: "zero",
  trunc: "zero",
  sign: "zero",
  not: "zero",
  isnan: "zero",
  isinf: "zero",
  isfinite: "zero",
  add: (d, x) => [c(d, x, 1), c(d, x, 1)],
  sub: (d, x) => [c(d, x, 1), c(d, x, -1)],
  mul: (_d, x, y) => [y, x],
  // d(x/y) = dx/y - dy·z/y
  div: (d, _x, y, z) => [E(d, "div", c(d, y, 1), y), E(d, "neg", E(d, "div", z, y))],
  // JAX: d/dx = y·x^(y-1) with x^(y-1) taken as x^0 where y = 0 (no 0·inf at x = 0);
  // d/dy = log(x)·z with log(1) where x = 0 (so 0 there).
  pow: (d, x, y, z) => {
    const y0 = E(d, "eq", y, c(d, y, 0));
    const e = d.op("where", [y0, c(d, y, 1), E(d, "sub", y, c(d, y, 1))]);
    const dx = E(d, "mul", y, E(d, "pow", x, e));
    const x0 = E(d, "eq", x, c(d, x, 0));
    const dy = E(d, "mul", E(d, "log", d.op("where", [x0, c(d, x, 1), x])), z);
    return [dx, dy];
  },
  maximum: (d, x, y, z) => balanced(d, x, y, z),
  minimum: (d, x, y, z) => balanced(d, x, y, z),
  // NumPy's floor mod: x - floor(x/y)·y.
  mod: (d, x, y) => [c(d, x, 1), E(d, "neg", E(d, "floor", E(d, "div", x, y)))],
  // atan2(y, x) as atan2(x0, x1): d/dx0 = x1/(x0²+x1²), d/dx1 = -x0/(x0²+x1²).
  atan2: (d, a, b) => {
    const r = E(d, "add", E(d, "mul", a, a), E(d, "mul", b, b));
    return [E(d, "div", b, r), E(d, "neg", E(d, "div", a, r))];
  },
  eq: "zero",
  ne: "zero",
  lt: "zero",
  le: "zero",
  gt: "zero",
  ge: "zero",
  and: "zero",
  or: "zero",
  xor: "zero",
  // integer bitwise ops: integer results, no derivative
  bitwise_and: "zero",
  bitwise_or: "zero",
  bitwise_xor: "zero",
  left_shift: "zero",
  right_shift: "zero",
};

/** JAX's `_balanced_eq`: 1 where x alone is the result, 0.5 on a tie, 0 elsewhere (and the same for y). */
function balanced<V>(d: Diff<V>, x: V, y: V, z: V): readonly [V, V] {
  const xz = E(d, "eq", x, z);
  const yz = E(d, "eq", y, z);
  const half = c(d, z, 0.5);
  const one = c(d, z, 1);
  const zero = c(d, z, 0);
  return [
    d.op("where", [xz, d.op("where", [yz, half, one]), zero]),
    d.op("where", [yz, d.op("where", [xz, half, one]), zero]),
  ];
}

function elementwiseRule(op: ElementwiseOp): Rule<Op> {
  const f = ELEMENTWISE_DERIVATIVES[op] as UnaryD | BinaryD;
  if (f === "zero") return ZERO;
  if (ELEMENTWISE[op].kind === "unary") {
    const g = f as Exclude<UnaryD, "zero">;
    return {
      jvp: (d, n, [t]) => d.mul(t!, g(d, n.inputs[0]!, n.out)),
      vjp: (d, n, ct) => [d.unbroadcast(d.mul(ct, g(d, n.inputs[0]!, n.out)), d.type(n.inputs[0]!))],
    };
  }
  const g = f as Exclude<BinaryD, "zero">;
  const lin = <V>(d: Diff<V>, t: Lin<V>, p: Lin<V>): Lin<V> => (p === null ? null : d.mul(t, p));
  return {
    jvp: (d, n, [tx, ty]) => {
      const [x, y] = n.inputs;
      const [px, py] = g(d, x!, y!, n.out);
      return d.add(lin(d, tx!, px), lin(d, ty!, py));
    },
    vjp: (d, n, ct) => {
      const [x, y] = n.inputs;
      const [px, py] = g(d, x!, y!, n.out);
      return [d.unbroadcast(lin(d, ct, px), d.type(x!)), d.unbroadcast(lin(d, ct, py), d.type(y!))];
    },
  };
}

// ---------------------------------------------------------------------------
// The other ops.

/** The rule of an op whose result has no derivative (integer or bool results, constants, inputs). */
function zero<K extends Op>(): Rule<K> {
  return { jvp: () => null, vjp: (_d, n) => n.inputs.map(() => null) };
}
const ZERO: Rule<Op> = zero();

function unsupported(op: string, why: string): never {
  throw new UnsupportedOpError(`${op}: no derivative ${why}`);
}

/**
 * `0, 1, …, n-1` as an int32 `(; n)` value from ops alone: doubled by concatenating
 * with itself plus its length (about 2·log2(n) nodes), then sliced to n.
 */
function iota<V>(d: Diff<V>, n: number): V {
  let v = d.op("expand", [d.scalar(0, "int32")], { shape: [1] });
  let size = 1;
  while (size < n) {
    v = d.op("concat", [v, d.op("add", [v, d.scalar(size, "int32")])], { axis: 0 });
    size *= 2;
  }
  return size === n ? v : d.op("slice", [v], { axis: 0, start: 0, stop: n, step: 1 });
}

/** scatter's modes without a derivative rule: a typed error naming the mode. */
function unsupportedScatter(mode: string, sweep: "forward" | "reverse"): never {
  unsupported(
    "scatter",
    `in ${sweep} mode for mode ${mode}: only add and set have derivative rules (mul, min and max need the positions' update order, not implemented)`,
  );
}

/** Reinserts the reduced axes of a reduction result (keep=false) as size-1 dims, batch made full first. */
function unreduce<V>(d: Diff<V>, v: V, out: TensorType, outV: V | undefined, a: AttrsOf<"sum">): V {
  if (a.keep) return v;
  let r = v;
  if (a.batchAxes.length > 0) {
    r = d.full(r, out, outV);
    for (const ax of a.batchAxes) r = d.op("batch_unsqueeze", [r], { dim: ax });
  }
  if (a.baseAxes.length > 0) {
    const t = d.type(r);
    const shape: number[] = [];
    let j = 0;
    for (let i = 0; i < t.base.length + a.baseAxes.length; i++) shape.push(a.baseAxes.includes(i) ? 1 : t.base[j++]!);
    r = d.op("reshape", [r], { shape });
  }
  return r;
}

/** Broadcasts a kept-dims reduction cotangent back over the input's base (batch broadcasts implicitly). */
function spread<V>(d: Diff<V>, v: V, x: TensorType): V {
  const t = d.type(v);
  return sameDims(t.base, x.base) ? v : d.op("expand", [v], { shape: x.base });
}

/** The number of elements each reduction result summarises (a value: batch sizes may be symbols). */
function countOf<V>(d: Diff<V>, x: V, a: AttrsOf<"sum">): V {
  const t = d.type(x);
  const sizes = [...a.batchAxes.map((ax) => t.batch[ax]!), ...a.baseAxes.map((ax) => t.base[ax]!)];
  if (isNumbers(sizes)) return d.scalar(prod(sizes), t.dtype);
  // A symbolic batch size: the sum of ones over the reduced axes (where(isnan(x), 1, 1) has x's shape).
  const one = d.scalar(1, t.dtype);
  return d.op("sum", [d.op("where", [d.op("isnan", [x]), one, one])], a);
}

/** The (co)tangent of a `max`/`min` reduction: shared equally among the elements equal to the result (JAX). */
function extremeInd<V>(d: Diff<V>, n: Extreme<V>): { ind: V; counts: V } {
  const x = n.inputs[0]!;
  const xt = d.type(x);
  const a = n.attrs;
  const yk = spread(d, unreduce(d, n.out, d.type(n.out), n.out, a), xt);
  const ind = d.op("eq", [x, yk]);
  const counts = d.op("sum", [d.op("cast", [ind], { dtype: xt.dtype })], a);
  return { ind, counts };
}

/** `max`/`min` reductions: the (co)tangent is shared equally among the elements equal to the result (JAX). */
type Extreme<V> = Prim<V, "max"> | Prim<V, "min">;
/** One rule for both extremes: its methods take either op's node, so it is a `Rule<"max">` and a `Rule<"min">`. */
interface ExtremeRule {
  jvp<V>(d: Diff<V>, n: Extreme<V>, t: readonly Lin<V>[]): Lin<V>;
  vjp<V>(d: Diff<V>, n: Extreme<V>, ct: V): readonly Lin<V>[];
}
function extremeRule(): ExtremeRule {
  const axes = <V>(n: Extreme<V>): AttrsOf<"sum"> => n.attrs;
  return {
    jvp: (d, n, [t]) => {
      const x = n.inputs[0]!;
      const { ind, counts } = extremeInd(d, n);
      const s = d.op("sum", [d.where(ind, d.full(t!, d.type(x), x), null, d.type(x))!], axes(n));
      return d.op("div", [s, counts]);
    },
    vjp: (d, n, ct) => {
      const x = n.inputs[0]!;
      const xt = d.type(x);
      const { ind, counts } = extremeInd(d, n);
      const g = spread(d, unreduce(d, d.op("div", [ct, counts]), d.type(n.out), n.out, axes(n)), xt);
      return [d.where(ind, g, null, xt)];
    },
  };
}

const reduceRules = {
  sum: {
    jvp: (d, n, [t]) =>
      d.sum(d.full(t!, d.type(n.inputs[0]!), n.inputs[0]!), n.attrs.batchAxes, n.attrs.baseAxes, n.attrs.keep),
    vjp: (d, n, ct) => {
      const x = d.type(n.inputs[0]!);
      return [spread(d, unreduce(d, ct, d.type(n.out), n.out, n.attrs), x)];
    },
  },
  mean: {
    jvp: (d, n, [t]) => {
      const x = n.inputs[0]!;
      return d.op("mean", [d.full(t!, d.type(x), x)], n.attrs);
    },
    vjp: (d, n, ct) => {
      const x = n.inputs[0]!;
      const cnt = countOf(d, x, n.attrs);
      return [spread(d, unreduce(d, d.op("div", [ct, cnt]), d.type(n.out), n.out, n.attrs), d.type(x))];
    },
  },
  prod: {
    // ∂ prod / ∂x_i = Π_{j≠i} x_j: exact at zeros (as JAX) for base reductions of up to 64 elements;
    // over batch axes (sizes only known at run time) prod · 1/x_i, undefined where an element is 0.
    jvp: (d, n, [t]) => {
      const x = n.inputs[0]!;
      const e = exclusiveProducts(d, x, n.attrs);
      if (e !== undefined) return d.sum(d.mul(d.full(t!, d.type(x), x), e), [], n.attrs.baseAxes, n.attrs.keep);
      const s = d.sum(d.div(d.full(t!, d.type(x), x), x), n.attrs.batchAxes, n.attrs.baseAxes, n.attrs.keep);
      return d.mul(s, n.out);
    },
    vjp: (d, n, ct) => {
      const x = n.inputs[0]!;
      const xt = d.type(x);
      const e = exclusiveProducts(d, x, n.attrs);
      if (e !== undefined) return [d.mul(spread(d, unreduce(d, ct, d.type(n.out), n.out, n.attrs), xt), e)];
      const g = spread(d, unreduce(d, d.op("mul", [ct, n.out]), d.type(n.out), n.out, n.attrs), xt);
      return [d.op("div", [g, x])];
    },
  },
  max: extremeRule(),
  min: extremeRule(),
  argmin: zero(),
  argmax: zero(),
  all: zero(),
  any: zero(),
} satisfies { readonly [K in "sum" | "mean" | "prod" | "max" | "min" | "argmin" | "argmax" | "all" | "any"]: Rule<K> };

/**
 * `e` shaped like `x` with `e_i = Π_{j≠i} x_j` over the reduced base axes (products of the
 * elements before and after each one, no division), or undefined when the reduction has
 * batch axes or more than 64 elements.
 */
function exclusiveProducts<V>(d: Diff<V>, x: V, a: AttrsOf<"sum">): V | undefined {
  const xt = d.type(x);
  if (a.batchAxes.length > 0 || a.baseAxes.length === 0) return undefined;
  const red = a.baseAxes;
  const rest = [...xt.base.keys()].filter((i) => !red.includes(i));
  const n = prod(red.map((i) => xt.base[i]!));
  if (n > 64 || n === 0) return undefined;
  const perm = [...red, ...rest];
  const identity = perm.every((p, i) => p === i);
  const restShape = rest.map((i) => xt.base[i]!);
  let xr = identity ? x : d.op("permute", [x], { perm });
  xr = d.op("reshape", [xr], { shape: [n, ...restShape] });
  const pieceType: TensorType = { dtype: xt.dtype, batch: xt.batch, base: [1, ...restShape] };
  const s = Array.from({ length: n }, (_, i) => d.op("slice", [xr], { axis: 0, start: i, stop: i + 1, step: 1 }));
  const left: (V | null)[] = [null];
  for (let i = 1; i < n; i++) left.push(left[i - 1] === null ? s[i - 1]! : d.op("mul", [left[i - 1]!, s[i - 1]!]));
  const right: (V | null)[] = new Array<V | null>(n).fill(null);
  for (let i = n - 2; i >= 0; i--)
    right[i] = right[i + 1] === null ? s[i + 1]! : d.op("mul", [right[i + 1]!, s[i + 1]!]);
  const parts = s.map((_, i) => {
    const l = left[i]!;
    const r = right[i]!;
    const v = l === null && r === null ? d.scalar(1, xt.dtype) : l === null ? r : r === null ? l : d.op("mul", [l, r]);
    return d.full(v, pieceType, s[i]!);
  });
  let e = parts.length === 1 ? parts[0]! : d.op("concat", parts, { axis: 0 });
  e = d.op("reshape", [e], { shape: [...red.map((i) => xt.base[i]!), ...restShape] });
  if (!identity) {
    const inv: number[] = [];
    perm.forEach((p, i) => (inv[p] = i));
    e = d.op("permute", [e], { perm: inv });
  }
  return e;
}

/** Matrix views of matmul operands (a vector `a` is a `1×k` row, a vector `b` a `k×1` column). */
function asMatrix<V>(d: Diff<V>, v: V, side: "a" | "b"): V {
  const t = d.type(v);
  if (t.base.length !== 1) return v;
  return d.op("reshape", [v], { shape: side === "a" ? [1, t.base[0]!] : [t.base[0]!, 1] });
}
function transposeLast<V>(d: Diff<V>, v: V): V {
  const r = d.type(v).base.length;
  const perm = [...Array(r).keys()];
  perm[r - 2] = r - 1;
  perm[r - 1] = r - 2;
  return d.op("permute", [v], { perm });
}

/** The positions along a sliced axis, with zeros where the slice does not read (a pad without a pad op). */
function unslice<V>(d: Diff<V>, ct: V, x: TensorType, a: AttrsOf<"slice">): Lin<V> {
  const n = x.base[a.axis]!;
  const parts: { size: number; v: Lin<V> }[] = [];
  const taken = Math.ceil((a.stop - a.start) / a.step);
  if (a.step === 1) {
    parts.push({ size: a.start, v: null }, { size: taken, v: ct }, { size: n - a.stop, v: null });
  } else {
    let run = 0;
    for (let i = 0; i < n; i++) {
      const k = (i - a.start) / a.step;
      if (i >= a.start && i < a.stop && Number.isInteger(k) && k < taken) {
        parts.push({ size: run, v: null });
        run = 0;
        parts.push({ size: 1, v: d.move("slice", ct, { axis: a.axis, start: k, stop: k + 1, step: 1 }) });
      } else run++;
    }
    parts.push({ size: run, v: null });
  }
  const ctt = d.type(ct);
  return d.concatLin(a.axis, parts, { ...ctt, base: x.base });
}

/** Concrete batch sizes a batch op's inverse needs, or an UnsupportedOpError naming the op. */
function concreteBatch(op: string, t: TensorType): readonly number[] {
  if (!isConcrete(t.batch))
    unsupported(op, `through symbolic batch dims ${fmtTypeShape(t)} (give concrete batch sizes, e.g. outside jit)`);
  return t.batch;
}

/** Every op's derivative rule (a missing op fails `tsc`). */
export const RULES: { readonly [K in Op]: Rule<K> } = {
  ...(Object.fromEntries((Object.keys(ELEMENTWISE) as ElementwiseOp[]).map((op) => [op, elementwiseRule(op)])) as {
    readonly [K in ElementwiseOp]: Rule<K>;
  }),
  ...reduceRules,
  input: zero(),
  const: zero(),
  cast: {
    jvp: (d, n, [t]) => (floatLike(d.type(n.out)) ? d.fit(t!, d.type(n.out)) : null),
    vjp: (d, n, ct) => {
      const xt = d.type(n.inputs[0]!);
      return [floatLike(xt) ? d.op("cast", [ct], { dtype: xt.dtype }) : null];
    },
  },
  where: {
    jvp: (d, n, [, ta, tb]) => d.where(n.inputs[0]!, ta!, tb!, d.type(n.out)),
    vjp: (d, n, ct) => {
      const [c0, a, b] = n.inputs;
      const t = d.type(n.out);
      return [
        null,
        d.unbroadcast(d.where(c0!, ct, null, t), d.type(a!)),
        d.unbroadcast(d.where(c0!, null, ct, t), d.type(b!)),
      ];
    },
  },
  matmul: {
    jvp: (d, n, [ta, tb]) => {
      const [a, b] = n.inputs;
      const l = d.nz(ta!) === null ? null : d.op("matmul", [ta!, b!]);
      const r = d.nz(tb!) === null ? null : d.op("matmul", [a!, tb!]);
      return d.add(l, r);
    },
    vjp: (d, n, ct) => {
      const [a, b] = n.inputs;
      const at = d.type(a!);
      const bt = d.type(b!);
      const am = asMatrix(d, a!, "a");
      const bm = asMatrix(d, b!, "b");
      const amt = d.type(am);
      const bmt = d.type(bm);
      // The cotangent as the matrix product's (…, m, n).
      const lead = d.type(ct).base.length - (at.base.length > 1 ? 1 : 0) - (bt.base.length > 1 ? 1 : 0);
      const ctBase = d.type(ct).base;
      const m = amt.base[amt.base.length - 2]!;
      const nn = bmt.base[bmt.base.length - 1]!;
      const cm = d.op("reshape", [ct], { shape: [...ctBase.slice(0, lead), m, nn] });
      const ga = d.op("matmul", [cm, transposeLast(d, bm)]);
      const gb = d.op("matmul", [transposeLast(d, am), cm]);
      return [
        d.unbroadcast(ga, at.base.length === 1 ? { ...amt } : at),
        d.unbroadcast(gb, bt.base.length === 1 ? { ...bmt } : bt),
      ].map((g, i) => {
        const want = i === 0 ? at : bt;
        return g === null || sameDims(d.type(g).base, want.base) ? g : d.op("reshape", [g], { shape: want.base });
      });
    },
  },
  concat: {
    jvp: (d, n, t) =>
      d.concatLin(
        n.attrs.axis,
        n.inputs.map((x, i) => ({ size: d.type(x).base[n.attrs.axis]!, v: t[i]! })),
        d.type(n.out),
      ),
    vjp: (d, n, ct) => {
      let start = 0;
      return n.inputs.map((x) => {
        const xt = d.type(x);
        const len = xt.base[n.attrs.axis]!;
        const s = d.move("slice", ct, { axis: n.attrs.axis, start, stop: start + len, step: 1 });
        start += len;
        return d.unbroadcast(s, xt);
      });
    },
  },
  take: {
    // The tangent is taken at the same indices; where an index is out of range the
    // primal is a constant fill value, so the tangent is 0 there (as JAX's gather JVP).
    jvp: (d, n, [t]) => {
      const out = d.type(n.out);
      const tx = d.nz(t!);
      if (tx === null || !floatLike(out)) return null;
      const [x, idx] = n.inputs;
      const xt = d.type(x!);
      const it = d.type(idx!);
      const full = d.fit(tx, { ...d.type(tx), base: xt.base })!;
      const g = d.op("take", [full, idx!], n.attrs);
      const len = xt.base[n.attrs.axis]!;
      const ok = d.op("and", [d.op("ge", [idx!, d.scalar(-len, "int32")]), d.op("lt", [idx!, d.scalar(len, "int32")])]);
      const tail = xt.base.length - n.attrs.axis - 1;
      const mask = tail === 0 ? ok : d.op("reshape", [ok], { shape: [...it.base, ...Array<number>(tail).fill(1)] });
      return d.where(mask, g, null, out);
    },
    // The transpose of a gather is a scatter-add of the cotangent into zeros shaped like x;
    // out-of-range indices are dropped by the scatter (their result was a constant fill).
    vjp: (d, n, ct) => {
      const [x, idx] = n.inputs;
      const xt = d.type(x!);
      if (!floatLike(xt)) return [null, null];
      const g = d.op("scatter", [d.zeros(xt), idx!, ct], { axis: n.attrs.axis, mode: "add" });
      return [d.unbroadcast(g, xt), null];
    },
  },
  // --- scatter ---
  scatter: {
    // add: linear in x and upd. set: the tangent is scattered the same way (x's tangent with
    // upd's written over it). mul/min/max: not implemented (a typed error names the mode).
    jvp: (d, n, [tx, , tu]) => {
      const out = d.type(n.out);
      if (!floatLike(out)) return null;
      const [x, idx, upd] = n.inputs;
      const xt = d.type(x!);
      const ut = d.type(upd!);
      const mode = n.attrs.mode;
      if (mode !== "add" && mode !== "set") unsupportedScatter(mode, "forward");
      const a = d.fit(d.nz(tx!), { ...d.type(tx ?? x!), base: xt.base, dtype: xt.dtype });
      const b = d.fit(d.nz(tu!), { ...d.type(tu ?? upd!), base: ut.base, dtype: ut.dtype });
      if (a === null && b === null) return null;
      if (mode === "add" && b === null) return a;
      return d.op("scatter", [a ?? d.zeros(xt), idx!, b ?? d.scalar(0, ut.dtype)], n.attrs);
    },
    // add: x's cotangent is the cotangent, upd's the cotangent taken at the indices (0 where
    // an index is dropped). set: x's is the cotangent with the written positions zeroed; upd's
    // the cotangent taken at the indices where the update won its position, else 0.
    vjp: <V>(d: Diff<V>, n: Prim<V, "scatter">, ct: V) => {
      const [x, idx, upd] = n.inputs;
      const xt = d.type(x!);
      const ut = d.type(upd!);
      if (!floatLike(xt)) return [null, null, null];
      const mode = n.attrs.mode;
      if (mode !== "add" && mode !== "set") unsupportedScatter(mode, "reverse");
      const cx = mode === "add" ? ct : d.op("scatter", [ct, idx!, d.scalar(0, xt.dtype)], n.attrs);
      const it = d.type(idx!);
      const len = xt.base[n.attrs.axis]!;
      const tail = xt.base.length - n.attrs.axis - 1;
      /** An (idx base) value reshaped to broadcast over the update shape (the axes after `axis`). */
      const overU = (v: V): V =>
        tail === 0 ? v : d.op("reshape", [v], { shape: [...it.base, ...Array<number>(tail).fill(1)] });
      const g = d.op("take", [ct, idx!], { axis: n.attrs.axis });
      let mask: V;
      if (mode === "add") {
        // Every in-range update added into its position.
        mask = overU(
          d.op("and", [d.op("ge", [idx!, d.scalar(-len, "int32")]), d.op("lt", [idx!, d.scalar(len, "int32")])]),
        );
      } else {
        // Only the update that won its position (the last one written there, in index order): as
        // JAX, scatter each index's id, read the ids back at the indices, and compare (a dropped
        // index reads take's int32 fill, which is no id).
        const ids = overU(d.op("reshape", [iota(d, prod(it.base))], { shape: it.base }));
        const none = d.op("expand", [d.scalar(-1, "int32")], { shape: xt.base });
        const won = d.op("scatter", [none, idx!, ids], { axis: n.attrs.axis, mode: "set" });
        mask = d.op("eq", [d.op("take", [won, idx!], { axis: n.attrs.axis }), ids]);
      }
      const cu = d.where(mask, g, null, d.type(g));
      return [d.unbroadcast(cx, xt), null, d.unbroadcast(cu, ut)];
    },
  },
  // --- looped matrix routines ---
  // The looped kernels (linalg on matrices above the unrolled sizes) have no derivative
  // rule; the unrolled compositions of small matrices differentiate op by op.
  routine: {
    jvp: (_d, n) =>
      unsupported(
        `routine ${n.attrs.name}`,
        "(linalg's looped kernel for large matrices); differentiate matrices up to the unrolled sizes (linalg.LOOP_ABOVE)",
      ),
    vjp: (_d, n) =>
      unsupported(
        `routine ${n.attrs.name}`,
        "(linalg's looped kernel for large matrices); differentiate matrices up to the unrolled sizes (linalg.LOOP_ABOVE)",
      ),
  },
  // --- end looped matrix routines ---
  reshape: {
    jvp: (d, n, [t]) => d.move("reshape", t!, n.attrs),
    vjp: (d, n, ct) => [d.move("reshape", ct, { shape: d.type(n.inputs[0]!).base })],
  },
  permute: {
    jvp: (d, n, [t]) => d.move("permute", t!, n.attrs),
    vjp: (d, n, ct) => {
      const inv: number[] = [];
      n.attrs.perm.forEach((p, i) => (inv[p] = i));
      return [d.move("permute", ct, { perm: inv })];
    },
  },
  expand: {
    jvp: (d, n, [t]) => d.move("expand", t!, n.attrs),
    vjp: (d, n, ct) => [d.unbroadcast(ct, d.type(n.inputs[0]!))],
  },
  slice: {
    jvp: (d, n, [t]) => d.move("slice", t!, n.attrs),
    vjp: (d, n, ct) => [unslice(d, ct, d.type(n.inputs[0]!), n.attrs)],
  },
  batch_reshape: {
    jvp: (d, n, [t]) => d.op("batch_reshape", [d.full(t!, d.type(n.inputs[0]!), n.inputs[0]!)], n.attrs),
    vjp: (d, n, ct) => {
      const xt = d.type(n.inputs[0]!);
      const shape =
        xt.batch.filter((s) => typeof s !== "number").length === 1
          ? xt.batch.map((s) => (typeof s === "number" ? s : -1))
          : concreteBatch("batch_reshape", xt);
      return [d.op("batch_reshape", [d.full(ct, d.type(n.out), n.out)], { shape })];
    },
  },
  rebatch: {
    jvp: (d, n, [t]) => d.op("rebatch", [d.full(t!, d.type(n.inputs[0]!), n.inputs[0]!)], n.attrs),
    vjp: (d, n, ct) => {
      const xt = d.type(n.inputs[0]!);
      return [d.op("rebatch", [d.full(ct, d.type(n.out), n.out)], { batchDim: xt.batch.length, base: xt.base })];
    },
  },
  batch_unsqueeze: {
    jvp: (d, n, [t]) => d.op("batch_unsqueeze", [d.full(t!, d.type(n.inputs[0]!), n.inputs[0]!)], n.attrs),
    vjp: (d, n, ct) => [d.op("batch_squeeze", [d.full(ct, d.type(n.out), n.out)], n.attrs)],
  },
  batch_squeeze: {
    jvp: (d, n, [t]) => d.op("batch_squeeze", [d.full(t!, d.type(n.inputs[0]!), n.inputs[0]!)], n.attrs),
    vjp: (d, n, ct) => [d.op("batch_unsqueeze", [d.full(ct, d.type(n.out), n.out)], n.attrs)],
  },
  batch_expand: {
    // The tangent broadcasts to the result already (batch elements are independent samples).
    jvp: (_d, _n, [t]) => t!,
    vjp: (d, n, ct) => [d.unbroadcast(ct, d.type(n.inputs[0]!))],
  },
  batch_slice: {
    jvp: (d, n, [t]) => d.op("batch_slice", [d.full(t!, d.type(n.inputs[0]!), n.inputs[0]!)], n.attrs),
    vjp: (d, n, ct) => {
      const x = n.inputs[0]!;
      const xt = d.type(x);
      const { axis, start, stop, step } = n.attrs;
      const g = d.full(ct, d.type(n.out), n.out);
      const zero = d.full(d.zeros(xt), xt, x);
      const parts: (typeof ct)[] = [];
      const size = xt.batch[axis]!;
      if (step !== 1) {
        // Element by element along the axis: needs its size.
        if (typeof size !== "number")
          unsupported(
            "batch_slice",
            `for a step of ${step} through a symbolic batch dim in reverse mode (use forward mode)`,
          );
        // A negative step reads positions size-1-start, size-1-start+step, … down to 0.
        const first = step < 0 ? size - 1 - start : start;
        const end = step < 0 ? -1 : stop < 0 ? size : stop;
        const taken = Math.ceil((end - first) / step);
        for (let i = 0; i < size; i++) {
          const k = (i - first) / step;
          const hit = Number.isInteger(k) && k >= 0 && k < taken;
          parts.push(
            hit
              ? d.op("batch_slice", [g], { axis, start: k, stop: k + 1, step: 1 })
              : d.op("batch_slice", [zero], { axis, start: i, stop: i + 1, step: 1 }),
          );
        }
        return [parts.length === 1 ? parts[0]! : d.op("batch_concat", parts, { axis })];
      }
      if (start > 0) parts.push(d.op("batch_slice", [zero], { axis, start: 0, stop: start, step: 1 }));
      parts.push(g);
      if (stop >= 0 && stop !== size) parts.push(d.op("batch_slice", [zero], { axis, start: stop, stop: -1, step: 1 }));
      return [parts.length === 1 ? parts[0]! : d.op("batch_concat", parts, { axis })];
    },
  },
  batch_concat: {
    jvp: (d, n, t) =>
      d.op(
        "batch_concat",
        n.inputs.map((x, i) => d.full(d.orZeros(t[i]!, d.type(x)), d.type(x), x)),
        n.attrs,
      ),
    vjp: (d, n, ct) => {
      const g = d.full(ct, d.type(n.out), n.out);
      let start = 0;
      return n.inputs.map((x, i) => {
        const xt = d.type(x);
        const len = xt.batch[n.attrs.axis]!;
        if (typeof len !== "number") {
          if (i === n.inputs.length - 1 && typeof start === "number")
            return d.op("batch_slice", [g], { axis: n.attrs.axis, start, stop: -1, step: 1 });
          unsupported("batch_concat", `through symbolic batch dims ${fmtTypeShape(xt)} in reverse mode`);
        }
        const s = d.op("batch_slice", [g], { axis: n.attrs.axis, start, stop: start + len, step: 1 });
        start += len;
        return s;
      });
    },
  },
  segment_reduce: {
    jvp: (d, n, [t]) => {
      const [v, o] = n.inputs;
      const r = n.attrs.op;
      if (r === "argmax" || r === "count") return null;
      const tv = d.full(t!, d.type(v!), v!);
      if (r === "sum" || r === "mean") return d.op("segment_reduce", [tv, o!], n.attrs);
      const { ind, counts } = segmentInd(d, n);
      const s = d.op("segment_reduce", [d.where(ind, tv, null, d.type(v!))!, o!], { op: "sum" });
      return d.op("div", [s, counts]);
    },
    vjp: (d, n, ct) => {
      const [v, o] = n.inputs;
      const r = n.attrs.op;
      if (r === "argmax" || r === "count") return [null, null];
      const g = d.full(ct, d.type(n.out), n.out);
      if (r === "sum") return [d.op("segment_expand", [g, o!, v!]), null];
      if (r === "mean") {
        const cnt = d.op("cast", [d.op("segment_reduce", [v!, o!], { op: "count" })], { dtype: d.type(v!).dtype });
        return [d.op("segment_expand", [d.op("div", [g, cnt]), o!, v!]), null];
      }
      const { ind, counts } = segmentInd(d, n);
      const e = d.op("segment_expand", [d.op("div", [g, counts]), o!, v!]);
      return [d.where(ind, e, null, d.type(v!)), null];
    },
  },
  segment_expand: {
    jvp: (d, n, [t]) => {
      const [x, o, like] = n.inputs;
      return t === null ? null : d.op("segment_expand", [d.full(t!, d.type(x!), x!), o!, like!]);
    },
    vjp: (d, n, ct) => {
      const [x, o] = n.inputs;
      const s = d.op("segment_reduce", [d.full(ct, d.type(n.out), n.out), o!], { op: "sum" });
      return [d.unbroadcast(s, d.type(x!)), null, null];
    },
  },
  segment_pad: {
    jvp: (d, n, [t]) => {
      const [v, o] = n.inputs;
      return d.op("segment_pad", [d.full(t!, d.type(v!), v!), o!], { ...n.attrs, value: 0 });
    },
    vjp: (d, n, ct) => {
      const [v, o] = n.inputs;
      if (n.attrs.left) unsupported("segment_pad", "for left padding in reverse mode");
      return [d.op("segment_unpad", [d.full(ct, d.type(n.out), n.out), o!, v!]), null];
    },
  },
  segment_unpad: {
    jvp: (d, n, [t]) => {
      const [p, o, like] = n.inputs;
      return d.op("segment_unpad", [d.full(t!, d.type(p!), p!), o!, like!]);
    },
    vjp: (d, n, ct) => {
      const [p, o] = n.inputs;
      const m = d.type(p!).batch[1]!;
      if (typeof m !== "number") unsupported("segment_unpad", "for a padded length only known at run time");
      const g = d.op("segment_pad", [d.full(ct, d.type(n.out), n.out), o!], { maxN: m, value: 0, left: false });
      return [g, null, null];
    },
  },
  segment_mask: zero(),
};

/** Indicator of the elements equal to their row's max/min, and how many per row. */
function segmentInd<V>(d: Diff<V>, n: Prim<V, "segment_reduce">): { ind: V; counts: V } {
  const [v, o] = n.inputs;
  const e = d.op("segment_expand", [n.out, o!, v!]);
  const ind = d.op("eq", [v!, e]);
  const counts = d.op("segment_reduce", [d.op("cast", [ind], { dtype: d.type(v!).dtype }), o!], { op: "sum" });
  return { ind, counts };
}

function isNumbers(xs: readonly unknown[]): xs is number[] {
  return xs.every((x) => typeof x === "number");
}
