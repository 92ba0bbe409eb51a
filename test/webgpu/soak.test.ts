/**
 * GPU memory stays bounded under soaks of jit calls at varying batch sizes:
 * - 10,000 calls, each input and output disposed: the live-buffer count and the
 *   allocated bytes stay flat (buffers return to the pool and are reused);
 * - 5,000 calls that never call `dispose()`: the tensors' device buffers are
 *   freed when the garbage collector finalizes them, so live buffers, device
 *   bytes and the JS heap stay bounded (measured after a forced collection).
 */
import { expect, it } from "vitest";
import { fromTypedArray, jit, type Tensor } from "../../src/index.js";
import { collect, heapAfterGc } from "../helpers/memory.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { onWebGPU } from "../helpers/on-webgpu.js";
import { soakInput, soakProgram } from "../helpers/soak.js";

const probe = await probeWebGPUForFile();

describeWebGPU(probe, "GPU memory under a soak of jit calls", (gpu) => {
  it(
    "10,000 calls at varying batch sizes leave memory bounded",
    () =>
      onWebGPU(gpu, async () => {
        const f = jit((x: Tensor) =>
          x
            .mul(x)
            .sub(x.mean(0, { keepdim: true }))
            .exp(),
        );
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
      }),
    300_000,
  );

  it(
    "5,000 calls without dispose() at varying batch sizes leave memory bounded",
    () =>
      onWebGPU(gpu, async () => {
        // Two outputs, a reduction and a base-shaped result; batch sizes from 1 to 500.
        const { f, w } = soakProgram();
        const N = 5_000;
        const samples: { i: number; live: number; bytes: number; heap: number }[] = [];
        for (let i = 0; i < N; i++) {
          const { b, v, x } = soakInput(i);
          const [s, d] = (await f.callAsync(x, w)) as Tensor[];
          if (i % 500 === 499) {
            // Every row is tanh(v * column sums of w); the sum over base is the same for every row.
            const want = [0, 1, 2].reduce(
              (acc, j) => acc + Math.tanh(v * [0, 3, 6, 9].reduce((p, k) => p + ((k + j) % 5) / 10, 0)),
              0,
            );
            const got = await s!.data();
            expect(got.length).toBe(b);
            expect(got[b - 1]).toBeCloseTo(want, 4);
            expect(Math.max(...Array.from(await d!.data(), Math.abs))).toBeLessThan(1e-5);
          }
          if (i % 250 === 249) {
            await collect();
            samples.push({
              i,
              live: gpu.stats.liveBuffers,
              bytes: gpu.stats.bytesAllocated,
              heap: await heapAfterGc(),
            });
          }
        }
        const q = Math.floor(samples.length / 4);
        const second = samples.slice(q, 2 * q);
        const last = samples.slice(3 * q);
        const max = (xs: typeof samples, k: "live" | "bytes" | "heap"): number => Math.max(...xs.map((s) => s[k]));
        console.log(
          `WebGPU soak without dispose(): ${N} calls; after GC, live buffers ≤ ${max(samples, "live")}, device bytes ≤ ${max(samples, "bytes")}, ` +
            `heap second quarter ≤ ${(max(second, "heap") / 2 ** 20).toFixed(1)} MB, last quarter ≤ ${(max(last, "heap") / 2 ** 20).toFixed(1)} MB`,
        );
        expect(f.stats.traces).toBe(1);
        // After a collection, only the tensors still referenced here are alive (w, and at most the last call's).
        expect(max(samples, "live")).toBeLessThanOrEqual(8);
        // The device memory of the last quarter is no larger than the second quarter's (the pool is reused).
        expect(max(last, "bytes")).toBeLessThanOrEqual(max(second, "bytes") * 1.5 + 65536);
        // The JS heap does not grow with the number of calls.
        expect(max(last, "heap")).toBeLessThanOrEqual(max(second, "heap") + 4 * 2 ** 20);
      }),
    120_000,
  );
});
