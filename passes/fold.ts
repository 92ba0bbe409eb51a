/**
 * Constant folding: an elementwise op whose operands are all scalar constants
 * becomes a constant, computed by the reference interpreter's own scalar
 * functions and rounded to the result dtype, so folding never changes a value.
 */
import { castScalar } from "../ir/dtype.js";
import { isBinaryOp, isUnaryOp } from "../ir/elementwise.js";
import { attrsOf, Node } from "../ir/graph.js";
import { binaryRef, unaryRef } from "../ir/interpret.js";
import { replaces, type Rule } from "./driver.js";

const value = (n: Node): number => attrsOf(n, "const").value;
const isConst = (n: Node): boolean => n.op === "const";

function constant(v: number, n: Node): Node {
  return Node.make("const", [], { dtype: n.type.dtype, value: castScalar(v, n.type.dtype) });
}

export const FOLD_RULES: readonly Rule[] = [
  // unary(c) -> c'
  {
    name: "fold-unary",
    apply: (n) =>
      isUnaryOp(n.op) && isConst(n.inputs[0]!)
        ? constant(unaryRef(n.op, value(n.inputs[0]!), n.inputs[0]!.type.dtype), n)
        : undefined,
  },
  // binary(c1, c2) -> c3
  {
    name: "fold-binary",
    apply: (n) =>
      isBinaryOp(n.op) && isConst(n.inputs[0]!) && isConst(n.inputs[1]!)
        ? constant(binaryRef(n.op, value(n.inputs[0]!), value(n.inputs[1]!), n.inputs[0]!.type.dtype), n)
        : undefined,
  },
  // cast(c) -> c'
  {
    name: "fold-cast",
    apply: (n) => (n.op === "cast" && isConst(n.inputs[0]!) ? constant(value(n.inputs[0]!), n) : undefined),
  },
  // where(c, x, y) with a constant condition -> x or y, when the branch left out cannot broadcast the one
  // kept at run time (`replaces`: y (b0;) may be 3 where x (b0;) is 1, and the result is then 3)
  {
    name: "fold-where",
    apply: (n) => {
      if (n.op !== "where" || !isConst(n.inputs[0]!)) return undefined;
      const [pick, other] = value(n.inputs[0]!) !== 0 ? [n.inputs[1]!, n.inputs[2]!] : [n.inputs[2]!, n.inputs[1]!];
      return pick === other || replaces(n, pick, [other]) ? pick : undefined;
    },
  },
];
