/**
 * Linear algebra on the base matrices of a tensor, batched over its batch dims
 * (and any leading base dims): `linalg.solve(a, b)` with `a (B; n,n)` solves B
 * systems. Names follow NumPy's and PyTorch's `linalg`, in camelCase. Small
 * matrices (up to `LOOP_ABOVE`, `LOOP_ABOVE_JACOBI`) unroll into compositions of
 * the graph IR's ops over the matrix components; larger ones run as looped
 * kernels (the `routine` op). Either way a routine runs eagerly or inside `jit`
 * (one trace for every batch size), on JS, WebGPU and WebAssembly, and in bundles.
 *
 * @module linalg
 */
export {
  det,
  inv,
  solve,
  lu,
  luFactor,
  luSolve,
  cholesky,
  choleskyEx,
  luFactorEx,
  solveEx,
  invEx,
  triu,
  tril,
  trace,
  type LU,
  type LUFactor,
  type CholeskyEx,
  type LUFactorEx,
  type SolveEx,
} from "./direct.js";
export { MAX_DIRECT_SIZE, MAX_JACOBI_SIZE, LOOP_ABOVE, LOOP_ABOVE_JACOBI } from "./matrix.js";
export { qr, type QR, type QROptions } from "./qr.js";
export {
  eigh,
  eigvalsh,
  svd,
  svdvals,
  defaultSweeps,
  MAX_SWEEPS,
  type Eigh,
  type SVD,
  type SVDOptions,
  type JacobiOptions,
} from "./jacobi.js";
export {
  vectorNorm,
  matrixNorm,
  lstsq,
  type NormOptions,
  type MatrixNormOrd,
  type Lstsq,
  type LstsqOptions,
} from "./norms.js";
