/** Host values onto a WebGPU backend (type-only imports: loads no GPU code). */
import type { Value } from "../../ir/interpret.js";
import type { WebGPUBackend } from "../../runtime/webgpu/backend.js";

/** Each value uploaded to a new buffer of `gpu`, with its type: the inputs `Program.run` takes. */
export function uploadValues(
  gpu: WebGPUBackend,
  values: readonly Value[],
): { buffer: ReturnType<WebGPUBackend["alloc"]>; type: Value["type"] }[] {
  return values.map((v) => {
    const b = gpu.alloc(v.type.dtype, v.data.length);
    gpu.write(b, v.data);
    return { buffer: b, type: v.type };
  });
}
