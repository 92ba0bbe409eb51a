/**
 * GPU memory stays bounded: 10,000 jit calls at varying batch sizes, each
 * input and output disposed, leave the live-buffer count and the allocated
 * bytes flat (buffers return to the pool and are reused).
 */
import { expect, it } from "vitest";
import { registerBackend } from "../../src/backend.js";
import { fromTypedArray, jit, setBackend, type Tensor } from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";

const probe = await probeWebGPUForFile();

describeWebGPU(probe, "GPU memory under a soak of jit calls", (gpu) => {
  it("10,000 calls at varying batch sizes leave memory bounded", async () => {
    registerBackend(gpu);
    setBackend("webgpu");
    try {
      const f = jit((x: Tensor) => x.mul(x).sub(x.mean(0, { keepdim: true })).exp());
      const sizes = [1, 7, 64, 3, 200, 33];
      let peakLive = 0;
      let peakBytes = 0;
      let baseline: { live: number; bytes: number } | undefined;
      for (let i = 0; i < 10_000; i++) {
        const b = sizes[i % sizes.length]!;
        const x = fromTypedArray(new Float32Array(b * 4).fill(i % 3), [b, 4], { batchDim: 1 });
        const y = await f.callAsync(x);
        if (i % 1000 === 999) {
          const v = await y.data();
          expect(v[0]).toBeCloseTo(Math.exp((i % 3) ** 2 - (i % 3)), 4);
        }
        x.dispose();
        y.dispose();
        if (i === 99) baseline = { live: gpu.stats.liveBuffers, bytes: gpu.stats.bytesAllocated };
        peakLive = Math.max(peakLive, gpu.stats.liveBuffers);
        peakBytes = Math.max(peakBytes, gpu.stats.bytesAllocated);
      }
      expect(f.stats.traces).toBe(1);
      // Nothing is left alive, and the pool did not grow after the first hundred calls.
      expect(gpu.stats.liveBuffers).toBe(0);
      expect(peakLive).toBeLessThanOrEqual(4);
      expect(peakBytes).toBeLessThanOrEqual(Math.max(baseline!.bytes, 1) * 2);
    } finally {
      setBackend("js");
    }
  }, 300_000);
});
