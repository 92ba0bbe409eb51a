/**
 * The linear-algebra routines on WebGPU (float32 WGSL kernels): documented
 * values, reconstruction identities on random batches checked by host loops,
 * NaN/Inf/singular inputs, empty batches, and one jit trace for two batch sizes.
 */
import { expect, it } from "vitest";
import { fromTypedArray, jit, linalg, tensor, type Tensor } from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import {
  checkSpecialValues,
  eyeN,
  matmul,
  maxDiff,
  randomMats,
  spdMats,
  split,
  symMats,
  transpose,
} from "./helpers.js";
import { selectWebGPU } from "../helpers/on-webgpu.js";

const probe = await probeWebGPUForFile();

const mats32 = (d: Float64Array, count: number, m: number, n: number): Tensor =>
  fromTypedArray(Float32Array.from(d), [count, m, n], { batchDim: 1 });
async function hostOf(t: Tensor): Promise<number[][][]> {
  const [count, m, n] = t.shape as [number, number, number];
  return split(await t.data(), count, m, n);
}
const diag = (v: number[]): number[][] => v.map((x, i) => v.map((_, j) => (i === j ? x : 0)));

describeWebGPU(probe, "linalg on WebGPU", (gpu) => {
  selectWebGPU(gpu);

  it("documented values: det, inv, solve, lu pivots, cholesky, qr, eigh, lstsq, norms, triu", async () => {
    const a = tensor([
      [1, 2],
      [3, 4],
    ]);
    expect((await linalg.det(a).data())[0]).toBeCloseTo(-2, 5);
    expect(maxDiff([Array.from(await linalg.inv(a).data())], [[-2, 1, 1.5, -0.5]])).toBeLessThan(1e-5);
    const x = Array.from(
      await linalg
        .solve(
          tensor([
            [3, 1],
            [1, 2],
          ]),
          tensor([9, 8]),
        )
        .data(),
    );
    expect(maxDiff([x], [[2, 3]])).toBeLessThan(1e-5);
    expect(Array.from(await linalg.luFactor(a).pivots.data())).toEqual([2, 2]);
    expect(
      Array.from(
        await linalg
          .cholesky(
            tensor([
              [4, 2],
              [2, 5],
            ]),
          )
          .data(),
      ),
    ).toEqual([2, 0, 1, 2]);
    const { Q, R } = linalg.qr(tensor([[3], [4]]));
    expect(maxDiff([Array.from(await Q.data())], [[-0.6, -0.8]])).toBeLessThan(1e-6);
    expect(Array.from(await R.data())).toEqual([-5]);
    const w = Array.from(
      await linalg
        .eigvalsh(
          tensor([
            [2, -1, 0],
            [-1, 2, -1],
            [0, -1, 2],
          ]),
        )
        .data(),
    );
    expect(maxDiff([w], [[2 - Math.SQRT2, 2, 2 + Math.SQRT2]])).toBeLessThan(1e-5);
    const ls = linalg.lstsq(
      tensor([
        [0, 1],
        [1, 1],
        [2, 1],
        [3, 1],
      ]),
      tensor([-1, 0.2, 0.9, 2.1]),
    );
    expect(maxDiff([Array.from(await ls.solution.data())], [[1, -0.95]])).toBeLessThan(1e-5);
    expect(Array.from(await ls.rank.data())).toEqual([2]);
    const b = tensor([-4, -3, -2, -1, 0, 1, 2, 3, 4]).reshape([3, 3]);
    expect((await linalg.matrixNorm(b, Infinity).data())[0]).toBe(9);
    expect((await linalg.vectorNorm(tensor([3, 4])).data())[0]).toBe(5);
    expect(Array.from(await linalg.triu(b, 1).data())).toEqual([0, -3, -2, 0, 0, 1, 0, 0, 0]);
    expect(Array.from(await linalg.trace(b).data())).toEqual([0]);
  });

  it("random batches: P·L·U = A, A·inv(A) = I, L·Lᵀ = A, Q·R = A, V·Λ·Vᵀ = A, U·S·Vh = A", async () => {
    const count = 8;
    const A = mats32(randomMats(count, 3, 3, 3), count, 3, 3);
    const Ah = await hostOf(A);
    const { P, L, U } = linalg.lu(A);
    const [Ph, Lh, Uh, Ih] = await Promise.all([hostOf(P), hostOf(L), hostOf(U), hostOf(linalg.inv(A))]);
    const S = mats32(spdMats(count, 3, 5), count, 3, 3);
    const [Sh, Ch] = await Promise.all([hostOf(S), hostOf(linalg.cholesky(S))]);
    const { Q, R } = linalg.qr(A);
    const [Qh, Rh] = await Promise.all([hostOf(Q), hostOf(R)]);
    const Y = mats32(symMats(count, 3, 7), count, 3, 3);
    const e = linalg.eigh(Y);
    const [Yh, Vh, Wd] = await Promise.all([hostOf(Y), hostOf(e.eigenvectors), e.eigenvalues.data()]);
    const G = mats32(randomMats(count, 3, 2, 9), count, 3, 2);
    const s = linalg.svd(G, { fullMatrices: false });
    const [Gh, SUh, SVh, Sd] = await Promise.all([hostOf(G), hostOf(s.U), hostOf(s.Vh), s.S.data()]);
    for (let k = 0; k < count; k++) {
      expect(maxDiff(matmul(matmul(Ph[k]!, Lh[k]!), Uh[k]!), Ah[k]!)).toBeLessThan(1e-5);
      expect(maxDiff(matmul(Ah[k]!, Ih[k]!), eyeN(3))).toBeLessThan(1e-3);
      expect(maxDiff(matmul(Ch[k]!, transpose(Ch[k]!)), Sh[k]!)).toBeLessThan(1e-4);
      expect(maxDiff(matmul(Qh[k]!, Rh[k]!), Ah[k]!)).toBeLessThan(1e-5);
      expect(maxDiff(matmul(transpose(Qh[k]!), Qh[k]!), eyeN(3))).toBeLessThan(1e-5);
      const w = Array.from(Wd.slice(k * 3, k * 3 + 3), Number);
      expect(w[0]).toBeLessThanOrEqual(w[1]!);
      expect(w[1]).toBeLessThanOrEqual(w[2]!);
      expect(maxDiff(matmul(matmul(Vh[k]!, diag(w)), transpose(Vh[k]!)), Yh[k]!)).toBeLessThan(1e-5);
      const sv = Array.from(Sd.slice(k * 2, k * 2 + 2), Number);
      expect(maxDiff(matmul(matmul(SUh[k]!, diag(sv)), SVh[k]!), Gh[k]!)).toBeLessThan(1e-5);
    }
  });

  it("special values: singular det 0 and inverse non-finite, NaN/Inf propagate per batch element, empty batch", () =>
    checkSpecialValues());

  it("jit: solve and eigh trace once for two batch sizes", async () => {
    const f = jit((a: Tensor, b: Tensor) => [linalg.solve(a, b), linalg.eigvalsh(a.add(a.transpose()))] as const);
    for (const count of [5, 12]) {
      const a = mats32(randomMats(count, 3, 3, count, 3), count, 3, 3);
      const b = fromTypedArray(
        Float32Array.from({ length: count * 3 }, (_, i) => i % 5),
        [count, 3],
        { batchDim: 1 },
      );
      const [x] = await f.callAsync(a, b);
      const X = split(await x.data(), count, 3, 1);
      const Ah = await hostOf(a);
      const B = Array.from(await b.data(), Number);
      for (let k = 0; k < count; k++) {
        const ax = matmul(Ah[k]!, X[k]!);
        expect(maxDiff(ax, [[B[k * 3]!], [B[k * 3 + 1]!], [B[k * 3 + 2]!]])).toBeLessThan(1e-4);
      }
    }
    expect(f.stats.traces).toBe(1);
  });
});
