/**
 * asin, acos, atan and atan2 in WGSL on a real adapter, against hand-known
 * values. WGSL leaves asin/acos outside [-1, 1] undefined, lets a shader assume
 * there is no NaN or infinity, and bounds atan2 nowhere near the origin, zeros
 * or infinities: the generated helpers must still give NumPy's NaNs and
 * Math.atan2's signed zeros and infinities (exactly), and Math's values within
 * the builtins' accuracy elsewhere.
 */
import { expect, it } from "vitest";
import type { KExpr } from "../../ir/kernel.js";
import { fromTypedArray, jit, setBackend, tensor, type Tensor } from "../../src/index.js";
import { registerBackend } from "../../src/backend.js";
import { describeWebGPU, probeWebGPUForFile, runOnScalars } from "../helpers/webgpu.js";
import { scalarBatchKernel } from "../helpers/kernels.js";

const probe = await probeWebGPUForFile();

const f32 = Math.fround;
const PI = Math.PI;

/** `exact` values must match bit for bit (a zero with its sign); the others within rtol 2e-5, atol 1e-6. */
function check(what: string, got: ArrayLike<number>, want: readonly number[], exact: (i: number) => boolean): void {
  expect(got.length).toBe(want.length);
  want.forEach((e, i) => {
    const a = got[i]!;
    const ok = Number.isNaN(e)
      ? Number.isNaN(a)
      : exact(i) || e === 0
        ? Object.is(a, f32(e))
        : Math.abs(a - e) <= 1e-6 + 2e-5 * Math.abs(e) && Math.sign(a) === Math.sign(e);
    expect(ok, `${what}[${i}]: got ${a}, expected ${f32(e)}`).toBe(true);
  });
}

describeWebGPU(probe, "inverse trig on WebGPU", (gpu) => {
  it("asin, acos, atan: hand-known values, NaN outside [-1, 1], NaN in, signed zeros", async () => {
    const xs = [1, -1, 0, -0, 0.5, -0.5, 1.5, -1.5, 1.0000001, NaN, Infinity, -Infinity, 0.99999994, 0.3, 1e-30, 3e5];
    // Values the helpers fix rather than take from a builtin.
    const guarded = new Set([0, 1, 2, 3, 6, 7, 8, 9, 10, 11]);
    const exprs: KExpr[] = [{ k: "load", input: 0, index: [], dtype: "float32" }];
    const ops = ["asin", "acos", "atan"] as const;
    for (const op of ops) exprs.push({ k: "unary", op, x: 0, dtype: "float32" });
    const k = scalarBatchKernel(
      ["float32"],
      exprs,
      ops.map((_, i) => ({ dtype: "float32" as const, value: 1 + i, reduce: null })),
    );
    const before = gpu.stats.dispatches;
    const outs = await runOnScalars(gpu, k, [{ dtype: "float32", data: Float32Array.from(xs) }]);
    expect(gpu.stats.dispatches).toBe(before + 1);
    const [asin, acos, atan] = outs;
    expect(asin![0]).toBe(f32(PI / 2));
    expect(acos![1]).toBe(f32(PI));
    expect(Math.abs(atan![0]! - PI / 4)).toBeLessThan(1e-5);
    check(
      "asin",
      asin!,
      xs.map((v) => Math.asin(f32(v))),
      (i) => guarded.has(i),
    );
    check(
      "acos",
      acos!,
      xs.map((v) => Math.acos(f32(v))),
      (i) => guarded.has(i),
    );
    // atan: NaN, ±0 and ±Infinity are guarded; ±1 come from the builtin.
    check(
      "atan",
      atan!,
      xs.map((v) => Math.atan(f32(v))),
      (i) => [2, 3, 9, 10, 11].includes(i),
    );
  });

  it("atan2 follows Math.atan2: quadrants, the origin, signed zeros, infinities, NaN", async () => {
    const pairs: [number, number][] = [
      [-0, -1],
      [0, -1],
      [0, 0],
      [-0, 0],
      [0, -0],
      [-0, -0],
      [0, 1],
      [-0, 1],
      [0, 1e-3],
      [-0, -1e-3],
      [1, 0],
      [-1, 0],
      [1, -0],
      [-1, -0],
      [1e-3, 0],
      [Infinity, Infinity],
      [Infinity, -Infinity],
      [-Infinity, Infinity],
      [-Infinity, -Infinity],
      [2, Infinity],
      [-2, Infinity],
      [2, -Infinity],
      [-2, -Infinity],
      [0, Infinity],
      [-0, -Infinity],
      [Infinity, 2],
      [-Infinity, -2],
      [Infinity, 0],
      [-Infinity, -0],
      [NaN, 1],
      [1, NaN],
      [NaN, NaN],
      [NaN, 0],
      [0, NaN],
      [Infinity, NaN],
      [1, 1],
      [1, -1],
      [-1, -1],
      [-1, 1],
      [3, -4],
      [1e-3, -1e3],
      [-1e3, 1e-3],
    ];
    const general = pairs.length - 7;
    const k = scalarBatchKernel(
      ["float32", "float32"],
      [
        { k: "load", input: 0, index: [], dtype: "float32" },
        { k: "load", input: 1, index: [], dtype: "float32" },
        { k: "binary", op: "atan2", a: 0, b: 1, dtype: "float32" },
      ],
      [{ dtype: "float32", value: 2, reduce: null }],
    );
    const [out] = await runOnScalars(gpu, k, [
      { dtype: "float32", data: Float32Array.from(pairs, ([y]) => y) },
      { dtype: "float32", data: Float32Array.from(pairs, ([, x]) => x) },
    ]);
    expect(out![0]).toBe(f32(-PI));
    expect(Object.is(out![2], 0)).toBe(true);
    check(
      "atan2",
      out!,
      pairs.map(([y, x]) => Math.atan2(f32(y), f32(x))),
      (i) => i < general,
    );
  });

  it("runs from the tensor API (jit, int32 promoted to float32) like the JS backend", async () => {
    registerBackend(gpu);
    const fn = (y: Tensor, x: Tensor, n: Tensor): Tensor[] => [
      y.asin().add(x.acos()),
      y.atan2(x).mul(y.atan()),
      n.atan2(-1),
      n.asin(),
    ];
    const run = async (backend: "js" | "webgpu"): Promise<Float32Array[]> => {
      setBackend(backend);
      try {
        const y = fromTypedArray(Float32Array.from([0.5, -1, 2, NaN, 0, -0.25]), [6], { batchDim: 1 });
        const x = fromTypedArray(Float32Array.from([-0.5, 0, -1, 1, -0, 0.75]), [6], { batchDim: 1 });
        const n = tensor([1, 0, -1], { dtype: "int32" });
        const outs = await jit(fn, { name: `trig_${backend}` }).callAsync(y, x, n);
        expect(outs.map((o) => o.dtype)).toEqual(["float32", "float32", "float32", "float32"]);
        return (await Promise.all(outs.map((o) => o.data()))) as Float32Array[];
      } finally {
        setBackend("js");
      }
    };
    const before = gpu.stats.dispatches;
    const g = await run("webgpu");
    expect(gpu.stats.dispatches).toBeGreaterThan(before);
    const a = await run("js");
    g.forEach((arr, i) => check(`output ${i}`, arr, Array.from(a[i]!), () => false));
    expect(g[2]![1]).toBe(f32(PI));
    expect(g[3]![0]).toBe(f32(PI / 2));
  });
});
