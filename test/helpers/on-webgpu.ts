/**
 * Running part of a test with WebGPU as the current backend (the adapter from
 * `probeWebGPUForFile()`, ./webgpu.ts).
 */
import { beforeAll } from "vitest";
import { registerBackend, setBackend } from "../../src/backend.js";
import type { WebGPUBackend } from "../../runtime/webgpu/backend.js";

/** Registers and selects `gpu`, runs `body`, then selects the JS backend again (also when `body` throws). */
export async function onWebGPU<T>(gpu: WebGPUBackend, body: () => T | Promise<T>): Promise<T> {
  registerBackend(gpu);
  setBackend("webgpu");
  try {
    return await body();
  } finally {
    setBackend("js");
  }
}

/** For a whole `describeWebGPU` block: registers and selects `gpu` before its tests (the file's `afterAll` selects JS again). */
export function selectWebGPU(gpu: WebGPUBackend): void {
  beforeAll(() => {
    registerBackend(gpu);
    setBackend("webgpu");
  });
}
