/**
 * One small test per WebGPU bug found by the random-graph fuzz and the JS/WebGPU
 * differential test, with expected values computed by hand from the documented
 * rules (the same values JS gives).
 */
import { expect, it } from "vitest";
import { fromTypedArray, full, jit, tensor, where, zeros, type Tensor } from "../../src/index.js";
import { checkSignedZeroSums } from "../helpers/signed-zero-sums.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { onWebGPU } from "../helpers/on-webgpu.js";

const probe = await probeWebGPUForFile();
const fmt = (a: ArrayLike<number>): string[] => Array.from(a, (v) => (Object.is(v, -0) ? "-0" : String(v)));

describeWebGPU(probe, "fuzz regressions (WebGPU)", (gpu) => {
  const on = (f: () => Promise<void>) => (): Promise<void> => onWebGPU(gpu, f);

  it(
    "where(x < y, y, x) passes a NaN on (the driver made it max(x, y))",
    on(async () => {
      const x = tensor([NaN, 1, 2, NaN]);
      const y = tensor([1, NaN, 3, NaN]);
      // A comparison with NaN is false, so where() picks its third operand.
      expect(fmt(await where(x.lt(y), y, x).data())).toEqual(["NaN", "1", "3", "NaN"]);
      expect(fmt(await where(x.lt(y), x, y).data())).toEqual(["1", "NaN", "2", "NaN"]);
      expect(fmt(await where(x.ge(y), x, y).data())).toEqual(["1", "NaN", "3", "NaN"]);
      const f = jit((a: Tensor, b: Tensor) => where(a.gt(b), a, b));
      expect(fmt(await (await f.callAsync(x, y)).data())).toEqual(["1", "NaN", "3", "NaN"]);
    }),
  );

  it(
    "a sum of -0s is -0, an empty sum +0 (NumPy), on every WGSL code path",
    on(() => checkSignedZeroSums((t) => t.data())),
  );

  it(
    "an elementwise op over a base with an empty dim (WGSL had `r % 0u`) gives the empty result",
    on(async () => {
      expect(Array.from(await zeros([4], [0]).add(1).data())).toEqual([]);
      expect(
        Array.from(
          await zeros([2], [3, 0])
            .mul(tensor([2]))
            .data(),
        ),
      ).toEqual([]);
      // A reshape of an empty base divides its index by the size-0 dim (WGSL had `x0 % 0u`).
      expect(Array.from(await zeros([], [1, 0]).expand([2, 3, 0]).reshape([0]).data())).toEqual([]);
      expect(Array.from(await zeros([], [3, 0], { dtype: "int32" }).reshape([0]).data())).toEqual([]);
    }),
  );

  it(
    "float mod with |a / b| >= 2^24 is the exact floor remainder, rounded once",
    on(async () => {
      // 16777216 mod float32(-0.33) = -0.17666664..., mod float32(0.7) = 0.58571428..., mod 3 = 1 (exact
      // rational arithmetic, rounded to float32; NumPy gives the same). a - b·floor(a/b) in float32 was off by up to |b|.
      const got = await full([], [3], 16777216)
        .mod(tensor([-0.33, 0.7, 3]))
        .data();
      expect(Array.from(got)).toEqual([-0.17666664719581604, 0.5857142806053162, 1]);
    }),
  );

  it(
    "a float cast to bool is x != ±0, also for a NaN made by -Inf + Inf (the driver tested a != -b)",
    on(async () => {
      const x = tensor([-Infinity, Infinity, -1, 0, -0, NaN, 2]);
      // x + |x|: NaN, Inf, 0, 0, 0, NaN, 4; to bool: NaN is true, ±0 false.
      expect(Array.from(await x.add(x.abs()).cast("bool").data())).toEqual([1, 1, 0, 0, 0, 1, 1]);
    }),
  );

  it(
    "a small inlined sum of products keeps the sign of zero (the driver factored a·b + a·c into a·(b + c))",
    on(async () => {
      const a = tensor([-0, 0.5]);
      // [a0, a1] @ [[a0, a1], [a0, a1]]: element 0 is (-0)(-0) + 0.5·(-0) = +0 + -0 = +0; element 1 is (-0)(0.5) + 0.25 = 0.25.
      const got = await a.matmul(a.expand([2, 2])).data();
      expect(Array.from(got, (v) => (Object.is(v, -0) ? "-0" : String(v)))).toEqual(["0", "0.25"]);
    }),
  );

  it(
    "the mean over batch axes and an empty base axis is NaN (the driver folded x / 0.0 to 0)",
    on(async () => {
      const x = fromTypedArray(new Float32Array(0), [1, 4, 1, 0], { batchDim: 2 });
      // Each output element reduces batch axis 0 and base axis 1 (size 0): the mean of nothing is NaN; the sum +0.
      expect(Array.from(await x.reduce("mean", { batchAxes: [0], baseAxes: [1] }).data())).toEqual([
        NaN,
        NaN,
        NaN,
        NaN,
      ]);
      expect(Array.from(await x.reduce("sum", { batchAxes: [0], baseAxes: [1] }).data())).toEqual([0, 0, 0, 0]);
    }),
  );

  it(
    "x * x of a NaN stays NaN (the driver folded sqrt(a) * sqrt(a) to a)",
    on(async () => {
      const a = tensor([-1, 4]);
      // sqrt(-1) is NaN and NaN · NaN is NaN; sqrt(4)² = 4.
      expect(Array.from(await a.sqrt().mul(a.sqrt()).data())).toEqual([NaN, 4]);
      expect(Array.from(await a.sqrt().matmul(a.sqrt()).data())).toEqual([NaN]);
    }),
  );

  it(
    "tanh(rsqrt(x)) at ±0 is tanh(±Inf) = ±1 (the driver's fused inverse square root gave -Inf)",
    on(async () => {
      // rsqrt(-0) = 1 / -0 = -Inf, rsqrt(+0) = +Inf, rsqrt(-4) = NaN.
      expect(Array.from(await tensor([-0, 0, -4]).rsqrt().tanh().data())).toEqual([-1, 1, NaN]);
    }),
  );
});
