/**
 * Every pass preserves meaning: on random graphs the reference interpreter gives
 * the same bits (NaN, ±Inf and signed zero included) before and after each
 * pass; plus golden dumps after each pass and the rule driver's step limit.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IRError } from "../../ir/errors.js";
import { makeGraph, Node } from "../../ir/graph.js";
import { interpret } from "../../ir/interpret.js";
import { printGraph } from "../../ir/print.js";
import { verifyGraph } from "../../ir/verify.js";
import { runRules } from "../../passes/driver.js";
import { GRAPH_PASSES, runPipeline } from "../../passes/pipeline.js";
import { fromTypedArray, jit, Tensor } from "../../src/index.js";
import { randomCase, randomInputs, seedArb } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";

function sameBits(a: ArrayLike<number>, b: ArrayLike<number>): string | undefined {
  if (a.length !== b.length) return `length ${a.length} vs ${b.length}`;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return `element ${i}: ${a[i]} vs ${b[i]}`;
  return undefined;
}

describe("passes preserve meaning", () => {
  for (const family of ["float64", "float32", "int32"] as const) {
    it(`bit for bit on random ${family} graphs, after every pass`, () => {
      fc.assert(
        fc.property(seedArb, (seed) => {
          const c = randomCase(seed, family);
          const inputs = randomInputs(c);
          const expected = interpret(c.graph, inputs);
          let g = c.graph;
          for (const p of GRAPH_PASSES) {
            g = p.run(g);
            verifyGraph(g, p.name);
            const got = interpret(g, inputs);
            got.forEach((v, i) => {
              expect(v.type).toEqual(expected[i]!.type);
              const err = sameBits(v.data, expected[i]!.data);
              if (err)
                throw new Error(
                  `seed ${seed}, after ${p.name}: output ${i} ${err}\n${printGraph(c.graph)}\n--- after:\n${printGraph(g)}`,
                );
            });
          }
        }),
        { numRuns: 200, seed: FC_SEED },
      );
    });
  }
});

describe("golden dumps after each pass", () => {
  it("normalises a chain full of identities", () => {
    const f = jit((x: Tensor) => x.mul(1).sub(0).div(4).neg().neg().add(x.mul(-1)).cast("float64").cast("float32"), {
      name: "ids",
    });
    f(fromTypedArray(new Float32Array(3), [3], { batchDim: 1 }));
    expect(f.dump()).toMatchInlineSnapshot(`
      "func @ids(%x0: f32[b0; ]) -> (f32[b0; ]) {
        %0 = const {dtype=float32, value=1} : f32[; ]
        %1 = mul %x0, %0 : f32[b0; ]
        %2 = const {dtype=float32, value=0} : f32[; ]
        %3 = sub %1, %2 : f32[b0; ]
        %4 = const {dtype=float32, value=4} : f32[; ]
        %5 = div %3, %4 : f32[b0; ]
        %6 = neg %5 : f32[b0; ]
        %7 = neg %6 : f32[b0; ]
        %8 = const {dtype=float32, value=-1} : f32[; ]
        %9 = mul %x0, %8 : f32[b0; ]
        %10 = add %7, %9 : f32[b0; ]
        %11 = cast %10 {dtype=float64} : f64[b0; ]
        %12 = cast %11 {dtype=float32} : f32[b0; ]
        return %12
      }"
    `);
    // canonicalize has nothing to rewrite here: the same text as the input above.
    expect(f.dump({ after: "canonicalize" })).toBe(f.dump());
    expect(f.dump({ after: "simplify" })).toMatchInlineSnapshot(`
      "func @ids(%x0: f32[b0; ]) -> (f32[b0; ]) {
        %0 = const {dtype=float32, value=0.25} : f32[; ]
        %1 = mul %x0, %0 : f32[b0; ]
        %2 = sub %1, %x0 : f32[b0; ]
        return %2
      }"
    `);
  });

  it("keeps one exp for two uses (hash-consing is CSE)", () => {
    const f = jit((x: Tensor) => x.exp().add(Math.PI).sub(x.exp().mul(2).sub(1)), { name: "fold" });
    f(fromTypedArray(new Float64Array(2), [2], { batchDim: 1 }));
    expect(f.dump({ after: "cse" })).toMatchInlineSnapshot(`
      "func @fold(%x0: f64[b0; ]) -> (f64[b0; ]) {
        %0 = exp %x0 : f64[b0; ]
        %1 = const {dtype=float64, value=3.141592653589793} : f64[; ]
        %2 = add %0, %1 : f64[b0; ]
        %3 = const {dtype=float64, value=2} : f64[; ]
        %4 = mul %0, %3 : f64[b0; ]
        %5 = const {dtype=float64, value=1} : f64[; ]
        %6 = sub %4, %5 : f64[b0; ]
        %7 = sub %2, %6 : f64[b0; ]
        return %7
      }"
    `);
  });

  it("lowers matmul and canonicalizes the reshapes it makes", () => {
    const f = jit((a: Tensor, b: Tensor) => a.matmul(b), { name: "mm" });
    f(fromTypedArray(new Float32Array(6), [1, 2, 3], { batchDim: 1 }), fromTypedArray(new Float32Array(3), [3]));
    expect(f.dump({ after: "canonicalize" })).toMatchInlineSnapshot(`
      "func @mm(%x0: f32[b0; 2,3], %x1: f32[; 3]) -> (f32[b0; 2]) {
        %0 = reshape %x0 {shape=[2,3,1]} : f32[b0; 2,3,1]
        %1 = reshape %x1 {shape=[1,3,1]} : f32[; 1,3,1]
        %2 = mul %0, %1 : f32[b0; 2,3,1]
        %3 = sum %2 {baseAxes=[1], batchAxes=[], keep=false} : f32[b0; 2,1]
        %4 = reshape %3 {shape=[2]} : f32[b0; 2]
        return %4
      }"
    `);
  });
});

describe("the rule driver", () => {
  it("stops at its step limit and names the rule that looped", () => {
    const x = Node.make("input", [], { index: 0 }, { dtype: "float32", batch: ["b0"], base: [] });
    const g = makeGraph("loop", [x], [Node.make("neg", [x])]);
    // neg(x) -> neg(neg(neg(x))) never settles.
    const grow = {
      name: "grow",
      apply: (n: Node) =>
        n.op === "neg" && n.inputs[0]!.op !== "neg" ? Node.make("neg", [Node.make("neg", [n])]) : undefined,
    };
    expect(() => runRules(g, [grow], "test", 50)).toThrow(IRError);
    expect(() => runRules(g, [grow], "test", 50)).toThrow('rule "grow"');
  });

  it("runs the whole pipeline with the verifier at both ends", () => {
    const x = Node.make("input", [], { index: 0 }, { dtype: "float32", batch: ["b0"], base: [3] });
    const r = runPipeline(makeGraph("p", [x], [Node.make("exp", [x])]));
    expect([...r.stages.keys()]).toEqual([
      "input",
      "narrow",
      "lower",
      "canonicalize",
      "fold",
      "simplify",
      "cse",
      "dce",
    ]);
  });
});
