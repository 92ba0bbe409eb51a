/**
 * Derivatives as graph-to-graph transforms on the IR (the rules of
 * `ir/derivatives.ts` instantiated on graph nodes):
 *
 *  - `jvpGraph(g)`: inputs `(x…, t…)`, outputs `(f(x)…, J·t…)`, one tangent
 *    input per input of `g` with the same type;
 *  - `vjpGraph(g)`: inputs `(x…, u…)`, outputs `(f(x)…, uᵀ·J…)`, one cotangent
 *    input per output of `g` with the same type, and one cotangent output per
 *    input (zeros for integer and bool inputs).
 *
 * The results are ordinary graphs: the pass pipeline simplifies and fuses them.
 */
import { jvpValues, vjpValues, type Source } from "../ir/derivative-transforms.js";
import { Diff, type Builder, type Lin } from "../ir/diff.js";
import { makeGraph, Node, type Graph } from "../ir/graph.js";
import type { Attrs, Op } from "../ir/ops.js";

const BUILDER: Builder<Node> = {
  make: (op: Op, inputs: readonly Node[], attrs?: Attrs) => Node.make(op, inputs, attrs ?? {}),
  typeOf: (n) => n.type,
};
const SOURCE: Source<Node> = {
  def: (n) => (n.op === "input" ? undefined : n),
};

/** A tangent or cotangent as a node of exactly `like`'s type (zeros for the symbolic zero). */
function materialize(d: Diff<Node>, v: Lin<Node>, like: Node): Node {
  return d.full(d.fit(v, like.type) ?? d.zeros(like.type), like.type, like);
}

/** Forward mode: `(x…, t…) → (f(x)…, J·t…)`. */
export function jvpGraph(g: Graph): Graph {
  const d = new Diff(BUILDER);
  const n = g.inputs.length;
  const tangents = g.inputs.map((x, i) => Node.make("input", [], { index: n + i }, x.type));
  const seeds = new Map<Node, Lin<Node>>(g.inputs.map((x, i) => [x, tangents[i]!]));
  const outs = jvpValues(d, SOURCE, g.outputs, seeds).map((t, i) => materialize(d, t, g.outputs[i]!));
  return makeGraph(
    `${g.name}_jvp`,
    [...g.inputs, ...tangents],
    [...g.outputs, ...outs],
    [...g.inputNames, ...g.inputNames.map((s) => `d${s}`)],
  );
}

/** Reverse mode: `(x…, u…) → (f(x)…, uᵀ·J…)`. */
export function vjpGraph(g: Graph): Graph {
  const d = new Diff(BUILDER);
  const n = g.inputs.length;
  const cts = g.outputs.map((y, i) => Node.make("input", [], { index: n + i }, y.type));
  const gs = vjpValues(d, SOURCE, g.outputs, cts, g.inputs).map((v, i) => materialize(d, v, g.inputs[i]!));
  return makeGraph(
    `${g.name}_vjp`,
    [...g.inputs, ...cts],
    [...g.outputs, ...gs],
    [...g.inputNames, ...g.outputs.map((_, i) => `u${i}`)],
  );
}
