/**
 * Checks of the looped linear-algebra kernels (matrices above `LOOP_ABOVE` /
 * `LOOP_ABOVE_JACOBI`) on the current backend, read back asynchronously so that
 * every backend runs them: reconstruction identities checked by host loops,
 * NaN/Inf/singular/non-positive-definite inputs with hand-written expectations,
 * empty batches, and one jit trace for two batch sizes.
 */
import { expect } from "vitest";
import { fromTypedArray, jit, linalg, type Tensor } from "../../src/index.js";
import { eyeN, matmul, maxDiff, randomMats, spdMats, split, symMats, transpose } from "./helpers.js";

export type DT = "float32" | "float64";

export const matsOf = (d: Float64Array, count: number, m: number, n: number, dtype: DT): Tensor =>
  fromTypedArray(dtype === "float64" ? d : Float32Array.from(d), [count, m, n], { batchDim: 1 });

export async function hostOf(t: Tensor): Promise<number[][][]> {
  const s = t.shape;
  const [count, m, n] = s.length === 3 ? (s as [number, number, number]) : [s[0]!, 1, s[1]!];
  return split(await t.data(), count, m, n);
}

const diag = (v: number[]): number[][] => v.map((x, i) => v.map((_, j) => (i === j ? x : 0)));

/**
 * Tolerance for an identity on matrices of norm about `scale`: float64 at 1e-11,
 * float32 at 2e-5 per unit of n (the test matrices are well conditioned: random
 * entries plus n/2 on the diagonal, or SPD with n on the diagonal).
 */
export const tolOf = (dtype: DT, n: number, scale: number): number =>
  (dtype === "float64" ? 1e-11 : 2e-5) * n * Math.max(1, scale);

/** P·L·U = A, A·solve = b, A·inv = I, luSolve, det of a permuted triangular matrix, L·Lᵀ = S. */
export async function checkDirect(n: number, count: number, dtype: DT): Promise<void> {
  const d = randomMats(count, n, n, 11 + n, n / 2);
  const a = matsOf(d, count, n, n, dtype);
  const A = split(d, count, n, n);
  const tol = tolOf(dtype, n, n);
  const { P, L, U } = linalg.lu(a);
  const [hp, hl, hu] = await Promise.all([hostOf(P), hostOf(L), hostOf(U)]);
  for (let b = 0; b < count; b++) {
    expect(maxDiff(matmul(matmul(hp[b]!, hl[b]!), hu[b]!), A[b]!)).toBeLessThan(tol);
    // L unit lower, U upper, P a permutation.
    for (let i = 0; i < n; i++) {
      expect(hl[b]![i]![i]).toBe(1);
      for (let j = i + 1; j < n; j++) expect(hl[b]![i]![j]).toBe(0);
      for (let j = 0; j < i; j++) expect(hu[b]![i]![j]).toBe(0);
      expect(hp[b]![i]!.reduce((s, v) => s + v, 0)).toBe(1);
    }
  }
  const rhs = randomMats(count, n, 2, 5 + n);
  const x = await hostOf(linalg.solve(a, matsOf(rhs, count, n, 2, dtype)));
  const B = split(rhs, count, n, 2);
  const inv = await hostOf(linalg.inv(a));
  const f = linalg.luFactor(a);
  const x2 = await hostOf(linalg.luSolve(f, matsOf(rhs, count, n, 2, dtype)));
  for (let b = 0; b < count; b++) {
    expect(maxDiff(matmul(A[b]!, x[b]!), B[b]!)).toBeLessThan(tol);
    expect(maxDiff(matmul(A[b]!, x2[b]!), B[b]!)).toBeLessThan(tol);
    expect(maxDiff(matmul(A[b]!, inv[b]!), eyeN(n))).toBeLessThan(tol);
  }
  // det of an upper triangular matrix (diagonal 1..n scaled) with rows 0 and 1 swapped: -Π diag.
  const t = new Float64Array(n * n);
  let want = -1;
  for (let i = 0; i < n; i++) {
    const v = 1 + (i % 3) * 0.5;
    want *= v;
    for (let j = i; j < n; j++) t[i * n + j] = j === i ? v : ((i * 7 + j * 3) % 5) / 5 - 0.4;
  }
  const sw = new Float64Array(t);
  for (let j = 0; j < n; j++) [sw[j], sw[n + j]] = [t[n + j]!, t[j]!];
  const det = await linalg.det(matsOf(sw, 1, n, n, dtype)).data();
  expect(Math.abs(Number(det[0]) - want)).toBeLessThan((dtype === "float64" ? 1e-12 : 1e-5) * Math.abs(want) * n);
  const s = spdMats(count, n, 3 + n);
  const S = split(s, count, n, n);
  const l = await hostOf(linalg.cholesky(matsOf(s, count, n, n, dtype)));
  const u = await hostOf(linalg.cholesky(matsOf(s, count, n, n, dtype), { upper: true }));
  for (let b = 0; b < count; b++) {
    expect(maxDiff(matmul(l[b]!, transpose(l[b]!)), S[b]!)).toBeLessThan(tolOf(dtype, n, n * n));
    expect(maxDiff(u[b]!, transpose(l[b]!))).toBe(0);
  }
}

/** Q·R = A with Qᵀ·Q = I (reduced and complete, tall and wide). */
export async function checkQR(m: number, n: number, count: number, dtype: DT): Promise<void> {
  const d = randomMats(count, m, n, 7 + m + n);
  const A = split(d, count, m, n);
  const tol = tolOf(dtype, Math.max(m, n), 1);
  for (const mode of ["reduced", "complete"] as const) {
    const { Q, R } = linalg.qr(matsOf(d, count, m, n, dtype), { mode });
    const [q, r] = await Promise.all([hostOf(Q), hostOf(R)]);
    const k = mode === "complete" ? m : Math.min(m, n);
    expect(Q.shape).toEqual([count, m, k]);
    expect(R.shape).toEqual([count, k, n]);
    for (let b = 0; b < count; b++) {
      expect(maxDiff(matmul(q[b]!, r[b]!), A[b]!)).toBeLessThan(tol);
      expect(maxDiff(matmul(transpose(q[b]!), q[b]!), eyeN(k))).toBeLessThan(tol);
      for (let i = 0; i < k; i++) for (let j = 0; j < Math.min(i, n); j++) expect(r[b]![i]![j]).toBe(0);
    }
  }
}

/** V·Λ·Vᵀ = A with Vᵀ·V = I and ascending eigenvalues; U·S·Vh = A with orthonormal U, Vh, descending S. */
export async function checkJacobi(n: number, m: number, count: number, dtype: DT): Promise<void> {
  const d = symMats(count, n, 13 + n);
  const A = split(d, count, n, n);
  const tol = tolOf(dtype, n, 1) * 5;
  const e = linalg.eigh(matsOf(d, count, n, n, dtype));
  const [w, v] = await Promise.all([hostOf(e.eigenvalues), hostOf(e.eigenvectors)]);
  const wv = await hostOf(linalg.eigvalsh(matsOf(d, count, n, n, dtype)));
  for (let b = 0; b < count; b++) {
    const lam = w[b]![0]!;
    for (let i = 1; i < n; i++) expect(lam[i]!).toBeGreaterThanOrEqual(lam[i - 1]!);
    expect(maxDiff(matmul(matmul(v[b]!, diag(lam)), transpose(v[b]!)), A[b]!)).toBeLessThan(tol);
    expect(maxDiff(matmul(transpose(v[b]!), v[b]!), eyeN(n))).toBeLessThan(tol);
    expect(maxDiff(wv[b]!, [lam])).toBe(0);
  }
  for (const [r, c] of [
    [m, n],
    [n, m],
  ] as const) {
    const g = randomMats(count, r, c, 17 + r);
    const G = split(g, count, r, c);
    const k = Math.min(r, c);
    for (const full of [true, false]) {
      const { U, S, Vh } = linalg.svd(matsOf(g, count, r, c, dtype), { fullMatrices: full });
      const [u, s, vh] = await Promise.all([hostOf(U), hostOf(S), hostOf(Vh)]);
      const sv = await hostOf(linalg.svdvals(matsOf(g, count, r, c, dtype)));
      for (let b = 0; b < count; b++) {
        const sg = s[b]![0]!;
        for (let i = 1; i < k; i++) expect(sg[i]!).toBeLessThanOrEqual(sg[i - 1]!);
        const uk = u[b]!.map((row) => row.slice(0, k));
        const vk = vh[b]!.slice(0, k);
        expect(maxDiff(matmul(matmul(uk, diag(sg)), vk), G[b]!)).toBeLessThan(tol);
        expect(maxDiff(matmul(transpose(u[b]!), u[b]!), eyeN(u[b]![0]!.length))).toBeLessThan(tol);
        expect(maxDiff(matmul(vh[b]!, transpose(vh[b]!)), eyeN(vh[b]!.length))).toBeLessThan(tol);
        expect(maxDiff(sv[b]!, [sg])).toBeLessThan(tol);
      }
    }
  }
}

/**
 * Special values on n×n matrices (n above the unroll limits): a zero matrix is
 * singular (det 0, inverse and solve non-finite, never a hang), a NaN entry gives
 * NaN in its batch element only, a non-positive-definite matrix gives NaN from its
 * failing column on, Inf entries give non-finite results, empty batches give
 * empty results of the right shapes. Expected values written by hand.
 */
export async function checkLoopedSpecial(n: number, dtype: DT): Promise<void> {
  const eye = new Float64Array(n * n);
  for (let i = 0; i < n; i++) eye[i * n + i] = 2;
  const data = new Float64Array(3 * n * n);
  data.set(eye, 0); // batch 0: 2·I
  // batch 1: zeros (singular); batch 2: 2·I with a NaN
  data.set(eye, 2 * n * n);
  data[2 * n * n + n] = NaN; // (1, 0): in the lower triangle, which eigh reads
  const a = matsOf(data, 3, n, n, dtype);
  const det = Array.from(await linalg.det(a).data());
  expect(det[0]).toBe(2 ** n);
  expect(det[1]).toBe(0);
  expect(det[2]).toBeNaN();
  const inv = await hostOf(linalg.inv(a));
  expect(
    maxDiff(
      inv[0]!,
      eyeN(n).map((r) => r.map((v) => v / 2)),
    ),
  ).toBe(0);
  expect(inv[1]!.flat().every((v) => !Number.isFinite(v))).toBe(true);
  expect(inv[2]!.flat().some((v) => Number.isNaN(v))).toBe(true);
  const e = await hostOf(linalg.eigvalsh(a));
  expect(e[0]![0]!.every((v) => v === 2)).toBe(true);
  expect(e[1]![0]!.every((v) => v === 0)).toBe(true);
  expect(e[2]![0]!.some((v) => Number.isNaN(v))).toBe(true);
  // Not positive definite: diag(1, -1, 1, ...): column 1 and after are NaN, column 0 stays.
  const npd = new Float64Array(n * n);
  for (let i = 0; i < n; i++) npd[i * n + i] = i === 1 ? -1 : 1;
  const c = (await hostOf(linalg.cholesky(matsOf(npd, 1, n, n, dtype))))[0]!;
  expect(c[0]![0]).toBe(1);
  expect(c[1]![1]).toBeNaN();
  expect(c[n - 1]![n - 1]).toBeNaN();
  // Inf: det of diag(Inf, 1, ...) is Inf.
  const inf = new Float64Array(eye);
  inf[0] = Infinity;
  expect((await linalg.det(matsOf(inf, 1, n, n, dtype)).data())[0]).toBe(Infinity);
  // Empty batches.
  const empty = matsOf(new Float64Array(0), 0, n, n, dtype);
  expect(linalg.inv(empty).shape).toEqual([0, n, n]);
  expect((await linalg.inv(empty).data()).length).toBe(0);
  expect((await linalg.eigh(empty).eigenvalues.data()).length).toBe(0);
  expect(linalg.svd(empty).U.shape).toEqual([0, n, n]);
  expect((await linalg.det(empty).data()).length).toBe(0);
}

/** A jit function of looped routines traces once for two batch sizes; values as eagerly. */
export async function checkLoopedJit(n: number, dtype: DT): Promise<void> {
  const f = jit((a: Tensor, b: Tensor) => [linalg.solve(a, b), linalg.det(a), linalg.eigvalsh(a.add(a.transpose()))]);
  for (const count of [2, 5]) {
    const d = randomMats(count, n, n, 23 + count, n / 2);
    const r = randomMats(count, n, 1, 29 + count);
    const a = matsOf(d, count, n, n, dtype);
    const b = fromTypedArray(dtype === "float64" ? r : Float32Array.from(r), [count, n], { batchDim: 1 });
    const [x, det, w] = await f.callAsync(a, b);
    const [ex, edet, ew] = [linalg.solve(a, b), linalg.det(a), linalg.eigvalsh(a.add(a.transpose()))];
    expect(Array.from(await x!.data())).toEqual(Array.from(await ex.data()));
    expect(Array.from(await det!.data())).toEqual(Array.from(await edet.data()));
    expect(Array.from(await w!.data())).toEqual(Array.from(await ew.data()));
  }
  expect(f.stats.traces).toBe(1);
}
