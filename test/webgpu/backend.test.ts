/**
 * WebGPU backend on a real adapter: hand-made kernels checked against plain JS
 * loops written here, plus caching, limits, pooling, concurrency and device loss.
 */
import { afterAll, expect, it } from "vitest";
import { BackendError, DTypeError } from "../../ir/errors.js";
import { ix, type KExpr, type Kernel } from "../../ir/kernel.js";
import { initWebGPU } from "../../runtime/webgpu/backend.js";
import { PipelineCache } from "../../runtime/webgpu/pipelines.js";
import { rng as unitRng } from "../helpers/random-graph.js";
import { closeTo, describeWebGPU, probeWebGPU, runKernel, runOnPair, runOnScalars } from "../helpers/webgpu.js";
import { scalarBatchKernel } from "../helpers/kernels.js";

const probe = await probeWebGPU();
afterAll(() => probe.backend?.destroy());

/** Deterministic uniform numbers in [lo, hi). */
function rng(seed: number): (lo: number, hi: number) => number {
  const next = unitRng(seed);
  return (lo, hi) => lo + next() * (hi - lo);
}

const f32 = (n: number, f: (i: number) => number): Float32Array => Float32Array.from({ length: n }, (_, i) => f(i));
const load = (input: number, index: number[], dtype: KExpr["dtype"] = "float32"): KExpr => ({
  k: "load",
  input,
  index: index.map((a) => ix.v(a)),
  dtype,
});
const bin = (op: Extract<KExpr, { k: "binary" }>["op"], a: number, b: number, dtype: KExpr["dtype"]): KExpr => ({
  k: "binary",
  op,
  a,
  b,
  dtype,
});
const un = (op: Extract<KExpr, { k: "unary" }>["op"], x: number, dtype: KExpr["dtype"]): KExpr => ({
  k: "unary",
  op,
  x,
  dtype,
});

function expectClose(actual: ArrayLike<number>, expected: ArrayLike<number>, rtol?: number, atol?: number): void {
  expect(closeTo(actual, expected, rtol, atol)).toBeNull();
}

/** Python/NumPy `%` on doubles. */
const floorMod = (a: number, b: number): number => {
  const r = a % b;
  return r !== 0 && r < 0 !== b < 0 ? r + b : r;
};

describeWebGPU(probe, "WebGPU backend", (gpu) => {
  it("reports the adapter and its limits", () => {
    console.info(`[batchwise] WebGPU adapter: ${JSON.stringify(gpu.adapter)} limits: ${JSON.stringify(gpu.limits)}`);
    expect(gpu.maxKernelBuffers).toBe(gpu.device.limits.maxStorageBuffersPerShaderStage);
    expect(gpu.maxKernelBuffers).toBeGreaterThanOrEqual(4);
  });

  it("shares one backend between initWebGPU calls", async () => {
    expect(await initWebGPU()).toBe(gpu);
  });

  // (B0,B1; 2,3) ⊕ (B1; 3) ⊕ (1,B1;) with the last one broadcast over B0 by a stride of 0.
  const broadcastKernel: Kernel = {
    batchRank: 2,
    baseShape: [2, 3],
    reduce: null,
    unroll: false,
    inputs: [
      { dtype: "float32", batchRank: 2, baseShape: [2, 3] },
      { dtype: "float32", batchRank: 1, baseShape: [3] },
      { dtype: "float32", batchRank: 2, baseShape: [] },
    ],
    exprs: [
      load(0, [0, 1]), // 0: x
      load(1, [1]), // 1: y
      load(2, []), // 2: s
      bin("mul", 0, 1, "float32"), // 3: x*y
      bin("add", 3, 2, "float32"), // 4: x*y + s
      bin("maximum", 4, 0, "float32"), // 5
      bin("mod", 0, 1, "float32"), // 6: x mod y
      bin("lt", 0, 1, "bool"), // 7: x < y
      { k: "where", c: 7, a: 6, b: 4, dtype: "float32" }, // 8
    ],
    outputs: [
      { dtype: "float32", value: 5, reduce: null },
      { dtype: "float32", value: 8, reduce: null },
      { dtype: "bool", value: 7, reduce: null },
    ],
  };

  async function checkBroadcast(B0: number, B1: number, seed: number): Promise<void> {
    const r = rng(seed);
    const x = f32(B0 * B1 * 6, () => Math.round(r(-8, 8) * 4) / 4 + 0.1);
    x[1] = NaN;
    const y = f32(B1 * 3, () => (r(0, 1) < 0.5 ? -1 : 1) * r(0.5, 3));
    const s = f32(B1, () => r(-2, 2));
    const [o0, o1, o2] = await runKernel(
      gpu,
      broadcastKernel,
      [
        { dtype: "float32", data: x },
        { dtype: "float32", data: y },
        { dtype: "float32", data: s },
      ],
      { batchSizes: [B0, B1], inputBatchStrides: [[B1 * 6, 6], [3], [0, 1]] },
      [B0 * B1 * 6, B0 * B1 * 6, B0 * B1 * 6],
    );
    const e0: number[] = [];
    const e1: number[] = [];
    const e2: number[] = [];
    for (let b0 = 0; b0 < B0; b0++)
      for (let b1 = 0; b1 < B1; b1++)
        for (let i = 0; i < 2; i++)
          for (let j = 0; j < 3; j++) {
            const xv = x[(b0 * B1 + b1) * 6 + i * 3 + j]!;
            const yv = y[b1 * 3 + j]!;
            const sv = s[b1]!;
            const t = Math.fround(Math.fround(xv * yv) + sv);
            e0.push(Number.isNaN(t) || Number.isNaN(xv) ? NaN : Math.max(t, xv));
            e1.push(xv < yv ? floorMod(xv, yv) : t);
            e2.push(xv < yv ? 1 : 0);
          }
    expect(o2).toBeInstanceOf(Uint8Array);
    expectClose(o0!, e0);
    expectClose(o1!, e1, 1e-4, 1e-5);
    expect(Array.from(o2!)).toEqual(e2);
  }

  it("runs an elementwise kernel with broadcast batch strides", async () => {
    await checkBroadcast(3, 5, 1);
  });

  it("serves a second batch size with the same pipeline", async () => {
    await checkBroadcast(3, 5, 2); // compiled (or cached) already
    const before = gpu.stats;
    await checkBroadcast(1, 7, 3);
    await checkBroadcast(4, 1, 4);
    const after = gpu.stats;
    expect(after.pipelines).toBe(before.pipelines);
    expect(after.pipelineCacheHits).toBe(before.pipelineCacheHits + 2);
    expect(after.dispatches).toBe(before.dispatches + 2);
  });

  it("shares one compile between concurrent requests and equal kernels", async () => {
    const k: Kernel = {
      batchRank: 1,
      baseShape: [5],
      reduce: null,
      unroll: true,
      inputs: [{ dtype: "float32", batchRank: 1, baseShape: [5] }],
      exprs: [load(0, [0]), { k: "const", value: 0.25, dtype: "float32" }, bin("sub", 0, 1, "float32")],
      outputs: [{ dtype: "float32", value: 2, reduce: null }],
    };
    const clone = JSON.parse(JSON.stringify(k)) as Kernel;
    const before = gpu.stats;
    const [a, b, c] = await Promise.all([gpu.compile(k), gpu.compile(k), gpu.compile(clone)]);
    expect(gpu.stats.pipelines).toBe(before.pipelines + 1);
    expect(gpu.stats.pipelineCacheHits).toBe(before.pipelineCacheHits + 2);
    expect(a.source).toBe(b.source);
    expect(c.source).toBe(a.source);
  });

  it("reduces base axes: sum, max, mean, argmax with ties", async () => {
    const B = 6;
    const k: Kernel = {
      batchRank: 1,
      baseShape: [4, 5],
      reduce: { batchAxes: [], baseAxes: [1] },
      unroll: false,
      inputs: [{ dtype: "float32", batchRank: 1, baseShape: [4, 5] }],
      exprs: [load(0, [0, 1]), bin("mul", 0, 0, "float32")],
      outputs: [
        { dtype: "float32", value: 1, reduce: "sum" },
        { dtype: "float32", value: 0, reduce: "max" },
        { dtype: "float32", value: 0, reduce: "mean" },
        { dtype: "int32", value: 0, reduce: "argmax" },
        { dtype: "int32", value: 0, reduce: "argmin" },
      ],
    };
    const r = rng(7);
    const x = f32(B * 20, () => Math.floor(r(-3, 3)));
    const outs = await runKernel(
      gpu,
      k,
      [{ dtype: "float32", data: x }],
      { batchSizes: [B], inputBatchStrides: [[20]] },
      [B * 4, B * 4, B * 4, B * 4, B * 4],
    );
    const sum: number[] = [];
    const max: number[] = [];
    const mean: number[] = [];
    const argmax: number[] = [];
    const argmin: number[] = [];
    for (let b = 0; b < B; b++)
      for (let i = 0; i < 4; i++) {
        let s = 0;
        let m = -Infinity;
        let lo = Infinity;
        let am = 0;
        let an = 0;
        let t = 0;
        for (let j = 0; j < 5; j++) {
          const v = x[b * 20 + i * 5 + j]!;
          s += v * v;
          t += v;
          if (v > m) [m, am] = [v, j];
          if (v < lo) [lo, an] = [v, j];
        }
        sum.push(s);
        max.push(m);
        mean.push(t / 5);
        argmax.push(am);
        argmin.push(an);
      }
    expectClose(outs[0]!, sum);
    expectClose(outs[1]!, max);
    expectClose(outs[2]!, mean);
    expect(outs[3]).toBeInstanceOf(Int32Array);
    expect(Array.from(outs[3]!)).toEqual(argmax);
    expect(Array.from(outs[4]!)).toEqual(argmin);
  });

  it("reduces a batch axis: sum, min, argmin (first on ties)", async () => {
    const [B0, B1] = [9, 4];
    const k: Kernel = {
      batchRank: 2,
      baseShape: [3],
      reduce: { batchAxes: [0], baseAxes: [] },
      unroll: false,
      inputs: [{ dtype: "float32", batchRank: 2, baseShape: [3] }],
      exprs: [load(0, [0])],
      outputs: [
        { dtype: "float32", value: 0, reduce: "sum" },
        { dtype: "float32", value: 0, reduce: "min" },
        { dtype: "int32", value: 0, reduce: "argmin" },
      ],
    };
    const r = rng(11);
    const x = f32(B0 * B1 * 3, () => Math.floor(r(0, 4)));
    const outs = await runKernel(
      gpu,
      k,
      [{ dtype: "float32", data: x }],
      { batchSizes: [B0, B1], inputBatchStrides: [[B1 * 3, 3]] },
      [B1 * 3, B1 * 3, B1 * 3],
    );
    const sum: number[] = [];
    const min: number[] = [];
    const argmin: number[] = [];
    for (let b1 = 0; b1 < B1; b1++)
      for (let i = 0; i < 3; i++) {
        let s = 0;
        let m = Infinity;
        let at = 0;
        for (let b0 = 0; b0 < B0; b0++) {
          const v = x[(b0 * B1 + b1) * 3 + i]!;
          s += v;
          if (v < m) [m, at] = [v, b0];
        }
        sum.push(s);
        min.push(m);
        argmin.push(at);
      }
    expectClose(outs[0]!, sum);
    expectClose(outs[1]!, min);
    expect(Array.from(outs[2]!)).toEqual(argmin);
  });

  it("means over a batch axis and a base axis together, with a broadcast input", async () => {
    const [B0, B1] = [3, 10];
    // out[b0, i] = mean over b1, j of x[b0, b1, i, j] * w[b1 (broadcast over b0), j]
    const k: Kernel = {
      batchRank: 2,
      baseShape: [2, 4],
      reduce: { batchAxes: [1], baseAxes: [1] },
      unroll: false,
      inputs: [
        { dtype: "float32", batchRank: 2, baseShape: [2, 4] },
        { dtype: "float32", batchRank: 2, baseShape: [4] },
      ],
      exprs: [load(0, [0, 1]), load(1, [1]), bin("mul", 0, 1, "float32")],
      outputs: [
        { dtype: "float32", value: 2, reduce: "mean" },
        { dtype: "float32", value: 2, reduce: "prod" },
      ],
    };
    const r = rng(5);
    const x = f32(B0 * B1 * 8, () => r(0.8, 1.2));
    const w = f32(B1 * 4, () => r(0.9, 1.1));
    const outs = await runKernel(
      gpu,
      k,
      [
        { dtype: "float32", data: x },
        { dtype: "float32", data: w },
      ],
      {
        batchSizes: [B0, B1],
        inputBatchStrides: [
          [B1 * 8, 8],
          [0, 4],
        ],
      },
      [B0 * 2, B0 * 2],
    );
    const mean: number[] = [];
    const prod: number[] = [];
    for (let b0 = 0; b0 < B0; b0++)
      for (let i = 0; i < 2; i++) {
        let s = 0;
        let p = 1;
        for (let b1 = 0; b1 < B1; b1++)
          for (let j = 0; j < 4; j++) {
            const v = x[(b0 * B1 + b1) * 8 + i * 4 + j]! * w[b1 * 4 + j]!;
            s += v;
            p *= v;
          }
        mean.push(s / (B1 * 4));
        prod.push(p);
      }
    expectClose(outs[0]!, mean);
    expectClose(outs[1]!, prod, 1e-4);
  });

  it("follows int32 semantics: wrapping, truncating division, floor mod, x/0 = 0", async () => {
    const a = Int32Array.from([2147483647, -2147483648, 7, -7, 7, -7, 0, 5, 123456, -3, 46341, -1]);
    const b = Int32Array.from([1, -1, 2, 2, -2, -2, 0, 0, 789, 3, 46341, 31]);
    const k = scalarBatchKernel(
      ["int32", "int32"],
      [
        load(0, [], "int32"),
        load(1, [], "int32"),
        bin("add", 0, 1, "int32"), // 2
        bin("mul", 0, 1, "int32"), // 3
        bin("div", 0, 1, "int32"), // 4
        bin("mod", 0, 1, "int32"), // 5
        un("neg", 0, "int32"), // 6
        un("abs", 0, "int32"), // 7
        un("sign", 0, "int32"), // 8
        bin("maximum", 0, 1, "int32"), // 9
        { k: "cast", x: 0, dtype: "float32" }, // 10
        { k: "cast", x: 0, dtype: "uint32" }, // 11
        bin("ge", 0, 1, "bool"), // 12
      ],
      [
        ...[2, 3, 4, 5, 6, 7, 8, 9].map((value) => ({ dtype: "int32" as const, value, reduce: null })),
        { dtype: "float32", value: 10, reduce: null },
        { dtype: "uint32", value: 11, reduce: null },
        { dtype: "bool", value: 12, reduce: null },
      ],
    );
    const { outs, A, B } = await runOnPair(gpu, k, "int32", a, b);
    const exp = [
      A.map((x, i) => (x + B[i]!) | 0),
      A.map((x, i) => Math.imul(x, B[i]!)),
      A.map((x, i) => (B[i] === 0 ? 0 : (x / B[i]!) | 0)),
      A.map((x, i) => (B[i] === 0 ? 0 : floorMod(x, B[i]!) | 0)),
      A.map((x) => -x | 0),
      A.map((x) => Math.abs(x) | 0),
      A.map((x) => Math.sign(x)),
      A.map((x, i) => Math.max(x, B[i]!)),
      A.map((x) => Math.fround(x)),
      A.map((x) => x >>> 0),
      A.map((x, i) => (x >= B[i]! ? 1 : 0)),
    ];
    exp.forEach((e, j) => expect([j, Array.from(outs[j]!)]).toEqual([j, e]));
    expect(outs[9]).toBeInstanceOf(Uint32Array);
  });

  it("follows uint32 semantics and JS float→int casts (truncate, then wrap)", async () => {
    const a = Uint32Array.from([0, 1, 4294967295, 10, 7, 3000000000]);
    const b = Uint32Array.from([1, 2, 2, 0, 3, 3000000000]);
    const f = Float32Array.from([-1.5, 2.7, 3e9, 5e9, -3e9, NaN, Infinity, -2147483648, 2147483648, -0.9]);
    const ku = scalarBatchKernel(
      ["uint32", "uint32"],
      [
        load(0, [], "uint32"),
        load(1, [], "uint32"),
        bin("sub", 0, 1, "uint32"),
        bin("mul", 0, 1, "uint32"),
        bin("div", 0, 1, "uint32"),
        bin("mod", 0, 1, "uint32"),
        { k: "cast", x: 0, dtype: "int32" },
        { k: "cast", x: 0, dtype: "float32" },
      ],
      [
        ...[2, 3, 4, 5].map((value) => ({ dtype: "uint32" as const, value, reduce: null })),
        { dtype: "int32", value: 6, reduce: null },
        { dtype: "float32", value: 7, reduce: null },
      ],
    );
    const { outs, A, B } = await runOnPair(gpu, ku, "uint32", a, b);
    expect(Array.from(outs[0]!)).toEqual(A.map((x, i) => (x - B[i]!) >>> 0));
    expect(Array.from(outs[1]!)).toEqual(A.map((x, i) => Math.imul(x, B[i]!) >>> 0));
    expect(Array.from(outs[2]!)).toEqual(A.map((x, i) => (B[i] === 0 ? 0 : Math.trunc(x / B[i]!))));
    expect(Array.from(outs[3]!)).toEqual(A.map((x, i) => (B[i] === 0 ? 0 : x % B[i]!)));
    expect(Array.from(outs[4]!)).toEqual(A.map((x) => x | 0));
    expect(Array.from(outs[5]!)).toEqual(A.map((x) => Math.fround(x)));

    const kf = scalarBatchKernel(
      ["float32"],
      [
        load(0, []),
        { k: "cast", x: 0, dtype: "int32" },
        { k: "cast", x: 0, dtype: "uint32" },
        { k: "cast", x: 0, dtype: "bool" },
      ],
      [
        { dtype: "int32", value: 1, reduce: null },
        { dtype: "uint32", value: 2, reduce: null },
        { dtype: "bool", value: 3, reduce: null },
      ],
    );
    const fo = await runOnScalars(gpu, kf, [{ dtype: "float32", data: f }]);
    const F = Array.from(f);
    const toInt = (v: number): number => (Number.isFinite(v) ? Math.trunc(v) : 0);
    expect(Array.from(fo[0]!)).toEqual(F.map((v) => toInt(v) | 0));
    expect(Array.from(fo[1]!)).toEqual(F.map((v) => toInt(v) >>> 0));
    expect(Array.from(fo[2]!)).toEqual(F.map((v) => (v !== 0 ? 1 : 0)));
  });

  it("handles bool: loads, logic, where, all/any and a sum of bools", async () => {
    const [B, N] = [5, 4];
    const r = rng(3);
    const p = Uint8Array.from({ length: B * N }, () => (r(0, 1) < 0.6 ? 1 : 0));
    const q = Uint8Array.from({ length: B * N }, () => (r(0, 1) < 0.5 ? 1 : 0));
    p.fill(1, 0, N); // row 0: all true
    p.fill(0, N, 2 * N); // row 1: none true
    const ke: Kernel = {
      batchRank: 1,
      baseShape: [N],
      reduce: null,
      unroll: false,
      inputs: [
        { dtype: "bool", batchRank: 1, baseShape: [N] },
        { dtype: "bool", batchRank: 1, baseShape: [N] },
      ],
      exprs: [
        load(0, [0], "bool"),
        load(1, [0], "bool"),
        bin("and", 0, 1, "bool"), // 2
        bin("or", 0, 1, "bool"), // 3
        bin("xor", 0, 1, "bool"), // 4
        un("not", 0, "bool"), // 5
        bin("eq", 0, 1, "bool"), // 6
        { k: "const", value: 2.5, dtype: "float32" }, // 7
        { k: "const", value: -1, dtype: "float32" }, // 8
        { k: "where", c: 4, a: 7, b: 8, dtype: "float32" }, // 9
        { k: "cast", x: 0, dtype: "int32" }, // 10
      ],
      outputs: [
        ...[2, 3, 4, 5, 6].map((value) => ({ dtype: "bool" as const, value, reduce: null })),
        { dtype: "float32", value: 9, reduce: null },
        { dtype: "int32", value: 10, reduce: null },
      ],
    };
    const eo = await runKernel(
      gpu,
      ke,
      [
        { dtype: "bool", data: p },
        { dtype: "bool", data: q },
      ],
      { batchSizes: [B], inputBatchStrides: [[N], [N]] },
      ke.outputs.map(() => B * N),
    );
    const P = Array.from(p);
    const Q = Array.from(q);
    expect(Array.from(eo[0]!)).toEqual(P.map((x, i) => x & Q[i]!));
    expect(Array.from(eo[1]!)).toEqual(P.map((x, i) => x | Q[i]!));
    expect(Array.from(eo[2]!)).toEqual(P.map((x, i) => x ^ Q[i]!));
    expect(Array.from(eo[3]!)).toEqual(P.map((x) => 1 - x));
    expect(Array.from(eo[4]!)).toEqual(P.map((x, i) => (x === Q[i] ? 1 : 0)));
    expect(Array.from(eo[5]!)).toEqual(P.map((x, i) => ((x ^ Q[i]!) === 1 ? 2.5 : -1)));
    expect(Array.from(eo[6]!)).toEqual(P);

    const kr: Kernel = {
      batchRank: 1,
      baseShape: [N],
      reduce: { batchAxes: [], baseAxes: [0] },
      unroll: false,
      inputs: [{ dtype: "bool", batchRank: 1, baseShape: [N] }],
      exprs: [load(0, [0], "bool")],
      outputs: [
        { dtype: "bool", value: 0, reduce: "all" },
        { dtype: "bool", value: 0, reduce: "any" },
        { dtype: "int32", value: 0, reduce: "sum" },
        { dtype: "int32", value: 0, reduce: "argmax" },
      ],
    };
    const ro = await runKernel(gpu, kr, [{ dtype: "bool", data: p }], { batchSizes: [B], inputBatchStrides: [[N]] }, [
      B,
      B,
      B,
      B,
    ]);
    const rows = Array.from({ length: B }, (_, b) => P.slice(b * N, b * N + N));
    expect(Array.from(ro[0]!)).toEqual(rows.map((row) => (row.every((v) => v === 1) ? 1 : 0)));
    expect(Array.from(ro[1]!)).toEqual(rows.map((row) => (row.some((v) => v === 1) ? 1 : 0)));
    expect(Array.from(ro[2]!)).toEqual(rows.map((row) => row.reduce((s, v) => s + v, 0)));
    expect(Array.from(ro[3]!)).toEqual(rows.map((row) => Math.max(0, row.indexOf(1))));
  });

  it("follows the float conventions: half-to-even round, NaN sign, pow of negatives, stable tanh/sigmoid", async () => {
    const x = Float32Array.from([0.5, 1.5, 2.5, -0.5, -1.5, -2.7, NaN, Infinity, -Infinity, 0, 100, -100, 3]);
    const ops = ["round", "sign", "floor", "ceil", "trunc", "tanh", "sigmoid", "abs", "neg"] as const;
    const preds = ["isnan", "isinf", "isfinite"] as const;
    const exprs: KExpr[] = [load(0, [])];
    for (const op of ops) exprs.push(un(op, 0, "float32"));
    for (const op of preds) exprs.push(un(op, 0, "bool"));
    const base = exprs.length;
    exprs.push({ k: "const", value: 3, dtype: "float32" }, { k: "const", value: 0.5, dtype: "float32" });
    exprs.push(bin("pow", 0, base, "float32"), bin("pow", 0, base + 1, "float32"));
    const k = scalarBatchKernel(["float32"], exprs, [
      ...ops.map((_, i) => ({ dtype: "float32" as const, value: 1 + i, reduce: null })),
      ...preds.map((_, i) => ({ dtype: "bool" as const, value: 1 + ops.length + i, reduce: null })),
      { dtype: "float32", value: base + 2, reduce: null },
      { dtype: "float32", value: base + 3, reduce: null },
    ]);
    const outs = await runOnScalars(gpu, k, [{ dtype: "float32", data: x }]);
    const X = Array.from(x);
    const roundEven = (v: number): number => {
      const f = Math.floor(v);
      const d = v - f;
      return d < 0.5 ? f : d > 0.5 ? f + 1 : f % 2 === 0 ? f : f + 1;
    };
    const ref: Record<(typeof ops)[number], (v: number) => number> = {
      round: roundEven,
      sign: (v) => Math.sign(v),
      floor: Math.floor,
      ceil: Math.ceil,
      trunc: Math.trunc,
      tanh: Math.tanh,
      sigmoid: (v) => 1 / (1 + Math.exp(-v)),
      abs: Math.abs,
      neg: (v) => -v,
    };
    ops.forEach((op, i) => expect([op, closeTo(outs[i]!, X.map(ref[op]))]).toEqual([op, null]));
    const predRef = [Number.isNaN, (v: number) => v === Infinity || v === -Infinity, Number.isFinite];
    preds.forEach((op, i) =>
      expect([op, Array.from(outs[ops.length + i]!)]).toEqual([op, X.map((v) => (predRef[i]!(v) ? 1 : 0))]),
    );
    const pow3 = outs[ops.length + preds.length]!;
    const powHalf = outs[ops.length + preds.length + 1]!;
    expect(
      closeTo(
        pow3,
        X.map((v) => Math.fround(v ** 3)),
      ),
    ).toBeNull();
    expect(
      closeTo(
        powHalf,
        X.map((v) => v ** 0.5),
      ),
    ).toBeNull();
  });

  it("matches Math on transcendental ops and float binary ops", async () => {
    const r = rng(21);
    const n = 64;
    const x = f32(n, () => r(0.1, 3));
    const y = f32(n, () => r(-2, 2));
    y[0] = NaN;
    const unary = ["sqrt", "rsqrt", "exp", "log", "sin", "cos", "tan"] as const;
    const binary = ["div", "sub", "pow", "minimum", "maximum"] as const;
    const exprs: KExpr[] = [load(0, []), load(1, [])];
    for (const op of unary) exprs.push(un(op, 0, "float32"));
    for (const op of binary) exprs.push(bin(op, 0, 1, "float32"));
    const k = scalarBatchKernel(
      ["float32", "float32"],
      exprs,
      exprs.slice(2).map((_, i) => ({ dtype: "float32" as const, value: 2 + i, reduce: null })),
    );
    const { outs, A: X, B: Y } = await runOnPair(gpu, k, "float32", x, y);
    const uref = [Math.sqrt, (v: number) => 1 / Math.sqrt(v), Math.exp, Math.log, Math.sin, Math.cos, Math.tan];
    const bref = [(a: number, b: number) => a / b, (a: number, b: number) => a - b, Math.pow, Math.min, Math.max];
    unary.forEach((op, i) => expect([op, closeTo(outs[i]!, X.map(uref[i]!), 2e-5, 1e-6)]).toEqual([op, null]));
    binary.forEach((op, i) =>
      expect([
        op,
        closeTo(
          outs[unary.length + i]!,
          X.map((v, j) => bref[i]!(v, Y[j]!)),
          2e-5,
          1e-6,
        ),
      ]).toEqual([op, null]),
    );
  });

  it("splits a dispatch of more than 65,535 workgroups over a second grid dimension", async () => {
    const n = 65535 * 64 + 4099; // 65,600 workgroups of 64
    const k = scalarBatchKernel(
      ["float32"],
      [
        load(0, []),
        { k: "const", value: 2, dtype: "float32" },
        bin("mul", 0, 1, "float32"),
        { k: "const", value: 1, dtype: "float32" },
        bin("add", 2, 3, "float32"),
      ],
      [{ dtype: "float32", value: 4, reduce: null }],
    );
    const x = f32(n, (i) => i);
    const [out] = await runOnScalars(gpu, k, [{ dtype: "float32", data: x }]);
    let bad = -1;
    for (let i = 0; i < n; i++) {
      if (out![i] !== Math.fround(2 * i + 1)) {
        bad = i;
        break;
      }
    }
    expect(bad).toBe(-1);
  });

  it("reads several buffers concurrently", async () => {
    const bufs = Array.from({ length: 8 }, (_, j) => {
      const b = gpu.alloc("int32", 1000 + j);
      gpu.write(
        b,
        Int32Array.from({ length: 1000 + j }, (_, i) => i * (j + 1)),
      );
      return b;
    });
    const got = await Promise.all(bufs.map((b) => gpu.read(b)));
    got.forEach((arr, j) => {
      expect(arr.length).toBe(1000 + j);
      expect(arr[999]).toBe(999 * (j + 1));
    });
    bufs.forEach((b) => gpu.free(b));
  });

  it("rejects tensors over the device's binding limit, naming the limit and the overshoot", () => {
    const limit = gpu.limits.maxStorageBufferBindingSize;
    const n = limit / 4 + 10;
    expect(() => gpu.alloc("float32", n)).toThrow(BackendError);
    expect(() => gpu.alloc("float32", n)).toThrow(
      new RegExp(`maxStorageBufferBindingSize of ${limit} bytes .* by 40 bytes`),
    );
  });

  it("rejects kernels that bind more storage buffers than the device allows", async () => {
    const m = gpu.maxKernelBuffers;
    const k: Kernel = {
      batchRank: 1,
      baseShape: [],
      reduce: null,
      unroll: false,
      inputs: Array.from({ length: m }, () => ({ dtype: "float32" as const, batchRank: 1, baseShape: [] })),
      exprs: [load(0, [])],
      outputs: [{ dtype: "float32", value: 0, reduce: null }],
    };
    await expect(gpu.compile(k)).rejects.toThrow(/maxStorageBuffersPerShaderStage/);
  });

  it("rejects float64 with a typed error", async () => {
    expect(() => gpu.alloc("float64", 4)).toThrow(DTypeError);
    const k = scalarBatchKernel(["float64"], [load(0, [], "float64")], [{ dtype: "float64", value: 0, reduce: null }]);
    await expect(gpu.compile(k)).rejects.toThrow(DTypeError);
    await expect(gpu.compile(k)).rejects.toThrow(/float64/);
  });

  it("surfaces WGSL compile errors as BackendError with the line", async () => {
    const cache = new PipelineCache(gpu.device);
    const src = "@compute @workgroup_size(1)\nfn main() {\n  let x: f32 = undefined_thing;\n}\n";
    const err = await cache.get(src, 0, 0).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect((err as Error).message).toMatch(/line 3:\d+/);
    expect((err as Error).message).toContain("let x: f32 = undefined_thing;");
  });

  it("refuses misuse with BackendError: aliasing, wrong dtype, short input, double free", async () => {
    const k = await gpu.compile({
      batchRank: 1,
      baseShape: [2],
      reduce: null,
      unroll: false,
      inputs: [{ dtype: "float32", batchRank: 1, baseShape: [2] }],
      exprs: [load(0, [0])],
      outputs: [{ dtype: "float32", value: 0, reduce: null }],
    });
    const a = gpu.alloc("float32", 6);
    const i = gpu.alloc("int32", 6);
    const o = gpu.alloc("float32", 6);
    const launch = { batchSizes: [3], inputBatchStrides: [[2]] };
    expect(() => gpu.dispatch(k, [a], [a], launch)).toThrow(/aliasing/);
    expect(() => gpu.dispatch(k, [i], [o], launch)).toThrow(/input 0 is int32/);
    expect(() => gpu.dispatch(k, [a], [o], { batchSizes: [4], inputBatchStrides: [[2]] })).toThrow(BackendError);
    expect(() => gpu.write(a, new Float32Array(5))).toThrow(BackendError);
    for (const b of [a, i, o]) gpu.free(b);
    expect(() => gpu.free(a)).toThrow(/already freed/);
    expect(() => gpu.write(a, new Float32Array(6))).toThrow(/already freed/);
  });

  it("keeps memory bounded over a soak of varying batch sizes", async () => {
    const k: Kernel = {
      batchRank: 1,
      baseShape: [3],
      reduce: { batchAxes: [], baseAxes: [0] },
      unroll: false,
      inputs: [{ dtype: "float32", batchRank: 1, baseShape: [3] }],
      exprs: [load(0, [0])],
      outputs: [{ dtype: "float32", value: 0, reduce: "sum" }],
    };
    const compiled = await gpu.compile(k);
    const start = gpu.stats;
    const r = rng(9);
    let peak = 0;
    for (let it = 0; it < 400; it++) {
      const B = 1 + Math.floor(r(0, 2000));
      const x = gpu.alloc("float32", B * 3);
      const y = gpu.alloc("float32", B);
      gpu.write(
        x,
        f32(B * 3, (i) => i % 3),
      );
      gpu.dispatch(compiled, [x], [y], { batchSizes: [B], inputBatchStrides: [[3]] });
      if (it % 100 === 99) {
        const got = await gpu.read(y);
        expect(got[B - 1]).toBe(3);
      }
      gpu.free(x);
      gpu.free(y);
      peak = Math.max(peak, gpu.stats.bytesAllocated);
    }
    const end = gpu.stats;
    expect(end.liveBuffers).toBe(start.liveBuffers);
    expect(end.pipelines).toBe(start.pipelines);
    expect(end.dispatches).toBe(start.dispatches + 400);
    // Sizes reach 24 KB; the pool settles on a handful of size classes.
    expect(peak).toBeLessThan(start.bytesAllocated + 512 * 1024);
    expect(end.pooledBuffers).toBeLessThan(start.pooledBuffers + 64);
  });
});

describeWebGPU(probe, "WebGPU device loss and grid splitting (own devices)", () => {
  it("splits a grid unevenly when few workgroups per dimension are allowed", async () => {
    const small = await initWebGPU({ fresh: true, maxWorkgroupsPerDimension: 7 });
    try {
      const n = 64 * 7 * 3 + 5; // 22 workgroups → a 6 × 4 grid with 2 spare
      const k: Kernel = {
        batchRank: 2,
        baseShape: [],
        reduce: null,
        unroll: false,
        inputs: [{ dtype: "int32", batchRank: 1, baseShape: [] }],
        exprs: [load(0, [], "int32"), { k: "const", value: 3, dtype: "int32" }, bin("mul", 0, 1, "int32")],
        outputs: [{ dtype: "int32", value: 2, reduce: null }],
      };
      const x = Int32Array.from({ length: n }, (_, i) => i);
      const [out] = await runKernel(
        small,
        k,
        [{ dtype: "int32", data: x }],
        { batchSizes: [1, n], inputBatchStrides: [[1]] },
        [n],
      );
      expect(Array.from(out!)).toEqual(Array.from(x, (v) => 3 * v));
    } finally {
      small.destroy();
    }
  });

  it("fails the call in flight on device loss, then works on a new device", async () => {
    const be = await initWebGPU({ fresh: true });
    try {
      const k = scalarBatchKernel(
        ["float32"],
        [load(0, []), un("exp", 0, "float32")],
        [{ dtype: "float32", value: 1, reduce: null }],
      );
      const compiled = await be.compile(k);
      const x = be.alloc("float32", 4096);
      be.write(
        x,
        f32(4096, (i) => i / 4096),
      );
      const y = be.alloc("float32", 4096);
      be.dispatch(compiled, [x], [y], { batchSizes: [4096], inputBatchStrides: [[1]] });
      const pending = be.read(y);
      const oldDevice = be.device;
      oldDevice.destroy(); // simulated loss
      const err = await pending.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BackendError);
      expect((err as Error).message).toMatch(/device was lost/);

      await be.ready();
      expect(be.device).not.toBe(oldDevice);
      expect(() => be.write(x, new Float32Array(4096))).toThrow(/lost/);
      be.free(x);
      be.free(y);
      // The old compiled kernel is rebuilt on the new device.
      const [out] = await runOnScalars(be, k, [{ dtype: "float32", data: f32(8, (i) => i) }]);
      expectClose(
        out!,
        Array.from({ length: 8 }, (_, i) => Math.exp(i)),
      );
      const a = be.alloc("float32", 8);
      const b = be.alloc("float32", 8);
      be.write(
        a,
        f32(8, (i) => -i),
      );
      be.dispatch(compiled, [a], [b], { batchSizes: [8], inputBatchStrides: [[1]] });
      expectClose(
        await be.read(b),
        Array.from({ length: 8 }, (_, i) => Math.exp(-i)),
      );
      be.free(a);
      be.free(b);
      expect(be.stats.liveBuffers).toBe(0);
    } finally {
      be.destroy();
    }
    expect(() => be.alloc("float32", 1)).toThrow(/destroyed/);
  });
});
