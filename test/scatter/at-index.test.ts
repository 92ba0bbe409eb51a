/**
 * `x.atIndex(list)`: updates at the positions a NumPy index list selects on the base
 * (JAX's `x.at[list]`). Expected values are worked out by hand from NumPy/JAX semantics.
 */
import { describe, expect, it } from "vitest";
import { jit, ShapeError, sl, tensor, zeros, type Tensor } from "../../src/index.js";
import { describeOnJsAndWasm } from "../helpers/js-and-wasm.js";

describe("atIndex: updates through index lists", () => {
  const t = tensor([
    [0, 1, 2],
    [3, 4, 5],
  ]); // (;2,3)

  it("integers and slices, as x.at[1, 0:2].set(7)", () => {
    expect(
      zeros([], [2, 3])
        .atIndex([1, sl(0, 2)])
        .set(7)
        .toArraySync(),
    ).toEqual([
      [0, 0, 0],
      [7, 7, 0],
    ]);
  });

  it("an integer array with a duplicate accumulates for add (x.at[:, [2, 0, 2]].add(10))", () => {
    expect(
      t
        .atIndex([":", [2, 0, 2]])
        .add(10)
        .toArraySync(),
    ).toEqual([
      [10, 1, 22],
      [13, 4, 25],
    ]);
  });

  it("a negative-step slice sets in reverse order (x.at[..., ::-1].set(v))", () => {
    const v = tensor([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(t.atIndex(["...", "::-1"]).set(v).toArraySync()).toEqual([
      [3, 2, 1],
      [6, 5, 4],
    ]);
  });

  it("two adjacent arrays pick points (x.at[[0, 1], [2, 0]].max(4)); get() equals baseIndex", () => {
    expect(
      t
        .atIndex([
          [0, 1],
          [2, 0],
        ])
        .max(4)
        .toArraySync(),
    ).toEqual([
      [0, 1, 4],
      [4, 4, 5],
    ]);
    expect(
      t
        .atIndex([
          [0, 1],
          [2, 0],
        ])
        .get()
        .toArraySync(),
    ).toEqual([2, 3]);
  });

  it("NaN and -0 updates land bit for bit", () => {
    const r = t
      .atIndex([0, [0, 1]])
      .set(tensor([NaN, -0]))
      .dataSync();
    expect(Number.isNaN(r[0])).toBe(true);
    expect(Object.is(r[1], -0)).toBe(true);
    expect(Array.from(r.slice(2))).toEqual([2, 3, 4, 5]);
  });

  it("inside jit: one trace serves two batch sizes", () => {
    const f = jit((x: Tensor) => x.atIndex([sl(), [2, 0]]).add(1));
    expect(f(zeros([2], [2, 3])).toArraySync()).toEqual([
      [
        [1, 0, 1],
        [1, 0, 1],
      ],
      [
        [1, 0, 1],
        [1, 0, 1],
      ],
    ]);
    expect(f(zeros([3], [2, 3])).batchShape).toEqual([3]);
    expect(f.stats.traces).toBe(1);
    expect(f.stats.cacheHits).toBe(1);
  });

  it("an integer out of range is a typed error naming the list item and x", () => {
    expect(() => t.atIndex([2]).set(0)).toThrow(ShapeError);
    expect(() => t.atIndex([2]).set(0)).toThrow(/\(; ?2, ?3\)|2,3/);
  });
});

describeOnJsAndWasm("atIndex: special values and empty lists, on JS and WebAssembly", () => {
  const x = tensor([
    [Infinity, -0, 2],
    [3, NaN, -Infinity],
  ]);
  // x.at[:, [1]].add(1): -0 + 1 = 1, NaN + 1 = NaN; the infinities elsewhere are kept.
  const r = x
    .atIndex([":", [1]])
    .add(1)
    .dataSync();
  expect(Array.from(r.slice(0, 4))).toEqual([Infinity, 1, 2, 3]);
  expect(Number.isNaN(r[4])).toBe(true);
  expect(r[5]).toBe(-Infinity);
  // An empty integer array selects nothing: x comes back unchanged (-0 and NaN included).
  const e = x.atIndex([":", []]).set(7).dataSync();
  expect(Object.is(e[1], -0)).toBe(true);
  expect(Number.isNaN(e[4])).toBe(true);
  // An empty batch stays empty.
  expect(
    zeros([0], [2, 3])
      .atIndex([0, sl(0, 2)])
      .set(1).shape,
  ).toEqual([0, 2, 3]);
});
