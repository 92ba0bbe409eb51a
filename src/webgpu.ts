/** WebGPU from the public API. */
import {
  initWebGPU as createWebGPUBackend,
  type WebGPUBackend,
  type WebGPUOptions,
  type WebGPUStats,
} from "../runtime/webgpu/backend.js";
import type { AdapterDescription, DeviceLimits } from "../runtime/webgpu/device.js";
import { registerBackend, setBackend } from "./backend.js";

/**
 * Opens a WebGPU device (in a browser `navigator.gpu`; in Node the `webgpu`
 * package, i.e. Dawn), registers the backend and makes it current:
 * ```ts
 * await initWebGPU();            // setBackend("webgpu") is now in effect
 * const y = await f.callAsync(x); // jit functions run WGSL kernels
 * ```
 * Throws a BackendError explaining why when no adapter can be had. With
 * `select: false` the backend is registered but the current one stays.
 */
export async function initWebGPU(opts: WebGPUOptions & { select?: boolean } = {}): Promise<WebGPUBackend> {
  const backend = await createWebGPUBackend(opts);
  registerBackend(backend);
  if (opts.select !== false) setBackend("webgpu");
  return backend;
}

export type { WebGPUBackend, WebGPUOptions, WebGPUStats, AdapterDescription, DeviceLimits };
// The WebGPU types of the public declarations: the program's own global WebGPU types where it has them.
export type {
  GPUDeviceLike,
  GPULike,
  GPUPowerPreferenceLike,
  MinimalGPUDevice,
  MinimalGPU,
} from "../runtime/webgpu/gpu-types.js";
