/**
 * Rewrites that drop an operand keep the run-time broadcast it made (issue 26, item 1).
 * A batch dim is a symbol in every traced graph (eager reads too), and an operand whose
 * dim is 1 at run time broadcasts against another's: `where(c, x, x)` with `c (3;)` and
 * `x (1;) = [4]` is `(3;) [4, 4, 4]`. The simplifier's `where-same` replaced it by `x`,
 * so eager gave a `(3;)` tensor holding one value (`[4, null, null]`, `batchSum()` NaN)
 * and jit gave `(1;)`. The same for `where(c, x.cast("float64"), x)` (the promotion
 * makes both branches one cast node), and for `fold-where` (a constant condition picked
 * one branch and dropped the other's broadcast). Expected values by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeGraph, Node } from "../../ir/graph.js";
import { interpret } from "../../ir/interpret.js";
import { initWasm, jit, loadBundle, setBackend, tensor, where, type Tensor } from "../../src/index.js";
import { CANONICALIZE_RULES } from "../../passes/canonicalize.js";
import type { Rule } from "../../passes/driver.js";
import { SIMPLIFY_RULES } from "../../passes/simplify.js";
import { importBundle } from "../helpers/bundle.js";
import { compileJs, runJs } from "../helpers/run.js";

const c = (): Tensor => tensor([true, false, true], { batchDim: 1 });
const x = (): Tensor => tensor([4], { batchDim: 1 });
const view = (t: Tensor): unknown => ({ batch: t.batchShape, data: Array.from(t.dataSync()) });

const CASES: readonly [string, (c: Tensor, x: Tensor) => Tensor, string][] = [
  ["where(c, x, x)", (c, x) => where(c, x, x), "float32"],
  ["where(c, x.cast(float64), x)", (c, x) => where(c, x.cast("float64"), x), "float64"],
  ["where(c, x, x).add(1)", (c, x) => where(c, x, x).add(1), "float32"],
  ["x.maximum(x) under where(c, ·, ·)", (c, x) => where(c, x.maximum(x), x.minimum(x)), "float32"],
];

function checks(backend: "js" | "wasm"): void {
  for (const [name, f, dtype] of CASES) {
    const want = name.endsWith(".add(1)") ? [5, 5, 5] : [4, 4, 4];
    it(`${name}: eager is (3;) ${JSON.stringify(want)}`, () => {
      const y = f(c(), x());
      expect(y.dtype).toBe(dtype);
      expect(view(y)).toEqual({ batch: [3], data: want });
      expect(y.batchSum().dataSync()[0]).toBe(3 * want[0]!);
      if (backend === "js") expect(y.toArraySync()).toEqual(want);
    });
    it(`${name}: jit is (3;) ${JSON.stringify(want)}, and (1;) when c is (1;)`, () => {
      const g = jit(f);
      expect(view(g(c(), x()))).toEqual({ batch: [3], data: want });
      expect(view(g(tensor([false], { batchDim: 1 }), x()))).toEqual({ batch: [1], data: want.slice(0, 1) });
      // x broadcasting c the other way round: (3;) too.
      expect(view(g(c(), tensor([4, 4, 4], { batchDim: 1 })))).toEqual({ batch: [3], data: want });
    });
  }
  it("a bundle of where(c, x, x) gives (3;) [4, 4, 4]", async () => {
    const g = jit((c: Tensor, x: Tensor) => where(c, x, x));
    g(c(), x());
    const b = await loadBundle(await importBundle(g.bundle()));
    expect(view(b(c(), x()) as Tensor)).toEqual({ batch: [3], data: [4, 4, 4] });
  });
}

describe("JS: a rewrite keeps the run-time broadcast of the operand it drops", () => checks("js"));

describe("wasm: a rewrite keeps the run-time broadcast of the operand it drops", () => {
  beforeAll(async () => {
    await initWasm({ threads: 1 });
  });
  afterAll(() => setBackend("js"));
  checks("wasm");
});

describe("fold-where: a constant condition keeps the other branch's broadcast", () => {
  it("where(true, x (b0;), y (b0;)) with x (1;), y (3;) is (3;), through the pass pipeline", () => {
    const xi = Node.make("input", [], { index: 0 }, { dtype: "float32", batch: ["b0"], base: [] });
    const yi = Node.make("input", [], { index: 1 }, { dtype: "float32", batch: ["b0"], base: [] });
    const t = Node.make("const", [], { dtype: "bool", value: 1 });
    const g = makeGraph("w", [xi, yi], [Node.make("where", [t, xi, yi])]);
    const inputs = [
      { type: { dtype: "float32" as const, batch: [1], base: [] }, data: Float32Array.from([7]) },
      { type: { dtype: "float32" as const, batch: [3], base: [] }, data: Float32Array.from([1, 2, 3]) },
    ];
    const [want] = interpret(g, inputs);
    expect({ batch: want!.type.batch, data: Array.from(want!.data) }).toEqual({ batch: [3], data: [7, 7, 7] });
    const [got] = runJs(compileJs(g), inputs);
    expect({ batch: got!.type.batch, data: Array.from(got!.data) }).toEqual({ batch: [3], data: [7, 7, 7] });
  });
});

describe("rules the rule audit found wrong besides where-same and fold-where", () => {
  const rule = (name: string): Rule => [...CANONICALIZE_RULES, ...SIMPLIFY_RULES].find((r) => r.name === name)!;
  const input = (dtype: "uint16" | "uint32" | "bool", batch: string[], base: number[]): Node =>
    Node.make("input", [], { index: 0 }, { dtype, batch, base });

  it("rebatch-rebatch keeps the inner split's run-time check (b1 must be 2) and its type", () => {
    // (b1; 2,3) -> (; 2,2,3) checks b1 = 2 at run time, then -> (2; 2,3).
    const x = input("bool", ["b1"], [2, 3]);
    const n = Node.make("rebatch", [Node.make("rebatch", [x], { batchDim: 0, base: [2, 2, 3] })], {
      batchDim: 1,
      base: [2, 3],
    });
    expect(rule("rebatch-rebatch").apply(n)).toBeUndefined();
    // Moving base dims into the batch and back checks nothing: that pair still folds.
    const m = Node.make("rebatch", [Node.make("rebatch", [x], { batchDim: 2, base: [3] })], {
      batchDim: 1,
      base: [2, 3],
    });
    expect(rule("rebatch-rebatch").apply(m)?.inputs[0]).toBe(x);
  });

  it("batch-reshape-reshape keeps the inner reshape's divisibility check ((-1,3) then (1,-1))", () => {
    const x = input("uint32", ["b1"], [2]);
    const inner = Node.make("batch_reshape", [x], { shape: [-1, 3] });
    expect(
      rule("batch-reshape-reshape").apply(Node.make("batch_reshape", [inner], { shape: [1, -1] })),
    ).toBeUndefined();
    // (-1) then (-1, 1): nothing to check, same type: it folds.
    const flat = Node.make("batch_reshape", [x], { shape: [-1] });
    expect(rule("batch-reshape-reshape").apply(Node.make("batch_reshape", [flat], { shape: [-1, 1] }))?.inputs[0]).toBe(
      x,
    );
    // A rejected binding: b1 = 2 is not a multiple of 3, the rewritten graph must refuse it too.
    const g = makeGraph("r", [x], [Node.make("batch_reshape", [inner], { shape: [1, -1] })]);
    expect(() =>
      interpret(g, [{ type: { dtype: "uint32", batch: [2], base: [2] }, data: new Uint32Array(4) }]),
    ).toThrow(/batch_reshape/);
  });

  it("abs-abs leaves abs(neg(x)) alone on every unsigned dtype (uint16 abs(neg(2)) is 65534)", () => {
    for (const dtype of ["uint16", "uint32"] as const) {
      const n = Node.make("abs", [Node.make("neg", [input(dtype, [], [3])])]);
      expect(rule("abs-abs").apply(n), dtype).toBeUndefined();
    }
  });
});
