/**
 * The WebAssembly backend's memory, threads and contract: buffers and views across
 * memory growth, the buffer pool's reuse, sharded launches on worker threads equal to
 * one-thread launches and to the reference interpreter, the pool not keeping Node
 * alive, typed errors.
 */
import { spawnSync } from "node:child_process";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { interpret, type Value } from "../../ir/interpret.js";
import { ix, type KExpr, type Kernel, type Launch } from "../../ir/kernel.js";
import { runPipeline } from "../../passes/pipeline.js";
import { Program } from "../../runtime/program.js";
import { createWasmBackend, WasmBackend, type WasmCompiled } from "../../runtime/wasm/backend.js";
import { WasmHeap, type WasmBuffer } from "../../runtime/wasm/memory.js";
import { BackendError } from "../../src/index.js";
import { closeEnough, randomCase, randomInputs, seedArb } from "../helpers/random-graph.js";
import { scalarBatchKernel } from "../helpers/kernels.js";
import { FC_SEED } from "../helpers/run.js";

describe("wasm memory", () => {
  it("views are re-created after the memory grows; contents survive growth", () => {
    const b = new WasmBackend({ maxMemoryBytes: 256 * 2 ** 20 });
    const x = b.alloc("float32", 4);
    b.write(x, Float32Array.from([1, -0, NaN, 3e38]));
    const before = b.heap.memory.buffer.byteLength;
    const big = b.alloc("float64", (before / 8) * 2); // forces growth
    expect(b.heap.memory.buffer.byteLength).toBeGreaterThan(before);
    const v = b.view(x) as Float32Array;
    expect(v.length).toBe(4);
    expect([...v].map((n) => (Object.is(n, -0) ? "-0" : String(n)))).toEqual([
      "1",
      "-0",
      "NaN",
      "3.0000000054977558e+38",
    ]);
    expect((b.view(big) as Float64Array).length).toBe((before / 8) * 2);
  });

  it("freed blocks are reused by size class; wrap copies, even a view of the memory", () => {
    const b = new WasmBackend();
    const a = b.alloc("int32", 100) as WasmBuffer;
    const ptr = a.ptr;
    b.free(a);
    const c = b.alloc("float32", 90) as WasmBuffer; // 360 bytes: the same 512-byte class
    expect(c.ptr).toBe(ptr);
    const w = b.wrap("float32", b.view(c) as Float32Array) as WasmBuffer;
    expect(w.ptr).not.toBe(c.ptr);
    const copy = b.wrap("float32", new Float32Array(90)) as WasmBuffer;
    expect(copy.ptr).not.toBe(c.ptr);
    expect(WasmHeap.blockSize(1)).toBe(16);
    expect(WasmHeap.blockSize(65537)).toBe(131072);
  });

  it("running out of memory is a BackendError naming the sizes", () => {
    const b = new WasmBackend({ maxMemoryBytes: 32 * 2 ** 20 });
    expect(() => b.alloc("float64", 8 * 2 ** 20)).toThrow(BackendError);
    expect(() => b.alloc("float64", 8 * 2 ** 20)).toThrow(/out of memory.*67108864 bytes/);
  });
});

describe("wasm threads", async () => {
  const threaded = await createWasmBackend({ threads: 2, minParallelWork: 0 });
  afterAll(() => threaded.close());

  function runOn(
    b: WasmBackend,
    g: Parameters<typeof runPipeline>[0],
    inputs: readonly Value[],
    relaxed: boolean,
  ): Value[] {
    const p = Program.create(
      runPipeline(g, { maxKernelBuffers: Infinity, unrollLimit: 64, mixedBaseOutputs: true, relaxedFloat32: relaxed })
        .schedule,
      b,
    ) as Program;
    const outs = p.run(inputs.map((v) => ({ buffer: b.wrap(v.type.dtype, v.data.slice()), type: v.type })));
    return outs.map((o) => ({ type: o.type, data: b.readSync(o.buffer) }));
  }

  it("two threads started (Node has worker_threads and SharedArrayBuffer)", () => {
    expect(threaded.threads).toBe(2);
    expect(threaded.heap.shared).toBe(true);
  });

  it("sharded launches equal the reference interpreter on random graphs (every launch split over 2 threads)", () => {
    const before = threaded.stats.threaded;
    fc.assert(
      fc.property(seedArb, fc.constantFrom("float32", "int32", "uint32", "float64"), (seed, family) => {
        const c = randomCase(seed, family, {});
        const inputs = randomInputs(c);
        const expected = interpret(c.graph, inputs);
        const actual = runOn(threaded, c.graph, inputs, false);
        actual.forEach((a, i) => {
          const err = closeEnough(
            a.data,
            expected[i]!.data,
            family === "float32" ? 1e-5 : family === "float64" ? 1e-9 : 0,
          );
          if (err !== undefined) throw new Error(`seed ${seed} ${family}: output ${i} ${err}`);
        });
      }),
      { numRuns: 120, seed: FC_SEED },
    );
    expect(threaded.stats.threaded - before, "some launches ran on both threads").toBeGreaterThanOrEqual(5);
  });

  it("a large elementwise launch: SIMD, split over both threads, every element right", () => {
    const n = 100_003;
    const x = new Float32Array(n);
    for (let i = 0; i < n; i++) x[i] = Math.fround(-50 + (100 * i) / n);
    const before = { ...threaded.stats };
    const k = scalarBatchKernel(
      ["float32"],
      [
        { k: "load", input: 0, index: [], dtype: "float32" },
        { k: "unary", op: "exp", x: 0, dtype: "float32" },
        { k: "unary", op: "sin", x: 1, dtype: "float32" },
      ],
      [{ dtype: "float32", value: 2, reduce: null }],
      true,
    );
    const compiled = threaded.compile(k);
    const inp = threaded.wrap("float32", x);
    const out = threaded.alloc("float32", n);
    threaded.dispatch(compiled, [inp], [out], { batchSizes: [n], inputBatchStrides: [[1]] });
    const y = threaded.readSync(out);
    for (let i = 0; i < n; i++) {
      const want = Math.fround(Math.sin(Math.fround(Math.exp(x[i]!))));
      // exp within 1 ulp (2^-23 relative), which sin (slope <= 1) carries on, plus sin's own 2 ulp.
      const e = Math.fround(Math.exp(x[i]!));
      const tol = 2 ** -22 * Math.abs(e) + 2.5e-7;
      if (!(Math.abs(y[i]! - want) <= tol)) throw new Error(`element ${i}: ${y[i]} vs ${want}`);
    }
    expect(threaded.stats.threaded).toBe(before.threaded + 1);
    expect(threaded.stats.simd).toBe(before.simd + 1);
  });

  it("every length from 0 to 41 and ranges split over threads: the eight-lane loop, the four-lane rest and the scalar tail", () => {
    // x * 0.5 - x: every element is -x/2 exactly, so a lane the loops skip or write twice shows.
    const k = scalarBatchKernel(
      ["float32"],
      [
        { k: "load", input: 0, index: [], dtype: "float32" },
        { k: "const", value: 0.5, dtype: "float32" },
        { k: "binary", op: "mul", a: 0, b: 1, dtype: "float32" },
        { k: "binary", op: "sub", a: 2, b: 0, dtype: "float32" },
      ],
      [{ dtype: "float32", value: 3, reduce: null }],
      true,
    );
    const one = new WasmBackend();
    for (const b of [one, threaded]) {
      const compiled = b.compile(k) as WasmCompiled;
      expect(compiled.vectorized).toBe(true);
      for (const n of [...Array.from({ length: 42 }, (_, i) => i), 1003]) {
        const x = Float32Array.from({ length: n }, (_, i) => i + 1);
        const inp = b.wrap("float32", x);
        const out = b.alloc("float32", n);
        b.view(out).fill(7);
        b.dispatch(compiled, [inp], [out], { batchSizes: [n], inputBatchStrides: [[1]] });
        expect([...b.readSync(out)], `${b === one ? "one thread" : "two threads"}, n = ${n}`).toEqual(
          Array.from({ length: n }, (_, i) => -(i + 1) / 2),
        );
        b.free(inp);
        b.free(out);
      }
    }
  });

  it("two batch dims: the outer loop split over threads (or, with fewer outer iterations than 2 per thread, the inner one), the inner one in SIMD lanes; contiguous, strided and broadcast inputs", () => {
    // y = x * 0.5 - x2: exact in float32, so a lane the loops skip, write twice or read wrongly shows.
    const k: Kernel = {
      batchRank: 2,
      baseShape: [],
      reduce: null,
      inputs: [
        { dtype: "float32", batchRank: 2, baseShape: [] },
        { dtype: "float32", batchRank: 2, baseShape: [] },
      ],
      outputs: [{ dtype: "float32", value: 4, reduce: null }],
      exprs: [
        { k: "load", input: 0, index: [], dtype: "float32" },
        { k: "const", value: 0.5, dtype: "float32" },
        { k: "binary", op: "mul", a: 0, b: 1, dtype: "float32" },
        { k: "load", input: 1, index: [], dtype: "float32" },
        { k: "binary", op: "sub", a: 2, b: 3, dtype: "float32" },
      ],
      unroll: true,
    };
    const compiled = threaded.compile(k) as WasmCompiled;
    expect(compiled.sharded).toBe(true);
    expect(compiled.innerVectorLoops).toBe(1);
    expect(compiled.inner?.vectorized).toBe(true);
    for (const [B0, B1] of [
      [37, 1003],
      [1, 4001],
      [3, 1003],
    ] as const) {
      const x = Float32Array.from({ length: B0 * B1 }, (_, i) => i + 1);
      const x2 = Float32Array.from({ length: B0 * B1 * 2 }, (_, i) => 3 * i);
      const cases: [string, readonly number[], readonly number[], (i: number, j: number) => number][] = [
        // [stride of x, stride of x2] per batch dim, and x2's element at (i, j)
        ["contiguous", [B1, 1], [B1, 1], (i, j) => x2[i * B1 + j]!],
        ["x2 strided (every other element)", [B1, 1], [2 * B1, 2], (i, j) => x2[2 * (i * B1 + j)]!],
        ["x2 broadcast along dim 0", [B1, 1], [0, 1], (_i, j) => x2[j]!],
        ["x2 broadcast along dim 1", [B1, 1], [B1, 0], (i) => x2[i * B1]!],
      ];
      for (const [name, sx, sx2, at] of cases) {
        const before = { ...threaded.stats };
        const inp = threaded.wrap("float32", x);
        const inp2 = threaded.wrap("float32", x2);
        const out = threaded.alloc("float32", B0 * B1);
        threaded.view(out).fill(7);
        threaded.dispatch(compiled, [inp, inp2], [out], { batchSizes: [B0, B1], inputBatchStrides: [sx, sx2] });
        const y = threaded.readSync(out);
        for (let i = 0; i < B0; i++)
          for (let j = 0; j < B1; j++) {
            const want = x[i * B1 + j]! * 0.5 - at(i, j);
            if (y[i * B1 + j] !== want) throw new Error(`${name}: (${i}, ${j}) = ${y[i * B1 + j]}, want ${want}`);
          }
        expect(threaded.stats.threaded, `${name}, (${B0}, ${B1})`).toBe(before.threaded + 1);
        threaded.free(inp);
        threaded.free(inp2);
        threaded.free(out);
      }
    }

    // Special values through the inner split ((2, 1001): two outer iterations for two threads),
    // against float32 arithmetic written out here: NaN stays NaN, ±Infinity and -0 keep their signs.
    const SPECIAL = [NaN, Infinity, -Infinity, -0, 0, 1.5, -3e38, 1e-45];
    const [S0, S1] = [2, 1001];
    const xs = Float32Array.from({ length: S0 * S1 }, (_, i) => SPECIAL[i % SPECIAL.length]!);
    const x2s = Float32Array.from({ length: S0 * S1 }, (_, i) => SPECIAL[(i * 3 + 1) % SPECIAL.length]!);
    const before = threaded.stats.threaded;
    const inp = threaded.wrap("float32", xs);
    const inp2 = threaded.wrap("float32", x2s);
    const out = threaded.alloc("float32", S0 * S1);
    threaded.dispatch(compiled, [inp, inp2], [out], {
      batchSizes: [S0, S1],
      inputBatchStrides: [
        [S1, 1],
        [S1, 1],
      ],
    });
    const ys = threaded.readSync(out);
    for (let i = 0; i < S0 * S1; i++) {
      const want = Math.fround(Math.fround(xs[i]! * 0.5) - x2s[i]!);
      if (!Object.is(ys[i], want)) throw new Error(`special values: element ${i} = ${ys[i]}, want ${want}`);
    }
    expect(threaded.stats.threaded).toBe(before + 1);
    // Empty batch dims: nothing to split, nothing written, no error.
    for (const sizes of [
      [0, 1003],
      [3, 0],
    ]) {
      const n0 = threaded.stats.threaded;
      const empty = threaded.alloc("float32", 0);
      threaded.dispatch(compiled, [inp, inp2], [empty], {
        batchSizes: sizes,
        inputBatchStrides: [
          [S1, 1],
          [S1, 1],
        ],
      });
      expect(threaded.readSync(empty).length).toBe(0);
      expect(threaded.stats.threaded, `sizes ${sizes.join(",")}`).toBe(n0);
      threaded.free(empty);
    }
    threaded.free(inp);
    threaded.free(inp2);
    threaded.free(out);
  });

  it("the worker pool does not keep a Node process alive", () => {
    const code = `
      const { createWasmBackend } = await import(${JSON.stringify(new URL("../../runtime/wasm/backend.ts", import.meta.url).pathname)});
      const b = await createWasmBackend({ threads: 2 });
      console.log("threads " + b.threads);
    `;
    const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(r.stdout).toContain("threads 2");
    expect(r.status).toBe(0);
  });

  it("setThreads rejects non-integers and < 1; a one-thread backend without shared memory cannot add threads", async () => {
    await expect(threaded.setThreads(0)).rejects.toThrow(BackendError);
    await expect(threaded.setThreads(1.5)).rejects.toThrow(/integer >= 1/);
    const single = new WasmBackend();
    await expect(single.setThreads(2)).rejects.toThrow(BackendError);
    await single.setThreads(1);
  });
});

describe("wasm SIMD paths", () => {
  const b = new WasmBackend();
  const run = (k: Kernel, inputs: Float32Array[], n: number, launch: Launch): Float32Array => {
    const compiled = b.compile(k) as WasmCompiled;
    const ins = inputs.map((x) => b.wrap("float32", x));
    const out = b.alloc("float32", n);
    b.dispatch(compiled, ins, [out], launch);
    return b.readSync(out) as Float32Array;
  };

  it("an inner base loop (B; 50, 3) - (B; 1, 3): four lanes on the strided path, equal to the formula", () => {
    // x[b, p, c] - m[b, 0, c], base loops not unrolled: the inner loop over p reads x with stride 3.
    const B = 5;
    const x = Float32Array.from({ length: B * 150 }, (_, i) => Math.fround(Math.sin(i) * 10));
    const m = Float32Array.from({ length: B * 3 }, (_, i) => Math.fround(i / 7));
    const k: Kernel = {
      batchRank: 1,
      baseShape: [50, 3],
      reduce: null,
      inputs: [
        { dtype: "float32", batchRank: 1, baseShape: [50, 3] },
        { dtype: "float32", batchRank: 1, baseShape: [1, 3] },
      ],
      outputs: [{ dtype: "float32", value: 2, reduce: null }],
      exprs: [
        { k: "load", input: 0, index: [ix.v(0), ix.v(1)], dtype: "float32" },
        { k: "load", input: 1, index: [ix.c(0), ix.v(1)], dtype: "float32" },
        { k: "binary", op: "sub", a: 0, b: 1, dtype: "float32" },
      ],
      unroll: false,
      unrollAxes: [1],
    };
    const compiled = b.compile(k) as WasmCompiled;
    expect(compiled.innerVectorLoops).toBe(1);
    const y = run(k, [x, m], B * 150, { batchSizes: [B], inputBatchStrides: [[150], [3]] });
    for (let bb = 0; bb < B; bb++)
      for (let p = 0; p < 50; p++)
        for (let c = 0; c < 3; c++) {
          const i = bb * 150 + p * 3 + c;
          expect(y[i]).toBe(Math.fround(x[i]! - m[bb * 3 + c]!));
        }
  });

  it("3×3 per batch element (stride 9): the strided shard path, equal to the formula", () => {
    // out[b, i, j] = m[b, j, i] * 2 (a transpose, fully unrolled): loads and stores with stride 9.
    const B = 13;
    const mm = Float32Array.from({ length: B * 9 }, (_, i) => i - 40);
    const exprs: KExpr[] = [];
    const outs: number[] = [];
    exprs.push({ k: "const", value: 2, dtype: "float32" });
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) {
        exprs.push({ k: "load", input: 0, index: [ix.c(j), ix.c(i)], dtype: "float32" });
        exprs.push({ k: "binary", op: "mul", a: exprs.length - 1, b: 0, dtype: "float32" });
        outs.push(exprs.length - 1);
      }
    // One output per kernel here: the (i, j) element via a select chain is overkill; check element (0, 1).
    const k: Kernel = {
      batchRank: 1,
      baseShape: [],
      reduce: null,
      inputs: [{ dtype: "float32", batchRank: 1, baseShape: [3, 3] }],
      outputs: [{ dtype: "float32", value: outs[1]!, reduce: null }],
      exprs,
      unroll: true,
    };
    const y = run(k, [mm], B, { batchSizes: [B], inputBatchStrides: [[9]] });
    // outs[1] is (i, j) = (0, 1): m[b, 1, 0] * 2.
    for (let bb = 0; bb < B; bb++) expect(y[bb]).toBe(mm[bb * 9 + 3]! * 2);
  });
});
