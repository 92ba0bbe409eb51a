/** Every typed error, with its message naming the op, the argument and both shapes. */
import { describe, expect, it } from "vitest";
import {
  BackendError,
  DTypeError,
  fromTypedArray,
  IRError,
  jit,
  ShapeError,
  tensor,
  Tensor,
  TraceError,
  zeros,
} from "../../src/index.js";
import { parseGraph } from "../../src/index.js";

describe("typed errors", () => {
  it("ShapeError on batch and base broadcasting", () => {
    const x = zeros([4, 5], [3]);
    const y = zeros([4, 6], [3]);
    expect(() => x.add(y)).toThrow(ShapeError);
    expect(() => x.add(y)).toThrow("add: cannot broadcast x (4,5; 3) with y (4,6; 3): batch dim 1 is 5 vs 6");
    expect(() => zeros([2], [3]).mul(zeros([2], [4]))).toThrow(
      "mul: cannot broadcast x (2; 3) with y (2; 4): base dim 0 is 3 vs 4",
    );
  });

  it("ShapeError at run time when a jit function meets incompatible batch sizes", () => {
    const f = jit((a: Tensor, b: Tensor) => a.add(b));
    f(zeros([2], [3]), zeros([2], [3]));
    expect(() => f(zeros([2], [3]), zeros([5], [3]))).toThrow(
      "add: cannot broadcast x (2; 3) with y (5; 3): batch dim 0 is 2 vs 5",
    );
  });

  it("ShapeError on reshapes, axes and matmul", () => {
    const x = zeros([2], [3, 4]);
    expect(() => x.reshape([5, -1])).toThrow("reshape: cannot reshape the base of x (2; 3,4) to (5,-1)");
    expect(() => x.sum(2)).toThrow("sum: base axis 2 is out of range for x (2; 3,4)");
    expect(() => x.batchSum(1)).toThrow("sum: batch axis 1 is out of range for x (2; 3,4)");
    expect(() => x.batchReshape([3])).toThrow("batchReshape: cannot reshape the batch of x (2; 3,4) to (3)");
    expect(() => x.matmul(zeros([], [3, 4]))).toThrow("matmul: x (2; 3,4) has 4 columns but y (;3,4) has 3 rows");
    expect(() => x.batchExpand([3])).toThrow(
      "batchExpand: cannot expand the batch of x (2; 3,4) to (3): dim 0 is 2 vs 3",
    );
    expect(() => tensor([[1, 2], [3]])).toThrow(ShapeError);
    expect(() => fromTypedArray(new Float32Array(5), [2, 3])).toThrow(
      "fromTypedArray: 5 values do not fill shape (2,3)",
    );
  });

  it("DTypeError on ops a dtype does not have", () => {
    expect(() => tensor([true]).clip(0, 1)).toThrow(DTypeError);
    expect(() => tensor([true]).clip(0, 1)).toThrow("clip: x (;1) of dtype bool cannot be clipped");
    expect(() => zeros([], [1], { dtype: "complex64" as never })).toThrow("zeros: unknown dtype complex64");
  });

  it("TraceError when a traced value is read inside jit", () => {
    const f = jit((x: Tensor) => {
      x.dataSync();
      return x;
    });
    expect(() => f(zeros([2], [3]))).toThrow(TraceError);
    expect(() => f(zeros([2], [3]))).toThrow("cannot read a traced tensor (b0; 3) inside jit");
  });

  it("IRError on malformed IR text", () => {
    expect(() => parseGraph("func nope")).toThrow(IRError);
  });

  it("BackendError on an unknown backend", async () => {
    const { setBackend } = await import("../../src/index.js");
    expect(() => setBackend("webgpu")).toThrow(BackendError);
  });
});
