/**
 * Special values on the WebAssembly backend: the grid of ../helpers/special-values.ts
 * (every elementwise op on NaN, ±Inf, ±0, ±1, ±tiny, ±huge and integer extremes)
 * eagerly and inside jit, operands from buffers and as constants, plus the algebraic
 * patterns (x*0, x-x, x+0, ...). NaN, ±Inf and the sign of zero must match exactly;
 * finite results of the float32 transcendental ops (and pow) within the vector math's
 * bound (2 ulp, codegen/wasm/math.ts), everything else exactly.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getBackend, initWasm, setBackend } from "../../src/index.js";
import { specialValueSuite } from "../helpers/special-value-suite.js";

describe("special values on WebAssembly", () => {
  beforeAll(async () => {
    await initWasm({ threads: 1 });
  });
  afterAll(() => setBackend("js"));
  it("runs on WebAssembly", () => expect(getBackend().name).toBe("wasm"));
  // 2 float32 ulps are at most 2.4e-7 relative; huge sin/cos/tan arguments are reduced exactly.
  specialValueSuite({ rtol: 2.5e-7, rangeOnlyPastBound: false });
});
