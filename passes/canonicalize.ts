/**
 * canonicalize: one spelling for each computation, so that hash-consing (CSE)
 * and the later rules see equal things as equal. Every rule is exact.
 */
import { hasOp, Node } from "../ir/graph.js";
import { COMMUTATIVE, isBinaryOp } from "../ir/elementwise.js";
import type { Rule } from "./driver.js";
import { fmtType } from "../ir/types.js";

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
  // batch_reshape(batch_reshape(x)) -> batch_reshape(x), when the inner reshape's run-time check (the batch
  // size divisible by its known sizes, or equal to them) follows from the outer one's, and the result's
  // batch dims print the same (b1 reshaped to (-1,3) then (1,-1) is (1, b1/3*3), a check that b1 % 3 = 0)
  {
    name: "batch-reshape-reshape",
    apply: (n) => {
      const inner = n.inputs[0]!;
      if (!hasOp(n, "batch_reshape") || !hasOp(inner, "batch_reshape")) return undefined;
      const known = (s: readonly number[]): number => s.filter((d) => d !== -1).reduce((p, d) => p * d, 1);
      const [k1, k2] = [known(inner.attrs.shape), known(n.attrs.shape)];
      const implied = inner.attrs.shape.includes(-1)
        ? k1 !== 0 && k2 % k1 === 0
        : !n.attrs.shape.includes(-1) && k2 === k1;
      if (!implied) return undefined;
      const r = Node.make("batch_reshape", [inner.inputs[0]!], n.attrs);
      return fmtType(r.type) === fmtType(n.type) ? r : undefined;
    },
  },
  // rebatch(rebatch(x)) -> rebatch(x): only the last split counts, when the inner one moves no batch dim of x
  // into the base (that move checks the dim's run-time size against the base, and prints it as that size)
  {
    name: "rebatch-rebatch",
    apply: (n) => {
      const inner = n.inputs[0]!;
      if (!hasOp(n, "rebatch") || !hasOp(inner, "rebatch")) return undefined;
      if (inner.attrs.batchDim < inner.inputs[0]!.type.batch.length) return undefined;
      const r = Node.make("rebatch", [inner.inputs[0]!], n.attrs);
      return fmtType(r.type) === fmtType(n.type) ? r : undefined;
    },
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
