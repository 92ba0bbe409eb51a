/**
 * Empty reductions, as NumPy defines them, shared by the JS and WebGPU test files:
 * over no elements sum is 0, prod 1, mean NaN, any false, all true; min, max, argmin
 * and argmax have no value and raise a ShapeError naming the op and the shape in
 * (batch; base) notation. Expected values are written here from that rule.
 */
import { expect } from "vitest";
import { jit, ShapeError, zeros, type Tensor } from "../../src/index.js";

/** Reads a tensor on the current backend (jit calls go through `callAsync`). */
export type Read = (t: Tensor) => Promise<number[]>;

export const read: Read = async (t) => Array.from(await t.data());

export async function checkEmptyBatch(): Promise<void> {
  const x = zeros([0], [3]);
  expect(await read(x.batchSum())).toEqual([0, 0, 0]);
  expect(await read(x.batchProd())).toEqual([1, 1, 1]);
  expect(await read(x.batchMean())).toEqual([NaN, NaN, NaN]);
  expect(await read(x.batchAny())).toEqual([0, 0, 0]);
  expect(await read(x.batchAll())).toEqual([1, 1, 1]);
  expect(await read(zeros([0], [2], { dtype: "int32" }).batchSum())).toEqual([0, 0]);
  for (const [name, op] of [
    ["min", (t: Tensor) => t.batchMin()],
    ["max", (t: Tensor) => t.batchMax()],
    ["argmin", (t: Tensor) => t.batchArgmin(0)],
    ["argmax", (t: Tensor) => t.batchArgmax(0)],
  ] as const) {
    await expect(read(op(x)), name).rejects.toThrow(ShapeError);
    await expect(read(op(x)), name).rejects.toThrow(`${name}: cannot reduce an empty batch axis 0 of x (0; 3)`);
  }
  // Reducing a non-empty axis of an empty batch is fine: the result is empty.
  const y = zeros([2, 0], [3]);
  expect(await read(y.batchMax(0))).toEqual([]);
  expect(await read(y.batchSum(1))).toEqual([0, 0, 0, 0, 0, 0]);
  await expect(read(y.batchArgmax(1))).rejects.toThrow("argmax: cannot reduce an empty batch axis 1 of x (2,0; 3)");
}

/** A jit function is batch-generic: the empty batch is refused at the call that has it, and the next call works. */
export async function checkEmptyJit(call: (f: (x: Tensor) => Tensor, x: Tensor) => Promise<number[]>): Promise<void> {
  const f = jit((x: Tensor) => x.batchMax());
  const g = jit((x: Tensor) => x.batchSum());
  expect(await call(f, zeros([2], [3]).add(1))).toEqual([1, 1, 1]);
  await expect(call(f, zeros([0], [3]))).rejects.toThrow("max: cannot reduce an empty batch axis 0 of x (0; 3)");
  expect(await call(f, zeros([4], [3]).add(2))).toEqual([2, 2, 2]);
  expect(await call(g, zeros([2], [3]).add(1))).toEqual([2, 2, 2]);
  expect(await call(g, zeros([0], [3]))).toEqual([0, 0, 0]);
}

export async function checkEmptyBase(): Promise<void> {
  const x = zeros([2], [0]);
  expect(await read(x.sum())).toEqual([0, 0]);
  expect(await read(x.prod())).toEqual([1, 1]);
  expect(await read(x.mean())).toEqual([NaN, NaN]);
  expect(await read(x.any())).toEqual([0, 0]);
  expect(await read(x.all())).toEqual([1, 1]);
  expect(() => x.max()).toThrow("max: cannot reduce an empty base axis 0 of x (2; 0)");
  // An empty base slice of a non-empty tensor.
  const s = zeros([2], [4]).add(1).slice(0, 1, 1);
  expect(await read(s.sum(0))).toEqual([0, 0]);
  expect(await read(s.add(1))).toEqual([]);
}
