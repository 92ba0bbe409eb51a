/**
 * The WebAssembly backend's memory: one `WebAssembly.Memory` per backend (shared,
 * i.e. backed by a SharedArrayBuffer, when worker threads may use it), a buffer
 * pool on top of it, and `WasmBuffer`, a tensor's storage in that memory with
 * zero-copy typed-array views.
 *
 * Allocation: 16-byte aligned blocks. Blocks up to 64 KiB come in power-of-two size
 * classes; larger ones are rounded up to whole 64 KiB and reused by exact size. A
 * freed block goes to its class's free list; a new one comes from the free list or
 * from the top of the heap, growing the memory when the top passes its end. The
 * memory never shrinks (WebAssembly memories cannot).
 *
 * Views: growing a non-shared memory detaches its old ArrayBuffer (every typed array
 * on it reads as empty); growing a shared one gives a new, longer SharedArrayBuffer.
 * So views are re-created from `memory.buffer` whenever it changed: `WasmBuffer.view()`
 * is always valid, and a view a caller kept is valid until the next allocation.
 */
import { ARRAY_CTOR, type DType, type TypedArray } from "../../ir/dtype.js";
import { BackendError } from "../../ir/errors.js";
import type { DeviceBuffer } from "../backend.js";

/** WebAssembly page size. */
export const PAGE = 65536;
/** Bytes at the bottom of the heap kept for launch arguments (the kernel reads them there). */
export const ARGS_BYTES = 64 * 1024;
/** Blocks larger than this are rounded to whole pages instead of powers of two. */
const SMALL_LIMIT = 65536;

export interface HeapOptions {
  /** Back the memory by a SharedArrayBuffer (needed for worker threads). */
  readonly shared: boolean;
  /** Initial size in bytes (default 16 MiB; at least the launch-argument block). */
  readonly initialBytes?: number;
  /** Largest size in bytes (default 2 GiB; wasm32 pointers stay below 2^31). */
  readonly maximumBytes?: number;
}

/**
 * `WebAssembly.Memory`, named through `typeof globalThis` so that the published declarations
 * type-check in a program whose libs do not declare WebAssembly (ES2022 without DOM or WebWorker).
 */
type WasmMemory = typeof globalThis extends {
  readonly WebAssembly: { readonly Memory: { readonly prototype: infer M } };
}
  ? M
  : { readonly buffer: ArrayBuffer | SharedArrayBuffer };

/** A heap in one WebAssembly memory. */
export class WasmHeap {
  readonly memory: WasmMemory;
  readonly shared: boolean;
  readonly maximumBytes: number;
  private top = ARGS_BYTES;
  private readonly free = new Map<number, number[]>();
  /** Bytes handed out and not freed (blocks' rounded sizes). */
  inUse = 0;

  constructor(opts: HeapOptions) {
    this.shared = opts.shared;
    this.maximumBytes = Math.min(opts.maximumBytes ?? 2 ** 31, 2 ** 31);
    // At least the launch-argument block, which kernels read from the first page.
    const initial = Math.max(Math.ceil(ARGS_BYTES / PAGE), Math.ceil((opts.initialBytes ?? 16 * 2 ** 20) / PAGE));
    const maximum = Math.floor(this.maximumBytes / PAGE);
    this.memory = new WebAssembly.Memory(this.shared ? { initial, maximum, shared: true } : { initial, maximum });
    this.current = this.memory.buffer;
  }

  /**
   * The memory's current buffer (a new object after growth). Kept here rather than read
   * from `memory.buffer` (a call into the engine) at every launch and view: only `alloc`
   * grows the memory (no kernel has `memory.grow`), and it refreshes this.
   */
  get buffer(): ArrayBufferLike {
    return this.current;
  }
  private current: ArrayBufferLike;

  /** The rounded size of a block for `bytes`. */
  static blockSize(bytes: number): number {
    if (bytes <= 16) return 16;
    // The next power of two at or above `bytes` (bytes - 1 >= 16 here, so the shift stays below 31).
    if (bytes <= SMALL_LIMIT) return 1 << (32 - Math.clz32(bytes - 1));
    return Math.ceil(bytes / PAGE) * PAGE;
  }

  /** A 16-byte aligned block of at least `bytes` bytes; returns its byte offset. */
  alloc(bytes: number): number {
    const size = WasmHeap.blockSize(bytes);
    const list = this.free.get(size);
    if (list !== undefined && list.length > 0) {
      this.inUse += size;
      return list.pop()!;
    }
    const ptr = this.top;
    const end = ptr + size;
    if (end > this.current.byteLength) {
      if (end > this.maximumBytes) {
        throw new BackendError(
          `wasm: out of memory: a buffer of ${bytes} bytes does not fit the ${this.maximumBytes}-byte WebAssembly memory (${this.inUse} bytes in use)`,
        );
      }
      // Grow by at least a quarter of the current size, so growth (and view re-creation) stays rare.
      const cur = this.current.byteLength;
      const want = Math.min(Math.max(end, cur + cur / 4), this.maximumBytes);
      this.memory.grow(Math.ceil((want - cur) / PAGE));
      this.current = this.memory.buffer;
    }
    this.top = end;
    this.inUse += size;
    return ptr;
  }

  /** Returns a block to its free list. */
  release(ptr: number, bytes: number): void {
    const size = WasmHeap.blockSize(bytes);
    let list = this.free.get(size);
    if (list === undefined) this.free.set(size, (list = []));
    list.push(ptr);
    this.inUse -= size;
  }

  /** Bytes between the bottom of the heap and its top (allocated or on free lists). */
  get reserved(): number {
    return this.top;
  }
}

/** A tensor's storage: `length` elements of `dtype` at byte offset `ptr` of a heap. */
export class WasmBuffer implements DeviceBuffer {
  private cached: TypedArray | undefined;
  private cachedOn: ArrayBufferLike | undefined;
  /** False once freed; a freed buffer must not be used. */
  live = true;
  /** Tensors holding this buffer (counted by src/tensor.ts). */
  refs = 0;

  constructor(
    readonly heap: WasmHeap,
    readonly dtype: DType,
    readonly length: number,
    readonly ptr: number,
  ) {}

  get byteLength(): number {
    return this.length * ARRAY_CTOR[this.dtype].BYTES_PER_ELEMENT;
  }

  /** The buffer's elements, no copy (re-created after the memory grew). */
  view(): TypedArray {
    if (!this.live) throw new BackendError("wasm: a freed buffer was used");
    const buf = this.heap.buffer;
    if (this.cached === undefined || this.cachedOn !== buf) {
      this.cached = new ARRAY_CTOR[this.dtype](buf, this.ptr, this.length);
      this.cachedOn = buf;
    }
    return this.cached;
  }
}

/**
 * The buffer half of the Backend contract on a heap: alloc, owns, wrap, write, read,
 * readSync, view, copy, free.
 */
export class WasmBuffers {
  constructor(readonly heap: WasmHeap) {}

  alloc(dtype: DType, length: number): WasmBuffer {
    const bytes = length * ARRAY_CTOR[dtype].BYTES_PER_ELEMENT;
    return new WasmBuffer(this.heap, dtype, length, this.heap.alloc(bytes));
  }

  owns(buf: DeviceBuffer): boolean {
    return buf instanceof WasmBuffer && buf.heap === this.heap && buf.live;
  }

  /**
   * A buffer holding a copy of `data`, always, even when `data` is a view of this memory
   * (`dataSync({ copy: false })` of another tensor): wrapping such a view without a copy
   * would not keep its block alive, so once the other tensor is disposed or collected the
   * new one would read whatever reuses the block, a wrong answer with no error.
   */
  wrap(dtype: DType, data: TypedArray): WasmBuffer {
    const b = this.alloc(dtype, data.length);
    b.view().set(data);
    return b;
  }

  write(buf: DeviceBuffer, data: TypedArray): void {
    (buf as WasmBuffer).view().set(data);
  }

  readSync(buf: DeviceBuffer): TypedArray {
    return (buf as WasmBuffer).view().slice();
  }

  read(buf: DeviceBuffer): Promise<TypedArray> {
    return Promise.resolve(this.readSync(buf));
  }

  view(buf: DeviceBuffer): TypedArray {
    return (buf as WasmBuffer).view();
  }

  copy(
    dst: DeviceBuffer,
    sources: readonly { src: DeviceBuffer; regions: readonly (readonly [number, number, number])[] }[],
  ): void {
    const d = (dst as WasmBuffer).view();
    for (const { src, regions } of sources) {
      const s = (src as WasmBuffer).view();
      for (const [so, dO, n] of regions) d.set(s.subarray(so, so + n), dO);
    }
  }

  free(buf: DeviceBuffer): void {
    const b = buf as WasmBuffer;
    if (!b.live) return;
    b.live = false;
    this.heap.release(b.ptr, b.byteLength);
  }
}
