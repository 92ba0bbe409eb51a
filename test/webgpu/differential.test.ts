/**
 * The same kernel IR on the JS backend and on WebGPU must agree: hand-made
 * kernels covering every op family and reduce op, then random elementwise and
 * reduction kernels (fast-check) over random broadcast patterns and batch sizes,
 * with NaN, ±Inf and ±0 in their data.
 * Each run asserts that the WebGPU dispatch counter moved (no silent fallback).
 */
import fc from "fast-check";
import { afterAll, expect, it } from "vitest";
import type { DType, TypedArray } from "../../ir/dtype.js";
import {
  ix,
  numel,
  type IndexExpr,
  type KBinaryOp,
  type KExpr,
  type KReduceOp,
  type KUnaryOp,
  type Kernel,
  type Launch,
} from "../../ir/kernel.js";
import { ARITH_BINARY, COMPARE_BINARY } from "../../ir/ops.js";
import { JsBackend } from "../../runtime/js.js";
import type { Backend } from "../../runtime/backend.js";
import { closeTo, describeWebGPU, probeWebGPU } from "../helpers/webgpu.js";

const probe = await probeWebGPU();
afterAll(() => probe.backend?.destroy());
const js = new JsBackend();

interface Case {
  readonly name: string;
  readonly kernel: Kernel;
  readonly launch: Launch;
  readonly inputs: readonly TypedArray[];
}

/** Length of each output of a launch: kept batch sizes × kept base sizes. */
function outLength(k: Kernel, batchSizes: readonly number[]): number {
  const rb = new Set(k.reduce?.batchAxes ?? []);
  const rs = new Set(k.reduce?.baseAxes ?? []);
  let n = 1;
  batchSizes.forEach((s, a) => (n *= rb.has(a) ? 1 : s));
  k.baseShape.forEach((s, a) => (n *= rs.has(a) ? 1 : s));
  return n;
}

async function runOn(b: Backend, c: Case): Promise<TypedArray[]> {
  const compiled = await b.compile(c.kernel);
  const ins = c.inputs.map((data, i) => {
    const buf = b.alloc(c.kernel.inputs[i]!.dtype, data.length);
    b.write(buf, data);
    return buf;
  });
  const n = outLength(c.kernel, c.launch.batchSizes);
  const outs = c.kernel.outputs.map((o) => b.alloc(o.dtype, n));
  b.dispatch(compiled, ins, outs, c.launch);
  const res = await Promise.all(outs.map((o) => b.read(o)));
  for (const x of [...ins, ...outs]) b.free(x);
  return res;
}

function agree(c: Case, a: readonly TypedArray[], g: readonly TypedArray[], rtol: number, atol: number): string | null {
  for (let j = 0; j < a.length; j++) {
    const d = c.kernel.outputs[j]!.dtype;
    const why = d === "float32" ? closeTo(g[j]!, a[j]!, rtol, atol) : closeTo(g[j]!, a[j]!, 0, 0);
    if (why) return `${c.name}: output ${j} (${d}, ${c.kernel.outputs[j]!.reduce ?? "elementwise"}) ${why}`;
  }
  return null;
}

// ---- hand-made cases ----

function rng(seed: number): (lo: number, hi: number) => number {
  let s = seed >>> 0;
  return (lo, hi) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return lo + (s / 4294967296) * (hi - lo);
  };
}

const L = (input: number, index: number[], dtype: DType = "float32"): KExpr => ({
  k: "load",
  input,
  index: index.map((a) => ix.v(a)),
  dtype,
});
const U = (op: KUnaryOp, x: number, dtype: DType = "float32"): KExpr => ({ k: "unary", op, x, dtype });
const Bi = (op: KBinaryOp, a: number, b: number, dtype: DType = "float32"): KExpr => ({ k: "binary", op, a, b, dtype });

function handCases(): Case[] {
  const r = rng(42);
  const cases: Case[] = [];
  const floats = (n: number, lo = -3, hi = 3): Float32Array => Float32Array.from({ length: n }, () => r(lo, hi));
  const ints = (n: number, lo: number, hi: number): Int32Array =>
    Int32Array.from({ length: n }, () => Math.floor(r(lo, hi)));

  // Every float unary op.
  const funary: KUnaryOp[] = [
    "neg",
    "abs",
    "sqrt",
    "rsqrt",
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sigmoid",
    "floor",
    "ceil",
    "round",
    "trunc",
    "sign",
  ];
  const fpred: KUnaryOp[] = ["isnan", "isinf", "isfinite"];
  {
    const x = floats(96, 0.05, 4);
    x.set([0.5, 1.5, 2.5, 3.5], 0);
    const xs = floats(96, -4, 4);
    xs.set([NaN, Infinity, -Infinity, -0.5, -1.5, 0], 0);
    const exprs: KExpr[] = [L(0, [0]), L(1, [0])];
    funary.forEach((op) => exprs.push(U(op, ["sqrt", "rsqrt", "log"].includes(op) ? 0 : 1)));
    fpred.forEach((op) => exprs.push(U(op, 1, "bool")));
    cases.push({
      name: "float unary",
      kernel: {
        batchRank: 1,
        baseShape: [8],
        reduce: null,
        unroll: false,
        inputs: [
          { dtype: "float32", batchRank: 1, baseShape: [8] },
          { dtype: "float32", batchRank: 1, baseShape: [8] },
        ],
        exprs,
        outputs: exprs.slice(2).map((e, i) => ({ dtype: e.dtype, value: 2 + i, reduce: null })),
      },
      launch: { batchSizes: [12], inputBatchStrides: [[8], [8]] },
      inputs: [x, xs],
    });
  }
  // Every float binary op, with broadcasting over a batch dim and a base dim.
  const fbin: KBinaryOp[] = [...ARITH_BINARY, ...COMPARE_BINARY];
  {
    const a = floats(5 * 4 * 3, 0.1, 3);
    a[3] = NaN;
    const b = floats(4, -2, 2); // (1,4; ) per b1, broadcast over b0 and base
    const exprs: KExpr[] = [L(0, [0]), L(1, [])];
    fbin.forEach((op) => exprs.push(Bi(op, 0, 1, COMPARE_BINARY.has(op) ? "bool" : "float32")));
    exprs.push({ k: "where", c: exprs.length - 1, a: 0, b: 1, dtype: "float32" });
    cases.push({
      name: "float binary + where",
      kernel: {
        batchRank: 2,
        baseShape: [3],
        reduce: null,
        unroll: true,
        inputs: [
          { dtype: "float32", batchRank: 2, baseShape: [3] },
          { dtype: "float32", batchRank: 2, baseShape: [] },
        ],
        exprs,
        outputs: exprs.slice(2).map((e, i) => ({ dtype: e.dtype, value: 2 + i, reduce: null })),
      },
      launch: {
        batchSizes: [5, 4],
        inputBatchStrides: [
          [12, 3],
          [0, 1],
        ],
      },
      inputs: [a, b],
    });
  }
  // Inverse trig around the edges of asin/acos's domain, and atan2 over every quadrant,
  // the axes, signed zeros and infinities (the WGSL builtins leave all of these open).
  {
    const u = floats(128, -1.2, 1.2);
    u.set(
      [NaN, Infinity, -Infinity, 1, -1, 0, -0, 1.0000001, -1.0000001, 0.99999994, -0.99999994, 1e-30, 3e5, -3e5],
      0,
    );
    // Every (y, x) pair of the specials, then 64 random points.
    const special = [0, -0, 1, -1, Infinity, -Infinity, NaN, 1e-3];
    const y = floats(128);
    const x = floats(128);
    for (let i = 0; i < 64; i++) [y[i], x[i]] = [special[i % 8]!, special[Math.floor(i / 8)]!];
    const exprs: KExpr[] = [
      L(0, [0]),
      L(1, [0]),
      L(2, [0]),
      U("asin", 0),
      U("acos", 0),
      U("atan", 0),
      Bi("atan2", 1, 2),
      U("atan", 1),
    ];
    cases.push({
      name: "inverse trig",
      kernel: {
        batchRank: 1,
        baseShape: [8],
        reduce: null,
        unroll: false,
        inputs: [0, 1, 2].map(() => ({ dtype: "float32" as const, batchRank: 1, baseShape: [8] })),
        exprs,
        outputs: exprs.slice(3).map((e, i) => ({ dtype: e.dtype, value: 3 + i, reduce: null })),
      },
      launch: { batchSizes: [16], inputBatchStrides: [[8], [8], [8]] },
      inputs: [u, y, x],
    });
  }
  // int32 and uint32 arithmetic, comparisons, casts.
  for (const dt of ["int32", "uint32"] as const) {
    const n = 40;
    const a = dt === "int32" ? ints(n, -50, 50) : Uint32Array.from(ints(n, 0, 100));
    const b = dt === "int32" ? ints(n, -6, 6) : Uint32Array.from(ints(n, 0, 6));
    a[0] = dt === "int32" ? 2147483647 : 4294967295;
    b[0] = 3;
    const ops: KBinaryOp[] = ["add", "sub", "mul", "div", "mod", "maximum", "minimum", "lt", "eq"];
    const exprs: KExpr[] = [L(0, [], dt), L(1, [], dt)];
    ops.forEach((op) => exprs.push(Bi(op, 0, 1, op === "lt" || op === "eq" ? "bool" : dt)));
    exprs.push(U("neg", 0, dt), U("abs", 0, dt), U("sign", 0, dt));
    exprs.push(
      { k: "cast", x: 0, dtype: "float32" },
      { k: "cast", x: 0, dtype: dt === "int32" ? "uint32" : "int32" },
      { k: "cast", x: 0, dtype: "bool" },
    );
    cases.push({
      name: `${dt} ops`,
      kernel: {
        batchRank: 1,
        baseShape: [],
        reduce: null,
        unroll: false,
        inputs: [
          { dtype: dt, batchRank: 1, baseShape: [] },
          { dtype: dt, batchRank: 1, baseShape: [] },
        ],
        exprs,
        outputs: exprs.slice(2).map((e, i) => ({ dtype: e.dtype, value: 2 + i, reduce: null })),
      },
      launch: { batchSizes: [n], inputBatchStrides: [[1], [1]] },
      inputs: [a, b],
    });
  }
  // float → int casts, and bool logic.
  {
    const x = Float32Array.from([-1.5, 2.7, 3e9, 5e9, -3e9, NaN, Infinity, -0.9, 0, 7.5, -2147483648, 1e10]);
    const exprs: KExpr[] = [
      L(0, []),
      { k: "cast", x: 0, dtype: "int32" },
      { k: "cast", x: 0, dtype: "uint32" },
      { k: "cast", x: 0, dtype: "bool" },
    ];
    cases.push({
      name: "float casts",
      kernel: {
        batchRank: 1,
        baseShape: [],
        reduce: null,
        unroll: false,
        inputs: [{ dtype: "float32", batchRank: 1, baseShape: [] }],
        exprs,
        outputs: exprs.slice(1).map((e, i) => ({ dtype: e.dtype, value: 1 + i, reduce: null })),
      },
      launch: { batchSizes: [x.length], inputBatchStrides: [[1]] },
      inputs: [x],
    });
    const p = Uint8Array.from({ length: 30 }, () => (r(0, 1) < 0.5 ? 1 : 0));
    const q = Uint8Array.from({ length: 30 }, () => (r(0, 1) < 0.5 ? 1 : 0));
    const bexprs: KExpr[] = [
      L(0, [], "bool"),
      L(1, [], "bool"),
      Bi("and", 0, 1, "bool"),
      Bi("or", 0, 1, "bool"),
      Bi("xor", 0, 1, "bool"),
      U("not", 0, "bool"),
      Bi("ne", 0, 1, "bool"),
      { k: "cast", x: 0, dtype: "float32" },
    ];
    cases.push({
      name: "bool logic",
      kernel: {
        batchRank: 1,
        baseShape: [],
        reduce: null,
        unroll: false,
        inputs: [
          { dtype: "bool", batchRank: 1, baseShape: [] },
          { dtype: "bool", batchRank: 1, baseShape: [] },
        ],
        exprs: bexprs,
        outputs: bexprs.slice(2).map((e, i) => ({ dtype: e.dtype, value: 2 + i, reduce: null })),
      },
      launch: { batchSizes: [30], inputBatchStrides: [[1], [1]] },
      inputs: [p, q],
    });
  }
  // Every reduce op, over a base axis and over a batch axis.
  const reduces: KReduceOp[] = ["sum", "mean", "prod", "min", "max", "argmin", "argmax"];
  for (const where of ["base", "batch"] as const) {
    const x = Float32Array.from({ length: 6 * 7 * 5 }, () => Math.round(r(0.5, 1.5) * 8) / 8);
    const m = Uint8Array.from(x, (v) => (v > 1 ? 1 : 0));
    cases.push({
      name: `reductions over a ${where} axis`,
      kernel: {
        batchRank: 2,
        baseShape: [5],
        unroll: false,
        reduce: where === "base" ? { batchAxes: [], baseAxes: [0] } : { batchAxes: [1], baseAxes: [] },
        inputs: [
          { dtype: "float32", batchRank: 2, baseShape: [5] },
          { dtype: "bool", batchRank: 2, baseShape: [5] },
        ],
        exprs: [L(0, [0]), L(1, [0], "bool")],
        outputs: [
          ...reduces.map((op) => ({
            dtype: (op.startsWith("arg") ? "int32" : "float32") as DType,
            value: 0,
            reduce: op,
          })),
          { dtype: "bool", value: 1, reduce: "all" },
          { dtype: "bool", value: 1, reduce: "any" },
          { dtype: "int32", value: 1, reduce: "sum" },
        ],
      },
      launch: {
        batchSizes: [6, 7],
        inputBatchStrides: [
          [35, 5],
          [35, 5],
        ],
      },
      inputs: [x, m],
    });
  }
  // A transposed, sliced load: out[b; i, j] = x[b; j, i] * y[; i] with index arithmetic.
  {
    const x = floats(3 * 4 * 3);
    const y = floats(6);
    const idx: IndexExpr = ix.add(ix.mul(ix.v(0), ix.c(2)), ix.c(1)); // 2i + 1
    cases.push({
      name: "transposed and strided base loads",
      kernel: {
        batchRank: 1,
        baseShape: [3, 4],
        reduce: null,
        unroll: false,
        inputs: [
          { dtype: "float32", batchRank: 1, baseShape: [4, 3] },
          { dtype: "float32", batchRank: 0, baseShape: [6] },
        ],
        exprs: [
          { k: "load", input: 0, index: [ix.v(1), ix.v(0)], dtype: "float32" },
          { k: "load", input: 1, index: [idx], dtype: "float32" },
          Bi("mul", 0, 1),
        ],
        outputs: [{ dtype: "float32", value: 2, reduce: null }],
      },
      launch: { batchSizes: [3], inputBatchStrides: [[12], []] },
      inputs: [x, y],
    });
  }
  return cases.flatMap((c) => splitOutputs(c, 8));
}

/** Splits a case into kernels of at most `max` outputs each (WebGPU binds few storage buffers). */
function splitOutputs(c: Case, max: number): Case[] {
  const outs = c.kernel.outputs;
  if (outs.length <= max) return [c];
  const parts: Case[] = [];
  for (let i = 0; i < outs.length; i += max) {
    parts.push({
      ...c,
      name: `${c.name} (outputs ${i}..${Math.min(outs.length, i + max) - 1})`,
      kernel: { ...c.kernel, outputs: outs.slice(i, i + max) },
    });
  }
  return parts;
}

// ---- random kernels ----

const SAFE_UNARY: KUnaryOp[] = ["neg", "abs", "tanh", "sigmoid", "sin", "cos", "floor", "atan"];
const SAFE_BINARY: KBinaryOp[] = ["add", "sub", "mul", "maximum", "minimum"];
const RANDOM_REDUCE: KReduceOp[] = ["sum", "mean", "max", "min", "argmax"];

interface RandomSpec {
  batchSizes: number[];
  baseShape: number[];
  inputs: { batchKeep: boolean[]; baseKind: number }[];
  ops: { kind: number; op: number; a: number; b: number }[];
  reduce: { batch: boolean[]; base: boolean[]; op: number } | null;
  seed: number;
}

const specArb: fc.Arbitrary<RandomSpec> = fc.record({
  batchSizes: fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 0, maxLength: 3 }),
  baseShape: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 0, maxLength: 2 }),
  inputs: fc.array(
    fc.record({
      batchKeep: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
      baseKind: fc.integer({ min: 0, max: 3 }),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  ops: fc.array(fc.record({ kind: fc.integer({ min: 0, max: 2 }), op: fc.nat(), a: fc.nat(), b: fc.nat() }), {
    minLength: 1,
    maxLength: 8,
  }),
  reduce: fc.option(
    fc.record({
      batch: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
      base: fc.array(fc.boolean(), { minLength: 2, maxLength: 2 }),
      op: fc.nat(),
    }),
    { nil: null },
  ),
  seed: fc.nat(),
});

/** A kernel and launch from a random spec: inputs broadcast in batch (size-1 dims, stride 0) and in base. */
function buildRandom(s: RandomSpec): Case {
  const R = s.batchSizes.length;
  const base = s.baseShape;
  const r = rng(s.seed);
  const inputs: Kernel["inputs"][number][] = [];
  const strides: number[][] = [];
  const datas: Float32Array[] = [];
  const exprs: KExpr[] = [];
  s.inputs.forEach((spec, i) => {
    // Base: 0 = full, 1 = transposed (rank 2) or full, 2 = last axis only, 3 = scalar.
    let shape: number[];
    let index: IndexExpr[];
    if (spec.baseKind === 1 && base.length === 2)
      [shape, index] = [
        [base[1]!, base[0]!],
        [ix.v(1), ix.v(0)],
      ];
    else if (spec.baseKind === 2 && base.length >= 1)
      [shape, index] = [[base[base.length - 1]!], [ix.v(base.length - 1)]];
    else if (spec.baseKind === 3) [shape, index] = [[], []];
    else [shape, index] = [[...base], base.map((_, a) => ix.v(a))];
    // Batch: the input's rank is R minus a prefix; dims it drops to 1 are broadcast by stride 0.
    const rank = Math.max(0, R - (i % 2));
    const sizes = s.batchSizes.slice(R - rank).map((n, j) => (spec.batchKeep[j] ? n : 1));
    const st = new Array<number>(rank);
    let acc = numel(shape);
    for (let j = rank - 1; j >= 0; j--) {
      st[j] = sizes[j] === 1 ? 0 : acc;
      acc *= sizes[j]!;
    }
    inputs.push({ dtype: "float32", batchRank: rank, baseShape: shape });
    strides.push(st);
    // One element in eight is NaN, ±Inf or ±0: both backends must carry them through every op and reduction.
    const SPECIAL = [NaN, Infinity, -Infinity, 0, -0];
    datas.push(
      Float32Array.from({ length: numel(sizes) * numel(shape) }, () =>
        r(0, 1) < 0.125 ? SPECIAL[Math.floor(r(0, 5))]! : r(-2, 2),
      ),
    );
    exprs.push({ k: "load", input: i, index, dtype: "float32" });
  });
  // Operands are drawn from the float32 values only (comparisons feed `where` alone).
  const floats = exprs.map((_, i) => i);
  const pick = (k: number): number => floats[k % floats.length]!;
  for (const o of s.ops) {
    if (o.kind === 0) exprs.push(U(SAFE_UNARY[o.op % SAFE_UNARY.length]!, pick(o.a)));
    else if (o.kind === 1) exprs.push(Bi(SAFE_BINARY[o.op % SAFE_BINARY.length]!, pick(o.a), pick(o.b)));
    else {
      exprs.push(Bi("lt", pick(o.a), pick(o.b), "bool"));
      exprs.push({ k: "where", c: exprs.length - 1, a: pick(o.b), b: pick(o.a + o.op), dtype: "float32" });
    }
    floats.push(exprs.length - 1);
  }
  let reduce: Kernel["reduce"] = null;
  let rop: KReduceOp | null = null;
  if (s.reduce) {
    const batchAxes = s.batchSizes.map((_, a) => a).filter((a) => s.reduce!.batch[a]);
    const baseAxes = base.map((_, a) => a).filter((a) => s.reduce!.base[a]);
    rop = RANDOM_REDUCE[s.reduce.op % RANDOM_REDUCE.length]!;
    if (rop === "argmax") {
      const all = [...batchAxes.map((a) => ({ batch: true, a })), ...baseAxes.map((a) => ({ batch: false, a }))];
      if (all.length === 0) rop = "sum";
      else reduce = all[0]!.batch ? { batchAxes: [all[0]!.a], baseAxes: [] } : { batchAxes: [], baseAxes: [all[0]!.a] };
    }
    if (rop !== "argmax") reduce = { batchAxes, baseAxes };
  }
  const last = exprs.length - 1;
  const outputs: Kernel["outputs"] = [
    { dtype: rop === "argmax" ? "int32" : "float32", value: last, reduce: rop },
    { dtype: "float32", value: floats[Math.max(0, floats.length - 2)]!, reduce: rop === null ? null : "sum" },
  ];
  return {
    name: `random kernel ${JSON.stringify(s)}`,
    kernel: { batchRank: R, baseShape: base, reduce, unroll: s.seed % 2 === 0, inputs, exprs, outputs },
    launch: { batchSizes: s.batchSizes, inputBatchStrides: strides },
    inputs: datas,
  };
}

describeWebGPU(probe, "WebGPU agrees with the JS backend", (gpu) => {
  for (const c of handCases()) {
    it(c.name, async () => {
      const before = gpu.stats.dispatches;
      const [a, g] = await Promise.all([runOn(js, c), runOn(gpu, c)]);
      expect(gpu.stats.dispatches).toBe(before + 1);
      expect(agree(c, a, g, 2e-5, 1e-6)).toBeNull();
    });
  }

  it("on random fused kernels and batch sizes (fast-check)", async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(specArb, async (spec) => {
        const c = buildRandom(spec);
        const before = gpu.stats.dispatches;
        const [a, g] = await Promise.all([runOn(js, c), runOn(gpu, c)]);
        const n = outLength(c.kernel, c.launch.batchSizes);
        if (n > 0) expect(gpu.stats.dispatches).toBe(before + 1);
        runs++;
        // f32 on the GPU vs f64 intermediates in JS: a loose tolerance still catches any indexing error.
        const why = agree(c, a, g, 1e-4, 1e-4);
        if (why) throw new Error(`${why}\n--- WGSL ---\n${(await gpu.compile(c.kernel)).source}`);
      }),
      { numRuns: 60, seed: Number(process.env["BATCHWISE_FC_SEED"] ?? 20240607) },
    );
    expect(runs).toBe(60);
  });
});
