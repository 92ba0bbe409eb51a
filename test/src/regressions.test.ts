/**
 * One small test per bug found by the random-graph fuzz (test/passes/fuzz.test.ts,
 * test/webgpu/graphs.test.ts), with expected values computed by hand from the
 * documented rules, eagerly and inside jit.
 */
import { describe, expect, it } from "vitest";
import { jit, tensor, type Tensor } from "../../src/index.js";

const both = (f: (x: Tensor) => Tensor) => [
  ["eager", f],
  ["jit", jit(f)],
] as const;

describe("fuzz regressions (JS)", () => {
  it.each(both((x) => x.neg().abs()))("uint32 abs(neg(x)) wraps, abs is the identity (%s)", (_mode, f) => {
    // uint32 neg wraps to 2^32 - x; abs of a uint32 is itself. The simplifier's abs(neg x) -> abs(x) gave [1, 2].
    expect(Array.from(f(tensor([1, 2, 0], { dtype: "uint32" })).dataSync())).toEqual([4294967295, 4294967294, 0]);
  });

  it.each(both((x) => x.div(5e-324)))("float64 division by 5e-324 = 2^-1074 (1/c overflows) (%s)", (_mode, f) => {
    // -0 / c = -0; 1e-310 is the subnormal 20240225330731 · 2^-1074; 1 / c overflows to Infinity.
    // The simplifier turned x / c into x * Infinity: NaN for -0, Infinity for 1e-310.
    const got = Array.from(f(tensor([-0, 1e-310, 1], { dtype: "float64" })).dataSync());
    expect(got.map((v) => (Object.is(v, -0) ? "-0" : String(v)))).toEqual(["-0", "20240225330731", "Infinity"]);
  });
});
