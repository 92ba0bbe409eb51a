/**
 * `x.at(idx).set/add/mul/min/max/get` (JAX's `x.at[idx]`, the `scatter` IR op):
 * values written literally from JAX's documented semantics and by hand (duplicates
 * accumulate in index order, set's last write wins, negative indices wrap once,
 * out-of-range indices are dropped, min/max propagate NaN), special values on JS,
 * WebAssembly and WebGPU, jit (one trace for two batch sizes), bundles, typed
 * errors, and derivatives (hand values; random graphs against finite differences
 * are in scatter-grad.test.ts).
 */
import { describe, expect, it } from "vitest";
import {
  counters,
  DTypeError,
  jit,
  jvp,
  loadBundle,
  ShapeError,
  tensor,
  UnsupportedOpError,
  vjp,
  zeros,
  type Tensor,
} from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";
import { probeWebGPUForFile } from "../helpers/webgpu.js";
import { describeOnEachBackend } from "../helpers/each-backend.js";
import { bits, I, INT_MAX, INT_MIN, rows2x3 } from "../helpers/index-values.js";

const F64 = (data: Parameters<typeof tensor>[0]): Tensor => tensor(data, { dtype: "float64" });
const vals = (t: Tensor): number[] => Array.from(t.dataSync());

type Update = "set" | "add" | "mul" | "min" | "max";
/** A hand-worked case: x, idx, the update, upd, and what x.at(idx).<update>(upd) holds. */
type AtCase<T> = readonly [x: number[], idx: number[], update: Update, upd: number[], want: T[]];
/** `tensor(x).at(idx).<update>(tensor(upd))` (float32, on the current backend). */
const atUpdate = (x: number[], idx: number[], update: Update, upd: number[]): Tensor =>
  tensor(x).at(idx)[update](tensor(upd));

describe("x.at(idx): JAX's documented semantics, values by hand (JS)", () => {
  it("add accumulates duplicates (jnp.zeros(5).at[[0, 2, 0]].add(1) is [2, 0, 1, 0, 0]); x is unchanged", () => {
    const x = zeros([], [5]);
    expect(vals(x.at([0, 2, 0]).add(1))).toEqual([2, 0, 1, 0, 0]);
    expect(vals(x)).toEqual([0, 0, 0, 0, 0]);
    expect(
      vals(
        tensor([0, 1, 2, 3, 4])
          .at([0, 0, 1])
          .add(tensor([1, 2, 3])),
      ),
    ).toEqual([3, 4, 2, 3, 4]);
  });

  it("set: the last write wins among duplicates; mul, min and max accumulate in index order", () => {
    const cases: readonly AtCase<number>[] = [
      [[1, 2, 3, 4], [1, 3, 1], "set", [10, 20, 30], [1, 30, 3, 20]],
      [[1, 2, 3, 4], [0, 2, 0], "mul", [2, 5, 3], [6, 2, 15, 4]],
      [[5, 5, 5], [0, 0, 1, 2], "min", [3, 1, NaN, 7], [1, NaN, 5]],
      [[5, 5, 5], [0, 0, 1, 2], "max", [3, 9, NaN, 7], [9, NaN, 7]],
      // NaN already in x propagates too (lax.min/lax.max).
      [[NaN, 1], [0, 1, 1], "max", [5, NaN, 2], [NaN, NaN]],
    ];
    for (const [x, idx, op, upd, want] of cases)
      expect(vals(atUpdate(x, idx, op, upd)), `[${x}].at([${idx}]).${op}([${upd}])`).toEqual(want);
    expect(vals(tensor([NaN, 1]).at([0]).min(-Infinity))).toEqual([NaN, 1]);
  });

  it("negative indices wrap once; indices outside [-n, n) are dropped (JAX's mode='drop')", () => {
    const u = tensor([10, 20, 30, 40, 50, 60]);
    // -1 → 2, -3 → 0; 3, -4 and the int32 extremes are dropped.
    expect(vals(tensor([1, 2, 3]).at([-1, -3, 3, -4, INT_MAX, INT_MIN]).add(u))).toEqual([21, 2, 13]);
    expect(
      vals(
        tensor([1, 2, 3])
          .at([5, -5])
          .set(tensor([7, 8])),
      ),
    ).toEqual([1, 2, 3]);
  });

  it("on a later axis; upd broadcasts to the shape at(idx).get() has; a number index removes the axis", () => {
    const x = zeros([], [2, 3]);
    expect(
      x
        .at([2, 0], 1)
        .set(
          tensor([
            [1, 2],
            [3, 4],
          ]),
        )
        .toArraySync(),
    ).toEqual([
      [2, 0, 1],
      [4, 0, 3],
    ]);
    expect(
      x
        .at([2, 0], -1)
        .set(tensor([7, 8]))
        .toArraySync(),
    ).toEqual([
      [8, 0, 7],
      [8, 0, 7],
    ]);
    expect(
      x
        .at([2, 0], 1)
        .set(tensor([[7], [8]]))
        .toArraySync(),
    ).toEqual([
      [7, 0, 7],
      [8, 0, 8],
    ]);
    const m = tensor([
      [1, 2],
      [3, 4],
    ]);
    expect(
      m
        .at(1)
        .set(tensor([9, 8]))
        .toArraySync(),
    ).toEqual([
      [1, 2],
      [9, 8],
    ]);
    expect(m.at(-1, 1).set(0).toArraySync()).toEqual([
      [1, 0],
      [3, 0],
    ]);
    // (;2,3,2) with 2-D indices on axis 1: position 0 once, position 2 three times.
    const y = zeros([], [2, 3, 2]).at(
      [
        [0, 2],
        [2, -1],
      ],
      1,
    );
    expect(y.add(1).toArraySync()).toEqual([
      [
        [1, 1],
        [0, 0],
        [3, 3],
      ],
      [
        [1, 1],
        [0, 0],
        [3, 3],
      ],
    ]);
  });

  it("batch dims of x, idx and upd broadcast: each batch element has its own indices", () => {
    const x = rows2x3(); // (2; 3)
    const idx = I(
      [
        [0, 0],
        [2, -1],
      ],
      1,
    ); // (2; 2)
    const r = x.at(idx).add(1);
    expect(r.toString()).toBe("(2; 3)");
    expect(r.toArraySync()).toEqual([
      [3, 2, 3],
      [4, 5, 8],
    ]);
    expect(x.at([1, 1]).mul(2).toArraySync()).toEqual([
      [1, 8, 3],
      [4, 20, 6],
    ]);
    expect(
      x
        .at([0])
        .set(tensor([7, 9], { batchDim: 1 }))
        .toArraySync(),
    ).toEqual([
      [7, 2, 3],
      [9, 5, 6],
    ]);
    // x (; 3) against (3; 1) indices: the result has the indices' batch.
    const b = tensor([0, 0, 0])
      .at(I([[0], [1], [-1]], 1))
      .set(5);
    expect(b.toString()).toBe("(3; 3)");
    expect(vals(b)).toEqual([5, 0, 0, 0, 5, 0, 0, 0, 5]);
  });

  it("integers wrap as in int32/uint32 arithmetic; float64 accumulates in float64, float32 rounds per update", () => {
    expect(vals(I([INT_MAX, 5]).at([0, 0]).add(1))).toEqual([INT_MIN + 1, 5]);
    expect(vals(I([65536]).at([0]).mul(65536))).toEqual([0]);
    expect(vals(tensor([1], { dtype: "uint32" }).at([0]).add(4294967295))).toEqual([0]);
    expect(
      vals(
        F64([0.1])
          .at([0, 0])
          .add(F64([0.2, 0.3])),
      ),
    ).toEqual([0.6000000000000001]);
    // 1 + 2^-24 rounds back to 1 in float32, twice (a float64 sum would round to 1 + 2^-23).
    expect(
      vals(
        tensor([1])
          .at([0, 0])
          .add(tensor([2 ** -24, 2 ** -24])),
      ),
    ).toEqual([1]);
    expect(
      vals(
        tensor([true, false, false])
          .at([1, -1])
          .set(tensor([true, false])),
      ),
    ).toEqual([1, 1, 0]);
  });

  it("{ flat }: positions over the base as one row-major vector; get() reads (take)", () => {
    const x = tensor([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(
      x
        .at({ flat: [5, 0, -1] })
        .add(10)
        .toArraySync(),
    ).toEqual([
      [11, 2, 3],
      [4, 5, 26],
    ]);
    expect(vals(x.at({ flat: [4, -6, 6] }).get())).toEqual([5, 1, NaN]);
    expect(vals(x.at([1, 0], 1).get())).toEqual([2, 1, 5, 4]);
  });

  it("a bool mask: masked assignment (where), of x's shape", () => {
    const x = tensor([1, 2, 3, 4]);
    expect(vals(x.at(tensor([true, false, true, false])).set(0))).toEqual([0, 2, 0, 4]);
    expect(vals(x.at([false, true, false, true]).add(10))).toEqual([1, 12, 3, 14]);
    expect(vals(x.at([true, true, false, false]).max(tensor([0, 9, 9, 9])))).toEqual([1, 9, 3, 4]);
    expect(vals(x.at([true, true, false, false]).mul(tensor([NaN, 3, 9, 9])))).toEqual([NaN, 6, 3, 4]);
    expect(vals(x.at(x.gt(2)).get())).toEqual([3, 4]);
    // A mask broadcasts over the batch: (2; 2) with a (; 2) mask.
    const b = tensor(
      [
        [1, 2],
        [3, 4],
      ],
      { batchDim: 1 },
    );
    expect(b.at([false, true]).min(0).toArraySync()).toEqual([
      [1, 0],
      [3, 0],
    ]);
  });
});

/** The special-value cases, run on the current backend; expected values written by hand. */
async function specialCases(float64 = true): Promise<void> {
  const read = async (t: Tensor): Promise<number[]> => Array.from(await t.data());
  // The bits of each result, by hand.
  const exact: readonly AtCase<string>[] = [
    // -0 is written and kept exactly: -0 + -0 = -0, -0 + 0 = 0 (IEEE).
    [[0, -0, 1], [0, 1, 2], "set", [-0, 0, -0], ["-0", "0", "-0"]],
    [[-0, -0, 0], [0, 1, 2], "add", [-0, 0, -0], ["-0", "0", "0"]],
    // ±Inf: Inf + -Inf = NaN, 0·Inf = NaN, Inf·-0 = NaN.
    [[Infinity, 1, -Infinity], [0, 1, 2], "add", [-Infinity, Infinity, 1], ["NaN", "Infinity", "-Infinity"]],
    [[0, Infinity, 2], [0, 1, -1], "mul", [Infinity, -0, -Infinity], ["NaN", "NaN", "-Infinity"]],
    // min/max: NaN from either side propagates; ±Inf compare as numbers.
    [[NaN, 1, -Infinity], [0, 1, 2, 1], "max", [Infinity, NaN, 3, 5], ["NaN", "NaN", "3"]],
    [[Infinity, 4], [0, 0, 1], "min", [7, 2, -Infinity], ["2", "-Infinity"]],
  ];
  for (const [x, idx, op, upd, want] of exact)
    expect(bits(await read(atUpdate(x, idx, op, upd))), `[${x}].at([${idx}]).${op}([${upd}])`).toEqual(want);
  // Wrapped, dropped and extreme indices.
  expect(
    await read(
      I([7, 8, 9])
        .at([-1, 3, -4, INT_MAX, INT_MIN, 0])
        .add(I([1, 2, 3, 4, 5, 6])),
    ),
  ).toEqual([13, 8, 10]);
  // Duplicates across more than one WebGPU update pass (2048 positions each): exact counts, last write.
  const n = 5000;
  const idx = I(Array.from({ length: n }, (_, i) => i % 3));
  expect(await read(zeros([], [3]).at(idx).add(1))).toEqual([1667, 1667, 1666]);
  const seq = tensor(Array.from({ length: n }, (_, i) => i));
  expect(await read(zeros([], [3]).at(idx).set(seq))).toEqual([4998, 4999, 4997]);
  // Two batch elements, each its own indices (one invocation each on WebGPU).
  const bi = I([Array.from({ length: n }, (_, i) => i % 3), Array.from({ length: n }, (_, i) => (i % 2) - 2)], 1);
  expect(await read(zeros([2], [3]).at(bi).add(1))).toEqual([1667, 1667, 1666, 0, 2500, 2500]);
  if (float64) {
    expect(
      bits(
        await read(
          F64([0.1, -0])
            .at([0, 0, 1])
            .add(F64([0.2, 0.3, -0])),
        ),
      ),
    ).toEqual(["0.6000000000000001", "-0"]);
  }
  // float32 rounds after every update.
  expect(
    await read(
      tensor([1])
        .at([0, 0])
        .add(tensor([2 ** -24, 2 ** -24])),
    ),
  ).toEqual([1]);
  // Empty index list, empty batch, empty axis (every index dropped), empty update shape.
  const e1 = tensor([1, 2, 3]).at(I([])).add(5);
  expect(e1.toString()).toBe("(;3)");
  expect(await read(e1)).toEqual([1, 2, 3]);
  const e2 = zeros([0], [3]).at([0, 1]).add(1);
  expect(e2.toString()).toBe("(0; 3)");
  expect(await read(e2)).toEqual([]);
  const e3 = zeros([], [0, 2]).at([0, -1]).set(1);
  expect(e3.toString()).toBe("(;0,2)");
  expect(await read(e3)).toEqual([]);
  const e4 = zeros([], [2, 0]).at([1, 1]).add(1);
  expect(e4.toString()).toBe("(;2,0)");
  expect(await read(e4)).toEqual([]);
  // A fused consumer after the scatter.
  expect(await read(tensor([1, 2, 3]).at([2, 2]).add(1).mul(2))).toEqual([2, 4, 10]);
}

const probe = await probeWebGPUForFile();
describeOnEachBackend(
  probe,
  "x.at(idx): special values",
  "NaN, ±Inf, ±0, wrapped and dropped indices, many duplicates, empty tensors",
  specialCases,
  120_000,
);

describe("x.at(idx) inside jit", () => {
  it("one trace and one compile serve two batch sizes; the compiled kernels ran", () => {
    const f = jit((x: Tensor, i: Tensor, u: Tensor) => x.at(i).add(u.mul(3)).mul(2));
    let compiles = -1;
    for (const n of [2, 5]) {
      const x = zeros([n], [3]);
      const i = I(
        Array.from({ length: n }, (_, b) => [b % 3, b % 3, -1]),
        1,
      ); // (n; 3)
      const before = counters.dispatches;
      const out = f(x, i, tensor([1, 2, 4])).toArraySync() as number[][];
      expect(counters.dispatches - before).toBeGreaterThan(0);
      for (let b = 0; b < n; b++) {
        // 2·(3·1 + 3·2) at b % 3, plus 2·3·4 at position 2.
        const want = [0, 0, 0];
        want[b % 3]! += 18;
        want[2]! += 24;
        expect(out[b]).toEqual(want);
      }
      // The second batch size compiles nothing new.
      if (compiles >= 0) expect(f.stats.compiles).toBe(compiles);
      compiles = f.stats.compiles;
    }
    expect(f.stats.traces).toBe(1);
    expect(f.stats.cacheHits).toBe(1);
  });

  it("take's reverse mode (a scatter-add) inside jit", () => {
    const f = jit(
      (x: Tensor, i: Tensor) => vjp((a: Tensor) => a.take(i).mul(2), x)[1](tensor([1, 10, 100]))[0] as Tensor,
    );
    expect(vals(f(tensor([5, 6]), I([1, 1, 0])) as Tensor)).toEqual([200, 22]);
    expect(vals(f(tensor([5, 6]), I([-1, 2, -2])) as Tensor)).toEqual([200, 2]);
    expect(f.stats.traces).toBe(1);
  });

  it("a bundle of a jit with a scatter loads (the shipped kernels re-derive) and gives the values by hand", async () => {
    const f = jit((x: Tensor, i: Tensor) =>
      x
        .at(i)
        .max(tensor([4, 7]))
        .sub(1),
    );
    f(tensor([1, 2, 3]), I([0, 0]));
    const g = await loadBundle(await importBundle(f.bundle()));
    const r = g(tensor([5, 6, 7]), I([2, -3])) as Tensor;
    expect(vals(r)).toEqual([6, 5, 6]);
  });
});

describe("x.at(idx): derivatives (values by hand)", () => {
  it("add: linear in x and v; forward and reverse mode", () => {
    const idx = I([2, 0, 2, 5]);
    const x = F64([1, 2, 3]);
    const v = F64([1, 2, 3, 4]);
    const [y, dy] = jvp((a: Tensor, b: Tensor) => a.at(idx).add(b), [x, v], [F64([1, 0, 0]), F64([10, 20, 30, 40])]);
    expect(vals(y)).toEqual([3, 2, 7]);
    expect(vals(dy)).toEqual([21, 0, 40]);
    const [, back] = vjp((a: Tensor, b: Tensor) => a.at(idx).add(b), x, v);
    const [gx, gv] = back(F64([1, 10, 100])) as Tensor[];
    expect(vals(gx!)).toEqual([1, 10, 100]);
    // The dropped index 5 gets no cotangent.
    expect(vals(gv!)).toEqual([100, 1, 100, 0]);
  });

  it("set: only the update that won its position (the last) gets the cotangent; written positions of x get none", () => {
    const idx = I([1, 1, 0]);
    const [, back] = vjp((a: Tensor, b: Tensor) => a.at(idx).set(b), F64([1, 2, 3]), F64([4, 5, 6]));
    const [gx, gv] = back(F64([100, 10, 1])) as Tensor[];
    expect(vals(gx!)).toEqual([0, 0, 1]);
    expect(vals(gv!)).toEqual([0, 10, 100]);
    // Forward mode follows the same writes.
    const [, dy] = jvp(
      (a: Tensor, b: Tensor) => a.at(idx).set(b),
      [F64([1, 2, 3]), F64([4, 5, 6])],
      [F64([1, 2, 3]), F64([10, 20, 30])],
    );
    expect(vals(dy)).toEqual([30, 20, 3]);
  });

  it("mul, min and max have no derivative rule yet: a typed error naming scatter and the mode", () => {
    for (const mode of ["mul", "min", "max"] as const) {
      expect(() => vjp((a: Tensor) => a.at([0])[mode](2), F64([1, 2]))[1](F64([1, 1]))).toThrow(UnsupportedOpError);
      expect(() => jvp((a: Tensor) => a.at([0])[mode](2), [F64([1, 2])], [F64([1, 1])])).toThrow(
        new RegExp(`scatter: no derivative in forward mode for mode ${mode}`),
      );
    }
  });
});

describe("x.at(idx): typed errors in (batch; base) notation", () => {
  it("a bad axis is a ShapeError; non-integer indices a DTypeError", () => {
    const x = tensor([[1, 2, 3]], { batchDim: 1 }); // (1; 3)
    expect(() => x.at([0], 1)).toThrow(ShapeError);
    expect(() => x.at([0], 1)).toThrow("at: base axis 1 is out of range for x (1; 3)");
    expect(() => x.at([0], 0.5)).toThrow(ShapeError);
    expect(() => x.at(tensor([0.5, 1]))).toThrow(DTypeError);
    expect(() => x.at(tensor([0.5, 1]))).toThrow("at: idx (;2) of dtype float32 must be int32");
    expect(() => x.at([0.5])).toThrow(DTypeError);
    expect(() => x.at("a" as never)).toThrow(DTypeError);
    expect(() => x.at({ flat: [true] })).toThrow(DTypeError);
    expect(() => x.at({ flat: [0] }, 0)).toThrow(ShapeError);
    expect(() => x.at([true], 0)).toThrow(ShapeError);
  });

  it("an update that does not broadcast, batch dims that do not, a bad v or mode are typed errors", () => {
    const x = rows2x3(); // (2; 3)
    expect(() => x.at([0, 1]).set(tensor([1, 2, 3]))).toThrow(ShapeError);
    expect(() => x.at([0, 1]).set(tensor([1, 2, 3]))).toThrow(
      "at(idx).set: upd (;3) does not broadcast to the update shape (2) of x (2; 3) at idx (;2) on base axis 0",
    );
    expect(() => x.at(I([[0], [1], [2]], 1)).add(1)).toThrow(ShapeError);
    expect(() => x.at(I([[0], [1], [2]], 1)).add(1)).toThrow(
      "at(idx).add: cannot broadcast x (2; 3) with idx (3; 1): batch dim 0 is 2 vs 3",
    );
    expect(() => x.at([0]).add("a" as never)).toThrow(DTypeError);
    // v is cast to x's dtype (as JAX casts updates): 0.5 is 0 in int32; a number must fit the dtype.
    expect(vals(I([1]).at([0]).add(0.5))).toEqual([1]);
    expect(() =>
      I([1])
        .at([0])
        .add(2 ** 40),
    ).toThrow(DTypeError);
    expect(() =>
      tensor([true])
        .at([0])
        .add(true as never),
    ).toThrow(DTypeError);
    expect(() => tensor([true]).at([0]).max(1)).toThrow("at(idx).max: x (;1) is bool; only set is defined on bool");
    expect(() => x.at([true, false]).set(tensor([1, 2, 3]))).toThrow(ShapeError);
  });
});
