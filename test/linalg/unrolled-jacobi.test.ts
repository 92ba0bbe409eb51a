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
import { linalg, tensor, type Tensor } from "../../src/index.js";
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

/** A float64 batch of row-major m×n matrices. */
function batch(cs: readonly number[][], m: number, n: number): Tensor {
  const rows = (c: readonly number[]) => Array.from({ length: m }, (_, i) => c.slice(i * n, (i + 1) * n));
  return tensor(cs.map(rows), { dtype: "float64", batchDim: 1 });
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

/** Per batch element, each result flattened. */
function perElement(...ts: Tensor[]): number[][][] {
  const hs = ts.map((t) => host(t.baseDim === 1 ? t.unsqueeze(-1) : t).map((x) => x.flat()));
  return hs[0]!.map((_, k) => hs.map((h) => h[k]!));
}

/**
 * A routine's unrolled results on a batch (per element, each flattened) against the
 * same results sliced from the fixed-sweep routine's output block.
 */
interface Case {
  readonly title: string;
  readonly name: "eigh" | "svd";
  readonly m: number;
  readonly n: number;
  readonly cs: number[][];
  readonly got: (a: Tensor) => number[][][];
  readonly want: (out: readonly number[]) => number[][];
}

function eighCase(n: number): Case {
  return {
    title: `eigh and eigvalsh n = ${n}`,
    name: "eigh",
    m: n,
    n,
    cs: symmetricCases(n),
    got: (a) => {
      const { eigenvalues, eigenvectors } = linalg.eigh(a);
      return perElement(eigenvalues, linalg.eigvalsh(a), eigenvectors);
    },
    want: (out) => {
      const w = Array.from({ length: n }, (_, i) => out[i * n + i]!);
      return [w, w, out.slice(n * n)];
    },
  };
}

function svdCase(m: number, n: number): Case {
  const r = randomMats(2, m, n, 50 + m + n);
  const cs = [0, 1].map((b) => Array.from(r.subarray(b * m * n, (b + 1) * m * n)));
  cs.push(Array.from({ length: m * n }, (_, k) => (k % (n + 1) === 0 ? 1 + (k % 2) : 0)));
  cs.push(Array.from({ length: m * n }, () => 1));
  return {
    title: `svd and svdvals ${m}×${n}: σ and V (U is a QR of the rotated columns)`,
    name: "svd",
    m,
    n,
    cs,
    got: (a) => {
      const { S, Vh } = linalg.svd(a);
      return perElement(S, linalg.svdvals(a), Vh);
    },
    want: (out) => {
      const sv = out.slice((m + n) * n);
      // Vh's rows are V's columns.
      const V = Array.from({ length: n }, (_, i) => out.slice((m + i) * n, (m + i + 1) * n));
      return [sv, sv, V[0]!.map((_, j) => V.map((row) => row[j]!)).flat()];
    },
  };
}

describe("unrolled eigh and svd are ir/routines.ts's fixed-sweep eigh and svd, bit for bit (float64)", () => {
  const cases = [eighCase(2), eighCase(3), eighCase(5), svdCase(3, 3), svdCase(4, 2), svdCase(5, 5)];
  for (const { title, name, m, n, cs, got, want } of cases) {
    it(title, () => {
      const results = got(batch(cs, m, n));
      cs.forEach((c, k) => {
        const expected = want(fixedRoutine(name, c, m, n));
        results[k]!.forEach((r, i) => expect(bits(r)).toEqual(bits(expected[i]!)));
      });
    });
  }
});
