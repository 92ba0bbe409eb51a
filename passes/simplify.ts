/**
 * Algebraic simplification. Float rules are kept only where they are exact for
 * every input, NaN, ±Inf and signed zero included; rules that are exact only on
 * integers say so in their guard. Left out on purpose: x + 0 -> x (wrong for
 * x = -0), x * 0 -> 0 and x - x -> 0 (wrong for NaN and Inf), exp(log x) -> x
 * (wrong for x < 0) and log(exp x) -> x (wrong when exp overflows).
 * A rule never changes the result's type (shape or dtype): a guard checks it.
 */
import { castScalar, isFloat, isUnsigned } from "../ir/dtype.js";
import { IDEMPOTENT, isBinaryOp } from "../ir/elementwise.js";
import { attrsOf, hasOp, Node } from "../ir/graph.js";
import { replaces, type Rule } from "./driver.js";

const isConst = (n: Node, v?: number): boolean => n.op === "const" && (v === undefined || Object.is(n.attrs.value, v));
const intLike = (n: Node): boolean => !isFloat(n.type.dtype);
/**
 * `x` replaces `n` only if it has the very same type and the operands of `n` that `x`
 * leaves out cannot change it at run time (`replaces`: no run-time broadcast lost).
 */
const same = (n: Node, x: Node): Node | undefined =>
  replaces(
    n,
    x,
    n.inputs.filter((i) => !reaches(x, i)),
  )
    ? x
    : undefined;
/** Whether `x` still reads `i` (is it, or has it as a direct operand: the rules' replacements are that shallow). */
const reaches = (x: Node, i: Node): boolean => x === i || x.inputs.includes(i);
const lhs = (n: Node): Node => n.inputs[0]!;
const rhs = (n: Node): Node => n.inputs[1]!;
const isPow2 = (v: number): boolean =>
  v !== 0 && Number.isFinite(v) && Math.abs(v) === 2 ** Math.round(Math.log2(Math.abs(v)));

/** Widening casts that keep every value of the source dtype exactly. */
function exactWiden(from: string, to: string): boolean {
  return from === to || from === "bool" || to === "float64";
}

export const SIMPLIFY_RULES: readonly Rule[] = [
  // x * 1 -> x
  { name: "mul-one", apply: (n) => (n.op === "mul" && isConst(rhs(n), 1) ? same(n, lhs(n)) : undefined) },
  // x / 1 -> x
  { name: "div-one", apply: (n) => (n.op === "div" && isConst(rhs(n), 1) ? same(n, lhs(n)) : undefined) },
  // x - 0 -> x (exact for -0 too: -0 - 0 = -0)
  { name: "sub-zero", apply: (n) => (n.op === "sub" && isConst(rhs(n), 0) ? same(n, lhs(n)) : undefined) },
  // x + (-0) -> x (exact: -0 is the additive identity of IEEE floats)
  { name: "add-negzero", apply: (n) => (n.op === "add" && isConst(rhs(n), -0) ? same(n, lhs(n)) : undefined) },
  // x + 0 -> x, integers only
  {
    name: "add-zero-int",
    apply: (n) =>
      n.op === "add" && intLike(n) && isConst(rhs(n)) && rhs(n).attrs.value === 0 ? same(n, lhs(n)) : undefined,
  },
  // x * 0 -> 0, integers only
  {
    name: "mul-zero-int",
    apply: (n) =>
      n.op === "mul" && intLike(n) && isConst(rhs(n)) && rhs(n).attrs.value === 0 ? same(n, rhs(n)) : undefined,
  },
  // x * -1 -> neg(x)
  {
    name: "mul-minus-one",
    apply: (n) => (n.op === "mul" && isConst(rhs(n), -1) ? same(n, Node.make("neg", [lhs(n)])) : undefined),
  },
  // x / c -> x * (1/c) when c is a power of two and 1/c is finite and exact in the dtype (then both are the
  // correctly rounded x·2^-k). Not when 1/c overflows: float64 c = 5e-324 = 2^-1074 has 1/c = Infinity,
  // and -0 * Infinity is NaN where -0 / c is -0.
  {
    name: "div-pow2",
    apply: (n) => {
      if (n.op !== "div" || !isFloat(n.type.dtype) || !isConst(rhs(n)) || isConst(rhs(n), 1)) return undefined;
      const c = attrsOf(rhs(n), "const").value;
      const inv = 1 / c;
      if (!isPow2(c) || !Number.isFinite(inv) || castScalar(inv, n.type.dtype) !== inv) return undefined;
      return Node.make("mul", [lhs(n), Node.make("const", [], { dtype: n.type.dtype, value: inv })]);
    },
  },
  // pow(x, 1) -> x
  { name: "pow-one", apply: (n) => (n.op === "pow" && isConst(rhs(n), 1) ? same(n, lhs(n)) : undefined) },
  // pow(x, 2) -> x * x (the product of two equal floats is what pow computes)
  {
    name: "pow-two",
    apply: (n) =>
      n.op === "pow" && isFloat(n.type.dtype) && isConst(rhs(n), 2)
        ? same(n, Node.make("mul", [lhs(n), lhs(n)]))
        : undefined,
  },
  // neg(neg(x)) -> x
  { name: "neg-neg", apply: (n) => (n.op === "neg" && lhs(n).op === "neg" ? lhs(lhs(n)) : undefined) },
  // x + neg(y) -> x - y
  {
    name: "add-neg",
    apply: (n) => (n.op === "add" && rhs(n).op === "neg" ? Node.make("sub", [lhs(n), lhs(rhs(n))]) : undefined),
  },
  // x - neg(y) -> x + y
  {
    name: "sub-neg",
    apply: (n) => (n.op === "sub" && rhs(n).op === "neg" ? Node.make("add", [lhs(n), lhs(rhs(n))]) : undefined),
  },
  // abs(abs(x)) -> abs(x); abs(neg(x)) -> abs(x) except for unsigned integers, where abs is the identity and
  // neg wraps (uint32 abs(neg(1)) is 4294967295, uint16 65535, not 1)
  {
    name: "abs-abs",
    apply: (n) =>
      n.op === "abs" && (lhs(n).op === "abs" || (lhs(n).op === "neg" && !isUnsigned(n.type.dtype)))
        ? Node.make("abs", [lhs(lhs(n))])
        : undefined,
  },
  // not(not(x)) -> x
  { name: "not-not", apply: (n) => (n.op === "not" && lhs(n).op === "not" ? lhs(lhs(n)) : undefined) },
  // op(x, x) -> x for the idempotent ops of the op-facts table (maximum, minimum, and, or): one node, one
  // run-time type
  {
    name: "idempotent",
    apply: (n) => (isBinaryOp(n.op) && IDEMPOTENT.has(n.op) && lhs(n) === rhs(n) ? lhs(n) : undefined),
  },
  // where(c, x, x) -> x, only when c cannot broadcast x at run time (`same`: c's batch dims are literal
  // sizes that x has; a symbol of c may be 3 where x's is 1)
  {
    name: "where-same",
    apply: (n) => (n.op === "where" && n.inputs[1] === n.inputs[2] ? same(n, n.inputs[1]!) : undefined),
  },
  // cast(cast(x, wide), T) -> cast(x, T) when the wide dtype holds every value of x's dtype
  {
    name: "cast-cast",
    apply: (n) =>
      hasOp(n, "cast") && lhs(n).op === "cast" && exactWiden(lhs(lhs(n)).type.dtype, lhs(n).type.dtype)
        ? Node.make("cast", [lhs(lhs(n))], n.attrs)
        : undefined,
  },
];
