/**
 * The linear-algebra accuracy suite in CI (issue 26; bounds and method in
 * accuracy-suite.ts and docs/linalg-accuracy.md): every algorithm at every size on
 * JS and WebAssembly, float64 and float32, and WebGPU (float32) at the sizes it
 * runs. For CI time, float32 stops at n = 64 (the sizes above run the same looped
 * routines as 17..64, whose float32 results are checked; float64 covers 128..256),
 * and from n = 128 on four matrix families of the six are used (accuracy-suite.ts). With
 * LINALG_ACCURACY_REPORT=<file> the measurements are written there as JSON.
 */
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, it } from "vitest";
import { initWasm, setBackend } from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { ALGS, measure, SIZES, supported, type Alg, type DT, type Measured } from "./accuracy-suite.js";
import { selectWebGPU } from "../helpers/on-webgpu.js";

const results: Measured[] = [];
const probe = await probeWebGPUForFile();

beforeAll(async () => {
  await initWasm({ threads: 1, select: false });
});
afterAll(() => {
  setBackend("js");
  const file = process.env["LINALG_ACCURACY_REPORT"];
  if (file) writeFileSync(file, JSON.stringify(results));
});

function suite(backend: "js" | "wasm", dtype: DT, maxN: number): void {
  describe(`${backend} ${dtype}`, () => {
    beforeAll(() => setBackend(backend));
    for (const n of SIZES.filter((s) => s <= maxN))
      it(`n = ${n}: ${ALGS.filter((a) => supported(a, n)).join(", ")}`, async () => {
        for (const alg of ALGS) if (supported(alg, n)) results.push(...(await measure(alg, n, dtype, backend)));
      });
  });
}

suite("js", "float64", 256);
suite("wasm", "float64", 256);
suite("js", "float32", 64);
suite("wasm", "float32", 64);

describeWebGPU(probe, "webgpu float32", (gpu) => {
  selectWebGPU(gpu);
  // Mesa's software rasterizer compiles slowly: two unrolled sizes with every
  // algorithm, and one looped size with the direct ones (the Jacobi routines at
  // n = 17 pass WebGPU's loop budget: the documented UnsupportedOpError).
  const cases: [number, readonly Alg[]][] = [
    [2, ALGS],
    [3, ALGS],
    [17, ["qr", "cholesky", "lu"]],
  ];
  for (const [n, algs] of cases)
    it(`n = ${n}: ${algs.join(", ")}`, { timeout: 300_000 }, async () => {
      for (const alg of algs) results.push(...(await measure(alg, n, "float32", "webgpu")));
    });
});
