/**
 * Derivatives on both backends (float32, as WebGPU has no float64): special
 * values (NaN, ±Inf, ±0, empty batch dims), JAX's rules at non-differentiable
 * points, the double-where pattern, and a per-sample typed Jacobian traced once
 * and run at two batch sizes, compared with values written out by hand.
 */
import { expect, it } from "vitest";
import {
  fromTypedArray,
  grad,
  jacobian,
  jit,
  setBackend,
  SR2,
  SSR4,
  tensor,
  where,
  type Tensor,
} from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { onWebGPU } from "../helpers/on-webgpu.js";

const probe = await probeWebGPUForFile();

async function read(t: Tensor): Promise<number[]> {
  return Array.from(await t.data(), Number);
}

/** `x` and `y` equal elementwise, NaN matching NaN, relative tolerance `tol`. */
function same(x: readonly number[], y: readonly number[], tol = 0): void {
  expect(x.length).toBe(y.length);
  x.forEach((a, i) => {
    const b = y[i]!;
    if (Number.isNaN(b)) expect(a, `element ${i}`).toBeNaN();
    else if (!Number.isFinite(b) || tol === 0)
      expect(Object.is(a + 0, b + 0) || a === b, `element ${i}: ${a} vs ${b}`).toBe(true);
    else expect(Math.abs(a - b), `element ${i}: ${a} vs ${b}`).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(b)));
  });
}

const f32 = { dtype: "float32" } as const;

async function suite(): Promise<void> {
  // d(x²)/dx = 2x at special values: NaN stays NaN, ±Inf stay ±Inf, ±0 give 0.
  const sq = jit((x: Tensor) => grad((t: Tensor) => t.mul(t).sum())(x));
  same(await read(await sq.callAsync(tensor([NaN, Infinity, -Infinity, -0, 0, 1.5], f32))), [
    NaN,
    Infinity,
    -Infinity,
    0,
    0,
    3,
  ]);
  // Empty batch dims: a (0; 3) gradient.
  const empty = await sq.callAsync(fromTypedArray(new Float32Array(0), [0, 3], { batchDim: 1 }));
  expect(empty.shape).toEqual([0, 3]);
  expect(sq.stats.traces).toBe(2); // rank 1 and rank 2 arguments
  // abs'(0) = 0, sqrt'(0) = inf, maximum ties split 0.5 / 0.5.
  const rules = jit((x: Tensor) => [
    grad((t: Tensor) => t.abs().sum())(x),
    grad((t: Tensor) => t.sqrt().sum())(x),
    grad((t: Tensor) => t.maximum(0).sum())(x),
  ]);
  const [ab, sr, mx] = await rules.callAsync(tensor([0, 4, -1], f32));
  same(await read(ab!), [0, 1, -1]);
  same(await read(sr!), [Infinity, 0.25, NaN]);
  same(await read(mx!), [0.5, 1, 0]);
  // The double where: no NaN from the branch not taken (log of a non-positive number).
  const dw = jit((x: Tensor) =>
    grad((t: Tensor) => {
      const pos = t.gt(0);
      return where(pos, where(pos, t, 1).log(), 0).sum();
    })(x),
  );
  same(await read(await dw.callAsync(tensor([-1, 0, 2, -Infinity], f32))), [0, 0, 0.5, 0]);
  // d(s·tr s)/ds per sample = tr s · I + s ⊗ [1,1,1,0,0,0], one trace for two batch sizes.
  const jf = jit((x: Tensor) => (jacobian((e: SR2) => e.mul(e.tr()))(new SR2(x)) as SSR4).t);
  for (const n of [2, 5]) {
    const s = Array.from({ length: 6 * n }, (_, k) => Math.sin(k + 1));
    const J = await read(await jf.callAsync(fromTypedArray(Float32Array.from(s), [n, 6], { batchDim: 1 })));
    const want: number[] = [];
    for (let b = 0; b < n; b++) {
      const v = s.slice(b * 6, b * 6 + 6).map(Math.fround);
      const tr = v[0]! + v[1]! + v[2]!;
      for (let i = 0; i < 6; i++) for (let j = 0; j < 6; j++) want.push((i === j ? tr : 0) + (j < 3 ? v[i]! : 0));
    }
    same(J, want, 1e-6);
  }
  expect(jf.stats.traces).toBe(1);
}

it("derivatives on the JS backend", async () => {
  setBackend("js");
  await suite();
});

describeWebGPU(probe, "derivatives on WebGPU", (gpu) => {
  it("the same results on WebGPU", () =>
    onWebGPU(gpu, async () => {
      await suite();
    }));
});
