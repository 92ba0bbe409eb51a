/**
 * Boolean-mask selection and nonzero (NumPy's x[mask] and argwhere, PyTorch's
 * nonzero, tensordict's td[mask]); expected values written by hand.
 */
import { describe, expect, it } from "vitest";
import {
  BackendError,
  DTypeError,
  NonTensorStack,
  ShapeError,
  TensorDict,
  TraceError,
  arange,
  booleanMask,
  booleanMaskAsync,
  jit,
  nonzero,
  nonzeroAsync,
  tensor,
  zeros,
  type Tensor,
} from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { onWebGPU } from "../helpers/on-webgpu.js";

const X = () => arange(24).reshape([4, 2, 3]).rebatch(2); // (4,2; 3), values 0..23

describe("booleanMask", () => {
  it("a mask over the first batch dim keeps the rest: (4,2; 3) with (4;) gives (n,2; 3)", () => {
    const m = tensor([true, false, false, true], { batchDim: 1 });
    const y = booleanMask(X(), m);
    expect(y.toString()).toBe("(2,2; 3)");
    expect(Array.from(y.dataSync())).toEqual([0, 1, 2, 3, 4, 5, 18, 19, 20, 21, 22, 23]);
  });

  it("a mask over every batch dim and the base gives (n;); special values; a non-bool mask is x != 0", () => {
    const x = tensor([NaN, -0, 0, Infinity, -Infinity, 2], { batchDim: 1 });
    // NaN != 0 is true, -0 != 0 is false.
    expect(Array.from(booleanMask(x, x).dataSync())).toEqual([NaN, Infinity, -Infinity, 2]);
    const full = booleanMask(X(), X().gt(20));
    expect(full.toString()).toBe("(3;)");
    expect(Array.from(full.dataSync())).toEqual([21, 22, 23]);
    // (4,2;) mask over both batch dims: rows [b, i] with b + i odd.
    const m = tensor(
      [
        [false, true],
        [true, false],
        [false, false],
        [false, false],
      ],
      { batchDim: 2 },
    );
    expect(booleanMask(X(), m).toArraySync()).toEqual([
      [3, 4, 5],
      [6, 7, 8],
    ]);
  });

  it("an all-false mask and empty dims give a zero-length batch dim", () => {
    expect(booleanMask(X(), zeros([4], [], { dtype: "bool" })).toString()).toBe("(0,2; 3)");
    expect(booleanMask(zeros([0], [2]), zeros([0], [], { dtype: "bool" })).toString()).toBe("(0; 2)");
  });

  it("typed errors: shapes, types; inside jit a TraceError that says why", () => {
    expect(() => booleanMask(X(), tensor([true, false], { batchDim: 1 }))).toThrow(ShapeError);
    expect(() => booleanMask(X(), tensor([true, false], { batchDim: 1 }))).toThrow(
      /mask \(2;\) must have the shape of the leading dims of x \(4,2; 3\)/,
    );
    expect(() => booleanMask(X(), tensor([true, false, true]))).toThrow(ShapeError); // base dims without every batch dim
    expect(() => booleanMask([1] as unknown as Tensor, X())).toThrow(DTypeError);
    const f = jit((x: Tensor) => booleanMask(x, x.gt(0)));
    expect(() => f(tensor([1, -1], { batchDim: 1 }))).toThrow(TraceError);
    expect(() => f(tensor([1, -1], { batchDim: 1 }))).toThrow(/concretization error inside jit/);
    const g = jit((x: Tensor) => nonzero(x));
    expect(() => g(tensor([1, 0]))).toThrow(TraceError); // no batch dims: traced all the same
  });
});

describe("nonzero", () => {
  it("(n; rank) int32 indices in row-major order, batch dims first", () => {
    // PyTorch's docs: nonzero([[0.6, 0, 0, 0], [0, 0.4, 0, 0], [0, 0, 1.2, 0], [0, 0, 0, -0.4]]) = [[0,0],[1,1],[2,2],[3,3]].
    const t = tensor([
      [0.6, 0, 0, 0],
      [0, 0.4, 0, 0],
      [0, 0, 1.2, 0],
      [0, 0, 0, -0.4],
    ]);
    const z = nonzero(t);
    expect(z.dtype).toBe("int32");
    expect(z.toString()).toBe("(4; 2)");
    expect(z.toArraySync()).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    expect(
      nonzero(
        tensor(
          [
            [0, 3],
            [NaN, -0],
          ],
          { batchDim: 1 },
        ),
      ).toArraySync(),
    ).toEqual([
      [0, 1],
      [1, 0],
    ]);
    expect(nonzero(zeros([2], [3])).toString()).toBe("(0; 2)");
    expect(() => nonzero(tensor(1))).toThrow(ShapeError);
  });
});

describe("TensorDict.booleanMask", () => {
  it("tensordict's non-tensor docs: reads[reads['gc'] > 0.4] keeps the matching sequences", () => {
    const reads = new TensorDict(
      { seq: NonTensorStack.fromList(["ACGT", "GGCC", "TTAG"]), gc: tensor([0.5, 1.0, 0.25], { batchDim: 1 }) },
      [3],
    ).setNonTensor("run", "r1");
    const rich = reads.booleanMask(reads.getTensor("gc").gt(0.4));
    expect(rich.batchSize).toEqual([2]);
    expect(rich.getNonTensor("seq")).toEqual(["ACGT", "GGCC"]);
    expect(Array.from(rich.getTensor("gc").dataSync())).toEqual([0.5, 1]);
    expect(rich.getNonTensor("run")).toBe("r1");
    expect(() => reads.booleanMask(tensor([true]))).toThrow(ShapeError);
    const f = jit((td: TensorDict) => td.booleanMask(td.getTensor("gc").gt(0.4)));
    expect(() => f(reads.exclude("seq", "run"))).toThrow(
      /TensorDict\.booleanMask: the output shape depends on the values of mask/,
    );
  });
});

const probe = await probeWebGPUForFile();
describeWebGPU(probe, "booleanMask and nonzero on WebGPU", (backend) => {
  it("the async forms read from the device; the sync forms say to use them", () =>
    onWebGPU(backend, async () => {
      const x = tensor([NaN, -0, 0, Infinity, 2], { batchDim: 1 });
      expect(Array.from(await (await booleanMaskAsync(x, x)).data())).toEqual([NaN, Infinity, 2]);
      expect(Array.from(await (await nonzeroAsync(x)).data())).toEqual([0, 3, 4]);
      expect(() => booleanMask(x, x)).toThrow(BackendError);
      expect(() => nonzero(x)).toThrow(/nonzeroAsync/);
    }));
});
