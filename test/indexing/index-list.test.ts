/**
 * NumPy-style index lists (`x.baseIndex`, `x.batchIndex(list)`, `x.index`, `sl`,
 * `resolveBaseIndex`): expected values are NumPy's, computed with NumPy 2 on
 * `np.arange` data and written out literally; special values on JS and WebGPU;
 * inside `jit` one trace serves two batch sizes; typed errors.
 */
import { describe, expect, it } from "vitest";
import {
  counters,
  DTypeError,
  fromTypedArray,
  jit,
  resolveBaseIndex,
  ShapeError,
  sl,
  tensor,
  TraceError,
  zeros,
  type Tensor,
} from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { onWebGPU } from "../helpers/on-webgpu.js";
import { bits, I, INT_MIN } from "../helpers/index-values.js";

/** `np.arange(prod(shape)).reshape(shape)` as a float32 tensor with `batchDim` batch dims. */
function arange(shape: readonly number[], batchDim = 0): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  return fromTypedArray(
    Float32Array.from({ length: n }, (_, i) => i),
    shape,
    { batchDim },
  );
}

/** Shape text and values, read on the current backend. */
async function got(t: Tensor): Promise<[string, number[]]> {
  return [t.toString(), Array.from(await t.data())];
}

/** NumPy's results on `t = np.arange(24).reshape(2, 3, 4)`, as base dims (the first block) or split (2; 3,4). */
async function numpyCases(): Promise<void> {
  const t = arange([2, 3, 4]);
  // t[1, 0:2, [1, 2]]: the integer counts as an advanced index, adjacent to the array.
  expect(await got(t.baseIndex([1, sl(0, 2), [1, 2]]))).toEqual(["(;2,2)", [13, 17, 14, 18]]);
  // t[:, [1, 2], [1, 2]] (Open3D's IndexGet example).
  expect(await got(t.baseIndex([":", [1, 2], [1, 2]]))).toEqual(["(;2,2)", [5, 10, 17, 22]]);
  // t[[0, 1], None, [0, 1]]: None between the arrays is a gap, so the broadcast dims go first.
  expect(await got(t.baseIndex([[0, 1], null, [0, 1]]))).toEqual(["(;2,1,4)", [0, 1, 2, 3, 16, 17, 18, 19]]);
  // t[..., ::-2]
  expect(await got(t.baseIndex(["...", "::-2"]))).toEqual(["(;2,3,2)", [3, 1, 7, 5, 11, 9, 15, 13, 19, 17, 23, 21]]);
  // t[-1, ::-1, None]
  expect(await got(t.baseIndex([-1, sl(null, null, -1), null]))).toEqual([
    "(;3,1,4)",
    [20, 21, 22, 23, 16, 17, 18, 19, 12, 13, 14, 15],
  ]);
  // t[[True, False]] and t[:, [True, False, True], 1]
  expect(await got(t.baseIndex([[true, false]]))).toEqual(["(;1,3,4)", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]]);
  expect(await got(t.baseIndex([":", [true, false, true], 1]))).toEqual(["(;2,2)", [1, 9, 13, 21]]);
  // t[1, :, [0, 2]]: integer and array not adjacent, so the broadcast dim goes first.
  expect(await got(t.baseIndex([1, ":", [0, 2]]))).toEqual(["(;2,3)", [12, 16, 20, 14, 18, 22]]);
  // The same lists through x.index on a tensor with batch dims, where they stay in the base.
  const tb = arange([2, 3, 4], 1); // (2; 3,4)
  expect(await got(tb.index([":", 0, [3, 1]]))).toEqual(["(2; 2)", [3, 1, 15, 13]]);
  // y[::-1, 0, [2, 0]] on (2; 3,4): batch reversed (a negative-step batch slice), base gathered.
  expect(await got(tb.index(["::-1", 0, [2, 0]]))).toEqual(["(2; 2)", [14, 12, 2, 0]]);
  // y[1, :, [0, 3]]: not adjacent, so NumPy puts the block first. On (2; 3,4) the ":" is on a
  // base dim, so the block and it are base dims; on (2,3; 4) the ":" is a batch dim and the
  // block lands in front of it, so both are batch dims.
  expect(await got(tb.index([1, ":", [0, 3]]))).toEqual(["(;2,3)", [12, 16, 20, 15, 19, 23]]);
  expect(await got(arange([2, 3, 4], 2).index([1, ":", [0, 3]]))).toEqual(["(2,3;)", [12, 16, 20, 15, 19, 23]]);
}

describe("index lists: NumPy's results (JS)", () => {
  it("base indexing: ints, slices, negative steps, None, Ellipsis, integer and boolean arrays", async () => {
    await numpyCases();
  });

  it("negative-step slices take Python's defaults and clamp as slice.indices does", () => {
    const a = arange([5]);
    const v = (item: Parameters<Tensor["baseIndex"]>[0][number]): number[] =>
      Array.from(a.baseIndex([item]).dataSync());
    expect(v(sl(null, null, -2))).toEqual([4, 2, 0]);
    expect(v(sl(3, -9, -1))).toEqual([3, 2, 1, 0]);
    expect(v(sl(-1, 0, -2))).toEqual([4, 2]);
    expect(v({ step: -3 })).toEqual([4, 1]);
    expect(v(sl(10, null, -1))).toEqual([4, 3, 2, 1, 0]);
    expect(v("-2::-1")).toEqual([3, 2, 1, 0]);
    expect(v(":1:-1")).toEqual([4, 3, 2]);
    expect(v("1:3")).toEqual([1, 2]);
    expect(v(sl(0, 2, -1))).toEqual([]);
  });

  it("batch indexing: x = np.arange(24).reshape(4, 3, 2) as (4,3; 2); batchIndex(axis, i) still works", () => {
    const x = arange([4, 3, 2], 2);
    const b1 = x.batchIndex(["::-1"]);
    expect(b1.toString()).toBe("(4,3; 2)");
    expect(Array.from(b1.dataSync())).toEqual([
      18, 19, 20, 21, 22, 23, 12, 13, 14, 15, 16, 17, 6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5,
    ]);
    const b2 = x.batchIndex([[0, 2], 1]); // x[[0, 2], 1]
    expect([b2.toString(), Array.from(b2.dataSync())]).toEqual(["(2; 2)", [2, 3, 14, 15]]);
    const b3 = x.batchIndex([null, 1]); // x[None, 1]
    expect([b3.toString(), Array.from(b3.dataSync())]).toEqual(["(1,3; 2)", [6, 7, 8, 9, 10, 11]]);
    const b4 = x.batchIndex(["...", 0]); // x[..., 0, :]
    expect([b4.toString(), Array.from(b4.dataSync())]).toEqual(["(4; 2)", [0, 1, 6, 7, 12, 13, 18, 19]]);
    const b5 = x.batchIndex([-1]); // x[-1]
    expect([b5.toString(), Array.from(b5.dataSync())]).toEqual(["(3; 2)", [18, 19, 20, 21, 22, 23]]);
    const b6 = x.batchIndex(1, 2); // the two-number form: x[:, 2]
    expect([b6.toString(), Array.from(b6.dataSync())]).toEqual(["(4; 2)", [4, 5, 10, 11, 16, 17, 22, 23]]);
    // An int Tensor on a batch dim is read by its whole shape: x[np.array([[3], [0]])] is (2,1,3; 2).
    const b7 = x.batchIndex([I([[3], [0]]), 2]);
    expect([b7.toString(), Array.from(b7.dataSync())]).toEqual(["(2,1; 2)", [22, 23, 4, 5]]);
  });

  it("x.index: a null after the last batch dim is a base dim, before it a batch dim", () => {
    const x = arange([2, 3], 1); // (2; 3)
    expect(x.index([null]).toString()).toBe("(1,2; 3)");
    expect(x.index([":", null]).toString()).toBe("(2; 1,3)");
    expect(x.index(["...", null]).toString()).toBe("(2; 3,1)");
    expect(arange([3]).index([null]).toString()).toBe("(;1,3)");
    // A boolean array on the batch dim: x[[True, False]] keeps row 0 as a batch of 1.
    expect(Array.from(x.index([[false, true], 2]).dataSync())).toEqual([5]);
    expect(x.index([[false, true], 2]).toString()).toBe("(1;)");
  });

  it("bool Tensor masks (eager): a mask over every dim is NumPy's x[mask]; on the base it picks base positions", () => {
    const x = tensor(
      [
        [1, -2, 3],
        [-4, 5, 6],
      ],
      { batchDim: 1 },
    ); // (2; 3)
    const all = x.index([x.gt(0)]); // x[x > 0]
    expect([all.toString(), Array.from(all.dataSync())]).toEqual(["(4;)", [1, 3, 5, 6]]);
    const cols = x.baseIndex([tensor([true, false, true])]); // x[:, [True, False, True]]
    expect([cols.toString(), Array.from(cols.dataSync())]).toEqual(["(2; 2)", [1, 3, -4, 6]]);
  });

  it("int Tensor indices on the base: their batch dims broadcast with x's (per-sample indices)", () => {
    const x = arange([2, 3, 2], 1); // (2; 3,2)
    const idx = I(
      [
        [2, 0],
        [-1, 1],
      ],
      1,
    ); // (2; 2): row b takes its own rows
    const r = x.baseIndex([idx, 1]);
    expect(r.toString()).toBe("(2; 2)");
    expect(Array.from(r.dataSync())).toEqual([5, 1, 11, 9]);
  });
});

describe("resolveBaseIndex: one flat position tensor per base index", () => {
  it("flat positions of t[1, 0:2, [1, 2]] on (;2,3,4) are 12 + 4·row + col; take of them is baseIndex", () => {
    const t = arange([2, 3, 4]);
    const r = resolveBaseIndex(t, [1, sl(0, 2), [1, 2]]);
    expect(r.baseSize).toBe(24);
    expect(r.baseShape).toEqual([2, 2]);
    expect(r.flat.dtype).toBe("int32");
    expect(Array.from(r.flat.dataSync())).toEqual([13, 17, 14, 18]);
    expect(Array.from(t.reshape([24]).take(r.flat).dataSync())).toEqual([13, 17, 14, 18]);
    // Basic lists resolve too: (;3) reversed is 2, 1, 0.
    expect(Array.from(resolveBaseIndex(arange([3]), ["::-1"]).flat.dataSync())).toEqual([2, 1, 0]);
  });

  it("an int Tensor index keeps its batch dims; an out-of-range entry holds baseSize", () => {
    const x = arange([2, 3], 1); // (2; 3)
    const r = resolveBaseIndex(x, [
      I(
        [
          [0, 3],
          [-1, -4],
        ],
        1,
      ),
    ]);
    expect(r.flat.toString()).toBe("(2; 2)");
    expect(Array.from(r.flat.dataSync())).toEqual([0, 3, 2, 3]);
    expect(
      Array.from(
        x
          .baseIndex([
            I(
              [
                [0, 3],
                [-1, -4],
              ],
              1,
            ),
          ])
          .dataSync(),
      ),
    ).toEqual([0, NaN, 5, NaN]);
  });
});

/** Special values and empty dims on the current backend (no float64: WebGPU runs it too). */
async function specialCases(): Promise<void> {
  const read = async (t: Tensor): Promise<number[]> => Array.from(await t.data());
  const f = tensor([NaN, Infinity, -Infinity, -0, 0, 1.5]);
  expect(bits(await read(f.baseIndex(["::-1"])))).toEqual(["1.5", "0", "-0", "-Infinity", "Infinity", "NaN"]);
  expect(bits(await read(f.baseIndex([[3, 0, -3, 2]])))).toEqual(["-0", "NaN", "-0", "-Infinity"]);
  // Out-of-range int Tensor indices give take's fill: NaN for floats, the most negative int32.
  expect(bits(await read(f.baseIndex([I([7, -7, 1])])))).toEqual(["NaN", "NaN", "Infinity"]);
  expect(await read(I([5, 6]).baseIndex([I([1, 2])]))).toEqual([6, INT_MIN]);
  // Batch dims: a negative-step batch slice and an advanced batch index keep the values exactly.
  const b = tensor(
    [
      [NaN, -0],
      [Infinity, -Infinity],
    ],
    { batchDim: 1 },
  );
  expect(bits(await read(b.batchIndex(["::-1"])))).toEqual(["Infinity", "-Infinity", "NaN", "-0"]);
  expect(bits(await read(b.index([[1, 0], 1])))).toEqual(["-Infinity", "-0"]);
  // Empty dims: batch size 0, a base dim of size 0, an empty index array, an empty slice.
  const e1 = zeros([0], [3]).index(["::-1", "::-1"]);
  expect([e1.toString(), await read(e1)]).toEqual(["(0; 3)", []]);
  const e2 = zeros([], [0, 2]).baseIndex(["::-1", 1]);
  expect([e2.toString(), await read(e2)]).toEqual(["(;0)", []]);
  const e3 = tensor([1, 2, 3]).baseIndex([[]]);
  expect([e3.toString(), await read(e3)]).toEqual(["(;0)", []]);
  const e4 = zeros([2], [3]).baseIndex(["2:0"]);
  expect([e4.toString(), await read(e4)]).toEqual(["(2; 0)", []]);
}

describe("index lists: special values and empty dims (JS)", () => {
  it("NaN, ±Inf, ±0 pass through; fills; empty dims", async () => {
    await specialCases();
  });
});

/** Inside jit, expected values by hand from the rule; one trace and one compile for both batch sizes. */
async function jitCases(): Promise<void> {
  const read = async (t: Tensor): Promise<number[]> => Array.from(await t.data());
  // x (n; 3,4) with x[b][r][c] = 12b + 4r + c; y = x[::-1, 0, i] · 2 with a traced int Tensor i.
  const f = jit((x: Tensor, i: Tensor) => x.index(["::-1", 0, i]).mul(2));
  // z = x (n; 2,3) with z[b][r][c] = 6b + 3r + c: batch [None, 1:], base [[1, 0], ::-1].
  const g = jit((x: Tensor) => x.batchIndex([null, "1:"]).baseIndex([[1, 0], "::-1"]));
  // Every other batch element from the last one back: x[::-2], and from the second last: x[-2::-1].
  const h = jit((x: Tensor) => [x.batchIndex(["::-2"]), x.batchIndex(["-2::-1"])]);
  // A 1-D integer array (negative entries too) and a negative integer on a symbolic batch dim, as copies.
  const k = jit((x: Tensor) => [x.batchIndex([[1, 0, -1]]), x.index([-1, [2, 0]]), x.index([[1, 0], 0])]);
  for (const n of [2, 3]) {
    const idx = n === 2 ? [2, -1] : [4, 0]; // 4 is out of range: NaN
    const out = await read((await f.callAsync(arange([n, 3, 4], 1), I(idx))) as Tensor);
    const want: number[] = [];
    for (let b = 0; b < n; b++)
      for (const c of idx) want.push(c >= 4 ? NaN : 2 * (12 * (n - 1 - b) + (c < 0 ? c + 4 : c)));
    expect(out).toEqual(want);
    const z = (await g.callAsync(arange([n, 2, 3], 1))) as Tensor;
    expect(z.toString()).toBe(`(1,${n - 1}; 2,3)`);
    const zw: number[] = [];
    for (let b = 1; b < n; b++) for (const r of [1, 0]) for (const c of [2, 1, 0]) zw.push(6 * b + 3 * r + c);
    expect(await read(z)).toEqual(zw);
    const [h1, h2] = (await h.callAsync(arange([n, 2], 1))) as Tensor[];
    expect(await read(h1!)).toEqual(n === 2 ? [2, 3] : [4, 5, 0, 1]);
    expect(await read(h2!)).toEqual(n === 2 ? [0, 1] : [2, 3, 0, 1]);
    // x (n; 3) with x[b][c] = 3b + c.
    const [k1, k2, k3] = (await k.callAsync(arange([n, 3], 1))) as Tensor[];
    expect(k1!.toString()).toBe("(3; 3)");
    expect(await read(k1!)).toEqual([3, 4, 5, 0, 1, 2, 3 * (n - 1), 3 * (n - 1) + 1, 3 * (n - 1) + 2]);
    expect([k2!.toString(), await read(k2!)]).toEqual(["(;2)", [3 * (n - 1) + 2, 3 * (n - 1)]]);
    expect([k3!.toString(), await read(k3!)]).toEqual(["(2;)", [3, 0]]);
  }
  for (const fn of [f, g, h, k]) {
    expect(fn.stats.traces).toBe(1);
    expect(fn.stats.cacheHits, "the second batch size reuses the compiled program").toBe(1);
  }
}

describe("index lists inside jit (JS)", () => {
  it("batch ints/slices (negative steps too)/null and base arrays: one trace serves two batch sizes", async () => {
    const before = counters.traces;
    await jitCases();
    expect(counters.traces - before).toBe(4);
  });
});

describe("index lists: typed errors", () => {
  const x = arange([2, 3], 1); // (2; 3)
  it("bad items and out-of-range indices name the op, the item and the (batch; base) shape", () => {
    expect(() => x.baseIndex([3])).toThrow(ShapeError);
    expect(() => x.baseIndex([3])).toThrow(
      "baseIndex: index[0]: index 3 is out of range for base dim 0 of size 3 of x (2; 3)",
    );
    expect(() => x.batchIndex([-3])).toThrow(
      /batchIndex: index\[0\]: index -3 is out of range for batch dim 0 of size 2 of x \(2; 3\)/,
    );
    expect(() => x.baseIndex([[0, 3]])).toThrow(/index 3 is out of range for base dim 0 of size 3 of x \(2; 3\)/);
    expect(() => x.baseIndex([0, 0])).toThrow(/baseIndex: too many indices: 2 for the 1 base dims of x \(2; 3\)/);
    expect(() => x.index(["...", 0, "..."])).toThrow(/index: an index can only have a single ellipsis/);
    expect(() => x.baseIndex([[0.5]])).toThrow(DTypeError);
    expect(() => x.baseIndex([sl(0, 2, 0)])).toThrow(/baseIndex: index\[0\]: slice step cannot be zero \(x \(2; 3\)\)/);
    expect(() => x.baseIndex([[true, false]])).toThrow(
      /baseIndex: index\[0\]: the boolean index of shape \(2\) does not match the base dims \(3\)/,
    );
    expect(() => x.baseIndex(["a:b"])).toThrow(/neither "..." nor a slice/);
    expect(() => x.baseIndex([{ start: 1, end: 2 } as never])).toThrow(DTypeError);
    expect(() =>
      arange([2, 3]).baseIndex([
        [0, 1],
        [0, 1, 1],
      ]),
    ).toThrow(/baseIndex: the advanced indices cannot be broadcast together: shapes \(2\), \(3\) for x \(;2,3\)/);
    expect(() => x.baseIndex([tensor([0.5])])).toThrow(DTypeError);
    expect(() => x.baseIndex(0 as never)).toThrow(/baseIndex: index must be an array/);
  });

  it("inside jit: boolean Tensors, advanced batch indices and blocks among the batch dims are TraceErrors", () => {
    expect(() => jit((a: Tensor) => a.baseIndex([a.batchIndex(0, 0).gt(0)]))(x)).toThrow(TraceError);
    expect(() => jit((a: Tensor) => a.baseIndex([a.batchIndex(0, 0).gt(0)]))(x)).toThrow(/concretization/);
    expect(() => jit((a: Tensor) => a.batchIndex([I([0, 1])]))(x)).toThrow(
      /batchIndex: index\[0\], an advanced index on a batch dim that is not a 1-D integer array \(nested numbers\), needs concrete batch sizes, but x \(b0; 3\) is traced/,
    );
    expect(() => jit((a: Tensor) => a.index([1, ":", [0, 2]]))(arange([2, 3, 4], 2))).toThrow(
      /index: an advanced index whose dims land among the batch dims needs concrete batch sizes/,
    );
    expect(() => jit((a: Tensor) => a.batchIndex(["1::-1"]))(x)).toThrow(TraceError);
    expect(() => jit((a: Tensor) => a.batchIndex([[[0, 1]]]))(x)).toThrow(/not a 1-D integer array/);
    expect(() => jit((a: Tensor) => a.batchIndex([[0, 1], ":", 0]))(arange([2, 3, 4], 3))).not.toThrow();
    expect(() => jit((a: Tensor) => a.batchIndex([0, ":", [0, 1]]))(arange([2, 3, 4], 3))).toThrow(
      /moves to the front/,
    );
  });
});

const probe = await probeWebGPUForFile();
describeWebGPU(probe, "index lists on WebGPU", (backend) => {
  it(
    "NumPy's results, special values, empty dims and jit match the JS expectations",
    () =>
      onWebGPU(backend, async () => {
        await numpyCases();
        await specialCases();
        await jitCases();
      }),
    120_000,
  );
});
