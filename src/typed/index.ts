/* Typed tensors with static base shapes (NEML2's primitive types). */
export { PrimitiveTensor, type PrimitiveClass, type ScalarLike, type TypedOptions } from "./base.js";
export { type BatchIndex } from "./host.js";
export { Scalar } from "./scalar.js";
export { Vec } from "./vec.js";
export { R2 } from "./r2.js";
export { SR2, type SR2Eigh } from "./sr2.js";
export { WR2 } from "./wr2.js";
export { Rot, type EulerConvention, type AngleType } from "./rot.js";
export { Quaternion } from "./quaternion.js";
export { MillerIndex, gcd } from "./miller.js";
export { SSR4, mandelRotation } from "./ssr4.js";
export { R3, R4, SFR3, SFR4, WFR4, SWR4, WSR4, WWR4, R5, SSFR5, R8, SSSSR8 } from "./higher.js";
export { batchStack, batchCat, linspace, logspace } from "./batch.js";
export {
  fullToMandel,
  mandelToFull,
  fullToSkew,
  skewToFull,
  MANDEL_PAIRS,
  MANDEL_FACTORS,
  MANDEL_REVERSE,
  SKEW_PAIRS,
} from "./mandel.js";
export { acos, asin } from "./math.js";
