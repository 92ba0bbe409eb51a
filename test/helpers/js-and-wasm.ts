/**
 * Tests run on the JS backend and on the WebAssembly backend (one thread), each with
 * that backend current; the JS backend is selected again afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBackend, initWasm, setBackend } from "../../src/index.js";

/** `describe(name)` with one test per backend, "js" and "wasm", each running `check` with that backend current. */
export function describeOnJsAndWasm(name: string, check: () => void | Promise<void>): void {
  describe(name, () => {
    afterAll(() => setBackend("js"));
    for (const backend of ["js", "wasm"] as const) {
      it(backend, async () => {
        if (backend === "wasm") await initWasm({ threads: 1 });
        setBackend(backend);
        await check();
        setBackend("js");
      });
    }
  });
}

/**
 * For a whole `describe` block on WebAssembly: creates and selects the backend before
 * its tests (one thread), selects JS after them, and adds the test "runs on WebAssembly".
 */
export function useWasmForBlock(): void {
  beforeAll(async () => {
    await initWasm({ threads: 1 });
  });
  afterAll(() => setBackend("js"));
  it("runs on WebAssembly", () => expect(getBackend().name).toBe("wasm"));
}
