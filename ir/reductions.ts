/**
 * The reductions and their facts, in one table (docs/ARCHITECTURE.md, The graph IR), beside
 * the elementwise facts of ir/elementwise.ts.
 *
 * Every reduction op has exactly one entry here. The reduction union (`KReduceOp`), the
 * reduction groups (`REDUCE_OPS`, the inlineable ones, the ones allowed on segments and
 * `SegmentReduceOp`), the result dtype rule (`reductionDType`) and the type rule's checks
 * are derived from it; the per-backend rule tables (reference interpreter, the loop form's
 * accumulator types, derivatives) are mapped types over `KReduceOp`, so a reduction added
 * here without its rule in every backend fails `tsc`.
 *
 * `dtype` is the result dtype rule (of the values' dtype x):
 *  - `widen`: bool gives int32, a narrow integer the 32-bit integer of the same signedness
 *    (as NumPy's sums, which give its default 64-bit integers), any other dtype itself;
 *  - `float`: a float dtype itself, any other float32;
 *  - `same`: x itself;
 *  - `index`: int32 (a position, or a count);
 *  - `bool`: bool.
 *
 * `combine` is the elementwise binary op that folds a value into the running value; for a
 * positional reduction (argmin/argmax) it is the strict comparison by which a value is
 * better than the best so far (ties keep the first position). `identity` is the running
 * value's start: a number, or `highest`/`lowest`, the largest or smallest value of the
 * accumulator's dtype (+Inf/-Inf for floats). The other facts:
 *  - `positional`: the result is the position of the best value, not a value; it reduces
 *    exactly one axis, and its partial results are (value, position) pairs;
 *  - `nonEmpty`: there is no result over no elements (NumPy raises): reducing an empty axis
 *    is a ShapeError, at trace time for base axes, at run time for batch axes;
 *  - `emptyStart`: the start value when the range is empty, where it differs from `identity`
 *    (a sum starts at -0, the exact additive identity, but an empty sum is +0);
 *  - `divides`: the result is the combined value divided once by the count (mean);
 *  - `inline`: small reductions over base axes inline into their consumer as a `combine`
 *    expression (passes/fuse/placement.ts) instead of getting a kernel of their own;
 *  - `segment`: allowed as the `op` of `segment_reduce` (per-row reductions of a jagged tensor).
 */
import { computeDType, isFloat, isNarrowInt, type DType } from "./dtype.js";
import type { KBinaryOp } from "./elementwise.js";

export type ReductionDTypeRule = "widen" | "float" | "same" | "index" | "bool";
/** How a reduction folds values: the elementwise binary op (see the module comment). */
export type ReductionCombine = Extract<KBinaryOp, "add" | "mul" | "minimum" | "maximum" | "and" | "or" | "lt" | "gt">;

export interface ReductionFacts {
  readonly dtype: ReductionDTypeRule;
  readonly combine: ReductionCombine;
  readonly identity: number | "highest" | "lowest";
  readonly positional?: true;
  readonly nonEmpty?: true;
  readonly emptyStart?: number;
  readonly divides?: true;
  readonly inline?: true;
  readonly segment?: true;
}

export const REDUCTIONS = {
  sum: { dtype: "widen", combine: "add", identity: -0, emptyStart: 0, inline: true, segment: true },
  mean: { dtype: "float", combine: "add", identity: -0, divides: true, inline: true, segment: true },
  prod: { dtype: "widen", combine: "mul", identity: 1, inline: true },
  min: { dtype: "same", combine: "minimum", identity: "highest", nonEmpty: true, inline: true, segment: true },
  max: { dtype: "same", combine: "maximum", identity: "lowest", nonEmpty: true, inline: true, segment: true },
  argmin: { dtype: "index", combine: "lt", identity: "highest", positional: true, nonEmpty: true },
  argmax: { dtype: "index", combine: "gt", identity: "lowest", positional: true, nonEmpty: true, segment: true },
  all: { dtype: "bool", combine: "and", identity: 1, inline: true },
  any: { dtype: "bool", combine: "or", identity: 0, inline: true },
} as const satisfies Readonly<Record<string, ReductionFacts>>;

/**
 * Per-row reductions that exist only on segments, with their dtype rule: `count`, the row's
 * length (its kernel is a sum of ones).
 */
export const SEGMENT_ONLY = { count: { dtype: "index" } } as const satisfies Readonly<
  Record<string, Pick<ReductionFacts, "dtype">>
>;

type Table = typeof REDUCTIONS;
export type KReduceOp = keyof Table;
/** The reductions whose entry has `F` set to a value of type `V`. */
type Where<F extends string, V> = {
  [K in KReduceOp]: Table[K] extends { readonly [P in F]: V } ? K : never;
}[KReduceOp];

/** argmin, argmax: the result is a position. */
export type PositionalReduceOp = Where<"positional", true>;
/** The reductions that inline as a `combine` expression. */
export type InlineReduceOp = Where<"inline", true>;
/** The `op` of a `segment_reduce`: the reductions allowed on segments, and the segment-only ones. */
export type SegmentReduceOp = Where<"segment", true> | keyof typeof SEGMENT_ONLY;

/** The facts of `op`, as a plain record (absent facts are false). */
export function reductionFacts(op: KReduceOp): ReductionFacts {
  return REDUCTIONS[op];
}

const ALL = Object.keys(REDUCTIONS) as KReduceOp[];
function select<K extends KReduceOp>(keep: (f: ReductionFacts) => boolean): ReadonlySet<K> {
  return new Set(ALL.filter((op) => keep(REDUCTIONS[op])) as K[]);
}

export const REDUCE_OPS: ReadonlySet<KReduceOp> = new Set(ALL);
/** The reductions whose result is a position (argmin, argmax). */
export const POSITIONAL_REDUCE: ReadonlySet<PositionalReduceOp> = select((f) => f.positional === true);
/** The reductions that have no result over no elements (min, max, argmin, argmax). */
export const NON_EMPTY_REDUCE: ReadonlySet<KReduceOp> = select((f) => f.nonEmpty === true);
/** The reductions that inline as a `combine` expression when small. */
export const INLINE_REDUCE_OPS: ReadonlySet<InlineReduceOp> = select((f) => f.inline === true);
/** The `op` values of `segment_reduce`, in table order. */
export const SEGMENT_REDUCE_OPS: readonly SegmentReduceOp[] = [
  ...ALL.filter((op): op is Where<"segment", true> => reductionFacts(op).segment === true),
  ...(Object.keys(SEGMENT_ONLY) as (keyof typeof SEGMENT_ONLY)[]),
];

export function isReduceOp(op: string): op is KReduceOp {
  return REDUCE_OPS.has(op as KReduceOp);
}
export function isInlineable(op: KReduceOp): op is InlineReduceOp {
  return reductionFacts(op).inline === true;
}
export function isPositional(op: KReduceOp | null): op is PositionalReduceOp {
  return op !== null && reductionFacts(op).positional === true;
}

const DTYPE_RULES: { readonly [K in KReduceOp | SegmentReduceOp]: Pick<ReductionFacts, "dtype"> } = {
  ...REDUCTIONS,
  ...SEGMENT_ONLY,
};

/** The result dtype of reduction (or segment reduction) `op` over values of dtype `x` (see `ReductionDTypeRule`). */
export function reductionDType(op: KReduceOp | SegmentReduceOp, x: DType): DType {
  switch (DTYPE_RULES[op].dtype) {
    case "widen":
      return x === "bool" ? "int32" : isNarrowInt(x) ? computeDType(x) : x;
    case "float":
      return isFloat(x) ? x : "float32";
    case "same":
      return x;
    case "index":
      return "int32";
    case "bool":
      return "bool";
  }
}
