/**
 * Random IR graphs for property tests: a few inputs with broadcast-compatible
 * (batch; base) shapes, then a random sequence of ops drawn from the op table,
 * each applied only where its type rule accepts the operands.
 */
import fc from "fast-check";
import { ARRAY_CTOR, castScalar, isFloat, type DType, type TypedArray } from "../../ir/dtype.js";
import { makeGraph, Node, type Graph } from "../../ir/graph.js";
import {
  ELEMENTWISE,
  factsOf,
  isUnaryOp,
  type DTypeRule,
  type ElementwiseOp,
  type KBinaryOp,
  type KUnaryOp,
} from "../../ir/elementwise.js";
import { REDUCTIONS, reductionFacts, type KReduceOp } from "../../ir/reductions.js";
import type { Value } from "../../ir/interpret.js";
import type { ConcreteType } from "../../ir/shapes.js";
import { OPS } from "../../ir/ops.js";
import { rng } from "../../bench/cases.js";

export type Family = "float64" | "float32" | "int32" | "uint32";

/** The special values of both float families: NaN, ±Inf, ±0, ±1, 0.5 and 2. */
const SPECIAL_FLOATS_BOTH = [NaN, Infinity, -Infinity, 0, -0, 1, -1, 0.5, 2];

/**
 * Special values drawn into input data and graph constants when `specials` is on:
 * NaN, ±Inf, ±0, huge and tiny magnitudes (float32's largest finite value and its
 * subnormals, float64's extremes), and the integer extremes.
 */
export const SPECIAL_FLOATS: Record<"float32" | "float64", readonly number[]> = {
  float32: [
    ...SPECIAL_FLOATS_BOTH,
    1e30,
    -1e30,
    3.4028234663852886e38,
    -3.4028234663852886e38,
    1e-30,
    -1e-30,
    1e-40,
    -1e-45,
    1.401298464324817e-45,
    2147483647,
    -2147483648,
    4294967295,
    16777217,
  ],
  float64: [
    ...SPECIAL_FLOATS_BOTH,
    1e300,
    -1e300,
    1.7976931348623157e308,
    -1.7976931348623157e308,
    1e-300,
    -1e-300,
    5e-324,
    -5e-324,
    3.4028234663852886e38,
    1e-45,
    2147483647,
    -2147483648,
    4294967295,
    9007199254740993,
  ],
};
export const SPECIAL_INTS: Record<"int32" | "uint32", readonly number[]> = {
  int32: [0, 1, -1, 2, -2, 2147483647, -2147483648, -2147483647, 65536, 46341, -46341, 1073741824],
  uint32: [0, 1, 2, 4294967295, 4294967294, 2147483648, 2147483647, 65536, 65537],
};

/** The values JSON cannot write (NaN, ±Inf, -0), drawn more often in float data. */
const NON_FINITE = [NaN, Infinity, -Infinity, -0];
/** Steps of the random batch slices: negative ones walk back from the end (start counts from there). */
const BATCH_STEPS = [1, 2, -1, -2] as const;

function specialsOf(family: Family): readonly number[] {
  return family === "int32" || family === "uint32" ? SPECIAL_INTS[family] : SPECIAL_FLOATS[family];
}

// --- the ops drawn, from the facts tables (ir/elementwise.ts, ir/reductions.ts): every
// elementwise op and every reduction is drawn by its dtype rule, so a new op is fuzzed
// as soon as it is in its table; an op of a rule this file does not know is an error ---
const FLOAT_UNARY: KUnaryOp[] = [];
const INT_UNARY: KUnaryOp[] = [];
/** Unary ops with a bool result whatever the operand (isnan, …): conditions of `where`. */
const PREDICATE: KUnaryOp[] = [];
/** Unary ops on bool (not): conditions of `where`. */
const LOGICAL_UNARY: KUnaryOp[] = [];
const FLOAT_BINARY: KBinaryOp[] = [];
const INT_BINARY: KBinaryOp[] = [];
const COMPARE: KBinaryOp[] = [];
/** Binary ops on bool (and, or, xor): conditions of `where`. */
const LOGICAL_BINARY: KBinaryOp[] = [];
/**
 * Ops drawn in integer graphs only with `specials` (integer `pow`: with small data and
 * exponents it wraps like the other integer ops, so it needs the extremes to mean much).
 */
const INT_ONLY_WITH_SPECIALS: ReadonlySet<ElementwiseOp> = new Set(["pow"]);
/**
 * Where `randomCase` draws an op of each dtype rule (ir/elementwise.ts), unary and binary:
 * the lists it joins; an arity missing from its rule's entry has no way to be drawn (an
 * error; say how here). Total over the rules, so `tsc` asks for a new rule's entry.
 */
const DRAWN_IN: {
  readonly [R in DTypeRule]: { readonly unary?: readonly KUnaryOp[][]; readonly binary?: readonly KBinaryOp[][] };
} = {
  arith: { unary: [FLOAT_UNARY, INT_UNARY], binary: [FLOAT_BINARY, INT_BINARY] },
  float: { unary: [FLOAT_UNARY], binary: [FLOAT_BINARY] },
  int: { unary: [INT_UNARY], binary: [INT_BINARY] },
  predicate: { unary: [PREDICATE] },
  logical: { unary: [LOGICAL_UNARY], binary: [LOGICAL_BINARY] },
  compare: { binary: [COMPARE] },
};
/** Puts `op` in `lists` (its dtype rule's, from DRAWN_IN), but for `notIn`. */
function drawIn<Op extends ElementwiseOp>(
  lists: readonly Op[][] | undefined,
  op: Op,
  arity: "unary" | "binary",
  notIn?: Op[],
): void {
  if (lists === undefined)
    throw new Error(
      `random-graph: no way to draw the ${arity} op ${op} of dtype rule ${factsOf(op).dtype}; say how in DRAWN_IN`,
    );
  for (const list of lists) if (list !== notIn) list.push(op);
}
for (const op of Object.keys(ELEMENTWISE) as ElementwiseOp[]) {
  const drawn = DRAWN_IN[factsOf(op).dtype];
  if (isUnaryOp(op)) drawIn(drawn.unary, op, "unary");
  else drawIn(drawn.binary, op, "binary", INT_ONLY_WITH_SPECIALS.has(op) ? INT_BINARY : undefined);
}
/** With `specials`, integer graphs also draw INT_ONLY_WITH_SPECIALS (wrapping like the other integer ops). */
const INT_BINARY_SPECIAL: KBinaryOp[] = [...INT_BINARY, ...FLOAT_BINARY.filter((op) => INT_ONLY_WITH_SPECIALS.has(op))];
/** Every reduction (positional ones reduce one axis, bool ones take a bool operand: `case 6` below). */
const REDUCE: readonly KReduceOp[] = Object.keys(REDUCTIONS) as KReduceOp[];
/**
 * Whether an op's result jumps when an operand moves by one rounding error (so `smooth`
 * graphs leave it out): a total table, so `tsc` asks for each new op's entry. asin/acos:
 * NaN just past ±1 and an infinite slope at ±1; atan2: the branch cut at y = ±0, x < 0.
 * (Comparisons, predicates and logical ops only build `where` conditions, which smooth
 * graphs leave out whatever this says; the integer-only ops are never in smooth graphs.)
 */
const JUMPY: { readonly [K in ElementwiseOp]: boolean } = {
  neg: false,
  abs: false,
  square: false,
  sqrt: false,
  rsqrt: false,
  exp: false,
  log: false,
  sin: false,
  cos: false,
  tan: true,
  tanh: false,
  sigmoid: false,
  asin: true,
  acos: true,
  atan: false,
  floor: true,
  ceil: true,
  round: true,
  trunc: true,
  sign: true,
  not: true,
  isnan: true,
  isinf: true,
  isfinite: true,
  add: false,
  sub: false,
  mul: false,
  div: true,
  pow: true,
  maximum: false,
  minimum: false,
  mod: true,
  atan2: true,
  eq: true,
  ne: true,
  lt: true,
  le: true,
  gt: true,
  ge: true,
  and: true,
  or: true,
  xor: true,
  bitwise_and: true,
  bitwise_or: true,
  bitwise_xor: true,
  left_shift: true,
  right_shift: true,
};

/** The ops `randomCase` draws, by use (test/src/fuzz-coverage.test.ts checks each is drawn). */
export const DRAWN = {
  floatUnary: FLOAT_UNARY,
  intUnary: INT_UNARY,
  predicate: PREDICATE,
  logicalUnary: LOGICAL_UNARY,
  floatBinary: FLOAT_BINARY,
  intBinary: INT_BINARY_SPECIAL,
  compare: COMPARE,
  logicalBinary: LOGICAL_BINARY,
  reduce: REDUCE,
} as const;

export interface RandomCase {
  readonly graph: Graph;
  /** Concrete input types (batch sizes chosen for this run). */
  readonly inputTypes: readonly ConcreteType[];
  readonly seed: number;
  /** Drawn with special values (see `randomCase`'s `specials`); `randomInputs` draws them too. */
  readonly specials: boolean;
  /**
   * `randomInputs` draws huge, cancelling and tiny float values (`randomReductionCase`: sums,
   * means and products whose float32 running value overflows, loses bits or underflows).
   */
  readonly cancelling?: boolean;
}

/** A tiny deterministic PRNG (mulberry32, shared with the benchmarks) so a failing case can be replayed from its seed. */
export { rng };

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

/** Concrete types of the nodes built so far in the current case (symbolic types may hide a mismatch). */
let concrete = new Map<Node, ConcreteType>();

function tryMake(
  op: Parameters<typeof Node.make>[0],
  inputs: Node[],
  attrs: Record<string, never> | object = {},
): Node | undefined {
  try {
    const n = Node.make(op, inputs, attrs as never);
    const t = OPS[op].type(
      op,
      inputs.map((i) => concrete.get(i)!),
      attrs as never,
    ) as ConcreteType;
    concrete.set(n, t);
    return n;
  } catch {
    return undefined;
  }
}

/** Builds a random graph and concrete input shapes from a seed. */
/**
 * `smooth` leaves out ops whose result jumps when the input moves by one rounding
 * error (floor, round, sign, mod, comparisons, …), for backends that round differently.
 * `specials` draws NaN, ±Inf, -0, huge/tiny magnitudes and integer extremes into
 * constants (and, through `randomInputs`, into input data), empty (size-0) batch and
 * base dims, reduction axes in any order, and integer `pow`.
 */
export function randomCase(
  seed: number,
  family: Family,
  opts: { steps?: number; allowCompare?: boolean; smooth?: boolean; specials?: boolean; broadcast?: boolean } = {},
): RandomCase {
  const r = rng(seed);
  const dtype: DType = family;
  const specials = opts.specials === true;
  // --- run-time broadcasting (issue 26): see `broadcast` below ---
  const broadcast = opts.broadcast === true;
  const batchRank = broadcast ? 1 + Math.floor(r() * 2) : Math.floor(r() * 3);
  const baseRank = Math.floor(r() * 3);
  // With specials, a dim is empty (size 0) one time in twenty (about one case in eighteen has an empty input).
  const dim = (): number => (specials && r() < 0.05 ? 0 : 1 + Math.floor(r() * 4));
  const base = Array.from({ length: baseRank }, dim);
  const batch = Array.from({ length: batchRank }, dim);
  const nInputs = broadcast ? 2 + Math.floor(r() * 2) : 1 + Math.floor(r() * 3);
  const inputs: Node[] = [];
  const inputTypes: ConcreteType[] = [];
  concrete = new Map();
  const drawn: { bRank: number; cb: number[]; cs: number[] }[] = [];
  for (let i = 0; i < nInputs; i++) {
    // Each input takes a suffix of the batch and base shapes, some dims set to 1 (broadcast).
    const bRank = Math.floor(r() * (batchRank + 1));
    const sRank = Math.floor(r() * (baseRank + 1));
    const cb = batch.slice(batchRank - bRank).map((d) => (r() < 0.25 ? 1 : d));
    const cs = base.slice(baseRank - sRank).map((d) => (r() < 0.25 ? 1 : d));
    drawn.push({ bRank, cb, cs });
  }
  if (broadcast) {
    // Every input has the full batch rank (so its dims are the same symbols as the others'), and at
    // each batch position one input's dim is 1 at run time where another's is 2 or more: the symbols
    // are equal, the run-time sizes are not.
    for (let j = 0; j < batchRank; j++) {
      if (batch[j] !== 0 && batch[j]! < 2) batch[j] = 2 + Math.floor(r() * 2);
      const one = Math.floor(r() * nInputs);
      const full = (one + 1 + Math.floor(r() * (nInputs - 1))) % nInputs;
      drawn.forEach((d, i) => {
        if (d.bRank !== batchRank) {
          d.cb = [...batch.slice(0, batchRank - d.bRank).map(() => (r() < 0.5 ? 1 : -1)), ...d.cb];
          d.bRank = batchRank;
        }
        if (i === one) d.cb[j] = 1;
        else if (i === full || d.cb[j] === -1) d.cb[j] = batch[j]!;
      });
    }
    for (const d of drawn) d.cb = d.cb.map((v, j) => (v === -1 ? batch[j]! : v));
  }
  drawn.forEach(({ bRank, cb, cs }, i) => {
    inputs.push(
      Node.make("input", [], { index: i }, { dtype, batch: cb.map((_, j) => `b${batchRank - bRank + j}`), base: cs }),
    );
    inputTypes.push({ dtype, batch: cb, base: cs });
    concrete.set(inputs[i]!, inputTypes[i]!);
  });
  const pool: Node[] = [...inputs];
  const steps = opts.steps ?? 2 + Math.floor(r() * 6);
  const smooth = opts.smooth === true && family !== "int32" && family !== "uint32";
  const int = family === "int32" || family === "uint32";
  const unary = (int ? INT_UNARY : FLOAT_UNARY).filter((o) => !smooth || !JUMPY[o]);
  const binary = (int ? (specials ? INT_BINARY_SPECIAL : INT_BINARY) : FLOAT_BINARY).filter(
    (o) => !smooth || !JUMPY[o],
  );
  /** Axes of a reduction: a random subset, in decreasing order half the time with specials (the op takes them in any order). */
  const axesOf = (rank: number, p: number): number[] => {
    const axes = [...Array(rank).keys()].filter(() => r() < (specials ? Math.min(1, p + 0.2) : p));
    return specials && r() < 0.5 ? axes.reverse() : axes;
  };
  for (let s = 0, tries = 0; s < steps && tries < 200; tries++) {
    const x = pick(
      r,
      pool.filter((n) => n.type.dtype === dtype),
    );
    const y = pick(
      r,
      pool.filter((n) => n.type.dtype === dtype),
    );
    const kind = Math.floor(r() * 11);
    let n: Node | undefined;
    if (broadcast && r() < 0.35) {
      // Repeated operands, where(c, x, x) with a c that broadcasts x at run time, promotion chains.
      n = repeatedOrPromoted(r, dtype, x, y, pool, binary);
      if (n !== undefined && n.type.dtype === dtype) {
        pool.push(n);
        s++;
      }
      continue;
    }
    if (specials && r() < 0.1) {
      // A round trip through another dtype: float -> int of NaN, ±Inf and out-of-range values, int -> float rounding.
      // Smooth graphs go through float dtypes only: a cast to an integer or bool jumps on a rounding difference.
      const other = pick(
        r,
        (["float32", "float64", "int32", "uint32", "bool"] as const).filter(
          (d) => d !== dtype && (!smooth || d === "float32" || d === "float64"),
        ),
      );
      const there = tryMake("cast", [x], { dtype: other });
      n = there ? tryMake("cast", [there], { dtype }) : undefined;
      if (n !== undefined) {
        pool.push(n);
        s++;
      }
      continue;
    }
    switch (kind) {
      case 0:
      case 1:
        n = tryMake(pick(r, unary), [x]);
        break;
      case 2:
      case 3:
        n = tryMake(pick(r, binary), [x, y]);
        break;
      case 4: {
        // Special constants exercise the simplifier's rules (x*1, x-0, x/4, pow(x,2), ...).
        const special = [0, 1, -1, 2, 4, 0.5, -0];
        let value =
          r() < 0.5 ? pick(r, special) : int ? Math.floor(r() * 7) - 3 : Math.round((r() * 4 - 2) * 100) / 100;
        if (specials && r() < 0.6) value = pick(r, !int && r() < 0.5 ? NON_FINITE : specialsOf(family));
        const c = tryMake("const", [], { dtype, value: castScalar(value, dtype) });
        n = tryMake(pick(r, binary), r() < 0.5 ? [x, c!] : [c!, x]);
        break;
      }
      case 5: {
        if (opts.allowCompare === false || smooth) break;
        const cond = condition(r, x, y, 0);
        if (cond) n = tryMake("where", [cond, x, y]);
        break;
      }
      case 6: {
        const op = pick(r, smooth ? REDUCE.filter((o) => reductionFacts(o).positional !== true) : REDUCE);
        const batchAxes = axesOf(x.type.batch.length, 0.4);
        const baseAxes = axesOf(x.type.base.length, 0.5);
        const facts = reductionFacts(op);
        if (facts.positional === true) {
          const all = [...batchAxes.map((a) => ["b", a] as const), ...baseAxes.map((a) => ["s", a] as const)];
          if (all.length === 0) break;
          const [side, a] = pick(r, all);
          const red = tryMake(op, [x], {
            batchAxes: side === "b" ? [a] : [],
            baseAxes: side === "s" ? [a] : [],
            keep: r() < 0.5,
          });
          n = red && red.type.dtype !== dtype ? tryMake("cast", [red], { dtype }) : red;
        } else if (facts.dtype === "bool") {
          const red = tryMake(op, [tryMake("cast", [x], { dtype: "bool" })!], { batchAxes, baseAxes, keep: r() < 0.5 });
          n = red ? tryMake("cast", [red], { dtype }) : undefined;
        } else {
          const red = tryMake(op, [x], { batchAxes, baseAxes, keep: r() < 0.5 });
          n = red && red.type.dtype !== dtype ? tryMake("cast", [red], { dtype }) : red;
        }
        break;
      }
      case 7: {
        const b = x.type.base;
        if (b.length >= 1 && b[b.length - 1]! >= 2 && r() < 0.4) {
          const d = b[b.length - 1]!;
          n = tryMake("slice", [x], { axis: b.length - 1, start: 1, stop: d, step: r() < 0.5 ? 1 : 2 });
        } else if (b.length >= 2) n = tryMake("permute", [x], { perm: [...b.keys()].reverse() });
        else n = tryMake("reshape", [x], { shape: [...b, 1] });
        break;
      }
      case 8: {
        const b = x.type.base;
        const total = b.reduce((p, d) => p * d, 1);
        n =
          r() < 0.5
            ? tryMake("reshape", [x], { shape: [total] })
            : tryMake("expand", [x], { shape: [2, ...b.map((d) => (d === 1 ? 3 : d))] });
        break;
      }
      case 9:
        if (r() < 0.4 && x.type.base.length >= 1) {
          const axis = x.type.base.length - 1;
          const sl = tryMake("slice", [x], { axis, start: 0, stop: 1, step: 1 });
          n = sl ? tryMake("concat", r() < 0.5 ? [x, sl] : [sl, x, sl], { axis }) : undefined;
        } else if (r() < 0.4 && x.type.batch.length >= 1) {
          // Batch slices and concatenations (block copies at run time).
          const axis = Math.floor(r() * x.type.batch.length);
          n =
            r() < 0.5
              ? tryMake("batch_slice", [x], {
                  axis,
                  start: r() < 0.5 ? 0 : 1,
                  stop: -1,
                  step: BATCH_STEPS[Math.floor(r() * 4)]!,
                })
              : tryMake("batch_concat", [x, x], { axis });
        } else
          n = r() < 0.5 ? tryMake("batch_reshape", [x], { shape: [-1] }) : tryMake("batch_unsqueeze", [x], { dim: 0 });
        break;
      case 10:
        if (x.type.base.length >= 1 && y.type.base.length >= 1) n = tryMake("matmul", [x, y]);
        break;
    }
    if (n !== undefined && n.type.dtype === dtype) {
      pool.push(n);
      s++;
    }
  }
  const outs = [pool[pool.length - 1]!];
  if (pool.length > 2 && r() < 0.5) outs.push(pool[pool.length - 2]!);
  narrowTail(seed, pool, outs, specials);
  return { graph: makeGraph("random", inputs, outs), inputTypes, seed, specials };
}

/**
 * A bool condition on x and y for `where`: a comparison of x and y, a predicate of x
 * (isnan, …), or, nested up to twice, a logical op of two conditions or of one (not).
 */
function condition(r: () => number, x: Node, y: Node, depth: number): Node | undefined {
  const k = r();
  if (depth < 2 && k < 0.15) {
    const a = condition(r, x, y, depth + 1);
    const b = condition(r, y, x, depth + 1);
    return a && b && tryMake(pick(r, LOGICAL_BINARY), [a, b]);
  }
  if (depth < 2 && k < 0.25) {
    const a = condition(r, x, y, depth + 1);
    return a && tryMake(pick(r, LOGICAL_UNARY), [a]);
  }
  if (k < 0.4) return tryMake(pick(r, PREDICATE), [x]);
  return tryMake(pick(r, COMPARE), [x, y]);
}

/** The dtype a value of `d` is promoted to on the way (as the frontend promotes mixed operands). */
const WIDER: Record<Family, DType> = { float32: "float64", float64: "float64", int32: "float64", uint32: "float64" };

/**
 * With `broadcast` (issue 26): a node whose operands repeat (`f(x, x)`, `where(c, x, x)`, a
 * matmul of x with itself), or reach it through a promotion (`where(c, cast(x, wide),
 * cast(x, wide))` as `where(c, x.cast("float64"), x)` builds it, a binary op of two promoted
 * operands), each cast back to the graph's dtype. The condition `c` compares two other
 * values, so its run-time batch sizes differ from x's where an input's dim is 1.
 */
function repeatedOrPromoted(
  r: () => number,
  dtype: DType,
  x: Node,
  y: Node,
  pool: readonly Node[],
  binary: readonly KBinaryOp[],
): Node | undefined {
  const wide = WIDER[dtype as Family];
  const back = (n: Node | undefined): Node | undefined =>
    n === undefined || n.type.dtype === dtype ? n : tryMake("cast", [n], { dtype });
  const cond = (): Node | undefined => {
    if (r() < 0.15) return tryMake("const", [], { dtype: "bool", value: r() < 0.5 ? 1 : 0 });
    const a = pick(r, pool);
    const b = pick(r, pool);
    return a.type.dtype === b.type.dtype ? tryMake(pick(r, COMPARE), [a, b]) : undefined;
  };
  const promoted = (v: Node): Node | undefined => (r() < 0.5 ? tryMake("cast", [v], { dtype: wide }) : v);
  switch (Math.floor(r() * 5)) {
    case 0:
      return tryMake(pick(r, binary), [x, x]);
    case 1: {
      const c = cond();
      const p = promoted(x);
      return c && p && back(tryMake("where", [c, p, p]));
    }
    case 2: {
      // where(c, x, y) with a constant c (the fold picks a branch) or a c of its own shape.
      const c = cond();
      return c && tryMake("where", [c, x, r() < 0.5 ? x : y]);
    }
    case 3: {
      const px = tryMake("cast", [x], { dtype: wide });
      const py = r() < 0.5 ? px : tryMake("cast", [y], { dtype: wide });
      return px && py && back(tryMake(pick(r, binary), [px, py]));
    }
    default:
      return x.type.base.length >= 1 ? tryMake("matmul", [x, x]) : tryMake(pick(r, binary), [x, x]);
  }
}

// --- short reductions (issue 26): sums, means, products and matmul over 1-16 elements ---

/** Float values whose float32 (or float64) running sums and products overflow, cancel, lose bits or underflow. */
const CANCELLING: Record<"float32" | "float64", readonly number[]> = {
  float32: [
    3e38,
    -3e38,
    3.4028234663852886e38,
    -3.4028234663852886e38,
    1e30,
    -1e30,
    1e-30,
    1e-25,
    2 ** 24,
    1,
    -1,
    3,
    0.5,
    -0,
  ],
  float64: [1.7e308, -1.7e308, 1e300, -1e300, 1e-300, 2 ** 53, 1, -1, 3, 0.5, -0, 3e38],
};

/**
 * A random case of one short reduction (issue 26, item 2): x and y `(b0,b1; base)` with
 * run-time size-1 batch dims on one and not the other (as `randomCase`'s `broadcast`),
 * an exact prologue (x, x·y, x + y, x - y, -x, or x promoted to float64: the sum then
 * runs in float64 and is cast back), then a sum, mean or product over base axes of 1
 * to 16 elements, or a matmul with K from 1 to 16, and half the time an exact epilogue.
 * `randomInputs` draws huge, cancelling and tiny values (`cancelling`). Every op is
 * correctly rounded, so every backend with float64 accumulators gives the interpreter's
 * bits: judged exactly.
 */
export function randomReductionCase(seed: number, family: "float32" | "float64"): RandomCase {
  const r = rng(seed ^ 0x68e31da4);
  const batchRank = Math.floor(r() * 3);
  const batch = Array.from({ length: batchRank }, () => 2 + Math.floor(r() * 2));
  const one = batch.map(() => Math.floor(r() * 2));
  const syms = batch.map((_, j) => `b${j}`);
  const k = 1 + Math.floor(r() * 16);
  const mm = r() < 0.3;
  // The reduced axes: (k) or (a, k/a) and both; a matmul's K is the last axis of x and the first of y.
  const a = [1, 2, 4].filter((d) => k % d === 0 && !mm)[Math.floor(r() * 3)] ?? 1;
  const xBase = mm ? [1 + Math.floor(r() * 2), k] : a > 1 && r() < 0.5 ? [a, k / a] : [k];
  const yBase = mm ? [k, 1 + Math.floor(r() * 2)] : xBase;
  concrete = new Map();
  const input = (i: number, base: number[]): { node: Node; type: ConcreteType } => {
    const b = batch.map((d, j) => (one[j] === i ? 1 : d));
    const node = Node.make("input", [], { index: i }, { dtype: family, batch: syms, base });
    const type = { dtype: family, batch: b, base };
    concrete.set(node, type);
    return { node, type };
  };
  const x = input(0, xBase);
  const y = input(1, yBase);
  let t: Node = x.node;
  let red: Node;
  if (mm) red = Node.make("matmul", [x.node, y.node]);
  else {
    const pro = Math.floor(r() * 7);
    if (pro <= 3 && pro > 0) t = Node.make((["mul", "add", "sub"] as const)[pro - 1]!, [x.node, y.node]);
    else if (pro === 4) t = Node.make("neg", [x.node]);
    else if (pro === 5 && family === "float32") t = Node.make("cast", [x.node], { dtype: "float64" });
    const all = [...t.type.base.keys()];
    const baseAxes = all.length > 1 && r() < 0.5 ? [all.length - 1] : all;
    const op = pick(r, ["sum", "mean", "prod"] as const);
    red = Node.make(op, [t], { batchAxes: [], baseAxes, keep: r() < 0.5 });
    if (red.type.dtype !== family) red = Node.make("cast", [red], { dtype: family });
  }
  if (r() < 0.5)
    red = Node.make(pick(r, ["add", "mul"] as const), [
      red,
      r() < 0.5 ? red : Node.make("const", [], { dtype: family, value: 2 }),
    ]);
  return {
    graph: makeGraph("random_reduction", [x.node, y.node], [red]),
    inputTypes: [x.type, y.type],
    seed,
    specials: false,
    cancelling: true,
  };
}

// --- narrow dtypes: a tail of ops on uint8, int8, uint16 or int16 (from their own PRNG stream, so
// the graph before it is the one the seed gave before) ---
const NARROW: readonly DType[] = ["uint8", "int8", "uint16", "int16"];
/** Values at and past the narrow dtypes' edges (wrapped by the const's dtype when they do not fit). */
/** The reductions of a narrow tail: those whose result is not float or bool (an integer, or a position). */
const NARROW_REDUCE: readonly KReduceOp[] = REDUCE.filter((op) => {
  const d = reductionFacts(op).dtype;
  return d !== "float" && d !== "bool";
});
const NARROW_SPECIALS = [0, 1, -1, 2, 7, 127, -128, 128, 255, 256, 32767, -32768, 65535, 8, 16, 31];

/**
 * Two times in five, casts one of the last values (in a float graph one of its inputs, with NaN,
 * ±Inf and out-of-range values: they become 0 or wrap) to a narrow dtype, applies one
 * to three integer ops there (arithmetic, bitwise and shifts, `pow` with `specials`,
 * comparisons with `where`, reductions, constants at the dtype's edges); the result
 * is a last, narrow output, or, cast back to the graph's dtype, the first output.
 */
function narrowTail(seed: number, pool: readonly Node[], outs: Node[], specials: boolean): void {
  const r = rng(seed ^ 0x2545f491);
  if (r() >= 0.4) return;
  const d = pick(r, NARROW);
  const back = outs[0]!.type.dtype;
  const narrow = (n: Node): Node | undefined => tryMake("cast", [n], { dtype: d });
  // In a float graph only the inputs are cast: a computed float may differ by a rounding
  // error between backends (and from the float64 twin), which a cast to an integer turns
  // into a jump.
  const from = isFloat(back) ? pool.filter((n) => n.op === "input") : pool;
  let x = narrow(pick(r, from.slice(-3)));
  if (x === undefined) return;
  const bin = specials ? INT_BINARY_SPECIAL : INT_BINARY;
  for (let k = 0, steps = 1 + Math.floor(r() * 3); k < steps; k++) {
    const other =
      r() < 0.5
        ? narrow(pick(r, from))
        : tryMake("const", [], { dtype: d, value: castScalar(pick(r, NARROW_SPECIALS), d) });
    const kind = Math.floor(r() * 5);
    let n: Node | undefined;
    if (kind === 0) n = tryMake(pick(r, INT_UNARY), [x]);
    else if (kind <= 2 && other !== undefined) n = tryMake(pick(r, bin), r() < 0.5 ? [x, other] : [other, x]);
    else if (kind === 3 && other !== undefined) {
      const cmp = tryMake(pick(r, COMPARE), [x, other]);
      n = cmp && tryMake("where", [cmp, x, other]);
    } else if (x.type.base.length > 0) {
      const op = pick(r, NARROW_REDUCE);
      const red = tryMake(op, [x], { batchAxes: [], baseAxes: [x.type.base.length - 1], keep: r() < 0.5 });
      n = red && (red.type.dtype === d ? red : tryMake("cast", [red], { dtype: d }));
    }
    if (n !== undefined) x = n;
  }
  // Cast back, it replaces the first output (which keeps the graph's dtype); narrow, it is one more output.
  if (r() < 0.5) outs.push(x);
  else {
    const out = tryMake("cast", [x], { dtype: back });
    if (out !== undefined) outs[0] = out;
  }
}

/**
 * Input values for a case: floats in [-2, 2] (three decimals), ints in [-5, 5]
 * (uint32: [0, 10]); with `specials`, about one element in four is a special value
 * of the dtype (NaN, ±Inf, -0, huge, tiny, integer extremes).
 */
export function randomInputs(c: RandomCase): Value[] {
  const r = rng(c.seed ^ 0x9e3779b9);
  return c.inputTypes.map((t) => {
    const n = [...t.batch, ...t.base].reduce((p, d) => p * d, 1);
    const data: TypedArray = new ARRAY_CTOR[t.dtype](n);
    const family = t.dtype as Family;
    for (let i = 0; i < n; i++) {
      if (c.cancelling === true && (t.dtype === "float32" || t.dtype === "float64"))
        data[i] = r() < 0.8 ? pick(r, CANCELLING[t.dtype]) : Math.round((r() * 4 - 2) * 1000) / 1000;
      else if (c.specials && r() < 0.25)
        data[i] = pick(r, !isFloat(t.dtype) || r() < 0.6 ? specialsOf(family) : NON_FINITE);
      else
        data[i] =
          t.dtype === "int32"
            ? Math.floor(r() * 11) - 5
            : t.dtype === "uint32"
              ? Math.floor(r() * 11)
              : Math.round((r() * 4 - 2) * 1000) / 1000;
    }
    return { type: t, data };
  });
}

/** fast-check arbitrary over seeds. */
export const seedArb = fc.integer({ min: 1, max: 2 ** 31 - 1 });

/** Compares two arrays: NaN matches NaN, infinities match exactly, else |a-b| <= tol·max(1,|b|). */
export function closeEnough(actual: ArrayLike<number>, expected: ArrayLike<number>, tol: number): string | undefined {
  if (actual.length !== expected.length) return `length ${actual.length} vs ${expected.length}`;
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i]!;
    const b = expected[i]!;
    if (Number.isNaN(b) ? !Number.isNaN(a) : !(a === b || Math.abs(a - b) <= tol * Math.max(1, Math.abs(b)))) {
      return `element ${i}: got ${a}, expected ${b}`;
    }
  }
  return undefined;
}

// --- indexing (take) ---

/**
 * What `randomTakeCase` and `randomScatterCase` start from: a `randomCase`, the draws for
 * the op they add (`rng(seed ^ salt)`), the concrete size of each batch symbol (the largest
 * size an input gives it; the others are 1), the value they index (the first output, which
 * has the family's dtype: a narrow tail's output, if any, comes last; a size-1 base axis
 * added when it has none) and a random base axis of it.
 */
function indexedCase(
  seed: number,
  family: Family,
  opts: { steps?: number; smooth?: boolean; specials?: boolean },
  salt: number,
): {
  c: RandomCase;
  r: () => number;
  inputs: readonly Node[];
  sizeOf: Map<string | number, number>;
  x: Node;
  axis: number;
} {
  const c = randomCase(seed, family, opts);
  const r = rng(seed ^ salt);
  const inputs = c.graph.inputs;
  const sizeOf = new Map<string | number, number>();
  inputs.forEach((n, i) =>
    n.type.batch.forEach((d, j) => sizeOf.set(d, Math.max(sizeOf.get(d) ?? 1, c.inputTypes[i]!.batch[j]!))),
  );
  let x = c.graph.outputs[0]!;
  if (x.type.base.length === 0) x = Node.make("reshape", [x], { shape: [1] });
  return { c, r, inputs, sizeOf, x, axis: Math.floor(r() * x.type.base.length) };
}

/**
 * A random case whose output goes through `take`: a `randomCase` graph, then
 * `take` of its last value (a size-1 base axis is added when it has none) at an
 * extra int32 input of indices (batch: a suffix of the output's batch dims, some
 * broadcast; base: one or two dims, or none), on a random base axis, and half the
 * time an elementwise consumer. `randomInputs` draws the indices in [-5, 5] (with
 * `specials`, also int32 extremes), so they cover in-range, negative (wrapped)
 * and out-of-range (filled) positions.
 */
export function randomTakeCase(
  seed: number,
  family: Family,
  opts: { steps?: number; smooth?: boolean; specials?: boolean } = {},
): RandomCase {
  const { c, r, inputs, sizeOf, x, axis } = indexedCase(seed, family, opts, 0x5bd1e995);
  const bRank = Math.floor(r() * (x.type.batch.length + 1));
  const batchSyms = x.type.batch.slice(x.type.batch.length - bRank);
  const bcast = batchSyms.map(() => r() < 0.25);
  const idxBase = Array.from({ length: Math.floor(r() * 3) }, () =>
    c.specials && r() < 0.05 ? 0 : 1 + Math.floor(r() * 4),
  );
  const idx = Node.make(
    "input",
    [],
    { index: inputs.length },
    { dtype: "int32", batch: batchSyms.map((d, j) => (bcast[j] ? 1 : d)), base: idxBase },
  );
  const idxType: ConcreteType = {
    dtype: "int32",
    batch: batchSyms.map((d, j) =>
      bcast[j] || typeof d !== "string" ? (typeof d === "number" ? d : 1) : (sizeOf.get(d) ?? 1),
    ),
    base: idxBase,
  };
  const taken = Node.make("take", [x, idx], { axis });
  const out: Node = r() < 0.5 ? Node.make("add", [taken, taken]) : taken;
  return {
    graph: makeGraph("random_take", [...inputs, idx], [out]),
    inputTypes: [...c.inputTypes, idxType],
    seed,
    specials: c.specials,
  };
}

// --- updates (scatter) ---

/**
 * A random case whose output goes through `scatter`: a `randomCase` graph, then
 * `scatter` into its last value (a size-1 base axis is added when it has none) at
 * an extra int32 input of indices (as `randomTakeCase`: drawn in [-5, 5], so with
 * small axes they repeat, wrap and fall out of range; with `specials`, int32
 * extremes and empty index lists too) with an extra input of updates (batch: a
 * suffix of the output's batch dims, some broadcast; base: a suffix of the update
 * shape, some dims 1), in a random mode, and half the time an elementwise consumer
 * (which runs in a later kernel).
 */
export function randomScatterCase(
  seed: number,
  family: Family,
  opts: { steps?: number; smooth?: boolean; specials?: boolean; mode?: "set" | "add" | "mul" | "min" | "max" } = {},
): RandomCase {
  const { c, r, inputs, sizeOf, x, axis } = indexedCase(seed, family, opts, 0x2545f491);
  const concrete = (syms: readonly (string | number)[], bcast: readonly boolean[]): number[] =>
    syms.map((d, j) => (bcast[j] ? 1 : typeof d === "number" ? d : (sizeOf.get(d) ?? 1)));
  const suffixInput = (index: number, dtype: DType, base: number[]): { node: Node; type: ConcreteType } => {
    const rank = Math.floor(r() * (x.type.batch.length + 1));
    const syms = x.type.batch.slice(x.type.batch.length - rank);
    const bcast = syms.map(() => r() < 0.25);
    const node = Node.make("input", [], { index }, { dtype, batch: syms.map((d, j) => (bcast[j] ? 1 : d)), base });
    return { node, type: { dtype, batch: concrete(syms, bcast), base } };
  };
  const idxBase = Array.from({ length: Math.floor(r() * 3) }, () =>
    c.specials && r() < 0.05 ? 0 : 1 + Math.floor(r() * 4),
  );
  const idx = suffixInput(inputs.length, "int32", idxBase);
  const u = [...x.type.base.slice(0, axis), ...idxBase, ...x.type.base.slice(axis + 1)];
  const updBase = u.slice(Math.floor(r() * (u.length + 1))).map((d) => (r() < 0.25 ? 1 : d));
  const upd = suffixInput(inputs.length + 1, x.type.dtype, updBase);
  const modes = ["set", "add", "mul", "min", "max"] as const;
  const mode = x.type.dtype === "bool" ? "set" : (opts.mode ?? modes[Math.floor(r() * modes.length)]!);
  const scattered = Node.make("scatter", [x, idx.node, upd.node], { axis, mode });
  const out: Node = r() < 0.5 && x.type.dtype !== "bool" ? Node.make("add", [scattered, scattered]) : scattered;
  return {
    graph: makeGraph("random_scatter", [...inputs, idx.node, upd.node], [out]),
    inputTypes: [...c.inputTypes, idx.type, upd.type],
    seed,
    specials: c.specials,
  };
}

// --- linear algebra (looped matrix routines) ---

/**
 * A random case of a looped matrix routine (the `routine` op, ir/routines.ts): a
 * random routine on a float matrix input `(batch; m,n)` of small random sizes
 * (batch rank 0 to 2, some dims broadcast in a second input, empty dims with
 * `specials`), `lu_solve` on the `lu` of the input and a right-hand-side input,
 * random Jacobi sweep counts and QR column counts, and half the time an
 * elementwise consumer. `randomInputs` draws the data (with `specials`, NaN, ±Inf
 * and extremes, which the routines must carry through without hanging).
 */
export function randomRoutineCase(
  seed: number,
  family: "float32" | "float64",
  opts: { specials?: boolean } = {},
): RandomCase {
  const r = rng(seed ^ 0x2545f491);
  const specials = opts.specials === true;
  const names = ["lu", "lu_solve", "cholesky", "qr", "eigh", "svd", "sort"] as const;
  const name = pick(r, names);
  const dim = (): number => (specials && r() < 0.05 ? 0 : 1 + Math.floor(r() * 3));
  const batch = Array.from({ length: Math.floor(r() * 3) }, dim);
  const n = 1 + Math.floor(r() * 5);
  const m = name === "qr" || name === "sort" ? 1 + Math.floor(r() * 5) : name === "svd" ? n + Math.floor(r() * 3) : n;
  const syms = batch.map((_, j) => `b${j}`);
  const a = Node.make("input", [], { index: 0 }, { dtype: family, batch: syms, base: [m, n] });
  const types: ConcreteType[] = [{ dtype: family, batch, base: [m, n] }];
  const inputs = [a];
  const attrs = { name: name as (typeof names)[number], arg: 0 };
  let out: Node;
  if (name === "lu_solve") {
    const k = 1 + Math.floor(r() * 3);
    // b takes a suffix of the batch dims, some broadcast.
    const bRank = Math.floor(r() * (batch.length + 1));
    const bb = batch.slice(batch.length - bRank).map((d) => (r() < 0.25 ? 1 : d));
    const b = Node.make(
      "input",
      [],
      { index: 1 },
      { dtype: family, batch: syms.slice(batch.length - bRank).map((s, j) => (bb[j] === 1 ? 1 : s)), base: [n, k] },
    );
    inputs.push(b);
    types.push({ dtype: family, batch: bb, base: [n, k] });
    const f = Node.make("routine", [a], { name: "lu", arg: 0 });
    out = Node.make("routine", [f, b], attrs);
  } else {
    if (name === "qr") attrs.arg = r() < 0.5 ? Math.min(m, n) : m;
    if (name === "eigh" || name === "svd") attrs.arg = 1 + Math.floor(r() * 8);
    if (name === "sort") attrs.arg = r() < 0.5 ? 1 : 0; // 1: descending
    out = Node.make("routine", [a], attrs);
  }
  if (r() < 0.5) out = Node.make("add", [out, out]);
  return { graph: makeGraph("random_routine", inputs, [out]), inputTypes: types, seed, specials };
}
