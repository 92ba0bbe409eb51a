/**
 * qr, eigh, eigvalsh, svd, svdvals, lstsq, matrixNorm, vectorNorm on the JS
 * backend: NumPy documentation values (written out), reconstruction and
 * orthogonality on random batches (host loops), special values and errors.
 */
import { describe, expect, it } from "vitest";
import { jit, linalg, tensor, ShapeError, UnsupportedOpError, DTypeError, type Tensor } from "../../src/index.js";
import { eyeN, host, mats, matmul, maxAbs, maxDiff, randomMats, split, symMats, transpose } from "./helpers.js";

const f64 = { dtype: "float64" as const };
const diag = (v: number[]): number[][] => v.map((x, i) => v.map((_, j) => (i === j ? x : 0)));
const vecs = (t: Tensor, count: number, n: number): number[][] =>
  Array.from({ length: count }, (_, b) => Array.from(t.dataSync().slice(b * n, (b + 1) * n), Number));

describe("documented values", () => {
  it("qr([[3],[4]]) = ([[-0.6],[-0.8]], [[-5]]): LAPACK's Householder signs", () => {
    const { Q, R } = linalg.qr(tensor([[3], [4]], f64));
    expect(maxDiff(Q.toArraySync() as number[][], [[-0.6], [-0.8]])).toBeLessThan(1e-15);
    expect(R.toArraySync()).toEqual([[-5]]);
  });

  it("eigh: np.linalg.eigh's example [[1,-2j],[2j,5]] has eigenvalues 3∓2√2 (real analogue, lower triangle read)", () => {
    const { eigenvalues, eigenvectors } = linalg.eigh(
      tensor(
        [
          [1, -2],
          [2, 5],
        ],
        f64,
      ),
    );
    const w = eigenvalues.toArraySync() as number[];
    expect(w[0]).toBeCloseTo(3 - 2 * Math.SQRT2, 14);
    expect(w[1]).toBeCloseTo(3 + 2 * Math.SQRT2, 14);
    // the lower triangle is [[1,2],[2,5]]: its eigenvectors, up to sign
    const v = eigenvectors.toArraySync() as number[][];
    const a = [
      [1, 2],
      [2, 5],
    ];
    expect(maxDiff(matmul(matmul(v, diag(w)), transpose(v)), a)).toBeLessThan(1e-14);
    expect(
      linalg
        .eigvalsh(
          tensor(
            [
              [2, -1, 0],
              [-1, 2, -1],
              [0, -1, 2],
            ],
            f64,
          ),
        )
        .toArraySync(),
    ).toEqual([expect.closeTo(2 - Math.SQRT2, 14), expect.closeTo(2, 14), expect.closeTo(2 + Math.SQRT2, 14)]);
  });

  it("svd of [[1,2],[3,4],[5,6]]: singular values 9.52551809, 0.51430058 (NumPy)", () => {
    const s = linalg
      .svdvals(
        tensor(
          [
            [1, 2],
            [3, 4],
            [5, 6],
          ],
          f64,
        ),
      )
      .toArraySync() as number[];
    expect(s[0]).toBeCloseTo(9.525518091565107, 13);
    expect(s[1]).toBeCloseTo(0.5143005806586441, 13);
    // the transpose has the same singular values
    const t = linalg
      .svdvals(
        tensor(
          [
            [1, 3, 5],
            [2, 4, 6],
          ],
          f64,
        ),
      )
      .toArraySync() as number[];
    expect(t[0]).toBeCloseTo(s[0]!, 13);
    expect(t[1]).toBeCloseTo(s[1]!, 13);
  });

  it("lstsq: np.linalg.lstsq's line fit gives m = 1, c = -0.95, residual 0.05, rank 2", () => {
    const a = tensor(
      [
        [0, 1],
        [1, 1],
        [2, 1],
        [3, 1],
      ],
      f64,
    );
    const r = linalg.lstsq(a, tensor([-1, 0.2, 0.9, 2.1], f64));
    const x = r.solution.toArraySync() as number[];
    expect(x[0]).toBeCloseTo(1, 13);
    expect(x[1]).toBeCloseTo(-0.95, 13);
    expect(r.residuals.itemSync()).toBeCloseTo(0.05, 13);
    expect(r.rank.itemSync()).toBe(2);
    // rank-deficient: the minimum-norm solution of [[1,1],[1,1]] x = [1,3] is [1,1]
    const d = linalg.lstsq(
      tensor(
        [
          [1, 1],
          [1, 1],
        ],
        f64,
      ),
      tensor([1, 3], f64),
    );
    expect(maxDiff([d.solution.toArraySync() as number[]], [[1, 1]])).toBeLessThan(1e-14);
    expect(d.rank.itemSync()).toBe(1);
    // underdetermined: [1,2,3]·x = 14 has minimum-norm solution [1,2,3]
    const u = linalg.lstsq(tensor([[1, 2, 3]], f64), tensor([14], f64));
    expect(maxDiff([u.solution.toArraySync() as number[]], [[1, 2, 3]])).toBeLessThan(1e-14);
  });

  it("norms: np.linalg.norm's examples on a = arange(9) - 4 and b = a.reshape(3, 3)", () => {
    const a = tensor([-4, -3, -2, -1, 0, 1, 2, 3, 4], f64);
    const b = a.reshape([3, 3]);
    expect(linalg.vectorNorm(a).itemSync()).toBeCloseTo(7.745966692414834, 14);
    expect(linalg.matrixNorm(b).itemSync()).toBeCloseTo(7.745966692414834, 14);
    expect(linalg.matrixNorm(b, Infinity).itemSync()).toBe(9);
    expect(linalg.vectorNorm(a, Infinity).itemSync()).toBe(4);
    expect(linalg.matrixNorm(b, -Infinity).itemSync()).toBe(2);
    expect(linalg.vectorNorm(a, -Infinity).itemSync()).toBe(0);
    expect(linalg.vectorNorm(a, 1).itemSync()).toBe(20);
    expect(linalg.matrixNorm(b, 1).itemSync()).toBe(7);
    expect(linalg.matrixNorm(b, -1).itemSync()).toBe(6);
    expect(linalg.matrixNorm(b, 2).itemSync()).toBeCloseTo(7.348469228349534, 13);
    expect(linalg.matrixNorm(b, -2).itemSync()).toBeLessThan(1e-14); // numpy: 1.8570331885190563e-016
    expect(linalg.matrixNorm(b, "nuc").itemSync()).toBeCloseTo(9.797958971132712, 13);
    expect(linalg.vectorNorm(a, 3).itemSync()).toBeCloseTo(5.848035476425731, 14);
    expect(linalg.vectorNorm(a, -3).itemSync()).toBe(0);
    expect(linalg.vectorNorm(a, 0).itemSync()).toBe(8);
    expect(linalg.vectorNorm(b, 2, 1).toArraySync()).toEqual([
      expect.closeTo(Math.sqrt(29), 14),
      expect.closeTo(Math.SQRT2, 14),
      expect.closeTo(Math.sqrt(29), 14),
    ]);
    expect(linalg.matrixNorm(b, "fro", { keepdim: true }).toString()).toBe("(;1,1)");
  });
});

describe("identities on random batches", () => {
  for (const [m, n, dtypes] of [
    [1, 1, ["float64", "float32"]],
    [2, 2, ["float64", "float32"]],
    [3, 3, ["float64", "float32"]],
    [4, 2, ["float64", "float32"]],
    [2, 4, ["float64"]],
    [5, 5, ["float64"]],
  ] as const) {
    it(`${m}×${n}: Q·R = A, QᵀQ = I (both modes); U·S·Vh = A with orthonormal U, Vh (full and reduced)`, () => {
      const count = 12;
      for (const dtype of dtypes) {
        const tol = dtype === "float64" ? 1e-12 : 3e-5;
        const a = mats(randomMats(count, m, n, 11 + m * 7 + n), count, m, n, dtype);
        const A = split(a.dataSync(), count, m, n);
        const big = m * n > 16;
        for (const mode of big ? (["complete"] as const) : (["reduced", "complete"] as const)) {
          const { Q, R } = linalg.qr(a, { mode });
          const [Qh, Rh] = [host(Q), host(R)];
          const k = mode === "complete" ? m : Math.min(m, n);
          expect(Q.baseShape).toEqual([m, k]);
          expect(R.baseShape).toEqual([k, n]);
          for (let b = 0; b < count; b++) {
            expect(maxDiff(matmul(Qh[b]!, Rh[b]!), A[b]!)).toBeLessThan(tol * 4);
            expect(maxDiff(matmul(transpose(Qh[b]!), Qh[b]!), eyeN(k))).toBeLessThan(tol * 4);
            Rh[b]!.forEach((row, i) => row.forEach((v, j) => j < i && expect(v).toBe(0)));
          }
        }
        for (const fullMatrices of big ? [true] : [true, false]) {
          const { U, S, Vh } = linalg.svd(a, { fullMatrices });
          const k = Math.min(m, n);
          expect(U.baseShape).toEqual([m, fullMatrices ? m : k]);
          expect(Vh.baseShape).toEqual([fullMatrices ? n : k, n]);
          const [Uh, Vhh] = [host(U), host(Vh)];
          const Sh = vecs(S, count, k);
          for (let b = 0; b < count; b++) {
            const s = Sh[b]!;
            for (let i = 1; i < k; i++) expect(s[i]).toBeLessThanOrEqual(s[i - 1]!);
            expect(Math.min(...s)).toBeGreaterThanOrEqual(0);
            const Uk = Uh[b]!.map((row) => row.slice(0, k));
            const Vk = Vhh[b]!.slice(0, k);
            expect(maxDiff(matmul(matmul(Uk, diag(s)), Vk), A[b]!)).toBeLessThan(tol * 8);
            const uc = Uh[b]![0]!.length;
            expect(maxDiff(matmul(transpose(Uh[b]!), Uh[b]!), eyeN(uc))).toBeLessThan(tol * 8);
            expect(maxDiff(matmul(Vhh[b]!, transpose(Vhh[b]!)), eyeN(Vhh[b]!.length))).toBeLessThan(tol * 8);
          }
          expect(maxDiff(vecs(linalg.svdvals(a), count, k), Sh)).toBeLessThan(tol);
        }
      }
    });
  }

  for (const [n, dtypes] of [
    [1, ["float64", "float32"]],
    [2, ["float64", "float32"]],
    [3, ["float64", "float32"]],
    [4, ["float64"]],
    [5, ["float32"]],
    [6, ["float64"]],
  ] as const) {
    it(`eigh n = ${n}: V·Λ·Vᵀ = A, VᵀV = I, ascending; eigvalsh agrees`, () => {
      const count = 16;
      for (const dtype of dtypes) {
        const tol = dtype === "float64" ? 1e-12 : 3e-5;
        const a = mats(symMats(count, n, 40 + n), count, n, n, dtype);
        const A = split(a.dataSync(), count, n, n);
        const { eigenvalues, eigenvectors } = linalg.eigh(a);
        const W = vecs(eigenvalues, count, n);
        const V = host(eigenvectors);
        for (let b = 0; b < count; b++) {
          for (let i = 1; i < n; i++) expect(W[b]![i]).toBeGreaterThanOrEqual(W[b]![i - 1]!);
          expect(maxDiff(matmul(matmul(V[b]!, diag(W[b]!)), transpose(V[b]!)), A[b]!)).toBeLessThan(tol * n);
          expect(maxDiff(matmul(transpose(V[b]!), V[b]!), eyeN(n))).toBeLessThan(tol * n);
        }
        expect(maxDiff(vecs(linalg.eigvalsh(a), count, n), W)).toBeLessThan(tol);
      }
    });
  }

  it("eigh: repeated eigenvalues (identity, a rank-1 update), and a diagonal matrix passes through exactly", () => {
    const a = tensor(
      [
        [
          [1, 0, 0],
          [0, 1, 0],
          [0, 0, 1],
        ],
        [
          [2, 1, 1],
          [1, 2, 1],
          [1, 1, 2],
        ],
        [
          [3, 0, 0],
          [0, -1, 0],
          [0, 0, 2],
        ],
      ],
      { batchDim: 1, dtype: "float64" },
    );
    const { eigenvalues, eigenvectors } = linalg.eigh(a);
    const W = vecs(eigenvalues, 3, 3);
    expect(W[0]).toEqual([1, 1, 1]);
    expect(maxDiff([W[1]!], [[1, 1, 4]])).toBeLessThan(1e-14);
    expect(W[2]).toEqual([-1, 2, 3]);
    expect(host(eigenvectors)[2]!.map((row) => row.map((v) => v + 0))).toEqual([
      [0, 0, 1],
      [1, 0, 0],
      [0, 1, 0],
    ]);
  });

  it("svd of rank-deficient and zero matrices: U and Vh still orthonormal, zero singular values", () => {
    const a = tensor(
      [
        [
          [1, 1],
          [1, 1],
          [1, 1],
        ],
        [
          [0, 0],
          [0, 0],
          [0, 0],
        ],
      ],
      { batchDim: 1, dtype: "float64" },
    );
    const { U, S, Vh } = linalg.svd(a);
    const s = vecs(S, 2, 2);
    expect(s[0]![0]).toBeCloseTo(Math.sqrt(6), 14);
    expect(s[0]![1]).toBeLessThan(1e-15);
    expect(s[1]).toEqual([0, 0]);
    for (const u of host(U)) expect(maxDiff(matmul(transpose(u), u), eyeN(3))).toBeLessThan(1e-14);
    for (const v of host(Vh)) expect(maxDiff(matmul(v, transpose(v)), eyeN(2))).toBeLessThan(1e-14);
  });
});

describe("special values and errors", () => {
  it("NaN and Inf entries give NaN in their batch element only", () => {
    const a = tensor(
      [
        [
          [NaN, 1],
          [1, 2],
        ],
        [
          [Infinity, 1],
          [1, 2],
        ],
        [
          [2, 1],
          [1, 2],
        ],
      ],
      { batchDim: 1, dtype: "float64" },
    );
    const w = vecs(linalg.eigvalsh(a), 3, 2);
    expect(w[0]!.some(Number.isNaN)).toBe(true);
    expect(w[1]!.every(Number.isFinite)).toBe(false);
    expect(maxDiff([w[2]!], [[1, 3]])).toBeLessThan(1e-14);
    const s = vecs(linalg.svdvals(a), 3, 2);
    expect(s[0]!.some(Number.isNaN)).toBe(true);
    expect(maxDiff([s[2]!], [[3, 1]])).toBeLessThan(1e-14);
    const q = host(linalg.qr(a).R);
    expect(q[0]!.flat().some(Number.isNaN)).toBe(true);
    expect(q[2]!.flat().every(Number.isFinite)).toBe(true);
    expect(linalg.vectorNorm(tensor([1, NaN])).itemSync()).toBeNaN();
  });

  it("empty batch dims give empty results", () => {
    const e = mats(new Float64Array(0), 0, 3, 3, "float64");
    expect(linalg.eigh(e).eigenvectors.toString()).toBe("(0; 3,3)");
    expect(linalg.svd(e).S.toString()).toBe("(0; 3)");
    expect(linalg.qr(e).Q.dataSync().length).toBe(0);
    expect(linalg.lstsq(e, mats(new Float64Array(0), 0, 3, 1, "float64")).solution.toString()).toBe("(0; 3,1)");
    expect(linalg.matrixNorm(e, 2).toString()).toBe("(0;)");
  });

  it("typed errors name the op and shapes", () => {
    const r = tensor([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(() => linalg.eigh(r)).toThrow("linalg.eigh: a (;2,3) is not square");
    expect(() => linalg.eigh(mats(new Float64Array(65 * 65), 1, 65, 65, "float64"))).toThrow(UnsupportedOpError);
    expect(() => linalg.svd(mats(new Float64Array(6 * 65), 1, 6, 65, "float64"))).toThrow(
      "linalg.svd: a (1; 6,65) has 6×65 base matrices, larger than 64×64",
    );
    expect(() => linalg.lstsq(mats(new Float64Array(6 * 65), 1, 6, 65, "float64"), tensor([1, 2, 3, 4, 5, 6]))).toThrow(
      "linalg.lstsq: a (1; 6,65) has 6×65 base matrices, larger than 64×64",
    );
    expect(() => linalg.qr(r, { mode: "r" as "reduced" })).toThrow(ShapeError);
    expect(() =>
      linalg.eigh(
        tensor([
          [1, 0],
          [0, 1],
        ]),
        { sweeps: -1 },
      ),
    ).toThrow(ShapeError);
    expect(() => linalg.lstsq(r, tensor([1, 2, 3]))).toThrow("linalg.lstsq: b (;3) has 3 rows but a (;2,3) has 2");
    expect(() => linalg.matrixNorm(tensor([1, 2]))).toThrow(ShapeError);
    expect(() => linalg.matrixNorm(r, 3 as 2)).toThrow(ShapeError);
    expect(() => linalg.vectorNorm(tensor([true]))).toThrow(DTypeError);
  });
});

describe("jit", () => {
  it("eigh: one trace for two batch sizes, eager and jit agree", () => {
    const f = jit((a: Tensor) => {
      const r = linalg.eigh(a);
      return [r.eigenvalues, r.eigenvectors] as const;
    });
    const a1 = mats(symMats(5, 3, 1), 5, 3, 3, "float32");
    const [w1] = f(a1);
    expect(Array.from(w1.dataSync())).toEqual(Array.from(linalg.eigh(a1).eigenvalues.dataSync()));
    const [w2, v2] = f(mats(symMats(11, 3, 2), 11, 3, 3, "float32"));
    expect(w2.toString()).toBe("(11; 3)");
    expect(v2.toString()).toBe("(11; 3,3)");
    expect(f.stats.traces).toBe(1);
    expect(maxAbs(host(v2)[0]!)).toBeLessThanOrEqual(1);
  });

  it("eigh 6×6: one kernel per sweep (the state goes through a buffer between sweeps), one trace", () => {
    const f = jit((a: Tensor) => linalg.eigh(a).eigenvalues);
    f(mats(symMats(3, 6, 1), 3, 6, 6, "float32"));
    f(mats(symMats(4, 6, 2), 4, 6, 6, "float32"));
    expect(f.stats.traces).toBe(1);
    // defaultSweeps(6) = 7 sweeps: 7 kernels
    expect(f.dump({ after: "fuse" })).toMatch(/: 7 kernels/);
  });
});
