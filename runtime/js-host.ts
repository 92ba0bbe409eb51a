/**
 * The JS backend's host side: typed arrays in host memory, kernels loaded from
 * bundles (shipped functions) and dispatched. Compiling a kernel needs a
 * `JsKernelCompiler` (the code generator and `new Function`, in runtime/js.ts),
 * which the full library installs; without one (`batchwise/runtime`) only
 * shipped kernels run, and this file holds no code generator and no `eval`.
 */
import { ARRAY_CTOR, DTYPES, type DType, type TypedArray } from "../ir/dtype.js";
import { BackendError } from "../ir/errors.js";
import { kernelConsts, type Kernel, type Launch } from "../ir/kernel.js";
import type { Backend, CompiledKernel, CopySource, DeviceBuffer, ShippedKernel } from "./backend.js";

export class JsBuffer implements DeviceBuffer {
  constructor(
    readonly dtype: DType,
    readonly data: TypedArray,
  ) {}
  get length(): number {
    return this.data.length;
  }
}

export type KernelFn = (
  ins: TypedArray[],
  outs: TypedArray[],
  sizes: readonly number[],
  strides: number[],
  consts: Float64Array,
) => void;

export interface JsCompiled extends CompiledKernel {
  readonly fn: KernelFn;
  /** The constants of the kernel it was compiled from, for launches that pass none. */
  readonly consts: Float64Array;
}

/** Kernel source and compilation for the JS backend (runtime/js.ts gives the real one). */
export interface JsKernelCompiler {
  source(kernel: Kernel): string;
  compile(kernel: Kernel): JsCompiled;
}

/**
 * A launch's input batch strides in one flat list, as kernels take them. The program
 * executor keeps a launch while the call's shapes repeat, so this is made once per
 * launch, not per call.
 */
const flatCache = new WeakMap<Launch, number[]>();
function flatStrides(launch: Launch): number[] {
  let flat = flatCache.get(launch);
  if (flat === undefined) {
    flat = [];
    for (const s of launch.inputBatchStrides) for (const v of s) flat.push(v);
    flatCache.set(launch, flat);
  }
  return flat;
}

export class JsHostBackend implements Backend {
  readonly name = "js" as const;
  readonly displayName = "JS";
  readonly hostMemory = true;
  /** Every dtype but float16 (which needs WebGPU's "shader-f16"). */
  readonly dtypes: readonly DType[] = DTYPES.filter((d) => d !== "float16");
  readonly maxKernelBuffers = Infinity;
  readonly mixedBaseOutputs = true;
  readonly syncCompile = true;
  readonly shippedKernel = "js" as const;

  alloc(dtype: DType, length: number): JsBuffer {
    return new JsBuffer(dtype, new ARRAY_CTOR[dtype](length));
  }

  owns(buf: DeviceBuffer): boolean {
    return buf instanceof JsBuffer;
  }

  /** Wraps an existing typed array without copying. */
  wrap(dtype: DType, data: TypedArray): JsBuffer {
    return new JsBuffer(dtype, data);
  }

  write(buf: DeviceBuffer, data: TypedArray): void {
    (buf as JsBuffer).data.set(data);
  }

  read(buf: DeviceBuffer): Promise<TypedArray> {
    return Promise.resolve(this.readSync(buf));
  }

  readSync(buf: DeviceBuffer): TypedArray {
    return (buf as JsBuffer).data.slice();
  }

  view(buf: DeviceBuffer): TypedArray {
    return (buf as JsBuffer).data;
  }

  private compiler: JsKernelCompiler | undefined;

  constructor(compiler?: JsKernelCompiler) {
    this.compiler = compiler;
  }

  /** Installs the kernel compiler (the full library does, once). */
  useCompiler(compiler: JsKernelCompiler): void {
    this.compiler = compiler;
  }

  private need(): JsKernelCompiler {
    if (this.compiler === undefined) {
      throw new BackendError(
        "js: this build has no kernel compiler (batchwise/runtime runs bundles only); compile with the full batchwise entry",
      );
    }
    return this.compiler;
  }

  source(kernel: Kernel): string {
    return this.need().source(kernel);
  }

  compile(kernel: Kernel): CompiledKernel {
    return this.need().compile(kernel);
  }

  load(kernel: Kernel, shipped: ShippedKernel): CompiledKernel {
    if (typeof shipped.js !== "function") throw new BackendError("js: a bundled kernel has no JS function");
    const compiled: JsCompiled = {
      kernel,
      source: String(shipped.js),
      fn: shipped.js as unknown as KernelFn,
      consts: kernelConsts(kernel),
    };
    return compiled;
  }

  dispatch(k: CompiledKernel, inputs: readonly DeviceBuffer[], outputs: readonly DeviceBuffer[], launch: Launch): void {
    const strides = flatStrides(launch);
    const data = (b: DeviceBuffer): TypedArray => (b as JsBuffer).data;
    (k as JsCompiled).fn(
      inputs.map(data),
      outputs.map(data),
      launch.batchSizes,
      strides,
      launch.consts ?? (k as JsCompiled).consts,
    );
  }

  copy(dst: DeviceBuffer, sources: readonly CopySource[]): void {
    const d = (dst as JsBuffer).data;
    for (const { src, regions } of sources) {
      const s = (src as JsBuffer).data;
      for (const [so, dO, n] of regions) {
        // A whole source needs no subarray view; short runs copy in a loop.
        if (so === 0 && n === s.length) d.set(s, dO);
        else if (n >= 32) d.set(s.subarray(so, so + n), dO);
        else for (let k = 0; k < n; k++) d[dO + k] = s[so + k]!;
      }
    }
  }

  free(_buf: DeviceBuffer): void {
    // Host memory: the garbage collector frees it.
  }
}
