/**
 * Mandel and skew conventions (NEML2 `mandel_notation`), on base axes
 * `dim, dim+1` of a tensor of any shape.
 *
 * Mandel: `[a11, a22, a33, √2·a23, √2·a13, √2·a12]`, i.e. index pairs
 * (0,0),(1,1),(2,2),(1,2),(0,2),(0,1) with factors 1,1,1,√2,√2,√2.
 * `fullToMandel` reads the upper triangle and does not symmetrise.
 * Skew (axial vector): `w = (W[2,1], W[0,2], W[1,0])`, factors 1, and back
 * `W = [[0,-w2,w1],[w2,0,-w0],[-w1,w0,0]]`.
 */
import { ShapeError } from "../../ir/errors.js";
import { baseStack, type Tensor } from "../tensor.js";
import { negate, zerosOf } from "./components.js";
import { needTensor } from "./base.js";
import { checkInt } from "../check.js";

/** Mandel index → (i, j) of the full matrix. */
export const MANDEL_PAIRS: readonly (readonly [number, number])[] = [
  [0, 0],
  [1, 1],
  [2, 2],
  [1, 2],
  [0, 2],
  [0, 1],
];
/** Mandel factor of each index. */
export const MANDEL_FACTORS: readonly number[] = [1, 1, 1, Math.SQRT2, Math.SQRT2, Math.SQRT2];
/** Full (i, j) → Mandel index (NEML2's `mandel_reverse_index`). */
export const MANDEL_REVERSE: readonly (readonly number[])[] = [
  [0, 5, 4],
  [5, 1, 3],
  [4, 3, 2],
];
/** Skew index → (i, j) read by `fullToSkew`. */
export const SKEW_PAIRS: readonly (readonly [number, number])[] = [
  [2, 1],
  [0, 2],
  [1, 0],
];

function checkAxes(op: string, t: Tensor, dim: number, sizes: readonly number[]): number {
  needTensor(op, "t", t);
  checkInt(op, "dim", dim);
  const d = dim < 0 ? dim + t.baseDim : dim;
  const ok = d >= 0 && d + sizes.length <= t.baseDim && sizes.every((s, k) => t.baseShape[d + k] === s);
  if (!ok)
    throw new ShapeError(`${op}: expected base axes ${dim}.. of sizes (${sizes.join(",")}), got x ${t.toString()}`);
  return d;
}

const pick = (t: Tensor, d: number, i: number, j: number): Tensor => t.select(d, i).select(d, j);

/** `(…; …,3,3,…)` → `(…; …,6,…)` at base axis `dim`: `fullToMandel(r4, 2)` maps the last pair. */
export function fullToMandel(t: Tensor, dim = 0): Tensor {
  const d = checkAxes("fullToMandel", t, dim, [3, 3]);
  return baseStack(
    MANDEL_PAIRS.map(([i, j], k) => (k < 3 ? pick(t, d, i, j) : pick(t, d, i, j).mul(Math.SQRT2))),
    d,
  );
}

/** `(…; …,6,…)` → `(…; …,3,3,…)`: entry (i,j) is `m[reverse(i,j)] / factor`. */
export function mandelToFull(t: Tensor, dim = 0): Tensor {
  const d = checkAxes("mandelToFull", t, dim, [6]);
  const rows = [0, 1, 2].map((i) =>
    baseStack(
      [0, 1, 2].map((j) => {
        const k = MANDEL_REVERSE[i]![j]!;
        const x = t.select(d, k);
        return k < 3 ? x : x.mul(Math.SQRT1_2);
      }),
      d,
    ),
  );
  return baseStack(rows, d);
}

/** `(…; …,3,3,…)` → `(…; …,3,…)`: the axial vector `(W21, W02, W10)`; does not antisymmetrise. */
export function fullToSkew(t: Tensor, dim = 0): Tensor {
  const d = checkAxes("fullToSkew", t, dim, [3, 3]);
  return baseStack(
    SKEW_PAIRS.map(([i, j]) => pick(t, d, i, j)),
    d,
  );
}

/** `(…; …,3,…)` → `(…; …,3,3,…)`: `[[0,-w2,w1],[w2,0,-w0],[-w1,w0,0]]`. */
export function skewToFull(t: Tensor, dim = 0): Tensor {
  const d = checkAxes("skewToFull", t, dim, [3]);
  const w = [0, 1, 2].map((i) => t.select(d, i));
  // A constant zero (not w·0, which would turn inf into NaN), broadcast over the batch by baseStack.
  const z = zerosOf(t, w[0]!.baseShape);
  const m = [
    [z, negate(w[2]!), w[1]!],
    [w[2]!, z, negate(w[0]!)],
    [negate(w[1]!), w[0]!, z],
  ];
  return baseStack(
    m.map((row) => baseStack(row, d)),
    d,
  );
}
