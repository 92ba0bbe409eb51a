/**
 * Ragged IR ops (segment_reduce, segment_expand, segment_pad, segment_mask)
 * compiled to segmented JS kernels against the reference interpreter, on random
 * row lengths (empty rows included).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeGraph, Node } from "../../ir/graph.js";
import { interpret } from "../../ir/interpret.js";
import { printGraph } from "../../ir/print.js";
import { closeEnough } from "../helpers/random-graph.js";
import { raggedCase, raggedInputs, type RaggedCase } from "../helpers/ragged.js";
import { compileJs, FC_SEED, runJs } from "../helpers/run.js";

function check(c: RaggedCase, build: (v: Node, o: Node, rows: Node) => Node[]): void {
  const [v, o, rows] = raggedInputs(c.S);
  const g = makeGraph("ragged", [v, o, rows], build(v, o, rows), ["values", "offsets", "rows"]);
  const ins = [c.values, c.offsets, c.rows];
  const expected = interpret(g, ins);
  const program = compileJs(g);
  for (const step of program.schedule.steps)
    if (step.kind === "kernel") expect(step.kernel.segment, "a segmented kernel ran").toBeDefined();
  runJs(program, ins).forEach((a, i) => {
    expect(a.type).toEqual(expected[i]!.type);
    const err = closeEnough(a.data, expected[i]!.data, 1e-6);
    if (err) throw new Error(`lengths ${c.lengths}: output ${i} ${err}\n${printGraph(g)}`);
  });
}

describe("segmented kernels equal the reference interpreter", () => {
  for (const op of ["sum", "mean", "max", "min", "argmax", "count"] as const) {
    it(`segment_reduce ${op} with a fused prologue that reads a per-row tensor`, () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 1e9 }), (seed) =>
          check(raggedCase(seed), (v, o, rows) => {
            const centred = Node.make("sub", [v, Node.make("segment_expand", [rows, o, v])]);
            return [Node.make("segment_reduce", [Node.make("abs", [centred]), o], { op })];
          }),
        ),
        { numRuns: 60, seed: FC_SEED },
      );
    });
  }

  it("segment_expand into an elementwise map over the packed values", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e9 }), (seed) =>
        check(raggedCase(seed), (v, o, rows) => [
          Node.make("mul", [v, Node.make("exp", [Node.make("segment_expand", [rows, o, v])])]),
        ]),
      ),
      { numRuns: 60, seed: FC_SEED },
    );
  });

  it("segment_unpad inverts a right segment_pad (and reads 0 past a short padded length)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e9 }), fc.integer({ min: 0, max: 9 }), (seed, maxN) =>
        check(raggedCase(seed), (v, o, rows) => {
          const padded = Node.make("segment_pad", [Node.make("exp", [v]), o], { maxN, value: -7, left: false });
          const back = Node.make("segment_unpad", [padded, o, v]);
          return [Node.make("add", [back, Node.make("segment_expand", [rows, o, v])])];
        }),
      ),
      { numRuns: 60, seed: FC_SEED },
    );
  });

  it("elementwise consumers of segment_pad and segment_mask (per-row and unbatched operands) fuse into one pad kernel, maxN -1 included", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1e9 }),
        fc.integer({ min: -1, max: 9 }),
        fc.boolean(),
        (seed, maxN, left) => {
          const c = raggedCase(seed);
          check(c, (v, o, rows) => {
            const padded = Node.make("segment_pad", [Node.make("exp", [v]), o], { maxN, value: -7, left });
            const mask = Node.make("cast", [Node.make("segment_mask", [o], { maxN, left })], { dtype: "float32" });
            const perRow = Node.make("batch_unsqueeze", [rows], { dim: 1 });
            const two = Node.make("const", [], { dtype: "float32", value: 2 });
            return [Node.make("add", [Node.make("mul", [Node.make("mul", [padded, perRow]), two]), mask])];
          });
          const [v, o, rows] = raggedInputs(c.S);
          const padded = Node.make("segment_pad", [v, o], { maxN, value: 0, left });
          const g = makeGraph(
            "k",
            [v, o, rows],
            [Node.make("mul", [padded, Node.make("batch_unsqueeze", [rows], { dim: 1 })])],
            ["values", "offsets", "rows"],
          );
          expect(compileJs(g).schedule.steps.filter((st) => st.kind === "kernel")).toHaveLength(1);
        },
      ),
      { numRuns: 80, seed: FC_SEED },
    );
  });

  it("segment_pad (left and right, maxN larger or smaller than the longest row) and segment_mask", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e9 }), fc.integer({ min: 0, max: 9 }), fc.boolean(), (seed, maxN, left) =>
        check(raggedCase(seed), (v, o, rows) => {
          const centred = Node.make("sub", [v, Node.make("segment_expand", [rows, o, v])]);
          return [
            Node.make("segment_pad", [centred, o], { maxN, value: -7, left }),
            Node.make("segment_mask", [o], { maxN, left }),
          ];
        }),
      ),
      { numRuns: 80, seed: FC_SEED },
    );
  });
});
