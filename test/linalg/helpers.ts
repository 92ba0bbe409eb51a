/** Host-side references for the linear-algebra tests: seeded matrices and plain loops. */
import { expect } from "vitest";
import { fromTypedArray, linalg, tensor, type Tensor } from "../../src/index.js";

/** A seeded uniform generator in [-1, 1) (Park-Miller). */
export function rng(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 16807) % 2147483647) / 2147483647) * 2 - 1;
}

/** `count` random m×n matrices, row-major, with `diag` added on the diagonal. */
export function randomMats(count: number, m: number, n: number, seed: number, diag = 0): Float64Array {
  const r = rng(seed);
  const a = new Float64Array(count * m * n);
  for (let b = 0; b < count; b++)
    for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) a[(b * m + i) * n + j] = r() + (i === j ? diag : 0);
  return a;
}

/** Symmetric positive-definite matrices `X·Xᵀ + n·I`. */
export function spdMats(count: number, n: number, seed: number): Float64Array {
  const x = randomMats(count, n, n, seed);
  const out = new Float64Array(count * n * n);
  for (let b = 0; b < count; b++)
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) {
        let s = i === j ? n : 0;
        for (let k = 0; k < n; k++) s += x[(b * n + i) * n + k]! * x[(b * n + j) * n + k]!;
        out[(b * n + i) * n + j] = s;
      }
  return out;
}

/** Symmetric matrices `(X + Xᵀ)/2`. */
export function symMats(count: number, n: number, seed: number): Float64Array {
  const x = randomMats(count, n, n, seed);
  const out = new Float64Array(count * n * n);
  for (let b = 0; b < count; b++)
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) out[(b * n + i) * n + j] = (x[(b * n + i) * n + j]! + x[(b * n + j) * n + i]!) / 2;
  return out;
}

/** A `(count; m,n)` tensor of the given dtype. */
export function mats(data: Float64Array, count: number, m: number, n: number, dtype: "float32" | "float64"): Tensor {
  return fromTypedArray(dtype === "float64" ? data : Float32Array.from(data), [count, m, n], { batchDim: 1 });
}

/** The matrices of a `(count; m,n)` result as nested arrays. */
export function host(t: Tensor): number[][][] {
  const d = t.dataSync();
  const [count, m, n] = t.shape as [number, number, number];
  return Array.from({ length: count }, (_, b) =>
    Array.from({ length: m }, (_, i) => Array.from({ length: n }, (_, j) => Number(d[(b * m + i) * n + j]))),
  );
}

/** The matrices of flat row-major data. */
export function split(d: ArrayLike<number>, count: number, m: number, n: number): number[][][] {
  return Array.from({ length: count }, (_, b) =>
    Array.from({ length: m }, (_, i) => Array.from({ length: n }, (_, j) => Number(d[(b * m + i) * n + j]))),
  );
}

export function matmul(a: number[][], b: number[][]): number[][] {
  return a.map((row) => b[0]!.map((_, j) => row.reduce((s, v, k) => s + v * b[k]![j]!, 0)));
}

export function transpose(a: number[][]): number[][] {
  return a[0]!.map((_, j) => a.map((row) => row[j]!));
}

export function eyeN(n: number): number[][] {
  return Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
}

/** Max |a - b| over two matrices (NaN counts as Infinity). */
export function maxDiff(a: number[][], b: number[][]): number {
  let m = 0;
  a.forEach((row, i) =>
    row.forEach((v, j) => {
      const d = Math.abs(v - b[i]![j]!);
      m = Number.isNaN(d) ? Infinity : Math.max(m, d);
    }),
  );
  return m;
}

/** Max |entry|. */
export function maxAbs(a: number[][]): number {
  return Math.max(...a.flat().map(Math.abs));
}

/**
 * On the current backend (read back asynchronously, so any backend): a singular det
 * is 0 and its inverse non-finite, NaN/Inf propagate within their batch element
 * only, a non-positive-definite cholesky gives NaN, empty batches give empty results.
 * Expected values written by hand.
 */
export async function checkSpecialValues(): Promise<void> {
  const a = tensor(
    [
      [
        [1, 2],
        [2, 4],
      ],
      [
        [NaN, 1],
        [1, 2],
      ],
      [
        [Infinity, 0],
        [0, 2],
      ],
      [
        [2, 0],
        [0, 4],
      ],
    ],
    { batchDim: 1 },
  );
  const d = Array.from(await linalg.det(a).data());
  expect(d[0]).toBe(0);
  expect(d[1]).toBeNaN();
  expect(d[2]).toBe(Infinity);
  expect(d[3]).toBe(8);
  const inv = split(await linalg.inv(a).data(), 4, 2, 2);
  expect(inv[0]!.flat().every((v) => !Number.isFinite(v))).toBe(true);
  expect(inv[1]!.flat().some(Number.isNaN)).toBe(true);
  expect(
    maxDiff(inv[3]!, [
      [0.5, 0],
      [0, 0.25],
    ]),
  ).toBe(0);
  const w = split(await linalg.eigvalsh(a).data(), 4, 1, 2);
  expect(w[1]![0]!.some(Number.isNaN)).toBe(true);
  expect(w[3]![0]).toEqual([2, 4]);
  const c = split(
    await linalg
      .cholesky(
        tensor(
          [
            [
              [4, 2],
              [2, -3],
            ],
          ],
          { batchDim: 1 },
        ),
      )
      .data(),
    1,
    2,
    2,
  );
  expect(c[0]![1]![1]).toBeNaN();
  const empty = fromTypedArray(new Float32Array(0), [0, 3, 3], { batchDim: 1 });
  expect((await linalg.solve(empty, empty).data()).length).toBe(0);
  expect(linalg.eigh(empty).eigenvalues.toString()).toBe("(0; 3)");
  expect((await linalg.eigh(empty).eigenvalues.data()).length).toBe(0);
}
