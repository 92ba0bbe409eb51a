/**
 * Cache keys and constants on the JS backend: keys are injective on special
 * numbers (NaN, ±Inf, -0 never share a kernel or an expression), constants are
 * launch arguments (one kernel for every value of a scalar), and the eager
 * caches are bounded. Expected values are IEEE arithmetic written out by hand.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { canonicalKey } from "../../ir/key.js";
import { kernelKey, type Kernel } from "../../ir/kernel.js";
import { kernelToJS } from "../../codegen/js.js";
import { kernelToWGSL } from "../../codegen/wgsl.js";
import { runPipeline } from "../../passes/pipeline.js";
import { randomCase, type Family } from "../helpers/random-graph.js";
import { KERNEL_CACHE_LIMIT, kernelCacheSize } from "../../runtime/program.js";
import { programCacheSize, PROGRAM_CACHE_LIMIT } from "../../src/realize.js";
import { counters, fromTypedArray, getBackend, jit, tensor, type Tensor } from "../../src/index.js";

const read = (t: Tensor): number[] => Array.from(t.dataSync());

describe("canonicalKey", () => {
  it("keeps NaN, ±Infinity, -0 and 0 apart (JSON.stringify writes null, null, null, 0, 0)", () => {
    const values = [NaN, Infinity, -Infinity, -0, 0, null, "NaN", "0", 1, true];
    const keys = values.map((v) => canonicalKey({ value: v }));
    expect(new Set(keys).size).toBe(values.length);
    expect(canonicalKey([NaN, -0])).toBe("[NaN,-0]");
  });

  it("ignores key order and undefined fields, and nests", () => {
    expect(canonicalKey({ a: 1, b: [2, { c: -0 }] })).toBe(canonicalKey({ b: [2, { c: -0 }], a: 1, d: undefined }));
    expect(canonicalKey({ a: [1, 2] })).not.toBe(canonicalKey({ a: [1, [2]] }));
    expect(canonicalKey({ a: "x,y" })).not.toBe(canonicalKey({ a: "x", y: undefined, "x,y": 1 }));
  });
});

describe("kernelKey", () => {
  const scale = (value: number): Kernel => ({
    batchRank: 1,
    baseShape: [],
    reduce: null,
    unroll: true,
    inputs: [{ dtype: "float32", batchRank: 1, baseShape: [] }],
    exprs: [
      { k: "load", input: 0, index: [], dtype: "float32" },
      { k: "const", value, dtype: "float32" },
      { k: "binary", op: "mul", a: 0, b: 1, dtype: "float32" },
    ],
    outputs: [{ dtype: "float32", value: 2, reduce: null }],
  });

  it("leaves constant values out (they are launch arguments) but keeps their dtype and every other field", () => {
    expect(kernelKey(scale(NaN))).toBe(kernelKey(scale(2.5)));
    const asInt: Kernel = {
      ...scale(1),
      exprs: scale(1).exprs.map((e) => (e.k === "const" ? { ...e, dtype: "int32" } : e)),
    };
    expect(kernelKey(asInt)).not.toBe(kernelKey(scale(1)));
    expect(kernelKey({ ...scale(1), baseShape: [1] })).not.toBe(kernelKey(scale(1)));
    expect(kernelKey({ ...scale(1), relaxedFloat32: true })).not.toBe(kernelKey(scale(1)));
  });
});

describe("code generation never depends on a constant's value", () => {
  /** The kernel with every constant replaced by another value of its dtype. */
  const perturbed = (k: Kernel): Kernel => ({
    ...k,
    exprs: k.exprs.map((e, i) =>
      e.k !== "const"
        ? e
        : {
            ...e,
            value:
              e.dtype === "bool"
                ? 1 - e.value
                : e.dtype === "uint32"
                  ? (e.value + 7 + i) >>> 0
                  : e.dtype === "int32"
                    ? (e.value - 7 - i) | 0
                    : Number.isNaN(e.value)
                      ? -0
                      : NaN,
          },
    ),
  });
  const wgsl = (k: Kernel): string => {
    try {
      return kernelToWGSL(k);
    } catch (e) {
      return `refused: ${(e as Error).message}`;
    }
  };

  it("gives the same key and the same JS and WGSL source for kernels that differ only in constant values (random graphs)", () => {
    let kernels = 0;
    let withConsts = 0;
    for (const family of ["float64", "float32", "int32"] as Family[]) {
      for (let seed = 1; seed <= 60; seed++) {
        const c = randomCase(seed * 7919 + family.length, family, {});
        for (const relaxedFloat32 of [false, true]) {
          const { schedule } = runPipeline(c.graph, {
            maxKernelBuffers: Infinity,
            unrollLimit: 64,
            mixedBaseOutputs: true,
            relaxedFloat32,
          });
          for (const st of schedule.steps) {
            if (st.kind !== "kernel") continue;
            const k = st.kernel;
            const p = perturbed(k);
            kernels++;
            if (k.exprs.some((e) => e.k === "const")) withConsts++;
            expect(kernelKey(p)).toBe(kernelKey(k));
            expect(kernelToJS(p).source).toBe(kernelToJS(k).source);
            expect(wgsl(p)).toBe(wgsl(k));
          }
        }
      }
    }
    // The check is not vacuous: many kernels carry constants.
    expect(kernels).toBeGreaterThan(200);
    expect(withConsts).toBeGreaterThan(40);
  });
});

describe("special constants (issue 12, case 1)", () => {
  it("eager: NaN after Infinity, -Infinity after Infinity, -0 after 0 each give their own results", () => {
    const a = tensor([1, 2, 3]);
    expect(read(a.mul(Infinity))).toEqual([Infinity, Infinity, Infinity]);
    expect(read(a.mul(NaN))).toEqual([NaN, NaN, NaN]);
    expect(read(a.mul(-Infinity))).toEqual([-Infinity, -Infinity, -Infinity]);
    expect(read(a.div(0))).toEqual([Infinity, Infinity, Infinity]);
    expect(read(a.div(-0))).toEqual([-Infinity, -Infinity, -Infinity]);
    expect(read(a.sub(a).mul(-0)).map((v) => Object.is(v, -0))).toEqual([true, true, true]);
    expect(read(a.sub(a).mul(0)).map((v) => Object.is(v, -0))).toEqual([false, false, false]);
  });

  it("one kernel never merges two different special constants", () => {
    const a = tensor([1, 2, 3]);
    // (a + Inf) * NaN = NaN; merged constants would give Inf * Inf or NaN * NaN.
    expect(read(a.add(Infinity).mul(NaN))).toEqual([NaN, NaN, NaN]);
    // 1/(a*-0) + 1/(a*0) = -Inf + Inf = NaN; merged zeros would give ±Inf.
    const one = tensor([1]);
    expect(read(one.div(a.mul(-0)).add(one.div(a.mul(0))))).toEqual([NaN, NaN, NaN]);
    // a + (-Inf) then * Inf: -Inf * Inf = -Inf.
    expect(read(a.add(-Infinity).mul(Infinity))).toEqual([-Infinity, -Infinity, -Infinity]);
  });

  it("jit, relaxed and exact float32: the same results after another constant's trace", () => {
    for (const float32 of ["relaxed", "exact"] as const) {
      const x = fromTypedArray(new Float32Array([1, -2, 0.5, 4]), [2, 2], { batchDim: 1 });
      const fInf = jit((t: Tensor) => t.mul(Infinity), { float32 });
      const fNaN = jit((t: Tensor) => t.mul(NaN), { float32 });
      const fNegZero = jit((t: Tensor) => tensor([1]).div(t.sub(t).mul(-0)), { float32 });
      expect(read(fInf(x) as Tensor)).toEqual([Infinity, -Infinity, Infinity, Infinity]);
      expect(read(fNaN(x) as Tensor)).toEqual([NaN, NaN, NaN, NaN]);
      expect(read(fNegZero(x) as Tensor)).toEqual([-Infinity, -Infinity, -Infinity, -Infinity]);
    }
  });

  it("integer and bool constants reach the kernel exactly", () => {
    const i = tensor([7, -3, 0], { dtype: "int32" });
    expect(read(i.add(-2147483648))).toEqual([-2147483641, 2147483645, -2147483648]);
    expect(read(i.mul(2147483647))).toEqual([2147483641, 2147483651 - 2 ** 32, 0]);
    const u = tensor([1, 2, 3], { dtype: "uint32" });
    expect(read(u.add(4294967295))).toEqual([0, 1, 2]);
  });
});

/**
 * Heap in MiB after full collections (V8's gc, switched on for this file), with
 * tasks in between so finalizers (the graph's node table cleanup) run.
 */
async function heapMiB(): Promise<number> {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 10));
  }
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

describe("constants as launch arguments, bounded caches (issue 12)", () => {
  it("x.mul(i + 0.5) for 20,000 values of i compiles one kernel, gives the right values, and the heap stays bounded", async () => {
    const x = fromTypedArray(new Float32Array([1, -2, 3, 0.25]), [4]);
    const compiles = counters.compiles;
    const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));
    // Warm up (first program, first kernel), then measure the heap over the rest.
    for (let i = 0; i < 1000; i++)
      x.mul(i + 0.5)
        .sub(x)
        .dataSync();
    await tick();
    const before = await heapMiB();
    let wrong = "";
    for (let i = 1000; i < 20_000; i++) {
      const c = i + 0.5;
      const got = x.mul(c).sub(x).dataSync();
      const want = [1, -2, 3, 0.25].map((v) => Math.fround(Math.fround(v * c) - v));
      if (!wrong && got.some((g, j) => g !== want[j])) wrong = `i=${i}: got ${Array.from(got)}, want ${want}`;
      // An application's loop yields now and then (the graph's node table is cleaned between tasks).
      if (i % 1000 === 0) await tick();
    }
    await tick();
    const after = await heapMiB();
    expect(wrong).toBe("");
    expect(counters.compiles - compiles).toBe(1);
    expect(programCacheSize()).toBeLessThanOrEqual(PROGRAM_CACHE_LIMIT);
    // Before the fix every value was a new kernel: +100 MB over 20,000 values.
    expect(after - before).toBeLessThan(8);
  }, 60_000);

  it("the kernel cache evicts least recently used kernels past its limit, and evicted kernels compile again correctly", () => {
    const backend = getBackend();
    const evictions = counters.kernelEvictions;
    // Base shapes [1..limit+50]: each a kernel of its own structure.
    const shapes = Array.from({ length: KERNEL_CACHE_LIMIT + 50 }, (_, i) => i + 1);
    for (const n of shapes)
      fromTypedArray(new Float32Array(n).fill(1), [1, n], { batchDim: 1 }).mul(3).sum().dataSync();
    expect(kernelCacheSize(backend)).toBeLessThanOrEqual(KERNEL_CACHE_LIMIT);
    expect(counters.kernelEvictions - evictions).toBeGreaterThanOrEqual(50);
    // The first shapes were evicted; running them again compiles and still gives n * 3.
    const compiles = counters.compiles;
    expect(read(fromTypedArray(new Float32Array(2).fill(1), [1, 2], { batchDim: 1 }).mul(3).sum())).toEqual([6]);
    expect(counters.compiles).toBeGreaterThan(compiles);
  }, 60_000);
});
