/** A bundle exported on JS and loaded on WebGPU: its shipped WGSL runs, with no code generation. */
import { expect, it } from "vitest";
import { registerBackend } from "../../src/backend.js";
import {
  BundleError,
  counters,
  fromTypedArray,
  JaggedTensor,
  jit,
  loadBundle,
  R2,
  setBackend,
  type Tensor,
} from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";
import { batchOfMats, jaggedRows } from "../helpers/bundle-fixtures.js";
import { closeEnough } from "../helpers/random-graph.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";

const probe = await probeWebGPUForFile();

describeWebGPU(probe, "bundles on WebGPU", (gpu) => {
  it("load the shipped WGSL and match the JS trace, jagged results included", async () => {
    registerBackend(gpu);
    const f = jit((m: Tensor, x: JaggedTensor) => [new R2(m).inverse().t, x.sub(x.mean()).toPadded().padded]);
    const mats = (B: number) => batchOfMats(B, (i) => (i % 4 === 0 ? 3 : ((i * 7) % 5) / 10));
    const jag = (lengths: number[]) => jaggedRows(lengths, (i) => (i * 5) % 9);
    f(mats(2), jag([1, 2]));
    const mod = await importBundle(f.bundle());
    try {
      setBackend("webgpu");
      const compiles = counters.compiles;
      const pipelines = gpu.stats.pipelines;
      const g = await loadBundle(mod);
      expect(counters.compiles).toBe(compiles);
      expect(gpu.stats.pipelines).toBeGreaterThan(pipelines);
      for (const [B, lengths] of [
        [3, [2, 0, 4]],
        [17, [1]],
      ] as const) {
        setBackend("js");
        const want = f(mats(B), jag([...lengths])) as Tensor[];
        setBackend("webgpu");
        const got = (await g.callAsync(mats(B), jag([...lengths]))) as Tensor[];
        for (const [i, t] of got.entries()) {
          expect(t.toString()).toBe(want[i]!.toString());
          expect(closeEnough(await t.data(), want[i]!.dataSync(), 1e-5)).toBeUndefined();
        }
      }
      expect(counters.compiles).toBe(compiles);
    } finally {
      setBackend("js");
    }
  });

  it("refuse an edited WGSL kernel before creating any pipeline, and load with a pinned hash", async () => {
    registerBackend(gpu);
    const f = jit((x: Tensor) => x.exp().mul(2));
    f(fromTypedArray(Float32Array.from([0, 1, 2]), [1, 3], { batchDim: 1 }));
    const text = f.bundle();
    const edited = text.replace(/exp\(v(\d+)\)/, "sin(v$1)");
    expect(edited).not.toBe(text);
    const mod = await importBundle(text);
    try {
      setBackend("webgpu");
      const pipelines = gpu.stats.pipelines;
      await expect(loadBundle(await importBundle(edited))).rejects.toThrow(BundleError);
      await expect(loadBundle(await importBundle(edited))).rejects.toThrow(
        /step 0's WGSL kernel is not the code its kernel IR gives \(an edited kernel\)/,
      );
      expect(gpu.stats.pipelines).toBe(pipelines);
      const g = await loadBundle(mod, { sha256: mod.sha256 });
      const out = (await g.callAsync(
        fromTypedArray(Float32Array.from([0, 1, 2, 3, 4, 5]), [2, 3], { batchDim: 1 }),
      )) as Tensor;
      const want = [0, 1, 2, 3, 4, 5].map((v) => 2 * Math.exp(v));
      expect(closeEnough(await out.data(), Float32Array.from(want), 1e-5)).toBeUndefined();
    } finally {
      setBackend("js");
    }
  });
});
