/**
 * The wasm fuzz's extension for issue 26 (the generators of test/helpers/random-graph.ts,
 * the judging rules of test/helpers/fuzz.ts), on one thread, through the pass pipeline
 * as jit runs it (relaxed float32, the default), exact, and op by op:
 *
 * - graphs with run-time size-1 batch dims on one operand and not the other, repeated
 *   operands (`f(x, x)`, `where(c, x, x)`), constant conditions and promotions
 *   (`randomCase`'s `broadcast`), judged with the relaxed rule (the vector math is within
 *   2 ulp, not correctly rounded);
 * - sums, means, products and matmuls over 1 to 16 elements of huge, cancelling and tiny
 *   values (`randomReductionCase`), judged exactly: every op there is correctly rounded and
 *   the accumulators are float64, so the bits are the interpreter's. (The existing wasm fuzz
 *   ran relaxedFloat32: false only, and its relaxed rule let 16777216 pass for 16777232.)
 */
import { describe, expect, it } from "vitest";
import { WasmBackend } from "../../runtime/wasm/backend.js";
import { familyOf, fuzzCount, judge, reference, type Rule } from "../helpers/fuzz.js";
import { randomCase, randomInputs, randomReductionCase, type RandomCase } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";
import { runOnWasm } from "../helpers/wasm-fuzz.js";

const wasm = new WasmBackend();

const CONFIGS = [
  { name: "fused relaxed", fusion: true, relaxedFloat32: true },
  { name: "fused exact", fusion: true, relaxedFloat32: false },
  { name: "op-by-op", fusion: false, relaxedFloat32: false },
] as const;

function fuzz(cases: readonly RandomCase[], rule: Rule): string[] {
  const failures: string[] = [];
  for (const c of cases) {
    const inputs = randomInputs(c);
    const ref = reference(c, inputs, rule === "relaxed");
    for (const cfg of CONFIGS) {
      const why = judge(c, ref, runOnWasm(wasm, c, inputs, cfg), rule);
      if (why !== undefined) failures.push(`seed ${c.seed} ${c.graph.name} ${cfg.name}: ${why}`);
    }
  }
  return failures;
}

const BROADCASTS = fuzzCount(300);
const REDUCTIONS = fuzzCount(400);

describe("wasm fuzz: run-time broadcasts, repeated operands, promotions and short reductions", () => {
  it(`${BROADCASTS} broadcast graphs × (fused relaxed, fused exact, op-by-op)`, () => {
    const cases = Array.from({ length: BROADCASTS }, (_, k) => {
      const seed = (FC_SEED + 15485863 * k) >>> 0;
      return randomCase(seed, familyOf(seed), { specials: true, broadcast: true });
    });
    const failures = fuzz(cases, "relaxed");
    expect(failures.slice(0, 10), `${failures.length} failures`).toEqual([]);
  });

  it(`${REDUCTIONS} short reductions of huge and cancelling values × (fused relaxed, fused exact, op-by-op), bit-exact`, () => {
    const cases = Array.from({ length: REDUCTIONS }, (_, k) => {
      const seed = (FC_SEED + 32452843 * k) >>> 0;
      return randomReductionCase(seed, seed % 5 === 0 ? "float64" : "float32");
    });
    const failures = fuzz(cases, "exact");
    expect(failures.slice(0, 10), `${failures.length} failures`).toEqual([]);
  });
});
