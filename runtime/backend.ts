/**
 * The narrow backend contract (docs/ARCHITECTURE.md, Backends): allocate, write, read, compile,
 * dispatch, free. The program executor (runtime/program.ts) is the only caller.
 */
import type { DType, TypedArray } from "../ir/dtype.js";
import type { Kernel, Launch } from "../ir/kernel.js";
import type { BackendName } from "./backend-name.js";

export type { BackendName } from "./backend-name.js";

/** A device buffer of `length` elements of `dtype`, owned by one backend. */
export interface DeviceBuffer {
  readonly dtype: DType;
  readonly length: number;
  /**
   * @internal The tensors holding this buffer, counted by src/tensor.ts (a field, not a
   * WeakMap entry per buffer, which cost more at every call).
   */
  refs?: number;
}

/** A kernel compiled for one backend; opaque to everything but that backend. */
export interface CompiledKernel {
  readonly kernel: Kernel;
  /** The generated source (JS or WGSL), for dumps and error messages. */
  readonly source: string;
}

/**
 * What a backend can do. The library decides by these fields, never by the backend's
 * name (whose list is `BACKEND_NAMES`, runtime/backend-name.ts).
 */
export interface BackendCapabilities {
  /**
   * Buffers are host memory owned by the garbage collector: `free` is a no-op and tensors
   * need not reference-count them. false: device memory, counted and freed explicitly.
   */
  readonly hostMemory: boolean;
  /** The dtypes its buffers and kernels can hold (WebGPU: no float64, WGSL has no f64). */
  readonly dtypes: readonly DType[];
  /** How many storage buffers one kernel may bind (inputs + outputs); Infinity on JS. */
  readonly maxKernelBuffers: number;
  /**
   * One unrolled kernel may write outputs of different small base shapes (see
   * `FuseOptions.mixedBaseOutputs`).
   */
  readonly mixedBaseOutputs: boolean;
  /** `compile` returns the kernel itself, never a Promise, so programs run synchronously. */
  readonly syncCompile: boolean;
  /** The code a bundle must ship for each kernel so that `load` can run it without code generation. */
  readonly shippedKernel: KernelTarget;
}

/**
 * A place where tensors live and kernels run: the JS backend (the default, host
 * memory) or WebGPU (`initWebGPU`). `getBackend()` gives the current one; tensors
 * move between backends with `t.to(backend)`. Its buffer and kernel methods are
 * what the runtime calls to run programs; user code rarely needs them.
 */
export interface Backend extends BackendCapabilities {
  /** For cache keys and `setBackend`; decisions go by the capability fields. */
  readonly name: BackendName;
  /** The name messages print ("JS", "WebGPU"). */
  readonly displayName: string;
  /** A new buffer of `length` elements of `dtype` (contents unspecified until written). */
  alloc(dtype: DType, length: number): DeviceBuffer;
  /** Whether `buf` is a buffer this backend's kernels can bind (JS: any host buffer; WebGPU: its own). */
  owns(buf: DeviceBuffer): boolean;
  /** Copies `data` (the buffer's dtype and length) into the buffer. */
  write(buf: DeviceBuffer, data: TypedArray): void;
  /** The buffer's contents, copied back to the host. */
  read(buf: DeviceBuffer): Promise<TypedArray>;
  /** Synchronous read-back; only backends whose memory is host memory provide it. */
  readSync?(buf: DeviceBuffer): TypedArray;
  /** The buffer's own storage, no copy (host-memory backends only); writes to it change the buffer. */
  view?(buf: DeviceBuffer): TypedArray;
  /** A buffer that is `data` itself, no copy (host-memory backends only). */
  wrap?(dtype: DType, data: TypedArray): DeviceBuffer;
  /** The source `compile` would build the kernel from (for dumps; no compilation). */
  source(kernel: Kernel): string;
  /** Compiles a kernel; callers cache by `kernelKey`, so this is called once per distinct kernel. */
  compile(kernel: Kernel): CompiledKernel | Promise<CompiledKernel>;
  /**
   * A kernel from a bundle, with no code generation: the JS backend takes the shipped
   * function, WebGPU the shipped WGSL (which its driver compiles).
   */
  load(kernel: Kernel, shipped: ShippedKernel): CompiledKernel | Promise<CompiledKernel>;
  /** Runs one kernel: `outputs[i]` receives `kernel.outputs[i]`, written contiguously. */
  dispatch(k: CompiledKernel, inputs: readonly DeviceBuffer[], outputs: readonly DeviceBuffer[], launch: Launch): void;
  /** Releases the buffer (WebGPU pools it for reuse); it must not be used afterwards. */
  free(buf: DeviceBuffer): void;
  /**
   * Copies element ranges `[srcOffset, dstOffset, length]` from each source into `dst`
   * (same dtype): one call per copy step, so a backend can submit it as one batch.
   */
  copy(dst: DeviceBuffer, sources: readonly CopySource[]): void;
}

/** One source of a copy step and its element ranges `[srcOffset, dstOffset, length]`. */
export interface CopySource {
  readonly src: DeviceBuffer;
  readonly regions: readonly (readonly [number, number, number])[];
}

/**
 * The kinds of code a bundle ships for a kernel, once: each is a field of `ShippedKernel`
 * and what a backend's `shippedKernel` names (the JS function; the WGSL module text).
 */
export const KERNEL_TARGETS = ["js", "wgsl"] as const;
/** A kind of shipped kernel code: `"js"` or `"wgsl"` (`KERNEL_TARGETS`). */
export type KernelTarget = (typeof KERNEL_TARGETS)[number];

/**
 * The code a bundle ships for one kernel: one field per target (`KernelTarget`) it can
 * hold, and what the code generator knew about it (`chunked`).
 */
export interface ShippedKernel {
  /** `function (ins, outs, sizes, strides, consts)`, as the JS code generator writes it. */
  readonly js?: (
    ins: unknown[],
    outs: unknown[],
    sizes: readonly number[],
    strides: readonly number[],
    consts: Float64Array,
  ) => void;
  /** The WGSL module text. */
  readonly wgsl?: string;
  /**
   * The WGSL reads its chunk count (tree reductions and segmented kernels, see
   * `wgslLaunchPlan`): written by the code generator with the source (bundle format 3;
   * for format 2, which has no such field, the loader tells it from the WGSL text).
   */
  readonly chunked?: boolean;
}
