/** The JS backend: typed arrays in host memory, kernels compiled with `new Function`. */
import { kernelToJS } from "../codegen/js.js";
import { ARRAY_CTOR, type DType, type TypedArray } from "../ir/dtype.js";
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

type KernelFn = (ins: TypedArray[], outs: TypedArray[], sizes: readonly number[], strides: number[], consts: Float64Array) => void;

interface JsCompiled extends CompiledKernel {
  readonly fn: KernelFn;
  /** The constants of the kernel it was compiled from, for launches that pass none. */
  readonly consts: Float64Array;
}

export class JsBackend implements Backend {
  readonly name = "js" as const;
  readonly displayName = "JS";
  readonly hostMemory = true;
  readonly dtypes: readonly DType[] = ["float32", "float64", "int32", "uint32", "bool"];
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

  source(kernel: Kernel): string {
    return kernelToJS(kernel).source;
  }

  compile(kernel: Kernel): CompiledKernel {
    const { source, body } = kernelToJS(kernel);
    let fn: KernelFn;
    try {
      fn = new Function("ins", "outs", "sizes", "strides", "consts", body) as KernelFn;
    } catch (e) {
      throw new BackendError(`js: generated kernel does not compile (${(e as Error).message}):\n${source}`);
    }
    const compiled: JsCompiled = { kernel, source, fn, consts: kernelConsts(kernel) };
    return compiled;
  }

  load(kernel: Kernel, shipped: ShippedKernel): CompiledKernel {
    if (typeof shipped.js !== "function") throw new BackendError("js: a bundled kernel has no JS function");
    const compiled: JsCompiled = { kernel, source: String(shipped.js), fn: shipped.js as unknown as KernelFn, consts: kernelConsts(kernel) };
    return compiled;
  }

  dispatch(k: CompiledKernel, inputs: readonly DeviceBuffer[], outputs: readonly DeviceBuffer[], launch: Launch): void {
    const strides: number[] = [];
    for (const s of launch.inputBatchStrides) for (const v of s) strides.push(v);
    const ins: TypedArray[] = [];
    for (const b of inputs) ins.push((b as JsBuffer).data);
    const outs: TypedArray[] = [];
    for (const b of outputs) outs.push((b as JsBuffer).data);
    (k as JsCompiled).fn(ins, outs, launch.batchSizes, strides, launch.consts ?? (k as JsCompiled).consts);
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
