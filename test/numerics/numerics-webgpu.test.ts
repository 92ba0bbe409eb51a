/**
 * The numerics compositions on WebGPU: the hand-written cases of ./numerics-cases.ts
 * (NaN, ±Inf, -0, empty axes) inside jit, the same expectations as on JS (finite
 * transcendental results within the device's float32 accuracy), and one trace for two
 * batch sizes.
 */
import { expect, it } from "vitest";
import { counters, jit, tensor, type Tensor } from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { mismatchesInOneJit } from "./numerics-cases.js";
import { selectWebGPU } from "../helpers/on-webgpu.js";

const probe = await probeWebGPUForFile();

describeWebGPU(probe, "numerics on WebGPU", (gpu) => {
  selectWebGPU(gpu);

  it("every case (one program for all of them)", async () => {
    // One jit of all cases: one pipeline build per kernel, not per case (llvmpipe compiles slowly).
    // WGSL's exp/log are not correctly rounded: finite results of cases marked exact-by-hand
    // that go through them get the same 1e-6 the JS cases allow, at most 4e-6.
    expect(await mismatchesInOneJit(4e-6)).toEqual([]);
  });

  it("one trace serves two batch sizes", async () => {
    const f = jit((x: Tensor) => [x.sort(), x.cumsum(), x.logsumexp()]);
    const before = counters.traces;
    const a = (await f.callAsync(tensor([[3, 1, 2]], { batchDim: 1 }))) as Tensor[];
    const b = (await f.callAsync(
      tensor(
        [
          [3, 1, 2],
          [NaN, -1, 0],
        ],
        { batchDim: 1 },
      ),
    )) as Tensor[];
    expect(counters.traces - before).toBe(1);
    expect(await a[0]!.toArray()).toEqual([[1, 2, 3]]);
    expect(await b[0]!.toArray()).toEqual([
      [1, 2, 3],
      [-1, 0, NaN],
    ]);
    expect(await b[1]!.toArray()).toEqual([
      [3, 4, 6],
      [NaN, NaN, NaN],
    ]);
    const l = await b[2]!.data();
    expect(l[0]).toBeCloseTo(Math.log(Math.exp(3) + Math.exp(1) + Math.exp(2)), 5);
    expect(l[1]).toBeNaN();
  });

  it("argsorts an axis of 1024 elements (the limit) as the JS backend does", async () => {
    const n = 1024;
    const rows = [0, 1].map((r) => Array.from({ length: n }, (_, i) => ((i * 7919) % n) - r * 5));
    // Distinct values per row: the expected order is the host's sort, by value.
    const want = rows.map((v) => Array.from({ length: n }, (_, i) => i).sort((a, b) => v[a]! - v[b]!));
    expect(await tensor(rows, { batchDim: 1 }).argsort().toArray()).toEqual(want);
  });
});
