/**
 * The random graphs of the fuzz tests (test/helpers/random-graph.ts) draw every
 * elementwise op of ir/elementwise.ts and every reduction of ir/reductions.ts: the
 * ops are drawn from the facts tables by their dtype rule, and this test fails on an
 * op that no graph contains (a rule the generator places where the type rule refuses
 * it, or an op that never reaches the graphs), so a new op cannot go unfuzzed.
 */
import { describe, expect, it } from "vitest";
import { ELEMENTWISE, type ElementwiseOp } from "../../ir/elementwise.js";
import { topoOrder } from "../../ir/graph.js";
import { REDUCTIONS, type KReduceOp } from "../../ir/reductions.js";
import { DRAWN, randomCase, type Family } from "../helpers/random-graph.js";

const FAMILIES: readonly Family[] = ["float32", "float64", "int32", "uint32"];

describe("random graphs draw every op of the facts tables", () => {
  it("every elementwise op and every reduction is in some graph of 200 seeds per family, with and without specials", () => {
    const seen = new Map<string, Set<Family>>();
    for (const family of FAMILIES) {
      for (let seed = 1; seed <= 200; seed++) {
        for (const specials of [false, true]) {
          const { graph } = randomCase(seed, family, { specials });
          for (const n of topoOrder(graph)) {
            const s = seen.get(n.op) ?? new Set<Family>();
            s.add(family);
            seen.set(n.op, s);
          }
        }
      }
    }
    const ops = [...(Object.keys(ELEMENTWISE) as ElementwiseOp[]), ...(Object.keys(REDUCTIONS) as KReduceOp[])];
    expect(ops.filter((op) => !seen.has(op))).toEqual([]);
    // The integer-only ops in integer graphs, the float-only ones in float graphs.
    for (const op of DRAWN.intBinary)
      expect([...seen.get(op)!].some((f) => f === "int32" || f === "uint32")).toBe(true);
    for (const op of DRAWN.floatUnary)
      expect(
        [...seen.get(op)!].some((f) => f.startsWith("float")),
        op,
      ).toBe(true);
  });

  it("each op is drawn in one use or more, and the uses hold no op twice", () => {
    const drawn = new Set<string>(Object.values(DRAWN).flat());
    const every = [...Object.keys(ELEMENTWISE), ...Object.keys(REDUCTIONS)];
    expect(every.filter((op) => !drawn.has(op))).toEqual([]);
    for (const [use, ops] of Object.entries(DRAWN)) expect(new Set(ops).size, use).toBe(ops.length);
  });
});
