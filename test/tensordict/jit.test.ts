/**
 * TensorDicts as `jit` arguments and results: the function traces once per
 * structure (keys, nesting, batch ranks, dtypes and base shapes) and runs at any
 * batch size; a bundle of it takes and returns TensorDicts too. Expected values
 * are computed by hand from arange inputs.
 */
import { describe, expect, it } from "vitest";
import {
  arange,
  dictSpec,
  jagged,
  JaggedTensor,
  jit,
  loadBundle,
  spec,
  TensorDict,
  trace,
  TraceError,
  type Tensor,
} from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";

/** x (B; 3) = 0..3B-1 row-major, n.y (B;) = 10, 11, …. */
function input(B: number): TensorDict {
  return new TensorDict(
    {
      x: arange(B * 3)
        .reshape([B, 3])
        .rebatch(1),
      n: { y: arange(10, 10 + B).rebatch(1) },
    },
    [B],
  );
}

const step = (td: TensorDict) => {
  const x = td.getTensor("x");
  const y = td.getTensor(["n", "y"]);
  // z[b] = x[b] * 2 + y[b] (y broadcast over the base), s[b] = sum of x[b]
  return new TensorDict({ z: x.mul(2).add(y.unsqueeze(0)), stats: { s: x.sum(0) } }, td.batchSize);
};

describe("TensorDict through jit", () => {
  it("traces once and runs at any batch size, with the structure rebuilt around the results", () => {
    const f = jit(step);
    for (const B of [1, 4, 9]) {
      const out = f(input(B));
      expect(out).toBeInstanceOf(TensorDict);
      expect(out.batchSize).toEqual([B]);
      const b = B - 1;
      // x[b] = [3b, 3b+1, 3b+2], y[b] = 10 + b
      expect((out.getTensor("z").toArraySync() as number[][])[b]).toEqual([
        6 * b + 10 + b,
        6 * b + 2 + 10 + b,
        6 * b + 4 + 10 + b,
      ]);
      expect((out.getTensor(["stats", "s"]).toArraySync() as number[])[b]).toBe(9 * b + 3);
    }
    expect(f.stats.traces).toBe(1);
    expect(f.stats.cacheHits).toBe(2);
  });

  it("a different structure is another trace; the same structure with new sizes is not", () => {
    const f = jit((td: TensorDict) => td.apply((t) => t.mul(3)));
    f(input(2));
    f(input(5));
    expect(f.stats.traces).toBe(1);
    f(new TensorDict({ x: arange(6).reshape([2, 3]).rebatch(1) }, [2]));
    expect(f.stats.traces).toBe(2);
    const out = f(new TensorDict({ x: arange(3).reshape([1, 3]).rebatch(1) }, [1]));
    expect(out.getTensor("x").toArraySync()).toEqual([[0, 3, 6]]);
    expect(f.stats.traces).toBe(2);
  });

  it("jagged entries and mixed argument lists", () => {
    const f = jit((td: TensorDict, k: Tensor) => {
      const c = td.get("c") as JaggedTensor;
      return [c.mean().mul(k), new TensorDict({ c: c.mul(2) }, td.batchSize)] as const;
    });
    const run = (lengths: number[]) => {
      const rows = lengths.map((n, i) => arange(n).add(i).rebatch(1));
      return f(new TensorDict({ c: jagged(rows) }, [lengths.length]), arange(1, 2));
    };
    const [m, td] = run([2, 4]);
    // row 0: 0,1 -> mean 0.5; row 1: 1,2,3,4 -> mean 2.5
    expect(m.toArraySync()).toEqual([[0.5], [2.5]]); // k is (;1)
    expect((td.get("c") as JaggedTensor).toList().map((t) => t.toArraySync())).toEqual([
      [0, 2],
      [2, 4, 6, 8],
    ]);
    run([3, 1, 1]);
    expect(f.stats.traces).toBe(1);
  });

  it("a bundle of it takes and returns TensorDicts", async () => {
    const f = jit(step);
    f(input(2));
    const g = await loadBundle(await importBundle(f.bundle()));
    const got = g(input(6)) as TensorDict;
    const want = f(input(6));
    expect(got.toString()).toBe(want.toString());
    expect(got.getTensor("z").toArraySync()).toEqual(want.getTensor("z").toArraySync());
    expect(() => g(input(2).batchIndex(0, 0))).toThrowError();
  });

  it("trace(fn, specs) with a dictSpec: traced before any data; the first call is a cache hit", () => {
    const f = trace(step, [
      dictSpec(["B"], { x: spec("float32", ["B"], [3]), n: dictSpec(["B"], { y: spec("float32", ["B"], []) }) }),
    ]);
    expect(f.stats.traces).toBe(1);
    expect(f.dump()).toContain("f32[b0; 3]");
    const out = f(input(3));
    expect(f.stats).toMatchObject({ traces: 1, cacheHits: 1 });
    expect((out.getTensor("z").toArraySync() as number[][])[2]).toEqual([12 + 12, 14 + 12, 16 + 12]);
    expect(() => trace(step, [dictSpec(["B", "N"], { x: spec("float32", ["B"], [3]) })])).toThrowError(
      /spec 0.x has 1 batch dims, fewer than its dict's \[B, N\]/,
    );
  });

  it("results must be tensors, jagged tensors or TensorDicts", () => {
    const f = jit((td: TensorDict) => td.keys() as unknown as Tensor);
    expect(() => f(input(2))).toThrowError(TraceError);
  });
});
