/**
 * Special values on WebGPU: the grid of ../helpers/special-values.ts (every
 * elementwise op on NaN, ±Inf, ±0, ±1, ±tiny, ±huge and integer extremes) eagerly
 * and inside jit, operands from buffers and as constants, plus the algebraic
 * patterns (x*0, x-x, x+0, ...) that a WGSL compiler assuming finite math would
 * fold. NaN, ±Inf and the sign of zero must match exactly; finite results of the
 * transcendental ops (and pow) within the device's accuracy (rtol below).
 */
import { beforeAll, expect, it } from "vitest";
import { registerBackend } from "../../src/backend.js";
import { getBackend, setBackend } from "../../src/index.js";
import { specialValueSuite } from "../helpers/special-value-suite.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";

const probe = await probeWebGPUForFile();

describeWebGPU(probe, "special values on WebGPU", (gpu) => {
  beforeAll(() => {
    registerBackend(gpu);
    setBackend("webgpu");
  });
  it("runs on WebGPU", () => expect(getBackend().name).toBe("webgpu"));
  specialValueSuite({
    // WGSL's transcendentals are not correctly rounded.
    rtol: 2e-5,
    rangeOnlyPastBound: true,
    // Each op's constants are literals of one kernel (one pipeline per op and side:
    // llvmpipe compiles each in about 70 ms, so jit runs float32 on the right only).
    constantCombos: (mode) => (mode === "eager" ? undefined : [{ d: "float32", left: false }]),
  });
});
