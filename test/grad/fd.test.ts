/**
 * The derivative graphs (`jvpGraph`, `vjpGraph`) on random graphs from the test
 * generator, checked against central finite differences of the reference
 * interpreter in float64, and against each other through `⟨u, J·v⟩ = ⟨uᵀ·J, v⟩`.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeGraph, Node, topoOrder, type Graph } from "../../ir/graph.js";
import { interpret, type Value } from "../../ir/interpret.js";
import type { ConcreteType } from "../../ir/shapes.js";
import { jvpGraph, vjpGraph } from "../../passes/autodiff.js";
import { FC_SEED, compileJs, runJs } from "../helpers/run.js";
import { randomCase, randomInputs, rng, seedArb } from "../helpers/random-graph.js";

/** The graph rebuilt with concrete input types (so which dims broadcast is known statically). */
function concretize(g: Graph, types: readonly ConcreteType[]): Graph {
  const map = new Map<Node, Node>();
  g.inputs.forEach((n, i) => map.set(n, Node.make("input", [], { index: i }, types[i]!)));
  for (const n of topoOrder(g)) {
    if (map.has(n)) continue;
    map.set(
      n,
      Node.make(
        n.op,
        n.inputs.map((i) => map.get(i)!),
        n.attrs,
      ),
    );
  }
  return makeGraph(
    g.name,
    g.inputs.map((n) => map.get(n)!),
    g.outputs.map((n) => map.get(n)!),
    g.inputNames,
  );
}

const f64 = (t: ConcreteType, data: ArrayLike<number>): Value => ({ type: t, data: Float64Array.from(data) });
const size = (t: ConcreteType): number => [...t.batch, ...t.base].reduce((a, b) => a * b, 1);

function randomVec(r: () => number, t: ConcreteType): Value {
  return f64(
    t,
    Array.from({ length: size(t) }, () => r() * 2 - 1),
  );
}

function shifted(xs: readonly Value[], vs: readonly Value[], h: number): Value[] {
  return xs.map((x, i) =>
    f64(
      x.type,
      Array.from(x.data, (a, k) => a + h * vs[i]!.data[k]!),
    ),
  );
}

function dot(a: readonly Value[], b: readonly Value[]): number {
  let s = 0;
  a.forEach((x, i) => x.data.forEach((v, k) => (s += v * b[i]!.data[k]!)));
  return s;
}

/** Central differences of every output along `vs`, at step h. */
function fd(g: Graph, xs: readonly Value[], vs: readonly Value[], h: number): Float64Array[] {
  const p = interpret(g, shifted(xs, vs, h));
  const m = interpret(g, shifted(xs, vs, -h));
  return p.map((o, i) => Float64Array.from(o.data, (a, k) => (a - m[i]!.data[k]!) / (2 * h)));
}

interface Checked {
  compared: number;
}

/**
 * Compares J·v with central differences at two steps; elements where the two
 * differences disagree (a kink, a jump or a branch within the step) or are not
 * finite are skipped: no derivative is defined there to compare with.
 */
function checkCase(seed: number, stats: Checked): void {
  const c = randomCase(seed, "float64", { allowCompare: true });
  const g = concretize(c.graph, c.inputTypes);
  const xs = randomInputs(c).map((v) => f64(v.type, v.data));
  const r = rng(seed ^ 0x5bd1e995);
  const vs = xs.map((x) => randomVec(r, x.type));
  const jg = jvpGraph(g);
  const jv = interpret(jg, [...xs, ...vs]).slice(g.outputs.length);
  const a = fd(g, xs, vs, 1e-4);
  const b = fd(g, xs, vs, 1e-5);
  jv.forEach((o, i) => {
    o.data.forEach((got, k) => {
      const f1 = a[i]![k]!;
      const f2 = b[i]![k]!;
      const scale = Math.max(1, Math.abs(f2));
      if (!Number.isFinite(f1) || !Number.isFinite(f2) || Math.abs(f1 - f2) > 1e-7 * scale) return;
      if (!Number.isFinite(got)) return;
      stats.compared++;
      expect(Math.abs(got - f2), `seed ${seed} output ${i} element ${k}: jvp ${got} vs FD ${f2}`).toBeLessThanOrEqual(
        1e-6 * scale,
      );
    });
  });
  // ⟨u, J·v⟩ = ⟨uᵀ·J, v⟩ wherever everything is finite.
  const us = g.outputs.map((o, i) => randomVec(r, jv[i]!.type));
  const vg = vjpGraph(g);
  const uJ = interpret(vg, [...xs, ...us]).slice(g.outputs.length);
  const lhs = dot(us, jv);
  const rhs = dot(uJ, vs);
  if (Number.isFinite(lhs) && Number.isFinite(rhs)) {
    expect(Math.abs(lhs - rhs), `seed ${seed}: <u, Jv> ${lhs} vs <uJ, v> ${rhs}`).toBeLessThanOrEqual(
      1e-9 * Math.max(1, Math.abs(lhs)),
    );
  }
}

describe("derivative graphs on random graphs (float64)", () => {
  it("J·v matches central differences and <u, J·v> = <uᵀJ, v>", () => {
    const stats: Checked = { compared: 0 };
    fc.assert(
      fc.property(seedArb, (seed) => checkCase(seed, stats)),
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
