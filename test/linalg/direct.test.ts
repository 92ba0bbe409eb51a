/**
 * det, inv, solve, lu, luFactor, cholesky, triu, tril, trace on the JS backend:
 * values from NumPy's documentation (written out), reconstruction identities
 * on random batches checked by host loops, special values, errors, and one
 * jit trace across batch sizes.
 */
import { describe, expect, it } from "vitest";
import {
  counters,
  loadBundle,
  jit,
  linalg,
  tensor,
  ShapeError,
  DTypeError,
  UnsupportedOpError,
  type Tensor,
} from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";
import {
  expectNear,
  eyeN,
  host,
  mats,
  matmul,
  maxAbs,
  maxDiff,
  randomMats,
  spdMats,
  split,
  transpose,
} from "./helpers.js";

const f64 = { dtype: "float64" as const };

describe("documented values (NumPy / SciPy / LAPACK)", () => {
  it("det([[1,2],[3,4]]) = -2; a batch of three (np.linalg.det's example)", () => {
    expect(
      linalg
        .det(
          tensor(
            [
              [1, 2],
              [3, 4],
            ],
            f64,
          ),
        )
        .itemSync(),
    ).toBeCloseTo(-2, 14);
    const b = tensor(
      [
        [
          [1, 2],
          [3, 4],
        ],
        [
          [1, 2],
          [2, 1],
        ],
        [
          [1, 3],
          [3, 1],
        ],
      ],
      { batchDim: 1, dtype: "float64" },
    );
    const d = Array.from(linalg.det(b).dataSync());
    [-2, -3, -8].forEach((v, i) => expect(d[i]).toBeCloseTo(v, 14));
  });

  it("inv([[1,2],[3,4]]) = [[-2,1],[1.5,-0.5]] (np.linalg.inv's example)", () => {
    const a = tensor(
      [
        [1, 2],
        [3, 4],
      ],
      f64,
    );
    expectNear(linalg.inv(a), 1e-14, [
      [-2, 1],
      [1.5, -0.5],
    ]);
  });

  it("solve([[3,1],[1,2]], [9,8]) = [2,3] (np.linalg.solve's example), vector and matrix right-hand sides", () => {
    const a = tensor(
      [
        [3, 1],
        [1, 2],
      ],
      f64,
    );
    const x = linalg.solve(a, tensor([9, 8], f64)).toArraySync() as number[];
    expect(x[0]).toBeCloseTo(2, 14);
    expect(x[1]).toBeCloseTo(3, 14);
    const B = tensor(
      [
        [9, 3],
        [8, 1],
      ],
      f64,
    );
    // columns: [2,3] and the solution of 3x+y=3, x+2y=1: [1, 0]
    expectNear(linalg.solve(a, B), 1e-14, [
      [2, 1],
      [3, 0],
    ]);
  });

  it("lu([[1,2],[3,4]]): P swaps the rows, L = [[1,0],[1/3,1]], U = [[3,4],[0,2/3]]; luFactor's pivots are LAPACK's [2,2]", () => {
    const a = tensor(
      [
        [1, 2],
        [3, 4],
      ],
      f64,
    );
    const { P, L, U } = linalg.lu(a);
    expect(P.toArraySync()).toEqual([
      [0, 1],
      [1, 0],
    ]);
    expectNear(L, 1e-15, [
      [1, 0],
      [1 / 3, 1],
    ]);
    expectNear(U, 1e-15, [
      [3, 4],
      [0, 2 / 3],
    ]);
    const f = linalg.luFactor(a);
    expect(f.pivots.dtype).toBe("int32");
    expect(f.pivots.toArraySync()).toEqual([2, 2]);
    expectNear(f.LU, 1e-15, [
      [3, 4],
      [1 / 3, 2 / 3],
    ]);
  });

  it("SciPy's lu example: a 4×4 with pivots chosen as getrf does", () => {
    // scipy.linalg.lu_factor([[2,5,8,7],[5,2,2,8],[7,5,6,6],[5,4,4,8]]) gives piv = [2, 2, 3, 3] (0-based).
    const a = tensor(
      [
        [2, 5, 8, 7],
        [5, 2, 2, 8],
        [7, 5, 6, 6],
        [5, 4, 4, 8],
      ],
      f64,
    );
    expect(linalg.luFactor(a).pivots.toArraySync()).toEqual([3, 3, 4, 4]);
    const { P, L, U } = linalg.lu(a);
    const r = matmul(
      matmul(P.toArraySync() as number[][], L.toArraySync() as number[][]),
      U.toArraySync() as number[][],
    );
    expect(maxDiff(r, a.toArraySync() as number[][])).toBeLessThan(1e-13);
    // U's first row is the pivot row [7,5,6,6]; L's first column is a's first column / 7 in the pivoted order.
    expect((U.toArraySync() as number[][])[0]).toEqual([7, 5, 6, 6]);
  });

  it("cholesky([[1,-2],[2,5]]) reads the lower triangle: [[1,0],[2,1]] (np.linalg.cholesky's example, real part)", () => {
    const a = tensor(
      [
        [1, -2],
        [2, 5],
      ],
      f64,
    );
    expectNear(linalg.cholesky(a), 1e-15, [
      [1, 0],
      [2, 1],
    ]);
    expect(linalg.cholesky(a, { upper: true }).toArraySync()).toEqual([
      [1, 2],
      [0, 1],
    ]);
  });

  it("triu/tril with offsets as np.triu([[1,2,3],[4,5,6],[7,8,9],[10,11,12]], -1)", () => {
    const a = tensor([
      [1, 2, 3],
      [4, 5, 6],
      [7, 8, 9],
      [10, 11, 12],
    ]);
    expect(linalg.triu(a, -1).toArraySync()).toEqual([
      [1, 2, 3],
      [4, 5, 6],
      [0, 8, 9],
      [0, 0, 12],
    ]);
    expect(linalg.tril(a, -1).toArraySync()).toEqual([
      [0, 0, 0],
      [4, 0, 0],
      [7, 8, 0],
      [10, 11, 12],
    ]);
    expect(linalg.triu(a, 1).toArraySync()).toEqual([
      [0, 2, 3],
      [0, 0, 6],
      [0, 0, 0],
      [0, 0, 0],
    ]);
    expect(linalg.tril(a).toArraySync()).toEqual([
      [1, 0, 0],
      [4, 5, 0],
      [7, 8, 9],
      [10, 11, 12],
    ]);
    expect(linalg.trace(a).itemSync()).toBe(15);
    expect(
      linalg
        .trace(
          tensor([
            [1, 2, 3],
            [4, 5, 6],
          ]),
        )
        .itemSync(),
    ).toBe(6);
  });
});

describe("reconstruction on random batches (float64 and float32)", () => {
  for (const n of [1, 2, 3, 4, 6]) {
    it(`n = ${n}: P·L·U = A, A·inv(A) = I, A·solve(A, B) = B, L·Lᵀ = SPD, det = ΠU·sign`, () => {
      const count = 20;
      const data = randomMats(count, n, n, 7 + n);
      for (const dtype of ["float64", "float32"] as const) {
        const tol = dtype === "float64" ? 1e-11 : 2e-4;
        const a = mats(data, count, n, n, dtype);
        const A = split(a.dataSync(), count, n, n);
        const { P, L, U } = linalg.lu(a);
        const [Ph, Lh, Uh] = [host(P), host(L), host(U)];
        const inv = host(linalg.inv(a));
        const bData = randomMats(count, n, 2, 99);
        const b = mats(bData, count, n, 2, dtype);
        const x = host(linalg.solve(a, b));
        const det = Array.from(linalg.det(a).dataSync());
        for (let k = 0; k < count; k++) {
          const scale = Math.max(1, maxAbs(inv[k]!));
          expect(maxDiff(matmul(matmul(Ph[k]!, Lh[k]!), Uh[k]!), A[k]!)).toBeLessThan(tol);
          for (let i = 0; i < n; i++) {
            expect(Lh[k]![i]![i]).toBe(1);
            for (let j = 0; j < n; j++) {
              if (j > i) expect(Lh[k]![i]![j]).toBe(0);
              if (j < i) expect(Uh[k]![i]![j]).toBe(0);
              // partial pivoting bounds the multipliers
              expect(Math.abs(Lh[k]![i]![j]!)).toBeLessThanOrEqual(1);
            }
          }
          expect(maxDiff(matmul(A[k]!, inv[k]!), eyeN(n))).toBeLessThan(tol * scale * n);
          expect(maxDiff(matmul(A[k]!, x[k]!), split(b.dataSync(), count, n, 2)[k]!)).toBeLessThan(tol * scale * n);
          // det from the host LU (the sign of P is its parity)
          let d = 1;
          for (let i = 0; i < n; i++) d *= Uh[k]![i]![i]!;
          const perm = Ph[k]!.map((row) => row.indexOf(1));
          let parity = 1;
          for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) if (perm[i]! > perm[j]!) parity = -parity;
          expect(Math.abs(det[k]! - parity * d)).toBeLessThan(tol * Math.max(1, Math.abs(d)));
        }
        const spd = mats(spdMats(count, n, 3 + n), count, n, n, dtype);
        const S = split(spd.dataSync(), count, n, n);
        const C = host(linalg.cholesky(spd));
        for (let k = 0; k < count; k++) {
          expect(maxDiff(matmul(C[k]!, transpose(C[k]!)), S[k]!)).toBeLessThan(tol * maxAbs(S[k]!));
          for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) expect(C[k]![i]![j]).toBe(0);
        }
      }
    });
  }

  it("leading base dims batch too: (2; 3,4,4) solves 6 systems; batch dims of a and b broadcast", () => {
    const data = randomMats(6, 4, 4, 5, 2);
    const a = tensor(Array.from(split(data, 6, 4, 4)), { batchDim: 0, dtype: "float64" })
      .reshape([2, 3, 4, 4])
      .rebatch(1);
    expect(a.toString()).toBe("(2; 3,4,4)");
    const b = tensor([1, 2, 3, 4], f64);
    const x = linalg.solve(a, b);
    expect(x.toString()).toBe("(2; 3,4)");
    const X = x.dataSync();
    const A = split(data, 6, 4, 4);
    for (let k = 0; k < 6; k++) {
      const ax = A[k]!.map((row) => row.reduce((s, v, j) => s + v * Number(X[k * 4 + j]), 0));
      ax.forEach((v, i) => expect(v).toBeCloseTo(i + 1, 12));
    }
  });
});

describe("special values", () => {
  it("singular: det 0, inv and solve Inf/NaN in that batch element only, LU finite with a zero pivot", () => {
    const a = tensor(
      [
        [
          [1, 2],
          [2, 4],
        ],
        [
          [2, 0],
          [0, 4],
        ],
      ],
      { batchDim: 1, dtype: "float64" },
    );
    expect(Array.from(linalg.det(a).dataSync())).toEqual([0, 8]);
    const inv = host(linalg.inv(a));
    expect(inv[0]!.flat().every((v) => !Number.isFinite(v))).toBe(true);
    expect(inv[1]).toEqual([
      [0.5, 0],
      [0, 0.25],
    ]);
    const x = linalg.solve(a, tensor([1, 1], f64)).toArraySync() as number[][];
    expect(x[0]!.some((v) => !Number.isFinite(v))).toBe(true);
    expect(x[1]).toEqual([0.5, 0.25]);
    const { L, U } = linalg.lu(a);
    expect(host(L)[0]).toEqual([
      [1, 0],
      [0.5, 1],
    ]);
    expect(host(U)[0]).toEqual([
      [2, 4],
      [0, 0],
    ]);
    // the zero matrix: no pivot at all, L = I, U = 0
    const z = linalg.lu(
      tensor(
        [
          [0, 0],
          [0, 0],
        ],
        f64,
      ),
    );
    expect(z.L.toArraySync()).toEqual([
      [1, 0],
      [0, 1],
    ]);
    expect(
      linalg
        .det(
          tensor(
            [
              [0, 0, 0, 0],
              [0, 0, 0, 0],
              [0, 0, 0, 0],
              [0, 0, 0, 0],
            ],
            f64,
          ),
        )
        .itemSync(),
    ).toBe(0);
  });

  it("NaN and Inf entries propagate to their batch element; non-positive-definite Cholesky gives NaN from the failing column", () => {
    const a = tensor(
      [
        [
          [NaN, 1, 0, 0],
          [1, 2, 0, 0],
          [0, 0, 3, 0],
          [0, 0, 0, 4],
        ],
        [
          [Infinity, 1, 0, 0],
          [1, 2, 0, 0],
          [0, 0, 3, 0],
          [0, 0, 0, 4],
        ],
        [
          [2, 0, 0, 0],
          [0, 2, 0, 0],
          [0, 0, 2, 0],
          [0, 0, 0, 2],
        ],
      ],
      { batchDim: 1, dtype: "float64" },
    );
    const d = Array.from(linalg.det(a).dataSync());
    expect(d[0]).toBeNaN();
    expect(d[1]).toBe(Infinity);
    expect(d[2]).toBe(16);
    const inv = host(linalg.inv(a));
    expect(inv[0]!.flat().some(Number.isNaN)).toBe(true);
    expect(
      maxDiff(
        inv[2]!,
        eyeN(4).map((r) => r.map((v) => v / 2)),
      ),
    ).toBe(0);
    const c = host(
      linalg.cholesky(
        tensor(
          [
            [
              [4, 2],
              [2, -3],
            ],
          ],
          { batchDim: 1, dtype: "float64" },
        ),
      ),
    );
    expect(c[0]![0]).toEqual([2, 0]);
    expect(c[0]![1]![0]).toBe(1);
    expect(c[0]![1]![1]).toBeNaN();
  });

  it("empty batch dims give empty results; 0×0 matrices: det 1, inv empty", () => {
    const e = mats(new Float64Array(0), 0, 3, 3, "float64");
    expect(linalg.det(e).toString()).toBe("(0;)");
    expect(linalg.inv(e).toString()).toBe("(0; 3,3)");
    expect(linalg.solve(e, mats(new Float64Array(0), 0, 3, 1, "float64")).toString()).toBe("(0; 3,1)");
    expect(linalg.lu(e).U.dataSync().length).toBe(0);
    expect(linalg.cholesky(e).dataSync().length).toBe(0);
    const z = mats(new Float64Array(0), 2, 0, 0, "float64");
    expect(Array.from(linalg.det(z).dataSync())).toEqual([1, 1]);
    expect(linalg.inv(z).toString()).toBe("(2; 0,0)");
    expect(Array.from(linalg.trace(z).dataSync())).toEqual([0, 0]);
  });

  it("integers compute in float32", () => {
    expect(
      linalg.det(
        tensor(
          [
            [1, 2],
            [3, 4],
          ],
          { dtype: "int32" },
        ),
      ).dtype,
    ).toBe("float32");
    expect(
      linalg
        .inv(
          tensor(
            [
              [2, 0],
              [0, 4],
            ],
            { dtype: "int32" },
          ),
        )
        .toArraySync(),
    ).toEqual([
      [0.5, 0],
      [0, 0.25],
    ]);
  });
});

describe("errors", () => {
  it("non-square, too few base dims, mismatched b, bool, too large: typed errors naming the op and shapes", () => {
    const r = tensor(
      [
        [
          [1, 2, 3],
          [4, 5, 6],
        ],
      ],
      { batchDim: 1 },
    );
    expect(() => linalg.det(r)).toThrow(ShapeError);
    expect(() => linalg.det(r)).toThrow("linalg.det: a (1; 2,3) is not square");
    expect(() => linalg.inv(tensor([1, 2]))).toThrow("linalg.inv: a (;2) needs a matrix base");
    const a = tensor([
      [1, 0],
      [0, 1],
    ]);
    expect(() => linalg.solve(a, tensor([1, 2, 3]))).toThrow("linalg.solve: b (;3) has 3 rows but a (;2,2) is 2×2");
    expect(() => linalg.solve(a, tensor(1))).toThrow(ShapeError);
    expect(() => linalg.solve(a, 3 as unknown as Tensor)).toThrow(DTypeError);
    expect(() =>
      linalg.lu(
        tensor([
          [true, false],
          [false, true],
        ]),
      ),
    ).toThrow(DTypeError);
    const big = mats(new Float64Array(257 * 257), 1, 257, 257, "float64");
    expect(() => linalg.solve(big, big)).toThrow(UnsupportedOpError);
    expect(() => linalg.inv(big)).toThrow("linalg.inv: a (1; 257,257) has 257×257 base matrices, larger than 256×256");
    expect(() => linalg.triu(a, 0.5)).toThrow(ShapeError);
    expect(() => linalg.trace(tensor([1]))).toThrow(ShapeError);
  });
});

describe("jit", () => {
  it("solve and det: one trace, one kernel, for two batch sizes", () => {
    const f = jit((a: Tensor, b: Tensor) => [linalg.solve(a, b), linalg.det(a)] as const);
    const traces = counters.traces;
    const a1 = mats(randomMats(5, 4, 4, 1, 2), 5, 4, 4, "float32");
    const b1 = mats(randomMats(5, 4, 1, 2), 5, 4, 1, "float32");
    const [x1, d1] = f(a1, b1);
    expect(Array.from(x1.dataSync())).toEqual(Array.from(linalg.solve(a1, b1).dataSync()));
    expect(Array.from(d1.dataSync())).toEqual(Array.from(linalg.det(a1).dataSync()));
    const a2 = mats(randomMats(9, 4, 4, 3, 2), 9, 4, 4, "float32");
    const b2 = mats(randomMats(9, 4, 1, 4), 9, 4, 1, "float32");
    const [x2] = f(a2, b2);
    expect(x2.toString()).toBe("(9; 4,1)");
    expect(f.stats.traces).toBe(1);
    expect(counters.traces - traces).toBe(1);
    // two outputs of different base shapes: one kernel each
    expect(f.dump({ after: "fuse" })).toMatch(/: 2 kernels/);
    const g = jit((a: Tensor, b: Tensor) => linalg.solve(a, b));
    g(a1, b1);
    g(a2, b2);
    expect(g.stats.traces).toBe(1);
    expect(g.dump({ after: "fuse" })).toMatch(/: 1 kernels/);
  });

  it("bundles: lu, triu (a captured mask) and eigh load without a trace or compile and match the jit function", async () => {
    const f = jit((a: Tensor) => {
      const { P, L, U } = linalg.lu(a);
      return [P, L, linalg.triu(U, 1), linalg.eigvalsh(a.add(a.transpose()))];
    });
    const a = (count: number, seed: number): Tensor => mats(randomMats(count, 3, 3, seed), count, 3, 3, "float32");
    f(a(2, 1));
    const mod = await importBundle(f.bundle());
    const before = { traces: counters.traces, compiles: counters.compiles };
    const g = await loadBundle(mod);
    for (const [count, seed] of [
      [3, 2],
      [7, 3],
    ] as const) {
      const x = a(count, seed);
      const want = f(x) as Tensor[];
      const got = g(x) as Tensor[];
      want.forEach((w, i) => expect(Array.from(got[i]!.dataSync())).toEqual(Array.from(w.dataSync())));
    }
    expect(counters.traces).toBe(before.traces);
    expect(counters.compiles).toBe(before.compiles);
  });
});

describe("luSolve", () => {
  it("luSolve(luFactor(a), b) solves as solve(a, b) does, for vector and matrix right-hand sides; bad factors are typed errors", () => {
    const count = 6;
    const a = mats(randomMats(count, 4, 4, 21), count, 4, 4, "float64");
    const f = linalg.luFactor(a);
    const B = mats(randomMats(count, 4, 3, 22), count, 4, 3, "float64");
    expect(maxDiff(host(linalg.luSolve(f, B)).flat(), host(linalg.solve(a, B)).flat())).toBeLessThan(1e-12);
    const A = split(a.dataSync(), count, 4, 4);
    const x = linalg.luSolve(f, tensor([1, 2, 3, 4], f64)).dataSync();
    for (let k = 0; k < count; k++) {
      const ax = A[k]!.map((row) => row.reduce((s, v, j) => s + v * Number(x[k * 4 + j]), 0));
      ax.forEach((v, i) => expect(v).toBeCloseTo(i + 1, 11));
    }
    expect(() => linalg.luSolve({ LU: a, pivots: a }, B)).toThrow(ShapeError);
    expect(() => linalg.luSolve(a as unknown as linalg.LUFactor, B)).toThrow(DTypeError);
  });
});
