/**
 * A schedule: what the pass pipeline hands the runtime. An ordered list of
 * kernel launches and buffer views over the nodes of one graph.
 */
import type { Graph, Node } from "./graph.js";
import type { Kernel } from "./kernel.js";

/**
 * One step of a program: a kernel launch, a view that aliases a buffer, or block
 * copies. `N` names nodes: graph nodes here, their indices in a bundle.
 */
export type StepOf<N> =
  | {
      readonly kind: "kernel";
      readonly kernel: Kernel;
      /** Materialized nodes read, in kernel input order. */
      readonly inputs: readonly N[];
      /** Nodes written, in kernel output order. */
      readonly outputs: readonly N[];
      /** The node whose (concrete) batch shape is the iteration space's batch shape. */
      readonly space: N;
    }
  | { readonly kind: "view"; readonly node: N; readonly source: N }
  /** A batch slice or concatenation: block copies from the sources' buffers into the node's. */
  | { readonly kind: "copy"; readonly node: N; readonly sources: readonly N[] };

export type Step = StepOf<Node>;

/** The same step with every node renamed by `f`. */
export function mapStep<A, B>(st: StepOf<A>, f: (n: A) => B): StepOf<B> {
  switch (st.kind) {
    case "kernel":
      return {
        kind: "kernel",
        kernel: st.kernel,
        inputs: st.inputs.map(f),
        outputs: st.outputs.map(f),
        space: f(st.space),
      };
    case "view":
      return { kind: "view", node: f(st.node), source: f(st.source) };
    case "copy":
      return { kind: "copy", node: f(st.node), sources: st.sources.map(f) };
  }
}

export interface Schedule {
  readonly graph: Graph;
  readonly order: readonly Node[];
  readonly steps: readonly Step[];
}
