/**
 * What a built page must offer, shared by the browser tests of the built
 * playground (playground.test.ts) and of a consumer's bundled page
 * (consumer-page.test.ts):
 *
 * - `SURFACE`: the source of a function that lists, for an object of the
 *   library's exports, each export's kind and, for each class, every own
 *   property of its prototype and of the class itself (methods and getters). The
 *   tests run it in Node on the library they import and in the page on the
 *   bundled one, and compare: a method that a bundler drops (the installing
 *   module shaken out) is missing from the page's list. The list is generated from
 *   the library, so a new method is covered without an edit here.
 * - `CASES`: one or more small calls per method family, run in the page on the
 *   JS backend, each with its expected value worked out by hand (or from a
 *   published known-answer vector) in the comments beside it.
 *
 * Cases are sources of functions `(bw) => value` (bw: the exports, as the page
 * exposes them), evaluated in the page with `new Function`: what they touch is the
 * page's own bundled code. A value is made JSON-like in the page (`toArraySync`).
 */

/** A method family of the public API (every one has at least one case). */
export type Family =
  | "creation"
  | "elementwise"
  | "shape"
  | "reductions"
  | "numerics"
  | "bitwise"
  | "indexing"
  | "comparisons"
  | "linalg"
  | "typed"
  | "jagged"
  | "tensordict"
  | "random"
  | "jit"
  | "derivatives";

export const FAMILIES: readonly Family[] = [
  "creation",
  "elementwise",
  "shape",
  "reductions",
  "numerics",
  "bitwise",
  "indexing",
  "comparisons",
  "linalg",
  "typed",
  "jagged",
  "tensordict",
  "random",
  "jit",
  "derivatives",
];

export interface Case {
  readonly family: Family;
  readonly name: string;
  /** Source of `(bw) => value`, run in the page. */
  readonly code: string;
  /** The expected value, by hand. */
  readonly want: unknown;
  /** Absolute tolerance on numbers (default 1e-6: float32 results of exact or short computations). */
  readonly tol?: number;
}

const L3 = Math.log(3);

export const CASES: readonly Case[] = [
  // --- creation ---
  { family: "creation", name: "arange", code: "(bw) => bw.arange(2, 5).toArraySync()", want: [2, 3, 4] },
  // 0, 1/4, 1/2, 3/4, 1.
  {
    family: "creation",
    name: "linspace",
    code: "(bw) => bw.linspace(0, 1, 5).toArraySync()",
    want: [0, 0.25, 0.5, 0.75, 1],
  },
  {
    family: "creation",
    name: "eye, diag, full",
    code: "(bw) => [bw.eye(2).toArraySync(), bw.diag(bw.tensor([1, 2])).toArraySync(), bw.full([], [2], 7).toArraySync()]",
    want: [
      [
        [1, 0],
        [0, 1],
      ],
      [
        [1, 0],
        [0, 2],
      ],
      [7, 7],
    ],
  },
  {
    family: "creation",
    name: "zeros, ones: (batch; base) shapes",
    code: "(bw) => { const z = bw.zeros([2], [3]); return [z.batchShape, z.baseShape, bw.ones([], [2]).toArraySync()]; }",
    want: [[2], [3], [1, 1]],
  },
  // --- elementwise ---
  // (1+10)*2, (2+20)*2, (3+30)*2.
  {
    family: "elementwise",
    name: "add, mul",
    code: "(bw) => bw.tensor([1, 2, 3]).add(bw.tensor([10, 20, 30])).mul(2).toArraySync()",
    want: [22, 44, 66],
  },
  // sqrt 1, 4, 9 = 1, 2, 3; negated then abs.
  {
    family: "elementwise",
    name: "sqrt, neg, abs",
    code: "(bw) => bw.tensor([1, 4, 9]).sqrt().neg().abs().toArraySync()",
    want: [1, 2, 3],
  },
  // 1, 4, 9 -> max(., 5) = 5, 5, 9 -> clip to [0, 8] = 5, 5, 8.
  {
    family: "elementwise",
    name: "pow, maximum, clip",
    code: "(bw) => bw.tensor([1, 2, 3]).pow(2).maximum(5).clip(0, 8).toArraySync()",
    want: [5, 5, 8],
  },
  // exp(0) = 1, sigmoid(0) = 1/2, tanh(0) = 0, cos(0) = 1, log(1) = 0.
  {
    family: "elementwise",
    name: "exp, sigmoid, tanh, cos, log",
    code: "(bw) => { const z = bw.tensor([0]); return [z.exp(), z.sigmoid(), z.tanh(), z.cos(), z.exp().log()].map((t) => t.toArraySync()[0]); }",
    want: [1, 0.5, 0, 1, 0],
  },
  // floor, ceil, trunc of 1.5 and -1.5.
  {
    family: "elementwise",
    name: "floor, ceil, trunc",
    code: "(bw) => { const x = bw.tensor([1.5, -1.5]); return [x.floor(), x.ceil(), x.trunc()].map((t) => t.toArraySync()); }",
    want: [
      [1, -2],
      [2, -1],
      [1, -1],
    ],
  },
  // Floored modulo (Python's %): 7 % 3 = 1, -7 % 3 = 2.
  {
    family: "elementwise",
    name: "mod (int32)",
    code: '(bw) => bw.tensor([7, -7], { dtype: "int32" }).mod(3).toArraySync()',
    want: [1, 2],
  },
  {
    family: "elementwise",
    name: "where",
    code: "(bw) => bw.where(bw.tensor([true, false, true]), bw.tensor([1, 2, 3]), bw.tensor([-1, -2, -3])).toArraySync()",
    want: [1, -2, 3],
  },
  // [[1, 2], [3, 4]] @ [[5], [6]] = [[1*5 + 2*6], [3*5 + 4*6]].
  {
    family: "elementwise",
    name: "matmul",
    code: "(bw) => bw.tensor([[1, 2], [3, 4]]).matmul(bw.tensor([[5], [6]])).toArraySync()",
    want: [[17], [39]],
  },
  // --- shape ---
  {
    family: "shape",
    name: "reshape, transpose",
    code: "(bw) => bw.arange(6).reshape([2, 3]).transpose(0, 1).toArraySync()",
    want: [
      [0, 3],
      [1, 4],
      [2, 5],
    ],
  },
  {
    family: "shape",
    name: "slice, select, unsqueeze, expand",
    code: "(bw) => { const x = bw.arange(5); return [x.slice(0, 1, 4).toArraySync(), x.select(0, 2).toArraySync(), x.slice(0, 0, 2).unsqueeze(0).expand([2, 2]).toArraySync()]; }",
    want: [
      [1, 2, 3],
      2,
      [
        [0, 1],
        [0, 1],
      ],
    ],
  },
  {
    family: "shape",
    name: "rebatch, batchReshape, cast",
    code: '(bw) => { const x = bw.arange(6).reshape([6, 1]).rebatch(1).batchReshape([2, 3]); return [x.batchShape, x.baseShape, bw.tensor([1.7, -1.7]).cast("int32").toArraySync()]; }',
    want: [[2, 3], [1], [1, -1]],
  },
  // --- reductions ---
  // Rows [1, 2, 3] and [4, 5, 6]: sums 6, 15; column means 2.5, 3.5, 4.5; product 720; row max 3, 6.
  {
    family: "reductions",
    name: "sum, mean, prod, max, min",
    code: "(bw) => { const x = bw.tensor([[1, 2, 3], [4, 5, 6]]); return [x.sum(-1), x.mean(0), x.prod(), x.max(-1), x.min()].map((t) => t.toArraySync()); }",
    want: [[6, 15], [2.5, 3.5, 4.5], 720, [3, 6], 1],
  },
  {
    family: "reductions",
    name: "argmax, argmin, all, any",
    code: "(bw) => { const x = bw.tensor([[1, 5, 3], [4, 2, 6]]); const b = bw.tensor([true, false]); return [x.argmax(-1), x.argmin(0), b.all(), b.any()].map((t) => t.toArraySync()); }",
    want: [[1, 2], [0, 1, 0], false, true],
  },
  // Over the batch of (2; 2) [[1, 2], [3, 4]]: sums 4, 6; means 2, 3; max 3, 4.
  {
    family: "reductions",
    name: "batchSum, batchMean, batchMax",
    code: "(bw) => { const x = bw.tensor([[1, 2], [3, 4]], { batchDim: 1 }); return [x.batchSum(0), x.batchMean(0), x.batchMax(0)].map((t) => t.toArraySync()); }",
    want: [
      [4, 6],
      [2, 3],
      [3, 4],
    ],
  },
  // --- numerics ---
  // softmax [0, ln 3] = [1, 3] / 4; logSoftmax = ln of that; logsumexp = ln(1 + 3) = ln 4.
  {
    family: "numerics",
    name: "softmax, logSoftmax, logsumexp",
    code: `(bw) => { const x = bw.tensor([0, ${L3}]); return [x.softmax(), x.logSoftmax(), x.logsumexp()].map((t) => t.toArraySync()); }`,
    want: [[0.25, 0.75], [Math.log(0.25), Math.log(0.75)], Math.log(4)],
  },
  {
    family: "numerics",
    name: "sort, argsort (ascending, descending)",
    code: "(bw) => { const x = bw.tensor([3, 1, 2]); return [x.sort(), x.sort(-1, { descending: true }), x.argsort()].map((t) => t.toArraySync()); }",
    want: [
      [1, 2, 3],
      [3, 2, 1],
      [1, 2, 0],
    ],
  },
  {
    family: "numerics",
    name: "topk",
    code: "(bw) => { const r = bw.tensor([3, 1, 2]).topk(2); return [r.values.toArraySync(), r.indices.toArraySync()]; }",
    want: [
      [3, 2],
      [0, 2],
    ],
  },
  {
    family: "numerics",
    name: "cumsum, cumprod",
    code: "(bw) => { const x = bw.tensor([1, 2, 3]); return [x.cumsum(), x.cumprod()].map((t) => t.toArraySync()); }",
    want: [
      [1, 3, 6],
      [1, 2, 6],
    ],
  },
  // [1, 2, 3, 4]: mean 2.5, squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5; var 5/4, with correction 1 5/3; std sqrt(5/4).
  {
    family: "numerics",
    name: "var, std",
    code: "(bw) => { const x = bw.tensor([1, 2, 3, 4]); return [x.var(), x.var(undefined, { correction: 1 }), x.std()].map((t) => t.toArraySync()); }",
    want: [1.25, 5 / 3, Math.sqrt(1.25)],
  },
  // [3, -4]: 2-norm 5, 1-norm 7.
  {
    family: "numerics",
    name: "norm",
    code: "(bw) => { const x = bw.tensor([3, -4]); return [x.norm(), x.norm(1)].map((t) => t.toArraySync()); }",
    want: [5, 7],
  },
  {
    family: "numerics",
    name: "einsum",
    code: '(bw) => bw.einsum("ij,jk->ik", bw.tensor([[1, 2]]), bw.tensor([[3], [4]])).toArraySync()',
    want: [[11]],
  },
  // --- bitwise ---
  // 12 = 0b1100, 10 = 0b1010: and 0b1000, or 0b1110, xor 0b0110; ~0 = -1; 1 << 3; 16 >> 2.
  {
    family: "bitwise",
    name: "and, or, xor, not, shifts (int32)",
    code: '(bw) => { const i = (v) => bw.tensor([v], { dtype: "int32" }); return [i(12).bitwiseAnd(10), i(12).bitwiseOr(10), i(12).bitwiseXor(10), i(0).bitwiseNot(), i(1).leftShift(3), i(16).rightShift(2)].map((t) => t.toArraySync()[0]); }',
    want: [8, 14, 6, -1, 8, 4],
  },
  {
    family: "bitwise",
    name: "not (uint32)",
    code: '(bw) => bw.tensor([0], { dtype: "uint32" }).bitwiseNot().toArraySync()',
    want: [2 ** 32 - 1],
  },
  // --- indexing ---
  {
    family: "indexing",
    name: "take",
    code: "(bw) => bw.tensor([4, 3, 5, 7, 6, 8]).take([0, 1, 4]).toArraySync()",
    want: [4, 3, 6],
  },
  // Adds 1 at 0, 2, 0: position 0 twice.
  {
    family: "indexing",
    name: "at().add, at().set",
    code: "(bw) => [bw.zeros([], [4]).at([0, 2, 0]).add(1).toArraySync(), bw.tensor([1, 2, 3]).at([1]).set(9).toArraySync()]",
    want: [
      [2, 0, 1, 0],
      [1, 9, 3],
    ],
  },
  {
    family: "indexing",
    name: "atIndex",
    code: "(bw) => bw.zeros([], [2, 3]).atIndex([1, bw.sl(0, 2)]).set(7).toArraySync()",
    want: [
      [0, 0, 0],
      [7, 7, 0],
    ],
  },
  // [[0, 1, 2], [3, 4, 5]]: all rows, columns 2 and 0; last row reversed.
  {
    family: "indexing",
    name: "baseIndex",
    code: '(bw) => { const x = bw.tensor([[0, 1, 2], [3, 4, 5]]); return [x.baseIndex([bw.sl(), [2, 0]]).toArraySync(), x.baseIndex([-1, "::-1"]).toArraySync()]; }',
    want: [
      [
        [2, 0],
        [5, 3],
      ],
      [5, 4, 3],
    ],
  },
  // (2; 3): batch reversed, base columns 0 and 2.
  {
    family: "indexing",
    name: "index",
    code: '(bw) => bw.tensor([[0, 1, 2], [3, 4, 5]], { batchDim: 1 }).index(["::-1", [0, 2]]).toArraySync()',
    want: [
      [3, 5],
      [0, 2],
    ],
  },
  // (3; 2): batch rows 2 then 0.
  {
    family: "indexing",
    name: "batchIndex",
    code: "(bw) => bw.tensor([[0, 1], [2, 3], [4, 5]], { batchDim: 1 }).batchIndex([[2, 0]]).toArraySync()",
    want: [
      [4, 5],
      [0, 1],
    ],
  },
  // Nonzero positions of [0, 3, 0, 5] are 1 and 3; masking keeps 3 and 5.
  {
    family: "indexing",
    name: "booleanMask, nonzero",
    code: "(bw) => { const x = bw.tensor([0, 3, 0, 5]); return [bw.booleanMask(x, x.ne(0)).toArraySync(), bw.nonzero(x).toArraySync().flat()]; }",
    want: [
      [3, 5],
      [1, 3],
    ],
  },
  // --- comparisons ---
  {
    family: "comparisons",
    name: "lt, ge, eq, ne",
    code: "(bw) => { const x = bw.tensor([1, 2, 3]); return [x.lt(2), x.ge(2), x.eq(bw.tensor([1, 0, 3])), x.ne(2)].map((t) => t.toArraySync()); }",
    want: [
      [true, false, false],
      [false, true, true],
      [true, false, true],
      [true, false, true],
    ],
  },
  // 1e-7 apart is within the default tolerances; 0.1 apart is not.
  {
    family: "comparisons",
    name: "isClose, allClose, allEqual",
    code: "(bw) => { const x = bw.tensor([1, 2]); return [x.isClose(bw.tensor([1, 2.1])), x.allClose(bw.tensor([1, 2.0000001])), x.allClose(bw.tensor([1, 2.1])), x.allEqual(bw.tensor([1, 2]))].map((t) => t.toArraySync()); }",
    want: [[true, false], true, false, true],
  },
  {
    family: "comparisons",
    name: "isNan, isInf, isFinite",
    code: "(bw) => { const x = bw.tensor([NaN, Infinity, 1]); return [x.isNan(), x.isInf(), x.isFinite()].map((t) => t.toArraySync()); }",
    want: [
      [true, false, false],
      [false, true, false],
      [false, false, true],
    ],
  },
  // heaviside(x, 0.5): 0 below zero, 0.5 at zero, 1 above; macaulay = max(x, 0); cross of e1 and e2 = e3.
  {
    family: "comparisons",
    name: "heaviside, macaulay, cross",
    code: "(bw) => { const x = bw.tensor([-2, 0, 3]); return [x.heaviside(0.5), x.macaulay(), bw.tensor([1, 0, 0]).cross(bw.tensor([0, 1, 0]))].map((t) => t.toArraySync()); }",
    want: [
      [0, 0.5, 1],
      [0, 0, 3],
      [0, 0, 1],
    ],
  },
  // --- linalg ---
  // det [[2, 1], [1, 3]] = 2*3 - 1*1 = 5; inverse of diag(2, 4) is diag(1/2, 1/4); diag(2, 4) x = [2, 8] gives [1, 2].
  {
    family: "linalg",
    name: "det, inv, solve",
    code: "(bw) => { const d = bw.tensor([[2, 0], [0, 4]]); return [bw.linalg.det(bw.tensor([[2, 1], [1, 3]])), bw.linalg.inv(d), bw.linalg.solve(d, bw.tensor([[2], [8]]))].map((t) => t.toArraySync()); }",
    want: [
      5,
      [
        [0.5, 0],
        [0, 0.25],
      ],
      [[1], [2]],
    ],
    tol: 1e-5,
  },
  // [[4, 2], [2, 5]] = L L^T with L = [[2, 0], [1, 2]] (2*2 = 4, 1*2 = 2, 1 + 4 = 5).
  {
    family: "linalg",
    name: "cholesky, trace, eigvalsh, svdvals",
    code: "(bw) => [bw.linalg.cholesky(bw.tensor([[4, 2], [2, 5]])), bw.linalg.trace(bw.tensor([[1, 2], [3, 4]])), bw.linalg.eigvalsh(bw.tensor([[2, 0], [0, 3]])), bw.linalg.svdvals(bw.tensor([[3, 0], [0, -4]]))].map((t) => t.toArraySync())",
    want: [
      [
        [2, 0],
        [1, 2],
      ],
      5,
      [2, 3],
      [4, 3],
    ],
    tol: 1e-5,
  },
  // Frobenius norm of diag(3, 4) = 5; vector 2-norm of [3, 4] = 5.
  {
    family: "linalg",
    name: "vectorNorm, matrixNorm",
    code: "(bw) => [bw.linalg.vectorNorm(bw.tensor([3, 4])), bw.linalg.matrixNorm(bw.tensor([[3, 0], [0, 4]]))].map((t) => t.toArraySync())",
    want: [5, 5],
    tol: 1e-5,
  },
  // --- typed tensors ---
  // |(3, 4, 0)| = 5; (1, 2, 3) . (4, 5, 6) = 4 + 10 + 18 = 32; e1 x e2 = e3.
  {
    family: "typed",
    name: "Vec norm, dot, cross",
    code: "(bw) => [bw.Vec.fill(3, 4, 0).norm().t, bw.Vec.fill(1, 2, 3).dot(bw.Vec.fill(4, 5, 6)).t, bw.Vec.fill(1, 0, 0).cross(bw.Vec.fill(0, 1, 0)).t].map((t) => t.toArraySync())",
    want: [5, 32, [0, 0, 1]],
  },
  {
    family: "typed",
    name: "R2 identity, Rot identity, Scalar",
    code: "(bw) => [bw.R2.identity().t, bw.Rot.identity().t, bw.Scalar.fill(2).t].map((t) => t.toArraySync())",
    want: [
      [
        [1, 0, 0],
        [0, 1, 0],
        [0, 0, 1],
      ],
      [0, 0, 0],
      2,
    ],
  },
  // --- ragged / jagged ---
  // Rows [1, 2, 3] and [4, 5]: sums 6, 9; means 2, 4.5; padded with 0.
  {
    family: "jagged",
    name: "jagged sum, mean, toPadded",
    code: "(bw) => { const j = bw.jagged([bw.tensor([1, 2, 3]), bw.tensor([4, 5])]); return [j.sum().toArraySync(), j.mean().toArraySync(), j.toPadded({ paddingValue: 0 }).padded.toArraySync()]; }",
    want: [
      [6, 9],
      [2, 4.5],
      [
        [1, 2, 3],
        [4, 5, 0],
      ],
    ],
  },
  // padSequence of [1, 2] and [3] over batch dim 0 pads the second with 0.
  {
    family: "jagged",
    name: "padSequence",
    code: "(bw) => bw.padSequence([bw.tensor([1, 2], { batchDim: 1 }), bw.tensor([3], { batchDim: 1 })]).toArraySync()",
    want: [
      [1, 2],
      [3, 0],
    ],
  },
  // --- TensorDict ---
  {
    family: "tensordict",
    name: "get, nested keys, stack",
    code: '(bw) => { const td = new bw.TensorDict({ a: bw.tensor([1, 2, 3], { batchDim: 1 }), b: { c: bw.tensor([[1, 2], [3, 4], [5, 6]], { batchDim: 1 }) } }, [3]); const s = bw.stack([td, td], 0); return [td.getTensor("a").toArraySync(), td.getTensor(["b", "c"]).sum(-1).toArraySync(), s.batchSize]; }',
    want: [
      [1, 2, 3],
      [3, 7, 11],
      [2, 3],
    ],
  },
  // The installed methods: row 1 set to 9; a non-tensor entry read back.
  {
    family: "tensordict",
    name: "setAt, setNonTensor, getNonTensor",
    code: '(bw) => { const td = new bw.TensorDict({ a: bw.tensor([1, 2, 3], { batchDim: 1 }) }, [3]); return [td.setAt(1, { a: bw.tensor(9) }).getTensor("a").toArraySync(), td.setNonTensor("label", "cells").getNonTensor("label")]; }',
    want: [[1, 9, 3], "cells"],
  },
  // --- random ---
  // Random123's known-answer vector for Threefry-2x32 (20 rounds), key (0, 0), counter (0, 0): 0x6b200159, 0x99ba4efe.
  {
    family: "random",
    name: "threefry2x32 known answer",
    code: '(bw) => { const u = (v) => bw.tensor(v, { dtype: "uint32" }); return bw.random.threefry2x32(u([0, 0]), u([0]), u([0])).map((t) => t.toArraySync()[0]); }',
    want: [0x6b200159, 0x99ba4efe],
  },
  // uniform: 1000 values in [0, 1), the same for the same key, mean within 0.05 of 1/2; a permutation of 0..4.
  {
    family: "random",
    name: "uniform, permutation",
    code: "(bw) => { const k = bw.random.key(7); const a = bw.random.uniform(k, [1000]).toArraySync(); const b = bw.random.uniform(k, [1000]).toArraySync(); const mean = a.reduce((s, v) => s + v, 0) / a.length; return [a.every((v) => v >= 0 && v < 1), a.every((v, i) => v === b[i]), Math.abs(mean - 0.5) < 0.05, bw.random.permutation(k, 5).toArraySync().slice().sort((p, q) => p - q)]; }",
    want: [true, true, true, [0, 1, 2, 3, 4]],
  },
  // --- jit ---
  // 2x + 1 at two batch sizes, one trace.
  {
    family: "jit",
    name: "one trace for two batch sizes",
    code: "(bw) => { const f = bw.jit((x) => x.mul(2).add(1).sum(-1)); const a = f(bw.tensor([[1, 2]], { batchDim: 1 })).toArraySync(); const b = f(bw.tensor([[1, 2], [3, 4], [5, 6]], { batchDim: 1 })).toArraySync(); return [a, b, f.stats.traces]; }",
    want: [[8], [8, 16, 24], 1],
  },
  // --- derivatives ---
  // d/dx sum(x^2) = 2x; d/dx sum(sin x) at 0 = cos 0 = 1.
  {
    family: "derivatives",
    name: "grad, valueAndGrad",
    code: "(bw) => { const [v, g] = bw.valueAndGrad((x) => x.sin().sum())(bw.tensor([0, 0])); return [bw.grad((x) => x.mul(x).sum())(bw.tensor([1, 2, 3])).toArraySync(), v.toArraySync(), g.toArraySync()]; }",
    want: [[2, 4, 6], 0, [1, 1]],
  },
];

/** The export names that `CASES` uses (`bw.<name>`): a page must expose at least these. */
export function caseNames(): string[] {
  const names = new Set<string>();
  for (const c of CASES) for (const m of c.code.matchAll(/\bbw\.([A-Za-z_$][\w$]*)/g)) names.add(m[1]!);
  return [...names].sort();
}

/**
 * Source of `(bw) => surface`: for each export, `"class"` with its prototype's own
 * properties (`name()` for methods, `name:get` for getters, `name:<type>` for other
 * values) and the class's own static ones, `"object"` with its keys (namespaces
 * such as linalg and random), or the value's type. Runs in Node and in the page.
 */
export const SURFACE = `(bw) => {
  const props = (o) => Object.getOwnPropertyNames(o)
    .filter((n) => !["constructor", "length", "name", "prototype", "arguments", "caller"].includes(n))
    .map((n) => { const d = Object.getOwnPropertyDescriptor(o, n); return d.get || d.set ? n + ":get" : typeof d.value === "function" ? n + "()" : n + ":" + typeof d.value; })
    .sort();
  const out = {};
  for (const name of Object.keys(bw).sort()) {
    const v = bw[name];
    if (typeof v === "function" && v.prototype !== undefined && Object.getOwnPropertyNames(v.prototype).length > 1)
      out[name] = { kind: "class", prototype: props(v.prototype), statics: props(v) };
    else if (typeof v === "function") out[name] = { kind: "function" };
    else if (typeof v === "object" && v !== null) out[name] = { kind: "object", keys: Object.keys(v).sort() };
    else out[name] = { kind: typeof v };
  }
  return out;
}`;

/** What a case gave: its value, or the error it threw. */
export interface Ran {
  readonly name: string;
  readonly value?: unknown;
  readonly error?: string;
}

/** Source of `(bw, cases) => Ran[]`: runs each case's code in the page. */
export const RUN_CASES = `(bw, cases) => cases.map((c) => {
  try {
    const fn = new Function("return (" + c.code + ");")();
    return { name: c.name, value: fn(bw) };
  } catch (e) {
    return { name: c.name, error: (e && e.constructor ? e.constructor.name + ": " : "") + (e && e.message ? e.message : String(e)) };
  }
})`;

/** Whether `got` equals `want`: numbers within `tol` (NaN equals NaN), arrays and plain objects element by element. */
export function close(got: unknown, want: unknown, tol: number): boolean {
  if (typeof want === "number")
    return (
      typeof got === "number" && (Object.is(got, want) || Math.abs(got - want) <= tol || (isNaN(got) && isNaN(want)))
    );
  if (Array.isArray(want))
    return Array.isArray(got) && got.length === want.length && want.every((w, i) => close(got[i], w, tol));
  if (typeof want === "object" && want !== null) {
    if (typeof got !== "object" || got === null) return false;
    const keys = Object.keys(want);
    return (
      keys.length === Object.keys(got).length &&
      keys.every((k) => close((got as Record<string, unknown>)[k], (want as Record<string, unknown>)[k], tol))
    );
  }
  return Object.is(got, want);
}

/** The cases whose result differs from the expected value (or threw), with what they gave. */
export function failures(ran: readonly Ran[]): { name: string; got: unknown; want: unknown }[] {
  const out: { name: string; got: unknown; want: unknown }[] = [];
  for (const c of CASES) {
    const r = ran.find((x) => x.name === c.name);
    if (r === undefined) out.push({ name: c.name, got: "(not run)", want: c.want });
    else if (r.error !== undefined) out.push({ name: c.name, got: r.error, want: c.want });
    else if (!close(r.value, c.want, c.tol ?? 1e-6)) out.push({ name: c.name, got: r.value, want: c.want });
  }
  return out;
}
