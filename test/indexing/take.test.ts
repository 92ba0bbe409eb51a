/**
 * `Tensor.take` (NumPy's `np.take` on one base axis, JAX's default `mode="fill"`
 * for out-of-range indices): values written literally from NumPy's documentation
 * and by hand, special values on JS, WebAssembly and WebGPU, jit (one trace for
 * two batch sizes, fusion with elementwise producers and consumers), derivatives
 * and typed errors.
 */
import { describe, expect, it } from "vitest";
import {
  counters,
  DTypeError,
  jagged,
  jit,
  jvp,
  loadBundle,
  ShapeError,
  tensor,
  vjp,
  zeros,
  type Tensor,
} from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";
import { probeWebGPUForFile } from "../helpers/webgpu.js";
import { describeOnEachBackend } from "../helpers/each-backend.js";
import { bits, I, INT_MIN, rows2x3, UINT_MAX } from "../helpers/index-values.js";

describe("take: NumPy's documented examples and hand-computed values (JS)", () => {
  it("np.take(a, [0, 1, 4]) and a 2-D index list (numpy.take docs)", () => {
    const a = tensor([4, 3, 5, 7, 6, 8]);
    expect(Array.from(a.take([0, 1, 4]).dataSync())).toEqual([4, 3, 6]);
    const b = a.take([
      [0, 1],
      [2, 3],
    ]);
    expect(b.toString()).toBe("(;2,2)");
    expect(b.toArraySync()).toEqual([
      [4, 3],
      [5, 7],
    ]);
  });

  it("on a middle or last axis (negative axis counts from the end); a number index removes the axis", () => {
    const x = tensor([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(x.take([2, 0], 1).toArraySync()).toEqual([
      [3, 1],
      [6, 4],
    ]);
    expect(x.take([2, 0], -1).toArraySync()).toEqual([
      [3, 1],
      [6, 4],
    ]);
    const row = x.take(1, 0);
    expect(row.toString()).toBe("(;3)");
    expect(Array.from(row.dataSync())).toEqual([4, 5, 6]);
    // (; 2,3,2): take on axis 1 with (; 2) indices keeps the axes around it.
    const y = tensor([
      [
        [0, 1],
        [2, 3],
        [4, 5],
      ],
      [
        [6, 7],
        [8, 9],
        [10, 11],
      ],
    ]);
    expect(y.take([-1, 0], 1).toArraySync()).toEqual([
      [
        [4, 5],
        [0, 1],
      ],
      [
        [10, 11],
        [6, 7],
      ],
    ]);
  });

  it("batch dims broadcast: each batch element takes its own indices", () => {
    const x = tensor(
      [
        [10, 20, 30],
        [40, 50, 60],
      ],
      { batchDim: 1 },
    ); // (2; 3)
    const idx = I(
      [
        [2, 2],
        [0, 1],
      ],
      1,
    ); // (2; 2)
    const r = x.take(idx);
    expect(r.toString()).toBe("(2; 2)");
    expect(r.toArraySync()).toEqual([
      [30, 30],
      [40, 50],
    ]);
    // (; 2) indices shared by every batch element, and (2; ) x against (3,1; ) batch-broadcast indices.
    expect(x.take([1, 0]).toArraySync()).toEqual([
      [20, 10],
      [50, 40],
    ]);
    const b = I([[[0]], [[1]], [[2]]], 2); // (3,1; 1)
    expect(x.take(b).toString()).toBe("(3,2; 1)");
    expect(Array.from(x.take(b).dataSync())).toEqual([10, 40, 20, 50, 30, 60]);
  });
});

/** The special-value cases, run on the current backend; expected values written by hand. */
async function specialCases(float64 = true): Promise<void> {
  const read = async (t: Tensor): Promise<number[]> => Array.from(await t.data());
  // Data: NaN, ±Inf, -0 kept exactly; negative indices wrap once; outside [-n, n) gives NaN.
  const f = tensor([NaN, Infinity, -Infinity, -0, 1.5]);
  expect(bits(await read(f.take([3, 0, 1, 2, 4, -1, -2, -5])))).toEqual([
    "-0",
    "NaN",
    "Infinity",
    "-Infinity",
    "1.5",
    "1.5",
    "-0",
    "NaN",
  ]);
  const g = tensor([1.5, -0]);
  expect(bits(await read(g.take([1, 2, -3, -2, 2147483647, INT_MIN])))).toEqual([
    "-0",
    "NaN",
    "NaN",
    "1.5",
    "NaN",
    "NaN",
  ]);
  // float64 keeps its precision and its fill is NaN too.
  if (float64) {
    const d = tensor([0.1, -0], { dtype: "float64" });
    expect(bits(await read(d.take([0, 1, 9])))).toEqual(["0.1", "-0", "NaN"]);
  }
  // int32: the fill is the most negative int32; uint32: the largest uint32; bool: true.
  const i = I([7, INT_MIN, 2147483647, 0, -1]);
  expect(await read(i.take([0, -1, 5, -6, -5, 1, 2, 2147483647, INT_MIN]))).toEqual([
    7,
    -1,
    INT_MIN,
    INT_MIN,
    7,
    INT_MIN,
    2147483647,
    INT_MIN,
    INT_MIN,
  ]);
  const u = tensor([1, 2], { dtype: "uint32" });
  expect(await read(u.take([1, 2, -3, -2]))).toEqual([2, UINT_MAX, UINT_MAX, 1]);
  const bo = tensor([true, false]);
  expect(await read(bo.take([1, 5, 0]))).toEqual([0, 1, 1]);
  // Empty index tensor, empty batch, and an empty axis (every index is out of range; nothing is read).
  const e1 = tensor([1, 2, 3]).take(I([]));
  expect(e1.toString()).toBe("(;0)");
  expect(await read(e1)).toEqual([]);
  const e2 = zeros([0], [3]).take(zeros([0], [2], { dtype: "int32" }));
  expect(e2.toString()).toBe("(0; 2)");
  expect(await read(e2)).toEqual([]);
  const e3 = zeros([], [0, 2]).take([0, -1, 3]);
  expect(e3.toString()).toBe("(;3,2)");
  expect(await read(e3)).toEqual([NaN, NaN, NaN, NaN, NaN, NaN]);
  // Batched, with a fused consumer: (2; 3) with (2; 2) indices, one out of range per row.
  const x = rows2x3();
  const r = x
    .take(
      I(
        [
          [-1, 3],
          [-4, 0],
        ],
        1,
      ),
    )
    .mul(2);
  expect(await read(r)).toEqual([6, NaN, NaN, 8]);
}

const probe = await probeWebGPUForFile();
describeOnEachBackend(
  probe,
  "take: special values",
  "NaN, ±Inf, -0, wrapped and out-of-range indices, int extremes, empty tensors",
  specialCases,
  60_000,
);

describe("take inside jit", () => {
  it("one trace and one compile serve two batch sizes; take fuses with the index's producer and its consumer into one kernel", () => {
    const f = jit((x: Tensor, i: Tensor) => x.take(i.add(1), 1).mul(3).add(1));
    const x = (n: number): Tensor =>
      tensor(
        Array.from({ length: n }, (_, b) => [
          [b, b + 1, b + 2],
          [b + 3, b + 4, b + 5],
        ]),
        { batchDim: 1 },
      ); // (n; 2,3): row b is [[b, b+1, b+2], [b+3, b+4, b+5]]
    const idx = (n: number): Tensor =>
      I(
        Array.from({ length: n }, (_, b) => [b % 4, -2, 2]),
        1,
      ); // +1: b%4+1, -1, 3
    for (const n of [2, 5]) {
      const before = counters.dispatches;
      const out = f(x(n), idx(n)).toArraySync() as number[][][];
      expect(counters.dispatches - before, "one kernel: producer, take and consumer fused").toBe(1);
      for (let b = 0; b < n; b++) {
        const p = (b % 4) + 1; // in range for p <= 2, else NaN
        const v = (row: number, c: number): number => 3 * (b + 3 * row + c) + 1;
        for (const row of [0, 1]) {
          expect(out[b]![row]).toEqual([p <= 2 ? v(row, p) : NaN, v(row, 2), NaN]);
        }
      }
    }
    expect(f.stats.traces).toBe(1);
    expect(f.stats.compiles).toBe(1);
  });

  it("a bundle of a jit with take loads (the shipped kernels re-derive) and gives the values by hand", async () => {
    const f = jit((x: Tensor, i: Tensor) => x.take(i, 0).sub(1));
    f(tensor([1, 2, 3]), I([0, 0, 0]));
    const g = await loadBundle(await importBundle(f.bundle()));
    const r = g(tensor([5, 6, 7]), I([2, -3, 3])) as Tensor;
    expect(Array.from(r.dataSync())).toEqual([6, 4, NaN]);
  });

  it("x computed by an elementwise producer gets its own buffer (two kernels): take reads it at data positions", () => {
    const f = jit((x: Tensor, i: Tensor) => x.mul(2).take(i).neg());
    const before = counters.dispatches;
    const r = f(tensor([1, 2, 3]), I([2, -1, 0]));
    expect(Array.from(r.dataSync())).toEqual([-6, -6, -2]);
    expect(counters.dispatches - before).toBe(2);
  });
});

describe("take: derivatives", () => {
  it("forward mode takes the tangent at the same indices (0 where the index is out of range)", () => {
    const idx = I([2, 0, 5, -1]);
    const x = tensor([1, 2, 3], { dtype: "float64" });
    const t = tensor([10, 20, 30], { dtype: "float64" });
    const [y, dy] = jvp((a: Tensor) => a.take(idx).mul(3), [x], [t]);
    expect(Array.from(y.dataSync())).toEqual([9, 3, NaN, 9]);
    // d(3 x_i) = 3 t_i, and 0 where the result is the constant fill.
    expect(Array.from(dy.dataSync())).toEqual([90, 30, 0, 90]);
    // The product rule: d(x_i²) = 2 x_i t_i (NaN·0 at the filled position, as any product with NaN).
    const [, dq] = jvp((a: Tensor) => a.take(idx).mul(a.take(idx)), [x], [t]);
    expect(Array.from(dq.dataSync())).toEqual([180, 20, NaN, 180]);
  });

  it("reverse mode is a scatter-add of the cotangent (duplicates add up, out-of-range indices give nothing)", () => {
    const idx = I([2, 0, 5, -1]);
    const x = tensor([1, 2, 3], { dtype: "float64" });
    const [y, back] = vjp((a: Tensor) => a.take(idx).mul(3), x);
    expect(Array.from(y.dataSync())).toEqual([9, 3, NaN, 9]);
    // By hand: position 0 gets 3·10; position 2 gets 3·1 (index 2) + 3·1000 (index -1); index 5 is dropped.
    const [g] = back(tensor([1, 10, 100, 1000], { dtype: "float64" }));
    expect(Array.from((g as Tensor).dataSync())).toEqual([30, 0, 3003]);
  });
});

describe("take: typed errors in (batch; base) notation", () => {
  it("non-int32 indices are a DTypeError", () => {
    const x = tensor([1, 2, 3]);
    expect(() => x.take(tensor([0.5, 1]))).toThrow(DTypeError);
    expect(() => x.take(tensor([0.5, 1]))).toThrow("take: idx (;2) of dtype float32: needs int32 indices");
    expect(() => x.take(tensor([1], { dtype: "uint32" }))).toThrow(DTypeError);
    expect(() => x.take("a" as never)).toThrow(DTypeError);
  });

  it("a bad axis or batch dims that do not broadcast are a ShapeError", () => {
    const x = tensor([[1, 2, 3]], { batchDim: 1 }); // (1; 3)
    expect(() => x.take([0], 1)).toThrow(ShapeError);
    expect(() => x.take([0], 1)).toThrow("take: base axis 1 is out of range for x (1; 3)");
    expect(() => x.take([0], 0.5)).toThrow(ShapeError);
    expect(() => tensor(5).take([0])).toThrow(ShapeError);
    const y = zeros([2], [3]);
    expect(() => y.take(zeros([3], [1], { dtype: "int32" }))).toThrow(
      "take: cannot broadcast x (2; 3) with idx (3; 1): batch dim 0 is 2 vs 3",
    );
  });
});

describe("take with jagged tensors (segmented kernels)", () => {
  it("take on the packed values feeds a segmented sum, a per-row add and a padded tensor", () => {
    const j = jagged([rows2x3(), tensor([[7, 8, 9]], { batchDim: 1 })]);
    const t = j.map((v) => v.take([2, 0, -4, -1]));
    // Row 0: [3,1,NaN,3] + [6,4,NaN,6]; row 1: [9,7,NaN,9].
    expect(t.sum().toArraySync()).toEqual([
      [9, 5, NaN, 9],
      [9, 7, NaN, 9],
    ]);
    // A per-row tensor added to the taken values (segment_expand in the same kernel): row 0 adds 100 to
    // each of its two entries, row 1 adds 200 to its one.
    const rows = tensor([[100], [200]], { batchDim: 1 });
    expect(t.add(rows).sum().toArraySync()).toEqual([
      [209, 205, NaN, 209],
      [209, 207, NaN, 209],
    ]);
    const { padded } = t.toPadded();
    expect(padded.toString()).toBe("(2,2; 4)");
    expect(Array.from(padded.dataSync()).slice(8, 12)).toEqual([9, 7, NaN, 9]);
  });
});
