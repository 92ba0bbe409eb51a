import { describe, expect, it } from "vitest";
import { ShapeError, tensor, zeros } from "../../src/index.js";
import {
  MillerIndex,
  Quaternion,
  R2,
  R3,
  R4,
  Rot,
  Scalar,
  SR2,
  SSR4,
  Vec,
  WR2,
  WWR4,
  SWR4,
  WSR4,
  fullToMandel,
  mandelToFull,
} from "../../src/typed/index.js";
import { I3, expectClose, fourWays, mm3, transpose3, twoWays, vals } from "./helpers.js";

const A9 = [1, 2, 3, 4, 5, 6, 7, 8, 9];

describe("construction", () => {
  it("checks the base shape with a ShapeError naming the type and both shapes", () => {
    expect(() => new R2(zeros([5], [3, 4]))).toThrow(ShapeError);
    expect(() => new R2(zeros([5], [3, 4]))).toThrow("R2: expected base (3,3), got x (5; 3,4)");
    expect(() => new SR2(zeros([], [3]))).toThrow("SR2: expected base (6), got x (;3)");
    expect(() => new MillerIndex(zeros([], [3]))).toThrow("MillerIndex: expected an integer dtype");
    expect(new SSR4(zeros([2], [6, 6])).toString()).toBe("SSR4(2; 6,6)");
  });

  it("zeros/ones/full/create/identity", () => {
    expect(R2.zeros([2, 3]).batchShape).toEqual([2, 3]);
    expectClose(SR2.ones([4]), [1, 1, 1, 1, 1, 1]);
    expectClose(Vec.full([2], 7), [7, 7, 7]);
    expect(
      Vec.create([
        [1, 2, 3],
        [4, 5, 6],
      ]).toString(),
    ).toBe("Vec(2; 3)");
    expectClose(R2.identity(), I3);
    expectClose(SR2.identity(), [1, 1, 1, 0, 0, 0]);
    expect(MillerIndex.zeros().dtype).toBe("int32");
  });

  it("fill overloads follow NEML2 (R2 6 values: symmetric without √2; SR2 6 values: shears × √2)", () => {
    expectClose(R2.fill(2), [2, 0, 0, 0, 2, 0, 0, 0, 2]);
    expectClose(R2.fill(1, 2, 3), [1, 0, 0, 0, 2, 0, 0, 0, 3]);
    expectClose(R2.fill(1, 2, 3, 4, 5, 6), [1, 6, 5, 6, 2, 4, 5, 4, 3]);
    expectClose(R2.fill(...(A9 as [number, number, number, number, number, number, number, number, number])), A9);
    expectClose(SR2.fill(2), [2, 2, 2, 0, 0, 0]);
    expectClose(SR2.fill(1, 2, 3, 4, 5, 6), [1, 2, 3, 4 * Math.SQRT2, 5 * Math.SQRT2, 6 * Math.SQRT2]);
    // Scalars with a batch broadcast into the fill.
    const a = new Scalar(tensor([1, 2], { batchDim: 1 }));
    const v = Vec.fill(a, 0, 3);
    expect(v.batchShape).toEqual([2]);
    expect(vals(v)).toEqual([1, 0, 3, 2, 0, 3]);
  });

  it("float64 keeps its precision through fills and formulas", () => {
    const s = SR2.fill(1, 2, 3, 4, 5, 6, { dtype: "float64" });
    expect(s.dtype).toBe("float64");
    expect(vals(s)[3]).toBe(4 * Math.SQRT2);
  });
});

describe("Mandel and skew conventions", () => {
  it("SR2(R2::fill(1..9)): tr 15, norm_sq 273, norm 16.5227, det 0", () => {
    const s = SR2.fromR2(R2.fill(...(A9 as [number, number, number, number, number, number, number, number, number])));
    expectClose(s, [1, 5, 9, 7 * Math.SQRT2, 5 * Math.SQRT2, 3 * Math.SQRT2]);
    twoWays(s, (x) => x.tr(), [15]);
    twoWays(s, (x) => x.normSq(), [273], 1e-6);
    twoWays(s, (x) => x.norm(), [Math.sqrt(273)], 1e-6);
    twoWays(s, (x) => x.det(), [0], 1e-4);
  });

  it("fullToMandel reads the upper triangle and does not symmetrise; mandelToFull inverts on symmetric input", () => {
    const t = tensor([A9.slice(0, 3), A9.slice(3, 6), A9.slice(6)]);
    expect(vals(new SR2(fullToMandel(t)))).toEqual(
      [1, 5, 9, 6 * Math.SQRT2, 3 * Math.SQRT2, 2 * Math.SQRT2].map(Math.fround),
    );
    const sym = SR2.fill(1, 2, 3, 4, 5, 6);
    expectClose(sym.toR2(), [1, 6, 5, 6, 2, 4, 5, 4, 3]);
    expectClose(new SR2(fullToMandel(mandelToFull(sym.t))), vals(sym));
    // On other base axes: (2,3,1,5; 2,9,3,3,2,3) at dim 2 becomes (…; 2,9,6,2,3).
    expect(fullToMandel(zeros([2, 3, 1, 5], [2, 9, 3, 3, 2, 3]), 2).toString()).toBe("(2,3,1,5; 2,9,6,2,3)");
    expect(() => fullToMandel(zeros([], [3, 2]))).toThrow(ShapeError);
  });

  it("component(i, j) divides by the Mandel factor", () => {
    const s = SR2.fill(1, 2, 3, 4, 5, 6);
    expectClose(s.component(1, 2), [4]);
    expectClose(s.component(0, 1), [6]);
    expectClose(s.component(2, 2), [3]);
  });

  it("WR2 is the axial vector (W21, W02, W10); fromR2 takes the skew part", () => {
    const w = WR2.fill(1, 2, 3);
    expectClose(w.toR2(), [0, -3, 2, 3, 0, -1, -2, 1, 0]);
    expectClose(R2.skew(Vec.fill(1, 2, 3)), [0, -3, 2, 3, 0, -1, -2, 1, 0]);
    expectClose(
      WR2.fromR2(R2.fill(...(A9 as [number, number, number, number, number, number, number, number, number]))),
      [(8 - 6) / 2, (3 - 7) / 2, (4 - 2) / 2],
    );
    expectClose(WR2.fromR2(w.toR2()), [1, 2, 3]);
  });

  it("SSR4 from R4 and back; SWR4/WSR4/WWR4 conversions", () => {
    const C = SSR4.isotropicENu(100, 0.3);
    const back = SSR4.fromR4(C.toR4());
    expectClose(back, vals(C), 1e-5);
    // An R4 symmetric in the first pair and skew in the second: SWR4 recovers the outer of its parts.
    const sym = SR2.fill(1, 2, 3, 4, 5, 6).toR2();
    const skw = WR2.fill(1, -2, 0.5).toR2();
    const F = sym.outer(skw);
    expectClose(
      SWR4.fromR4(F),
      vals(SR2.fill(1, 2, 3, 4, 5, 6)).flatMap((s) => [1, -2, 0.5].map((w) => s * w)),
      1e-5,
    );
    expectClose(
      WSR4.fromR4(skw.outer(sym)),
      [1, -2, 0.5].flatMap((w) => vals(SR2.fill(1, 2, 3, 4, 5, 6)).map((s) => s * w)),
      1e-5,
    );
    // WWR4 as NEML2 defines it (no /4): 4× the axial parts' outer product.
    expectClose(
      WWR4.fromR4(skw.outer(skw)),
      [1, -2, 0.5].flatMap((a) => [1, -2, 0.5].map((b) => 4 * a * b)),
      1e-5,
    );
  });
});

describe("R2", () => {
  const M = [2, 1, 0, 1, 3, 1, 0.5, 1, 4];
  const N = [1, -1, 2, 0, 1, 3, 2, 0, 1];
  const m = R2.create([M.slice(0, 3), M.slice(3, 6), M.slice(6)]);
  const n = R2.create([N.slice(0, 3), N.slice(3, 6), N.slice(6)]);
  const detM = 2 * (12 - 1) - 1 * (4 - 0.5) + 0;

  it("det, tr, transpose, inner, norm", () => {
    twoWays(m, (x) => x.det(), [detM]);
    twoWays(m, (x) => x.tr(), [9]);
    twoWays(m, (x) => x.transpose(), transpose3(M));
    fourWays(m, n, (a, b) => a.inner(b), [M.reduce((s, v, i) => s + v * N[i]!, 0)]);
    twoWays(m, (x) => x.normSq(), [M.reduce((s, v) => s + v * v, 0)]);
  });

  it("R2·R2 and R2·Vec (typed overloads), inverse(A)·A = I", () => {
    fourWays(m, n, (a, b) => a.mul(b), mm3(M, N));
    const v = Vec.fill(1, -2, 3);
    fourWays(m, v, (a, b) => a.mul(b), [2 - 2, 1 - 6 + 3, 0.5 - 2 + 12]);
    twoWays(m, (x) => x.inverse().mul(x), I3, 1e-5);
    twoWays(m, (x) => x.mul(x.inverse()), I3, 1e-5);
  });

  it("a mistyped product does not compile", () => {
    const v = Vec.fill(1, 2, 3);
    const s = SR2.identity();
    // @ts-expect-error Vec·R2 is not a product NEML2 defines
    expect(() => v.mul(m)).toThrow();
    // @ts-expect-error SR2·SR2 is not defined (use inner)
    void (() => s.mul(s));
    // @ts-expect-error a Vec is not a Rot even though both are (3)
    void (() => Rot.identity().mul(v));
    const typed: Vec = m.mul(v);
    const typed2: R2 = m.mul(m);
    expect(typed.kind).toBe("Vec");
    expect(typed2.kind).toBe("R2");
  });

  it("vol/dev, outer gives R4, row/col, rotate = R A Rᵀ", () => {
    twoWays(m, (x) => x.dev().tr(), [0], 1e-5);
    twoWays(m, (x) => x.vol(), [3, 0, 0, 0, 3, 0, 0, 0, 3]);
    expect(m.outer(n).toString()).toBe("R4(;3,3,3,3)");
    expectClose(m.row(1), M.slice(3, 6));
    expectClose(m.col(2), [0, 1, 4]);
    const r = Rot.fill(0.1, -0.2, 0.3);
    const R = vals(r.eulerRodrigues());
    fourWays(m, r, (a, b) => a.rotate(b), mm3(mm3(R, M), transpose3(R)), 1e-5);
  });

  it("Scalar broadcasting: a (2;) Scalar times an unbatched SR2 is (2; 6)", () => {
    const a = new Scalar(tensor([2, 3], { batchDim: 1 }));
    const s = SR2.fill(1, 2, 3);
    const r = a.mul(s);
    expect(r.toString()).toBe("SR2(2; 6)");
    expect(vals(r)).toEqual([2, 4, 6, 0, 0, 0, 3, 6, 9, 0, 0, 0]);
    expect(s.mul(a).toString()).toBe("SR2(2; 6)");
  });
});

describe("SR2", () => {
  const s = SR2.fill(3, 2, 4, 0.5, 0.25, -1);
  const full = [3, -1, 0.25, -1, 2, 0.5, 0.25, 0.5, 4];

  it("vol, dev, inner, det, inverse in Mandel form", () => {
    twoWays(s, (x) => x.vol(), [3, 3, 3, 0, 0, 0]);
    twoWays(s, (x) => x.dev().tr(), [0], 1e-5);
    const d = 3 * (8 - 0.25) - -1 * (-4 - 0.125) + 0.25 * (-0.5 - 0.5);
    twoWays(s, (x) => x.det(), [d], 1e-5);
    fourWays(s, s.inverse(), (a, b) => a.toR2().mul(b.toR2()), I3, 1e-5);
    twoWays(s, (x) => x.inner(x), [full.reduce((acc, v) => acc + v * v, 0)], 1e-5);
  });

  it("Mandel round trip R2 → SR2 → R2 on symmetric input; transpose is a no-op", () => {
    twoWays(s, (x) => x.toR2(), full);
    twoWays(s, (x) => SR2.fromR2(x.toR2()), vals(s));
    expect(s.transpose()).toBe(s);
  });

  it("rotate(Rot) equals R·S·Rᵀ", () => {
    const r = Rot.fill(0.3, 0.1, -0.2);
    const R = vals(r.eulerRodrigues());
    const expected = vals(
      SR2.fromR2(R2.create([0, 1, 2].map((i) => mm3(mm3(R, full), transpose3(R)).slice(3 * i, 3 * i + 3)))),
    );
    fourWays(s, r, (a, b) => a.rotate(b), expected, 1e-5);
  });

  it("outer gives SSR4; SSR4·SR2 and SR2·SSR4", () => {
    const o = s.outer(s);
    expect(o.toString()).toBe("SSR4(;6,6)");
    const C = SSR4.isotropicENu(100, 0.3);
    const e = SR2.fill(0.01, -0.02, 0.03, 0.004, 0.005, -0.006);
    const ev = vals(e);
    const Cv = vals(C);
    const Ce = [0, 1, 2, 3, 4, 5].map((i) => ev.reduce((acc, x, j) => acc + Cv[i * 6 + j]! * x, 0));
    fourWays(C, e, (a, b) => a.mul(b), Ce, 1e-5);
    fourWays(e, C, (a, b) => a.mul(b), Ce, 1e-5); // C is symmetric
  });
});

describe("SSR4", () => {
  it("isotropic_E_nu(100, 0.3): C11 = 134.615, C12 = 57.692, Mandel shear = 2μ = 76.923", () => {
    const C = SSR4.isotropicENu(100, 0.3);
    const pf = 100 / (1.3 * 0.4);
    const c11 = 0.7 * pf;
    const c12 = 0.3 * pf;
    const c44 = 0.4 * pf;
    const exp = [];
    for (let i = 0; i < 6; i++)
      for (let j = 0; j < 6; j++) exp.push(i < 3 && j < 3 ? (i === j ? c11 : c12) : i === j ? c44 : 0);
    expectClose(C, exp, 1e-6);
    expect(Math.abs(c44 - 76.92307692)).toBeLessThan(1e-6);
  });

  it("isotropicENu with batched E and ν", () => {
    const E = new Scalar(tensor([100, 200], { batchDim: 1 }));
    const nu = new Scalar(tensor([[0.3], [0.25], [0]], { batchDim: 2 }));
    const C = SSR4.isotropicENu(E, nu);
    expect(C.toString()).toBe("SSR4(3,2; 6,6)");
    const v = vals(C);
    // element (2,1): E=200, ν=0 → C11 = 200, C12 = 0, shear = 200.
    const base = (2 * 2 + 1) * 36;
    expect(v[base]).toBeCloseTo(200, 4);
    expect(v[base + 1]).toBeCloseTo(0, 6);
    expect(v[base + 21]).toBeCloseTo(200, 4);
  });

  it("identities", () => {
    const s = SR2.fill(3, 2, 4, 0.5, 0.25, -1);
    twoWays(s, (x) => SSR4.identitySym().mul(x), vals(s));
    twoWays(s, (x) => SSR4.identityVol().mul(x), vals(s.vol()), 1e-6);
    twoWays(s, (x) => SSR4.identityDev().mul(x), vals(s.dev()), 1e-6);
    twoWays(s, (x) => SSR4.identity().mul(x), [9, 9, 9, 0, 0, 0], 1e-6);
    expectClose(SSR4.identityC1().add(SSR4.identityC2()), vals(SSR4.identity()));
    expect(SSR4.identityMap().toString()).toBe("SSSSR8(;6,6,6,6)");
  });

  it("inverse(C)·C = I, with partial pivoting (zero leading entry)", () => {
    const C = SSR4.isotropicENu(100, 0.3);
    const eye6 = vals(SSR4.identitySym());
    twoWays(C, (x) => x.inverse().mul(x), eye6, 1e-5);
    // A permutation-like matrix needs pivoting.
    const P: number[][] = [];
    for (let i = 0; i < 6; i++)
      P.push([0, 1, 2, 3, 4, 5].map((j) => (j === (i + 1) % 6 ? 2 : i === j ? 0 : 0.1 * (i - j))));
    const p = SSR4.create(P);
    expectClose(p.inverse().mul(p), eye6, 1e-5);
    twoWays(C, (x) => x.mul(x.inverse()), eye6, 1e-5);
  });

  it("SSR4·SSR4, transposeMajor, rotate keeps an isotropic tensor and matches R4 rotation of a general one", () => {
    const C = SSR4.isotropicENu(100, 0.3);
    fourWays(C, C.inverse(), (a, b) => a.mul(b), vals(SSR4.identitySym()), 1e-5);
    const r = Rot.fill(0.2, -0.1, 0.3);
    fourWays(C, r, (a, b) => a.rotate(b), vals(C), 1e-4);
    // Rotating s then contracting equals contracting with the rotated tensor.
    const A = SR2.fill(1, 2, 3, 0.1, 0.2, 0.3).outer(SR2.fill(0.5, -1, 2, 0.3, -0.2, 0.1));
    const s = SR2.fill(0.3, -0.1, 0.2, 0.05, 0.01, -0.02);
    const lhs = A.rotate(r).mul(s.rotate(r));
    const rhs = A.mul(s).rotate(r);
    expectClose(lhs, vals(rhs), 1e-5);
    expectClose(A.transposeMajor(), vals(SR2.fill(0.5, -1, 2, 0.3, -0.2, 0.1).outer(SR2.fill(1, 2, 3, 0.1, 0.2, 0.3))));
  });
});

describe("Vec, R3", () => {
  const a = Vec.fill(1, 2, 3);
  const b = Vec.fill(-1, 0.5, 2);
  it("dot, cross, outer, selfOuter, norm", () => {
    fourWays(a, b, (x, y) => x.dot(y), [-1 + 1 + 6]);
    fourWays(a, b, (x, y) => x.cross(y), [2 * 2 - 3 * 0.5, 3 * -1 - 1 * 2, 1 * 0.5 - 2 * -1]);
    fourWays(a, b, (x, y) => x.outer(y), [-1, 0.5, 2, -2, 1, 4, -3, 1.5, 6]);
    twoWays(a, (x) => x.selfOuter(), vals(SR2.fill(1, 4, 9, 6, 3, 2)));
    twoWays(a, (x) => x.norm(), [Math.sqrt(14)]);
  });
  it("R3.leviCivita().contractK(v) is the skew matrix of -v... i.e. εᵢⱼₖvₖ", () => {
    // εᵢⱼₖvₖ = [[0,v2,-v1],[-v2,0,v0],[v1,-v0,0]] = -skew(v)
    twoWays(a, (x) => R3.leviCivita().contractK(x), [0, 3, -2, -3, 0, 1, 2, -1, 0]);
  });
  it("rotate by Rot equals R·v", () => {
    const r = Rot.fill(0.1, 0.2, -0.3);
    fourWays(a, r, (x, y) => x.rotate(y), vals(r.eulerRodrigues().mul(a)));
  });
});

describe("R4", () => {
  it("transposes", () => {
    const m = R2.fill(1, 2, 3, 4, 5, 6, 7, 8, 9);
    const n = R2.fill(9, 8, 7, 6, 5, 4, 3, 2, 1);
    expectClose(m.outer(n).transposeMajor(), vals(n.outer(m)));
    expectClose(m.outer(n).transposeMinor(), vals(m.transpose().outer(n.transpose())));
    expect(new R4(m.outer(n).t).transpose(0, 1).toString()).toBe("R4(;3,3,3,3)");
  });
});

describe("Miller indices", () => {
  it("reduce divides by the gcd, keeps signs, works batched", () => {
    expect(vals(MillerIndex.fill(2, -4, 6).reduce())).toEqual([1, -2, 3]);
    expect(vals(MillerIndex.fill(0, 0, 5).reduce())).toEqual([0, 0, 1]);
    expect(vals(MillerIndex.fill(0, 0, 0).reduce())).toEqual([0, 0, 0]);
    expect(vals(MillerIndex.fill(-3, 9, 12).reduce())).toEqual([-1, 3, 4]);
    const big = MillerIndex.create([
      [1134903170, 1836311903, 0],
      [12, 18, -30],
    ]); // consecutive Fibonacci numbers
    expect(vals(big.reduce()).slice(0, 3)).toEqual([1134903170, 1836311903, 0]); // coprime: unchanged
    expect(vals(big.reduce()).slice(3)).toEqual([2, 3, -5]);
    expectClose(MillerIndex.fill(1, 1, 0).toNormalizedVec(), [Math.SQRT1_2, Math.SQRT1_2, 0]);
  });
});

describe("Quaternion", () => {
  it("fromRot, toR2 equals eulerRodrigues; dist", () => {
    const r = Rot.fill(0.1, 0.2, 0.3);
    twoWays(r, (x) => Quaternion.fromRot(x).toR2(), vals(r.eulerRodrigues()), 1e-5);
    const q = Quaternion.fromRot(r);
    twoWays(q, (x) => x.dot(x), [1], 1e-6);
    // Angle of r = 4·atan(|r|); the distance from the identity quaternion is that angle.
    const angle = 4 * Math.atan(Math.sqrt(0.14));
    fourWays(q, Quaternion.fill(1, 0, 0, 0), (a, b) => a.dist(b), [angle], 1e-5);
  });
});
