/**
 * Sorting along a base axis as a composition of IR ops: a rank (counting) sort.
 * Element i's rank is the number of elements that come before it, an (n, n) broadcast
 * comparison summed per row, with ties broken by position (so the sort is stable); the
 * element of rank k is then picked with a one-hot `where` and a sum. Constant depth,
 * n² comparisons per batch element, fused kernels, no data-dependent control flow: it
 * traces once for every batch size and runs the same on every backend.
 *
 * Order (NumPy's `sort`/`argsort`): ascending, NaN last, -0 equal to +0 (kept in input
 * order); with `descending` (PyTorch's option) the reverse order with NaN first (NaN as
 * the largest value), equal values still in input order.
 *
 * Axes longer than `SORT_LOOP_ABOVE` (1024) sort in a looped kernel instead (the
 * `routine` op's `sort`: a stable bottom-up merge sort per row, O(n log n), same
 * order), up to `MAX_SORT_LENGTH` (2^24) elements.
 */
import { isFloat } from "../../ir/dtype.js";
import { ShapeError, UnsupportedOpError } from "../../ir/errors.js";
import { describe } from "../check.js";
import { Tensor, where } from "../tensor.js";
import {
  baseAxis,
  boolOption,
  checkAxisLength,
  checkTensor,
  iota,
  lowerMask,
  moveFromLast,
  moveToLast,
  MAX_AXIS_LENGTH,
} from "./common.js";

/** Sort axes longer than this (the limit of the composition) sort in a looped merge-sort kernel. */
export const SORT_LOOP_ABOVE = MAX_AXIS_LENGTH;
/** The longest axis `sort`, `argsort` and `topk` take (positions are exact in float32 below 2^24). */
export const MAX_SORT_LENGTH = 2 ** 24;

/**
 * The first k of the sorted last axis of `xl` (…, n) by the looped merge sort:
 * leading base dims move into the batch, each row is one `(1, n)` matrix of the routine.
 */
function sortedLooped(xl: Tensor, k: number, descending: boolean): { values: Tensor; indices: Tensor } {
  const n = xl.baseShape[xl.baseDim - 1]!;
  const lead = xl.baseDim - 1;
  const x = xl.dtype === "bool" ? xl.cast("int32") : xl;
  const rows = (lead === 0 ? x : x.rebatch(x.batchDim + lead)).reshape([1, n]);
  const out = Tensor._op("routine", [rows], { name: "sort", arg: descending ? 1 : 0 });
  const back = (t: Tensor): Tensor => {
    const v = t.reshape([k]);
    return lead === 0 ? v : v.rebatch(v.batchDim - lead);
  };
  return {
    values: back(out.slice(1, 0, k)).cast(xl.dtype),
    indices: back(out.slice(1, n, n + k)).cast("int32"),
  };
}

/** Options of `sort` and `argsort`. */
export interface SortOptions {
  /** Largest first, NaN first (default false: smallest first, NaN last). */
  readonly descending?: boolean;
}

/** Options of `topk`. */
export interface TopkOptions {
  /** The k largest (default true; NaN counts as the largest), else the k smallest (NaN last). */
  readonly largest?: boolean;
}

/** The result of `topk`. */
export interface TopkResult {
  /** The k values, in sorted order. */
  readonly values: Tensor;
  /** Their int32 positions along the axis. */
  readonly indices: Tensor;
}

/** The `k` first elements in sorted order of the last axis of `xl` (…, n): their values and positions. */
function sortedLast(xl: Tensor, k: number, descending: boolean): { values: Tensor; indices: Tensor } {
  const n = xl.baseShape[xl.baseDim - 1]!;
  const xi = xl.unsqueeze(-1); // (…, n, 1): element i (rows)
  const xj = xl.unsqueeze(-2); // (…, 1, n): element j (columns)
  // before[i][j]: element j comes before element i.
  const earlier = lowerMask(n, true); // j < i
  let before: Tensor;
  if (isFloat(xl.dtype)) {
    const ni = xi.isNan();
    const nj = xj.isNan();
    const tie = xj.eq(xi).logicalOr(ni.logicalAnd(nj)).logicalAnd(earlier);
    const strictly = descending
      ? xj.gt(xi).logicalOr(nj.logicalAnd(ni.logicalNot()))
      : xj.lt(xi).logicalOr(ni.logicalAnd(nj.logicalNot()));
    before = strictly.logicalOr(tie);
  } else {
    before = (descending ? xj.gt(xi) : xj.lt(xi)).logicalOr(xj.eq(xi).logicalAnd(earlier));
  }
  const rank = before.sum(-1); // (…, n) int32, a permutation of 0..n-1
  // pick[q][i]: element i has rank q, for the first k ranks.
  const pick = rank.unsqueeze(-2).eq(iota(k).unsqueeze(-1)); // (…, k, n)
  const indices = where(pick, iota(n), 0).sum(-1);
  // Exactly one term per output is x_i, the others the exact additive identity -0.
  const vals = where(pick, xj.dtype === "bool" ? xj.cast("int32") : xj, -0).sum(-1);
  return { values: vals.cast(xl.dtype), indices };
}

function sortImpl(
  op: string,
  x: Tensor,
  axis: unknown,
  k: number | undefined,
  descending: boolean,
): { values: Tensor; indices: Tensor } {
  const a = baseAxis(op, x, axis);
  const len = x.baseShape[a]!;
  if (len > SORT_LOOP_ABOVE) {
    if (len > MAX_SORT_LENGTH)
      throw new UnsupportedOpError(
        `${op}: base axis ${axis} of x ${x.toString()} has ${len} elements, more than the limit ${MAX_SORT_LENGTH} (2^24)`,
      );
    const r = sortedLooped(moveToLast(x, a), k ?? len, descending);
    return { values: moveFromLast(r.values, a), indices: moveFromLast(r.indices, a) };
  }
  const n = checkAxisLength(op, x, a);
  const r = sortedLast(moveToLast(x, a), k ?? n, descending);
  return { values: moveFromLast(r.values, a), indices: moveFromLast(r.indices, a) };
}

/**
 * The values sorted along a base axis (default the last): ascending with NaN last, as
 * NumPy; `descending: true` gives largest first with NaN first, as PyTorch. Stable.
 * Axes up to 1024 elements sort by a fused comparison of every pair; longer ones (up to
 * 2^24) by a looped merge-sort kernel, O(n log n) per row.
 * @example sort(tensor([3, NaN, 1, 2])) // [1, 2, 3, NaN]
 */
export function sort(x: Tensor, axis = -1, opts?: SortOptions): Tensor {
  checkTensor("sort", x);
  return sortImpl("sort", x, axis, undefined, boolOption("sort", opts, "descending", false)).values;
}

/**
 * The int32 positions that sort `x` along a base axis (default the last), stable: equal
 * values keep their input order (NumPy's `kind="stable"`). Order as `sort`.
 * @example argsort(tensor([3, 1, 2, 1])) // [1, 3, 2, 0]
 */
export function argsort(x: Tensor, axis = -1, opts?: SortOptions): Tensor {
  checkTensor("argsort", x);
  return sortImpl("argsort", x, axis, undefined, boolOption("argsort", opts, "descending", false)).indices;
}

/**
 * The `k` largest values along a base axis (default the last) and their int32 positions,
 * largest first (PyTorch's `topk`; NaN counts as the largest, ties keep input order);
 * `largest: false` gives the k smallest, smallest first (NaN last). `k` is at most the axis length.
 * @example topk(tensor([1, 5, 3]), 2) // { values: [5, 3], indices: [1, 2] }
 */
export function topk(x: Tensor, k: number, axis = -1, opts?: TopkOptions): TopkResult {
  checkTensor("topk", x);
  const a = baseAxis("topk", x, axis);
  const n = x.baseShape[a]!;
  if (typeof k !== "number" || !Number.isInteger(k) || k < 0 || k > n) {
    throw new ShapeError(
      `topk: k must be an integer in [0, ${n}] for base axis ${axis} of x ${x.toString()}, got ${describe(k)}`,
    );
  }
  return sortImpl("topk", x, a, k, boolOption("topk", opts, "largest", true));
}
