/**
 * What `batchwise` (src/index.ts) and `batchwise/runtime` (src/runtime-entry.ts)
 * both export: tensors and their creation, the backends (WebGPU's too), the
 * errors of loading and running bundles, the bundle format's names and types,
 * and the containers bundles take and give. Each entry re-exports all of this
 * module and adds its own `loadBundle` (the full one re-derives a bundle from its
 * graph, the runtime's trusts a pinned hash) and the rest of its surface. Only
 * re-exports: a page carries what it uses of them.
 */
export {
  BUNDLE_FORMAT,
  BUNDLE_VERSION,
  type BundleModule,
  type BundleFunction,
  type BundleFunctionOf,
  type LoadBundleOptions,
} from "./bundle-load.js";
// What the declarations bundleTypes() writes import (types only), from either entry.
export type { BundleArgs, BundleResults } from "./bundle-types.js";
export { Tensor, type NestedArray } from "./tensor.js";
export type { FormatOptions } from "./format.js";
export {
  tensor,
  fromTypedArray,
  full,
  zeros,
  ones,
  empty,
  scalar,
  type TensorOptions,
  type CreateOptions,
} from "./creation.js";
export { getBackend, setBackend } from "./backend.js";
export type { Backend, BackendCapabilities, BackendName } from "../runtime/backend.js";
// WebGPU: initWebGPU and the types of its options and backend (all of src/webgpu.ts, the public WebGPU surface of both entries).
export * from "./webgpu.js";
export { BatchwiseError, ShapeError, DTypeError, BackendError, BundleError } from "../ir/errors.js";
export type { DType, TypedArray } from "../ir/dtype.js";
export { JaggedTensor } from "./ragged/jagged.js";
export { jagged } from "./ragged/build.js";
export { TensorDict } from "./tensordict/index.js";
