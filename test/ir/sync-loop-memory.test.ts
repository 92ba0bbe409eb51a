/**
 * Memory of synchronous loops that build new graphs: `x.mul(i).dataSync()` with a
 * new constant `i` per iteration, and a 10-op chain, 100,000 times with no `await`.
 * The hash-consing table (ir/graph.ts) holds every node it makes; with `WeakRef`s its
 * entries stayed alive until the task ended, so the heap grew ~1.4 KB per call
 * (+139 MB after 100,000) even after a forced collection. Measured here within one
 * task: a synchronous `gc()` before and after, no yield in between (yielding would
 * let the old table's weak references go and hide the growth).
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { INTERN_CAPACITY, makeGraph, Node } from "../../ir/graph.js";
import { rewriteGraph } from "../../passes/rewrite.js";
import { tensor } from "../../src/index.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

function heapNow(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const MB = 1024 * 1024;

describe("synchronous loops that make new nodes", () => {
  it("100,000 calls of x.mul(i).dataSync() with a new i each: heap growth ≤ 8 MB, no yield", () => {
    const x = tensor([1, 2, 3, 4]);
    // Warm up past the table's capacity, so that the measured loop starts with a full table.
    for (let i = 0; i < INTERN_CAPACITY; i++) x.mul(i).dataSync();
    const before = heapNow();
    let check = 0;
    for (let i = 0; i < 100_000; i++) check += x.mul(i + 0.5).dataSync()[3]!;
    const grown = heapNow() - before;
    // sum over i of 4 (i + 0.5) = 4 (n(n-1)/2 + n/2) = 2 n^2
    expect(check).toBe(2 * 100_000 ** 2);
    expect(grown).toBeLessThan(8 * MB);
  }, 240_000);

  it("a 10-op chain read 10,000 times with new constants: heap growth ≤ 8 MB", () => {
    const x = tensor([0.5, 1, 2]);
    const chain = (i: number) => x.mul(i).add(1).sub(i).mul(2).div(2).add(i).sub(1).neg().neg().mul(1);
    for (let i = 0; i < 2000; i++) chain(i).dataSync();
    const before = heapNow();
    let ok = true;
    for (let i = 0; i < 10_000; i++) {
      // (x i + 1 - i) * 2 / 2 + i - 1 = x i, exact for these small values
      const d = chain(i).dataSync();
      ok &&= d[0] === 0.5 * i && d[1] === i && d[2] === 2 * i;
    }
    const grown = heapNow() - before;
    expect(ok).toBe(true);
    expect(grown).toBeLessThan(8 * MB);
  }, 240_000);

  it("CSE stays exact in a graph larger than the table: equal nodes made far apart become one", () => {
    const x = Node.make("input", [], { index: 0 }, { dtype: "float64", batch: ["b0"], base: [2] });
    const early = Node.make("exp", [x]);
    // Push `early` out of the table with more nodes than it holds, then build an equal node.
    let filler: Node = x;
    for (let i = 0; i <= INTERN_CAPACITY; i++)
      filler = Node.make("add", [x, Node.make("const", [], { value: i, dtype: "float64" })]);
    const late = Node.make("exp", [x]);
    expect(late).not.toBe(early);
    const g = rewriteGraph(makeGraph("g", [x], [Node.make("add", [early, late]), filler]), () => undefined);
    const sum = g.outputs[0]!;
    expect(sum.inputs[0]).toBe(sum.inputs[1]);
  });
});
