/**
 * `npx tsx examples/j2-plasticity.ts`: small-strain J2 plasticity with linear
 * isotropic hardening, the material model a NEML2 user meets first, evaluated
 * at every material point of a batch by one jit function traced once.
 *
 * Per point, given the total strain ε, the old plastic strain εᵖ and the old
 * equivalent plastic strain p (Mandel SR2s and Scalars):
 *
 *  - trial stress: s = 2μ·dev(ε − εᵖ), q = √(3/2)·|s|, f = q − (σy + H·p);
 *  - radial return: the residual r(Δp; ε) = q(ε) − 3μ·Δp − σy − H·(p + Δp) is
 *    solved by Newton's method, Δp ← Δp − r / (∂r/∂Δp), with ∂r/∂Δp from `grad`
 *    (Δp = 0 where f ≤ 0: the step is elastic);
 *  - stress update: σ(ε, Δp) = K·tr(ε − εᵖ)·1 + (1 − 3μΔp/q)·s;
 *  - consistent tangent by the implicit function theorem, from the Jacobians of
 *    the residual and of the update (NEML2's approach):
 *    dσ/dε = ∂σ/∂ε + ∂σ/∂Δp ⊗ dΔp/dε with dΔp/dε = −(∂r/∂ε) / (∂r/∂Δp).
 *
 * `jacobian` of an SR2 by an SR2 is an SSR4 (Mandel in and out), of an SR2 by a
 * Scalar an SR2; `grad` of a Scalar by an SR2 is an SR2. The division by q uses
 * JAX's double-`where` so that elastic points (q may be 0) give no NaN.
 */
import { grad, jacobian, jit, Scalar, SR2, SSR4, Tensor, where, fromTypedArray, type JitFunction } from "batchwise";

/** Material parameters: Young's modulus, Poisson's ratio, yield stress, hardening modulus. */
export interface J2Material {
  readonly E: number;
  readonly nu: number;
  readonly sy: number;
  readonly H: number;
}

export const STEEL: J2Material = { E: 200e3, nu: 0.3, sy: 250, H: 2e3 };

const NEWTON_ITERATIONS = 3;

/** The stress update, the state and the consistent tangent of one step at every point. */
export interface J2Result {
  readonly stress: SR2;
  readonly plasticStrain: SR2;
  readonly p: Scalar;
  readonly tangent: SSR4;
}

/** One return-mapping step at every material point (a batch of SR2 strains). */
export function j2Update(m: J2Material, eps: SR2, epsP: SR2, p: Scalar): J2Result {
  const mu = m.E / (2 * (1 + m.nu));
  const K = m.E / (3 * (1 - 2 * m.nu));
  const trial = (e: SR2) =>
    e
      .sub(epsP)
      .dev()
      .mul(2 * mu);
  const qOf = (s: SR2) => s.norm().mul(Math.sqrt(1.5));
  const s = trial(eps);
  const f = qOf(s).sub(p.mul(m.H).add(m.sy));
  const plastic = f.t.gt(0);
  // The residual of the radial return and its Newton solve.
  const residual = (dp: Scalar, e: SR2): Scalar =>
    qOf(trial(e))
      .sub(dp.mul(3 * mu))
      .sub(p.add(dp).mul(m.H).add(m.sy));
  const drdp = grad(residual);
  let dp = new Scalar(f.t.mul(0));
  for (let i = 0; i < NEWTON_ITERATIONS; i++) dp = dp.sub(residual(dp, eps).div(drdp(dp, eps)));
  dp = new Scalar(where(plastic, dp.t, 0));
  // The stress update; q goes through the double where (never divided by where the step is elastic).
  const stressOf = (e: SR2, dp: Scalar): SR2 => {
    const st = trial(e);
    const q = qOf(st).t;
    const safeQ = where(plastic, q, 1);
    const scale = where(
      plastic,
      dp.t
        .mul(-3 * mu)
        .div(safeQ)
        .add(1),
      1,
    );
    const vol = SR2.identity({ dtype: e.dtype }).mul(new Scalar(e.sub(epsP).tr().t.mul(K)));
    return vol.add(st.mul(new Scalar(scale)));
  };
  const stress = stressOf(eps, dp);
  // Consistent tangent (implicit function theorem).
  const dsde = jacobian(stressOf, { argnums: 0 })(eps, dp) as SSR4;
  const dsdp = jacobian(stressOf, { argnums: 1 })(eps, dp) as SR2;
  const drde = grad(residual, { argnums: 1 })(dp, eps);
  const dpde = new SR2(where(plastic, drde.t.div(drdp(dp, eps).t).neg(), 0));
  const tangent = dsde.add(dsdp.outer(dpde));
  // The plastic flow: Δεᵖ = Δp · 3/2 · s/q.
  const q = where(plastic, qOf(s).t, 1);
  const flow = s.mul(new Scalar(dp.t.mul(1.5).div(q)));
  return { stress, plasticStrain: epsP.add(flow), p: p.add(dp), tangent };
}

/** `j2Update` under jit: `(ε, εᵖ, p) → [σ, εᵖ', p', dσ/dε]` as plain tensors, traced once for any batch size. */
export function j2Kernel(m: J2Material = STEEL): JitFunction<[Tensor, Tensor, Tensor], Tensor[]> {
  return jit((eps: Tensor, epsP: Tensor, p: Tensor) => {
    const r = j2Update(m, new SR2(eps), new SR2(epsP), new Scalar(p));
    return [r.stress.t, r.plasticStrain.t, r.p.t, r.tangent.t];
  });
}

/** Uniaxial-ish strains: point i gets ε = a_i·[1, −ν, −ν, 0, 0, 0] + small shears, a_i from 0 to 4e-3. */
export function sampleStrains(n: number): Float64Array {
  const e = new Float64Array(n * 6);
  for (let i = 0; i < n; i++) {
    const a = n === 1 ? 3e-3 : (4e-3 * i) / (n - 1);
    e.set([a, -0.3 * a, -0.3 * a, 1e-4 * Math.sin(i), 2e-4 * Math.cos(i), 5e-5], i * 6);
  }
  return e;
}

/** Runs the kernel on `n` points from a virgin state; returns the outputs as arrays. */
export function run(n: number, f = j2Kernel()): Float64Array[] {
  const eps = fromTypedArray(sampleStrains(n), [n, 6], { batchDim: 1 });
  const epsP = fromTypedArray(new Float64Array(n * 6), [n, 6], { batchDim: 1 });
  const p = fromTypedArray(new Float64Array(n), [n], { batchDim: 1 });
  return f(eps, epsP, p).map((t) => t.dataSync() as Float64Array);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const f = j2Kernel();
  for (const n of [1, 100_000]) {
    const t0 = performance.now();
    const [stress, , p, tangent] = run(n, f);
    const ms = performance.now() - t0;
    console.log(
      `${n} points in ${ms.toFixed(1)} ms: σ11[0] = ${stress![0]!.toFixed(3)}, p[0] = ${p![0]!.toExponential(4)}, C11[0] = ${tangent![0]!.toFixed(1)}`,
    );
  }
  console.log(`traces: ${f.stats.traces} (one trace for both batch sizes)`);
  console.log(f.dump({ after: "fuse" }).split("\n")[0]);
}
