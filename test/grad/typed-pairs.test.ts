/**
 * Typed arguments and results with no typed Jacobian class (NEML2 has none for
 * Rot → R2 or WR2 → Rot) give a plain Tensor, as the README says. These threw a
 * ShapeError ("R2: expected base (3,3), got x (2; 3,3,3)") because the result's
 * structure wrapped the Jacobian block in the result's own class. Values are checked
 * against central differences of the same map, in float64.
 */
import { describe, expect, it } from "vitest";
import { jacfwd, jacobian, Rot, Tensor, tensor, WR2 } from "../../src/index.js";

const data = [
  [0.1, 0.2, 0.3],
  [0.0, 0.1, 0.0],
];

/** d f(v) / d v by central differences, per sample: [sample][out flat][in]. */
function fd(f: (v: number[][]) => number[][], v: number[][], h = 1e-6): number[][][] {
  return v.map((_, b) => {
    const cols: number[][] = [];
    for (let j = 0; j < v[b]!.length; j++) {
      const plus = v.map((r) => [...r]);
      const minus = v.map((r) => [...r]);
      plus[b]![j]! += h;
      minus[b]![j]! -= h;
      const fp = f(plus)[b]!;
      const fm = f(minus)[b]!;
      cols.push(fp.map((p, k) => (p - fm[k]!) / (2 * h)));
    }
    // cols[j][k] → [k][j]
    return cols[0]!.map((_, k) => cols.map((c) => c[k]!));
  });
}

const flat = (t: Tensor): number[][] => {
  const a = Array.from(t.dataSync());
  const n = a.length / t.batchShape.reduce((p, q) => p * (q as number), 1);
  return Array.from({ length: a.length / n }, (_, b) => a.slice(b * n, (b + 1) * n));
};

/** `v` as a float64 tensor with one batch dim. */
const f64 = (v: number[][]): Tensor => tensor(v, { batchDim: 1, dtype: "float64" });

/** `J` is a plain Tensor of shape `shape`, equal (7 digits) to central differences of `f` at `data`. */
function expectCentralDifferences(J: unknown, shape: string, f: (x: Tensor) => Tensor): void {
  expect(J).toBeInstanceOf(Tensor);
  expect((J as Tensor).toString()).toBe(shape);
  const ref = fd((v) => flat(f(f64(v))), data);
  const got = flat(J as Tensor);
  got.forEach((row, b) => row.forEach((g, k) => expect(g).toBeCloseTo(ref[b]![Math.floor(k / 3)]![k % 3]!, 7)));
}

describe("Jacobians between typed tensors without a typed Jacobian class", () => {
  it("Rot → R2 (eulerRodrigues): a plain (B; 3,3,3) Tensor equal to central differences", () => {
    const r = new Rot(f64(data));
    for (const J of [jacobian((q: Rot) => q.eulerRodrigues())(r), jacfwd((q: Rot) => q.eulerRodrigues())(r)])
      expectCentralDifferences(J, "(2; 3,3,3)", (x) => new Rot(x).eulerRodrigues().t);
  });

  it("WR2 → Rot (exp): a plain (B; 3,3) Tensor equal to central differences", () => {
    const J = jacobian((q: WR2) => q.exp())(new WR2(f64(data)));
    expectCentralDifferences(J, "(2; 3,3)", (x) => new WR2(x).exp().t);
  });

  it("several results of a typed argument: a plain Tensor per result", () => {
    const r = new Rot(f64(data));
    const J = jacobian((q: Rot) => [q.eulerRodrigues(), q.t.mul(2)])(r) as Tensor[];
    expect(J[0]).toBeInstanceOf(Tensor);
    expect(J[1]!.toString()).toBe("(2; 3,3)");
    expect(J[1]!.toArraySync()).toEqual([
      [
        [2, 0, 0],
        [0, 2, 0],
        [0, 0, 2],
      ],
      [
        [2, 0, 0],
        [0, 2, 0],
        [0, 0, 2],
      ],
    ]);
  });
});
