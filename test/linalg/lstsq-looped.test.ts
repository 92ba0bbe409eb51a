/**
 * `linalg.lstsq` above the unrolled sizes (max(m, n) > LOOP_ABOVE_JACOBI): the looped SVD, then
 * x = V·S⁺·Uᵀ·b. Checked against the defining properties, computed here in plain float64 loops.
 */
import { describe, expect, it } from "vitest";
import { fromTypedArray, jit, linalg, ShapeError, type Tensor } from "../../src/index.js";
import { describeOnJsAndWasm } from "../helpers/js-and-wasm.js";

const m = 10;
const n = 8;
const matrix = (dup: boolean): Float64Array => {
  const a = new Float64Array(m * n).map((_, i) => Math.sin(i * 1.7) + (i % (n + 1) === 0 ? 3 : 0));
  // Column 7 equal to column 6: rank n - 1.
  if (dup) for (let i = 0; i < m; i++) a[i * n + 7] = a[i * n + 6]!;
  return a;
};
const b = new Float64Array(m).map((_, i) => Math.cos(i));
const residual = (a: Float64Array, x: ArrayLike<number>): number[] =>
  Array.from({ length: m }, (_, i) => {
    let s = -b[i]!;
    for (let k = 0; k < n; k++) s += a[i * n + k]! * x[k]!;
    return s;
  });

describe("lstsq with looped kernels (n = 8)", () => {
  it("full rank: the normal equations hold, residuals are ‖a·x - b‖², rank n", () => {
    const a = matrix(false);
    const r = linalg.lstsq(fromTypedArray(a, [m, n]), fromTypedArray(b, [m]));
    const x = r.solution.dataSync();
    const d = residual(a, x);
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let i = 0; i < m; i++) s += a[i * n + j]! * d[i]!;
      expect(Math.abs(s)).toBeLessThan(1e-12);
    }
    expect(r.residuals.dataSync()[0]).toBeCloseTo(
      d.reduce((p, v) => p + v * v, 0),
      12,
    );
    expect(r.rank.toArraySync()).toBe(n);
    expect(r.singularValues.shape).toEqual([n]);
  });

  it("rank-deficient: rank n - 1 and the minimum-norm solution (equal weights on the two equal columns)", () => {
    const a = matrix(true);
    const r = linalg.lstsq(fromTypedArray(a, [m, n]), fromTypedArray(b, [m]));
    const x = r.solution.dataSync();
    expect(r.rank.toArraySync()).toBe(n - 1);
    expect(Math.abs(x[6]! - x[7]!)).toBeLessThan(1e-10);
    const d = residual(a, x);
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let i = 0; i < m; i++) s += a[i * n + j]! * d[i]!;
      expect(Math.abs(s)).toBeLessThan(1e-10);
    }
  });

  it("inside jit: one trace for two batch sizes, each batch element its own solution", () => {
    const f = jit((a: Tensor, y: Tensor) => linalg.lstsq(a, y).solution);
    const a = matrix(false);
    for (const batch of [2, 3]) {
      const as = new Float64Array(batch * m * n);
      const bs = new Float64Array(batch * m);
      for (let k = 0; k < batch; k++) {
        as.set(a, k * m * n);
        bs.set(
          b.map((v) => v * (k + 1)),
          k * m,
        );
      }
      const x = f(fromTypedArray(as, [batch, m, n], { batchDim: 1 }), fromTypedArray(bs, [batch, m], { batchDim: 1 }));
      const xs = x.dataSync();
      // The problem is linear in b: element k's solution is (k + 1) times element 0's.
      for (let k = 1; k < batch; k++)
        for (let j = 0; j < n; j++) expect(xs[k * n + j]).toBeCloseTo((k + 1) * xs[j]!, 10);
    }
    expect(f.stats.traces).toBe(1);
  });
});

describeOnJsAndWasm(
  "lstsq with looped kernels: special values, empty batches and bad input (JS and WebAssembly)",
  () => {
    // A NaN entry spreads over its batch element's solution, never a hang; the other element is finite.
    const a = new Float64Array(2 * m * n);
    a.set(matrix(false), 0);
    a.set(matrix(false), m * n);
    a[m * n + 3] = NaN;
    const bs = new Float64Array(2 * m);
    bs.set(b, 0);
    bs.set(b, m);
    const x = linalg
      .lstsq(fromTypedArray(a, [2, m, n], { batchDim: 1 }), fromTypedArray(bs, [2, m], { batchDim: 1 }))
      .solution.dataSync();
    expect(Array.from(x.slice(0, n)).every(Number.isFinite)).toBe(true);
    expect(Array.from(x.slice(n)).some(Number.isNaN)).toBe(true);
    // An empty batch gives an empty solution.
    const e = linalg.lstsq(
      fromTypedArray(new Float64Array(0), [0, m, n], { batchDim: 1 }),
      fromTypedArray(new Float64Array(0), [0, m], { batchDim: 1 }),
    );
    expect(e.solution.shape).toEqual([0, n]);
    // b with the wrong number of rows is a ShapeError in (batch; base) notation.
    expect(() => linalg.lstsq(fromTypedArray(matrix(false), [m, n]), fromTypedArray(b.slice(1), [m - 1]))).toThrow(
      ShapeError,
    );
  },
);
