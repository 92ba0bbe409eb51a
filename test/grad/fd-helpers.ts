/**
 * Finite-difference checks of the derivative graphs: J·v against central
 * differences of the reference interpreter (float64) at two steps, and
 * ⟨u, J·v⟩ = ⟨uᵀ·J, v⟩.
 */
import { expect } from "vitest";
import { makeGraph, Node, topoOrder, type Graph } from "../../ir/graph.js";
import { interpret, type Value } from "../../ir/interpret.js";
import type { ConcreteType } from "../../ir/shapes.js";
import { jvpGraph, vjpGraph } from "../../passes/autodiff.js";
import { rng } from "../helpers/random-graph.js";

/** The graph rebuilt with concrete input types (so which dims broadcast is known statically). */
export function concretize(g: Graph, types: readonly ConcreteType[]): Graph {
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

export const f64 = (t: ConcreteType, data: ArrayLike<number>): Value => ({ type: t, data: Float64Array.from(data) });
const isF = (t: ConcreteType): boolean => t.dtype === "float64" || t.dtype === "float32";
const size = (t: ConcreteType): number => [...t.batch, ...t.base].reduce((a, b) => a * b, 1);

/** A random direction (zeros for integer and bool inputs, which have no derivative). */
export function randomVec(r: () => number, t: ConcreteType): Value {
  if (!isF(t))
    return {
      type: t,
      data: new (t.dtype === "int32" ? Int32Array : t.dtype === "uint32" ? Uint32Array : Uint8Array)(size(t)),
    };
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

export interface Checked {
  compared: number;
}

/**
 * Compares J·v with central differences at two steps; elements where the two
 * differences disagree (a kink, a jump or a branch within the step) or are not
 * finite are skipped: no derivative is defined there to compare with.
 */
export function checkDerivatives(g: Graph, xs: readonly Value[], seed: number, stats: Checked): void {
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
