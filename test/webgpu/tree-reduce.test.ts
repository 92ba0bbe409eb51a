/**
 * Workgroup tree reductions (kernels reducing batch axes): every reduce op over one
 * and two batch axes, with and without base axes, at batch sizes around the
 * workgroup size and one large one, checked against plain JS loops. Values are
 * small integers so float sums are exact whatever order the tree combines them in.
 */
import { afterAll, expect, it } from "vitest";
import { kernelToWGSL, treeReduction, wgslWorkgroups } from "../../codegen/wgsl.js";
import type { DType } from "../../ir/dtype.js";
import { ix, type KExpr, type Kernel, type KernelOutput, type KReduceOp } from "../../ir/kernel.js";
import type { WebGPUBackend } from "../../runtime/webgpu/backend.js";
import { rng as unitRng } from "../helpers/random-graph.js";
import { closeTo, describeWebGPU, probeWebGPU, runKernel } from "../helpers/webgpu.js";

const probe = await probeWebGPU();
afterAll(() => probe.backend?.destroy());

/** Deterministic uniform numbers in [lo, hi). */
function rng(seed: number): (lo: number, hi: number) => number {
  const next = unitRng(seed);
  return (lo, hi) => lo + next() * (hi - lo);
}

/** The space: batch sizes, base shape, and which axes are reduced. */
interface Space {
  readonly batch: readonly number[];
  readonly base: readonly number[];
  readonly rb: readonly number[];
  readonly rbase: readonly number[];
}

const prod = (xs: readonly number[]): number => xs.reduce((p, x) => p * x, 1);

/**
 * For each output element (kept axes row-major, batch first) the flat input indices
 * of its reduced elements, in loop order (reduced batch axes outer, then base axes).
 */
function reducedIndices(sp: Space): number[][] {
  const dims = [...sp.batch, ...sp.base];
  const red = [...sp.rb, ...sp.rbase.map((a) => sp.batch.length + a)];
  const kept = dims.map((_, a) => a).filter((a) => !red.includes(a));
  const strides = dims.map((_, a) => prod(dims.slice(a + 1)));
  const nOut = prod(kept.map((a) => dims[a]!));
  const nRed = prod(red.map((a) => dims[a]!));
  const split = (n: number, axes: number[]): number[] => {
    const at = new Array<number>(axes.length);
    for (let i = axes.length - 1; i >= 0; i--) {
      at[i] = n % dims[axes[i]!]!;
      n = Math.floor(n / dims[axes[i]!]!);
    }
    return at;
  };
  const result: number[][] = [];
  for (let o = 0; o < nOut; o++) {
    const ko = split(o, kept);
    let base = 0;
    kept.forEach((a, i) => (base += ko[i]! * strides[a]!));
    const list = new Array<number>(nRed);
    for (let r = 0; r < nRed; r++) {
      const kr = split(r, red);
      let at = base;
      red.forEach((a, i) => (at += kr[i]! * strides[a]!));
      list[r] = at;
    }
    result.push(list);
  }
  return result;
}

/** JS reference of one reduce op over the values at `idx`. */
function reduceJS(op: KReduceOp, vals: ArrayLike<number>, idx: readonly number[], dtype: DType): number {
  let acc =
    op === "prod" ? 1 : op === "min" || op === "argmin" ? Infinity : op === "max" || op === "argmax" ? -Infinity : 0;
  if (op === "all") acc = 1;
  let at = 0;
  idx.forEach((i, p) => {
    const v = vals[i]!;
    switch (op) {
      case "sum":
      case "mean":
        acc = dtype === "int32" ? (acc + v) | 0 : acc + v;
        break;
      case "prod":
        acc = dtype === "int32" ? Math.imul(acc, v) : acc * v;
        break;
      case "min":
        acc = Math.min(acc, v);
        break;
      case "max":
        acc = Math.max(acc, v);
        break;
      case "all":
        acc &= v !== 0 ? 1 : 0;
        break;
      case "any":
        acc |= v !== 0 ? 1 : 0;
        break;
      case "argmin":
      case "argmax":
        if (acc === acc && (v !== v || (op === "argmax" ? v > acc : v < acc))) [acc, at] = [v, p];
        break;
    }
  });
  if (op === "argmin" || op === "argmax") return at;
  if (op === "mean") return Math.fround(acc) / idx.length;
  return acc;
}

const load = (input: number, rank: number, dtype: DType): KExpr => ({
  k: "load",
  input,
  index: Array.from({ length: rank }, (_, a) => ix.v(a)),
  dtype,
});

/** Runs a kernel whose inputs all have the space's full shape; returns the outputs. */
async function run(
  gpu: WebGPUBackend,
  sp: Space,
  exprs: KExpr[],
  outputs: KernelOutput[],
  inputs: { dtype: DType; data: Float32Array | Int32Array }[],
) {
  const k: Kernel = {
    batchRank: sp.batch.length,
    baseShape: sp.base,
    reduce: { batchAxes: sp.rb, baseAxes: sp.rbase },
    unroll: false,
    inputs: inputs.map((t) => ({ dtype: t.dtype, batchRank: sp.batch.length, baseShape: sp.base })),
    exprs,
    outputs,
  };
  expect(treeReduction(k)).toBe(true);
  const S = prod(sp.base);
  const strides = sp.batch.map((_, a) => prod(sp.batch.slice(a + 1)) * S);
  const count =
    prod(sp.batch.filter((_, a) => !sp.rb.includes(a))) * prod(sp.base.filter((_, a) => !sp.rbase.includes(a)));
  // One workgroup per output element and chunk of 64 × 256 reduced elements.
  const reducedN =
    prod(sp.batch.filter((_, a) => sp.rb.includes(a))) * prod(sp.base.filter((_, a) => sp.rbase.includes(a)));
  expect(wgslWorkgroups(k, sp.batch)).toBe(count * Math.max(1, Math.ceil(reducedN / 16_384)));
  return runKernel(
    gpu,
    k,
    inputs,
    { batchSizes: sp.batch, inputBatchStrides: inputs.map(() => strides) },
    outputs.map(() => count),
  );
}

const FOLD_OPS = ["sum", "mean", "prod", "min", "max", "all", "any"] as const;

/**
 * One kernel with every non-arg op as a separate output: x (small ints, maybe NaN),
 * s (±1, for prod), x > 0 (for all/any) and a bool-count sum into int32.
 */
async function checkFold(gpu: WebGPUBackend, sp: Space, seed: number, nanAt: number[] = []): Promise<void> {
  const n = prod([...sp.batch, ...sp.base]);
  const rank = sp.base.length;
  const r = rng(seed);
  const x = Float32Array.from({ length: n }, () => Math.floor(r(-3, 4)));
  for (const i of nanAt) x[i] = NaN;
  const s = Float32Array.from({ length: n }, () => (r(0, 1) < 0.5 ? -1 : 1));
  const exprs: KExpr[] = [
    load(0, rank, "float32"), // 0: x
    load(1, rank, "float32"), // 1: s
    { k: "const", value: 0, dtype: "float32" }, // 2
    { k: "binary", op: "gt", a: 0, b: 2, dtype: "bool" }, // 3: x > 0
  ];
  const outputs: KernelOutput[] = [
    ...FOLD_OPS.map((op): KernelOutput => {
      if (op === "all" || op === "any") return { dtype: "bool", value: 3, reduce: op };
      return { dtype: "float32", value: op === "prod" ? 1 : 0, reduce: op };
    }),
    { dtype: "int32", value: 3, reduce: "sum" },
  ];
  const outs = await run(gpu, sp, exprs, outputs, [
    { dtype: "float32", data: x },
    { dtype: "float32", data: s },
  ]);
  const idx = reducedIndices(sp);
  const pos = Uint8Array.from(x, (v) => (v > 0 ? 1 : 0));
  outputs.forEach((o, j) => {
    const vals = o.value === 1 ? s : o.value === 3 ? pos : x;
    const expected = idx.map((list) => reduceJS(o.reduce!, vals, list, o.dtype));
    const err = closeTo(outs[j]!, expected);
    if (err) throw new Error(`${JSON.stringify(sp)} output ${j} (${o.reduce}): ${err}`);
  });
}

/** argmin/argmax (one reduced batch axis) over float32 values, plus int32 ops. */
async function checkArg(gpu: WebGPUBackend, sp: Space, x: Float32Array): Promise<void> {
  const rank = sp.base.length;
  const outputs: KernelOutput[] = [
    { dtype: "int32", value: 0, reduce: "argmax" },
    { dtype: "int32", value: 0, reduce: "argmin" },
    { dtype: "float32", value: 0, reduce: "max" },
  ];
  const outs = await run(gpu, sp, [load(0, rank, "float32")], outputs, [{ dtype: "float32", data: x }]);
  const idx = reducedIndices(sp);
  outputs.forEach((o, j) => {
    const expected = idx.map((list) => reduceJS(o.reduce!, x, list, o.dtype));
    const err = closeTo(outs[j]!, expected);
    if (err) throw new Error(`${JSON.stringify(sp)} output ${j} (${o.reduce}): ${err}`);
  });
}

describeWebGPU(probe, "tree reductions over batch axes", (gpu) => {
  it("emits shared memory and barriers only for batch reductions", () => {
    const base: Kernel = {
      batchRank: 1,
      baseShape: [4],
      reduce: { batchAxes: [0], baseAxes: [] },
      unroll: false,
      inputs: [{ dtype: "float32", batchRank: 1, baseShape: [4] }],
      exprs: [load(0, 1, "float32")],
      outputs: [{ dtype: "float32", value: 0, reduce: "sum" }],
    };
    expect(kernelToWGSL(base)).toContain("workgroupBarrier();");
    expect(wgslWorkgroups(base, [1000])).toBe(4);
    const baseOnly: Kernel = { ...base, reduce: { batchAxes: [], baseAxes: [0] } };
    expect(treeReduction(baseOnly)).toBe(false);
    expect(kernelToWGSL(baseOnly)).not.toContain("workgroupBarrier");
    expect(wgslWorkgroups(baseOnly, [1000])).toBe(Math.ceil(1000 / 64));
  });

  for (const B of [1, 63, 64, 65, 200_000]) {
    it(`every fold op over one batch axis of ${B}`, async () => {
      await checkFold(gpu, { batch: [B], base: [], rb: [0], rbase: [] }, B);
    });
  }

  it("every fold op over one batch axis and a base axis, several outputs", async () => {
    for (const B of [1, 63, 64, 65, 1000]) {
      await checkFold(gpu, { batch: [B], base: [3, 2], rb: [0], rbase: [1] }, B + 7);
      await checkFold(gpu, { batch: [B], base: [3, 2], rb: [0], rbase: [0, 1] }, B + 8);
    }
  });

  it("every fold op over two batch axes, with and without base axes", async () => {
    for (const batch of [
      [1, 1],
      [7, 9],
      [64, 1],
      [1, 65],
      [13, 5],
      [400, 500],
    ]) {
      await checkFold(gpu, { batch, base: [], rb: [0, 1], rbase: [] }, batch[0]! * 3 + batch[1]!);
      if (batch[0]! * batch[1]! < 100_000)
        await checkFold(gpu, { batch, base: [3], rb: [0, 1], rbase: [0] }, batch[0]! + 1);
    }
    await checkFold(gpu, { batch: [300, 700], base: [3], rb: [0, 1], rbase: [0] }, 5);
  });

  it("reduces one batch axis of two, keeping the other (several output elements)", async () => {
    await checkFold(gpu, { batch: [5, 130], base: [2], rb: [1], rbase: [] }, 1);
    await checkFold(gpu, { batch: [130, 5], base: [2], rb: [0], rbase: [] }, 2);
    await checkFold(gpu, { batch: [6, 65], base: [2, 3], rb: [1], rbase: [1] }, 3);
  });

  it("propagates NaN through sum, min, max and mean", async () => {
    await checkFold(gpu, { batch: [1000], base: [], rb: [0], rbase: [] }, 4, [517]);
    await checkFold(gpu, { batch: [65, 3], base: [2], rb: [0], rbase: [] }, 5, [1, 200]);
  });

  it("argmin/argmax keep the first occurrence on ties", async () => {
    for (const B of [1, 63, 64, 65, 200_000]) {
      const r = rng(B);
      const x = Float32Array.from({ length: B }, () => Math.floor(r(0, 5)));
      await checkArg(gpu, { batch: [B], base: [], rb: [0], rbase: [] }, x);
      // All equal: position 0. All -inf: position 0 too.
      await checkArg(gpu, { batch: [B], base: [], rb: [0], rbase: [] }, new Float32Array(B).fill(2));
      await checkArg(gpu, { batch: [B], base: [], rb: [0], rbase: [] }, new Float32Array(B).fill(-Infinity));
    }
    // The maximum only late, at a position no thread 0 visits.
    const late = new Float32Array(200_000).fill(1);
    late[199_999] = 9;
    late[150_001] = 9;
    await checkArg(gpu, { batch: [200_000], base: [], rb: [0], rbase: [] }, late);
  });

  it("argmin/argmax: the first NaN wins", async () => {
    for (const [B, nans] of [
      [100, [70, 5]],
      [200_000, [199_990, 123_457, 123_458]],
      [64, [63]],
      [3, [0, 1, 2]],
    ] as const) {
      const r = rng(B + 1);
      const x = Float32Array.from({ length: B }, () => Math.floor(r(-9, 9)));
      for (const i of nans) x[i] = NaN;
      await checkArg(gpu, { batch: [B], base: [], rb: [0], rbase: [] }, x);
    }
  });

  it("argmax over one batch axis of two, several outputs, over 65,535 workgroups", async () => {
    const sp: Space = { batch: [70_000, 3], base: [], rb: [1], rbase: [] };
    const r = rng(9);
    const x = Float32Array.from({ length: 70_000 * 3 }, () => Math.floor(r(0, 3)));
    await checkArg(gpu, sp, x);
    const sp2: Space = { batch: [67, 9], base: [3], rb: [0], rbase: [] };
    const x2 = Float32Array.from({ length: 67 * 9 * 3 }, () => Math.floor(r(0, 3)));
    x2[10 * 27 + 4] = NaN;
    await checkArg(gpu, sp2, x2);
  });

  it("int32 sum, prod, min, max, argmax (wrapping)", async () => {
    for (const batch of [[65], [200_000]]) {
      const sp: Space = { batch, base: [2], rb: [0], rbase: [] };
      const n = batch[0]! * 2;
      const r = rng(n);
      const x = Int32Array.from({ length: n }, () => Math.floor(r(-1000, 1000)) * 100_000);
      const outputs: KernelOutput[] = (["sum", "prod", "min", "max", "argmax", "argmin"] as const).map((op) => ({
        dtype: "int32",
        value: 0,
        reduce: op,
      }));
      const outs = await run(gpu, sp, [load(0, 1, "int32")], outputs, [{ dtype: "int32", data: x }]);
      const idx = reducedIndices(sp);
      outputs.forEach((o, j) => {
        expect(Array.from(outs[j]!), o.reduce!).toEqual(idx.map((list) => reduceJS(o.reduce!, x, list, "int32")));
      });
    }
  });
});

describeWebGPU(probe, "adapters that cap loops", (gpu) => {
  it("a base reduction over 70,000 elements is right on every adapter (llvmpipe leaves loops after 65,535 iterations)", async () => {
    // A plain reduction over 70,000 base elements: one invocation looping 70,000 times would give 65,535 there.
    const k: Kernel = {
      batchRank: 0,
      baseShape: [70_000],
      reduce: { batchAxes: [], baseAxes: [0] },
      unroll: false,
      inputs: [{ dtype: "float32", batchRank: 0, baseShape: [70_000] }],
      exprs: [{ k: "load", input: 0, index: [ix.v(0)], dtype: "float32" }],
      outputs: [{ dtype: "float32", value: 0, reduce: "sum" }],
    };
    expect(treeReduction(k)).toBe(true);
    const [out] = await runKernel(
      gpu,
      k,
      [{ dtype: "float32", data: new Float32Array(70_000).fill(1) }],
      { batchSizes: [], inputBatchStrides: [[]] },
      [1],
    );
    expect(Array.from(out!)).toEqual([70_000]);
  });
});
