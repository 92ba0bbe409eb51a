/** Host-side references for the linear-algebra tests: seeded matrices and plain loops. */
import { expect } from "vitest";
import { interpret } from "../../ir/interpret.js";
import { fromTypedArray, linalg, parseGraph, tensor, type Tensor } from "../../src/index.js";

/** A seeded uniform generator in [-1, 1) (Park-Miller). */
export function rng(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 16807) % 2147483647) / 2147483647) * 2 - 1;
}

/** `count` m×n matrices, row-major: entry (b, i, j) is `entry(b, i, j)`, called in that order. */
function fillMats(
  count: number,
  m: number,
  n: number,
  entry: (b: number, i: number, j: number) => number,
): Float64Array {
  const a = new Float64Array(count * m * n);
  for (let b = 0; b < count; b++)
    for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) a[(b * m + i) * n + j] = entry(b, i, j);
  return a;
}

/** `count` random m×n matrices, row-major, with `diag` added on the diagonal. */
export function randomMats(count: number, m: number, n: number, seed: number, diag = 0): Float64Array {
  const r = rng(seed);
  return fillMats(count, m, n, (_, i, j) => r() + (i === j ? diag : 0));
}

/** Symmetric positive-definite matrices `X·Xᵀ + n·I`. */
export function spdMats(count: number, n: number, seed: number): Float64Array {
  const x = randomMats(count, n, n, seed);
  return fillMats(count, n, n, (b, i, j) => {
    let s = i === j ? n : 0;
    for (let k = 0; k < n; k++) s += x[(b * n + i) * n + k]! * x[(b * n + j) * n + k]!;
    return s;
  });
}

/** Symmetric matrices `(X + Xᵀ)/2`. */
export function symMats(count: number, n: number, seed: number): Float64Array {
  const x = randomMats(count, n, n, seed);
  return fillMats(count, n, n, (b, i, j) => (x[(b * n + i) * n + j]! + x[(b * n + j) * n + i]!) / 2);
}

/** A `(count; m,n)` tensor of the given dtype. */
export function mats(data: Float64Array, count: number, m: number, n: number, dtype: "float32" | "float64"): Tensor {
  return fromTypedArray(dtype === "float64" ? data : Float32Array.from(data), [count, m, n], { batchDim: 1 });
}

/** The matrices of a `(count; m,n)` result as nested arrays. */
export function host(t: Tensor): number[][][] {
  const [count, m, n] = t.shape as [number, number, number];
  return split(t.dataSync(), count, m, n);
}

/** The matrices of flat row-major data. */
export function split(d: ArrayLike<number>, count: number, m: number, n: number): number[][][] {
  return Array.from({ length: count }, (_, b) =>
    Array.from({ length: m }, (_, i) => Array.from({ length: n }, (_, j) => Number(d[(b * m + i) * n + j]))),
  );
}

/**
 * The outputs `got` of a jit function on float64 `inputs` with batch `[count]` against the
 * reference interpreter (ir/interpret.ts) on the graph the function traced (`dump`, its IR
 * text): every entry within 1e-12 relative (absolute below magnitude 1).
 */
export function expectInterpreterAgrees(
  dump: string,
  inputs: readonly Tensor[],
  got: readonly Tensor[],
  count: number,
): void {
  const ref = interpret(
    parseGraph(dump),
    inputs.map((t) => ({
      type: { dtype: "float64" as const, batch: [count], base: [...t.baseShape] },
      data: t.dataSync(),
    })),
  );
  got.forEach((t, i) => {
    const g = t.dataSync();
    const r = ref[i]!.data;
    expect(g.length).toBe(r.length);
    for (let k = 0; k < g.length; k++) {
      const d = Math.abs(Number(g[k]) - Number(r[k]));
      if (!(d <= 1e-12 * Math.max(1, Math.abs(Number(r[k]))))) throw new Error(`output ${i}[${k}]: ${g[k]} vs ${r[k]}`);
    }
  });
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

/** The `(;m,n)` matrix `t` is within `tol` of `want` in every entry (max |difference|, NaN failing). */
export function expectNear(t: Tensor, tol: number, want: number[][]): void {
  expect(maxDiff(t.toArraySync() as number[][], want)).toBeLessThan(tol);
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
