/**
 * The linear-algebra accuracy suite (issue 26): orthogonality and residuals of QR,
 * SVD, eigh, Cholesky and LU on rank-deficient, constant, ill-conditioned (1e8,
 * 1e12), repeated-eigenvalue and random matrices, checked on the host in float64
 * against the identities (QᵀQ = I, QR = A, UᵀU = VᵀV = I, UΣVᵀ = A, VᵀV = I,
 * AV = VΛ, LLᵀ = A, A = PLU), never against the code under test.
 *
 * Bounds (docs/linalg-accuracy.md), ε the dtype's machine epsilon (2^-52, 2^-23),
 * ‖A‖ the Frobenius norm of the matrix as given (float32 inputs rounded first):
 *   orthogonality  max|QᵀQ - I|, max|UᵀU - I|, max|VᵀV - I|  ≤ C·n·ε
 *   residual       max|QR - A|, max|UΣVᵀ - A|, max|AV - VΛ|, max|LLᵀ - A|, max|PLU - A|
 *                                                           ≤ C·n·ε·‖A‖
 * with C = `C_BOUND`. Cholesky of a matrix that is positive definite with margin
 * (λ_min > n·ε·‖A‖·100) must succeed (info 0); of one that is not (constant: the
 * second pivot is exactly 0), must fail with info 2; otherwise either succeed within
 * the bound or report failure consistently (info k > 0, L finite before column k-1,
 * NaN from it on).
 */
import { expect } from "vitest";
import { fromTypedArray, linalg, type Tensor } from "../../src/index.js";
import { rng } from "./helpers.js";

export type DT = "float32" | "float64";
export type Alg = "qr" | "svd" | "eigh" | "cholesky" | "lu";

/** The constant of the stated bounds (C·n·ε, C·n·ε·‖A‖). */
export const C_BOUND = 4;

export const EPS: Record<DT, number> = { float64: 2 ** -52, float32: 2 ** -23 };

/** One measured case: the worst orthogonality and residual (relative: divided by n·ε and n·ε·‖A‖). */
export interface Measured {
  readonly alg: Alg;
  readonly family: string;
  readonly n: number;
  readonly dtype: DT;
  readonly backend: string;
  /** max orthogonality error (absolute). */
  readonly orth: number;
  /** max residual / ‖A‖ (absolute per unit norm). */
  readonly resid: number;
}

type Mat = Float64Array; // row-major n×n

/**
 * U·diag(s)·Wᵀ, U and W orthogonal products of four Householder reflections
 * I - 2·v·vᵀ with random unit v (W = U when `sym`): O(n²) per reflection, so the
 * suite's large sizes are cheap to build, and the singular values (eigenvalues
 * when `sym`) are exactly `s` up to rounding.
 */
function spectral(n: number, s: readonly number[], seed: number, sym: boolean): Mat {
  const r = rng(seed);
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++) a[i * n + i] = s[i]!;
  const unit = (): Float64Array => {
    const v = Float64Array.from({ length: n }, r);
    let nn = 0;
    for (let i = 0; i < n; i++) nn += v[i]! * v[i]!;
    nn = Math.sqrt(nn);
    return v.map((x) => x / nn);
  };
  const left = (v: Float64Array): void => {
    // a := (I - 2vvᵀ)·a
    for (let j = 0; j < n; j++) {
      let d = 0;
      for (let i = 0; i < n; i++) d += v[i]! * a[i * n + j]!;
      for (let i = 0; i < n; i++) a[i * n + j]! -= 2 * d * v[i]!;
    }
  };
  const right = (v: Float64Array): void => {
    // a := a·(I - 2vvᵀ)
    for (let i = 0; i < n; i++) {
      let d = 0;
      for (let j = 0; j < n; j++) d += a[i * n + j]! * v[j]!;
      for (let j = 0; j < n; j++) a[i * n + j]! -= 2 * d * v[j]!;
    }
  };
  for (let k = 0; k < 4; k++) {
    const v = unit();
    left(v);
    right(sym ? v : unit());
  }
  if (sym) for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) a[j * n + i] = a[i * n + j]!;
  return a;
}

const geometric = (n: number, cond: number): number[] =>
  Array.from({ length: n }, (_, i) => (n === 1 ? 1 : cond ** (-i / (n - 1))));

function randomMat(n: number, seed: number): Mat {
  return Float64Array.from({ length: n * n }, rng(seed));
}

/** X·Yᵀ (Y = X when `sym`), X, Y n×r. */
function lowRank(n: number, r: number, seed: number, sym: boolean): Mat {
  const g = rng(seed + 1);
  const X = Float64Array.from({ length: n * r }, g);
  const Y = sym ? X : Float64Array.from({ length: n * r }, g);
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let k = 0; k < r; k++) s += X[i * r + k]! * Y[j * r + k]!;
      a[i * n + j] = s;
    }
  return a;
}

const cache = new Map<string, [string, Mat][]>();

/**
 * The matrix families of an algorithm at size n: name → matrix. From n = 128 on
 * (QR, Cholesky, LU only), four of the six, for CI time: random, constant, rank
 * deficient and cond 1e12.
 */
export function families(alg: Alg, n: number): [string, Mat][] {
  const kind = alg === "cholesky" ? "spd" : alg === "eigh" ? "sym" : "general";
  const key = `${kind}:${n}`;
  let f = cache.get(key);
  if (f === undefined) {
    f = build(alg, n);
    if (n >= 128) f = f.filter(([name]) => name !== "repeated" && name !== "cond1e8");
    cache.set(key, f);
  }
  return f;
}

function build(alg: Alg, n: number): [string, Mat][] {
  const sym = alg === "eigh" || alg === "cholesky";
  const rank = Math.max(1, Math.floor(n / 3));
  if (alg === "cholesky") {
    const spd = (s: number[], seed: number) => spectral(n, s, seed, true);
    const x = randomMat(n, 11 + n);
    const a = new Float64Array(n * n);
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++) {
        let s = i === j ? 1 : 0;
        for (let k = 0; k < n; k++) s += (x[i * n + k]! * x[j * n + k]!) / n;
        a[i * n + j] = s;
      }
    return [
      ["random", a],
      ["cond1e8", spd(geometric(n, 1e8), 21 + n)],
      ["cond1e12", spd(geometric(n, 1e12), 31 + n)],
      [
        "repeated",
        spd(
          Array.from({ length: n }, (_, i) => (i < n / 2 ? 1 : 3)),
          41 + n,
        ),
      ],
      ["rank", lowRank(n, rank, 51 + n, true)],
      ["constant", new Float64Array(n * n).fill(1)],
    ];
  }
  const random = sym
    ? (() => {
        const x = randomMat(n, 61 + n);
        for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) x[j * n + i] = x[i * n + j]!;
        return x;
      })()
    : randomMat(n, 61 + n);
  // Signed spectra for the symmetric families (eigenvalues of both signs).
  const signed = (s: number[]) => (sym ? s.map((v, i) => (i % 2 ? -v : v)) : s);
  return [
    ["random", random],
    ["constant", new Float64Array(n * n).fill(1)],
    ["rank", lowRank(n, rank, 71 + n, sym)],
    ["cond1e8", spectral(n, signed(geometric(n, 1e8)), 81 + n, sym)],
    ["cond1e12", spectral(n, signed(geometric(n, 1e12)), 91 + n, sym)],
    ["repeated", spectral(n, signed(Array.from({ length: n }, (_, i) => (i < n / 2 ? 1 : 2))), 101 + n, sym)],
  ];
}

/** The matrices as given to the routine: rounded to the dtype. */
function rounded(a: Mat, dtype: DT): Mat {
  return dtype === "float64" ? a : Float64Array.from(Float32Array.from(a));
}

function frob(a: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * a[i]!;
  return Math.sqrt(s);
}

/** max |XᵀX - I| for X (rows×cols, row-major at offset `off`); NaN counts as Infinity. */
function orthErr(x: ArrayLike<number>, off: number, rows: number, cols: number): number {
  const xt = new Float64Array(cols * rows);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) xt[c * rows + r] = x[off + r * cols + c]!;
  const g = product(xt, 0, rows, x, off, cols, cols, rows);
  let e = 0;
  for (let i = 0; i < cols; i++)
    for (let j = 0; j < cols; j++) {
      const d = Math.abs(g[i * cols + j]! - (i === j ? 1 : 0));
      e = Number.isNaN(d) ? Infinity : Math.max(e, d);
    }
  return e;
}

/** max |B - A| over n×n, NaN as Infinity. */
function diff(b: ArrayLike<number>, a: Mat): number {
  let e = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(b[i]! - a[i]!);
    e = Number.isNaN(d) ? Infinity : Math.max(e, d);
  }
  return e;
}

/**
 * X·diag(d)·Y (or X·diag(d)·Yᵀ when `transY`): X n×k at offset ox (row width wx),
 * Y k×n at offset oy (row width wy), as an n×n row-major array.
 */
function product(
  X: ArrayLike<number>,
  ox: number,
  wx: number,
  Y: ArrayLike<number>,
  oy: number,
  wy: number,
  n: number,
  k: number,
  d?: (j: number) => number,
  transY = false,
): Float64Array {
  const y = new Float64Array(k * n);
  for (let t = 0; t < k; t++)
    for (let j = 0; j < n; j++) y[t * n + j] = transY ? Y[oy + j * wy + t]! : Y[oy + t * wy + j]!;
  const out = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let t = 0; t < k; t++) {
      const xit = X[ox + i * wx + t]! * (d ? d(t) : 1);
      const row = t * n;
      const o = i * n;
      for (let j = 0; j < n; j++) out[o + j]! += xit * y[row + j]!;
    }
  return out;
}

function tensorOf(ms: readonly Mat[], n: number, dtype: DT): Tensor {
  const flat = new Float64Array(ms.length * n * n);
  ms.forEach((m, b) => flat.set(m, b * n * n));
  return fromTypedArray(dtype === "float64" ? flat : Float32Array.from(flat), [ms.length, n, n], { batchDim: 1 });
}

/** How many of the indices 0..n-1 `bad` holds for (a check that should find none). */
function countIndices(n: number, bad: (j: number) => boolean): number {
  let count = 0;
  for (let j = 0; j < n; j++) if (bad(j)) count++;
  return count;
}

/** How many entries (i, j) of an n×n matrix `bad` holds for (a check that should find none). */
function countEntries(n: number, bad: (i: number, j: number) => boolean): number {
  let count = 0;
  for (let i = 0; i < n; i++) count += countIndices(n, (j) => bad(i, j));
  return count;
}

async function read(t: Tensor): Promise<Float64Array> {
  return Float64Array.from(await t.data(), Number);
}

/**
 * Runs `alg` on every family at size n (one batched call) on the current backend,
 * checks the identities against the bounds, and returns the measurements.
 */
export async function measure(alg: Alg, n: number, dtype: DT, backend: string): Promise<Measured[]> {
  const fam = families(alg, n);
  const A = fam.map(([, a]) => rounded(a, dtype));
  const x = tensorOf(A, n, dtype);
  const eps = EPS[dtype];
  const nn = n * n;
  const out: Measured[] = [];
  const record = (b: number, orth: number, resid: number): void => {
    const normA = frob(A[b]!);
    const r = normA === 0 ? resid : resid / normA;
    out.push({ alg, family: fam[b]![0], n, dtype, backend, orth, resid: r });
    const what = `${alg} ${fam[b]![0]} n=${n} ${dtype} ${backend}`;
    if (!(orth <= C_BOUND * n * eps))
      expect(orth, `${what}: orthogonality ${orth} > ${C_BOUND}·n·ε`).toBeLessThanOrEqual(C_BOUND * n * eps);
    if (!(r <= C_BOUND * n * eps))
      expect(r, `${what}: residual/‖A‖ ${r} > ${C_BOUND}·n·ε`).toBeLessThanOrEqual(C_BOUND * n * eps);
  };
  if (alg === "qr") {
    const { Q, R } = linalg.qr(x);
    const [q, r] = await Promise.all([read(Q), read(R)]);
    A.forEach((a, b) => {
      const o = b * nn;
      const below = countEntries(n, (i, j) => j < i && r[o + i * n + j] !== 0);
      expect(below, "R's entries below the diagonal that are not 0").toBe(0);
      record(b, orthErr(q, o, n, n), diff(product(q, o, n, r, o, n, n, n), a));
    });
  } else if (alg === "svd") {
    const { U, S, Vh } = linalg.svd(x);
    const [u, s, vh] = await Promise.all([read(U), read(S), read(Vh)]);
    A.forEach((a, b) => {
      const o = b * nn;
      const order = countIndices(n, (j) => !(s[b * n + j]! >= 0) || (j > 0 && !(s[b * n + j]! <= s[b * n + j - 1]!)));
      expect(order, "singular values negative or not descending").toBe(0);
      // Vh's rows orthonormal: (Vhᵀ)ᵀ·Vhᵀ = Vh·Vhᵀ, i.e. the columns of Vhᵀ.
      const vhT = new Float64Array(nn);
      for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) vhT[j * n + i] = vh[o + i * n + j]!;
      const orth = Math.max(orthErr(u, o, n, n), orthErr(vhT, 0, n, n));
      record(
        b,
        orth,
        diff(
          product(u, o, n, vh, o, n, n, n, (t) => s[b * n + t]!),
          a,
        ),
      );
    });
  } else if (alg === "eigh") {
    const { eigenvalues, eigenvectors } = linalg.eigh(x);
    const [w, v] = await Promise.all([read(eigenvalues), read(eigenvectors)]);
    A.forEach((a, b) => {
      const o = b * nn;
      const order = countIndices(n, (j) => j > 0 && !(w[b * n + j]! >= w[b * n + j - 1]!));
      expect(order, "eigenvalues not ascending").toBe(0);
      // A·V - V·Λ, and VᵀV = I.
      const av = product(Float64Array.from(a), 0, n, v, o, n, n, n);
      const vl = product(
        v,
        o,
        n,
        Float64Array.from({ length: nn }, (_, k) => (k % (n + 1) === 0 ? 1 : 0)),
        0,
        n,
        n,
        n,
        (t) => w[b * n + t]!,
      );
      record(b, orthErr(v, o, n, n), diff(av, vl));
    });
  } else if (alg === "cholesky") {
    const { L, info } = linalg.choleskyEx(x);
    const [l, inf] = await Promise.all([read(L), read(info)]);
    A.forEach((a, b) => {
      const o = b * nn;
      const name = fam[b]![0];
      const k = inf[b]!;
      const what = `cholesky ${name} n=${n} ${dtype} ${backend}`;
      const above = countEntries(n, (i, j) => j > i && l[o + i * n + j] !== 0);
      expect(above, `${what}: L's entries above the diagonal that are not 0`).toBe(0);
      const margin = name === "random" || name === "repeated" || (name === "cond1e8" && 1e-8 > 100 * n * eps);
      if (name === "constant" && n >= 2) expect(k, what).toBe(2);
      if (margin) expect(k, what).toBe(0);
      if (k === 0) {
        expect(
          Array.from({ length: n }, (_, j) => l[o + j * n + j]!).every((d) => d > 0),
          `${what}: L's diagonal positive`,
        ).toBe(true);
        record(b, 0, diff(product(l, o, n, l, o, n, n, n, undefined, true), a));
      } else {
        // The failure signal: finite before column k-1, NaN on its diagonal and after.
        const d = Array.from({ length: n }, (_, j) => l[o + j * n + j]!);
        expect(d.slice(0, k - 1).every(Number.isFinite), `${what}: finite before the failing pivot`).toBe(true);
        expect(d.slice(k - 1).every(Number.isNaN), `${what}: NaN from the failing pivot on`).toBe(true);
        out.push({ alg, family: `${name} (not PD: info ${k})`, n, dtype, backend, orth: 0, resid: 0 });
      }
    });
  } else {
    const { P, L, U } = linalg.lu(x);
    const [p, l, u] = await Promise.all([read(P), read(L), read(U)]);
    A.forEach((a, b) => {
      const o = b * nn;
      const wrong = countEntries(
        n,
        (i, j) =>
          (j > i && l[o + i * n + j] !== 0) || (j < i && u[o + i * n + j] !== 0) || !(Math.abs(l[o + i * n + j]!) <= 1),
      );
      expect(wrong, "entries of L above / U below the diagonal not 0, or |L| > 1").toBe(0);
      const lu = product(l, o, n, u, o, n, n, n);
      record(b, 0, diff(product(p, o, n, lu, 0, n, n, n), a));
    });
  }
  return out;
}

/** The sizes of the suite, and the largest each algorithm supports. */
export const SIZES = [1, 2, 3, 5, 8, 17, 32, 64, 128, 200, 256] as const;
export const ALGS: readonly Alg[] = ["qr", "svd", "eigh", "cholesky", "lu"];
export function supported(alg: Alg, n: number): boolean {
  return alg === "svd" || alg === "eigh" ? n <= linalg.MAX_JACOBI_SIZE : n <= linalg.MAX_DIRECT_SIZE;
}
