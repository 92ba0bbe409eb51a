/**
 * Differential tests: random graphs compiled to JS kernels (through the whole
 * pass pipeline) against the reference interpreter, on random batch sizes.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { interpret } from "../../ir/interpret.js";
import { printGraph } from "../../ir/print.js";
import { counters } from "../../runtime/stats.js";
import { closeEnough, randomCase, randomInputs, seedArb, type Family } from "../helpers/random-graph.js";
import { compileJs, FC_SEED, runJs } from "../helpers/run.js";

type Mode = Family | "float32 relaxed";
const TOL: Record<Mode, number> = {
  // Same float64 arithmetic in both; only summation order could differ.
  float64: 1e-9,
  // Both round to float32 after every op.
  float32: 1e-6,
  // Kernels keep float32 intermediates in float64 (the jit default on JS); the
  // interpreter rounds every op, so they differ by its accumulated rounding error.
  "float32 relaxed": 1e-4,
  int32: 0,
  uint32: 0,
};

function check(seed: number, mode: Mode, unrollLimit: number): void {
  const family: Family = mode === "float32 relaxed" ? "float32" : mode;
  const c = randomCase(seed, family, {});
  const inputs = randomInputs(c);
  const expected = interpret(c.graph, inputs);
  const program = compileJs(c.graph, unrollLimit, Infinity, mode === "float32 relaxed");
  const before = counters.dispatches;
  const actual = runJs(program, inputs);
  const kernels = program.schedule.steps.filter((s) => s.kind === "kernel").length;
  expect(counters.dispatches - before, "every kernel of the schedule was launched").toBe(kernels);
  actual.forEach((a, i) => {
    expect(a.type).toEqual(expected[i]!.type);
    const err = closeEnough(a.data, expected[i]!.data, TOL[mode]);
    if (err !== undefined) throw new Error(`seed ${seed} (${mode}): output ${i} ${err}\n${printGraph(c.graph)}`);
  });
}

describe("JS kernels equal the reference interpreter on random graphs", () => {
  for (const mode of ["float64", "float32", "float32 relaxed", "int32", "uint32"] as const) {
    it(`${mode}, unrolled and looped base`, () => {
      fc.assert(
        fc.property(seedArb, fc.boolean(), (seed, unroll) => check(seed, mode, unroll ? 64 : 0)),
        { numRuns: 150, seed: FC_SEED },
      );
    });
  }
});
