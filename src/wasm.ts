/** The WebAssembly backend from the public API. */
import { BackendError } from "../ir/errors.js";
import { createWasmBackend, type WasmBackend, type WasmOptions } from "../runtime/wasm/backend.js";
import { registerBackend, setBackend } from "./backend.js";

let wasmBackend: WasmBackend | undefined;

/**
 * Creates the WebAssembly backend (SIMD kernels in one WebAssembly memory, sharded over
 * worker threads), registers it and makes it current:
 * ```ts
 * await initWasm();             // setBackend("wasm") is now in effect
 * const y = f(x);               // jit functions run WebAssembly kernels
 * ```
 * Threads default to the available cores in Node and in cross-origin isolated pages
 * (elsewhere one thread; `backend.threadNote` says why). With `select: false` the
 * backend is registered but the current one stays. Calling it again returns the
 * same backend (with `threads` given, after `setThreads`).
 */
export async function initWasm(opts: WasmOptions & { select?: boolean } = {}): Promise<WasmBackend> {
  if (wasmBackend === undefined) {
    wasmBackend = await createWasmBackend(opts);
    registerBackend(wasmBackend);
  } else if (opts.threads !== undefined) {
    await wasmBackend.setThreads(opts.threads);
  }
  if (opts.select !== false) setBackend("wasm");
  return wasmBackend;
}

/**
 * Sets how many threads the WebAssembly backend runs large kernels on (the calling
 * thread included; 1 turns the workers off). A BackendError before `initWasm`, or when
 * threads cannot work here (no SharedArrayBuffer: a page that is not cross-origin isolated).
 */
export async function setThreads(n: number): Promise<void> {
  if (wasmBackend === undefined) throw new BackendError("setThreads: call await initWasm() first");
  await wasmBackend.setThreads(n);
}

export type { WasmBackend, WasmOptions };
