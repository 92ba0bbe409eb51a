/**
 * One small test per bug found by the random-graph fuzz (test/passes/fuzz.test.ts,
 * test/webgpu/graphs.test.ts), with expected values computed by hand from the
 * documented rules, eagerly and inside jit.
 */
import { describe, expect, it } from "vitest";
import { fromTypedArray, jit, tensor, type Tensor } from "../../src/index.js";
import { makeGraph, Node } from "../../ir/graph.js";
import { interpret } from "../../ir/interpret.js";
import { checkSignedZeroSums } from "../helpers/signed-zero-sums.js";

const both = (f: (x: Tensor) => Tensor) =>
  [
    ["eager", f],
    ["jit", jit(f)],
  ] as const;

describe("fuzz regressions (JS)", () => {
  it.each(both((x) => x.neg().abs()))("uint32 abs(neg(x)) wraps, abs is the identity (%s)", (_mode, f) => {
    // uint32 neg wraps to 2^32 - x; abs of a uint32 is itself. The simplifier's abs(neg x) -> abs(x) gave [1, 2].
    expect(Array.from(f(tensor([1, 2, 0], { dtype: "uint32" })).dataSync())).toEqual([4294967295, 4294967294, 0]);
  });

  it.each(both((x) => x.div(5e-324)))("float64 division by 5e-324 = 2^-1074 (1/c overflows) (%s)", (_mode, f) => {
    // -0 / c = -0; 1e-310 is the subnormal 20240225330731 · 2^-1074; 1 / c overflows to Infinity.
    // The simplifier turned x / c into x * Infinity: NaN for -0, Infinity for 1e-310.
    const got = Array.from(f(tensor([-0, 1e-310, 1], { dtype: "float64" })).dataSync());
    expect(got.map((v) => (Object.is(v, -0) ? "-0" : String(v)))).toEqual(["-0", "20240225330731", "Infinity"]);
  });

  it("a sum of -0s is -0, an empty sum +0 (NumPy), on every JS code path", () =>
    checkSignedZeroSums(async (t) => t.dataSync()));

  it("jit: the same rule", async () => {
    const f = jit((x: Tensor) => [x.sum(), x.batchSum()]);
    const [a, b] = f(fromTypedArray(new Float32Array(4).fill(-0), [2, 2], { batchDim: 1 })) as Tensor[];
    expect(Array.from(a!.dataSync(), (v) => Object.is(v, -0))).toEqual([true, true]);
    expect(Array.from(b!.dataSync(), (v) => Object.is(v, -0))).toEqual([true, true]);
  });

  it("the reference interpreter follows the same rule", () => {
    const sumOf = (data: number[]): number => {
      const x = Node.make("input", [], { index: 0 }, { dtype: "float64", batch: [], base: [data.length] });
      const g = makeGraph("s", [x], [Node.make("sum", [x], { batchAxes: [], baseAxes: [0], keep: false })]);
      return interpret(g, [
        { type: { dtype: "float64", batch: [], base: [data.length] }, data: Float64Array.from(data) },
      ])[0]!.data[0]!;
    };
    expect(Object.is(sumOf([-0, -0]), -0)).toBe(true);
    expect(Object.is(sumOf([-0, 0]), 0)).toBe(true);
    expect(Object.is(sumOf([]), 0)).toBe(true);
    const a = Node.make("input", [], { index: 0 }, { dtype: "float64", batch: [], base: [1, 2] });
    const b = Node.make("input", [], { index: 1 }, { dtype: "float64", batch: [], base: [2, 1] });
    const mm = makeGraph("m", [a, b], [Node.make("matmul", [a, b])]);
    const [out] = interpret(mm, [
      { type: { dtype: "float64", batch: [], base: [1, 2] }, data: Float64Array.of(-0, 1) },
      { type: { dtype: "float64", batch: [], base: [2, 1] }, data: Float64Array.of(1, -0) },
    ]);
    expect(Object.is(out!.data[0], -0)).toBe(true);
  });

  it("the interpreter's float32 accumulation (WGSL's) rounds every step; the default accumulates in float64", () => {
    const x = Node.make("input", [], { index: 0 }, { dtype: "float32", batch: [], base: [3] });
    const g = makeGraph("p", [x], [Node.make("prod", [x], { batchAxes: [], baseAxes: [0], keep: false })]);
    const inputs = [
      { type: { dtype: "float32" as const, batch: [], base: [3] }, data: Float32Array.of(2 ** 127, 4, 2 ** -100) },
    ];
    // 2^127 · 4 · 2^-100 = 2^29 in float64; in float32 the running product 2^129 overflows first.
    expect(interpret(g, inputs)[0]!.data[0]).toBe(536870912);
    expect(interpret(g, inputs, { accumulation: "float32" })[0]!.data[0]).toBe(Infinity);
  });
});
