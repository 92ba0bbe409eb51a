/**
 * canonicalize: one spelling for each computation, so that hash-consing (CSE)
 * and the later rules see equal things as equal. Every rule is exact.
 */
import { hasOp, Node } from "../ir/graph.js";
import { COMMUTATIVE, isBinaryOp } from "../ir/elementwise.js";
import type { Rule } from "./driver.js";

const sameShape = (a: readonly number[], b: readonly number[]): boolean =>
  a.length === b.length && a.every((d, i) => d === b[i]);

export const CANONICALIZE_RULES: readonly Rule[] = [
  // cast(x: T, T) -> x
  {
    name: "cast-noop",
    apply: (n) => (n.op === "cast" && n.inputs[0]!.type.dtype === n.type.dtype ? n.inputs[0] : undefined),
  },
  // reshape(x) to x's own shape -> x
  {
    name: "reshape-noop",
    apply: (n) => (n.op === "reshape" && sameShape(n.inputs[0]!.type.base, n.type.base) ? n.inputs[0] : undefined),
  },
  // reshape(reshape(x)) -> reshape(x)
  {
    name: "reshape-reshape",
    apply: (n) =>
      hasOp(n, "reshape") && n.inputs[0]!.op === "reshape"
        ? Node.make("reshape", [n.inputs[0]!.inputs[0]!], n.attrs)
        : undefined,
  },
  // permute(x, identity) -> x
  {
    name: "permute-noop",
    apply: (n) => (hasOp(n, "permute") && n.attrs.perm.every((p, i) => p === i) ? n.inputs[0] : undefined),
  },
  // permute(permute(x, p), q) -> permute(x, p∘q)
  {
    name: "permute-permute",
    apply: (n) => {
      const x = n.inputs[0]!;
      if (!hasOp(n, "permute") || !hasOp(x, "permute")) return undefined;
      const inner = x.attrs.perm;
      const outer = n.attrs.perm;
      return Node.make("permute", [n.inputs[0]!.inputs[0]!], { perm: outer.map((o) => inner[o]!) });
    },
  },
  // expand(x) to x's own shape -> x
  {
    name: "expand-noop",
    apply: (n) => (n.op === "expand" && sameShape(n.inputs[0]!.type.base, n.type.base) ? n.inputs[0] : undefined),
  },
  // slice(x) covering the whole axis with step 1 -> x
  {
    name: "slice-noop",
    apply: (n) =>
      hasOp(n, "slice") && sameShape(n.inputs[0]!.type.base, n.type.base) && n.attrs.step === 1
        ? n.inputs[0]
        : undefined,
  },
  // batch_reshape(batch_reshape(x)) -> batch_reshape(x)
  {
    name: "batch-reshape-reshape",
    apply: (n) =>
      hasOp(n, "batch_reshape") && n.inputs[0]!.op === "batch_reshape"
        ? Node.make("batch_reshape", [n.inputs[0]!.inputs[0]!], n.attrs)
        : undefined,
  },
  // rebatch(rebatch(x)) -> rebatch(x): only the last split counts
  {
    name: "rebatch-rebatch",
    apply: (n) =>
      hasOp(n, "rebatch") && n.inputs[0]!.op === "rebatch"
        ? Node.make("rebatch", [n.inputs[0]!.inputs[0]!], n.attrs)
        : undefined,
  },
  // rebatch(x) to x's own split -> x
  {
    name: "rebatch-noop",
    apply: (n) =>
      hasOp(n, "rebatch") && n.attrs.batchDim === n.inputs[0]!.type.batch.length ? n.inputs[0] : undefined,
  },
  // op(const, x) -> op(x, const) for commutative ops: constants go right
  {
    name: "const-right",
    apply: (n) =>
      isBinaryOp(n.op) && COMMUTATIVE.has(n.op) && n.inputs[0]!.op === "const" && n.inputs[1]!.op !== "const"
        ? Node.make(n.op, [n.inputs[1]!, n.inputs[0]!], {})
        : undefined,
  },
];
