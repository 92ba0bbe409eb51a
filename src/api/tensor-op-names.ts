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
import type { KReduceOp } from "../../ir/reductions.js";

/** The Tensor method of every elementwise op of the op-facts table, also its name in messages. */
export const METHOD_OF = {
  neg: "neg",
  abs: "abs",
  square: "square",
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

/**
 * The Tensor methods of every reduction of the reduction facts table (ir/reductions.ts): the
 * one over base axes, named as the op, and the one over batch axes. A mapped type over
 * `KReduceOp`, so a new reduction fails `tsc` here until its methods are named; their
 * declarations are checked against these names in src/api/tensor-ops.ts.
 */
export const REDUCTION_METHODS = {
  sum: ["sum", "batchSum"],
  mean: ["mean", "batchMean"],
  prod: ["prod", "batchProd"],
  min: ["min", "batchMin"],
  max: ["max", "batchMax"],
  argmin: ["argmin", "batchArgmin"],
  argmax: ["argmax", "batchArgmax"],
  all: ["all", "batchAll"],
  any: ["any", "batchAny"],
} as const satisfies { readonly [K in KReduceOp]: readonly [K, `batch${Capitalize<K>}`] };

/** The eager operations that are the method of neither an elementwise op nor a reduction (src/api/tensor-ops.ts). */
export const OTHER_OP_NAMES = [
  "clip",
  "reduce",
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
export const EAGER_OP_NAMES: readonly string[] = [
  ...Object.values(METHOD_OF),
  ...Object.values(REDUCTION_METHODS).flat(),
  ...OTHER_OP_NAMES,
];
