/**
 * The unrolled Jacobi routines (n ≤ LOOP_ABOVE_JACOBI) are ir/routines.ts's `eigh` and
 * `svd` in their fixed-sweep form (`RoutineSpec.fixedSweeps`, staged by
 * src/linalg/unroll.ts): on float64, eigenvalues, eigenvectors, singular values and V
 * are bit for bit what the routine gives on plain JS numbers (`numberMachine`),
 * including diagonal input (exactly zero pairs, rotated by the identity), repeated
 * eigenvalues (the routine's stable sort keeps their order) and the state passed through
 * buffers between sweeps (n ≥ 5).
 */
import { describe, expect, it } from "vitest";
import { numberMachine, runRoutine, type RoutineSpec } from "../../ir/routines.js";
import { linalg, tensor } from "../../src/index.js";
import { host, randomMats, symMats } from "./helpers.js";

/** The fixed-sweep routine on one row-major m×n matrix: its whole output block. */
function fixedRoutine(name: "eigh" | "svd", a: readonly number[], m: number, n: number): number[] {
  const spec: RoutineSpec = {
    name,
    m,
    n,
    cols: 0,
    sweeps: linalg.defaultSweeps(n),
    dtype: "float64",
    fixedSweeps: true,
  };
  const out = new Array<number>(name === "eigh" ? 2 * n * n : (m + n + 1) * n).fill(0);
  runRoutine(
    numberMachine("float64", (_, at) => a[at]!, { get: (at) => out[at]!, set: (at, v) => void (out[at] = v) }),
    spec,
  );
  return out;
}

/** Bitwise, -0 and 0 alike (NaN equals NaN under toEqual). */
const bits = (xs: readonly number[]): number[] => xs.map((x) => x + 0);

/** Symmetric test matrices: random, diagonal with a repeated entry, zero, one exactly zero pair. */
function symmetricCases(n: number): number[][] {
  const r = symMats(2, n, 40 + n);
  const out = [0, 1].map((b) => Array.from(r.subarray(b * n * n, (b + 1) * n * n)));
  out.push(Array.from({ length: n * n }, (_, k) => (k % (n + 1) === 0 ? [2, 2, -1, 2, 3, 0][k / (n + 1)]! : 0)));
  out.push(new Array<number>(n * n).fill(0));
  out.push(
    Array.from({ length: n * n }, (_, k) => (k === 1 || k === n ? 0 : Math.cos(k % n) + Math.cos(Math.floor(k / n)))),
  );
  return out;
}

describe("unrolled eigh and svd are ir/routines.ts's fixed-sweep eigh and svd, bit for bit (float64)", () => {
  for (const n of [2, 3, 5]) {
    it(`eigh and eigvalsh n = ${n}`, () => {
      const cs = symmetricCases(n);
      const a = tensor(
        cs.map((c) => Array.from({ length: n }, (_, i) => c.slice(i * n, (i + 1) * n))),
        { dtype: "float64", batchDim: 1 },
      );
      const { eigenvalues, eigenvectors } = linalg.eigh(a);
      const W = eigenvalues.toArraySync() as number[][];
      const Wv = linalg.eigvalsh(a).toArraySync() as number[][];
      const V = host(eigenvectors);
      cs.forEach((c, k) => {
        const out = fixedRoutine("eigh", c, n, n);
        const w = Array.from({ length: n }, (_, i) => out[i * n + i]!);
        expect(bits(W[k]!)).toEqual(bits(w));
        expect(bits(Wv[k]!)).toEqual(bits(w));
        expect(bits(V[k]!.flat())).toEqual(bits(out.slice(n * n)));
      });
    });
  }

  for (const [m, n] of [
    [3, 3],
    [4, 2],
    [5, 5],
  ] as const) {
    it(`svd and svdvals ${m}×${n}: σ and V (U is a QR of the rotated columns)`, () => {
      const r = randomMats(2, m, n, 50 + m + n);
      const cs = [0, 1].map((b) => Array.from(r.subarray(b * m * n, (b + 1) * m * n)));
      cs.push(Array.from({ length: m * n }, (_, k) => (k % (n + 1) === 0 ? 1 + (k % 2) : 0)));
      cs.push(Array.from({ length: m * n }, () => 1));
      const a = tensor(
        cs.map((c) => Array.from({ length: m }, (_, i) => c.slice(i * n, (i + 1) * n))),
        { dtype: "float64", batchDim: 1 },
      );
      const { S, Vh } = linalg.svd(a);
      const Ss = S.toArraySync() as number[][];
      const Sv = linalg.svdvals(a).toArraySync() as number[][];
      const Vhs = host(Vh);
      cs.forEach((c, k) => {
        const out = fixedRoutine("svd", c, m, n);
        const sv = out.slice((m + n) * n);
        expect(bits(Ss[k]!)).toEqual(bits(sv));
        expect(bits(Sv[k]!)).toEqual(bits(sv));
        // Vh's rows are V's columns.
        const V = Array.from({ length: n }, (_, i) => out.slice((m + i) * n, (m + i + 1) * n));
        expect(bits(Vhs[k]!.flat())).toEqual(bits(V[0]!.map((_, j) => V.map((row) => row[j]!)).flat()));
      });
    });
  }
});
