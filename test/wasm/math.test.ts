// The wasm vector math (codegen/wasm/math.ts) against float64 references: the documented
// ulp bound per function over a strided sweep of all float32 values plus edge grids, and
// special values written out by hand. bench/wasm-math-ulp.ts runs the denser sweep whose
// figures the README's WebAssembly section gives.
import { describe, expect, it } from "vitest";
import { MATH_FN1, MATH_FN2, ULP_BOUND, type MathFn } from "../../codegen/wasm/math.js";
import { pairs } from "./pairs.js";
import { edges, measure, MathRunner, strided } from "./ulp.js";

const runner = new MathRunner([...MATH_FN1, ...MATH_FN2]);
const one = (fn: MathFn, a: number, b?: number): number =>
  runner.run(fn, Float32Array.of(a), b === undefined ? undefined : Float32Array.of(b))[0]!;

describe("wasm vector math: ulp bounds", () => {
  const sweep = strided(16411, 5);
  for (const fn of MATH_FN1) {
    it(`${fn}: within ${ULP_BOUND[fn]} ulp of fround(float64) over ${sweep.length} strided inputs and its edge grid`, () => {
      const r = measure(runner, fn, Float32Array.from([...sweep, ...edges(fn)]));
      expect(r.maxUlp, `worst at ${r.at}`).toBeLessThanOrEqual(ULP_BOUND[fn]);
    });
  }
  for (const fn of MATH_FN2) {
    it(`${fn}: within ${ULP_BOUND[fn]} ulp over grid pairs and random pairs`, () => {
      const [a, b] = pairs(fn, 300);
      const r = measure(runner, fn, a, b);
      expect(r.maxUlp, `worst at ${r.at}`).toBeLessThanOrEqual(ULP_BOUND[fn]);
    });
  }
  it("the measurement can fail: a result one ulp off counts as 1, a lost sign of zero as Infinity", async () => {
    const { ulpDistance } = await import("./ulp.js");
    expect(ulpDistance(Math.fround(1 + 2 ** -23), 1)).toBe(1);
    expect(ulpDistance(0, -0)).toBe(Infinity);
    expect(ulpDistance(NaN, 1)).toBe(Infinity);
    expect(ulpDistance(1e-45, 0)).toBe(Infinity);
    expect(ulpDistance(-1e-45, 1e-45)).toBe(2);
  });
});

describe("wasm vector math: special values (written out)", () => {
  const pi = Math.fround(Math.PI);
  const cases: [MathFn, number, number | undefined, number][] = [
    ["exp", NaN, undefined, NaN],
    ["exp", Infinity, undefined, Infinity],
    ["exp", -Infinity, undefined, 0],
    ["exp", -0, undefined, 1],
    ["exp", 89, undefined, Infinity],
    ["exp", -103, undefined, Math.fround(Math.exp(-103))], // subnormal result
    ["exp", -104, undefined, 0],
    ["log", -0, undefined, -Infinity],
    ["log", 0, undefined, -Infinity],
    ["log", -1, undefined, NaN],
    ["log", Infinity, undefined, Infinity],
    ["log", 1, undefined, 0],
    ["log", 1e-45, undefined, Math.fround(-103.27892990343185)],
    ["sin", -0, undefined, -0],
    ["sin", 1e-45, undefined, 1e-45],
    ["sin", Infinity, undefined, NaN],
    ["sin", 1e30, undefined, Math.sin(Math.fround(1e30))],
    ["cos", -0, undefined, 1],
    ["cos", -Infinity, undefined, NaN],
    ["tan", -0, undefined, -0],
    ["tan", Infinity, undefined, NaN],
    ["tanh", -0, undefined, -0],
    ["tanh", -Infinity, undefined, -1],
    ["tanh", 20, undefined, 1],
    ["tanh", -1e-45, undefined, -1e-45],
    ["sigmoid", -Infinity, undefined, 0],
    ["sigmoid", Infinity, undefined, 1],
    ["sigmoid", -0, undefined, 0.5],
    ["sigmoid", NaN, undefined, NaN],
    ["atan", -Infinity, undefined, Math.fround(-Math.PI / 2)],
    ["atan", -0, undefined, -0],
    ["asin", 1, undefined, Math.fround(Math.PI / 2)],
    ["asin", -0, undefined, -0],
    ["asin", 1.0000001, undefined, NaN],
    ["acos", -1, undefined, pi],
    ["acos", 1, undefined, 0],
    ["acos", -1.0000001, undefined, NaN],
    ["sqrt", -0, undefined, -0],
    ["sqrt", -1, undefined, NaN],
    ["sqrt", Infinity, undefined, Infinity],
    ["rsqrt", 0, undefined, Infinity],
    ["rsqrt", -0, undefined, -Infinity],
    ["rsqrt", Infinity, undefined, 0],
    ["atan2", -0, -0, -pi],
    ["atan2", 0, -0, pi],
    ["atan2", -0, 0, -0],
    ["atan2", Infinity, -Infinity, Math.fround((3 * Math.PI) / 4)],
    ["atan2", 1, NaN, NaN],
    ["atan2", -1, 0, Math.fround(-Math.PI / 2)],
    ["pow", 1, NaN, 1],
    ["pow", -1, Infinity, 1],
    ["pow", NaN, 0, 1],
    ["pow", 0, -1, Infinity],
    ["pow", -0, -3, -Infinity],
    ["pow", -0, 3, -0],
    ["pow", -8, 1 / 3, NaN],
    ["pow", -2, 3, -8],
    ["pow", -2, -2, 0.25],
    ["pow", 2, 128, Infinity],
    ["pow", 2, -149, 2 ** -149],
    ["pow", 2, -150, 0],
    ["pow", Infinity, -1, 0],
  ];
  for (const [fn, a, b, want] of cases) {
    it(`${fn}(${b === undefined ? (Object.is(a, -0) ? "-0" : a) : `${Object.is(a, -0) ? "-0" : a}, ${Object.is(b, -0) ? "-0" : b}`}) = ${Object.is(want, -0) ? "-0" : want}`, () => {
      expect(Object.is(one(fn, a, b), Math.fround(want))).toBe(true);
    });
  }
});
