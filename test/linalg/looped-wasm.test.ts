/**
 * The looped linear-algebra kernels on WebAssembly: identities, special values and
 * one jit trace for two batch sizes (the loop form printed as WebAssembly).
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { initWasm, setBackend } from "../../src/index.js";
import { checkDirect, checkJacobi, checkLoopedJit, checkLoopedSpecial, checkQR } from "./looped-suite.js";

beforeAll(async () => {
  await initWasm({ threads: 1 });
});
afterAll(() => setBackend("js"));

describe("looped linalg on WebAssembly", () => {
  it("identities at n = 20 (float64 and float32)", async () => {
    await checkDirect(20, 2, "float64");
    await checkDirect(20, 2, "float32");
    await checkQR(20, 12, 2, "float64");
    await checkJacobi(12, 14, 2, "float64");
  });

  it("special values and one trace for two batch sizes", async () => {
    await checkLoopedSpecial(10, "float64");
    await checkLoopedSpecial(10, "float32");
    await checkLoopedJit(10, "float32");
  });
});
