/**
 * Rebuilds a graph bottom-up through a node rewrite function. Rewrites return a
 * new node (built from already rewritten inputs) or undefined to keep the node
 * (rebuilt on its rewritten inputs). Hash-consing makes unchanged subgraphs free;
 * nodes of equal structure become one node (CSE).
 */
import { makeGraph, Node, topoOrder, type Graph } from "../ir/graph.js";
import type { Op } from "../ir/ops.js";

export type NodeRewrite = (n: Node, inputs: readonly Node[]) => Node | undefined;

export function rewriteGraph(g: Graph, rewrite: NodeRewrite): Graph {
  const map = new Map<Node, Node>();
  // One node per structural key within the graph: hash-consing's table is bounded (ir/graph.ts), so two
  // equal nodes made far apart can be distinct objects; here they become one (exact CSE).
  const byKey = new Map<string, Node>();
  for (const n of topoOrder(g)) {
    if (n.op === "input") {
      map.set(n, n);
      continue;
    }
    const inputs = n.inputs.map((i) => map.get(i)!);
    const r =
      rewrite(n, inputs) ?? (inputs.every((x, i) => x === n.inputs[i]) ? n : Node.make<Op>(n.op, inputs, n.attrs));
    const canonical = byKey.get(r.key);
    if (canonical === undefined) byKey.set(r.key, r);
    map.set(n, canonical ?? r);
  }
  return makeGraph(
    g.name,
    g.inputs,
    g.outputs.map((o) => map.get(o)!),
    g.inputNames,
  );
}
