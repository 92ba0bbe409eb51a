/**
 * Constants on WebGPU: they travel in the uniform as bits (NaN, ±Inf, -0 and
 * integer extremes arrive exactly, with no WGSL literal), one pipeline serves
 * every value of a scalar, special constants never share a kernel, and
 * `dump({ kernels: true })` shows the WGSL while the pipelines still compile.
 * Expected values are IEEE arithmetic written out by hand.
 */
import { describe, expect, it } from "vitest";
import type { KExpr } from "../../ir/kernel.js";
import { counters, fromTypedArray, jit, spec, tensor, trace, type Tensor } from "../../src/index.js";
import { scalarBatchKernel } from "../helpers/kernels.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { PIPELINE_CACHE_LIMIT, PipelineCache } from "../../runtime/webgpu/pipelines.js";
import { onWebGPU } from "../helpers/on-webgpu.js";

const probe = await probeWebGPUForFile();

const read = async (t: Tensor): Promise<number[]> => Array.from(await t.data());

describeWebGPU(probe, "constants on WebGPU", (gpu) => {
  it("passes each constant's bits at launch: one compiled kernel, two sets of values, both exact", async () => {
    const exprs: KExpr[] = [
      { k: "const", value: NaN, dtype: "float32" },
      { k: "const", value: -0, dtype: "float32" },
      { k: "const", value: Infinity, dtype: "float32" },
      { k: "const", value: -2147483648, dtype: "int32" },
      { k: "const", value: 4294967295, dtype: "uint32" },
      { k: "const", value: 1, dtype: "bool" },
    ];
    // Output i is constant i.
    const k = scalarBatchKernel(
      [],
      exprs,
      exprs.map((e, value) => ({ dtype: e.dtype, value, reduce: null })),
      true,
    );
    const compiled = await gpu.compile(k);
    const run = async (consts: number[]): Promise<number[][]> => {
      const outs = k.outputs.map((o) => gpu.alloc(o.dtype, 2));
      gpu.dispatch(compiled, [], outs, { batchSizes: [2], inputBatchStrides: [], consts: Float64Array.from(consts) });
      const data = await Promise.all(outs.map((b) => gpu.read(b)));
      for (const b of outs) gpu.free(b);
      return data.map((d) => Array.from(d));
    };
    const bits = (v: number): number => new Uint32Array(Float32Array.of(v).buffer)[0]!;
    const first = await run([NaN, -0, Infinity, -2147483648, 4294967295, 1]);
    expect(first[0]).toEqual([NaN, NaN]);
    expect(first[1]!.map(bits)).toEqual([0x80000000, 0x80000000]);
    expect(first[2]).toEqual([Infinity, Infinity]);
    expect(first[3]).toEqual([-2147483648, -2147483648]);
    expect(first[4]).toEqual([4294967295, 4294967295]);
    expect(first[5]).toEqual([1, 1]);
    const second = await run([-Infinity, 0, 0.1, 2147483647, 0, 0]);
    expect(second[0]).toEqual([-Infinity, -Infinity]);
    expect(second[1]!.map(bits)).toEqual([0, 0]);
    expect(second[2]).toEqual([Math.fround(0.1), Math.fround(0.1)]);
    expect(second[3]).toEqual([2147483647, 2147483647]);
    expect(second[4]).toEqual([0, 0]);
    expect(second[5]).toEqual([0, 0]);
  });

  it("eager: NaN after Infinity, -Infinity after Infinity, -0 after 0 each give their own results", () =>
    onWebGPU(gpu, async () => {
      const a = tensor([1, 2, 3]);
      expect(await read(a.mul(Infinity))).toEqual([Infinity, Infinity, Infinity]);
      expect(await read(a.mul(NaN))).toEqual([NaN, NaN, NaN]);
      expect(await read(a.mul(-Infinity))).toEqual([-Infinity, -Infinity, -Infinity]);
      expect(await read(a.add(Infinity).mul(NaN))).toEqual([NaN, NaN, NaN]);
      expect(await read(a.div(0))).toEqual([Infinity, Infinity, Infinity]);
      expect(await read(a.div(-0))).toEqual([-Infinity, -Infinity, -Infinity]);
      expect((await read(a.mul(-0))).map((v) => Object.is(v, -0))).toEqual([true, true, true]);
      expect((await read(a.mul(0))).map((v) => Object.is(v, -0))).toEqual([false, false, false]);
    }));

  it(
    "x.mul(i + 0.5) for 200 values of i builds one pipeline and gives the right values",
    () =>
      onWebGPU(gpu, async () => {
        const x = fromTypedArray(new Float32Array([1, -2, 3, 0.25]), [4]);
        const compiles = counters.compiles;
        const pipelines = gpu.stats.pipelines;
        for (let i = 0; i < 200; i++) {
          const c = i + 0.5;
          const want = [1, -2, 3, 0.25].map((v) => Math.fround(Math.fround(v * c) + v));
          expect(await read(x.mul(c).add(x)), `i = ${i}`).toEqual(want);
        }
        expect(counters.compiles - compiles).toBe(1);
        expect(gpu.stats.pipelines - pipelines).toBe(1);
      }),
    120_000,
  );

  it("dump({ kernels: true }) gives the WGSL while the pipelines compile and after", () =>
    onWebGPU(gpu, async () => {
      const fn = (x: Tensor): Tensor => x.mul(Infinity).add(x.mul(NaN).sum(0, { keepdim: true }));
      const f = trace(fn, [spec("float32", ["B"], [3])]);
      // Right after the trace the pipelines are still compiling (WebGPU compiles asynchronously).
      const now = f.dump({ kernels: true });
      expect(now).toContain("@compute");
      expect(now).toContain("bitcast<f32>(P.v[");
      const y = (await f.callAsync(fromTypedArray(new Float32Array([1, 2, 3]), [1, 3], { batchDim: 1 }))) as Tensor;
      expect(await read(y)).toEqual([NaN, NaN, NaN]);
      expect(f.dump({ kernels: true })).toBe(now);
      const g = jit((t: Tensor) => t.mul(2));
      await g.callAsync(fromTypedArray(new Float32Array([1]), [1]));
      expect(g.dump({ kernels: true })).toContain("@compute");
    }));
});

describe("pipeline cache (no GPU: a stand-in device that counts pipelines)", () => {
  it("keeps at most PIPELINE_CACHE_LIMIT pipelines, least recently used dropped first", async () => {
    let created = 0;
    const device = {
      pushErrorScope: () => undefined,
      popErrorScope: async () => null,
      createShaderModule: () => ({ getCompilationInfo: async () => ({ messages: [] }) }),
      createBindGroupLayout: () => ({}),
      createPipelineLayout: () => ({}),
      createComputePipelineAsync: async () => ({ id: created++ }),
    } as unknown as GPUDevice;
    const cache = new PipelineCache(device);
    const first = await cache.get("source 0", 1, 1);
    for (let i = 1; i < PIPELINE_CACHE_LIMIT + 10; i++) {
      await cache.get(`source ${i}`, 1, 1);
      // "source 0" stays recently used, so it survives the evictions.
      if (i % 100 === 0) expect(await cache.get("source 0", 1, 1)).toBe(first);
    }
    expect(cache.size).toBe(PIPELINE_CACHE_LIMIT);
    expect(await cache.get("source 0", 1, 1)).toBe(first);
    // "source 1" was the least recently used: asking again builds a new pipeline.
    const before = created;
    await cache.get("source 1", 1, 1);
    expect(created).toBe(before + 1);
    expect(cache.size).toBe(PIPELINE_CACHE_LIMIT);
  });
});
