/**
 * batchwise/runtime on WebGPU: a bundle written by the full library (in a child
 * process, so this process never loads the compiler) runs its shipped WGSL
 * through the lean loader, with hand-checked values.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { registerBackend } from "../../src/backend.js";
import { loadBundle, setBackend, tensor, type BundleModule, type Tensor } from "../../src/runtime-entry.js";
import { importBundle } from "../helpers/bundle.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";

const probe = await probeWebGPUForFile();

describeWebGPU(probe, "batchwise/runtime on WebGPU", (gpu) => {
  it("runs a pinned bundle's WGSL kernels", async () => {
    // f(x) = [sum over the base of 2x + c, max over the base of x], c = [1, 2, 3] captured.
    const text = execFileSync(
      process.execPath,
      ["--import", "tsx", fileURLToPath(new URL("../runtime/write-bundle.ts", import.meta.url))],
      { encoding: "utf8" },
    );
    const mod: BundleModule = await importBundle(text);
    registerBackend(gpu);
    try {
      setBackend("webgpu");
      const g = await loadBundle(mod, { sha256: mod.sha256 });
      expect(g.backend).toBe(gpu);
      // row 0: (2+1)+(4+2)+(6+3) = 18, max 3; row 1: (0+1)+(-2+2)+(1+3) = 5, max 0.5
      const [s, m] = (await g.callAsync(
        tensor(
          [
            [1, 2, 3],
            [0, -1, 0.5],
          ],
          { batchDim: 1 },
        ),
      )) as Tensor[];
      expect(Array.from(await s!.data())).toEqual([18, 5]);
      expect(Array.from(await m!.data())).toEqual([3, 0.5]);
    } finally {
      setBackend("js");
    }
  });
});
