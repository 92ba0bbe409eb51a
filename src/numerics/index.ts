/**
 * Numerics along base axes, as compositions of IR ops: scans, sorting, softmax,
 * moments, vector norms and einsum (the README's "Numerics along base axes" lists the rules).
 */
export { MAX_AXIS_LENGTH } from "./common.js";
export {
  cumsum,
  cumprod,
  softmax,
  logSoftmax,
  logsumexp,
  variance,
  std,
  norm,
  type KeepdimOptions,
  type VarOptions,
} from "./reduce.js";
export { sort, argsort, topk, type SortOptions, type TopkOptions, type TopkResult } from "./sort.js";
export { einsum } from "./einsum.js";
