/**
 * The looped linear-algebra kernels on WebGPU (float32 WGSL, one invocation per
 * matrix, inner loops unrolled): identities, special values and one jit trace for
 * two batch sizes, at small sizes above the unroll limits (Mesa's software
 * rasterizer is slow). Sizes whose loops would pass the WebGPU loop budget are a
 * typed error.
 */
import { expect, it } from "vitest";
import { fromTypedArray, linalg, sort, UnsupportedOpError } from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { randomMats } from "./helpers.js";
import { checkLoopedJit, matsOf } from "./looped-suite.js";
import { selectWebGPU } from "../helpers/on-webgpu.js";

const probe = await probeWebGPUForFile();

describeWebGPU(probe, "looped linalg on WebGPU", (gpu) => {
  selectWebGPU(gpu);

  it("values: det, inv, cholesky and eigvalsh of 2·I + 0.1·J (n = 9), NaN and empty batches", async () => {
    const n = 9;
    // a = 2·I + 0.1·J: eigenvalues 2 (n-1 times) and 2 + 0.1·n; det = 2^(n-1)·(2 + 0.1·n).
    const d = new Float64Array(2 * n * n).map((_, i) => ((i % (n * n)) % (n + 1) === 0 ? 2.1 : 0.1));
    d[n * n + n] = NaN;
    const a = matsOf(d, 2, n, n, "float32");
    const det = Array.from(await linalg.det(a).data());
    expect(Math.abs(det[0]! - 2 ** (n - 1) * (2 + 0.1 * n))).toBeLessThan(1e-4 * det[0]!);
    expect(det[1]).toBeNaN();
    const inv = await linalg.inv(a).data();
    // inv(2I + 0.1J) = (I - 0.1/(2 + 0.1n)·J)/2.
    const c = 0.1 / (2 + 0.1 * n);
    for (let i = 0; i < n * n; i++)
      expect(Math.abs(inv[i]! - ((i % (n + 1) === 0 ? 1 : 0) - c) / 2)).toBeLessThan(1e-6);
    expect(Array.from(inv.slice(n * n)).some(Number.isNaN)).toBe(true);
    const w = Array.from(await linalg.eigvalsh(a).data());
    for (let i = 0; i < n - 1; i++) expect(Math.abs(w[i]! - 2)).toBeLessThan(1e-5);
    expect(Math.abs(w[n - 1]! - (2 + 0.1 * n))).toBeLessThan(1e-5);
    expect(w.slice(n).some(Number.isNaN)).toBe(true);
    const l = await linalg.cholesky(a).data();
    expect(Math.abs(l[0]! - Math.sqrt(2.1))).toBeLessThan(1e-6);
    expect(
      Array.from(l.slice(0, n * n)).every((v, i) => (i % n > Math.floor(i / n) ? v === 0 : Number.isFinite(v))),
    ).toBe(true);
    expect((await linalg.inv(matsOf(new Float64Array(0), 0, n, n, "float32")).data()).length).toBe(0);
  }, 120_000);

  it("one trace serves two batch sizes", async () => {
    await checkLoopedJit(9, "float32");
  }, 120_000);

  it("a routine past the loop budget is a typed error", async () => {
    const a = matsOf(randomMats(1, 64, 64, 1), 1, 64, 64, "float32");
    await expect(linalg.eigvalsh(a).data()).rejects.toThrow(UnsupportedOpError);
    // A looped sort (axes above 1024) passes the budget too: n log n iterations per row.
    await expect(sort(fromTypedArray(new Float32Array(1500), [1, 1500], { batchDim: 1 })).data()).rejects.toThrow(
      "webgpu: routine sort",
    );
  });
});
