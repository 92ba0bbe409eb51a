/**
 * Concrete shape inference: re-runs every node's type rule on the concrete
 * shapes of one call. This is how a graph traced with symbolic batch dims binds
 * to real batch sizes, and where run-time shape mismatches become ShapeErrors.
 */
import { ShapeError } from "./errors.js";
import type { Node } from "./graph.js";
import { OPS } from "./ops.js";
import { fmtType, isConcrete, type TensorType } from "./types.js";

export interface ConcreteType extends TensorType {
  readonly batch: readonly number[];
}

export function inferConcrete(order: readonly Node[], inputTypes: ReadonlyMap<Node, ConcreteType>): Map<Node, ConcreteType> {
  const out = new Map<Node, ConcreteType>();
  for (const n of order) {
    if (n.op === "input") {
      const t = inputTypes.get(n);
      if (t === undefined) throw new ShapeError(`input ${String(n.attrs.index)}: no value bound`);
      out.set(n, t);
      continue;
    }
    const t = OPS[n.op].type(n.op, n.inputs.map((i) => out.get(i)!), n.attrs);
    if (!isConcrete(t.batch)) throw new ShapeError(`${n.op}: could not resolve the batch shape ${fmtType(t)}`);
    out.set(n, t as ConcreteType);
  }
  return out;
}
