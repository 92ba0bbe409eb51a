/**
 * The frontend on WebGPU: one jit function traced once and run at two batch
 * sizes through the program executor, equal to the same function on the JS
 * backend, with no new pipeline for the second batch size.
 */
import { expect, it } from "vitest";
import { fromTypedArray, jit, setBackend, type Tensor } from "../../src/index.js";
import { registerBackend } from "../../src/backend.js";
import { closeTo, describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";

const probe = await probeWebGPUForFile();

function centred(x: Tensor, w: Tensor): Tensor[] {
  const y = x.mul(w).tanh();
  return [y.sub(y.mean(0, { keepdim: true })), y.max(1), x.batchSum(0)];
}

function data(n: number, seed: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37 + seed) * 2);
}

describeWebGPU(probe, "jit on WebGPU", (gpu) => {
  it("matches the JS backend and reuses its pipelines for a new batch size", async () => {
    registerBackend(gpu);
    const run = async (backend: "js" | "webgpu", B: number): Promise<Float32Array[]> => {
      setBackend(backend);
      const x = fromTypedArray(data(B * 4 * 3, B), [B, 4, 3], { batchDim: 1 });
      const w = fromTypedArray(data(3, 1), [3]);
      const outs = await (backend === "js" ? fJs : fGpu).callAsync(x, w);
      return (await Promise.all(outs.map((o) => o.data()))) as Float32Array[];
    };
    const fJs = jit(centred, { name: "centred_js" });
    const fGpu = jit(centred, { name: "centred_gpu" });

    const a7 = await run("js", 7);
    const g7 = await run("webgpu", 7);
    const pipelines = gpu.stats.pipelines;
    const dispatches = gpu.stats.dispatches;
    const a130 = await run("js", 130);
    const g130 = await run("webgpu", 130);
    expect(gpu.stats.pipelines).toBe(pipelines);
    expect(gpu.stats.dispatches).toBeGreaterThan(dispatches);
    expect(fGpu.stats.traces).toBe(1);
    for (const [a, g] of [
      [a7, g7],
      [a130, g130],
    ] as const) {
      expect(g.length).toBe(3);
      g.forEach((arr, i) => expect([i, closeTo(arr, a[i]!, 1e-5, 1e-6)]).toEqual([i, null]));
    }
  });

  it("one function called on JS, then on WebGPU after setBackend, traces for each backend (it used to run the JS kernels on GPU buffers)", async () => {
    registerBackend(gpu);
    const f = jit(centred, { name: "centred_both" });
    const call = async (backend: "js" | "webgpu") => {
      setBackend(backend);
      try {
        const outs = await f.callAsync(
          fromTypedArray(data(5 * 4 * 3, 5), [5, 4, 3], { batchDim: 1 }),
          fromTypedArray(data(3, 1), [3]),
        );
        return (await Promise.all(outs.map((o) => o.data()))) as Float32Array[];
      } finally {
        setBackend("js");
      }
    };
    const a = await call("js");
    const g = await call("webgpu");
    const again = await call("js");
    expect(f.stats.traces).toBe(2);
    g.forEach((arr, i) => expect([i, closeTo(arr, a[i]!, 1e-5, 1e-6)]).toEqual([i, null]));
    again.forEach((arr, i) => expect(Array.from(arr)).toEqual(Array.from(a[i]!)));
  });
});

describeWebGPU(probe, "rebatch views on WebGPU", (gpu) => {
  it("moves base dims into the batch and back inside jit, as on JS", async () => {
    registerBackend(gpu);
    // (B; 4,3) -> (B,4; 3): reduce over the new batch dim 1 and over xyz, then back.
    const fn = (x: Tensor): Tensor[] => [x.rebatch(2).batchSum(1).mul(2), x.rebatch(2).sum(0).rebatch(1)];
    const fJs = jit(fn);
    const fGpu = jit(fn);
    try {
      for (const B of [3, 50]) {
        setBackend("js");
        const want = fJs(fromTypedArray(data(B * 12, B), [B, 4, 3], { batchDim: 1 })).map((t) => t.dataSync());
        setBackend("webgpu");
        const got = await fGpu.callAsync(fromTypedArray(data(B * 12, B), [B, 4, 3], { batchDim: 1 }));
        expect(got.map((t) => t.toString())).toEqual([`(${B}; 3)`, `(${B}; 4)`]);
        for (const [i, t] of got.entries())
          expect([i, closeTo((await t.data()) as Float32Array, want[i] as Float32Array, 1e-5, 1e-6)]).toEqual([
            i,
            null,
          ]);
      }
      expect(fGpu.stats.traces).toBe(1);
    } finally {
      setBackend("js");
    }
  });
});

describeWebGPU(probe, "float64 on WebGPU", (gpu) => {
  it("is a DTypeError naming the tensor, never a silent downcast", async () => {
    const { DTypeError } = await import("../../ir/errors.js");
    registerBackend(gpu);
    setBackend("webgpu");
    try {
      expect(() => fromTypedArray(new Float64Array(6), [2, 3], { batchDim: 1 })).toThrow(DTypeError);
      expect(() => fromTypedArray(new Float64Array(6), [2, 3], { batchDim: 1 })).toThrow(
        "tensor (2; 3) is float64, which WebGPU cannot hold",
      );
    } finally {
      setBackend("js");
    }
  });
});
