/**
 * The rewrite driver (docs/ARCHITECTURE.md, Passes): a pass is a list of rules; the driver
 * rebuilds the graph bottom-up, applying the first matching rule at each node
 * until none matches, and repeats over the graph until nothing changes. It has a
 * step limit and, when it is reached, names the rule that kept firing.
 */
import { IRError } from "../ir/errors.js";
import { Node, type Graph } from "../ir/graph.js";
import { fmtType } from "../ir/types.js";
import { rewriteGraph } from "./rewrite.js";

export interface Rule {
  readonly name: string;
  /** Returns the replacement for `n`, or undefined when the rule does not apply. */
  readonly apply: (n: Node) => Node | undefined;
}

/**
 * Whether `kept` may replace `n` while the other operands `dropped` are left out: only
 * when nothing can tell at run time. The printed types must be equal, and every batch
 * dim of a dropped operand must be a literal that broadcasts into `kept`'s without
 * changing it (1, or the same size). Equal *symbols* prove nothing: each operand binds
 * its own size at run time, and a dim that is 1 in one of them broadcasts against the
 * other's (`where(c, x, x)` with `c (3;)` and `x (1;)` is `(3;)`, not `x`); and a
 * symbol against a literal size is a check (`c` must be 1 or that size) that dropping
 * `c` would lose. Base shapes are static, so the type equality covers them.
 */
export function replaces(n: Node, kept: Node, dropped: readonly Node[] = []): boolean {
  if (fmtType(n.type) !== fmtType(kept.type)) return false;
  const kb = kept.type.batch;
  return dropped.every((d) => {
    const off = kb.length - d.type.batch.length;
    return off >= 0 && d.type.batch.every((dim, i) => dim === 1 || (typeof dim === "number" && dim === kb[off + i]));
  });
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
