/**
 * sort, argsort and topk of axes longer than 1024 elements: the looped merge-sort
 * kernel (the `routine` op's `sort`), against a host stable sort written here, with
 * NaN, ±0 and ties, ascending and descending, leading base dims, integer and bool
 * dtypes, on JS and WebAssembly, and one trace for two batch sizes.
 */
import { afterAll, describe, expect, it } from "vitest";
import { argsort, fromTypedArray, initWasm, jit, setBackend, sort, topk, type Tensor } from "../../src/index.js";
import { UnsupportedOpError } from "../../src/index.js";

/** The stable order of a row: ascending NaN last, or descending NaN first; ties by position. */
function hostOrder(row: readonly number[], descending: boolean): number[] {
  const idx = row.map((_, i) => i);
  return idx.sort((i, j) => {
    const ni = Number.isNaN(row[i]!);
    const nj = Number.isNaN(row[j]!);
    if (ni !== nj) return (ni ? 1 : -1) * (descending ? -1 : 1);
    if (ni) return i - j;
    const d = descending ? row[j]! - row[i]! : row[i]! - row[j]!;
    return d !== 0 ? d : i - j;
  });
}

const L = 1500;
function data(count: number, seed: number): Float32Array {
  let s = seed;
  const r = (): number => ((s = (s * 16807) % 2147483647) / 2147483647) * 2 - 1;
  return Float32Array.from({ length: count * L }, (_, i) =>
    i % 101 === 0 ? NaN : i % 37 === 0 ? (i % 2 ? -0 : 0) : i % 53 === 0 ? Infinity : Math.round(r() * 40),
  );
}

async function check(x: Tensor, d: ArrayLike<number>, count: number): Promise<void> {
  for (const descending of [false, true]) {
    const [v, i] = await Promise.all([sort(x, -1, { descending }).data(), argsort(x, -1, { descending }).data()]);
    for (let b = 0; b < count; b++) {
      const row = Array.from(d).slice(b * L, (b + 1) * L);
      const order = hostOrder(row, descending);
      expect(Array.from(i.slice(b * L, (b + 1) * L))).toEqual(order);
      order.forEach((k, j) => expect(Object.is(v[b * L + j], row[k]) || v[b * L + j] === row[k]).toBe(true));
    }
  }
  const t = topk(x, 4);
  const ti = await t.indices.data();
  for (let b = 0; b < count; b++)
    expect(Array.from(ti.slice(b * 4, b * 4 + 4))).toEqual(
      hostOrder(Array.from(d).slice(b * L, (b + 1) * L), true).slice(0, 4),
    );
}

describe("looped sort (axes above 1024)", () => {
  it("JS: float32 with NaN, ±0, Inf and ties; int32; bool; leading base dims; axis 0", async () => {
    const d = data(3, 7);
    await check(fromTypedArray(d, [3, L], { batchDim: 1 }), d, 3);
    const ints = Int32Array.from(d, (v) => (Number.isFinite(v) ? v : 5));
    await check(fromTypedArray(ints, [3, L], { batchDim: 1 }), ints, 3);
    const bools = Uint8Array.from(d, (v) => (v > 0 ? 1 : 0));
    const bs = await argsort(fromTypedArray(bools, [3, L], { batchDim: 1, dtype: "bool" })).data();
    expect(Array.from(bs.slice(0, L))).toEqual(hostOrder(Array.from(bools.slice(0, L)), false));
    // (; 3, L): leading base dims; and the same rows along axis 0 of (; L, 3).
    const lead = await argsort(fromTypedArray(d, [3, L])).data();
    expect(Array.from(lead.slice(L, 2 * L))).toEqual(hostOrder(Array.from(d.slice(L, 2 * L)), false));
    const tr = fromTypedArray(d, [3, L]).transpose();
    const a0 = await argsort(tr, 0).data();
    expect(Array.from({ length: L }, (_, j) => a0[j * 3 + 1])).toEqual(hostOrder(Array.from(d.slice(L, 2 * L)), false));
  });

  it("one trace for two batch sizes; empty batches; over 2^24 is a typed error", async () => {
    const f = jit((x: Tensor) => argsort(x));
    for (const count of [1, 4]) {
      const d = data(count, count);
      const got = await f.callAsync(fromTypedArray(d, [count, L], { batchDim: 1 }));
      expect(Array.from(got.dataSync().slice(0, L))).toEqual(hostOrder(Array.from(d.slice(0, L)), false));
    }
    expect(f.stats.traces).toBe(1);
    expect(sort(fromTypedArray(new Float32Array(0), [0, L], { batchDim: 1 })).shape).toEqual([0, L]);
    expect((await sort(fromTypedArray(new Float32Array(0), [0, L], { batchDim: 1 })).data()).length).toBe(0);
    const huge = fromTypedArray(new Float32Array(1), [1, 1]).expand([1, 2 ** 24 + 1]);
    expect(() => sort(huge)).toThrow(UnsupportedOpError);
  });

  it("WebAssembly", async () => {
    await initWasm({ threads: 1 });
    const d = data(2, 3);
    await check(fromTypedArray(d, [2, L], { batchDim: 1 }), d, 2);
  });
  afterAll(() => setBackend("js"));
});
