/**
 * A schedule: what the pass pipeline hands the runtime. An ordered list of
 * kernel launches and buffer views over the nodes of one graph.
 */
import type { Graph, Node } from "./graph.js";
import type { Kernel } from "./kernel.js";

/** One step of a program: a kernel launch, or a view that aliases a buffer. */
export type Step =
  | {
      readonly kind: "kernel";
      readonly kernel: Kernel;
      /** Materialized nodes read, in kernel input order. */
      readonly inputs: readonly Node[];
      /** Nodes written, in kernel output order. */
      readonly outputs: readonly Node[];
      /** The node whose (concrete) batch shape is the iteration space's batch shape. */
      readonly space: Node;
    }
  | { readonly kind: "view"; readonly node: Node; readonly source: Node }
  /** A batch slice or concatenation: block copies from the sources' buffers into the node's. */
  | { readonly kind: "copy"; readonly node: Node; readonly sources: readonly Node[] };

export interface Schedule {
  readonly graph: Graph;
  readonly order: readonly Node[];
  readonly steps: readonly Step[];
}

