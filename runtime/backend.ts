/**
 * The narrow backend contract (docs/ARCHITECTURE.md, Backends): allocate, write, read, compile,
 * dispatch, free. The program executor (runtime/program.ts) is the only caller.
 */
import type { DType, TypedArray } from "../ir/dtype.js";
import type { Kernel, Launch } from "../ir/kernel.js";

/** A device buffer of `length` elements of `dtype`, owned by one backend. */
export interface DeviceBuffer {
  readonly dtype: DType;
  readonly length: number;
}

/** A kernel compiled for one backend; opaque to everything but that backend. */
export interface CompiledKernel {
  readonly kernel: Kernel;
  /** The generated source (JS or WGSL), for dumps and error messages. */
  readonly source: string;
}

export interface Backend {
  readonly name: "js" | "webgpu";
  /** How many storage buffers one kernel may bind (inputs + outputs); Infinity on JS. */
  readonly maxKernelBuffers: number;
  alloc(dtype: DType, length: number): DeviceBuffer;
  write(buf: DeviceBuffer, data: TypedArray): void;
  read(buf: DeviceBuffer): Promise<TypedArray>;
  /** Synchronous read-back; only backends whose memory is host memory provide it. */
  readSync?(buf: DeviceBuffer): TypedArray;
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

/** The code a bundle ships for one kernel. */
export interface ShippedKernel {
  /** `function (ins, outs, sizes, strides, consts)`, as the JS code generator writes it. */
  readonly js?: (ins: unknown[], outs: unknown[], sizes: readonly number[], strides: readonly number[], consts: Float64Array) => void;
  /** The WGSL module text. */
  readonly wgsl?: string;
}
