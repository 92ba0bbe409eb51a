/**
 * The WebAssembly backend: tensors live in one WebAssembly memory (runtime/wasm/memory.ts),
 * kernels are the loop form (codegen/lower-loops.ts) printed as WebAssembly with SIMD128
 * (codegen/wasm/print.ts), compiled with `WebAssembly.Module`, and sharded over worker
 * threads (runtime/wasm/pool.ts) when the memory is shared and a launch is large.
 *
 * It runs every kernel kind the loop form has (elementwise, reductions, segmented,
 * padded, unrolled); how fast depends on the shape: a kernel whose outer loop body is
 * straight-line float32/int32 code runs four elements per instruction, others run
 * scalar WebAssembly (still compiled code, no interpretation).
 */
import { lowerKernel } from "../../codegen/lower-loops.js";
import { loopToJS } from "../../codegen/js.js";
import type { ArgsLayout } from "../../codegen/wasm/args.js";
import { KERNEL_HOST, KERNEL_HOST_SOURCE } from "../../codegen/wasm/host.js";
import { loopToWasm } from "../../codegen/wasm/print.js";
import { DTYPES, type DType, type TypedArray } from "../../ir/dtype.js";
import { BackendError } from "../../ir/errors.js";
import { kernelConsts, type Kernel, type Launch } from "../../ir/kernel.js";
import type { Backend, CompiledKernel, CopySource, DeviceBuffer, ShippedKernel } from "../backend.js";
import { ARGS_BYTES, PAGE, WasmBuffer, WasmBuffers, WasmHeap } from "./memory.js";
import { availableCores, threadSupport, WorkerPool } from "./pool.js";

/** Options of `createWasmBackend` (and `initWasm`). */
export interface WasmOptions {
  /**
   * Threads that run kernels: the calling thread plus `threads - 1` workers. Default: the
   * available cores when threads can work here (Node; a cross-origin isolated page), else 1.
   */
  readonly threads?: number;
  /** Largest size of the WebAssembly memory in bytes (default 2 GiB). */
  readonly maxMemoryBytes?: number;
  /**
   * Size of the WebAssembly memory when created, in bytes (default 16 MiB; it grows as
   * buffers need). A small value makes memory growth frequent, which tests use to check
   * that no view of the memory outlives a growth.
   */
  readonly initialMemoryBytes?: number;
  /**
   * Work (iterations × statements of the sharded loop) below which a launch stays on the
   * calling thread (default 1,000,000: waking workers costs tens of microseconds, more on a busy machine).
   */
  readonly minParallelWork?: number;
}

/** A compiled WebAssembly kernel. */
export interface WasmCompiled extends CompiledKernel {
  readonly run: (args: number, begin: number, end: number) => void;
  readonly units: (args: number) => number;
  /** The split over the loop inside the sharded one (codegen/wasm/shard.ts, `findInnerShard`), if any. */
  readonly inner: {
    readonly run: (args: number, begin: number, end: number) => void;
    readonly units: (args: number) => number;
    readonly vectorized: boolean;
    readonly workPerUnit: number;
    readonly workSizes: readonly number[];
  } | null;
  readonly layout: ArgsLayout;
  readonly sharded: boolean;
  readonly vectorized: boolean;
  readonly workPerUnit: number;
  /** Batch sizes (indices) that multiply `workPerUnit` (inner loops over batch dims). */
  readonly workSizes: readonly number[];
  /** Inner loops printed with four-lane versions too. */
  readonly innerVectorLoops: number;
  readonly bytes: Uint8Array;
  /** The kernel's id in the worker pool (0: not loaded there). */
  poolId: number;
  readonly consts: Float64Array;
}

/** Work per unit of a split loop at a launch: `perUnit` times the batch sizes at `at` (its inner batch loops). */
function unitWork(perUnit: number, at: readonly number[], sizes: readonly number[]): number {
  let w = perUnit;
  for (let i = 0; i < at.length; i++) w *= sizes[at[i]!]!;
  return w;
}

/** The WebAssembly backend (see the file comment). Create it with `createWasmBackend`. */
export class WasmBackend implements Backend {
  readonly name = "wasm" as const;
  readonly displayName = "WebAssembly";
  /** Buffers are blocks of the backend's memory: tensors count them and free them. */
  readonly hostMemory = false;
  /** Every dtype but float16 (as the JS backend). */
  readonly dtypes: readonly DType[] = DTYPES.filter((d) => d !== "float16");
  readonly maxKernelBuffers = Infinity;
  readonly mixedBaseOutputs = true;
  readonly syncCompile = true;
  /** Bundles ship JS kernels; this backend prints its own WebAssembly from the shipped kernel IR. */
  readonly shippedKernel = "js" as const;
  /** @internal The memory and its buffer pool. */
  readonly heap: WasmHeap;
  private readonly buffers: WasmBuffers;
  private pool: WorkerPool | null = null;
  private readonly minParallelWork: number;
  /** Why threads are off, when they are. */
  threadNote = "";
  /** Launch counts since the backend was made. */
  readonly stats: {
    /** Every kernel launch. */
    launches: number;
    /** Launches of kernels with a SIMD (four-lane) outer loop. */
    simd: number;
    /** Launches split over worker threads. */
    threaded: number;
  } = { launches: 0, simd: 0, threaded: 0 };

  constructor(opts: WasmOptions = {}, shared = false) {
    const init = opts.initialMemoryBytes;
    if (init !== undefined && !(Number.isSafeInteger(init) && init >= 0))
      throw new BackendError(`initWasm: initialMemoryBytes must be an integer >= 0, got ${String(init)}`);
    this.heap = new WasmHeap({
      shared,
      ...(opts.maxMemoryBytes !== undefined ? { maximumBytes: opts.maxMemoryBytes } : {}),
      ...(opts.initialMemoryBytes !== undefined ? { initialBytes: opts.initialMemoryBytes } : {}),
    });
    this.buffers = new WasmBuffers(this.heap);
    this.minParallelWork = opts.minParallelWork ?? 1_000_000;
  }

  /** Threads a large launch runs on (1 without workers). */
  get threads(): number {
    return this.pool?.threads ?? 1;
  }

  /**
   * Sets how many threads run kernels (the calling thread included). Needs a shared memory
   * (`createWasmBackend` makes one when threads can work here); otherwise a BackendError.
   */
  async setThreads(n: number): Promise<void> {
    if (!Number.isInteger(n) || n < 1)
      throw new BackendError(`setThreads: threads must be an integer >= 1, got ${String(n)}`);
    if (n === this.threads) return;
    if (!this.heap.shared) {
      if (n === 1) return;
      throw new BackendError(
        `setThreads: this WebAssembly backend has one thread${this.threadNote ? ` (${this.threadNote})` : ""}`,
      );
    }
    this.pool ??= new WorkerPool(this.heap, KERNEL_HOST_SOURCE);
    await this.pool.resize(n);
  }

  /** Stops the worker threads (the backend keeps working on one thread). */
  close(): void {
    this.pool?.close();
  }

  alloc(dtype: DType, length: number): DeviceBuffer {
    return this.buffers.alloc(dtype, length);
  }
  owns(buf: DeviceBuffer): boolean {
    return this.buffers.owns(buf);
  }
  write(buf: DeviceBuffer, data: TypedArray): void {
    this.buffers.write(buf, data);
  }
  read(buf: DeviceBuffer): Promise<TypedArray> {
    return this.buffers.read(buf);
  }
  readSync(buf: DeviceBuffer): TypedArray {
    return this.buffers.readSync(buf);
  }
  /** The buffer's elements in the WebAssembly memory, no copy: valid until the buffer is freed or the memory grows. */
  view(buf: DeviceBuffer): TypedArray {
    return this.buffers.view(buf);
  }
  /** A copy of `data` in the WebAssembly memory (or `data` itself if it is a view of that memory). */
  wrap(dtype: DType, data: TypedArray): DeviceBuffer {
    return this.buffers.wrap(dtype, data);
  }
  copy(dst: DeviceBuffer, sources: readonly CopySource[]): void {
    this.buffers.copy(dst, sources);
  }
  free(buf: DeviceBuffer): void {
    this.buffers.free(buf);
  }

  source(kernel: Kernel): string {
    return `// WebAssembly kernel; its loop form, spelled as JS:\n${loopToJS(lowerKernel(kernel)).source}`;
  }

  compile(kernel: Kernel): CompiledKernel {
    const program = lowerKernel(kernel);
    const printed = loopToWasm(program, { shared: this.heap.shared, maximumPages: this.heap.maximumBytes / PAGE });
    let inst: WebAssembly.Instance;
    try {
      inst = new WebAssembly.Instance(new WebAssembly.Module(printed.bytes as BufferSource), {
        env: { memory: this.heap.memory },
        m: KERNEL_HOST,
      });
    } catch (e) {
      throw new BackendError(`wasm: a generated kernel does not compile (${(e as Error).message})`);
    }
    if (printed.layout.bytes > ARGS_BYTES)
      throw new BackendError(
        `wasm: a kernel's launch arguments need ${printed.layout.bytes} bytes (at most ${ARGS_BYTES})`,
      );
    const ex = inst.exports as {
      run: WasmCompiled["run"];
      units: WasmCompiled["units"];
      run_inner?: WasmCompiled["run"];
      units_inner?: WasmCompiled["units"];
    };
    const compiled: WasmCompiled = {
      kernel,
      source: `// WebAssembly kernel: ${printed.bytes.length} bytes${printed.vectorized ? ", SIMD outer loop" : ""}${printed.sharded ? ", sharded over threads" : ""}${printed.innerVectorLoops > 0 ? `, ${printed.innerVectorLoops} inner loop(s) in SIMD` : ""}; its loop form, spelled as JS:\n${loopToJS(program).source}`,
      run: ex.run,
      units: ex.units,
      inner: printed.inner === null ? null : { ...printed.inner, run: ex.run_inner!, units: ex.units_inner! },
      layout: printed.layout,
      sharded: printed.sharded,
      vectorized: printed.vectorized,
      workPerUnit: printed.workPerUnit,
      workSizes: printed.workSizes,
      innerVectorLoops: printed.innerVectorLoops,
      bytes: printed.bytes,
      poolId: 0,
      consts: kernelConsts(kernel),
    };
    return compiled;
  }

  /** Bundled kernels: printed again from their kernel IR (no JS is evaluated). */
  load(kernel: Kernel, _shipped: ShippedKernel): CompiledKernel {
    return this.compile(kernel);
  }

  dispatch(k: CompiledKernel, inputs: readonly DeviceBuffer[], outputs: readonly DeviceBuffer[], launch: Launch): void {
    const w = k as WasmCompiled;
    const L = w.layout;
    const mem = this.heap.buffer;
    if (mem !== this.argsOn) {
      // Views of the launch-argument block, made again only when the memory grew.
      this.argsI32 = new Int32Array(mem, 0, ARGS_BYTES >> 2);
      this.argsF64 = new Float64Array(mem, 0, ARGS_BYTES >> 3);
      this.argsOn = mem;
    }
    const i32 = this.argsI32!;
    const f64 = this.argsF64!;
    // The int32 arguments are consecutive from byte 0 (codegen/wasm/args.ts, argsLayout):
    // each input's pointer and length, each output's pointer, the batch sizes, the strides.
    let a = 0;
    for (let i = 0; i < inputs.length; i++) {
      const buf = this.own(inputs[i]!, "input");
      i32[a++] = buf.ptr;
      i32[a++] = buf.length;
    }
    for (let i = 0; i < outputs.length; i++) i32[a++] = this.own(outputs[i]!, "output").ptr;
    const sizes = launch.batchSizes;
    for (let i = 0; i < sizes.length; i++) i32[a++] = sizes[i]!;
    const strides = launch.inputBatchStrides;
    for (let i = 0; i < strides.length; i++) {
      const s = strides[i]!;
      for (let j = 0; j < s.length; j++) i32[a++] = s[j]!;
    }
    const consts = launch.consts ?? w.consts;
    if (consts.length > 0) {
      const c = L.constAt(0) >> 3;
      for (let s = 0; s < consts.length; s++) f64[c + s] = consts[s]!;
    }
    const pool = this.pool;
    this.stats.launches++;
    if (w.vectorized) this.stats.simd++;
    if (w.sharded && pool !== null && pool.threads > 1) {
      const units = w.units(0);
      const per = unitWork(w.workPerUnit, w.workSizes, sizes);
      const inner = w.inner;
      // Split the outer loop when it has iterations for every thread (or nothing else can be
      // split); else the loop inside it, in every one of its iterations.
      if (units >= 2 && units * per >= this.minParallelWork && (units >= 2 * pool.threads || inner === null)) {
        if (w.poolId === 0) w.poolId = pool.load(w.bytes);
        pool.run(w.poolId, w.run, 0, units, w.vectorized ? 4 : 1);
        this.stats.threaded++;
        return;
      }
      if (inner !== null && units > 0) {
        const innerUnits = inner.units(0);
        const innerPer = unitWork(inner.workPerUnit, inner.workSizes, sizes);
        if (innerUnits >= 2 * pool.threads && units * innerUnits * innerPer >= this.minParallelWork) {
          if (w.poolId === 0) w.poolId = pool.load(w.bytes);
          pool.run(w.poolId, inner.run, 0, innerUnits, inner.vectorized ? 4 : 1, 1);
          this.stats.threaded++;
          return;
        }
      }
    }
    w.run(0, 0, 0x7fffffff);
  }

  private argsOn: ArrayBufferLike | undefined;
  private argsI32: Int32Array | undefined;
  private argsF64: Float64Array | undefined;

  private own(b: DeviceBuffer, what: string): WasmBuffer {
    if (!this.owns(b)) throw new BackendError(`wasm: an ${what} buffer is not in this backend's memory`);
    return b as WasmBuffer;
  }
}

/**
 * A WebAssembly backend with its threads started: `threads` (default: the available
 * cores) when threads can work here, else one thread (the reason in `threadNote`).
 */
export async function createWasmBackend(opts: WasmOptions = {}): Promise<WasmBackend> {
  if (typeof WebAssembly !== "object")
    throw new BackendError("initWasm: WebAssembly is not available in this environment");
  const support = threadSupport();
  const want = opts.threads ?? (support.ok ? availableCores() : 1);
  if (!Number.isInteger(want) || want < 1)
    throw new BackendError(`initWasm: threads must be an integer >= 1, got ${String(opts.threads)}`);
  if (want > 1 && !support.ok && opts.threads !== undefined)
    throw new BackendError(`initWasm: ${want} threads asked, but ${support.why}`);
  const backend = new WasmBackend(opts, support.ok);
  if (!support.ok) backend.threadNote = support.why;
  if (want > 1) {
    try {
      await backend.setThreads(want);
    } catch (e) {
      backend.threadNote = (e as Error).message;
    }
  }
  return backend;
}
