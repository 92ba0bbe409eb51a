/**
 * Long reductions on WebGPU: base reductions over 70k and 1M elements, batch
 * reductions over 5M, a 100k-long jagged row (reduce, pad and expand) and a matmul
 * with K = 70k. Mesa's llvmpipe leaves every loop of an invocation after 65,535
 * iterations in total, so one invocation walking such a loop answers wrong there;
 * the launch is cut into chunks instead, on every adapter. Expected values are
 * computed here by plain loops or written by hand; data are small integers, so
 * float32 sums are exact whatever order the chunks combine in.
 */
import { expect, it } from "vitest";
import { combineToWGSL, kernelToWGSL, WGSL_LOOP_BUDGET, wgslLaunchPlan, wgslLoopTrips } from "../../codegen/wgsl.js";
import { rowCombineToWGSL } from "../../codegen/wgsl-combine.js";
import { ix, type Kernel } from "../../ir/kernel.js";
import { fromTypedArray, jit, JaggedTensor, setBackend, type Tensor } from "../../src/index.js";
import { rng } from "../helpers/random-graph.js";
import { closeTo, describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { onWebGPU } from "../helpers/on-webgpu.js";

const probe = await probeWebGPUForFile();

const sumOf = (xs: ArrayLike<number>): number => {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i]!;
  return s;
};

/** A base reduction kernel over one base axis of `n` (input `(; n)`, one output per op). */
function baseKernel(n: number, ops: readonly ("sum" | "argmax")[], pow = false): Kernel {
  return {
    batchRank: 0,
    baseShape: [n],
    reduce: { batchAxes: [], baseAxes: [0] },
    unroll: false,
    inputs: [{ dtype: "int32", batchRank: 0, baseShape: [n] }],
    exprs: [
      { k: "load", input: 0, index: [ix.v(0)], dtype: "int32" },
      ...(pow ? [{ k: "binary", op: "pow", a: 0, b: 0, dtype: "int32" } as const] : []),
    ],
    outputs: ops.map((op) => ({ dtype: "int32", value: pow ? 1 : 0, reduce: op })),
  };
}

it("no invocation loops more than WGSL_LOOP_BUDGET times, whatever the sizes", () => {
  const big = 2 ** 28;
  // Base reductions: small ones loop in one invocation, long ones become chunked trees.
  for (const n of [1, 2048, 2049, 70_000, 1_000_000]) {
    expect(wgslLoopTrips(baseKernel(n, ["sum"]), [])).toBeLessThanOrEqual(WGSL_LOOP_BUDGET);
    expect(wgslLoopTrips(baseKernel(n, ["sum"], true), [])).toBeLessThanOrEqual(WGSL_LOOP_BUDGET);
  }
  expect(kernelToWGSL(baseKernel(100, ["sum"]))).not.toContain("workgroupBarrier");
  expect(kernelToWGSL(baseKernel(70_000, ["sum"]))).toContain("workgroupBarrier");
  // Batch reductions over 2^28 elements.
  const batch: Kernel = {
    ...baseKernel(3, ["sum", "argmax"]),
    batchRank: 1,
    reduce: { batchAxes: [0], baseAxes: [] },
    inputs: [{ dtype: "int32", batchRank: 1, baseShape: [3] }],
  };
  expect(wgslLoopTrips(batch, [big])).toBeLessThanOrEqual(WGSL_LOOP_BUDGET);
  expect(wgslLaunchPlan(batch, [big]).partial).toBe(true);
  // Segmented reduce, map and pad over rows as long as the whole packed input.
  for (const mode of ["reduce", "map", "pad"] as const) {
    const seg: Kernel = {
      segment: { offsets: 1, mode, ...(mode === "pad" ? { maxN: -1 } : {}) },
      batchRank: 1,
      baseShape: [],
      reduce: mode === "reduce" ? { batchAxes: [], baseAxes: [] } : null,
      unroll: false,
      inputs: [
        { dtype: "float32", batchRank: 1, baseShape: [], packed: true },
        { dtype: "int32", batchRank: 1, baseShape: [] },
      ],
      exprs: [{ k: "load", input: 0, index: [], dtype: "float32" }],
      outputs: [{ dtype: "float32", value: 0, reduce: mode === "reduce" ? "sum" : null }],
    };
    expect(wgslLoopTrips(seg, [11, big], big)).toBeLessThanOrEqual(WGSL_LOOP_BUDGET);
  }
  // The combine kernels of a reduction loop a bounded number of times too (a fixed chunk per workgroup).
  expect(combineToWGSL(batch, false)).toMatch(
    /let (v\d+): u32 = P\.v\[0\]\.y;[\s\S]*let (v\d+): u32 = \(v\d+ \+ 16384u\);\n\s*let v\d+: u32 = min\(\1, \2\);/,
  );
});

/** Raw device helpers: buffers, one dispatch of a WGSL source (uniform first), read-back. */
function raw(device: GPUDevice) {
  const buffer = (data: ArrayBufferView<ArrayBuffer> | number): GPUBuffer => {
    const size = typeof data === "number" ? data : data.byteLength;
    const b = device.createBuffer({ size, usage: 0x80 | 0x4 | 0x8 | 0x40 });
    if (typeof data !== "number") device.queue.writeBuffer(b, 0, data);
    return b;
  };
  const run = (code: string, params: number[], bufs: GPUBuffer[], groups: number): void => {
    const module = device.createShaderModule({ code });
    const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
    const entries = [buffer(Uint32Array.from(params)), ...bufs].map((b, i) => ({
      binding: i,
      resource: { buffer: b },
    }));
    const enc = device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries }));
    pass.dispatchWorkgroups(groups);
    pass.end();
    device.queue.submit([enc.finish()]);
  };
  const read = async (b: GPUBuffer): Promise<ArrayBuffer> => {
    const st = device.createBuffer({ size: b.size, usage: 0x1 | 0x8 });
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(b, 0, st, 0, b.size);
    device.queue.submit([enc.finish()]);
    await st.mapAsync(1);
    const copy = st.getMappedRange().slice(0);
    st.destroy();
    return copy;
  };
  return { buffer, run, read };
}

describeWebGPU(probe, "long reductions on WebGPU", (gpu) => {
  const on = <T>(f: () => Promise<T>): Promise<T> => onWebGPU(gpu, f);

  it("base sum, mean and int32 sum over 70,000 and 1,000,000 elements", async () => {
    await on(async () => {
      expect(Array.from(await fromTypedArray(new Float32Array(70_000).fill(1), [70_000]).sum().data())).toEqual([
        70_000,
      ]);
      const n = 1_000_000;
      const x = Float32Array.from({ length: n }, (_, i) => i % 7);
      // 0 + 1 + ... + 6 per 7 elements: 142,857 full cycles (21 each) and a tail 0..0 (1,000,000 = 7 · 142,857 + 1).
      expect(Array.from(await fromTypedArray(x, [n]).sum().data())).toEqual([142_857 * 21]);
      const m = await fromTypedArray(
        Float32Array.from({ length: n }, (_, i) => i % 4),
        [n],
      )
        .mean()
        .data();
      expect(Array.from(m)).toEqual([1.5]);
      // int32 sums wrap: the same modulo 2^32 in any order.
      const xi = Int32Array.from({ length: n }, (_, i) => (i % 1000) * 100_000);
      let want = 0;
      for (const v of xi) want = (want + v) | 0;
      expect(Array.from(await fromTypedArray(xi, [n]).sum().data())).toEqual([want]);
    });
  });

  it("base max/min/argmax/argmin over 100,000: first of tied extremes, first NaN wins", async () => {
    await on(async () => {
      const n = 100_000;
      const x = Float32Array.from({ length: n }, (_, i) => (i * 7919) % 13);
      // Maxima tie at 30,000 and 95,000 (different chunks); the one minimum at 99,999.
      x[30_000] = 50;
      x[95_000] = 50;
      x[99_999] = -5;
      const t = fromTypedArray(x, [n]);
      const [mx, mn, amx, amn] = await Promise.all([t.max(), t.min(), t.argmax(0), t.argmin(0)].map((r) => r.data()));
      expect([mx![0], mn![0], amx![0], amn![0]]).toEqual([50, -5, 30_000, 99_999]);
      // NaN counts as the largest for argmax and the smallest for argmin: the first one.
      x[99_000] = NaN;
      x[60_000] = NaN;
      const u = fromTypedArray(x, [n]);
      const [mx2, amx2, amn2] = await Promise.all([u.max(), u.argmax(0), u.argmin(0)].map((r) => r.data()));
      expect([mx2![0], amx2![0], amn2![0]]).toEqual([NaN, 60_000, 60_000]);
    });
  });

  it("batch sum, mean, max and argmax over 5,000,000 in one jit call", async () => {
    await on(async () => {
      const n = 5_000_000;
      const x = Float32Array.from({ length: n }, (_, i) => i % 5);
      x[3_000_001] = 9;
      x[4_999_999] = 9;
      const f = jit((t: Tensor): Tensor[] => [t.batchSum(), t.batchMean(), t.batchMax(), t.batchArgmax(0)]);
      const outs = await f.callAsync(fromTypedArray(x, [n], { batchDim: 1 }));
      const got = await Promise.all(outs.map((o) => o.data()));
      // Sum: 1,000,000 cycles of 0+1+2+3+4 = 10 each, with 1 → 9 (at 3,000,001) and 4 → 9 (at 4,999,999).
      const sum = 10_000_000 + 8 + 5;
      expect(got.map((g) => g[0])).toEqual([sum, Math.fround(sum / n), 9, 3_000_001]);
    });
  });

  it("batch reductions with kept axes match the JS backend on random data", async () => {
    const n = 200_003;
    const r = rng(12);
    const x = Float32Array.from({ length: n * 3 }, () => r() * 2 - 1);
    const f = jit((t: Tensor): Tensor[] => [
      t.batchSum(),
      t.batchMin(),
      t.batchArgmax(0),
      t.batchArgmin(0),
      t.batchMean(),
    ]);
    setBackend("js");
    const want = await Promise.all(f(fromTypedArray(x, [n, 3], { batchDim: 1 })).map((o) => o.data()));
    const got = await on(async () =>
      Promise.all((await f.callAsync(fromTypedArray(x, [n, 3], { batchDim: 1 }))).map((o) => o.data())),
    );
    got.forEach((g, i) =>
      expect(closeTo(g, want[i]!, 0, i === 0 ? 1e-2 : i === 4 ? 1e-7 : 0), `output ${i}`).toBeNull(),
    );
  });

  it("a 100,000-long jagged row: sum, mean, max, argmax, count, pad and expand", async () => {
    await on(async () => {
      const lengths = [3, 100_000, 0, 5];
      const offsets = Int32Array.from([0, 3, 100_003, 100_003, 100_008]);
      const T = 100_008;
      const v = Float32Array.from({ length: T }, (_, i) => ((i * 31) % 11) - 5);
      v[3 + 70_001] = 40; // row 1's maximum, tied later
      v[3 + 90_000] = 40;
      const rows = lengths.map((len, b) => Array.from(v.subarray(offsets[b]!, offsets[b]! + len)));
      const x = new JaggedTensor(
        fromTypedArray(v, [T], { batchDim: 1 }),
        fromTypedArray(offsets, [5], { batchDim: 1 }),
      );
      const [s, mean, count] = await Promise.all([x.sum(), x.mean(), x.count()].map((t) => t.data()));
      expect(Array.from(s!)).toEqual(rows.map(sumOf));
      expect(
        closeTo(
          mean!,
          rows.map((row) => sumOf(row) / row.length),
          1e-6,
        ),
      ).toBeNull();
      expect(Array.from(count!)).toEqual(lengths);
      // max/argmax of the non-empty rows.
      const y = new JaggedTensor(
        fromTypedArray(v.subarray(0, 100_003), [100_003], { batchDim: 1 }),
        fromTypedArray(offsets.subarray(0, 3), [3], { batchDim: 1 }),
      );
      const [mx, amx] = await Promise.all([y.max(), y.argmax()].map((t) => t.data()));
      expect(Array.from(mx!)).toEqual([Math.max(...rows[0]!), 40]);
      expect(Array.from(amx!)).toEqual([rows[0]!.indexOf(Math.max(...rows[0]!)), 70_001]);
      // Padding to the long row: every row walks 100,000 positions.
      const { padded } = x.toPadded({ maxLength: 100_000 });
      const p = await padded.data();
      const wantPadded = new Float32Array(4 * 100_000);
      rows.forEach((row, b) => wantPadded.set(row, b * 100_000));
      expect(closeTo(p, wantPadded, 0, 0)).toBeNull();
      // A per-row value broadcast over the rows (segment expand walks each row).
      const e = await x
        .add(fromTypedArray(Float32Array.from([100, 200, 300, 400]), [4], { batchDim: 1 }))
        .values.data();
      const wantE = Float32Array.from(v, (val, i) => val + (i < 3 ? 100 : i < 100_003 ? 200 : 400));
      expect(closeTo(e, wantE, 0, 0)).toBeNull();
    });
  });

  it("rows around the chunk length (2048), adjacent long rows, ties and NaN: the same as the JS backend", async () => {
    // A run of 30 empty rows: a map walking the rows steps past them by binary search.
    const lengths = [2048, 2049, 1, 0, 5000, 7000, 3, 4097, 1, ...new Array<number>(30).fill(0), 2047, 1, 1, 1];
    const offsets = Int32Array.from(lengths.reduce((o, n) => [...o, o[o.length - 1]! + n], [0]));
    const T = offsets[offsets.length - 1]!;
    const r = rng(5);
    // Few distinct values: many ties across chunks; NaN in two long rows (one at its very end).
    const v = Float32Array.from({ length: T * 2 }, () => Math.floor(r() * 7) - 3);
    v[2 * (offsets[4]! + 3000) + 1] = NaN;
    v[2 * (offsets[8]! - 1)] = NaN;
    const make = (): JaggedTensor =>
      new JaggedTensor(
        fromTypedArray(v, [T, 2], { batchDim: 1 }),
        fromTypedArray(offsets, [lengths.length + 1], { batchDim: 1 }),
      );
    const ops = (x: JaggedTensor): Tensor[] => [
      x.sum(),
      x.mean(),
      x.count(),
      x.add(
        fromTypedArray(
          Float32Array.from({ length: lengths.length * 2 }, (_, i) => i),
          [lengths.length, 2],
          { batchDim: 1 },
        ),
      ).values,
    ];
    const nonEmpty = (x: JaggedTensor): Tensor[] => [x.max(), x.min(), x.argmax()];
    setBackend("js");
    const want = await Promise.all(ops(make()).map((t) => t.data()));
    // Rows without entries have no max/min/argmax to compare: only the others (2 base points each).
    const keep = (d: ArrayLike<number>): number[] => Array.from(d).filter((_, i) => lengths[i >> 1]! > 0);
    const wantNE = (await Promise.all(nonEmpty(make()).map((t) => t.data()))).map(keep);
    const [got, gotNE] = await on(async () => [
      await Promise.all(ops(make()).map((t) => t.data())),
      (await Promise.all(nonEmpty(make()).map((t) => t.data()))).map(keep),
    ]);
    got.forEach((g, i) => expect(closeTo(g, want[i]!, i === 1 ? 1e-6 : 0, 0), `output ${i}`).toBeNull());
    gotNE.forEach((g, i) => expect(closeTo(g, wantNE[i]!, 0, 0), `output ${i}`).toBeNull());
    // By hand: row 4 (5000 long) has its NaN at 3000 (argmax there), row 7 ends with a NaN in base point 0.
    expect([gotNE[2]![2 * 3 + 1], gotNE[2]![2 * 6]]).toEqual([3000, 4096]);
  });

  it("reductions of a padded tensor read back along 100,000-long rows (shorter and longer than the padding)", async () => {
    await on(async () => {
      const lengths = [3, 100_000, 1, 5];
      const offsets = Int32Array.from([0, 3, 100_003, 100_004, 100_009]);
      const x = new JaggedTensor(
        fromTypedArray(new Float32Array(100_009), [100_009], { batchDim: 1 }),
        fromTypedArray(offsets, [5], { batchDim: 1 }),
      );
      for (const M of [100_000, 10]) {
        const p = Float32Array.from({ length: 4 * M }, (_, i) => ((i * 13) % 9) - 4);
        if (M === 10) {
          // Row 1 is longer than the padding: its zeros past M are its maximum, first at position 10.
          for (let t = 0; t < M; t++) p[M + t] = -1 - t;
        } else {
          p[M + M - 1] = 30; // row 1's last padded entry
        }
        const row = (b: number): number[] => Array.from({ length: lengths[b]! }, (_, t) => (t < M ? p[b * M + t]! : 0));
        const u = x.unpad(fromTypedArray(p, [4, M], { batchDim: 2 }));
        const [s, mx, amx] = await Promise.all([u.sum(), u.max(), u.argmax()].map((t) => t.data()));
        expect(Array.from(s!), `M = ${M}`).toEqual([0, 1, 2, 3].map((b) => sumOf(row(b))));
        expect(Array.from(mx!), `M = ${M}`).toEqual([0, 1, 2, 3].map((b) => Math.max(...row(b))));
        expect(Array.from(amx!), `M = ${M}`).toEqual([0, 1, 2, 3].map((b) => row(b).indexOf(Math.max(...row(b)))));
      }
    });
  });

  it("matmul with K = 70,000", async () => {
    await on(async () => {
      const K = 70_000;
      const a = Float32Array.from({ length: 2 * K }, (_, i) => i % 3);
      const b = Float32Array.from({ length: K * 3 }, (_, i) => (i % 4) - 1);
      const want: number[] = [];
      for (let i = 0; i < 2; i++) {
        for (let j = 0; j < 3; j++) {
          let s = 0;
          for (let k = 0; k < K; k++) s += a[i * K + k]! * b[k * 3 + j]!;
          want.push(s);
        }
      }
      const got = await fromTypedArray(a, [2, K])
        .matmul(fromTypedArray(b, [K, 3]))
        .data();
      expect(Array.from(got)).toEqual(want);
    });
  });

  it("combine passes fold partials in several levels (partials to partials, then to outputs)", async () => {
    // Hand-made partials of a sum and an argmax for 2 output elements × 20,000 chunks:
    // more than one combine workgroup (16,384 partials) per element, so two levels.
    const kernel: Kernel = {
      ...baseKernel(5, ["sum", "argmax"]),
      inputs: [{ dtype: "float32", batchRank: 0, baseShape: [5] }],
      exprs: [{ k: "load", input: 0, index: [ix.v(0)], dtype: "float32" }],
      outputs: [
        { dtype: "float32", value: 0, reduce: "sum" },
        { dtype: "int32", value: 0, reduce: "argmax" },
      ],
    };
    const G = 20_000;
    const sums = Float32Array.from({ length: 2 * G }, (_, i) => i % 3);
    const pairs = new Int32Array(4 * G);
    const f = new Float32Array(1);
    const bits = new Int32Array(f.buffer);
    for (let k = 0; k < 2 * G; k++) {
      f[0] = k % 7; // best value of the chunk
      pairs[2 * k] = bits[0]!;
      pairs[2 * k + 1] = (k % G) * 100 + 1; // its position
    }
    // Element 0: best 9 at chunks 17,000 and 18,000 (tie: the earlier position); element 1: a NaN at chunk 19,999 wins.
    for (const [k, v] of [
      [17_000, 9],
      [18_000, 9],
      [G + 19_999, NaN],
    ] as const) {
      f[0] = v;
      pairs[2 * k] = bits[0]!;
    }
    const { buffer, run, read } = raw(gpu.device);
    const [s0, p0] = [buffer(sums), buffer(pairs)];
    const [s1, p1] = [buffer(2 * 2 * 4), buffer(2 * 2 * 2 * 4)];
    const [out0, out1] = [buffer(2 * 4), buffer(2 * 4)];
    run(combineToWGSL(kernel, false), [2, G, 2, 0], [s0, p0, s1, p1], 4);
    run(combineToWGSL(kernel, true), [2, 2, 1, 0], [s1, p1, out0, out1], 2);
    const wantSums = [0, 1].map((e) => sumOf(sums.subarray(e * G, (e + 1) * G)));
    expect(Array.from(new Float32Array(await read(out0)))).toEqual(wantSums);
    expect(Array.from(new Int32Array(await read(out1)))).toEqual([17_000 * 100 + 1, 19_999 * 100 + 1]);
    for (const b of [s0, p0, s1, p1, out0, out1]) b.destroy();
  });

  it("a row of 40 million positions: the row-combine pass in ten parts, then over the parts (hand-made window partials)", async () => {
    const L = 40_000_000;
    const offsets = Int32Array.from([0, 5, 5 + L]); // row 0 is short (the rows pass owns it), row 1 is long
    const W = Math.ceil((5 + L) / 2048);
    const nk = Math.ceil(L / 2048); // row 1's chunks: 19,532, in ten parts of 2,048
    const seg = (reduce: "argmax" | "mean"): Kernel => ({
      segment: { offsets: 1, mode: "reduce" },
      batchRank: 1,
      baseShape: [],
      reduce: { batchAxes: [], baseAxes: [] },
      unroll: false,
      inputs: [
        { dtype: "float32", batchRank: 1, baseShape: [], packed: true },
        { dtype: "int32", batchRank: 1, baseShape: [] },
      ],
      exprs: [{ k: "load", input: 0, index: [], dtype: "float32" }],
      outputs: [{ dtype: reduce === "argmax" ? "int32" : "float32", value: 0, reduce }],
    });
    expect(wgslLaunchPlan(seg("mean"), [3], 5 + L)).toMatchObject({ windows: W, rowChunks: 10 });
    // Row 1's chunk k sits in slot 1 of window 0 (k = 0) or slot 0 of window k.
    const slot = (k: number): number => (k === 0 ? 1 : 2 * k);
    const pairs = new Int32Array(4 * W);
    const sums = new Float32Array(2 * W);
    const f = new Float32Array(1);
    const bits = new Int32Array(f.buffer);
    for (let k = 0; k < nk; k++) {
      f[0] = k === 16_383 || k === 17_000 ? 9 : k % 5; // a tie across two parts: the earlier wins
      pairs[2 * slot(k)] = bits[0]!;
      pairs[2 * slot(k) + 1] = k * 2048 + (k % 3);
      sums[slot(k)] = 2;
    }
    const { buffer, run, read } = raw(gpu.device);
    const offs = buffer(offsets);
    for (const [reduce, partials, want] of [
      ["argmax", pairs, [0, 16_383 * 2048 + (16_383 % 3)]],
      ["mean", sums, [0, Math.fround((2 * nk) / L)]],
    ] as const) {
      const k = seg(reduce);
      const [p, mid, out] = [buffer(partials), buffer(2 * 10 * 2 * 4), buffer(2 * 4)];
      run(rowCombineToWGSL(k), [2, 10, 0, 0], [p, offs, mid], 1);
      run(rowCombineToWGSL(k), [2, 10, 1, 0], [mid, offs, out], 1);
      const got = reduce === "argmax" ? new Int32Array(await read(out)) : new Float32Array(await read(out));
      expect(closeTo(got, want, 1e-6), reduce).toBeNull();
      for (const b of [p, mid, out]) b.destroy();
    }
    offs.destroy();
  });
});
