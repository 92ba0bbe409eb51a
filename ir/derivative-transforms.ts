/**
 * The two graph transforms that apply the derivative rules (ir/derivatives.ts): forward
 * mode (`jvpValues`, tangents) and reverse mode (`vjpValues`, cotangents), generic over the
 * value type as the rules are; `src/grad.ts` runs them on lazy Tensors, `passes/autodiff.ts`
 * on graph Nodes.
 */
import { postOrder } from "./graph.js";
import type { Attrs, Op } from "./ops.js";
import { RULES } from "./derivatives.js";
import { floatLike, type Diff, type Lin, type Prim, type Rule } from "./diff.js";

/** How a transform sees the values: the op behind a value, or undefined for a leaf. */
export interface Source<V> {
  def(v: V): { readonly op: Op; readonly inputs: readonly V[]; readonly attrs: Attrs } | undefined;
}

/** Values reachable from `outputs` (stopping at `stops` and leaves), each after its operands. */
function topo<V>(src: Source<V>, outputs: readonly V[], stops: ReadonlySet<V>): V[] {
  return postOrder(outputs, (v) => (stops.has(v) ? [] : (src.def(v)?.inputs ?? [])));
}

function prim<V>(src: Source<V>, v: V): Prim<V> {
  const def = src.def(v)!;
  return { op: def.op, inputs: def.inputs, attrs: def.attrs as never, out: v };
}

/**
 * Forward mode: the tangents of `outputs` given the tangents of some values
 * (`seeds`; values not reached from them have zero tangents).
 */
export function jvpValues<V>(
  d: Diff<V>,
  src: Source<V>,
  outputs: readonly V[],
  seeds: ReadonlyMap<V, Lin<V>>,
): Lin<V>[] {
  const stops = new Set(seeds.keys());
  const order = topo(src, outputs, stops);
  const tan = new Map<V, Lin<V>>();
  for (const v of order) {
    if (seeds.has(v)) {
      tan.set(v, floatLike(d.type(v)) ? d.fit(seeds.get(v)!, d.type(v)) : null);
      continue;
    }
    const def = src.def(v);
    if (def === undefined) continue;
    const ts = def.inputs.map((i) => d.nz(tan.get(i) ?? null));
    if (ts.every((t) => t === null) || !floatLike(d.type(v))) continue;
    const p = prim(src, v);
    const rule = RULES[p.op] as Rule<Op>;
    tan.set(v, d.fit(rule.jvp(d, p, ts), d.type(v)));
  }
  return outputs.map((o) => tan.get(o) ?? null);
}

/**
 * Reverse mode: the cotangents of `leaves` given cotangents of `outputs`
 * (null: zero). A leaf's cotangent has the leaf's base shape; its batch shape
 * may be smaller (it broadcasts): callers materialize it.
 */
export function vjpValues<V>(
  d: Diff<V>,
  src: Source<V>,
  outputs: readonly V[],
  cts: readonly Lin<V>[],
  leaves: readonly V[],
): Lin<V>[] {
  const stops = new Set(leaves);
  const order = topo(src, outputs, stops);
  // Active values: those that depend on a leaf.
  const active = new Set<V>();
  for (const v of order) {
    if (stops.has(v)) {
      active.add(v);
      continue;
    }
    const def = src.def(v);
    if (def !== undefined && def.inputs.some((i) => active.has(i))) active.add(v);
  }
  const ct = new Map<V, Lin<V>>();
  const acc = (v: V, g: Lin<V>): void => {
    if (!active.has(v) || !floatLike(d.type(v))) return;
    g = d.nz(g);
    if (g === null) return;
    ct.set(v, d.add(ct.get(v) ?? null, g));
  };
  outputs.forEach((o, i) => acc(o, cts[i] === null ? null : d.fit(cts[i]!, d.type(o))));
  for (let k = order.length - 1; k >= 0; k--) {
    const v = order[k]!;
    if (stops.has(v)) continue;
    const g = ct.get(v);
    if (g === undefined || g === null) continue;
    const p = prim(src, v);
    const rule = RULES[p.op] as Rule<Op>;
    const gs = rule.vjp(d, p, d.fit(g, d.type(v))!);
    p.inputs.forEach((x, i) => acc(x, d.fit(gs[i] ?? null, d.type(x))));
  }
  return leaves.map((l) => ct.get(l) ?? null);
}
