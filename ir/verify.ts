/** The IR verifier: runs before and after the pass pipeline (docs/ARCHITECTURE.md, Fusion and the schedule). */
import { IRError } from "./errors.js";
import { hasOp, topoOrder, type Graph } from "./graph.js";
import { attrProblem, OPS } from "./ops.js";
import { fmtType } from "./types.js";

export function verifyGraph(g: Graph, where = "verify"): void {
  const fail = (msg: string): never => {
    throw new IRError(`${where}: graph @${g.name}: ${msg}`);
  };
  if (g.inputNames.length !== g.inputs.length) fail("input names and inputs differ in length");
  if (new Set(g.inputNames).size !== g.inputNames.length) fail("duplicate input names");
  g.inputs.forEach((n, i) => {
    if (!hasOp(n, "input")) return fail(`input ${i} is a ${n.op} node`);
    if (n.attrs.index !== i) fail(`input ${i} has index ${n.attrs.index}`);
  });
  if (g.outputs.length === 0) fail("no outputs");
  for (const n of topoOrder(g)) {
    if (n.op === "input") continue;
    const info = OPS[n.op];
    if (info.arity >= 0 && n.inputs.length !== info.arity)
      fail(`${n.op} has ${n.inputs.length} inputs, expects ${info.arity}`);
    const bad = attrProblem(n.op, n.attrs);
    if (bad !== undefined) fail(`${n.op} has bad attributes: ${bad}`);
    const t = info.type(
      n.op,
      n.inputs.map((i) => i.type),
      n.attrs,
    );
    if (fmtType(t) !== fmtType(n.type)) fail(`${n.op} is typed ${fmtType(n.type)} but its rule gives ${fmtType(t)}`);
  }
}
