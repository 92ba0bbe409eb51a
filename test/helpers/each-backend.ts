/**
 * One check run on the JS, WebAssembly (one thread) and WebGPU backends.
 */
import { afterAll, beforeAll, describe, it } from "vitest";
import { initWasm, setBackend } from "../../src/index.js";
import { onWebGPU } from "./on-webgpu.js";
import { describeWebGPU, type WebGPUProbe } from "./webgpu.js";

/**
 * Three `describe` blocks, "<subject> on JS", "<subject> on WebAssembly" and
 * "<subject> on WebGPU" (`describeWebGPU`: skipped without an adapter), each
 * holding the one test `name`, which runs `check` with that backend current:
 * `check(true)` on JS and WebAssembly, `check(false)` on WebGPU (WGSL has no float64).
 */
export function describeOnEachBackend(
  probe: WebGPUProbe,
  subject: string,
  name: string,
  check: (float64: boolean) => Promise<void>,
  gpuTimeout: number,
): void {
  describe(`${subject} on JS`, () => {
    it(name, () => check(true));
  });
  describe(`${subject} on WebAssembly`, () => {
    beforeAll(async () => {
      await initWasm({ threads: 1 });
    });
    afterAll(() => setBackend("js"));
    it(name, async () => {
      setBackend("wasm");
      await check(true);
    });
  });
  describeWebGPU(probe, `${subject} on WebGPU`, (gpu) => {
    it(name, () => onWebGPU(gpu, () => check(false)), gpuTimeout);
  });
}
