/**
 * Cases for the numerics compositions, shared by the JS and WebGPU tests: each builds
 * its tensors on the current backend and states the expected values, written out by
 * hand from NumPy's / SciPy's documented rules (NaN, ±Inf, -0 and empty axes included).
 * `tol` is a relative tolerance for finite values (0: exact, with the sign of zero).
 */
import { cumprod, cumsum, einsum, jit, logsumexp, softmax, tensor, type Tensor } from "../../src/index.js";

export interface Case {
  readonly name: string;
  readonly run: () => Tensor;
  readonly want: readonly number[];
  /** The expected dtype (default float32). */
  readonly dtype?: string;
  readonly tol?: number;
}

const L3 = Math.log(3);
const LN2 = Math.LN2;
const inf = Infinity;
const t = (v: number[], dtype?: "int32" | "uint32" | "bool" | "float32"): Tensor => tensor(v, dtype ? { dtype } : {});
const tb = (v: number[][]): Tensor => tensor(v, { batchDim: 1 });

export const CASES: readonly Case[] = [
  // ---- cumsum / cumprod ----
  { name: "cumsum", run: () => cumsum(t([1, 2, 3, 4])), want: [1, 3, 6, 10] },
  { name: "cumsum keeps -0 and propagates NaN/Inf", run: () => t([-0, -0, NaN, 1]).cumsum(), want: [-0, -0, NaN, NaN] },
  {
    name: "cumsum of +Inf and -Inf is NaN from there",
    run: () => t([1, inf, -inf, 2]).cumsum(),
    want: [1, inf, NaN, NaN],
  },
  {
    name: "cumsum along axis 0 of a batch",
    run: () =>
      tb([
        [1, 2],
        [3, 4],
      ])
        .reshape([2, 1])
        .cumsum(0),
    want: [1, 3, 3, 7],
  },
  {
    name: "cumsum along the first of two base axes",
    run: () =>
      tensor([
        [1, 2, 3],
        [4, 5, 6],
      ]).cumsum(0),
    want: [1, 2, 3, 5, 7, 9],
  },
  {
    name: "cumsum of bool gives int32",
    run: () => t([1, 0, 1, 1], "bool").cumsum(),
    want: [1, 1, 2, 3],
    dtype: "int32",
  },
  {
    name: "cumsum of int32 wraps",
    run: () => t([2147483647, 1, 1], "int32").cumsum(),
    want: [2147483647, -2147483648, -2147483647],
    dtype: "int32",
  },
  { name: "cumprod", run: () => cumprod(t([1, 2, 3, 4])), want: [1, 2, 6, 24] },
  { name: "cumprod with 0 and Inf", run: () => t([2, inf, 0, 5]).cumprod(), want: [2, inf, NaN, NaN] },
  { name: "cumprod keeps the sign of zero", run: () => t([-1, 0, 3]).cumprod(), want: [-1, -0, -0] },
  // ---- softmax / logSoftmax / logsumexp ----
  { name: "softmax", run: () => softmax(t([0, L3])), want: [0.25, 0.75], tol: 1e-6 },
  {
    name: "softmax of large inputs",
    run: () => t([1000, 1000, 1000, 1000]).softmax(),
    want: [0.25, 0.25, 0.25, 0.25],
    tol: 1e-6,
  },
  { name: "softmax: -Inf entries get 0", run: () => t([-inf, 0, -inf]).softmax(), want: [0, 1, 0] },
  { name: "softmax: all -Inf is NaN (SciPy)", run: () => t([-inf, -inf]).softmax(), want: [NaN, NaN] },
  { name: "softmax: +Inf is NaN (SciPy)", run: () => t([inf, 0]).softmax(), want: [NaN, NaN] },
  { name: "softmax: NaN is NaN", run: () => t([NaN, 0]).softmax(), want: [NaN, NaN] },
  { name: "softmax of ints gives float32", run: () => t([1, 1], "int32").softmax(), want: [0.5, 0.5] },
  {
    name: "softmax per batch row",
    run: () =>
      tb([
        [0, L3],
        [-100, -100],
      ]).softmax(),
    want: [0.25, 0.75, 0.5, 0.5],
    tol: 1e-6,
  },
  { name: "logSoftmax", run: () => t([0, L3]).logSoftmax(), want: [Math.log(0.25), Math.log(0.75)], tol: 1e-6 },
  { name: "logSoftmax does not underflow", run: () => t([1000, 0]).logSoftmax(), want: [0, -1000], tol: 1e-6 },
  { name: "logSoftmax: -Inf entries give -Inf", run: () => t([-inf, 0]).logSoftmax(), want: [-inf, 0] },
  { name: "logSoftmax: all -Inf is NaN (SciPy)", run: () => t([-inf, -inf]).logSoftmax(), want: [NaN, NaN] },
  { name: "logsumexp of large inputs", run: () => logsumexp(t([1000, 1000])), want: [1000 + LN2], tol: 1e-6 },
  {
    name: "logsumexp of very negative inputs",
    run: () => t([-1000, -1000]).logsumexp(),
    want: [-1000 + LN2],
    tol: 1e-6,
  },
  { name: "logsumexp of all -Inf is -Inf", run: () => t([-inf, -inf]).logsumexp(), want: [-inf] },
  { name: "logsumexp with +Inf is +Inf", run: () => t([inf, 1, -inf]).logsumexp(), want: [inf] },
  { name: "logsumexp with NaN is NaN", run: () => t([NaN, 1]).logsumexp(), want: [NaN] },
  {
    name: "logsumexp of an empty axis is -Inf",
    run: () => tensor([[], []], { batchDim: 1 }).logsumexp(),
    want: [-inf, -inf],
  },
  {
    name: "logsumexp over one axis, keepdim",
    run: () =>
      tensor([
        [0, 0],
        [L3, 0],
      ]).logsumexp(0, { keepdim: true }),
    want: [Math.log(4), LN2],
    tol: 1e-6,
  },
  // ---- var / std ----
  { name: "var (correction 0)", run: () => t([1, 2, 3, 4]).var(), want: [1.25] },
  {
    name: "var (correction 1)",
    run: () => t([1, 2, 3, 4]).var(undefined, { correction: 1 }),
    want: [5 / 3],
    tol: 1e-6,
  },
  { name: "var of one element with correction 1 is NaN", run: () => t([5]).var(0, { correction: 1 }), want: [NaN] },
  { name: "var with correction >= N and spread is +Inf", run: () => t([1, 3]).var(0, { correction: 2 }), want: [inf] },
  { name: "var with Inf is NaN", run: () => t([1, inf]).var(), want: [NaN] },
  { name: "var of an empty axis is NaN", run: () => tensor([[]], { batchDim: 1 }).var(), want: [NaN] },
  {
    name: "var is two-pass (large offset)",
    run: () => t([10000.25, 10000.5, 10000.75]).var(),
    want: [0.125 / 3],
    tol: 1e-6,
  },
  {
    name: "std",
    run: () =>
      tb([
        [1, 2, 3, 4],
        [2, 2, 2, 2],
      ]).std(-1, { correction: 0 }),
    want: [Math.sqrt(1.25), 0],
    tol: 1e-6,
  },
  { name: "var of int32 gives float32", run: () => t([1, 3], "int32").var(), want: [1] },
  // ---- norm ----
  { name: "norm 2", run: () => t([3, -4]).norm(), want: [5] },
  { name: "norm 1", run: () => t([3, -4]).norm(1), want: [7] },
  { name: "norm Inf", run: () => t([3, -4]).norm(Infinity), want: [4] },
  { name: "norm -Inf", run: () => t([3, -4]).norm(-Infinity), want: [3] },
  { name: "norm 0 counts non-zeros (NaN counts)", run: () => t([0, NaN, -0, 2]).norm(0), want: [2] },
  { name: "norm 3", run: () => t([3, 4]).norm(3), want: [Math.cbrt(91)], tol: 1e-6 },
  { name: "norm with NaN is NaN", run: () => t([NaN, 1]).norm(), want: [NaN] },
  { name: "norm with Inf is Inf", run: () => t([inf, 1]).norm(), want: [inf] },
  {
    name: "norm over axis 1",
    run: () =>
      tensor([
        [3, 4],
        [6, 8],
      ]).norm(2, 1),
    want: [5, 10],
  },
  // ---- sort / argsort / topk ----
  {
    name: "sort: NaN last, 0 and -0 equal (kept in input order)",
    run: () => t([3, NaN, 1, 0, -0, 1]).sort(),
    want: [0, -0, 1, 1, 3, NaN],
  },
  {
    name: "argsort is stable",
    run: () => t([3, NaN, 1, 0, -0, 1]).argsort(),
    want: [3, 4, 2, 5, 0, 1],
    dtype: "int32",
  },
  {
    name: "argsort descending: NaN first, ties in input order",
    run: () => t([3, NaN, 1, 0, -0, 1]).argsort(-1, { descending: true }),
    want: [1, 0, 2, 5, 3, 4],
    dtype: "int32",
  },
  { name: "sort with ±Inf", run: () => t([inf, -inf, 0, NaN, -inf]).sort(), want: [-inf, -inf, 0, inf, NaN] },
  {
    name: "sort int32",
    run: () => t([5, -2147483648, 2147483647, 0], "int32").sort(),
    want: [-2147483648, 0, 5, 2147483647],
    dtype: "int32",
  },
  { name: "sort uint32", run: () => t([4294967295, 0, 7], "uint32").sort(), want: [0, 7, 4294967295], dtype: "uint32" },
  { name: "sort bool", run: () => t([1, 0, 1, 0], "bool").sort(), want: [0, 0, 1, 1], dtype: "bool" },
  {
    name: "sort along axis 0",
    run: () =>
      tensor([
        [3, 1],
        [2, 4],
      ]).sort(0),
    want: [2, 1, 3, 4],
  },
  {
    name: "sort per batch row",
    run: () =>
      tb([
        [2, 1],
        [-1, -3],
      ]).sort(),
    want: [1, 2, -3, -1],
  },
  { name: "topk values", run: () => t([1, 5, 3, 5, NaN]).topk(3).values, want: [NaN, 5, 5] },
  { name: "topk indices", run: () => t([1, 5, 3, 5, NaN]).topk(3).indices, want: [4, 1, 3], dtype: "int32" },
  { name: "topk smallest", run: () => t([1, 5, 3, 5, NaN]).topk(2, -1, { largest: false }).values, want: [1, 3] },
  // ---- empty axes ----
  { name: "cumsum of an empty axis", run: () => tensor([[], []], { batchDim: 1 }).cumsum(), want: [] },
  { name: "cumprod of an empty axis", run: () => tensor([[], []], { batchDim: 1 }).cumprod(), want: [] },
  { name: "sort of an empty axis", run: () => tensor([[]], { batchDim: 1 }).sort(), want: [] },
  { name: "argsort of an empty axis", run: () => tensor([[]], { batchDim: 1 }).argsort(), want: [], dtype: "int32" },
  { name: "topk with k = 0", run: () => t([1, 2]).topk(0).values, want: [] },
  { name: "softmax of an empty axis", run: () => tensor([[]], { batchDim: 1 }).softmax(), want: [] },
  { name: "norm of an empty axis is 0", run: () => tensor([[], []], { batchDim: 1 }).norm(), want: [0, 0] },
  { name: "einsum sum over an empty axis is 0", run: () => einsum("i->", tensor([[]], { batchDim: 1 })), want: [0] },
  // ---- einsum ----
  {
    name: "einsum matmul",
    run: () =>
      einsum(
        "ij,jk->ik",
        tensor([
          [1, 2],
          [3, 4],
        ]),
        tensor([
          [5, 6],
          [7, 8],
        ]),
      ),
    want: [19, 22, 43, 50],
  },
  {
    name: "einsum trace",
    run: () =>
      einsum(
        "ii",
        tensor([
          [1, 2],
          [3, 4],
        ]),
      ),
    want: [5],
  },
  {
    name: "einsum diagonal",
    run: () =>
      einsum(
        "ii->i",
        tensor([
          [1, 2],
          [3, 4],
        ]),
      ),
    want: [1, 4],
  },
  {
    name: "einsum transpose",
    run: () =>
      einsum(
        "ij->ji",
        tensor([
          [1, 2, 3],
          [4, 5, 6],
        ]),
      ),
    want: [1, 4, 2, 5, 3, 6],
  },
  {
    name: "einsum implicit output is alphabetical",
    run: () =>
      einsum(
        "ba",
        tensor([
          [1, 2],
          [3, 4],
        ]),
      ),
    want: [1, 3, 2, 4],
  },
  { name: "einsum dot", run: () => einsum("i,i", t([1, 2, 3]), t([4, 5, 6])), want: [32] },
  { name: "einsum outer", run: () => einsum("i,j->ij", t([1, 2]), t([3, 4, 5])), want: [3, 4, 5, 6, 8, 10] },
  {
    name: "einsum with ... (broadcast leading base dims)",
    run: () =>
      einsum(
        "...ij,...j->...i",
        tensor([
          [
            [1, 0],
            [0, 1],
          ],
          [
            [2, 0],
            [0, 2],
          ],
        ]),
        t([3, 4]),
      ),
    want: [3, 4, 6, 8],
  },
  {
    name: "einsum over batch dims (they broadcast)",
    run: () =>
      einsum(
        "i,i->",
        tb([
          [1, 2],
          [3, 4],
        ]),
        t([1, 1]),
      ),
    want: [3, 7],
  },
  {
    name: "einsum sums a label over one operand",
    run: () =>
      einsum(
        "ij->i",
        tensor([
          [1, 2],
          [3, NaN],
        ]),
      ),
    want: [3, NaN],
  },
  {
    name: "einsum of bool computes in int32",
    run: () => einsum("i,i", t([1, 1, 0], "bool"), t([1, 1, 1], "bool")),
    want: [2],
    dtype: "int32",
  },
];

/** The mismatches of `got` against `c.want` (NaN matches NaN, zeros their sign, `tol` relative). */
export function mismatches(c: Case, got: ArrayLike<number>, dtype: string): string[] {
  const out: string[] = [];
  if (dtype !== (c.dtype ?? "float32")) out.push(`${c.name}: dtype ${dtype}, expected ${c.dtype ?? "float32"}`);
  if (got.length !== c.want.length) return [...out, `${c.name}: ${got.length} values, expected ${c.want.length}`];
  c.want.forEach((w, i) => {
    const g = got[i]!;
    const tol = c.tol ?? 0;
    const ok = Number.isNaN(w)
      ? Number.isNaN(g)
      : tol === 0 || !Number.isFinite(w) || w === 0
        ? Object.is(g, w) || (w !== 0 && g === w)
        : Math.abs(g - w) <= tol * Math.abs(w);
    if (!ok) out.push(`${c.name}[${i}] = ${g}, expected ${w}`);
  });
  return out;
}

/**
 * Every case in one jit on the current backend (`callAsync`, so any backend), read
 * back asynchronously: the mismatches, with the tolerance of a case that has one
 * raised to at least `minTol` (a backend whose transcendentals are not correctly
 * rounded) and the cases without one kept exact.
 */
export async function mismatchesInOneJit(minTol: number): Promise<string[]> {
  const outs = (await jit(() => CASES.map((c) => c.run())).callAsync()) as Tensor[];
  const errors: string[] = [];
  for (const [k, c] of CASES.entries()) {
    const loose = { ...c, tol: c.tol === undefined ? 0 : Math.max(c.tol, minTol) };
    errors.push(...mismatches(loose, await outs[k]!.data(), outs[k]!.dtype));
  }
  return errors;
}
