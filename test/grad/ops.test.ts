/**
 * Derivative rules of the ops the random-graph generator does not draw (segment
 * ops, rebatch, batch squeeze/expand, prod, batch means, matmul's vector forms,
 * …), each checked by central finite differences of the reference interpreter
 * (float64) and by ⟨u, J·v⟩ = ⟨uᵀ·J, v⟩, on graphs built here.
 */
import { describe, expect, it } from "vitest";
import { makeGraph, Node } from "../../ir/graph.js";
import type { Value } from "../../ir/interpret.js";
import type { ConcreteType } from "../../ir/shapes.js";
import type { Attrs, Op } from "../../ir/ops.js";
import { RULES } from "../../ir/derivatives.js";
import { rng } from "../helpers/random-graph.js";
import { checkDerivatives, type Checked } from "./fd-helpers.js";

type In = { type: ConcreteType; data?: ArrayLike<number>; lo?: number; hi?: number };

/** Checks the derivatives of `build(inputs)` at random points in [lo, hi] (default [-2, 2]). */
function check(name: string, ins: readonly In[], build: (x: Node[]) => Node[]): number {
  const stats: Checked = { compared: 0 };
  for (let seed = 1; seed <= 5; seed++) {
    const r = rng(seed * 7919);
    const nodes = ins.map((s, i) => Node.make("input", [], { index: i }, s.type));
    const g = makeGraph(name, nodes, build(nodes));
    const xs: Value[] = ins.map((s) => {
      const n = [...s.type.batch, ...s.type.base].reduce((a, b) => a * b, 1);
      if (s.data !== undefined)
        return { type: s.type, data: s.type.dtype === "int32" ? Int32Array.from(s.data) : Float64Array.from(s.data) };
      const lo = s.lo ?? -2;
      const hi = s.hi ?? 2;
      return { type: s.type, data: Float64Array.from({ length: n }, () => lo + (hi - lo) * r()) };
    });
    checkDerivatives(g, xs, seed, stats);
  }
  return stats.compared;
}

const F = (batch: number[], base: number[]): ConcreteType => ({ dtype: "float64", batch, base });
const mk = (op: Op, ins: Node[], attrs: object = {}): Node => Node.make(op, ins, attrs as Attrs);
const OFFSETS: In = { type: { dtype: "int32", batch: [3], base: [] }, data: [0, 2, 5] };

describe("derivative rules by finite differences", () => {
  it("every op has a rule", () => {
    for (const r of Object.values(RULES)) {
      expect(typeof r.jvp).toBe("function");
      expect(typeof r.vjp).toBe("function");
    }
  });

  it("segment ops (jagged rows)", () => {
    const V: In = { type: F([5], [2]) };
    for (const op of ["sum", "mean", "max", "min"] as const) {
      expect(
        check(`segment_${op}`, [V, OFFSETS], ([v, o]) => [mk("segment_reduce", [mk("sin", [v!]), o!], { op })]),
      ).toBeGreaterThan(10);
    }
    expect(
      check("segment_expand", [{ type: F([2], [2]) }, OFFSETS, V], ([x, o, like]) => [
        mk("mul", [mk("segment_expand", [x!, o!, like!]), like!]),
      ]),
    ).toBeGreaterThan(20);
    expect(
      check("segment_pad", [V, OFFSETS], ([v, o]) => [
        mk("exp", [mk("segment_pad", [v!, o!], { maxN: 3, value: 0, left: false })]),
      ]),
    ).toBeGreaterThan(20);
    expect(
      check("segment_unpad", [{ type: F([2, 3], [2]) }, OFFSETS, V], ([p, o, like]) => [
        mk("mul", [mk("segment_unpad", [p!, o!, like!]), like!]),
      ]),
    ).toBeGreaterThan(20);
  });

  it("batch movement: rebatch, squeeze, unsqueeze, expand, reshape, slice, concat", () => {
    const X: In = { type: F([2, 3], [2]) };
    expect(
      check("rebatch", [X], ([x]) => [mk("sin", [mk("rebatch", [x!], { batchDim: 1, base: [3, 2] })])]),
    ).toBeGreaterThan(20);
    expect(
      check("rebatch-in", [{ type: F([2], [3]) }], ([x]) => [mk("rebatch", [x!], { batchDim: 2, base: [] })]),
    ).toBeGreaterThan(5);
    expect(
      check("squeeze", [{ type: F([1, 3], [2]) }], ([x]) => [
        mk("batch_unsqueeze", [mk("exp", [mk("batch_squeeze", [x!], { dim: 0 })])], { dim: 1 }),
      ]),
    ).toBeGreaterThan(5);
    expect(
      check("batch_expand", [{ type: F([1], [3]) }, { type: F([4], [3]) }], ([x, y]) => [
        mk("mul", [mk("batch_expand", [x!], { shape: [4] }), y!]),
      ]),
    ).toBeGreaterThan(20);
    expect(
      check("batch_reshape", [X], ([x]) => [mk("cos", [mk("batch_reshape", [x!], { shape: [6] })])]),
    ).toBeGreaterThan(20);
    expect(
      check("batch_slice/concat", [X], ([x]) => [
        mk("batch_concat", [mk("batch_slice", [x!], { axis: 1, start: 1, stop: -1, step: 1 }), x!], { axis: 1 }),
      ]),
    ).toBeGreaterThan(20);
  });

  it("batch slices with a step", () => {
    const X: In = { type: F([5], [2]) };
    for (const [start, stop] of [
      [0, -1],
      [1, 4],
      [1, -1],
    ] as const)
      expect(
        check("batch_slice2", [X], ([x]) => [mk("exp", [mk("batch_slice", [x!], { axis: 0, start, stop, step: 2 })])]),
      ).toBeGreaterThan(10);
  });

  it("reductions: prod, batch means, max/min over batch and base", () => {
    const X: In = { type: F([3, 2], [4]), lo: 0.5, hi: 2 };
    const red = (op: string, batchAxes: number[], baseAxes: number[], keep: boolean) =>
      check(op, [X], ([x]) => [mk(op as Op, [x!], { batchAxes, baseAxes, keep })]);
    expect(red("prod", [], [0], false)).toBeGreaterThan(10);
    expect(red("prod", [0], [], true)).toBeGreaterThan(10);
    // over several base axes, at points with exact zeros (the product is smooth there)
    const Z: In = { type: F([2], [3, 2]), data: [0, 1.5, -2, 0.5, 1, 3, 0, 0, 2, 1, -1, 0.25] };
    expect(
      check("prod0", [Z], ([x]) => [mk("prod", [x!], { batchAxes: [], baseAxes: [0, 1], keep: false })]),
    ).toBeGreaterThan(5);
    expect(
      check("prod1", [Z], ([x]) => [mk("prod", [x!], { batchAxes: [], baseAxes: [0], keep: true })]),
    ).toBeGreaterThan(5);
    expect(red("mean", [0, 1], [0], false)).toBeGreaterThan(3);
    expect(red("mean", [1], [], true)).toBeGreaterThan(10);
    expect(red("max", [0], [0], false)).toBeGreaterThan(3);
    expect(red("min", [], [0], true)).toBeGreaterThan(10);
    expect(red("sum", [0, 1], [], false)).toBeGreaterThan(10);
  });

  it("elementwise ops off the generator's list and matmul's vector forms", () => {
    const P: In = { type: F([3], [2]), lo: 0.2, hi: 2 };
    const U: In = { type: F([3], [2]), lo: -0.9, hi: 0.9 };
    for (const op of ["sigmoid", "rsqrt", "sqrt", "log", "tanh", "atan"] as const)
      expect(check(op, [P], ([x]) => [mk(op, [x!])])).toBeGreaterThan(20);
    for (const op of ["asin", "acos", "tan"] as const)
      expect(check(op, [U], ([x]) => [mk(op, [x!])])).toBeGreaterThan(20);
    for (const op of ["atan2", "pow", "div", "mod", "maximum", "minimum"] as const)
      expect(check(op, [P, { type: F([], [2]), lo: 0.3, hi: 3 }], ([x, y]) => [mk(op, [x!, y!])])).toBeGreaterThan(20);
    const where = check("where", [P, P], ([x, y]) => [
      mk("where", [mk("lt", [x!, y!]), mk("exp", [x!]), mk("mul", [x!, y!])]),
    ]);
    expect(where).toBeGreaterThan(20);
    const v3: In = { type: F([2], [3]) };
    const m3: In = { type: F([], [3, 3]) };
    const b3: In = { type: F([2], [2, 3, 3]) };
    expect(check("vv", [v3, v3], ([a, b]) => [mk("matmul", [a!, b!])])).toBeGreaterThan(1);
    expect(check("vm", [v3, m3], ([a, b]) => [mk("matmul", [a!, b!])])).toBeGreaterThan(20);
    expect(check("mv", [m3, v3], ([a, b]) => [mk("matmul", [a!, b!])])).toBeGreaterThan(20);
    expect(check("bmm", [b3, m3], ([a, b]) => [mk("matmul", [a!, b!])])).toBeGreaterThan(50);
    expect(
      check("expand/permute/slice", [{ type: F([2], [3, 1]) }], ([x]) => [
        mk("slice", [mk("permute", [mk("expand", [x!], { shape: [2, 3, 4] })], { perm: [2, 0, 1] })], {
          axis: 0,
          start: 1,
          stop: 4,
          step: 2,
        }),
      ]),
    ).toBeGreaterThan(20);
  });
});
