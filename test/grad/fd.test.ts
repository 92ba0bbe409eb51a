/**
 * The derivative graphs (`jvpGraph`, `vjpGraph`) on random graphs from the test
 * generator, checked against central finite differences of the reference
 * interpreter in float64, and against each other through `⟨u, J·v⟩ = ⟨uᵀ·J, v⟩`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { interpret } from "../../ir/interpret.js";
import { vjpGraph } from "../../passes/autodiff.js";
import { FC_SEED, compileJs, runJs } from "../helpers/run.js";
import { randomCase, randomInputs, rng, seedArb } from "../helpers/random-graph.js";
import { checkDerivatives, concretize, f64, randomVec, type Checked } from "./fd-helpers.js";

describe("derivative graphs on random graphs (float64)", () => {
  it("J·v matches central differences and <u, J·v> = <uᵀJ, v>", () => {
    const stats: Checked = { compared: 0 };
    fc.assert(
      fc.property(seedArb, (seed) => {
        const c = randomCase(seed, "float64", { allowCompare: true });
        const xs = randomInputs(c).map((v) => f64(v.type, v.data));
        checkDerivatives(concretize(c.graph, c.inputTypes), xs, seed, stats);
      }),
      { seed: FC_SEED, numRuns: 300 },
    );
    // The guard must leave most elements compared (a test that skips everything cannot fail).
    expect(stats.compared).toBeGreaterThan(1000);
  });

  it("compiled derivative graphs (pipeline + JS kernels) agree with the interpreter", () => {
    fc.assert(
      fc.property(seedArb, (seed) => {
        const c = randomCase(seed, "float64", { allowCompare: true });
        const g = concretize(c.graph, c.inputTypes);
        const xs = randomInputs(c).map((v) => f64(v.type, v.data));
        const r = rng(seed);
        const us = interpret(g, xs).map((o) => randomVec(r, o.type));
        const vg = vjpGraph(g);
        const want = interpret(vg, [...xs, ...us]);
        const got = runJs(compileJs(vg), [...xs, ...us]);
        got.forEach((o, i) => {
          const w = want[i]!.data;
          o.data.forEach((v, k) => {
            const e = w[k]!;
            if (Number.isNaN(e)) expect(v).toBeNaN();
            else if (!Number.isFinite(e)) expect(v).toBe(e);
            else expect(Math.abs(v - e)).toBeLessThanOrEqual(1e-9 * Math.max(1, Math.abs(e)));
          });
        });
      }),
      { seed: FC_SEED, numRuns: 60 },
    );
  });
});
