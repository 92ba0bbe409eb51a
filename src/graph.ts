/**
 * From tensors to IR: walks the pending ops behind some tensors and builds a
 * graph whose inputs are the tensors' leaves (jit parameters first, then
 * realized buffers), with symbolic batch dims so the graph (and its kernels)
 * serve every batch size.
 */
import { BackendError, TraceError } from "../ir/errors.js";
import { makeGraph, Node, type Graph } from "../ir/graph.js";
import type { Dim, TensorType } from "../ir/types.js";
import type { Tensor } from "./tensor.js";

export interface BuiltGraph {
  readonly graph: Graph;
  /** The tensors bound to the graph inputs after the parameters, in input order. */
  readonly captured: readonly Tensor[];
}

/** Batch dims named by their position aligned from the right: rank r of R gives b{R-r}..b{R-1}. */
export function symbolize(t: TensorType, maxRank: number): TensorType {
  const r = t.batch.length;
  const batch: Dim[] = t.batch.map((_, j) => `b${maxRank - r + j}`);
  return { dtype: t.dtype, batch, base: t.base };
}

/**
 * Builds the graph computing `outputs`. `params` are a trace's parameter tensors
 * (already symbolic); any realized tensor reached becomes a captured input.
 * `traceId` names the trace whose parameters may appear (undefined: none may).
 */
export function buildGraph(
  name: string,
  outputs: readonly Tensor[],
  params: readonly Tensor[],
  traceId?: number,
): BuiltGraph {
  const leaves: Tensor[] = [...params];
  const seen = new Set<Tensor>(params);
  // First pass: find the realized leaves in a deterministic (DFS) order.
  const visited = new Set<Tensor>();
  const stack: Tensor[] = [...outputs].reverse();
  const order: Tensor[] = [];
  while (stack.length > 0) {
    const t = stack.pop()!;
    if (visited.has(t)) continue;
    visited.add(t);
    order.push(t);
    const s = t._src;
    if (s.kind === "buffer") {
      if (!seen.has(t)) {
        seen.add(t);
        leaves.push(t);
      }
    } else if (s.kind === "param") {
      if (s.traceId !== traceId)
        throw new TraceError("a traced value escaped its jit function and was used outside it");
    } else if (s.kind === "disposed") {
      throw new BackendError(`a disposed tensor ${t.toString()} was used`);
    } else {
      for (let i = s.inputs.length - 1; i >= 0; i--) stack.push(s.inputs[i]!);
    }
  }
  const maxRank = Math.max(0, ...leaves.map((t) => t._type.batch.length));
  const nodes = new Map<Tensor, Node>();
  const inputs = leaves.map((t, index) => {
    const type = t._src.kind === "param" ? t._type : symbolize(t._type, maxRank);
    const n = Node.make("input", [], { index }, type);
    nodes.set(t, n);
    return n;
  });
  const build = (root: Tensor): Node => {
    // Iterative post-order so long op chains do not overflow the stack.
    const work: { t: Tensor; expanded: boolean }[] = [{ t: root, expanded: false }];
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      if (nodes.has(top.t)) {
        work.pop();
        continue;
      }
      const s = top.t._src;
      if (s.kind !== "lazy") throw new TraceError("a traced value escaped its jit function and was used outside it");
      if (!top.expanded) {
        top.expanded = true;
        for (const i of s.inputs) if (!nodes.has(i)) work.push({ t: i, expanded: false });
        continue;
      }
      work.pop();
      nodes.set(
        top.t,
        Node.make(
          s.op,
          s.inputs.map((i) => nodes.get(i)!),
          s.attrs,
        ),
      );
    }
    return nodes.get(root)!;
  };
  const outs = outputs.map(build);
  const names = leaves.map((_, i) => (i < params.length ? `x${i}` : `c${i - params.length}`));
  return { graph: makeGraph(name, inputs, outs, names), captured: leaves.slice(params.length) };
}
