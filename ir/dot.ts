/**
 * Graphviz DOT export of a graph, or of a schedule with one cluster per kernel,
 * so a user can look at what fused with what (`dot -Tsvg`).
 */
import { fmtAttrs, topoOrder, type Graph, type Node } from "./graph.js";
import type { Schedule } from "./schedule.js";
import { fmtType } from "./types.js";

const esc = (s: string): string => s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

function nodeNames(g: Graph): Map<Node, string> {
  const names = new Map<Node, string>();
  g.inputs.forEach((n, i) => names.set(n, `%${g.inputNames[i]}`));
  let next = 0;
  for (const n of topoOrder(g)) if (!names.has(n)) names.set(n, `%${next++}`);
  return names;
}

function label(n: Node, name: string): string {
  const attrs = fmtAttrs(n.attrs);
  return esc(`${name} = ${n.op}${attrs ? ` ${attrs}` : ""}\n${fmtType(n.type)}`);
}

/** DOT of a graph; `clusterOf` (optional) puts nodes in named clusters. */
export function graphToDot(g: Graph, clusterOf?: (n: Node) => string | undefined): string {
  const names = nodeNames(g);
  const order = topoOrder(g);
  const lines = [
    `digraph "${esc(g.name)}" {`,
    "  rankdir=TB;",
    '  node [shape=box, fontname="monospace", fontsize=10];',
  ];
  const clusters = new Map<string, Node[]>();
  const loose: Node[] = [];
  for (const n of order) {
    const c = clusterOf?.(n);
    if (c === undefined) loose.push(n);
    else {
      const list = clusters.get(c) ?? [];
      list.push(n);
      clusters.set(c, list);
    }
  }
  const emit = (n: Node, indent: string): void => {
    const shape = n.op === "input" ? ", shape=ellipse" : n.op === "const" ? ", shape=plaintext" : "";
    lines.push(`${indent}n${n.id} [label="${label(n, names.get(n)!)}"${shape}];`);
  };
  loose.forEach((n) => emit(n, "  "));
  let k = 0;
  for (const [name, nodes] of clusters) {
    lines.push(`  subgraph cluster_${k++} {`, `    label="${esc(name)}";`, "    style=rounded;");
    nodes.forEach((n) => emit(n, "    "));
    lines.push("  }");
  }
  for (const n of order) for (const i of n.inputs) lines.push(`  n${i.id} -> n${n.id};`);
  g.outputs.forEach((o, i) => lines.push(`  out${i} [label="return ${i}", shape=ellipse];`, `  n${o.id} -> out${i};`));
  lines.push("}");
  return lines.join("\n");
}

/** DOT of a schedule: each kernel is a cluster holding the nodes it computes (inlined nodes included). */
export function scheduleToDot(s: Schedule): string {
  const cluster = new Map<Node, string>();
  let k = 0;
  for (const step of s.steps) {
    if (step.kind === "view" || step.kind === "copy") {
      cluster.set(step.node, step.kind);
      continue;
    }
    const name = `kernel ${k++}`;
    const stop = new Set(step.inputs);
    const visit = (n: Node): void => {
      if (stop.has(n) || cluster.has(n) || n.op === "input") return;
      cluster.set(n, name);
      n.inputs.forEach(visit);
    };
    step.outputs.forEach(visit);
  }
  return graphToDot(s.graph, (n) => cluster.get(n));
}
