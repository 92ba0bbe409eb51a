/**
 * Numerics, bitwise ops and random draws ship in bundles: the bundle of a jit function
 * that uses them loads (its kernels re-generated and checked), and gives the jit
 * function's values at new batch sizes with no trace and no compile.
 */
import { expect, it } from "vitest";
import { counters, einsum, jit, loadBundle, random, tensor, type Tensor } from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";

it("a bundle with sort, cumsum, softmax, var, einsum, shifts and random draws runs at any batch size", async () => {
  const f = jit((x: Tensor, key: Tensor) => [
    x.sort(),
    x.argsort(-1, { descending: true }),
    x.cumsum(),
    x.softmax(),
    x.var(-1, { correction: 1 }),
    einsum("i,i->", x, tensor([1, 2, 3])),
    key.rightShift(3).bitwiseXor(key.leftShift(29)),
    random.uniform(key, [4]),
    random.permutation(key, 5),
  ]);
  const xs = (b: number): Tensor =>
    tensor(
      Array.from({ length: b }, (_, i) => [i % 3, NaN, -i]),
      { batchDim: 1 },
    );
  const keys = (b: number): Tensor => random.split(random.key(b), b).rebatch(1);
  f(xs(2), keys(2));
  const mod = await importBundle(f.bundle());
  const args = [1, 4].map((b) => [xs(b), keys(b)] as const);
  const wants = args.map(([x, k]) => (f(x, k) as Tensor[]).map((t) => [...t.dataSync()]));
  // The inputs exist before the counters are read: only the bundle's own work counts.
  for (const [x, k] of args) {
    x.dataSync();
    k.dataSync();
  }
  const before = { traces: counters.traces, compiles: counters.compiles };
  const g = await loadBundle(mod);
  args.forEach(([x, k], j) => {
    const got = g(x, k) as Tensor[];
    wants[j]!.forEach((w, i) => expect([...got[i]!.dataSync()], `output ${i}`).toEqual(w));
  });
  expect(counters.traces - before.traces).toBe(0);
  expect(counters.compiles - before.compiles).toBe(0);
});
