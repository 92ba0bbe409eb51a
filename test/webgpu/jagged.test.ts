/** Jagged tensors on WebGPU: built from typed arrays, traced once, run as WGSL segmented kernels. */
import { expect, it } from "vitest";
import { registerBackend } from "../../src/backend.js";
import { fromTypedArray, jagged, jit, JaggedTensor, setBackend, type Tensor } from "../../src/index.js";
import { closeEnough } from "../helpers/random-graph.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";

const probe = await probeWebGPUForFile();

describeWebGPU(probe, "jagged tensors on WebGPU", (gpu) => {
  it("centres each row by its mean and pads it, for two length profiles, with one trace", async () => {
    registerBackend(gpu);
    const f = jit((x: JaggedTensor): [Tensor, Tensor] => {
      const { padded, mask } = x.sub(x.mean()).toPadded({ maxLength: 5 });
      return [padded, mask];
    });
    try {
      for (const lengths of [
        [2, 0, 3],
        [5, 1, 1, 4],
      ]) {
        const offsets = Int32Array.from([
          0,
          ...lengths.map((_, i) => lengths.slice(0, i + 1).reduce((a, b) => a + b, 0)),
        ]);
        const T = offsets[offsets.length - 1]!;
        const values = Float32Array.from({ length: T * 2 }, (_, i) => (i * 7) % 5);
        // Expected on the host: per-row means, centred values, zero padding.
        const want: number[] = [];
        const wantMask: number[] = [];
        lengths.forEach((n, b) => {
          const lo = offsets[b]!;
          const m = [0, 1].map((k) =>
            n ? Array.from({ length: n }, (_, t) => values[(lo + t) * 2 + k]!).reduce((a, c) => a + c, 0) / n : 0,
          );
          for (let p = 0; p < 5; p++) {
            wantMask.push(p < n ? 1 : 0);
            for (let k = 0; k < 2; k++) want.push(p < n ? values[(lo + p) * 2 + k]! - m[k]! : 0);
          }
        });
        setBackend("webgpu");
        const x = new JaggedTensor(
          fromTypedArray(values, [T, 2], { batchDim: 1 }),
          fromTypedArray(offsets, [lengths.length + 1], { batchDim: 1 }),
        );
        const before = gpu.stats.dispatches;
        const [padded, mask] = await f.callAsync(x);
        expect(gpu.stats.dispatches).toBeGreaterThan(before);
        expect(closeEnough(await padded.data(), want, 1e-6)).toBeUndefined();
        expect(Array.from(await mask.data())).toEqual(wantMask);
      }
      expect(f.stats.traces).toBe(1);
    } finally {
      setBackend("js");
    }
  });

  it("eagerly: jagged(list) keeps its offsets on the host, so toPadded() finds the longest row and toList() slices rows", async () => {
    registerBackend(gpu);
    const rows = [[1, 2, 3, 4, 5, 6], [], [7, 8, 9]];
    try {
      setBackend("webgpu");
      const j = jagged(rows.map((r) => fromTypedArray(Float32Array.from(r), [r.length / 3, 3], { batchDim: 1 })));
      const { padded, mask } = j.toPadded({ paddingValue: -1 });
      expect(padded.toString()).toBe("(3,2; 3)");
      expect(Array.from(await padded.data())).toEqual([1, 2, 3, 4, 5, 6, -1, -1, -1, -1, -1, -1, 7, 8, 9, -1, -1, -1]);
      expect(Array.from(await mask.data())).toEqual([1, 1, 0, 0, 1, 0]);
      const list = j.toList();
      expect(list.map((t) => t.toString())).toEqual(["(2; 3)", "(0; 3)", "(1; 3)"]);
      for (const [i, t] of list.entries()) expect(Array.from(await t.data())).toEqual(rows[i]);
      // Offsets that live only on the device cannot give the longest row synchronously.
      const deviceOffsets = new JaggedTensor(
        j.values,
        fromTypedArray(Int32Array.from([0, 2, 2, 3]), [4], { batchDim: 1 }).add(0),
      );
      expect(() => deviceOffsets.toPadded()).toThrow(/toPadded: the longest row .* give maxLength/);
    } finally {
      setBackend("js");
    }
  });

  it("pads to each call's longest row (read back by callAsync) with a fused epilogue, as on JS", async () => {
    registerBackend(gpu);
    const fn = (x: JaggedTensor): [Tensor, Tensor] => {
      const { padded, mask } = x.toPadded({ paddingSide: "left", paddingValue: -1 });
      return [padded.mul(2).add(mask.cast("float32")), mask];
    };
    const fg = jit(fn);
    const fj = jit(fn);
    try {
      for (const lengths of [[2, 0, 3], [7, 1, 1, 4], [1]]) {
        const offsets = Int32Array.from([
          0,
          ...lengths.map((_, i) => lengths.slice(0, i + 1).reduce((a, b) => a + b, 0)),
        ]);
        const T = offsets[offsets.length - 1]!;
        const values = Float32Array.from({ length: T * 3 }, (_, i) => ((i * 5) % 7) - 3);
        const make = () =>
          new JaggedTensor(
            fromTypedArray(values, [T, 3], { batchDim: 1 }),
            fromTypedArray(offsets, [lengths.length + 1], { batchDim: 1 }),
          );
        const [wantPadded, wantMask] = fj(make());
        setBackend("webgpu");
        const x = make();
        const before = gpu.stats.dispatches;
        const [padded, mask] = await fg.callAsync(x);
        expect(gpu.stats.dispatches - before).toBe(2);
        expect(padded.toString()).toBe(`(${lengths.length},${Math.max(...lengths)}; 3)`);
        expect(closeEnough(await padded.data(), wantPadded.dataSync(), 1e-6)).toBeUndefined();
        expect(Array.from(await mask.data())).toEqual(Array.from(wantMask.dataSync()));
        setBackend("js");
      }
      expect(fg.stats.traces).toBe(1);
    } finally {
      setBackend("js");
    }
  });
});
