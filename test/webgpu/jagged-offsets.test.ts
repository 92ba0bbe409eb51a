/**
 * Jagged offsets on WebGPU are checked on the host before any segmented kernel
 * reads them. Offsets the device computes are read back asynchronously: the run
 * stops after the step that computes them, checks them, and only then launches
 * the segmented kernel. Bad offsets are a ShapeError (never an out-of-bounds
 * read); a failed run frees what it allocated; good offsets give hand-computed values.
 */
import { expect, it, vi } from "vitest";
import { fromTypedArray, jagged, JaggedTensor, jit, loadBundle, ShapeError, type Tensor } from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { onWebGPU } from "../helpers/on-webgpu.js";

const probe = await probeWebGPUForFile();

const values = (): Tensor => fromTypedArray(Float32Array.from([1, 2, 3, 4, 5]), [5], { batchDim: 1 });
const ints = (o: readonly number[]): Tensor => fromTypedArray(Int32Array.from(o), [o.length], { batchDim: 1 });

async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a rejection");
}

describeWebGPU(probe, "jagged offsets checked on WebGPU", (gpu) => {
  it("the issue's repro: offsets [0,3,2,5] computed lazily are a ShapeError, for every segmented op", async () => {
    await onWebGPU(gpu, async () => {
      // add(0) and a multiplication by 1 computed on the device: both lazy, neither host-known.
      for (const o of [ints([0, 3, 2, 5]).add(0), ints([0, 3, 2, 5]).mul(ints([1, 1, 1, 1]))]) {
        const j = new JaggedTensor(values(), o);
        for (const [op, t] of [
          ["segment_reduce(sum)", j.sum()],
          ["segment_reduce(max)", j.max()],
          ["segment_pad", j.toPadded({ maxLength: 3 }).padded],
          ["segment_mask", j.toPadded({ maxLength: 3 }).mask],
        ] as const) {
          const e = await failure(t.data());
          expect(e, op).toBeInstanceOf(ShapeError);
          expect(e.message).toMatch(
            new RegExp(`^${op.replace(/[()]/g, "\\$&")}: jagged offsets \\(4;\\) decrease at entry 2 \\(3 then 2\\)`),
          );
        }
      }
    });
  });

  it("offsets past the end of the values are refused before the segmented kernel is launched, and the run frees its buffers", async () => {
    await onWebGPU(gpu, async () => {
      const v = values();
      const half = ints([0, 1, 500000]);
      // Warm the program up with good offsets ([0,2,4] over 4 values), so the failing run compiles nothing.
      const four = fromTypedArray(Float32Array.from([1, 2, 3, 4]), [4], { batchDim: 1 });
      expect(Array.from(await new JaggedTensor(four, ints([0, 1, 2]).mul(2)).sum().data())).toEqual([3, 7]);
      const live = gpu.stats.liveBuffers;
      const dispatches = gpu.stats.dispatches;
      const e = await failure(new JaggedTensor(v, half.mul(2)).sum().data());
      expect(e).toBeInstanceOf(ShapeError);
      expect(e.message).toMatch(/end at 1000000, but there are 5 packed values/);
      // Only the kernel computing the offsets ran; the segmented kernel never did.
      expect(gpu.stats.dispatches - dispatches).toBe(1);
      // No buffer of the failed run stays alive. (Not toBe: the garbage collector may free
      // earlier tests' tensors meanwhile, which lowers the count; it never raises it.)
      expect(gpu.stats.liveBuffers).toBeLessThanOrEqual(live);
    });
  });

  it("good offsets computed on the device give the hand-computed sums, and checked inputs are not read again", async () => {
    await onWebGPU(gpu, async () => {
      const v = values();
      // [0,1,1,2] * 2 = [0,2,2,4] over the first 4 values: rows [1,2], [], [3,4].
      const four = fromTypedArray(Float32Array.from([1, 2, 3, 4]), [4], { batchDim: 1 });
      expect(Array.from(await new JaggedTensor(four, ints([0, 1, 1, 2]).mul(2)).sum().data())).toEqual([3, 0, 7]);
      const o = ints([0, 3, 3, 5]);
      const read = vi.spyOn(gpu, "read");
      try {
        const j = new JaggedTensor(v, o);
        expect(Array.from(await j.sum().data())).toEqual([6, 0, 9]);
        // One read-back of the offsets (device data the host has no copy of), one of the result.
        expect(read.mock.calls.length).toBe(2);
        expect(Array.from(await j.max().data())).toEqual([3, -Infinity, 5]);
        expect(read.mock.calls.length).toBe(3);
        // Offsets made by jagged() keep their host copy: no read-back at all.
        const k = jagged([
          fromTypedArray(Float32Array.from([1, 2]), [2], { batchDim: 1 }),
          fromTypedArray(Float32Array.from([7]), [1], { batchDim: 1 }),
        ]);
        expect(Array.from(await k.sum().data())).toEqual([3, 7]);
        expect(read.mock.calls.length).toBe(4);
      } finally {
        read.mockRestore();
      }
    });
  });

  it("inside jit (callAsync): offsets the traced function computes are checked at every call", async () => {
    await onWebGPU(gpu, async () => {
      const f = jit((v: Tensor, o: Tensor) => new JaggedTensor(v, o.mul(2)).sum());
      const four = fromTypedArray(Float32Array.from([1, 2, 3, 4]), [4], { batchDim: 1 });
      expect(Array.from(await (await f.callAsync(four, ints([0, 1, 2]))).data())).toEqual([3, 7]);
      const e = await failure(f.callAsync(values(), ints([0, 1, 2])));
      expect(e).toBeInstanceOf(ShapeError);
      expect(e.message).toMatch(
        /^segment_reduce\(sum\): jagged offsets \(3;\) end at 4, but there are 5 packed values/,
      );
      await expect(f.callAsync(four, ints([0, 2, 1]))).rejects.toThrow(/decrease at entry 2 \(4 then 2\)/);
      expect(Array.from(await (await f.callAsync(four, ints([0, 0, 2]))).data())).toEqual([0, 10]);
      // A jagged argument whose offsets the device computed before the call.
      const g = jit((x: JaggedTensor) => x.sum());
      await expect(g.callAsync(new JaggedTensor(values(), ints([0, 4, 3, 5]).mul(ints([1, 1, 1, 1]))))).rejects.toThrow(
        /decrease at entry 2 \(4 then 3\)/,
      );
      expect(
        Array.from(
          await (await g.callAsync(new JaggedTensor(values(), ints([0, 4, 4, 5]).mul(ints([1, 1, 1, 1]))))).data(),
        ),
      ).toEqual([10, 0, 5]);
    });
  });

  it("a bundle loaded on WebGPU checks offsets the device computed, inside the function or before the call", async () => {
    // Traced and exported on JS; the bundle computes o * 2 as the offsets of its jagged tensor.
    const f = jit((v: Tensor, o: Tensor) => new JaggedTensor(v, o.mul(2)).max());
    const four = () => fromTypedArray(Float32Array.from([1, 2, 3, 4]), [4], { batchDim: 1 });
    f(four(), ints([0, 1, 2]));
    const mod = await importBundle(f.bundle());
    await onWebGPU(gpu, async () => {
      const g = await loadBundle(mod);
      expect(Array.from(await ((await g.callAsync(four(), ints([0, 1, 2]))) as Tensor).data())).toEqual([2, 4]);
      await expect(g.callAsync(four(), ints([0, 2, 1]))).rejects.toThrow(
        /^segment_reduce\(max\): jagged offsets \(3;\) decrease at entry 2 \(4 then 2\)/,
      );
      await expect(g.callAsync(four(), ints([0, 1, 3]).add(ints([0, 0, 0])))).rejects.toThrow(
        /end at 6, but there are 4 packed values/,
      );
    });
  });
});
