/** The IR text form: golden dumps, and print -> parse -> print is the identity. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IRError } from "../../ir/errors.js";
import { makeGraph, Node } from "../../ir/graph.js";
import { parseGraph } from "../../ir/parse.js";
import { printGraph } from "../../ir/print.js";
import { verifyGraph } from "../../ir/verify.js";
import { jit, Tensor } from "../../src/index.js";
import { fromTypedArray } from "../../src/index.js";
import { randomCase, seedArb } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";

const pts = (b: number) => fromTypedArray(new Float32Array(b * 4 * 3), [b, 4, 3], { batchDim: 1 });

describe("golden IR dumps", () => {
  it("centring a batch of point clouds", () => {
    const f = jit((x: Tensor) => x.sub(x.mean(0, { keepdim: true })), { name: "centre" });
    f(pts(2));
    expect(f.dump()).toMatchInlineSnapshot(`
      "func @centre(%x0: f32[b0; 4,3]) -> (f32[b0; 4,3]) {
        %0 = mean %x0 {baseAxes=[0], batchAxes=[], keep=true} : f32[b0; 1,3]
        %1 = sub %x0, %0 : f32[b0; 4,3]
        return %1
      }"
    `);
  });

  it("the fused chain with weak scalars", () => {
    const f = jit((x: Tensor) => x.mul(x).neg().exp().mul(x.mul(3).sin()).add(x.mul(0.5)).sub(x.tanh()), {
      name: "chain",
    });
    f(fromTypedArray(new Float32Array(5), [5], { batchDim: 1 }));
    expect(f.dump()).toMatchInlineSnapshot(`
      "func @chain(%x0: f32[b0; ]) -> (f32[b0; ]) {
        %0 = mul %x0, %x0 : f32[b0; ]
        %1 = neg %0 : f32[b0; ]
        %2 = exp %1 : f32[b0; ]
        %3 = const {dtype=float32, value=3} : f32[; ]
        %4 = mul %x0, %3 : f32[b0; ]
        %5 = sin %4 : f32[b0; ]
        %6 = mul %2, %5 : f32[b0; ]
        %7 = const {dtype=float32, value=0.5} : f32[; ]
        %8 = mul %x0, %7 : f32[b0; ]
        %9 = add %6, %8 : f32[b0; ]
        %10 = tanh %x0 : f32[b0; ]
        %11 = sub %9, %10 : f32[b0; ]
        return %11
      }"
    `);
  });

  it("two inputs of different batch rank, a batch reduction and a cast", () => {
    const f = jit((a: Tensor, b: Tensor) => a.add(b).batchSum(0).gt(0).cast("int32"), { name: "mixed" });
    f(
      fromTypedArray(new Float32Array(2 * 3 * 2), [2, 3, 2], { batchDim: 2 }),
      fromTypedArray(new Float32Array(3 * 2), [3, 2], { batchDim: 1 }),
    );
    expect(f.dump()).toMatchInlineSnapshot(`
      "func @mixed(%x0: f32[b0,b1; 2], %x1: f32[b1; 2]) -> (i32[b1; 2]) {
        %0 = add %x0, %x1 : f32[b0,b1; 2]
        %1 = sum %0 {baseAxes=[], batchAxes=[0], keep=false} : f32[b1; 2]
        %2 = const {dtype=float32, value=0} : f32[; ]
        %3 = gt %1, %2 : bool[b1; 2]
        %4 = cast %3 {dtype=int32} : i32[b1; 2]
        return %4
      }"
    `);
  });

  it("matmul before and after lowering", () => {
    const f = jit((a: Tensor, b: Tensor) => a.matmul(b), { name: "mm" });
    f(fromTypedArray(new Float32Array(2 * 6), [2, 2, 3], { batchDim: 1 }), fromTypedArray(new Float32Array(3), [3]));
    expect(f.dump()).toMatchInlineSnapshot(`
      "func @mm(%x0: f32[b0; 2,3], %x1: f32[; 3]) -> (f32[b0; 2]) {
        %0 = matmul %x0, %x1 : f32[b0; 2]
        return %0
      }"
    `);
    expect(f.dump({ after: "lower" })).toMatchInlineSnapshot(`
      "func @mm(%x0: f32[b0; 2,3], %x1: f32[; 3]) -> (f32[b0; 2]) {
        %0 = reshape %x0 {shape=[2,3,1]} : f32[b0; 2,3,1]
        %1 = reshape %x1 {shape=[3,1]} : f32[; 3,1]
        %2 = reshape %1 {shape=[1,3,1]} : f32[; 1,3,1]
        %3 = mul %0, %2 : f32[b0; 2,3,1]
        %4 = sum %3 {baseAxes=[1], batchAxes=[], keep=false} : f32[b0; 2,1]
        %5 = reshape %4 {shape=[2]} : f32[b0; 2]
        return %5
      }"
    `);
  });
});

describe("print -> parse -> print", () => {
  it("is the identity on random graphs of every family", () => {
    fc.assert(
      fc.property(seedArb, fc.constantFrom("float64", "float32", "int32" as const), (seed, family) => {
        const { graph } = randomCase(seed, family);
        const text = printGraph(graph);
        const back = parseGraph(text);
        verifyGraph(back);
        expect(printGraph(back)).toBe(text);
        // Hash-consing: parsing the same text gives the very same output nodes.
        expect(back.outputs).toEqual(graph.outputs);
      }),
      { numRuns: 300, seed: FC_SEED },
    );
  });

  it("keeps special constants exactly", () => {
    const x = Node.make("input", [], { index: 0 }, { dtype: "float64", batch: ["b0"], base: [2] });
    const vals = [NaN, Infinity, -Infinity, -0, 1e-300, 0.1];
    const outs = vals.map((v) => Node.make("add", [x, Node.make("const", [], { dtype: "float64", value: v })]));
    const g = makeGraph("special", [x], outs, ["x"]);
    const back = parseGraph(printGraph(g));
    back.outputs.forEach((o, i) => expect(Object.is(o.inputs[1]!.attrs.value, vals[i])).toBe(true));
  });

  it("rejects malformed text with the line number", () => {
    const bad = "func @f(%x: f32[b0; 3]) -> (f32[b0; 3]) {\n  %0 = frobnicate %x : f32[b0; 3]\n  return %0\n}";
    expect(() => parseGraph(bad)).toThrow(IRError);
    expect(() => parseGraph(bad)).toThrow("line 2: unknown op frobnicate");
    const wrongType = "func @f(%x: f32[b0; 3]) -> (f32[b0; 3]) {\n  %0 = exp %x : f32[b0; 4]\n  return %0\n}";
    expect(() => parseGraph(wrongType)).toThrow("line 2: exp: declared type f32[b0; 4] but the op gives f32[b0; 3]");
  });
});

describe("hash-consing", () => {
  it("gives the same node for the same structure", () => {
    const x = Node.make("input", [], { index: 0 }, { dtype: "float32", batch: ["b0"], base: [3] });
    const a = Node.make("exp", [x]);
    const b = Node.make("exp", [x]);
    expect(a).toBe(b);
    expect(Node.make("add", [a, b])).toBe(Node.make("add", [b, a === b ? a : b]));
    expect(Node.make("neg", [a])).not.toBe(Node.make("abs", [a]));
  });
});
