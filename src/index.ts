/**
 * batchwise: batched tensors with `(batch; base)` shapes and a lazy graph
 * compiler that emits batch-generic kernels.
 *
 * The full library: tensors and their operations, `jit` and `trace`, bundles
 * (`f.bundle()`, `loadBundle`), the JS and WebGPU backends, typed tensors (NEML2's
 * primitive types), jagged tensors and TensorDicts. A page that only runs bundles
 * can import `batchwise/runtime` instead.
 *
 * @example
 * ```ts
 * import { jit, tensor, type Tensor } from "batchwise";
 * const centre = jit((x: Tensor) => x.sub(x.mean(0, { keepdim: true })));
 * centre(tensor([[[1, 2], [3, 4]]], { batchDim: 1 })).toArraySync(); // [[[-1, -1], [1, 1]]]
 * ```
 *
 * @module batchwise
 */
import { installCompiler } from "./compiler.js";
import { installTensorApi } from "./api/tensor-api.js";
// The declarations of the methods installTensorApi installs (a `declare module` augmentation of Tensor): this
// side-effect import keeps them in the .d.ts, where declaration emit drops the named import above.
import "./api/tensor-api.js";

// The full library compiles: eager tensor operations and jit use the pass pipeline and the code generators.
installCompiler();
// The comparison and small-op methods of Tensor: installed here so that batchwise/runtime (bundles only)
// does not carry them. These calls stay in every bundle of a page that imports batchwise because package.json
// lists this file in "sideEffects" (this module is otherwise only re-exports, which bundlers see through).
// TensorDict's row assignment, non-tensor and padding methods are installed by the class's own module
// (src/tensordict/tensordict.ts), so a page that never uses TensorDict carries neither.
installTensorApi();
// The declarations of the eager Tensor operations (add, sum, reshape, …; installed by installCompiler above):
// this import keeps them in the types of `batchwise`.
import "./api/tensor-ops.js";

// Tensors, their creation, the backends (WebGPU's too), the bundle format, JaggedTensor and TensorDict: the exports
// batchwise/runtime has too (src/entry-shared.ts).
export * from "./entry-shared.js";
export { where, baseCat, baseStack, type ReduceOptions } from "./tensor.js";
export { arange, eye, diag } from "./creation.js";
export {
  jit,
  trace,
  spec,
  jaggedSpec,
  dictSpec,
  type ArgSpec,
  type DictSpec,
  type JitOptions,
  type JitArg,
  type JitOutput,
  type JitFunction,
  type JitStats,
  type DumpOptions,
} from "./jit.js";
export { parseSpec } from "./cli/spec.js";
export { loadBundle, bundleSha256, type BundleTypesOptions } from "./bundle.js";
// The error classes: all of ir/errors.ts.
export * from "../ir/errors.js";
export { promote } from "../ir/dtype.js";
export { fmtShape, type Dim, type TensorType } from "../ir/types.js";
export { counters, snapshot as counterSnapshot, type Counters } from "../runtime/stats.js";
export { printGraph } from "../ir/print.js";
export { parseGraph } from "../ir/parse.js";
export type { ToPaddedOptions } from "./ragged/jagged.js";
export { fromPadded } from "./ragged/build.js";
export * from "./typed/index.js";
export * from "./ragged/index.js";
// These take TensorDicts as well as tensors; explicit exports shadow ragged/index.js's plain versions.
export {
  stack,
  cat,
  padSequence,
  unpadSequence,
  maybeDenseStack,
  lazyStack,
  LazyStackedTensorDict,
  type NestedKey,
  type TensorDictSource,
  type TensorDictValue,
  type LazyGetOptions,
  type PadDictsOptions,
  type UnpadOptions,
} from "./tensordict/index.js";
// --- linear algebra ---
export * as linalg from "./linalg/index.js";
// --- api: .npy/.npz I/O ---
export {
  loadNpy,
  saveNpy,
  saveNpySync,
  readNpy,
  writeNpy,
  FileFormatError,
  type NpyArray,
  type LoadNpyOptions,
  type SaveNpyOptions,
} from "./io/npy.js";
export { loadNpz, saveNpz, saveNpzSync, type LoadNpzOptions, type SaveNpzOptions, type NpzArrays } from "./io/npz.js";
// --- api: comparisons, small ops, linspace/logspace, NEML2 utilities ---
export type { CloseOptions } from "./api/tensor-api.js";
export { linspace, logspace, baseLinspace, baseLogspace, type TypedLike } from "./creation.js";
export {
  broadcastBatchDim,
  broadcastable,
  storageSize,
  addShapes,
  padPrepend,
  padAppend,
  SFFR4,
  WFFR4,
} from "./neml2/index.js";
// --- api: tensordict non-tensor entries and row assignment ---
export {
  NonTensorData,
  NonTensorStack,
  type LazyMember,
  type TensorDictLeaf,
  type BatchSelector,
  type SliceSelector,
  type NonTensor,
} from "./tensordict/index.js";
// --- api: boolean masks and nonzero (eager) ---
export { booleanMask, booleanMaskAsync, nonzero, nonzeroAsync } from "./select/mask.js";
// --- derivatives (grad, vjp, jvp, per-sample Jacobians) ---
export {
  grad,
  valueAndGrad,
  vjp,
  jvp,
  jacfwd,
  jacrev,
  jacobian,
  hessian,
  type GradOptions,
  type GradOf,
  type Jacobian,
  type Differentiable,
} from "./grad.js";
// --- numerics and random numbers ---
export {
  einsum,
  cumsum,
  cumprod,
  softmax,
  logSoftmax,
  logsumexp,
  std,
  sort,
  argsort,
  topk,
  MAX_AXIS_LENGTH,
  type KeepdimOptions,
  type VarOptions,
  type SortOptions,
  type TopkOptions,
  type TopkResult,
} from "./numerics/index.js";
export * as random from "./random/index.js";
import { installNumericMethods } from "./numerics/methods.js";
// The declarations of those methods (a `declare module` augmentation of Tensor): declaration emit drops
// the named import above, and with it the augmentation; it keeps a side-effect import.
import "./numerics/methods.js";
// The Tensor methods cumsum, sort, softmax, var, … (batchwise/runtime leaves them out).
installNumericMethods();
export type { UniformOptions, NormalOptions } from "./random/index.js";
// --- WebAssembly backend ---
export { initWasm, setThreads, type WasmBackend, type WasmOptions } from "./wasm.js";
// --- indexing: NumPy-style index lists (x.index, x.baseIndex, x.batchIndex) ---
export {
  sl,
  resolveBaseIndex,
  type IndexSlice,
  type IndexItem,
  type IndexArray,
  type IndexList,
  type ResolvedBaseIndex,
} from "./select/index-list.js";
// --- updates (scatter): x.at(idx).set/add/mul/min/max/get ---
export type { AtIndex, TensorAt } from "./api/tensor-api.js";
