/**
 * Function forms of the inverse trigonometric Tensor methods, kept for code that
 * imports them from here (they once were polynomial approximations).
 */
import type { Tensor } from "../tensor.js";
import { needTensor } from "./base.js";

/** `x.acos()`: inverse cosine in [0, π], NaN outside [-1, 1]. @example acos(tensor([-1])) // [π] */
export function acos(x: Tensor): Tensor {
  needTensor("acos", "x", x);
  return x.acos();
}

/** `x.asin()`: inverse sine in [-π/2, π/2], NaN outside [-1, 1]. @example asin(tensor([1])) // [π/2] */
export function asin(x: Tensor): Tensor {
  needTensor("asin", "x", x);
  return x.asin();
}
