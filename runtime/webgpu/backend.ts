/**
 * The WebGPU backend (docs/ARCHITECTURE.md, Backends): kernels become WGSL compute pipelines,
 * tensors live in pooled storage buffers, batch sizes and strides travel in a
 * per-dispatch uniform. bool is stored as one u32 per element on the device and
 * as a Uint8Array on the host.
 *
 * Device loss (a driver reset, or `device.destroy()` from outside) fails the call
 * in flight with a `BackendError`; the backend then opens a new device, and calls
 * made after that work (buffers of the lost device are gone and say so).
 */
import { ARRAY_CTOR, F16_UNAVAILABLE, isNarrowInt, type DType, type TypedArray } from "../../ir/dtype.js";
import { launchRank, numel, type Kernel, type Launch } from "../../ir/kernel.js";
import { kernelToWGSL, outputCount } from "../../codegen/wgsl.js";
import { combineToWGSL, rowCombineToWGSL } from "../../codegen/wgsl-combine.js";
import {
  mainReadsChunks,
  planGpuLaunch,
  wgslUniform,
  type GpuBuffer,
  type GpuPass,
  type GpuProgram,
} from "../../codegen/gpu-plan.js";
import type { Backend, CompiledKernel, CopySource, DeviceBuffer, ShippedKernel } from "../backend.js";
import {
  acquireDevice,
  type AcquiredDevice,
  type AdapterDescription,
  type DeviceLimits,
  type WebGPUOptions,
} from "./device.js";
import { BackendError } from "./errors.js";
import type { GPUDeviceLike } from "./gpu-types.js";
import { DTypeError } from "../../ir/errors.js";
import { BufferPool } from "./pool.js";
import { PipelineCache, type PipelineEntry } from "./pipelines.js";

export type { WebGPUOptions, AdapterDescription, DeviceLimits } from "./device.js";

/** A storage buffer bound to a kernel: the buffer and the bytes the kernel may see. */
interface Binding {
  readonly gpu: GPUBuffer;
  readonly bytes: number;
}

// GPUBufferUsage / GPUMapMode values (fixed by the spec; Dawn in Node has no such globals).
const MAP_READ = 0x1;
const COPY_SRC = 0x4;
const COPY_DST = 0x8;
const UNIFORM = 0x40;
const STORAGE = 0x80;

/** Bytes per element on the device: every dtype WGSL can hold is 32-bit (bool as u32). */
const ELEMENT_BYTES = 4;
/** Idle bytes each pool may keep before it destroys released buffers. */
const MAX_POOLED_BYTES = 256 * 2 ** 20;

/**
 * Host array type of each device dtype as stored on the GPU. WGSL has no 8- or 16-bit
 * storage: the narrow integers are stored widened, one i32 per element (written from
 * and read back into their own typed arrays), float16 as one f32 per element.
 */
const DEVICE_CTOR = {
  float32: Float32Array,
  int32: Int32Array,
  uint32: Uint32Array,
  bool: Uint32Array,
  uint8: Int32Array,
  int8: Int32Array,
  uint16: Int32Array,
  int16: Int32Array,
  float16: Float32Array,
} as const;

/** Counters of one WebGPU backend (`backend.stats`). */
export interface WebGPUStats {
  /** Compute pipelines created (one per distinct WGSL source and device). */
  readonly pipelines: number;
  /** `compile` calls answered by an existing (or in-flight) pipeline. */
  readonly pipelineCacheHits: number;
  /** Compute dispatches submitted. */
  readonly dispatches: number;
  /** Copy steps submitted (each one command buffer, whatever its number of sources). */
  readonly copies: number;
  /** Buffers handed out by `alloc` and not yet freed. */
  readonly liveBuffers: number;
  /** Idle storage buffers in the pool. */
  readonly pooledBuffers: number;
  /** Bytes of storage buffers that exist on the device (live and pooled). */
  readonly bytesAllocated: number;
}

/** One generation of device state; replaced wholesale when the device is lost. */
interface DeviceState {
  readonly gen: number;
  readonly acquired: AcquiredDevice;
  readonly storage: BufferPool;
  readonly uniforms: BufferPool;
  readonly staging: BufferPool;
  readonly pipelines: PipelineCache;
}

class WebGPUBuffer implements DeviceBuffer {
  freed = false;
  constructor(
    readonly dtype: DType,
    readonly length: number,
    readonly gpu: GPUBuffer,
    readonly gen: number,
    readonly owner: WebGPUBackend,
  ) {}
  get byteLength(): number {
    return this.length * ELEMENT_BYTES;
  }
}

class WebGPUKernel implements CompiledKernel {
  /** Sources of the plan's other programs (combine, row-combine), made on first need. */
  private readonly sources = new Map<Exclude<GpuProgram, "main">, string>();
  constructor(
    readonly kernel: Kernel,
    readonly source: string,
    public entry: PipelineEntry,
    public gen: number,
    readonly owner: WebGPUBackend,
  ) {}

  /** WGSL of a pass program other than the main one (codegen/wgsl-combine.ts). */
  sourceOf(program: Exclude<GpuProgram, "main">): string {
    let src = this.sources.get(program);
    if (src === undefined) {
      src =
        program === "row-combine"
          ? rowCombineToWGSL(this.kernel)
          : combineToWGSL(this.kernel, program === "combine-final");
      this.sources.set(program, src);
    }
    return src;
  }
}

function checkDType(d: DType, what: string): asserts d is Exclude<DType, "float64"> {
  if (d === "float64") {
    throw new DTypeError(`webgpu: ${what} is float64, which WebGPU cannot hold (WGSL has no f64); cast to float32`);
  }
}

function mib(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(2)} MiB`;
}

/**
 * The WebGPU backend `initWebGPU` returns: kernels as WGSL compute shaders on one
 * GPU device (Dawn in Node, `navigator.gpu` in a browser), with pooled storage
 * buffers. Pass it to `setBackend`, `jit` or `t.to`.
 */
export class WebGPUBackend implements Backend {
  readonly name = "webgpu" as const;
  readonly displayName = "WebGPU";
  readonly hostMemory = false;
  /** No float64: WGSL has no f64. float16 only on a device with the "shader-f16" feature. */
  get dtypes(): readonly DType[] {
    const narrow: DType[] = ["uint8", "int8", "uint16", "int16"];
    return ["float32", "int32", "uint32", "bool", ...narrow, ...(this.shaderF16 ? (["float16"] as const) : [])];
  }
  /** The device has the "shader-f16" feature (requested whenever the adapter offers it). */
  get shaderF16(): boolean {
    return this.state.acquired.shaderF16 === true;
  }
  /** The outputs of one kernel share one base shape. */
  readonly mixedBaseOutputs = false;
  /** Pipelines are created asynchronously. */
  readonly syncCompile = false;
  readonly shippedKernel = "wgsl" as const;
  private state: DeviceState;
  private nextGen = 0;
  private destroyed = false;
  /** Why the current device was lost, while its replacement is on its way. */
  private lostReason: string | null = null;
  private replacing: Promise<void> | null = null;
  private replaceError: BackendError | null = null;
  /** Validation errors reported asynchronously by error scopes, raised on the next call. */
  private pendingErrors: string[] = [];
  private readonly scopes = new Set<Promise<void>>();
  private counters = { dispatches: 0, copies: 0, liveBuffers: 0, pipelines: 0, hits: 0 };

  constructor(
    acquired: AcquiredDevice,
    private readonly options: WebGPUOptions = {},
  ) {
    this.state = this.adopt(acquired);
  }

  /** The current device (tests use it to simulate loss with `device.destroy()`). */
  get device(): GPUDeviceLike {
    return this.state.acquired.device;
  }
  /** What the adapter reports about the GPU, and the Dawn flags used. */
  get adapter(): AdapterDescription {
    return this.state.acquired.adapter;
  }
  /** The device limits the backend relies on, as granted. */
  get limits(): DeviceLimits {
    return this.state.acquired.limits;
  }
  get maxKernelBuffers(): number {
    return this.state.acquired.limits.maxStorageBuffersPerShaderStage;
  }
  /** True once `destroy` (or `dispose`) has run. */
  get isDestroyed(): boolean {
    return this.destroyed;
  }

  /** Counters of pipelines, dispatches, copies and buffers on this backend. */
  get stats(): WebGPUStats {
    const s = this.state;
    return {
      pipelines: this.counters.pipelines + s.pipelines.pipelines,
      pipelineCacheHits: this.counters.hits + s.pipelines.hits,
      dispatches: this.counters.dispatches,
      copies: this.counters.copies,
      liveBuffers: this.counters.liveBuffers,
      pooledBuffers: s.storage.pooledBuffers,
      bytesAllocated: s.storage.bytesAllocated,
    };
  }

  private adopt(acquired: AcquiredDevice): DeviceState {
    const gen = this.nextGen++;
    const { device, limits } = acquired;
    const state: DeviceState = {
      gen,
      acquired,
      storage: new BufferPool(
        device,
        STORAGE | COPY_SRC | COPY_DST,
        limits.maxBufferSize,
        MAX_POOLED_BYTES,
        "bw-storage",
      ),
      uniforms: new BufferPool(device, UNIFORM | COPY_DST, limits.maxBufferSize, 2 ** 20, "bw-params"),
      staging: new BufferPool(device, MAP_READ | COPY_DST, limits.maxBufferSize, MAX_POOLED_BYTES, "bw-staging"),
      pipelines: new PipelineCache(device),
    };
    device.onuncapturederror = (ev: GPUUncapturedErrorEvent) => {
      if (this.state.gen === gen) this.pendingErrors.push(ev.error.message);
    };
    void device.lost.then((info) => this.onLost(gen, info));
    return state;
  }

  private onLost(gen: number, info: GPUDeviceLostInfo): void {
    if (this.destroyed || gen !== this.state.gen) return;
    this.lostReason = `${info.reason}: ${info.message}`;
    const old = this.state;
    // Counters survive the device; the new state starts its own pools and cache.
    this.counters.pipelines += old.pipelines.pipelines;
    this.counters.hits += old.pipelines.hits;
    this.replacing = acquireDevice({ ...this.options, fresh: true }).then(
      (acquired) => {
        if (this.destroyed) {
          acquired.device.destroy();
          return;
        }
        this.state = this.adopt(acquired);
        this.lostReason = null;
        this.pendingErrors = [];
      },
      (e: unknown) => {
        this.replaceError = e instanceof BackendError ? e : new BackendError(String(e));
      },
    );
  }

  /** Resolves once a usable device is in place (after a device loss, the new one). */
  async ready(): Promise<void> {
    if (this.replacing) await this.replacing;
    this.live();
  }

  /** Throws unless the backend has a working device; raises validation errors seen since the last call. */
  private live(): DeviceState {
    if (this.destroyed) throw new BackendError("webgpu: the backend was destroyed; call initWebGPU() for a new one");
    if (this.replaceError)
      throw new BackendError(`webgpu: the device was lost and no new one could be had: ${this.replaceError.message}`);
    if (this.lostReason !== null) {
      throw new BackendError(
        `webgpu: the device was lost (${this.lostReason}); a new one is being opened: await initWebGPU() or backend.ready()`,
      );
    }
    if (this.pendingErrors.length > 0) {
      const msg = this.pendingErrors.join("; ");
      this.pendingErrors = [];
      throw new BackendError(`webgpu: device error: ${msg}`);
    }
    return this.state;
  }

  owns(buf: DeviceBuffer): boolean {
    return buf instanceof WebGPUBuffer && buf.owner === this;
  }

  private own(buf: DeviceBuffer, what: string): WebGPUBuffer {
    if (!(buf instanceof WebGPUBuffer) || buf.owner !== this) {
      throw new BackendError(`webgpu: ${what} is not a buffer of this WebGPU backend`);
    }
    if (buf.freed) throw new BackendError(`webgpu: ${what} was already freed`);
    if (buf.gen !== this.state.gen) {
      throw new BackendError(`webgpu: ${what} lived on a device that was lost; its contents are gone`);
    }
    return buf;
  }

  /** A storage buffer of `length` elements of `dtype`, from the pool when one fits. */
  alloc(dtype: DType, length: number): DeviceBuffer {
    checkDType(dtype, "a tensor");
    if (dtype === "float16" && !this.shaderF16)
      throw new DTypeError(`webgpu: alloc: ${F16_UNAVAILABLE('this WebGPU device (no "shader-f16" feature)')}`);
    const s = this.live();
    if (!Number.isInteger(length) || length < 0) throw new BackendError(`webgpu: alloc: bad length ${length}`);
    const bytes = length * ELEMENT_BYTES;
    const { maxBufferSize, maxStorageBufferBindingSize } = s.acquired.limits;
    for (const [name, limit] of [
      ["maxBufferSize", maxBufferSize],
      ["maxStorageBufferBindingSize", maxStorageBufferBindingSize],
    ] as const) {
      if (bytes > limit) {
        throw new BackendError(
          `webgpu: a ${dtype} tensor of ${length} elements needs ${bytes} bytes (${mib(bytes)}), over the device's ` +
            `${name} of ${limit} bytes (${mib(limit)}) by ${bytes - limit} bytes; split the batch`,
        );
      }
    }
    const gpu = s.storage.acquire(bytes);
    this.counters.liveBuffers++;
    return new WebGPUBuffer(dtype, length, gpu, s.gen, this);
  }

  /** Queues a copy of `data` into the buffer. */
  write(buf: DeviceBuffer, data: TypedArray): void {
    const s = this.live();
    const b = this.own(buf, "write target");
    if (data.length !== b.length) {
      throw new BackendError(`webgpu: write: ${data.length} values into a buffer of ${b.length}`);
    }
    if (b.length === 0) return;
    const d = b.dtype as Exclude<DType, "float64">;
    const Ctor = DEVICE_CTOR[d];
    const host = data instanceof Ctor && d !== "bool" ? data : new Ctor(data);
    s.acquired.device.queue.writeBuffer(b.gpu, 0, host.buffer, host.byteOffset, host.byteLength);
  }

  /** The buffer's contents, copied to the host through a staging buffer. */
  async read(buf: DeviceBuffer): Promise<TypedArray> {
    const s = this.live();
    const b = this.own(buf, "read source");
    await this.settleScopes();
    this.live();
    const d = b.dtype as Exclude<DType, "float64">;
    if (b.length === 0) return new ARRAY_CTOR[d](0);
    const device = s.acquired.device;
    const staging = s.staging.acquire(b.byteLength);
    let host: Uint32Array | Float32Array | Int32Array;
    try {
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(b.gpu, 0, staging, 0, b.byteLength);
      device.queue.submit([enc.finish()]);
      await staging.mapAsync(1 /* GPUMapMode.READ */, 0, b.byteLength);
      host = new DEVICE_CTOR[d](staging.getMappedRange(0, b.byteLength).slice(0));
      staging.unmap();
    } catch (e) {
      throw await this.failure("read", s.gen, e);
    }
    s.staging.release(staging);
    if (d === "bool") return Uint8Array.from(host, (v) => (v !== 0 ? 1 : 0));
    // The narrow integers come back as their own typed arrays (each i32 holds a value in range).
    return isNarrowInt(d) ? new ARRAY_CTOR[d](host) : host;
  }

  /** The error for a call that failed in flight; waits for a replacement device if the device was lost. */
  private async failure(call: string, gen: number, e: unknown): Promise<BackendError> {
    // Dawn resolves `device.lost` before it rejects the calls the loss aborted.
    await new Promise((r) => setTimeout(r, 0));
    if (this.lostReason !== null || gen !== this.state.gen) {
      const reason = this.lostReason ?? "lost";
      if (this.replacing) await this.replacing;
      return new BackendError(
        `webgpu: ${call}: the device was lost (${reason}) while the call was in flight; the backend has a new device, retry`,
      );
    }
    return new BackendError(`webgpu: ${call} failed: ${(e as Error).message ?? String(e)}`);
  }

  private async settleScopes(): Promise<void> {
    while (this.scopes.size > 0) await Promise.all([...this.scopes]);
  }

  source(kernel: Kernel): string {
    return kernelToWGSL(kernel);
  }

  /** A DTypeError when the kernel holds float16 and the device has no "shader-f16". */
  private checkF16(kernel: Kernel): void {
    if (this.shaderF16) return;
    const at = [...kernel.inputs, ...kernel.outputs, ...kernel.exprs].findIndex((x) => x.dtype === "float16");
    if (at >= 0)
      throw new DTypeError(
        `webgpu: a kernel computes in float16: ${F16_UNAVAILABLE('this WebGPU device (no "shader-f16" feature)')}`,
      );
  }

  async compile(kernel: Kernel): Promise<CompiledKernel> {
    this.checkF16(kernel);
    await this.ready();
    return this.pipelineFor(kernel, kernelToWGSL(kernel));
  }

  async load(kernel: Kernel, shipped: ShippedKernel): Promise<CompiledKernel> {
    if (typeof shipped.wgsl !== "string") throw new BackendError("webgpu: a bundled kernel has no WGSL source");
    // Tree reductions and segmented kernels read their chunk count (see wgslLaunchPlan); WGSL
    // written before chunking existed would loop unbounded and write finals where partials go.
    // `chunked` is the code generator's flag (bundle format 3; derived from the text for format 2).
    if (mainReadsChunks(kernel) && shipped.chunked !== true) {
      throw new BackendError(
        "webgpu: a bundled reduction kernel was generated by an older batchwise (its WGSL does not split long loops into chunks); rebuild the bundle",
      );
    }
    await this.ready();
    return this.pipelineFor(kernel, shipped.wgsl);
  }

  private async pipelineFor(kernel: Kernel, source: string): Promise<CompiledKernel> {
    const s = this.live();
    const nBuffers = kernel.inputs.length + kernel.outputs.length;
    if (nBuffers > this.maxKernelBuffers) {
      throw new BackendError(
        `webgpu: a kernel with ${kernel.inputs.length} inputs and ${kernel.outputs.length} outputs binds ${nBuffers} ` +
          `storage buffers, over the device's maxStorageBuffersPerShaderStage of ${this.maxKernelBuffers}`,
      );
    }
    const entry = await s.pipelines.get(source, kernel.inputs.length, kernel.outputs.length);
    return new WebGPUKernel(kernel, source, entry, s.gen, this);
  }

  dispatch(k: CompiledKernel, inputs: readonly DeviceBuffer[], outputs: readonly DeviceBuffer[], launch: Launch): void {
    const s = this.live();
    if (!(k instanceof WebGPUKernel) || k.owner !== this)
      throw new BackendError("webgpu: dispatch: kernel was not compiled by this backend");
    const { kernel } = k;
    if (inputs.length !== kernel.inputs.length || outputs.length !== kernel.outputs.length) {
      throw new BackendError(
        `webgpu: dispatch: kernel takes ${kernel.inputs.length} inputs and ${kernel.outputs.length} outputs, ` +
          `got ${inputs.length} and ${outputs.length}`,
      );
    }
    const { batchSizes, inputBatchStrides } = launch;
    if (batchSizes.length !== launchRank(kernel)) {
      throw new BackendError(
        `webgpu: dispatch: ${batchSizes.length} batch sizes for a kernel of batch rank ${kernel.batchRank} (launch rank ${launchRank(kernel)})`,
      );
    }
    const ins = inputs.map((b, i) => this.own(b, `input ${i}`));
    const outs = outputs.map((b, j) => this.own(b, `output ${j}`));
    const count = outputCount(kernel, batchSizes);
    // The uniform of the main pass (checks every value is a u32).
    wgslUniform(kernel, launch);

    kernel.inputs.forEach((spec, i) => {
      const buf = ins[i]!;
      if (buf.dtype !== spec.dtype)
        throw new BackendError(`webgpu: dispatch: input ${i} is ${buf.dtype}, kernel expects ${spec.dtype}`);
      const strides = inputBatchStrides[i];
      if (!strides || strides.length !== spec.batchRank) {
        throw new BackendError(
          `webgpu: dispatch: input ${i} needs ${spec.batchRank} batch strides, got ${strides?.length ?? 0}`,
        );
      }
      // Highest element the kernel may read: base block at the last batch position
      // (nothing when a batch dim it is read along is empty: a reduction over no elements).
      let need = numel(spec.baseShape);
      let empty = false;
      strides.forEach((st, j) => {
        // Segmented kernels: rows are the offsets' length minus one; packed inputs are read
        // at positions the offsets give (data), so only the offsets bound them.
        let size = batchSizes[kernel.batchRank - spec.batchRank + j]!;
        if (kernel.segment !== undefined && i !== kernel.segment.offsets)
          size = spec.packed || spec.padded ? 0 : j === 0 ? batchSizes[0]! - 1 : 1;
        if (size > 0) need += (size - 1) * st;
        else if (kernel.segment === undefined) empty = true;
      });
      if (empty) need = 0;
      // Packed and padded inputs of segmented kernels are read where the offsets say (guarded).
      const dataIndexed = kernel.segment !== undefined && (spec.packed === true || spec.padded === true);
      if (count > 0 && !dataIndexed && buf.length < need) {
        throw new BackendError(
          `webgpu: dispatch: input ${i} has ${buf.length} elements, the launch reads up to ${need}`,
        );
      }
    });
    kernel.outputs.forEach((spec, j) => {
      const buf = outs[j]!;
      if (buf.dtype !== spec.dtype)
        throw new BackendError(`webgpu: dispatch: output ${j} is ${buf.dtype}, kernel expects ${spec.dtype}`);
      // A segmented kernel's invocations are rows, not output elements (its writes follow the offsets).
      if (kernel.segment === undefined && buf.length < count) {
        throw new BackendError(`webgpu: dispatch: output ${j} has ${buf.length} elements, needs ${count}`);
      }
      if (ins.includes(buf) || outs.indexOf(buf) !== j) {
        throw new BackendError(
          `webgpu: dispatch: output ${j} is also bound as another input or output; WebGPU forbids that aliasing`,
        );
      }
    });
    // A launch with no output elements writes nothing: a no-op.
    if (count === 0) return;

    // The passes, their uniforms, buffers and workgroup counts (codegen/gpu-plan.ts).
    const plan = planGpuLaunch(kernel, launch, {
      inputs: ins.map((b) => b.length),
      outputs: outs.map((b) => b.length),
    });
    if (plan.indexed > 0xffffffff) {
      throw new BackendError(
        `webgpu: dispatch: ${count} output elements in ${plan.chunks} chunks need ${plan.indexed} indices, over the 2^32 a launch can count; split the batch`,
      );
    }
    if (plan.passes.length === 0) return; // e.g. a map over rows that are all empty
    const maxDim = s.acquired.limits.maxComputeWorkgroupsPerDimension;
    const grid = (groups: number): [number, number] => {
      const gy = Math.ceil(groups / maxDim);
      if (gy > maxDim)
        throw new BackendError(`webgpu: dispatch: ${count} elements need ${groups} workgroups, over ${maxDim}²`);
      return [Math.ceil(groups / gy), gy];
    };

    if (k.gen !== s.gen) {
      // Compiled on a device that was since lost: rebuild on this one.
      k.entry = s.pipelines.getSync(k.source, kernel.inputs.length, kernel.outputs.length);
      k.gen = s.gen;
    }
    const device = s.acquired.device;
    const uniforms: GPUBuffer[] = [];
    const scratch: Binding[] = plan.scratch.map((sc) => {
      const bytes = sc.length * ELEMENT_BYTES;
      return { gpu: s.storage.acquire(bytes), bytes };
    });
    const binding = (b: GpuBuffer): Binding => {
      if (b.k === "scratch") return scratch[b.s]!;
      const buf = b.k === "input" ? ins[b.i]! : outs[b.j]!;
      return { gpu: buf.gpu, bytes: buf.byteLength };
    };
    const entryFor = (p: GpuPass): PipelineEntry =>
      p.program === "main" ? k.entry : s.pipelines.getSync(k.sourceOf(p.program), p.reads.length, p.writes.length);

    device.pushErrorScope("validation");
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    for (const p of plan.passes) {
      const uniform = s.uniforms.acquire(p.params.byteLength);
      uniforms.push(uniform);
      device.queue.writeBuffer(uniform, 0, p.params);
      const entries: GPUBindGroupEntry[] = [
        { binding: 0, resource: { buffer: uniform, offset: 0, size: p.params.byteLength } },
      ];
      [...p.reads, ...p.writes].map(binding).forEach((b, i) =>
        entries.push({
          binding: 1 + i,
          resource: { buffer: b.gpu, offset: 0, size: Math.max(ELEMENT_BYTES, b.bytes) },
        }),
      );
      const entry = entryFor(p);
      const [gx, gy] = grid(p.workgroups);
      pass.setPipeline(entry.pipeline);
      pass.setBindGroup(0, device.createBindGroup({ layout: entry.layout, entries }));
      pass.dispatchWorkgroups(gx, gy);
      this.counters.dispatches++;
    }
    pass.end();
    device.queue.submit([enc.finish()]);
    this.watch(device.popErrorScope(), s.gen);
    // Queue order makes uniforms and scratch buffers safe to reuse by later writes at once.
    for (const u of uniforms) s.uniforms.release(u);
    for (const b of scratch) s.storage.release(b.gpu);
  }

  private watch(scope: Promise<GPUError | null>, gen: number): void {
    const p: Promise<void> = scope.then(
      (err) => {
        if (err && gen === this.state.gen) this.pendingErrors.push(err.message);
      },
      () => undefined,
    );
    this.scopes.add(p);
    void p.finally(() => this.scopes.delete(p));
  }

  copy(dst: DeviceBuffer, sources: readonly CopySource[]): void {
    const s = this.live();
    const b = this.own(dst, "copy target");
    const checked = sources.map(({ src, regions }) => {
      const a = this.own(src, "copy source");
      if (a.dtype !== b.dtype) throw new BackendError(`webgpu: copy: ${a.dtype} into ${b.dtype}`);
      for (const [so, dO, n] of regions) {
        if (so < 0 || dO < 0 || so + n > a.length || dO + n > b.length) {
          throw new BackendError(
            `webgpu: copy: range [${so}, ${so + n}) -> [${dO}, ${dO + n}) does not fit buffers of ${a.length} and ${b.length}`,
          );
        }
      }
      return { a, regions };
    });
    // The whole copy step is one command buffer: one submit, whatever the number of sources.
    let enc: GPUCommandEncoder | undefined;
    for (const { a, regions } of checked) {
      for (const [so, dO, n] of regions) {
        if (n === 0) continue;
        enc ??= s.acquired.device.createCommandEncoder();
        enc.copyBufferToBuffer(a.gpu, so * ELEMENT_BYTES, b.gpu, dO * ELEMENT_BYTES, n * ELEMENT_BYTES);
      }
    }
    if (enc !== undefined) s.acquired.device.queue.submit([enc.finish()]);
    this.counters.copies++;
  }

  /** Returns the buffer to the pool. */
  free(buf: DeviceBuffer): void {
    if (!(buf instanceof WebGPUBuffer) || buf.owner !== this)
      throw new BackendError("webgpu: free: not a buffer of this backend");
    if (buf.freed) throw new BackendError("webgpu: free: buffer was already freed");
    buf.freed = true;
    this.counters.liveBuffers--;
    if (!this.destroyed && buf.gen === this.state.gen) this.state.storage.release(buf.gpu);
  }

  /** Destroys the device and every buffer; the backend is unusable afterwards and Node can exit. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.state.storage.clear();
    this.state.uniforms.clear();
    this.state.staging.clear();
    this.state.acquired.device.destroy();
    if (shared === this) shared = null;
  }

  /** Same as `destroy`. */
  dispose(): void {
    this.destroy();
  }
}

let shared: WebGPUBackend | null = null;
let opening: Promise<WebGPUBackend> | null = null;

/**
 * The WebGPU backend: the shared one while its device works, else a new one
 * (`fresh: true` always makes a new one). Throws `BackendError` when no adapter
 * can be had, saying what was tried.
 *
 * @example
 *   const gpu = await initWebGPU();
 *   console.log(gpu.adapter.description, gpu.limits.maxStorageBufferBindingSize);
 */
export async function initWebGPU(opts: WebGPUOptions = {}): Promise<WebGPUBackend> {
  if (opts.fresh) return new WebGPUBackend(await acquireDevice(opts), opts);
  if (shared && !shared.isDestroyed) {
    try {
      await shared.ready();
      return shared;
    } catch {
      shared.destroy();
    }
  }
  opening ??= acquireDevice(opts)
    .then((acquired) => (shared = new WebGPUBackend(acquired, opts)))
    .finally(() => (opening = null));
  return opening;
}
