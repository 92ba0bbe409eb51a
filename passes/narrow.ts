/**
 * Narrow dtypes compute in 32 bits (docs/ARCHITECTURE.md, dtypes): every op that
 * computes (elementwise ops, reductions, segment reductions, matmul) on a uint8,
 * int8, uint16 or int16 operand is rebuilt on operands cast to the 32-bit integer of
 * the same signedness (float16: to float32), and its result is cast back to the
 * node's own dtype. The cast back is the wrap: NumPy's modular integer arithmetic,
 * op by op (int8 127 + 1 = -128), and one float16 rounding per op.
 *
 * Afterwards no kernel computes on a narrow dtype: narrow values are only loaded,
 * stored, selected (`where`), moved (movement ops, `take`, concatenations, padding)
 * and cast, which is all a code generator has to know about them. The pass runs
 * first, so the rules of the later passes see the 32-bit ops; the reference
 * interpreter computes on the narrow dtypes directly, so it checks this pass too.
 */
import { computeDType, isNarrowInt, type DType } from "../ir/dtype.js";
import { isBinaryOp, isUnaryOp } from "../ir/elementwise.js";
import { isReduceNode, Node, type Graph } from "../ir/graph.js";
import type { Op } from "../ir/ops.js";
import { rewriteGraph } from "./rewrite.js";

/** A dtype stored narrow and computed in 32 bits. */
export function isNarrow(d: DType): boolean {
  return isNarrowInt(d) || d === "float16";
}

/** Ops whose result is computed from their operands' values (not only moved or selected). */
function computes(n: Node): boolean {
  return isUnaryOp(n.op) || isBinaryOp(n.op) || isReduceNode(n) || n.op === "segment_reduce" || n.op === "matmul";
}

function widen(n: Node, inputs: readonly Node[]): Node | undefined {
  if (!computes(n) || !inputs.some((x) => isNarrow(x.type.dtype))) return undefined;
  const wide = inputs.map((x) =>
    isNarrow(x.type.dtype) ? Node.make("cast", [x], { dtype: computeDType(x.type.dtype) }) : x,
  );
  const r = Node.make<Op>(n.op, wide, n.attrs);
  return r.type.dtype === n.type.dtype ? r : Node.make("cast", [r], { dtype: n.type.dtype });
}

/** The graph with every computation on a narrow dtype done in 32 bits (see the module comment). */
export function widenNarrow(g: Graph): Graph {
  return rewriteGraph(g, widen);
}
