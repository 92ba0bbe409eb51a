/**
 * `t.to(backend)` between the JS and WebGPU backends: values survive the round trip
 * for every dtype WebGPU holds, lazy tensors are computed first, float64 is refused,
 * and a jit function on WebGPU names an argument left on JS and says to move it.
 */
import { expect, it } from "vitest";
import { registerBackend } from "../../src/backend.js";
import { BackendError, DTypeError, JaggedTensor, jit, setBackend, tensor, type Tensor } from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";

const probe = await probeWebGPUForFile();

describeWebGPU(probe, "Tensor.to with WebGPU", (gpu) => {
  const backendOf = (t: Tensor) => (t._src.kind === "buffer" ? t._src.backend : undefined);

  it("moves JS tensors of every WebGPU dtype to the device and back", async () => {
    registerBackend(gpu);
    setBackend("js");
    const cases: [Tensor, number[]][] = [
      [
        tensor(
          [
            [1.5, -2],
            [3.25, 4],
          ],
          { batchDim: 1 },
        ),
        [1.5, -2, 3.25, 4],
      ],
      // Special values keep their bits: NaN, ±Inf, -0, the smallest subnormal, float32 max.
      [
        tensor([NaN, Infinity, -Infinity, -0, 0, 1.401298464324817e-45, 3.4028234663852886e38]),
        [NaN, Infinity, -Infinity, -0, 0, 1.401298464324817e-45, 3.4028234663852886e38],
      ],
      [tensor([-2147483648, 2147483647], { dtype: "int32" }), [-2147483648, 2147483647]],
      [tensor([-7, 0, 2147483647], { dtype: "int32" }), [-7, 0, 2147483647]],
      [tensor([4294967295, 1], { dtype: "uint32" }), [4294967295, 1]],
      [tensor([true, false, true]), [1, 0, 1]],
    ];
    for (const [x, expected] of cases) {
      const g = await x.to("webgpu");
      expect(backendOf(g)).toBe(gpu);
      expect([g.dtype, g.toString()]).toEqual([x.dtype, x.toString()]);
      expect(Array.from(await g.data())).toEqual(expected);
      expect(await g.to(gpu)).toBe(g);
      const back = await g.to("js");
      expect(backendOf(back)).not.toBe(gpu);
      expect(Array.from(back.dataSync())).toEqual(expected);
    }
    // No elements: the shape survives.
    const empty = await tensor([[], []], { batchDim: 1 }).to(gpu);
    expect(empty.toString()).toBe("(2; 0)");
    expect((await empty.data()).length).toBe(0);
  });

  it("computes a lazy tensor on the current backend first", async () => {
    registerBackend(gpu);
    setBackend("js");
    const g = await tensor([1.5, 2, 3, 4]).mul(3).add(1).to("webgpu");
    expect(Array.from(await g.data())).toEqual([5.5, 7, 10, 13]);
    setBackend("webgpu");
    try {
      const y = g.mul(2).sub(1); // lazy, runs on WebGPU
      const j = await y.to("js");
      expect(Array.from(j.dataSync())).toEqual([10, 13, 19, 25]);
    } finally {
      setBackend("js");
    }
  });

  it("refuses float64 for WebGPU with a DTypeError", async () => {
    registerBackend(gpu);
    const x = tensor([1, 2], { dtype: "float64" });
    await expect(x.to("webgpu")).rejects.toThrow(
      new DTypeError(
        'to: x (;2) is float64, which WebGPU cannot hold (WGSL has no f64): cast it first, e.g. x.cast("float32")',
      ),
    );
    const g = await x.cast("float32").to("webgpu");
    expect(Array.from(await g.data())).toEqual([1, 2]);
  });

  it("moves a jagged tensor", async () => {
    registerBackend(gpu);
    const j = new JaggedTensor(
      tensor([1, 2, 3, 4, 5], { batchDim: 1 }),
      tensor([0, 2, 5], { dtype: "int32", batchDim: 1 }),
    );
    const g = await j.to("webgpu");
    expect([backendOf(g.values), backendOf(g.offsets)]).toEqual([gpu, gpu]);
    expect(await g.to(gpu)).toBe(g);
    setBackend("webgpu");
    try {
      expect(Array.from(await g.sum().data())).toEqual([3, 12]);
    } finally {
      setBackend("js");
    }
    const back = await g.to("js");
    expect(Array.from(back.offsets.dataSync())).toEqual([0, 2, 5]);
  });

  it("jit on WebGPU: an argument on JS is a BackendError that says to move it; moved, it runs", async () => {
    registerBackend(gpu);
    setBackend("js");
    const f = jit((x: Tensor) => x.mul(2).add(1), { backend: gpu, name: "affine" });
    const x = tensor(
      [
        [1, 2],
        [3, 4],
      ],
      { batchDim: 1 },
    );
    await expect(f.callAsync(x)).rejects.toThrow(
      new BackendError(
        'jit @affine: argument 0 (2; 2) lives on the js backend, but this function runs on webgpu: move it first with await t.to("webgpu")',
      ),
    );
    const y = await f.callAsync(await x.to(gpu));
    expect(backendOf(y)).toBe(gpu);
    expect(Array.from(await y.data())).toEqual([3, 5, 7, 9]);
  });
});
