/**
 * The unrolled direct routines are ir/routines.ts's algorithms (src/linalg/unroll.ts):
 * on float64 they give bit for bit what the routine gives run on plain JS numbers
 * (`numberMachine`, the reference interpreter's machine), ties, zero pivots and NaN
 * included; and `luSolve` clamps out-of-range pivots as the looped kernel does
 * (expected values from a plain JS getrs written out below).
 */
import { describe, expect, it } from "vitest";
import { numberMachine, routineSpec, runRoutine, type RoutineName } from "../../ir/routines.js";
import { linalg, tensor } from "../../src/index.js";
import { host, mats, randomMats, spdMats } from "./helpers.js";

const f64 = { dtype: "float64" as const };

/** Runs a routine of ir/routines.ts on numbers: one base matrix per input, the output block of `size`. */
function reference(name: RoutineName, ins: readonly number[][], base: number[], size: number, rhsCols = 0): number[] {
  const out = new Array<number>(size).fill(0);
  const M = numberMachine("float64", (i, at) => ins[i]![at]!, {
    get: (at) => out[at]!,
    set: (at, v) => void (out[at] = v),
  });
  runRoutine(M, routineSpec(name, base, { cols: 0, sweeps: 0 }, "float64", rhsCols));
  return out;
}

/** Bitwise equality (NaN equals NaN). */
function same(got: readonly number[], want: readonly number[]): void {
  expect(got.length).toBe(want.length);
  const bad = got.map((g, i) => (Object.is(g, want[i]) || (g === 0 && want[i] === 0) ? -1 : i)).filter((i) => i >= 0);
  expect(bad.map((i) => [i, got[i], want[i]])).toEqual([]);
}

/**
 * Bitwise equality except where the reference is NaN and the unrolled result is not:
 * unrolled, a structural zero (the identity Q starts from) times NaN is 0, as BLAS
 * skips a zero multiplier (src/linalg/scalar.ts), so fewer entries become NaN.
 */
function sameBesideNaN(got: readonly number[], want: readonly number[]): void {
  same(
    got,
    want.map((w, i) => (Number.isNaN(w) ? got[i]! : w)),
  );
  expect(got.some(Number.isNaN)).toBe(want.some(Number.isNaN));
}

/** Test matrices of size n: random, with ties in the pivot column, singular (a zero pivot), with a NaN. */
function cases(n: number): number[][] {
  const out: number[][] = [];
  const r = randomMats(3, n, n, 7 + n, 0.5);
  for (let b = 0; b < 3; b++) out.push(Array.from(r.subarray(b * n * n, (b + 1) * n * n)));
  out.push(Array.from({ length: n * n }, (_, k) => (k % n === 0 ? 2 : ((k * 7) % 5) - 2))); // column 0 all 2: ties
  out.push(Array.from({ length: n * n }, (_, k) => (Math.floor(k / n) === 1 ? 0 : k + 1))); // a zero row
  out.push(Array.from({ length: n * n }, (_, k) => (k === n + 1 ? NaN : Math.cos(k))));
  return out;
}

describe("unrolled routines are ir/routines.ts's, bit for bit (float64)", () => {
  for (const n of [1, 3, 5]) {
    it(`n = ${n}: luFactor, solve, inv and cholesky`, () => {
      const cs = cases(n);
      const a = tensor(
        cs.map((c) => Array.from({ length: n }, (_, i) => c.slice(i * n, (i + 1) * n))),
        { ...f64, batchDim: 1 },
      );
      const b = tensor(
        cs.map((_, k) => Array.from({ length: n }, (_, i) => [i + k, 1 - i])),
        { ...f64, batchDim: 1 },
      );
      const { LU, pivots } = linalg.luFactor(a);
      const LUs = host(LU);
      const pivs = pivots.toArraySync() as number[][];
      const xs = host(linalg.solve(a, b));
      const invs = host(linalg.inv(a));
      cs.forEach((c, k) => {
        const w = n + 2;
        const F = reference("lu", [c], [n, n], n * w);
        same(
          LUs[k]!.flat(),
          Array.from({ length: n * n }, (_, e) => F[Math.floor(e / n) * w + (e % n)]!),
        );
        expect(pivs[k]).toEqual(Array.from({ length: n }, (_, i) => F[i * w + n + 1]! + 1));
        const bk = Array.from({ length: n }, (_, i) => [i + k, 1 - i]).flat();
        same(xs[k]!.flat(), reference("lu_solve", [F, bk], [n, n], n * 2, 2));
        const eye = Array.from({ length: n * n }, (_, e) => (Math.floor(e / n) === e % n ? 1 : 0));
        same(invs[k]!.flat(), reference("lu_solve", [F, eye], [n, n], n * n, n));
      });
      const spd = spdMats(2, n, 3 + n);
      const L = host(linalg.cholesky(mats(spd, 2, n, n, "float64")));
      for (let k = 0; k < 2; k++)
        same(
          L[k]!.flat(),
          reference("cholesky", [Array.from(spd.subarray(k * n * n, (k + 1) * n * n))], [n, n], n * n),
        );
      const notPd = cases(n)[2]!;
      same(
        host(
          linalg.cholesky(tensor([Array.from({ length: n }, (_, i) => notPd.slice(i * n, (i + 1) * n))], f64)),
        )[0]!.flat(),
        reference("cholesky", [notPd], [n, n], n * n),
      );
    });
  }
});

describe("unrolled QR is ir/routines.ts's, bit for bit (float64)", () => {
  it("qr, reduced and complete, of 3×3, 4×2 and 2×4 matrices (one with a zero sub-column, one with a NaN)", () => {
    for (const [m, n] of [
      [3, 3],
      [4, 2],
      [2, 4],
    ] as const) {
      const r = randomMats(2, m, n, 11 + m);
      const cs = [0, 1].map((b) => Array.from(r.subarray(b * m * n, (b + 1) * m * n)));
      cs.push(cs[0]!.map((v, k) => (k % n === 0 && k >= n ? 0 : v))); // column 0 zero below the diagonal
      cs.push(cs[1]!.map((v, k) => (k === m * n - 1 ? NaN : v)));
      const a = tensor(
        cs.map((c) => Array.from({ length: m }, (_, i) => c.slice(i * n, (i + 1) * n))),
        { ...f64, batchDim: 1 },
      );
      for (const mode of ["reduced", "complete"] as const) {
        const cols = mode === "complete" ? m : Math.min(m, n);
        const rows = mode === "complete" ? m : Math.min(m, n);
        const { Q, R } = linalg.qr(a, { mode });
        const Qs = host(Q);
        const Rs = host(R);
        const w = cols + n + 1;
        cs.forEach((c, k) => {
          const out = new Array<number>(m * w).fill(0);
          const M = numberMachine("float64", (_i, at) => c[at]!, {
            get: (at) => out[at]!,
            set: (at, v) => void (out[at] = v),
          });
          runRoutine(M, routineSpec("qr", [m, n], { cols, sweeps: 0 }, "float64"));
          const check = k === 3 ? sameBesideNaN : same;
          check(
            Qs[k]!.flat(),
            Array.from({ length: m * cols }, (_, e) => out[Math.floor(e / cols) * w + (e % cols)]!),
          );
          check(
            Rs[k]!.flat(),
            Array.from({ length: rows * n }, (_, e) => out[Math.floor(e / n) * w + cols + (e % n)]!),
          );
        });
      }
    }
  });
});

describe("luSolve's pivots", () => {
  it("an out-of-range pivot is clamped into [k, n-1], as in the looped kernel (3×3 and 9×9)", () => {
    for (const n of [3, 9]) {
      // Factors of a well-conditioned matrix: L unit lower (0.25 below), U upper (n on the diagonal, 1 above).
      const LU = Array.from({ length: n }, (_, i) =>
        Array.from({ length: n }, (_, j) => (j < i ? 0.25 : j === i ? n : 1)),
      );
      const piv = Array.from({ length: n }, (_, k) => [n + 5, 0, -3, n][k % 4]!); // 1-based, mostly out of range
      const b = Array.from({ length: n }, (_, i) => i * i - 2);
      // Plain getrs with the documented clamp.
      const y = [...b];
      for (let k = 0; k < n; k++) {
        const p = Math.min(Math.max(piv[k]! - 1, k), n - 1);
        [y[k], y[p]] = [y[p]!, y[k]!];
      }
      for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) y[i]! -= LU[i]![j]! * y[j]!;
      for (let i = n - 1; i >= 0; i--) {
        for (let j = i + 1; j < n; j++) y[i]! -= LU[i]![j]! * y[j]!;
        y[i]! /= LU[i]![i]!;
      }
      const x = linalg.luSolve({ LU: tensor(LU, f64), pivots: tensor(piv, { dtype: "int32" }) }, tensor(b, f64));
      const got = Array.from(x.dataSync() as Float64Array);
      got.forEach((g, i) => expect(Math.abs(g - y[i]!)).toBeLessThan(1e-12));
    }
  });
});
