/**
 * Bundles of traces that capture a tensor living on WebGPU: `f.bundle()` cannot
 * read it synchronously and says so (BundleError naming bundleAsync);
 * `await f.bundleAsync()` reads it and the bundle runs on WebGPU and on JS.
 */
import { expect, it } from "vitest";
import { registerBackend } from "../../src/backend.js";
import { BundleError, fromTypedArray, jit, loadBundle, setBackend, tensor, type Tensor } from "../../src/index.js";
import { getJsBackend } from "../../src/backend.js";
import { importBundle } from "../helpers/bundle.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";

const probe = await probeWebGPUForFile();

describeWebGPU(probe, "bundles with captured constants on WebGPU", (gpu) => {
  it("bundle() names bundleAsync; bundleAsync's module computes x * w + 1 on WebGPU and on JS", async () => {
    registerBackend(gpu);
    try {
      setBackend("webgpu");
      const w = tensor([2, -1, 0.5]); // on the device
      const f = jit((x: Tensor) => x.mul(w).add(1));
      const x = () => fromTypedArray(Float32Array.from([1, 2, 3, 4, 5, 6]), [2, 3], { batchDim: 1 });
      await f.callAsync(x());
      expect(() => f.bundle()).toThrow(BundleError);
      expect(() => f.bundle()).toThrow(
        "f.bundle(): captured constant 0 (;3) float32 lives on the webgpu backend, which reads only asynchronously; use await f.bundleAsync()",
      );
      const text = await f.bundleAsync();
      expect(text).toContain("data: new Float32Array([2, -1, 0.5])");
      const mod = await importBundle(text);
      // x * (2, -1, 0.5) + 1, by hand
      const want = [3, -1, 2.5, 9, -4, 4];
      const g = await loadBundle(mod);
      expect(g.backend.name).toBe("webgpu");
      expect(Array.from(await ((await g.callAsync(x())) as Tensor).data())).toEqual(want);
      setBackend("js");
      const h = await loadBundle(mod, { backend: getJsBackend() });
      expect(Array.from((h(x()) as Tensor).dataSync())).toEqual(want);
    } finally {
      setBackend("js");
    }
  });
});
