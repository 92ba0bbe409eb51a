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
 * The tests that fail on wasm by design (./wasm-expected.ts: the reason and a check of
 * each failure) are marked as expected to fail; one that passes, or fails otherwise, fails.
 *
 * Without `BATCHWISE_TEST_BACKEND`, this file does nothing (it imports nothing of the library).
 */
import { afterEach, beforeEach } from "vitest";

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
  const { WASM_EXPECTED } = await import("./wasm-expected.js");
  beforeEach((ctx) => {
    if (getBackend().name === "js") setBackend("wasm");
    // A listed test is expected to fail (vitest flips the result of a test marked `fails`).
    if (WASM_EXPECTED.has(ctx.task.fullName)) (ctx.task as { fails?: boolean }).fails = true;
  });
  afterEach((ctx) => {
    const expected = WASM_EXPECTED.get(ctx.task.fullName);
    const result = ctx.task.result;
    if (expected === undefined || result?.state !== "fail") return;
    // The failure counts as expected only if every error is the listed one; otherwise it stands.
    if (!(result.errors ?? []).every((e) => expected.check(errorText(e))))
      (ctx.task as { fails?: boolean }).fails = false;
  });
}

/** An error's message, its diff's sides and its causes, as one text (quotes unescaped). */
function errorText(e: unknown, depth = 0): string {
  if (typeof e !== "object" || e === null || depth > 4) return String(e);
  const o = e as { message?: unknown; actual?: unknown; expected?: unknown; diff?: unknown; cause?: unknown };
  return [o.message, o.actual, o.expected, o.diff]
    .filter((v) => v !== undefined)
    .map(String)
    .concat(o.cause !== undefined ? [errorText(o.cause, depth + 1)] : [])
    .join("\n")
    .replace(/\\"/g, '"');
}
