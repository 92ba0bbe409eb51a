/**
 * The IR text form, the contract for dumps, goldens and bundles: stable names
 * (`%name` for inputs, `%0, %1…` in order), sorted attrs, a type on every value.
 * `parseGraph(printGraph(g))` prints back to the same text.
 */
import { IRError } from "./errors.js";
import { fmtAttrs, topoOrder, type Graph, type Node } from "./graph.js";
import { fmtType } from "./types.js";

/** The graph as IR text, one node per line in topological order; `parseGraph` reads it back. */
export function printGraph(g: Graph): string {
  if (
    typeof g !== "object" ||
    g === null ||
    !Array.isArray(g.inputs) ||
    !Array.isArray(g.outputs) ||
    !Array.isArray(g.inputNames)
  ) {
    throw new IRError(
      `printGraph: g must be a graph (name, inputs, inputNames, outputs), got ${g === null ? "null" : typeof g}`,
    );
  }
  const names = new Map<Node, string>();
  g.inputs.forEach((n, i) => names.set(n, `%${g.inputNames[i]}`));
  const lines: string[] = [];
  const params = g.inputs.map((n, i) => `%${g.inputNames[i]}: ${fmtType(n.type)}`).join(", ");
  const results = g.outputs.map((n) => fmtType(n.type)).join(", ");
  lines.push(`func @${g.name}(${params}) -> (${results}) {`);
  let next = 0;
  for (const n of topoOrder(g)) {
    if (n.op === "input") continue;
    const name = `%${next++}`;
    names.set(n, name);
    const operands = n.inputs.map((i) => names.get(i)!).join(", ");
    const attrs = fmtAttrs(n.attrs);
    const parts = [n.op, operands, attrs].filter((s) => s.length > 0).join(" ");
    lines.push(`  ${name} = ${parts} : ${fmtType(n.type)}`);
  }
  lines.push(`  return ${g.outputs.map((n) => names.get(n)!).join(", ")}`);
  lines.push("}");
  return lines.join("\n");
}
