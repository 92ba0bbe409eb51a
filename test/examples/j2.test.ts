/**
 * examples/j2-plasticity.ts against the closed-form radial return of J2
 * plasticity with linear isotropic hardening (Simo & Hughes), written out here
 * on plain numbers, Mandel notation:
 *
 *   μ = E/(2(1+ν)), K = E/(3(1−2ν)), 1 = [1,1,1,0,0,0], I = the 6×6 identity,
 *   s = 2μ·dev(ε − εᵖ), q = √(3/2)|s|, f = q − σy − H·p;
 *   elastic (f ≤ 0): Δp = 0, σ = K tr(ε)1 + s, C = K 1⊗1 + 2μ(I − 1⊗1/3);
 *   plastic: Δp = f/(3μ+H), n = s/|s|, θ = 1 − 3μΔp/q, θ̄ = 3μ/(3μ+H) − 3μΔp/q,
 *   σ = K tr(ε)1 + θ s, εᵖ' = εᵖ + Δp·(3/2)·s/q,
 *   C = K 1⊗1 + 2μθ(I − 1⊗1/3) − 2μθ̄ n⊗n.
 */
import { expect, it } from "vitest";
import { counters, counterSnapshot, fromTypedArray } from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { j2Kernel, run, sampleStrains, STEEL } from "../../examples/j2-plasticity.js";
import { onWebGPU } from "../helpers/on-webgpu.js";

const probe = await probeWebGPUForFile();

function closedForm(e: readonly number[]): { stress: number[]; ep: number[]; p: number; C: number[] } {
  const { E, nu, sy, H } = STEEL;
  const mu = E / (2 * (1 + nu));
  const K = E / (3 * (1 - 2 * nu));
  const tr = e[0]! + e[1]! + e[2]!;
  const one = [1, 1, 1, 0, 0, 0];
  const s = e.map((x, k) => 2 * mu * (x - (k < 3 ? tr / 3 : 0)));
  const ns = Math.hypot(...s);
  const q = Math.sqrt(1.5) * ns;
  const f = q - sy;
  const C: number[] = [];
  if (f <= 0) {
    for (let i = 0; i < 6; i++)
      for (let j = 0; j < 6; j++)
        C.push(K * one[i]! * one[j]! + 2 * mu * ((i === j ? 1 : 0) - (one[i]! * one[j]!) / 3));
    return { stress: s.map((x, k) => K * tr * one[k]! + x), ep: [0, 0, 0, 0, 0, 0], p: 0, C };
  }
  const dp = f / (3 * mu + H);
  const n = s.map((x) => x / ns);
  const theta = 1 - (3 * mu * dp) / q;
  const thetaBar = (3 * mu) / (3 * mu + H) - (3 * mu * dp) / q;
  for (let i = 0; i < 6; i++)
    for (let j = 0; j < 6; j++)
      C.push(
        K * one[i]! * one[j]! +
          2 * mu * theta * ((i === j ? 1 : 0) - (one[i]! * one[j]!) / 3) -
          2 * mu * thetaBar * n[i]! * n[j]!,
      );
  return {
    stress: s.map((x, k) => K * tr * one[k]! + theta * x),
    ep: s.map((x) => (dp * 1.5 * x) / q),
    p: dp,
    C,
  };
}

function expectClose(a: ArrayLike<number>, b: readonly number[], tol: number, what: string): void {
  for (let i = 0; i < b.length; i++) {
    if (!(Math.abs(a[i]! - b[i]!) <= tol * Math.max(1, Math.abs(b[i]!))))
      throw new Error(`${what}[${i}]: ${a[i]} vs closed form ${b[i]}`);
  }
}

function check(n: number, out: Float64Array[], stride = 1): { plastic: number; elastic: number } {
  const [stress, ep, p, C] = out;
  const strains = sampleStrains(n);
  let plastic = 0;
  let elastic = 0;
  for (let i = 0; i < n; i += stride) {
    const want = closedForm(Array.from(strains.subarray(i * 6, i * 6 + 6)));
    if (want.p > 0) plastic++;
    else elastic++;
    expectClose(stress!.subarray(i * 6, i * 6 + 6), want.stress, 1e-9, `stress at ${i}`);
    expectClose(ep!.subarray(i * 6, i * 6 + 6), want.ep, 1e-9, `plastic strain at ${i}`);
    expectClose([p![i]!], [want.p], 1e-9, `p at ${i}`);
    expectClose(C!.subarray(i * 36, i * 36 + 36), want.C, 1e-9, `tangent at ${i}`);
  }
  return { plastic, elastic };
}

it("J2 radial return: stress, state and consistent tangent (jacobian of the residual) match the closed form at 1 and 100,000 points, one trace", () => {
  const f = j2Kernel();
  const before = counterSnapshot();
  const one = check(1, run(1, f));
  expect(one.plastic).toBe(1);
  const many = check(100_000, run(100_000, f), 97);
  // The sample spans the elastic range and the plastic range.
  expect(many.plastic).toBeGreaterThan(100);
  expect(many.elastic).toBeGreaterThan(100);
  expect(f.stats.traces).toBe(1);
  expect(counters.traces - before.traces).toBe(1);
  expect(counters.compiles - before.compiles).toBe(1);
  expect(f.dump({ after: "fuse" })).toMatch(/: 1 kernels/);
  // No NaN anywhere (elastic points with q = 0 at ε = 0 go through the double where).
  for (const o of run(3, f)) expect(Array.from(o).every(Number.isFinite)).toBe(true);
});

describeWebGPU(probe, "J2 on WebGPU (float32)", (gpu) => {
  it("stress and consistent tangent match the closed form at float32 precision, one trace for two sizes", () =>
    onWebGPU(gpu, async () => {
      const f = j2Kernel();
      for (const n of [1, 1000]) {
        const e64 = sampleStrains(n);
        const args = [Float32Array.from(e64), new Float32Array(n * 6), new Float32Array(n)].map((a, i) =>
          fromTypedArray(a, i === 2 ? [n] : [n, 6], { batchDim: 1 }),
        );
        const outs = await f.callAsync(args[0]!, args[1]!, args[2]!);
        const [stress, , p, C] = await Promise.all(outs.map((o) => o.data()));
        for (let i = 0; i < n; i += 37) {
          const want = closedForm(Array.from(Float32Array.from(e64.subarray(i * 6, i * 6 + 6))));
          const scale = (v: readonly number[]) => Math.max(...v.map(Math.abs));
          const near = (a: ArrayLike<number>, b: readonly number[], what: string) => {
            const s = scale(b);
            b.forEach((v, k) => {
              if (!(Math.abs(Number(a[k]) - v) <= 2e-4 * s)) throw new Error(`${what}[${k}] at ${i}: ${a[k]} vs ${v}`);
            });
          };
          near(stress!.subarray(i * 6, i * 6 + 6), want.stress, "stress");
          near(C!.subarray(i * 36, i * 36 + 36), want.C, "tangent");
          expect(Math.abs(Number(p![i]) - want.p)).toBeLessThanOrEqual(1e-6);
        }
      }
      expect(f.stats.traces).toBe(1);
    }));
});
