/**
 * Issue 26, item 1 on WebGPU: `where(c, x, x)` with `c (3;)` and `x (1;) = [4]` is
 * `(3;) [4, 4, 4]` (the simplifier replaced it by `x`, losing the run-time broadcast),
 * eager and in jit, also through a promotion. Expected values by hand.
 */
import { expect, it } from "vitest";
import { registerBackend } from "../../src/backend.js";
import { jit, setBackend, tensor, where, type Tensor } from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";

const probe = await probeWebGPUForFile();

const view = async (t: Tensor): Promise<unknown> => ({ batch: t.batchShape, data: Array.from(await t.data()) });

describeWebGPU(probe, "WebGPU: where(c, x, x) keeps c's run-time broadcast", (gpu) => {
  it("eager and jit give (3;) [4, 4, 4], also for where(c, x.cast(float32) of an int32 x, x)", async () => {
    registerBackend(gpu);
    setBackend("webgpu");
    const c = tensor([true, false, true], { batchDim: 1 });
    const x = tensor([4], { batchDim: 1 });
    expect(await view(where(c, x, x))).toEqual({ batch: [3], data: [4, 4, 4] });
    expect(await view(jit((c: Tensor, x: Tensor) => where(c, x, x))(c, x))).toEqual({ batch: [3], data: [4, 4, 4] });
    const xi = tensor([4], { batchDim: 1, dtype: "int32" });
    expect(await view(where(c, xi.cast("float32"), xi))).toEqual({ batch: [3], data: [4, 4, 4] });
    expect(await view(where(c, x, x).batchSum())).toEqual({ batch: [], data: [12] });
  });
});
