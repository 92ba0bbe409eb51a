/**
 * acos/asin built from the ops that exist (the IR has no inverse trig op):
 * Abramowitz & Stegun 4.4.46, `acos(x) = sqrt(1-x)·Σ aₖxᵏ` for 0 ≤ x ≤ 1,
 * absolute error ≤ 2e-8, and `acos(-x) = π - acos(x)`. Good to float32
 * precision; float64 results carry that 2e-8 error.
 */
import { where, type Tensor } from "../tensor.js";
import { negate, cst } from "./components.js";

const A = [1.570796305, -0.2145988016, 0.0889789874, -0.0501743046, 0.030891881, -0.0170881256, 0.0066700901, -0.0012624911];

export function acos(x: Tensor): Tensor {
  const a = x.abs();
  let p = a.mul(A[7]!).add(A[6]!);
  for (let k = 5; k >= 0; k--) p = p.mul(a).add(A[k]!);
  const r = negate(a).add(1).sqrt().mul(p);
  return where(x.lt(0), negate(r).add(Math.PI), r);
}

export function asin(x: Tensor): Tensor {
  return cst(Math.PI / 2, x).sub(acos(x));
}
