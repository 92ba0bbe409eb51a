/**
 * The looped linear-algebra kernels (matrices above the unroll limits) on the JS
 * backend: reconstruction identities at n = 20 and 40 in float64 and float32,
 * special values, one trace for two batch sizes, the compiled kernels against the
 * reference interpreter, the derivative rule's typed error, bad routine attributes.
 */
import { describe, expect, it } from "vitest";
import { grad, jit, linalg, loadBundle, Tensor, UnsupportedOpError, ShapeError } from "../../src/index.js";
import { countTrips } from "../../ir/routines.js";
import { importBundle } from "../helpers/bundle.js";
import { expectInterpreterAgrees, randomMats, spdMats, symMats } from "./helpers.js";
import { checkDirect, checkJacobi, checkLoopedJit, checkLoopedSpecial, checkQR, matsOf } from "./looped-suite.js";

describe("looped linalg on JS", () => {
  it("direct routines: P·L·U = A, solve, inv, luSolve, det, cholesky at n = 20 and 40", async () => {
    await checkDirect(20, 3, "float64");
    await checkDirect(40, 2, "float64");
    await checkDirect(20, 3, "float32");
    await checkDirect(40, 2, "float32");
  });

  it("qr: Q·R = A, Qᵀ·Q = I, tall and wide, reduced and complete", async () => {
    await checkQR(20, 12, 2, "float64");
    await checkQR(12, 20, 2, "float32");
    await checkQR(40, 40, 1, "float64");
  });

  it("Jacobi: V·Λ·Vᵀ = A and U·S·Vh = A at n = 20 (and 40 in float64), sorted", async () => {
    await checkJacobi(20, 26, 2, "float64");
    await checkJacobi(20, 26, 2, "float32");
    await checkJacobi(40, 40, 1, "float64");
  });

  it("special values, singular and non-positive-definite inputs, empty batches", async () => {
    await checkLoopedSpecial(12, "float64");
    await checkLoopedSpecial(12, "float32");
  });

  it("one trace serves two batch sizes", async () => {
    await checkLoopedJit(12, "float64");
  });

  it("leading base dims batch like batch dims", () => {
    const d = randomMats(6, 10, 10, 3, 5);
    const a = matsOf(d, 6, 10, 10, "float64").batchReshape([2, 3]).rebatch(1); // (2; 3,10,10)
    const inv = linalg.inv(a);
    expect(inv.toString()).toBe("(2; 3,10,10)");
    const r = a.matmul(inv).sub(Tensor._const(0, "float64"));
    const eye = Array.from({ length: 10 }, (_, i) => Array.from({ length: 10 }, (_, j) => (i === j ? 1 : 0)));
    for (const m of r.toArraySync() as number[][][][])
      for (const x of m)
        for (let i = 0; i < 10; i++)
          for (let j = 0; j < 10; j++) expect(Math.abs(x[i]![j]! - eye[i]![j]!)).toBeLessThan(1e-12);
  });

  // (det, inv and lu's P and L read index constants, which a jit captures as extra inputs: left out here.)
  it("the compiled kernels match the reference interpreter on the traced graph", () => {
    const n = 9;
    const f = jit((a: Tensor, s: Tensor, b: Tensor) => {
      const lu = linalg.luFactor(a);
      const q = linalg.qr(a, { mode: "complete" });
      const e = linalg.eigh(s);
      const v = linalg.svd(a.slice(1, 0, 7));
      return [linalg.solve(a, b), lu.LU, linalg.cholesky(s), q.Q, q.R, e.eigenvalues, e.eigenvectors, v.U, v.S, v.Vh];
    });
    for (const count of [2, 3]) {
      const a = matsOf(randomMats(count, n, n, count, 2), count, n, n, "float64");
      const s = matsOf(spdMats(count, n, count + 1), count, n, n, "float64");
      const b = matsOf(randomMats(count, n, 1, count + 2), count, n, 1, "float64");
      const got = f(a, s, b); // the first call traces f; dump() prints that graph
      expectInterpreterAgrees(f.dump(), [a, s, b], got, count);
    }
    expect(f.stats.traces).toBe(1);
    void symMats;
  });

  it("a bundle of looped routines loads (kernels re-derived and compared) and gives the same values", async () => {
    const f = jit((a: Tensor, b: Tensor) => [linalg.solve(a, b), linalg.eigh(a.add(a.transpose())).eigenvalues]);
    const a = matsOf(randomMats(3, 9, 9, 4, 3), 3, 9, 9, "float64");
    const b = matsOf(randomMats(3, 9, 2, 5), 3, 9, 2, "float64");
    const want = f(a, b) as Tensor[];
    const g = await loadBundle(await importBundle(f.bundle()));
    const got = g(a, b) as Tensor[];
    want.forEach((w, k) => expect(Array.from(got[k]!.dataSync())).toEqual(Array.from(w.dataSync())));
  });

  it("derivatives of looped routines are a typed error naming the routine", () => {
    const a = matsOf(randomMats(1, 9, 9, 1, 3), 1, 9, 9, "float64");
    expect(() => grad((x: Tensor) => linalg.det(x).sum())(a)).toThrow(UnsupportedOpError);
    expect(() => grad((x: Tensor) => linalg.det(x).sum())(a)).toThrow("routine lu: no derivative");
    // Below the threshold the unrolled composition differentiates: d det / dA = det·A⁻ᵀ = I for A = I.
    const eye = matsOf(
      Float64Array.from({ length: 16 }, (_, i) => (i % 5 === 0 ? 1 : 0)),
      1,
      4,
      4,
      "float64",
    );
    expect(Array.from(grad((x: Tensor) => linalg.det(x).sum())(eye).dataSync())).toEqual(
      Array.from({ length: 16 }, (_, i) => (i % 5 === 0 ? 1 : 0)),
    );
  });

  it("the routine op's type rule refuses bad inputs with typed errors", () => {
    const a = matsOf(randomMats(1, 9, 8, 1), 1, 9, 8, "float64");
    expect(() => Tensor._op("routine", [a], { name: "lu", arg: 0 })).toThrow(ShapeError);
    expect(() => Tensor._op("routine", [a], { name: "qr", arg: 3 })).toThrow(ShapeError);
    expect(() => Tensor._op("routine", [a.transpose()], { name: "svd", arg: 1 })).toThrow(ShapeError);
    expect(() => Tensor._op("routine", [a.cast("int32")], { name: "qr", arg: 8 })).toThrow(
      'routine qr: bad [{"dtype":"int32"',
    );
  });

  it("trip counts bound the WebGPU loops (inner loops unrolled)", () => {
    // LU of 9×9 with inner loops unrolled: the k loop, the copy and perm loops, and Σ (n-1-k) elimination rows.
    expect(countTrips({ name: "lu", m: 9, n: 9, cols: 0, sweeps: 0, dtype: "float32" }, 64)).toBe(9 + 9 + 9 + 36);
    expect(countTrips({ name: "lu", m: 9, n: 9, cols: 0, sweeps: 0, dtype: "float32" }, 0)).toBeGreaterThan(200);
  });
});
