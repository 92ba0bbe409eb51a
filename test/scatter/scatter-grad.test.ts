/**
 * Derivatives of `scatter` (add and set; and `take`'s reverse mode, a scatter-add)
 * on random graphs (test/helpers/random-graph.ts, `randomScatterCase`, whose
 * indices repeat, wrap and fall out of range): J·v against central finite
 * differences of the reference interpreter in float64, and ⟨u, J·v⟩ = ⟨uᵀ·J, v⟩,
 * which checks the reverse mode (set: only the update that won its position gets
 * the cotangent).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeGraph, Node } from "../../ir/graph.js";
import { FC_SEED } from "../helpers/run.js";
import { randomInputs, randomScatterCase, randomTakeCase, seedArb } from "../helpers/random-graph.js";
import { checkDerivatives, concretize, f64, type Checked } from "../grad/fd-helpers.js";

describe("scatter derivatives on random graphs (float64) against finite differences", () => {
  for (const mode of ["add", "set"] as const) {
    it(mode, () => {
      const stats: Checked = { compared: 0 };
      fc.assert(
        fc.property(seedArb, (seed) => {
          const c = randomScatterCase(seed, "float64", { mode });
          const xs = randomInputs(c).map((v) => f64(v.type, v.data));
          checkDerivatives(concretize(c.graph, c.inputTypes), xs, seed, stats);
        }),
        { seed: FC_SEED, numRuns: 80 },
      );
      // The guard must leave most elements compared (a test that skips everything cannot fail).
      expect(stats.compared).toBeGreaterThan(150);
    });
  }

  it("take (its reverse mode is a scatter-add)", () => {
    const stats: Checked = { compared: 0 };
    fc.assert(
      fc.property(seedArb, (seed) => {
        const c = randomTakeCase(seed, "float64");
        // The fill value (NaN) of out-of-range indices would make every inner product NaN: zero it.
        const out = c.graph.outputs[0]!;
        const clean = Node.make("where", [
          Node.make("isnan", [out]),
          Node.make("const", [], { dtype: "float64", value: 0 }),
          out,
        ]);
        const g = makeGraph(c.graph.name, c.graph.inputs, [clean]);
        const xs = randomInputs(c).map((v) => f64(v.type, v.data));
        checkDerivatives(concretize(g, c.inputTypes), xs, seed, stats);
      }),
      { seed: FC_SEED, numRuns: 80 },
    );
    expect(stats.compared).toBeGreaterThan(150);
  });
});
