/**
 * Opt-in: runs the suite with the WebAssembly backend as the current one.
 *
 * `BATCHWISE_TEST_BACKEND=wasm npx vitest run …` creates the WebAssembly backend
 * (`initWasm()`, which registers and selects it) before each test file is collected,
 * so tensors made at a file's top level already live on wasm. Before each test, a
 * current backend of "js" (the default, or a test that switched back to it after
 * using another backend) becomes wasm again; a file that selected WebGPU (in a
 * `beforeAll`) keeps it.
 *
 * - `BATCHWISE_TEST_WASM_THREADS=n`: threads (default: what `initWasm` picks, the
 *   available cores). With n > 1, `BATCHWISE_TEST_WASM_MIN_WORK` (default 1) is the
 *   size under which launches stay on the calling thread, so that the small launches
 *   of tests are split over threads too.
 * - `BATCHWISE_TEST_WASM_MEMORY=unshared`: the backend on a non-shared memory (what a
 *   page without cross-origin isolation gets: one thread, and growing the memory
 *   detaches every view of it), starting at one page so that it grows often.
 *
 * Without `BATCHWISE_TEST_BACKEND`, this file does nothing (it imports nothing of the library).
 */
import { beforeEach } from "vitest";

const env = (name: string): string | undefined => {
  const v = process.env[name];
  return v === undefined || v === "" ? undefined : v;
};
const which = env("BATCHWISE_TEST_BACKEND");

if (which !== undefined && which !== "js") {
  if (which !== "wasm")
    throw new Error(`BATCHWISE_TEST_BACKEND: "${which}" is not supported here (only "wasm" or "js")`);
  // Not the full entry: it would install the compiler in files that test the runtime entry without it.
  const { getBackend, setBackend } = await import("../../src/backend.js");
  const { initWasm } = await import("../../src/wasm.js");
  const memory = env("BATCHWISE_TEST_WASM_MEMORY");
  if (memory !== undefined && memory !== "unshared")
    throw new Error(`BATCHWISE_TEST_WASM_MEMORY: "${memory}" is not supported (only "unshared")`);
  const threadsText = env("BATCHWISE_TEST_WASM_THREADS");
  const threads = threadsText === undefined ? undefined : Number(threadsText);
  const minWork = env("BATCHWISE_TEST_WASM_MIN_WORK");
  const minParallelWork =
    minWork !== undefined ? Number(minWork) : threads !== undefined && threads > 1 ? 1 : undefined;
  const opts = {
    ...(threads !== undefined ? { threads } : {}),
    ...(minParallelWork !== undefined ? { minParallelWork } : {}),
  };
  if (memory === "unshared") {
    // The backend a page without SharedArrayBuffer gets, made by initWasm itself (so that a
    // file calling initWasm() again gets the same one): SharedArrayBuffer is hidden while it is made.
    const g = globalThis as { SharedArrayBuffer?: unknown };
    const sab = g.SharedArrayBuffer;
    delete g.SharedArrayBuffer;
    try {
      await initWasm({ ...opts, initialMemoryBytes: 0 });
    } finally {
      g.SharedArrayBuffer = sab;
    }
  } else {
    await initWasm(opts);
  }
  beforeEach(() => {
    if (getBackend().name === "js") setBackend("wasm");
  });
}
