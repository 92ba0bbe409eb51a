/**
 * One small test per WebGPU bug found by the random-graph fuzz and the JS/WebGPU
 * differential test, with expected values computed by hand from the documented
 * rules (the same values JS gives).
 */
import { expect, it } from "vitest";
import { registerBackend } from "../../src/backend.js";
import { jit, setBackend, tensor, where, type Tensor } from "../../src/index.js";
import { checkSignedZeroSums } from "../helpers/signed-zero-sums.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";

const probe = await probeWebGPUForFile();
const fmt = (a: ArrayLike<number>): string[] => Array.from(a, (v) => (Object.is(v, -0) ? "-0" : String(v)));

describeWebGPU(probe, "fuzz regressions (WebGPU)", (gpu) => {
  const on = (f: () => Promise<void>) => async (): Promise<void> => {
    registerBackend(gpu);
    setBackend("webgpu");
    try {
      await f();
    } finally {
      setBackend("js");
    }
  };

  it("where(x < y, y, x) passes a NaN on (the driver made it max(x, y))", on(async () => {
    const x = tensor([NaN, 1, 2, NaN]);
    const y = tensor([1, NaN, 3, NaN]);
    // A comparison with NaN is false, so where() picks its third operand.
    expect(fmt(await where(x.lt(y), y, x).data())).toEqual(["NaN", "1", "3", "NaN"]);
    expect(fmt(await where(x.lt(y), x, y).data())).toEqual(["1", "NaN", "2", "NaN"]);
    expect(fmt(await where(x.ge(y), x, y).data())).toEqual(["1", "NaN", "3", "NaN"]);
    const f = jit((a: Tensor, b: Tensor) => where(a.gt(b), a, b));
    expect(fmt(await (await f.callAsync(x, y)).data())).toEqual(["1", "NaN", "3", "NaN"]);
  }));

  it("a sum of -0s is -0, an empty sum +0 (NumPy), on every WGSL code path", on(() => checkSignedZeroSums((t) => t.data())));
});
