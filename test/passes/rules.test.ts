/**
 * Every rewrite rule keeps the node it replaces (issue 26, item 1): for each rule of
 * the rule tables (canonicalize, fold, simplify; the simplify pass runs all three) and
 * for the graph rewrites `lower` (matmul, after `narrow` as in the pipeline) and `narrow`, on random nodes built to match
 * the rules' patterns (constants at the identities and special values, repeated
 * operands `f(x, x)`, `where(c, x, x)`, chains of negations, casts and movements),
 *
 * - the replacement has the node's type, as printed (dtype, batch dims including their
 *   symbols, base shape);
 * - on random concrete bindings, where any batch dim of any input may be 1 at run time
 *   while another input's dim of the same symbol is not (a size-1 dim broadcasts), the
 *   reference interpreter gives the replacement the node's concrete type and bits (NaN,
 *   ±Inf, -0 included), and a binding the node refuses (a ShapeError) is refused by the
 *   replacement too.
 *
 * The expected values are the reference interpreter's on the node itself. Every rule
 * must fire at least a few times, so that the property says something about each.
 */
import { describe, expect, it } from "vitest";
import { ARRAY_CTOR, castScalar, isFloat, isInt, type DType } from "../../ir/dtype.js";
import { BatchwiseError } from "../../ir/errors.js";
import { BINARY_OPS, UNARY_OPS } from "../../ir/elementwise.js";
import { makeGraph, Node, topoOrder, type Graph } from "../../ir/graph.js";
import { interpret, type Value } from "../../ir/interpret.js";
import type { Op } from "../../ir/ops.js";
import { printGraph } from "../../ir/print.js";
import type { ConcreteType } from "../../ir/shapes.js";
import { fmtType, type Dim } from "../../ir/types.js";
import { CANONICALIZE_RULES } from "../../passes/canonicalize.js";
import type { Rule } from "../../passes/driver.js";
import { FOLD_RULES } from "../../passes/fold.js";
import { lowerOps } from "../../passes/lower.js";
import { widenNarrow } from "../../passes/narrow.js";
import { SIMPLIFY_RULES } from "../../passes/simplify.js";
import { rng } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";

const DTYPES: readonly DType[] = ["float32", "float64", "int32", "uint32", "bool", "int8", "uint16"];
const SPECIAL: Record<"float" | "int" | "uint" | "bool", readonly number[]> = {
  float: [0, -0, 1, -1, 2, 4, 0.5, 0.25, -2, 3, NaN, Infinity, -Infinity, 5e-324, 1e300, 3e38, 1.401298464324817e-45],
  int: [0, 1, -1, 2, 4, 3, -2, 2147483647, -2147483648, 127, -128, 255],
  uint: [0, 1, 2, 4, 3, 4294967295, 2147483648, 65535],
  bool: [0, 1],
};
const specialsOf = (d: DType): readonly number[] =>
  d === "bool" ? SPECIAL.bool : isFloat(d) ? SPECIAL.float : d.startsWith("u") ? SPECIAL.uint : SPECIAL.int;

/** A rule-shaped random node over fresh inputs (see the file comment). */
class Builder {
  readonly inputs: Node[] = [];
  constructor(private readonly r: () => number) {}

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.r() * xs.length)]!;
  }

  /** An input: batch dims aligned from the right (`b0`, `b1`), some literal (1 or 3); a small base. */
  input(dtype: DType, like?: Node): Node {
    const rank = like !== undefined && this.r() < 0.6 ? like.type.batch.length : Math.floor(this.r() * 3);
    const batch: Dim[] = Array.from({ length: rank }, (_, j) => {
      const u = this.r();
      return u < 0.15 ? 1 : u < 0.2 ? 3 : `b${2 - rank + j}`;
    });
    const base =
      like !== undefined && this.r() < 0.7
        ? like.type.base.map((d) => (this.r() < 0.2 ? 1 : d))
        : Array.from({ length: Math.floor(this.r() * 3) }, () => this.pick([1, 2, 3]));
    const n = Node.make("input", [], { index: this.inputs.length }, { dtype, batch, base });
    this.inputs.push(n);
    return n;
  }

  constant(dtype: DType, value?: number): Node {
    return Node.make("const", [], { dtype, value: castScalar(value ?? this.pick(specialsOf(dtype)), dtype) });
  }

  /** Some operand of dtype `d`: an input, a constant, or (depth permitting) a pattern. */
  operand(d: DType, depth: number, like?: Node): Node {
    const u = this.r();
    if (u < 0.2) return this.constant(d);
    if (u < 0.4 && depth > 0) return this.pattern(d, depth - 1) ?? this.input(d, like);
    return this.input(d, like);
  }

  make(op: Op, inputs: Node[], attrs: object = {}): Node | undefined {
    try {
      return Node.make(op, inputs, attrs as never);
    } catch {
      return undefined;
    }
  }

  /** A node shaped like the left side of some rule, of dtype `d` (undefined when the draw did not type). */
  pattern(d: DType, depth = 1): Node | undefined {
    const x = this.operand(d, depth);
    const k = Math.floor(this.r() * 12);
    switch (k) {
      case 0: {
        // op(x, c) and op(c, x): identities (x*1, x-0, x+-0, x/4, pow(x, 2), ...) and special constants.
        const pairs = [
          ["add", -0],
          ["add", 0],
          ["sub", 0],
          ["mul", 1],
          ["div", 1],
          ["pow", 1],
          ["pow", 2],
          ["mul", -1],
          ["mul", 0],
          ["div", 4],
          ["div", 0.5],
        ] as const;
        const [op, v] = this.r() < 0.5 ? this.pick(pairs) : [this.pick([...BINARY_OPS]), undefined];
        const c = this.constant(d, v);
        return this.make(op, this.r() < 0.7 ? [x, c] : [c, x]);
      }
      case 1: {
        // op(x, x): the idempotent ops; op(x, y) with y broadcasting x.
        const op = this.pick([...BINARY_OPS]);
        return this.make(op, this.r() < 0.6 ? [x, x] : [x, this.operand(d, depth, x)]);
      }
      case 2: {
        // where(c, x, x) (also after a promotion: both branches the same cast node), where(c, x, y).
        const c = this.r() < 0.3 ? this.constant("bool") : this.operand("bool", depth, x);
        const y = this.r() < 0.6 ? x : this.operand(d, depth, x);
        return this.make("where", [c, x, y]);
      }
      case 3: {
        // u(v(x)) for neg, abs, not and the other unary ops.
        const not = x.type.dtype === "bool" && this.r() < 0.5;
        const u = not ? "not" : this.pick(["neg", "abs", "not", ...UNARY_OPS] as Op[]);
        const v = not ? "not" : this.pick(["neg", "abs", "not", "neg", "abs"] as Op[]);
        const inner = this.make(v, [x]);
        return inner && this.make(u, [inner]);
      }
      case 4: {
        // x + neg(y), x - neg(y).
        const y = this.operand(d, depth, x);
        const ny = this.make("neg", [y]);
        return ny && this.make(this.pick(["add", "sub"] as Op[]), [x, ny]);
      }
      case 5: {
        // cast(cast(x, wide), T), cast(x, own dtype).
        const mid = this.make("cast", [x], { dtype: this.pick(DTYPES) });
        return mid && this.make("cast", [mid], { dtype: this.r() < 0.3 ? d : this.pick(DTYPES) });
      }
      case 6: {
        // Base movements: reshape to its own shape, twice; permute identity or twice; expand to its own shape; full slice.
        const b = x.type.base;
        const n = b.reduce((p, q) => p * q, 1);
        const perm = [...b.keys()];
        if (this.r() < 0.5) perm.reverse();
        const choices: (() => Node | undefined)[] = [
          () => this.make("reshape", [x], { shape: b }),
          () => {
            const m = this.make("reshape", [x], { shape: [n] });
            return m && this.make("reshape", [m], { shape: this.r() < 0.5 ? b : [1, n] });
          },
          () => this.make("permute", [x], { perm: [...b.keys()] }),
          () => {
            const m = this.make("permute", [x], { perm });
            return m && this.make("permute", [m], { perm });
          },
          () => this.make("expand", [x], { shape: b }),
          () => this.make("expand", [x], { shape: [2, ...b.map((q) => (q === 1 ? 3 : q))] }),
          () =>
            b.length === 0
              ? undefined
              : this.make("slice", [x], {
                  axis: b.length - 1,
                  start: 0,
                  stop: b[b.length - 1]!,
                  step: this.pick([1, 1, 2]),
                }),
        ];
        return this.pick(choices)();
      }
      case 7: {
        // Batch movements: batch_reshape twice, rebatch twice or to its own split, batch_unsqueeze.
        const shapes = [[-1], [-1, 1], [1, -1], [2, -1], [-1, 3], [6]];
        const choices: (() => Node | undefined)[] = [
          () => {
            const m = this.make("batch_reshape", [x], { shape: this.pick(shapes) });
            return m && this.make("batch_reshape", [m], { shape: this.pick(shapes) });
          },
          () => {
            const full = [...x.type.batch, ...x.type.base];
            const k1 = Math.floor(this.r() * (full.length + 1));
            const size = (dims: readonly Dim[]): number[] => dims.map((q) => (typeof q === "number" ? q : 2));
            const m = this.make("rebatch", [x], { batchDim: k1, base: size(full.slice(k1)) });
            if (m === undefined) return undefined;
            const full2 = [...m.type.batch, ...m.type.base];
            const k2 = this.r() < 0.4 ? m.type.batch.length : Math.floor(this.r() * (full2.length + 1));
            return this.make("rebatch", [m], { batchDim: k2, base: size(full2.slice(k2)) });
          },
          () => this.make("rebatch", [x], { batchDim: x.type.batch.length, base: x.type.base }),
          () => this.make("batch_unsqueeze", [x], { dim: 0 }),
        ];
        return this.pick(choices)();
      }
      case 8: {
        // Constant operands only: the folds (unary, binary, cast, where with a constant condition).
        const c1 = this.constant(d);
        const c2 = this.constant(d);
        const choices: (() => Node | undefined)[] = [
          () => this.make(this.pick([...UNARY_OPS]), [c1]),
          () => this.make(this.pick([...BINARY_OPS]), [c1, c2]),
          () => this.make("cast", [c1], { dtype: this.pick(DTYPES) }),
          () => this.make("where", [this.constant("bool"), x, this.r() < 0.5 ? c2 : this.operand(d, depth, x)]),
        ];
        return this.pick(choices)();
      }
      case 9: {
        // pow(x, c) for the pow rules; x / c for the power-of-two rule.
        const c = this.constant(d, this.pick([1, 2, 0.5, 4, -1, 0.25, 2 ** -1074, 2 ** 1023, 3]));
        return this.make(this.pick(["pow", "div", "mul"] as Op[]), [x, c]);
      }
      case 10: {
        // matmul (lowered to a sum of products) with batch dims that broadcast.
        const y = this.input(d, x);
        return this.make("matmul", [x, y]);
      }
      default: {
        // A small reduction (with narrow dtypes: the narrow rewrite).
        const b = x.type.base;
        if (b.length === 0) return this.make("neg", [x]);
        return this.make(this.pick(["sum", "prod", "max", "mean"] as Op[]), [x], {
          batchAxes: [],
          baseAxes: [b.length - 1],
          keep: this.r() < 0.5,
        });
      }
    }
  }
}

/** A concrete binding: each symbol a size of 2 or 3 (0 now and then), each input's dim that size or 1. */
function bind(r: () => number, inputs: readonly Node[]): ConcreteType[] {
  const size = new Map<string, number>();
  const sizeOf = (s: string): number => {
    if (!size.has(s)) size.set(s, r() < 0.05 ? 0 : 2 + Math.floor(r() * 2));
    return size.get(s)!;
  };
  return inputs.map((n) => ({
    dtype: n.type.dtype,
    batch: n.type.batch.map((d) => (typeof d === "number" ? d : r() < 0.4 ? 1 : sizeOf(d))),
    base: n.type.base,
  }));
}

function values(r: () => number, t: ConcreteType): Value {
  const n = [...t.batch, ...t.base].reduce((p, q) => p * q, 1);
  const data = new ARRAY_CTOR[t.dtype](n);
  const sp = specialsOf(t.dtype);
  for (let i = 0; i < n; i++) {
    const v = r() < 0.5 ? sp[Math.floor(r() * sp.length)]! : isInt(t.dtype) ? Math.floor(r() * 9) - 4 : r() * 6 - 3;
    data[i] = castScalar(t.dtype === "bool" ? (r() < 0.5 ? 1 : 0) : v, t.dtype);
  }
  return { type: t, data };
}

type Outcome = { type: string; data: readonly string[] } | { error: string };
function run(g: Graph, inputs: readonly Value[]): Outcome {
  try {
    const [v] = interpret(g, inputs);
    const t = v!.type;
    return {
      type: `${t.dtype}[${t.batch.join(",")}; ${t.base.join(",")}]`,
      data: Array.from(v!.data, (x) => (Object.is(x, -0) ? "-0" : String(x))),
    };
  } catch (e) {
    if (!(e instanceof BatchwiseError)) throw e;
    return { error: `${e.constructor.name}: ${e.message}` };
  }
}
const show = (o: Outcome): string => ("error" in o ? o.error : `${o.type} [${o.data.join(", ")}]`);

/** The rewrites under test: each rule of the tables, then lower and narrow (graph rewrites on a one-node graph). */
interface Rewrite {
  readonly name: string;
  readonly apply: (n: Node, inputs: readonly Node[]) => Node | undefined;
}
const TABLES: readonly (readonly [string, readonly Rule[]])[] = [
  ["canonicalize", CANONICALIZE_RULES],
  ["fold", FOLD_RULES],
  ["simplify", SIMPLIFY_RULES],
];
const onGraph =
  (pass: (g: Graph) => Graph) =>
  (n: Node, inputs: readonly Node[]): Node | undefined => {
    const out = pass(makeGraph("one", inputs, [n])).outputs[0]!;
    return out === n ? undefined : out;
  };
const REWRITES: readonly Rewrite[] = [
  ...TABLES.flatMap(([table, rules]) =>
    rules.map((r) => ({ name: `${table}/${r.name}`, apply: (n: Node) => r.apply(n) })),
  ),
  // The pipeline lowers after narrow (a matmul of a narrow dtype is widened first, so the lowered sum has its dtype).
  { name: "lower", apply: onGraph((g) => lowerOps(widenNarrow(g))) },
  { name: "narrow", apply: onGraph(widenNarrow) },
];

const CASES = 6000;
const BINDINGS = 6;

describe("every rewrite rule keeps the node's type and, on run-time size-1 batch dims, its values", () => {
  it(`${CASES} rule-shaped nodes × every rule × ${BINDINGS} bindings against the interpreter`, () => {
    const fired = new Map<string, number>(REWRITES.map((w) => [w.name, 0]));
    const failures = new Map<string, string[]>();
    const fail = (rule: string, text: string): void => {
      const list = failures.get(rule) ?? [];
      list.push(text);
      failures.set(rule, list);
    };
    for (let k = 0; k < CASES; k++) {
      const seed = (FC_SEED + 104729 * k) >>> 0;
      const r = rng(seed);
      const b = new Builder(r);
      const root = b.pattern(b.pick(DTYPES), 2);
      if (root === undefined) continue;
      const inputs = b.inputs;
      const nodes = topoOrder(makeGraph("case", inputs, [root])).filter((n) => n.op !== "input");
      for (const n of nodes) {
        const g = makeGraph("node", inputs, [n]);
        for (const w of REWRITES) {
          let out: Node | undefined;
          try {
            out = w.apply(n, inputs);
          } catch (e) {
            fail(w.name, `threw ${String(e)}\nseed ${seed}\n${printGraph(g)}`);
            continue;
          }
          if (out === undefined || out === n) continue;
          fired.set(w.name, fired.get(w.name)! + 1);
          const h = makeGraph("rewritten", inputs, [out]);
          const where = () => `seed ${seed}\n${printGraph(g)}\n--- ${w.name} gives:\n${printGraph(h)}`;
          if (fmtType(out.type) !== fmtType(n.type)) {
            fail(w.name, `type ${fmtType(out.type)}, expected ${fmtType(n.type)}\n${where()}`);
            continue;
          }
          for (let j = 0; j < BINDINGS; j++) {
            const types = bind(r, inputs);
            const vals = types.map((t) => values(r, t));
            const want = run(g, vals);
            const got = run(h, vals);
            const ok =
              "error" in want
                ? "error" in got
                : !("error" in got) && got.type === want.type && got.data.join() === want.data.join();
            if (!ok) {
              const binding = types.map((t, i) => `%${i} ${t.dtype}[${t.batch.join(",")}; ${t.base.join(",")}]`);
              fail(
                w.name,
                `with ${binding.join(", ")}: got ${show(got)}, expected ${show(want)}\n${where()}`.slice(0, 3000),
              );
              break;
            }
          }
        }
      }
    }
    const report = [...failures].map(([rule, list]) => `${rule}: ${list.length} failing nodes; first:\n${list[0]}`);
    expect(report.join("\n\n")).toBe("");
    // Every rule is exercised (the ones that fire rarely by construction at least a few times).
    const rare = [...fired].filter(([, c]) => c < 5).map(([name, c]) => `${name} ${c}`);
    expect(rare, `fired: ${[...fired].map(([n, c]) => `${n} ${c}`).join(", ")}`).toEqual([]);
  }, 120_000);
});
