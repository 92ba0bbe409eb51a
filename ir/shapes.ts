/**
 * Concrete shape inference: re-runs every node's type rule on the concrete
 * shapes of one call. This is how a graph traced with symbolic batch dims binds
 * to real batch sizes, and where run-time shape mismatches become ShapeErrors.
 */
import { ShapeError } from "./errors.js";
import { hasOp, type Node } from "./graph.js";
import { checkElementCount, OPS } from "./ops.js";

import { fmtType, isConcrete, type TensorType } from "./types.js";

export { checkElementCount, MAX_ELEMENTS } from "./ops.js";

export interface ConcreteType extends TensorType {
  readonly batch: readonly number[];
}

/**
 * Nodes whose padded length is data: segment_pad/segment_mask with `maxN: -1`
 * (pad to the longest row). Their offsets must be graph inputs, whose values the
 * caller reads on the host before binding (see `longestRow`).
 */
export function runtimeLengthNodes(order: readonly Node[]): Node[] {
  const out: Node[] = [];
  for (const n of order) {
    if (!hasOp(n, "segment_pad", "segment_mask") || n.attrs.maxN >= 0) continue;
    const offsets = n.op === "segment_pad" ? n.inputs[1]! : n.inputs[0]!;
    if (offsets.op !== "input")
      throw new ShapeError(
        `${n.op}: padding to the longest row reads the offsets at run time, so they must be an input (give maxLength otherwise)`,
      );
    out.push(n);
  }
  return out;
}

/** The offsets input of a `runtimeLengthNodes` node. */
export function runtimeLengthOffsets(n: Node): Node {
  return n.op === "segment_pad" ? n.inputs[1]! : n.inputs[0]!;
}

/** The longest row of int32 offsets `[o0, o1, …]` (0 for no rows). */
export function longestRow(offsets: ArrayLike<number>): number {
  let m = 0;
  for (let i = 1; i < offsets.length; i++) m = Math.max(m, offsets[i]! - offsets[i - 1]!);
  return m;
}

/**
 * Concrete types of every node. `runtimeLengths` binds the padded length of each
 * `runtimeLengthNodes` node for this call.
 */
export function inferConcrete(
  order: readonly Node[],
  inputTypes: ReadonlyMap<Node, ConcreteType>,
  runtimeLengths?: ReadonlyMap<Node, number>,
): Map<Node, ConcreteType> {
  const out = new Map<Node, ConcreteType>();
  for (const n of order) {
    if (hasOp(n, "input")) {
      const t = inputTypes.get(n);
      if (t === undefined) throw new ShapeError(`input ${n.attrs.index}: no value bound`);
      out.set(n, t);
      continue;
    }
    const len = runtimeLengths?.get(n);
    const attrs = len === undefined ? n.attrs : { ...n.attrs, maxN: len };
    const t = OPS[n.op].type(
      n.op,
      n.inputs.map((i) => out.get(i)!),
      attrs,
    );
    if (!isConcrete(t.batch)) throw new ShapeError(`${n.op}: could not resolve the batch shape ${fmtType(t)}`);
    // Sizes bound per call: a broadcast, expand or pad may reach the element limit only now.
    checkElementCount(n.op, t);
    out.set(n, t as ConcreteType);
  }
  return out;
}
