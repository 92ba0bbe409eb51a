/**
 * The narrow dtypes on WebGPU (stored widened, one i32 per element, converted at
 * upload and read-back): the NumPy cases of ./cases.ts, eager and in jit, one trace
 * for two batch sizes, empty dims; and float16, which needs the device's
 * "shader-f16" feature (Dawn on llvmpipe has none: there it is a DTypeError).
 */
import { expect, it } from "vitest";
import { counters, DTypeError, fromTypedArray, jit, tensor, zeros, type Tensor } from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { ALL_CASES, runCases } from "./cases.js";
import { selectWebGPU } from "../helpers/on-webgpu.js";

const probe = await probeWebGPUForFile();

describeWebGPU(probe, "narrow dtypes on WebGPU", (gpu) => {
  selectWebGPU(gpu);

  it("wrap, promote and cast as NumPy (eager and in jit)", async () => {
    expect(await runCases(ALL_CASES)).toEqual([]);
  });

  it("one trace serves two batch sizes; empty dims", async () => {
    const f = jit((x: Tensor, y: Tensor) => x.sub(y).mul(3).sum(0));
    const mk = (n: number, d: "uint16" | "uint8"): Tensor =>
      fromTypedArray(
        (d === "uint16" ? Uint16Array : Uint8Array).from(Array.from({ length: n * 2 }, (_, i) => (i * 40503) & 0xffff)),
        [n, 2],
        { batchDim: 1 },
      );
    const before = counters.traces;
    const r3 = await ((await f.callAsync(mk(3, "uint16"), mk(3, "uint8"))) as Tensor).data();
    const r6 = await ((await f.callAsync(mk(6, "uint16"), mk(6, "uint8"))) as Tensor).data();
    expect(counters.traces - before).toBe(1);
    // uint16 - uint8 is uint16 (wraps), * 3 wraps again, and the sum over the base is uint32.
    const want = (n: number): number[] =>
      Array.from({ length: n }, (_, b) => {
        let s = 0;
        for (let j = 0; j < 2; j++) {
          const i = b * 2 + j;
          const v = (i * 40503) & 0xffff;
          s += (((v - (v & 0xff)) & 0xffff) * 3) & 0xffff;
        }
        return s;
      });
    expect(r3).toBeInstanceOf(Uint32Array);
    expect([...r3]).toEqual(want(3));
    expect([...r6]).toEqual(want(6));
    const e = await zeros([0], [3], { dtype: "int8" })
      .add(tensor(new Int8Array([1, 2, 3])))
      .data();
    expect(e).toBeInstanceOf(Int8Array);
    expect(e.length).toBe(0);
  });

  it("float16: available only with shader-f16, a DTypeError that says so otherwise", async () => {
    const f = jit((x: Tensor) => x.cast("float16").cast("float32"));
    if (gpu.shaderF16) {
      // Not reached on Dawn over llvmpipe (no shader-f16); runs on a device that has it.
      const r = await ((await f.callAsync(tensor([1.5, 65520, 1 / 3]))) as Tensor).data();
      expect([...r]).toEqual([1.5, Infinity, 0.333251953125]);
      return;
    }
    expect(gpu.dtypes).not.toContain("float16");
    expect(() => tensor([1], { dtype: "float16" })).toThrow(DTypeError);
    expect(() => tensor([1], { dtype: "float16" })).toThrow(
      /is float16, which WebGPU cannot hold \(float16 needs a WebGPU device with "shader-f16"\)/,
    );
    await expect(f.callAsync(tensor([1.5]))).rejects.toThrow(/no "shader-f16" feature/);
  });
});
