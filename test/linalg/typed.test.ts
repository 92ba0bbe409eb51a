/** The typed tensors' linear algebra: SR2.eigh, R2.solve, SSR4.solve (the same unrolled kernels as linalg). */
import { describe, expect, it } from "vitest";
import { fromTypedArray, jit, tensor, R2, SR2, SSR4, Vec, DTypeError, type Tensor } from "../../src/index.js";
import { matmul, maxDiff, transpose } from "./helpers.js";

const f64 = { dtype: "float64" as const };

describe("typed linear algebra", () => {
  it("SR2.eigh of [[2,-1,0],[-1,2,-1],[0,-1,2]]: 2-√2, 2, 2+√2 and V·Λ·Vᵀ = S", () => {
    const s = SR2.fill(2, 2, 2, -1, 0, -1, f64);
    const { values, vectors } = s.eigh();
    const w = values.toArraySync() as number[];
    expect(maxDiff([w], [[2 - Math.SQRT2, 2, 2 + Math.SQRT2]])).toBeLessThan(1e-14);
    const V = vectors.toArraySync() as number[][];
    const full = s.toR2().toArraySync() as number[][];
    const L = w.map((x, i) => w.map((_, j) => (i === j ? x : 0)));
    expect(maxDiff(matmul(matmul(V, L), transpose(V)), full)).toBeLessThan(1e-14);
  });

  it("SR2.eigh is batched and traces once: eigenvalues of a batch of diagonal tensors are sorted", () => {
    const f = jit((t: Tensor) => new SR2(t).eigh().values.t);
    const d = fromTypedArray(new Float32Array([3, 1, 2, 0, 0, 0, -1, 5, 0, 0, 0, 0]), [2, 6], { batchDim: 1 });
    expect(f(d).toArraySync()).toEqual([
      [1, 2, 3],
      [-1, 0, 5],
    ]);
    f(fromTypedArray(new Float32Array(18), [3, 6], { batchDim: 1 }));
    expect(f.stats.traces).toBe(1);
  });

  it("R2.solve: NumPy's 3x + y = 9, x + 2y = 8 embedded in 3×3; R2 right-hand sides are columns", () => {
    const a = R2.fill(3, 1, 0, 1, 2, 0, 0, 0, 1, f64);
    expect(a.solve(Vec.fill(9, 8, 1, f64)).toArraySync()).toEqual([2, 3, 1]);
    const x = a.solve(R2.fill(9, 3, 0, 8, 1, 0, 1, 0, 1, f64)).toArraySync() as number[][];
    expect(
      maxDiff(x, [
        [2, 1, 0],
        [3, 0, 0],
        [1, 0, 1],
      ]),
    ).toBeLessThan(1e-15);
    expect(() => a.solve(3 as unknown as Vec)).toThrow(DTypeError);
  });

  it("SSR4.solve: a diagonal Mandel stiffness divides each component; the singular I⊗I gives NaN", () => {
    const c = new SSR4(
      tensor(
        [0, 1, 2, 3, 4, 5].map((i) => [0, 1, 2, 3, 4, 5].map((j) => (i === j ? i + 1 : 0))),
        f64,
      ),
    );
    const b = SR2.fill(1, 2, 3, f64);
    expect(c.solve(b).toArraySync()).toEqual([1, 1, 1, 0, 0, 0]);
    expect((SSR4.identity(f64).solve(b).toArraySync() as number[]).some(Number.isNaN)).toBe(true);
  });
});
