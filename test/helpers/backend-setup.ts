/**
 * Opt-in: runs the suite with another backend as the current one.
 *
 * `BATCHWISE_TEST_BACKEND=wasm npx vitest run …` creates the WebAssembly backend
 * (`initWasm()`, which registers and selects it) before each test file is collected,
 * so tensors made at a file's top level already live on wasm. Before each test, a
 * current backend of "js" (the default, or a test that switched back to it after
 * using another backend) becomes wasm again; a file that selected WebGPU (in a
 * `beforeAll`) keeps it. `BATCHWISE_TEST_WASM_THREADS=n` sets the thread count
 * (default: what `initWasm` picks, the available cores); with `n` > 1,
 * `BATCHWISE_TEST_WASM_MIN_WORK` (default 1) lowers the size threshold under
 * which launches stay on the calling thread, so that small test launches
 * are sharded too.
 *
 * Without `BATCHWISE_TEST_BACKEND`, this file does nothing (it imports nothing of the library).
 */
import { beforeEach } from "vitest";

const which = process.env["BATCHWISE_TEST_BACKEND"];

if (which !== undefined && which !== "" && which !== "js") {
  if (which !== "wasm")
    throw new Error(`BATCHWISE_TEST_BACKEND: "${which}" is not supported here (only "wasm" or "js")`);
  // Not the full entry: it would install the compiler in files that test the runtime entry without it.
  const { getBackend, setBackend } = await import("../../src/backend.js");
  const { initWasm } = await import("../../src/wasm.js");
  const threadsText = process.env["BATCHWISE_TEST_WASM_THREADS"];
  const threads = threadsText === undefined || threadsText === "" ? undefined : Number(threadsText);
  const minWorkText = process.env["BATCHWISE_TEST_WASM_MIN_WORK"];
  const minParallelWork =
    minWorkText !== undefined && minWorkText !== ""
      ? Number(minWorkText)
      : threads !== undefined && threads > 1
        ? 1
        : undefined;
  await initWasm({
    ...(threads !== undefined ? { threads } : {}),
    ...(minParallelWork !== undefined ? { minParallelWork } : {}),
  });
  beforeEach(() => {
    if (getBackend().name === "js") setBackend("wasm");
  });
}
