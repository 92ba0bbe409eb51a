import { describe, expect, it } from "vitest";
import { fromTypedArray, jit, type Tensor } from "../../src/index.js";
import {
  R2,
  Rot,
  SR2,
  SSR4,
  Scalar,
  Vec,
  WR2,
  batchCat,
  batchStack,
  linspace,
  logspace,
} from "../../src/typed/index.js";
import { I3, expectClose, vals } from "./helpers.js";

function randomR2(n: number, seed = 1): R2 {
  let s = seed;
  const rnd = () => ((s = (s * 16807) % 2147483647) / 2147483647) * 2 - 1;
  const a = new Float32Array(n * 9);
  for (let b = 0; b < n; b++) for (let k = 0; k < 9; k++) a[b * 9 + k] = rnd() + (k % 4 === 0 ? 3 : 0);
  return new R2(fromTypedArray(a, [n, 3, 3], { batchDim: 1 }));
}

describe("typed tensors under jit", () => {
  it("R2 → inverse → det is one kernel and equals the eager result", () => {
    const f = jit((x: Tensor) => new R2(x).inverse().det().t);
    const x = randomR2(50);
    const y = f(x.t);
    expect(f.dump({ after: "fuse" })).toMatch(/: 1 kernels/);
    expect(Array.from(y.dataSync())).toEqual(Array.from(x.inverse().det().dataSync()));
    // det(A⁻¹) = 1/det(A)
    const d = vals(x.det());
    vals(new Scalar(y)).forEach((v, i) => expect(v * d[i]!).toBeCloseTo(1, 4));
    f(randomR2(7, 3).t);
    expect(f.stats.traces).toBe(1);
  });

  it("SR2 → dev → norm is one kernel", () => {
    const f = jit((x: Tensor) => new SR2(x).dev().norm().t);
    const s = SR2.fromR2(randomR2(20));
    const y = f(s.t);
    expect(f.dump({ after: "fuse" })).toMatch(/: 1 kernels/);
    expect(Array.from(y.dataSync())).toEqual(Array.from(s.dev().norm().dataSync()));
  });

  it("rotations: R·Rᵀ = I, composition, Rodrigues vs quaternion, in one kernel each", () => {
    const f = jit((r: Tensor) => {
      const R = new Rot(r).eulerRodrigues();
      return R.mul(R.transpose()).t;
    });
    const r = new Rot(
      fromTypedArray(new Float32Array([0.1, 0.2, 0.3, -0.5, 0.4, 0.9, 0, 0, 0]), [3, 3], { batchDim: 1 }),
    );
    expectClose(new R2(f(r.t)), I3, 1e-5);
    expect(f.dump({ after: "fuse" })).toMatch(/: 1 kernels/);
    const g = jit(
      (a: Tensor, b: Tensor) =>
        new Rot(a)
          .mul(new Rot(b))
          .eulerRodrigues()
          .sub(new Rot(a).eulerRodrigues().mul(new Rot(b).eulerRodrigues())).t,
    );
    expectClose(new R2(g(r.t, Rot.fill(0.3, -0.1, 0.2).t)), [0, 0, 0, 0, 0, 0, 0, 0, 0], 1e-5);
    const h = jit((a: Tensor) => new Rot(a).toQuaternion().toR2().sub(new Rot(a).eulerRodrigues()).t);
    expectClose(new R2(h(r.t)), [0, 0, 0, 0, 0, 0, 0, 0, 0], 1e-5);
  });

  it("Rot.fromMatrix inverts eulerRodrigues, including angles near π (Shepperd)", () => {
    const axis = Vec.create([
      [1, 0, 0],
      [0, 1, 1],
      [1, -2, 3],
      [0, 0, 1],
    ]);
    const angle = new Scalar(fromTypedArray(new Float32Array([0.3, 3.1, 2, 0]), [4], { batchDim: 1 }));
    const r = Rot.fromAxisAngle(axis, angle);
    const back = Rot.fromMatrix(r.eulerRodrigues());
    expectClose(back.eulerRodrigues(), vals(r.eulerRodrigues()), 1e-5);
    expect(
      back
        .gdist(r)
        .dataSync()
        .every((v) => Math.abs(v) < 2e-3),
    ).toBe(true);
  });

  it("Euler angles: Kocks builds the matrix directly; Bunge and Roe map onto it; errors", () => {
    const deg = Math.PI / 180;
    const kocksMatrix = (a: number, b: number, c: number) => [
      -Math.sin(c) * Math.sin(a) - Math.cos(c) * Math.cos(a) * Math.cos(b),
      Math.sin(c) * Math.cos(a) - Math.cos(c) * Math.sin(a) * Math.cos(b),
      Math.cos(c) * Math.sin(b),
      Math.cos(c) * Math.sin(a) - Math.sin(c) * Math.cos(a) * Math.cos(b),
      -Math.cos(c) * Math.cos(a) - Math.sin(c) * Math.sin(a) * Math.cos(b),
      Math.sin(c) * Math.sin(b),
      Math.cos(a) * Math.sin(b),
      Math.sin(a) * Math.sin(b),
      Math.cos(b),
    ];
    const v = Vec.fill(30, 60, 90);
    expectClose(
      Rot.fromEulerAngles(v, "kocks", "degrees").eulerRodrigues(),
      kocksMatrix(30 * deg, 60 * deg, 90 * deg),
      1e-5,
    );
    expectClose(Rot.fromEulerAngles(v, "bunge", "degrees").eulerRodrigues(), kocksMatrix(-60 * deg, 60 * deg, 0), 1e-5);
    expectClose(
      Rot.fromEulerAngles(Vec.fill(0.1, 0.2, 0.3), "roe", "radians").eulerRodrigues(),
      kocksMatrix(0.1, 0.2, Math.PI - 0.3),
      1e-5,
    );
    // @ts-expect-error not an angle type
    expect(() => Rot.fromEulerAngles(v, "kocks", "turns")).toThrow(
      "Rot angle_type must be either 'degrees' or 'radians'",
    );
    // @ts-expect-error not a convention
    expect(() => Rot.fromEulerAngles(v, "xyz", "degrees")).toThrow("Unknown Rot angle_convention xyz");
  });

  it("shadow is the same orientation; dist ≤ gdist; inverse composes to identity", () => {
    const r = Rot.fill(0.8, -0.5, 0.6);
    expectClose(r.shadow().eulerRodrigues(), vals(r.eulerRodrigues()), 1e-5);
    expectClose(r.mul(r.inverse()), [0, 0, 0], 1e-6);
    expectClose(r.dist(r.shadow()), [0], 2e-3);
    const q = Rot.fill(0.1, 0.2, 0.3);
    expect(vals(q.dist(r))[0]!).toBeLessThanOrEqual(vals(q.gdist(r))[0]! + 1e-6);
  });

  it("WR2.exp is the exact exponential map: angle |w| about w/|w| (not NEML2's approximation)", () => {
    const w = WR2.fill(0.3, -0.2, 0.5);
    const n = Math.sqrt(0.09 + 0.04 + 0.25);
    const scale = Math.tan(n / 4) / n;
    expectClose(w.exp(), [0.3 * scale, -0.2 * scale, 0.5 * scale], 1e-6);
    // Rotating a vector along w leaves it fixed; exp(W)·u for u ⟂ w turns by |w|.
    const R = w.exp().eulerRodrigues();
    expectClose(R.mul(Vec.fill(0.3, -0.2, 0.5)), [0.3, -0.2, 0.5], 1e-5);
    expectClose(WR2.fill(0, 0, 0).exp(), [0, 0, 0]);
    expectClose(WR2.fill(1e-5, 0, 0).exp(), [0.25e-5, 0, 0], 1e-6);
  });

  it("batchStack (traceable), batchCat, batchIndex/batchSlice, linspace/logspace", () => {
    const a = Vec.fill(1, 2, 3);
    const b = Vec.create([
      [4, 5, 6],
      [7, 8, 9],
    ]);
    const st = batchStack([b, b.mul(2)], 1);
    expect(st.toString()).toBe("Vec(2,2; 3)");
    expect(vals(st)).toEqual([4, 5, 6, 8, 10, 12, 7, 8, 9, 14, 16, 18]);
    const st2 = batchStack([a, b], 0);
    expect(st2.toString()).toBe("Vec(2,2; 3)");
    expect(vals(st2)).toEqual([1, 2, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const f = jit((x: Tensor, y: Tensor) => batchStack([new Vec(x), new Vec(y)], -1).t);
    expect(Array.from(f(b.t, b.mul(2).t).dataSync())).toEqual(vals(st));
    const c = batchCat([b, Vec.create([[0, 0, 1]])], 0);
    expect(c.toString()).toBe("Vec(3; 3)");
    expect(vals(c.batchIndex([-1]))).toEqual([0, 0, 1]);
    expect(vals(c.batchSlice(0, 1))).toEqual([7, 8, 9, 0, 0, 1]);
    const big = R2.zeros([5, 3, 1, 3]);
    expect(big.batchIndex([0, "..."]).toString()).toBe("R2(3,1,3; 3,3)");
    expect(big.batchIndex(["...", null, { start: 1 }]).toString()).toBe("R2(5,3,1,1,2; 3,3)");
    expect(big.batchSum([0, 1]).toString()).toBe("R2(1,3; 3,3)");
    expect(big.batchMean().toString()).toBe("R2(; 3,3)".replace("; ", ";"));
    const ls = linspace(SR2.zeros([5, 3, 1, 2]), SR2.ones([5, 3, 1, 2]), 101, 2);
    expect(ls.toString()).toBe("SR2(5,3,101,1,2; 6)");
    expectClose(linspace(Scalar.fill(0), Scalar.fill(1), 5), [0, 0.25, 0.5, 0.75, 1]);
    expectClose(logspace(Scalar.fill(0), Scalar.fill(2), 3), [1, 10, 100], 1e-5);
  });

  it("SSR4 inverse under jit equals eager", () => {
    const f = jit((c: Tensor) => new SSR4(c).inverse().t);
    const C = SSR4.isotropicENu(
      new Scalar(fromTypedArray(new Float32Array([100, 200, 50]), [3], { batchDim: 1 })),
      0.3,
    );
    const y = f(C.t);
    expectClose(new SSR4(y), vals(C.inverse()), 1e-6);
  });
});
