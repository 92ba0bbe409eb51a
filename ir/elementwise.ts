/**
 * The elementwise ops and their facts, in one table (docs/ARCHITECTURE.md, The graph IR).
 *
 * Every elementwise unary and binary op has exactly one entry here. The op
 * unions (`KUnaryOp`, `KBinaryOp`), the op groups of the type rules, the
 * passes and the code generators, and the frontend's dtype promotion are all
 * derived from it; the per-backend rule tables (reference interpreter, JS and
 * WGSL code generators) are mapped types over the derived unions, so an op
 * added here without its rule in every backend fails `tsc`.
 *
 * `dtype` is the op's dtype rule:
 *  - `arith`: operands share one promoted dtype, which is the result dtype; bool
 *    operands are not accepted (the frontend casts them to int32);
 *  - `float`: as `arith`, but defined only on floats (the frontend casts ints to float32);
 *  - `predicate` (unary): any non-bool or bool operand, bool result;
 *  - `compare` (binary): operands share one promoted dtype, bool result;
 *  - `logical`: bool operands (the frontend casts to bool), bool result;
 *  - `int`: integer operands only (int32 or uint32; floats and bool are refused), one
 *    dtype, which is the result dtype (the bitwise and shift ops).
 *
 * The algebraic facts hold for every value of every dtype the op accepts
 * (NaN, ±Inf and -0 included):
 *  - `commutative`: op(x, y) = op(y, x);
 *  - `idempotent`: op(x, x) = x;
 *  - `cheap`: cheap enough to recompute in several consumers instead of writing a buffer;
 *  - `exactF32`: on float32 operands the exact result is itself a float32 value (no rounding).
 *  - `trueDivision` (frontend only): integer operands are promoted to float32 first, as
 *    NumPy's `/`; the IR op itself also has an integer (truncating) form.
 */

export type ElementwiseKind = "unary" | "binary";
export type DTypeRule = "arith" | "float" | "predicate" | "compare" | "logical" | "int";

export interface ElementwiseFacts {
  readonly kind: ElementwiseKind;
  readonly dtype: DTypeRule;
  readonly commutative?: true;
  readonly idempotent?: true;
  readonly cheap?: true;
  readonly exactF32?: true;
  readonly trueDivision?: true;
}

export const ELEMENTWISE = {
  // ---- unary ----
  neg: { kind: "unary", dtype: "arith", cheap: true, exactF32: true },
  abs: { kind: "unary", dtype: "arith", cheap: true, exactF32: true },
  square: { kind: "unary", dtype: "arith", cheap: true },
  sqrt: { kind: "unary", dtype: "float" },
  rsqrt: { kind: "unary", dtype: "float" },
  exp: { kind: "unary", dtype: "float" },
  log: { kind: "unary", dtype: "float" },
  sin: { kind: "unary", dtype: "float" },
  cos: { kind: "unary", dtype: "float" },
  tan: { kind: "unary", dtype: "float" },
  tanh: { kind: "unary", dtype: "float" },
  sigmoid: { kind: "unary", dtype: "float" },
  asin: { kind: "unary", dtype: "float" },
  acos: { kind: "unary", dtype: "float" },
  atan: { kind: "unary", dtype: "float" },
  floor: { kind: "unary", dtype: "arith", exactF32: true },
  ceil: { kind: "unary", dtype: "arith", exactF32: true },
  round: { kind: "unary", dtype: "arith", exactF32: true },
  trunc: { kind: "unary", dtype: "arith", exactF32: true },
  sign: { kind: "unary", dtype: "arith", exactF32: true },
  not: { kind: "unary", dtype: "logical", cheap: true },
  isnan: { kind: "unary", dtype: "predicate" },
  isinf: { kind: "unary", dtype: "predicate" },
  isfinite: { kind: "unary", dtype: "predicate" },
  // ---- binary ----
  add: { kind: "binary", dtype: "arith", commutative: true, cheap: true },
  sub: { kind: "binary", dtype: "arith", cheap: true },
  mul: { kind: "binary", dtype: "arith", commutative: true, cheap: true },
  div: { kind: "binary", dtype: "arith", trueDivision: true },
  pow: { kind: "binary", dtype: "arith" },
  maximum: { kind: "binary", dtype: "arith", commutative: true, idempotent: true, cheap: true, exactF32: true },
  minimum: { kind: "binary", dtype: "arith", commutative: true, idempotent: true, cheap: true, exactF32: true },
  mod: { kind: "binary", dtype: "arith" },
  atan2: { kind: "binary", dtype: "float" },
  eq: { kind: "binary", dtype: "compare", commutative: true, cheap: true },
  ne: { kind: "binary", dtype: "compare", commutative: true, cheap: true },
  lt: { kind: "binary", dtype: "compare", cheap: true },
  le: { kind: "binary", dtype: "compare", cheap: true },
  gt: { kind: "binary", dtype: "compare", cheap: true },
  ge: { kind: "binary", dtype: "compare", cheap: true },
  and: { kind: "binary", dtype: "logical", commutative: true, idempotent: true, cheap: true },
  or: { kind: "binary", dtype: "logical", commutative: true, idempotent: true, cheap: true },
  xor: { kind: "binary", dtype: "logical", commutative: true, cheap: true },
  // --- numerics/random: integer bitwise ops (NumPy's ufunc names; int32 and uint32 only) ---
  // Shift counts outside [0, 32) (negative int32 counts included) shift every bit out, as
  // NumPy's npy_lshift/npy_rshift: left_shift gives 0, right_shift 0 or, for a negative
  // int32, -1. right_shift is logical on uint32 and arithmetic on int32.
  bitwise_and: { kind: "binary", dtype: "int", commutative: true, idempotent: true, cheap: true },
  bitwise_or: { kind: "binary", dtype: "int", commutative: true, idempotent: true, cheap: true },
  bitwise_xor: { kind: "binary", dtype: "int", commutative: true, cheap: true },
  left_shift: { kind: "binary", dtype: "int", cheap: true },
  right_shift: { kind: "binary", dtype: "int", cheap: true },
} as const satisfies Readonly<Record<string, ElementwiseFacts>>;

type Table = typeof ELEMENTWISE;
export type ElementwiseOp = keyof Table;
/** The elementwise ops whose entry has `F` set to a value of type `V`. */
type Where<F extends string, V> = {
  [K in ElementwiseOp]: Table[K] extends { readonly [P in F]: V } ? K : never;
}[ElementwiseOp];

export type KUnaryOp = Where<"kind", "unary">;
export type KBinaryOp = Where<"kind", "binary">;
export type CompareOp = KBinaryOp & Where<"dtype", "compare">;
export type LogicalBinaryOp = KBinaryOp & Where<"dtype", "logical">;
/** Binary ops whose result has the operands' dtype: arithmetic, float-only and integer-only (bitwise) ops. */
export type ArithBinaryOp = KBinaryOp & Where<"dtype", "arith" | "float" | "int">;

/** The facts of `op`, as a plain record (absent facts are false). */
export function factsOf(op: ElementwiseOp): ElementwiseFacts {
  return ELEMENTWISE[op];
}

const ALL = Object.keys(ELEMENTWISE) as ElementwiseOp[];
function select<K extends ElementwiseOp>(keep: (f: ElementwiseFacts) => boolean): ReadonlySet<K> {
  return new Set(ALL.filter((op) => keep(ELEMENTWISE[op])) as K[]);
}

export const UNARY_OPS: ReadonlySet<KUnaryOp> = select((f) => f.kind === "unary");
/** Unary ops defined only on floats (the frontend casts ints to float32 first). */
export const FLOAT_UNARY: ReadonlySet<KUnaryOp> = select((f) => f.kind === "unary" && f.dtype === "float");
/** Unary ops whose result is bool whatever the operand dtype. */
export const PREDICATE_UNARY: ReadonlySet<KUnaryOp> = select((f) => f.kind === "unary" && f.dtype === "predicate");
export const BINARY_OPS: ReadonlySet<KBinaryOp> = select((f) => f.kind === "binary");
/** Binary ops whose result has the operands' dtype (bool operands refused). */
export const ARITH_BINARY: ReadonlySet<KBinaryOp> = select(
  (f) => f.kind === "binary" && (f.dtype === "arith" || f.dtype === "float"),
);
/** Binary ops defined only on floats (the frontend casts ints to float32 first). */
export const FLOAT_BINARY: ReadonlySet<KBinaryOp> = select((f) => f.kind === "binary" && f.dtype === "float");
export const COMPARE_BINARY: ReadonlySet<KBinaryOp> = select((f) => f.kind === "binary" && f.dtype === "compare");
export const LOGICAL_BINARY: ReadonlySet<KBinaryOp> = select((f) => f.kind === "binary" && f.dtype === "logical");
/** Binary ops defined only on integers (int32, uint32): the bitwise and shift ops. */
export const INT_BINARY: ReadonlySet<KBinaryOp> = select((f) => f.kind === "binary" && f.dtype === "int");
/** op(x, y) = op(y, x) for every x, y. */
export const COMMUTATIVE: ReadonlySet<KBinaryOp> = select((f) => f.kind === "binary" && f.commutative === true);
/** op(x, x) = x for every x. */
export const IDEMPOTENT: ReadonlySet<KBinaryOp> = select((f) => f.kind === "binary" && f.idempotent === true);
/** Cheap enough to recompute in several consumers instead of writing a buffer. */
export const CHEAP: ReadonlySet<ElementwiseOp> = select((f) => f.cheap === true);
/** On float32 operands the exact result is a float32 value: no rounding needed. */
export const EXACT_ON_F32: ReadonlySet<ElementwiseOp> = select((f) => f.exactF32 === true);

export function isUnaryOp(op: string): op is KUnaryOp {
  return UNARY_OPS.has(op as KUnaryOp);
}
export function isBinaryOp(op: string): op is KBinaryOp {
  return BINARY_OPS.has(op as KBinaryOp);
}
export function isCompareOp(op: KBinaryOp): op is CompareOp {
  return COMPARE_BINARY.has(op);
}
export function isLogicalBinaryOp(op: KBinaryOp): op is LogicalBinaryOp {
  return LOGICAL_BINARY.has(op);
}
