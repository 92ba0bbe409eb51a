/**
 * Regression tests for input validation (issue 12, cases 5, 7 and 8): reductions
 * over axes given in any order, what nested data and typed arrays become, and the
 * sizes and element counts that are refused. Expected values are computed by hand
 * from the documented rules (NumPy semantics), written literally here.
 */
import { describe, expect, it } from "vitest";
import {
  arange,
  DTypeError,
  fromTypedArray,
  jit,
  ones,
  parseGraph,
  printGraph,
  ShapeError,
  tensor,
  zeros,
  type Tensor,
} from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { onWebGPU } from "../helpers/on-webgpu.js";

const probe = await probeWebGPUForFile();

/** arange(24) as a (;2,3,4) base: x[i][j][k] = 12i + 4j + k. */
const cube = (): Tensor => arange(24).reshape([2, 3, 4]);

describe("reductions over axes in any order (case 5)", () => {
  it("sums a matrix over [1, 0] as over [0, 1]", () => {
    const m23 = [
      [0, 1, 2],
      [3, 4, 5],
    ];
    const m32 = [
      [0, 1],
      [2, 3],
      [4, 5],
    ];
    const m32From1 = [
      [1, 2],
      [3, 4],
      [5, 6],
    ];
    const cases: readonly [number[][], "sum" | "prod", number[], number][] = [
      // 0+1+2+3+4+5 = 15, whatever the order and the shape.
      [m23, "sum", [1, 0], 15],
      [m32, "sum", [1, 0], 15],
      [m32, "sum", [-1, 0], 15],
      [m32, "prod", [1, 0], 0],
      [m32From1, "prod", [1, -2], 720],
    ];
    for (const [data, op, axes, want] of cases) expect(tensor(data)[op](axes).itemSync(), `${op} ${axes}`).toBe(want);
  });

  it("reduces two of three base axes given backwards, with and without keepdim", () => {
    // Σ_i Σ_k (12i + 4j + k) = 32j + 60; max is 12 + 4j + 3; min is 4j.
    expect(cube().sum([2, 0]).toArraySync()).toEqual([60, 92, 124]);
    expect(cube().sum([-1, -3]).toArraySync()).toEqual([60, 92, 124]);
    expect(cube().sum([2, 0], { keepdim: true }).toArraySync()).toEqual([[[60], [92], [124]]]);
    expect(cube().max([2, 0]).toArraySync()).toEqual([15, 19, 23]);
    expect(cube().min([2, 0]).toArraySync()).toEqual([0, 4, 8]);
    expect(cube().mean([2, 0]).toArraySync()).toEqual([7.5, 11.5, 15.5]);
    // Over all three axes in a scrambled order: 0 + … + 23 = 276.
    expect(cube().sum([1, 2, 0]).itemSync()).toBe(276);
  });

  it("reduces batch axes given backwards", () => {
    const b = tensor(
      [
        [0, 1, 2],
        [3, 4, 5],
      ],
      { batchDim: 2 },
    ); // (2,3;)
    expect(b.batchSum([1, 0]).itemSync()).toBe(15);
    expect(b.batchMax([-1, 0]).itemSync()).toBe(5);
    expect(b.batchSum([-1]).toArraySync()).toEqual([3, 12]);
    expect(b.reduce("sum", { batchAxes: [1, 0], baseAxes: [] }).itemSync()).toBe(15);
  });

  it("gives the same results inside jit", () => {
    const f = jit((x: Tensor) => [x.sum([2, 0]), x.max([1, 0], { keepdim: true })]);
    const [s, mx] = f(cube().rebatch(0).batchUnsqueeze(0)) as Tensor[];
    expect(s!.toArraySync()).toEqual([[60, 92, 124]]);
    // max over i, j of 12i + 4j + k = 20 + k.
    expect(mx!.toArraySync()).toEqual([[[[20, 21, 22, 23]]]]);
  });

  it("refuses a repeated axis, however it is spelled", () => {
    expect(() => cube().sum([0, -3])).toThrow(ShapeError);
    expect(() => cube().sum([0, -3])).toThrow("sum: base axis 0 appears twice in (0,-3) for x (;2,3,4)");
  });
});

describe("what input data becomes (case 7)", () => {
  it("takes numbers and booleans only; booleans alone give bool, mixed give float32", () => {
    expect(tensor([true, false]).dtype).toBe("bool");
    expect(tensor([true, 2]).dtype).toBe("float32");
    expect(tensor([true, 2]).toArraySync()).toEqual([1, 2]);
    expect(tensor([[true], [false]]).toArraySync()).toEqual([[true], [false]]);
    expect(tensor([]).toString()).toBe("(;0)");
    expect(tensor([]).dtype).toBe("float32");
    expect(tensor([[], []]).toString()).toBe("(;2,0)");
    // Explicit dtypes: NaN and infinities are float values, fractions truncate into integers.
    expect(tensor([NaN, -Infinity]).toArraySync()).toEqual([NaN, -Infinity]);
    expect(tensor([1.9, -1.9], { dtype: "int32" }).toArraySync()).toEqual([1, -1]);
    expect(tensor([0, 2, -1], { dtype: "bool" }).toArraySync()).toEqual([false, true, true]);
    expect(() => tensor([1, "a" as never])).toThrow('tensor: data[1] is a string ("a")');
  });

  it("maps the nine typed array types to their dtypes and refuses the others", () => {
    expect(fromTypedArray(new Float64Array([1.5]), [1]).dtype).toBe("float64");
    expect(fromTypedArray(new Int32Array([-1]), [1]).dtype).toBe("int32");
    expect(fromTypedArray(new Uint32Array([4294967295]), [1]).toArraySync()).toEqual([4294967295]);
    expect(fromTypedArray(new Uint8Array([0, 1, 1]), [3]).dtype).toBe("uint8");
    expect(fromTypedArray(new Uint8Array([0, 1, 1]), [3], { dtype: "bool" }).toArraySync()).toEqual([
      false,
      true,
      true,
    ]);
    expect(fromTypedArray(new Int8Array([1, -2, 3]), [3]).dtype).toBe("int8");
    expect(() => fromTypedArray(new Uint8ClampedArray([1, 2, 3]) as never, [3])).toThrow(DTypeError);
    expect(() => fromTypedArray(new Uint8ClampedArray([1, 2, 3]) as never, [3], { dtype: "int32" })).toThrow(
      "fromTypedArray: data is a Uint8ClampedArray",
    );
  });

  it("reads a Uint8Array as uint8, or as bool (x != 0) when asked; a dtype converts as cast does", () => {
    const u8 = new Uint8Array([0, 2, 255]);
    expect(fromTypedArray(u8, [3]).toArraySync()).toEqual([0, 2, 255]);
    expect(fromTypedArray(u8, [3], { copy: false }).dataSync({ copy: false })).toBe(u8);
    expect(fromTypedArray(u8, [3], { dtype: "int32" }).toArraySync()).toEqual([0, 2, 255]);
    const b = fromTypedArray(u8, [3], { dtype: "bool" });
    expect(b.toArraySync()).toEqual([false, true, true]);
    expect(b.cast("int32").toArraySync()).toEqual([0, 1, 1]);
    expect(Array.from(b.dataSync())).toEqual([0, 1, 1]);
    // To bool is x != 0 (NaN is true, as in NumPy).
    const f = fromTypedArray(new Float32Array([0, -0, 0.5, NaN, -3]), [5], { dtype: "bool" });
    expect(f.toArraySync()).toEqual([false, false, true, true, true]);
    expect(Array.from(u8)).toEqual([0, 2, 255]); // the caller's array is not touched
  });
});

describe("sizes, bounds and element counts (case 8)", () => {
  it("keeps empty and clamped shapes working", () => {
    expect(zeros([0], [3]).toString()).toBe("(0; 3)");
    expect(arange(0).toString()).toBe("(;0)");
    expect(arange(3, 0).toArraySync()).toEqual([]);
    expect(tensor([1, 2, 3]).slice(0, 5, 10).toString()).toBe("(;0)");
    expect(tensor([1, 2, 3]).slice(0, -2).toArraySync()).toEqual([2, 3]);
    expect(
      tensor([[1], [2]], { batchDim: 1 })
        .expand([3])
        .toArraySync(),
    ).toEqual([
      [1, 1, 1],
      [2, 2, 2],
    ]);
    expect(
      tensor([[1], [2]], { batchDim: 1 })
        .expand([2, -1])
        .toString(),
    ).toBe("(2; 2,1)");
    expect(ones([1], [2]).batchExpand([3, -1]).toString()).toBe("(3,1; 2)");
  });

  it("refuses NaN, fractions and negative sizes where they are given", () => {
    expect(() => arange(0, NaN)).toThrow("arange: stop must be a finite number, got NaN");
    expect(() => tensor([1, 2, 3]).slice(0, NaN)).toThrow("slice: start must be an integer, got NaN for x (;3)");
    expect(() => tensor([1, 2, 3]).slice(0, 0.5)).toThrow("slice: start must be an integer, got 0.5 for x (;3)");
    expect(() => ones([2], []).batchExpand([NaN])).toThrow(
      "batchExpand: shape (NaN) has an invalid size NaN at index 0",
    );
    expect(() => tensor([1, 2, 3]).expand([-5])).toThrow("expand: shape (-5) has an invalid size -5 at index 0");
  });

  it("refuses more than 2^31 - 1 elements when the tensor is made, eagerly and at a jit call", () => {
    expect(() => zeros([2 ** 40], [3])).toThrow(
      "zeros: the result (1099511627776; 3) would have 3298534883328 elements, more than the limit 2147483647",
    );
    const a = zeros([2 ** 16], [1]);
    expect(a.add(zeros([], [2 ** 14])).toString()).toBe("(65536; 16384)"); // 2^30 elements, lazily: fine
    // 2^31 elements are one too many.
    expect(() => a.add(zeros([], [2 ** 15]))).toThrow("add: the result (65536; 32768) would have 2147483648 elements");
    const f = jit((x: Tensor, y: Tensor) => x.add(y));
    expect(() => f(zeros([2 ** 16], [1]), zeros([], [2 ** 16]))).toThrow(ShapeError);
    expect(() => f(zeros([2 ** 16], [1]), zeros([], [2 ** 16]))).toThrow(
      "add: the result (65536; 65536) would have 4294967296 elements",
    );
    expect(f(zeros([2], [1]), zeros([], [3])).toString()).toBe("(2; 3)");
  });
});

describe("IR text from jit", () => {
  it("names a trace after its function even when the function name is not an IR name", () => {
    function g(x: Tensor): Tensor {
      return x.mul(2);
    }
    const f = jit(g.bind(null)); // named "bound g"
    f(zeros([2], [3]));
    expect(f.dump().split("\n")[0]).toBe("func @bound_g(%x0: f32[b0; 3]) -> (f32[b0; 3]) {");
    expect(printGraph(parseGraph(f.dump()))).toBe(f.dump());
  });
});

describeWebGPU(probe, "input data on WebGPU", (gpu) => {
  it("a Uint8Array given as bool holds 0/1, so casts agree with the JS backend", () =>
    onWebGPU(gpu, async () => {
      const b = fromTypedArray(new Uint8Array([0, 2, 255, 1]), [4], { dtype: "bool" });
      expect(Array.from(await b.cast("int32").data())).toEqual([0, 1, 1, 1]);
      // Without a dtype a Uint8Array is uint8 (widened to one i32 per element on the device).
      expect(Array.from(await fromTypedArray(new Uint8Array([0, 2, 255]), [3]).data())).toEqual([0, 2, 255]);
      expect(
        Array.from(
          await tensor([
            [0, 1, 2],
            [3, 4, 5],
          ])
            .sum([1, 0])
            .data(),
        ),
      ).toEqual([15]);
    }));
});
