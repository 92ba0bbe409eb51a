/**
 * The rewrite driver (docs/ARCHITECTURE.md, Passes): a pass is a list of rules; the driver
 * rebuilds the graph bottom-up, applying the first matching rule at each node
 * until none matches, and repeats over the graph until nothing changes. It has a
 * step limit and, when it is reached, names the rule that kept firing.
 */
import { IRError } from "../ir/errors.js";
import { Node, type Graph } from "../ir/graph.js";
import { rewriteGraph } from "./rewrite.js";

export interface Rule {
  readonly name: string;
  /** Returns the replacement for `n`, or undefined when the rule does not apply. */
  readonly apply: (n: Node) => Node | undefined;
}

export const DEFAULT_STEP_LIMIT = 10_000;

export function runRules(g: Graph, rules: readonly Rule[], passName: string, stepLimit = DEFAULT_STEP_LIMIT): Graph {
  let steps = 0;
  const counts = new Map<string, number>();
  const fire = (n: Node): Node => {
    let cur = n;
    for (;;) {
      let next: Node | undefined;
      for (const r of rules) {
        next = r.apply(cur);
        if (next !== undefined && next !== cur) {
          counts.set(r.name, (counts.get(r.name) ?? 0) + 1);
          if (++steps > stepLimit) {
            const top = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
            throw new IRError(
              `${passName}: rewrite did not settle after ${stepLimit} steps; rule "${top[0]}" fired ${top[1]} times`,
            );
          }
          break;
        }
        next = undefined;
      }
      if (next === undefined) return cur;
      cur = next;
    }
  };
  let cur = g;
  for (;;) {
    const next = rewriteGraph(cur, (n, inputs) =>
      fire(inputs.every((x, i) => x === n.inputs[i]) ? n : rebuild(n, inputs)),
    );
    if (next.outputs.every((o, i) => o === cur.outputs[i])) return next;
    cur = next;
  }
}

function rebuild(n: Node, inputs: readonly Node[]): Node {
  return Node.make(n.op, inputs, n.attrs);
}
