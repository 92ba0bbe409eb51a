/**
 * Lowering: ops that kernels do not know become ops they do.
 * matmul(a (…,n,k), b (…,k,m)) -> sum(mul(reshape a (…,n,k,1), reshape b (…,1,k,m)), axis -2),
 * which fusion turns into one reduction kernel with the product as its prologue.
 */
import { Node } from "../ir/graph.js";
import type { Graph } from "../ir/graph.js";
import { rewriteGraph } from "./rewrite.js";

function lowerMatmul(n: Node, [a, b]: readonly Node[]): Node {
  const K = a!.type.base[a!.type.base.length - 1]!;
  const am = a!.type.base.length === 1 ? Node.make("reshape", [a!], { shape: [1, K] }) : a!;
  const bm = b!.type.base.length === 1 ? Node.make("reshape", [b!], { shape: [K, 1] }) : b!;
  const a3 = Node.make("reshape", [am], { shape: [...am.type.base, 1] });
  const bb = bm.type.base;
  const b3 = Node.make("reshape", [bm], { shape: [...bb.slice(0, -2), 1, ...bb.slice(-2)] });
  const p = Node.make("mul", [a3, b3]);
  let s: Node = Node.make("sum", [p], { batchAxes: [], baseAxes: [p.type.base.length - 2], keep: false });
  if (s.type.base.join() !== n.type.base.join()) s = Node.make("reshape", [s], { shape: [...n.type.base] });
  return s;
}

export function lowerOps(g: Graph): Graph {
  return rewriteGraph(g, (n, inputs) => (n.op === "matmul" ? lowerMatmul(n, inputs) : undefined));
}
