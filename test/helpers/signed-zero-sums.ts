/**
 * The signed zero of sums, shared by the JS and WebGPU tests. The rule (NumPy's:
 * np.sum([-0.0, -0.0]) is -0.0, np.sum([]) is 0.0): a sum over a non-empty set of
 * elements that are all -0 is -0; an empty sum is +0; any other sum is the IEEE sum
 * (-0 + 0 is +0). It holds for base and batch sums, the sum inside mean, jagged row
 * sums and matmul's K-sum, on every code path (inlined small sums, loops, workgroup
 * trees, long reductions in chunks). Expected values are written from that rule.
 */
import { expect } from "vitest";
import { fromTypedArray, JaggedTensor, tensor, type Tensor } from "../../src/index.js";

const fmt = (a: ArrayLike<number>): string[] => Array.from(a, (v) => (Object.is(v, -0) ? "-0" : String(v)));
const negZeros = (n: number, shape: number[], batchDim = 0): Tensor =>
  fromTypedArray(new Float32Array(n).fill(-0), shape, { batchDim });

export async function checkSignedZeroSums(read: (t: Tensor) => Promise<ArrayLike<number>>): Promise<void> {
  const check = async (t: Tensor, want: string[], what: string): Promise<void> =>
    expect(fmt(await read(t)), what).toEqual(want);
  await check(tensor([-0, -0]).sum(), ["-0"], "inlined base sum of -0s");
  await check(tensor([-0, 0]).sum(), ["0"], "-0 + 0");
  await check(negZeros(40, [40]).sum(), ["-0"], "base sum (loop) of -0s");
  await check(negZeros(70_000, [70_000]).sum(), ["-0"], "long base sum (chunks) of -0s");
  await check(fromTypedArray(new Float32Array(0), [0]).sum(), ["0"], "empty base sum");
  await check(fromTypedArray(new Float32Array(0), [2, 0]).sum(1), ["0", "0"], "empty base axis");
  await check(negZeros(6, [3, 2], 1).batchSum(), ["-0", "-0"], "batch sum of -0s");
  await check(negZeros(100_000, [100_000], 1).batchSum(), ["-0"], "long batch sum (workgroup trees, chunks) of -0s");
  await check(fromTypedArray(new Float32Array(0), [0, 2], { batchDim: 1 }).batchSum(), ["0", "0"], "empty batch sum");
  await check(negZeros(4, [4], 1).batchMean(), ["-0"], "mean of -0s");
  // Products -0·1 and 1·-0 are -0; K = 0 is an empty sum.
  await check(tensor([[-0, 1]]).matmul(tensor([[1], [-0]])), ["-0"], "matmul K-sum of -0s");
  await check(
    negZeros(40, [1, 40]).matmul(fromTypedArray(new Float32Array(40).fill(1), [40, 1])),
    ["-0"],
    "matmul K = 40",
  );
  await check(
    fromTypedArray(new Float32Array(0), [2, 0]).matmul(fromTypedArray(new Float32Array(0), [0, 1])),
    ["0", "0"],
    "matmul K = 0",
  );
  // Rows [-0, -0], [], [1, -0]; then rows of 2, 0, 100000 and 1 elements, all -0.
  const rows = (values: Tensor, offsets: number[]): JaggedTensor =>
    new JaggedTensor(values, fromTypedArray(Int32Array.from(offsets), [offsets.length], { batchDim: 1 }));
  await check(
    rows(fromTypedArray(Float32Array.of(-0, -0, 1, -0), [4], { batchDim: 1 }), [0, 2, 2, 4]).sum(),
    ["-0", "0", "1"],
    "jagged row sums",
  );
  await check(
    rows(negZeros(100_003, [100_003], 1), [0, 2, 2, 100_002, 100_002, 100_003]).sum(),
    ["-0", "0", "-0", "0", "-0"],
    "long jagged rows",
  );
}
