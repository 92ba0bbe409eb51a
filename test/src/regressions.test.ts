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
});
