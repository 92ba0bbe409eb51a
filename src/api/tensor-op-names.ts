/**
 * The names of the eager Tensor operations of src/api/tensor-ops.ts, without their bodies
 * (so that `batchwise/runtime`, which stubs each of them, carries names only): the Tensor
 * method of every elementwise op of the op-facts table (ir/elementwise.ts) and the names
 * of the other operations.
 *
 * Both lists are checked by `tsc` in src/api/tensor-ops.ts: every elementwise op has a
 * method here (a mapped type over the op unions), every declared elementwise method of
 * Tensor is the method of an op, and the other operations' bodies are exactly the names
 * of `OTHER_OP_NAMES`.
 */
import type { KBinaryOp, KUnaryOp } from "../../ir/elementwise.js";

/** The Tensor method of every elementwise op of the op-facts table, also its name in messages. */
export const METHOD_OF = {
  neg: "neg",
  abs: "abs",
  sqrt: "sqrt",
  rsqrt: "rsqrt",
  exp: "exp",
  log: "log",
  sin: "sin",
  cos: "cos",
  tan: "tan",
  tanh: "tanh",
  sigmoid: "sigmoid",
  asin: "asin",
  acos: "acos",
  atan: "atan",
  floor: "floor",
  ceil: "ceil",
  round: "round",
  trunc: "trunc",
  sign: "sign",
  not: "logicalNot",
  isnan: "isNan",
  isinf: "isInf",
  isfinite: "isFinite",
  add: "add",
  sub: "sub",
  mul: "mul",
  div: "div",
  pow: "pow",
  maximum: "maximum",
  minimum: "minimum",
  mod: "mod",
  atan2: "atan2",
  eq: "eq",
  ne: "ne",
  lt: "lt",
  le: "le",
  gt: "gt",
  ge: "ge",
  and: "logicalAnd",
  or: "logicalOr",
  xor: "logicalXor",
  // --- numerics/random: integer bitwise ops ---
  bitwise_and: "bitwiseAnd",
  bitwise_or: "bitwiseOr",
  bitwise_xor: "bitwiseXor",
  left_shift: "leftShift",
  right_shift: "rightShift",
} as const satisfies { readonly [K in KUnaryOp | KBinaryOp]: string };

/** The eager operations that are not the method of one elementwise op (src/api/tensor-ops.ts). */
export const OTHER_OP_NAMES = [
  "clip",
  "reduce",
  "sum",
  "mean",
  "prod",
  "min",
  "max",
  "all",
  "any",
  "argmin",
  "argmax",
  "batchSum",
  "batchMean",
  "batchProd",
  "batchMin",
  "batchMax",
  "batchAll",
  "batchAny",
  "batchArgmin",
  "batchArgmax",
  "reshape",
  "flatten",
  "permute",
  "transpose",
  "expand",
  "unsqueeze",
  "squeeze",
  "slice",
  "select",
  "matmul",
  "batchReshape",
  "batchUnsqueeze",
  "batchSqueeze",
  "batchSlice",
  "batchIndex",
  "rebatch",
  "batchFlatten",
  "batchExpand",
] as const;

/** The names of every eager operation: the methods `installTensorOps` installs, which batchwise/runtime stubs. */
export const EAGER_OP_NAMES: readonly string[] = [...Object.values(METHOD_OF), ...OTHER_OP_NAMES];
