/**
 * The numerics compositions and the random draws against the reference interpreter:
 * each result's graph (built as the eager path builds it) is evaluated by
 * `ir/interpret.ts` and compared bit for bit with the pipeline's JS kernels, on random
 * batches laced with NaN, ±Inf, -0 and repeated values, for float32, float64 and int32.
 */
import { expect, it } from "vitest";
import { interpret } from "../../ir/interpret.js";
import { buildGraph } from "../../src/graph.js";
import { einsum, fromTypedArray, random, type Tensor } from "../../src/index.js";
import { rng } from "../helpers/random-graph.js";
import { compileJs, runJs } from "../helpers/run.js";

const SPECIAL = [NaN, Infinity, -Infinity, -0, 0, 1, -1, 2.5];

function data(
  seed: number,
  n: number,
  dtype: "float32" | "float64" | "int32",
): Float32Array | Float64Array | Int32Array {
  const r = rng(seed);
  const vals = Array.from({ length: n }, () =>
    dtype === "int32"
      ? Math.floor(r() * 7) - 3
      : r() < 0.2
        ? SPECIAL[Math.floor(r() * SPECIAL.length)]!
        : Math.round((r() * 8 - 4) * 4) / 4,
  );
  return dtype === "int32"
    ? Int32Array.from(vals)
    : dtype === "float64"
      ? Float64Array.from(vals)
      : Float32Array.from(vals);
}

/**
 * Interpreter vs the pass pipeline and the JS backend on the graph of `t` (float32 rounded
 * after every op, the "exact" mode): the same bits (NaN any NaN).
 */
function same(t: Tensor, what: string): string[] {
  const { graph, captured } = buildGraph("diff", [t], []);
  const inputs = captured.map((c) => ({
    type: { dtype: c.dtype, batch: [...c.batchShape], base: [...c.baseShape] },
    data: c.dataSync(),
  }));
  const [ref] = interpret(graph, inputs);
  const got = runJs(compileJs(graph), inputs)[0]!.data;
  const out: string[] = [];
  if (got.length !== ref!.data.length) return [`${what}: ${got.length} values vs ${ref!.data.length}`];
  for (let i = 0; i < got.length; i++) {
    const a = got[i]!;
    const b = ref!.data[i]!;
    if (!(Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b)))) out.push(`${what}[${i}]: ${a} vs interpreter ${b}`);
  }
  return out;
}

it("numerics match the reference interpreter bit for bit on random special-laced batches", () => {
  const errors: string[] = [];
  for (let seed = 1; seed <= 6; seed++) {
    for (const dtype of ["float32", "float64", "int32"] as const) {
      const x = fromTypedArray(data(seed, 3 * 4 * 5, dtype), [3, 4, 5], { batchDim: 1 }); // (3; 4,5)
      const m = fromTypedArray(data(seed + 100, 5 * 2, dtype), [5, 2]); // (;5,2)
      const cases: [string, Tensor][] = [
        ["cumsum0", x.cumsum(0)],
        ["cumsum1", x.cumsum(1)],
        ["cumprod", x.cumprod()],
        ["sort", x.sort()],
        ["sort desc axis0", x.sort(0, { descending: true })],
        ["argsort", x.argsort()],
        ["topk", x.topk(3).values],
        ["topk indices", x.topk(2, 0, { largest: false }).indices],
        ["softmax", x.softmax()],
        ["logSoftmax", x.logSoftmax(0)],
        ["logsumexp", x.logsumexp([0, 1])],
        ["var", x.var(1, { correction: 1 })],
        ["std", x.std()],
        ["norm", x.norm()],
        ["norm1", x.norm(1, 0)],
        ["norm3", x.norm(3, 1)],
        ["einsum", einsum("ij,jk->ik", x, m)],
        ["einsum trace", einsum("ii", x.slice(1, 0, 4))],
        ["einsum ...", einsum("...j,j", x, m.select(1, 0))],
      ];
      for (const [name, t] of cases) errors.push(...same(t, `${name}/${dtype}/seed ${seed}`));
    }
  }
  expect(errors.slice(0, 20)).toEqual([]);
});

it("random draws match the reference interpreter bit for bit", () => {
  const keys = random.split(random.key(3), 4).rebatch(1);
  const errors = [
    ...same(random.bits(keys, [7]), "bits"),
    ...same(random.uniform(keys, [2, 3], { minval: -2, maxval: 5 }), "uniform"),
    ...same(random.uniform(keys, [3], { dtype: "float64" }), "uniform f64"),
    ...same(random.normal(keys, [9]), "normal"),
    ...same(random.split(keys, 3), "split"),
    ...same(random.permutation(keys, 6), "permutation"),
  ];
  expect(errors).toEqual([]);
});
