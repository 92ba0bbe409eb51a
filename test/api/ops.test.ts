/**
 * Comparisons, small ops, linspace/logspace and NEML2's shape utilities on plain
 * tensors. Expected values are written by hand from NumPy's, PyTorch's and
 * NEML2's documented rules (quoted next to each), never from the code under test.
 */
import { describe, expect, it } from "vitest";
import {
  DTypeError,
  SFFR4,
  SFR4,
  ShapeError,
  TraceError,
  WFFR4,
  WFR4,
  addShapes,
  baseLinspace,
  baseLogspace,
  broadcastBatchDim,
  broadcastable,
  fromTypedArray,
  jit,
  linspace,
  logspace,
  padAppend,
  padPrepend,
  storageSize,
  tensor,
  zeros,
  R2,
  Scalar,
  type Tensor,
} from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { onWebGPU } from "../helpers/on-webgpu.js";

const vals = (t: Tensor): number[] => Array.from(t.dataSync());
const f32 = Math.fround;

// isClose grid (float32): x, y, and NumPy's isclose (rtol 1e-5, atol 1e-8): |x-y| <= atol + rtol·|y| with
// finite y, or x == y.
const CLOSE_X = [1, 1, NaN, Infinity, Infinity, -Infinity, 1000, 0, 1, -0, 0, NaN];
const CLOSE_Y = [1.000001, 1.1, NaN, Infinity, -Infinity, -Infinity, 1000.005, 1e-9, Infinity, 0, 1e-7, 1];
const CLOSE = [1, 0, 0, 1, 0, 1, 1, 1, 0, 1, 0, 0];
const CLOSE_NAN = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1, 0, 0];

// heaviside(x, 0.5): 0 below 0, 0.5 at ±0, 1 above, NaN for NaN (NumPy's docs: heaviside([-1.5, 0, 2], 0.5) = [0, 0.5, 1]).
const HX = [-1.5, 0, 2, -0, NaN, -Infinity, Infinity];
const HEAVI = [0, 0.5, 1, 0.5, NaN, 0, 1];
// macaulay = max(x, 0): NaN stays, -0 → +0.
const MAC = [0, 0, 2, 0, NaN, 0, Infinity];

describe("isClose / allClose / allEqual", () => {
  it("NumPy's isclose on NaN, ±Inf, ±0 and tolerances, and equalNan", () => {
    const x = tensor(CLOSE_X, { batchDim: 1 });
    const y = tensor(CLOSE_Y, { batchDim: 1 });
    expect(vals(x.isClose(y))).toEqual(CLOSE);
    expect(vals(x.isClose(y, { equalNan: true }))).toEqual(CLOSE_NAN);
    // Asymmetric, as NumPy's: |0 - 1| <= 1·|1| but not <= 1·|0|.
    expect(vals(tensor([0]).isClose(tensor([1]), { rtol: 1, atol: 0 }))).toEqual([1]);
    expect(vals(tensor([1]).isClose(tensor([0]), { rtol: 1, atol: 0 }))).toEqual([0]);
    // atol alone; a number operand; integers compute in float32.
    expect(vals(tensor([1, 2]).isClose(1.5, { atol: 0.5 }))).toEqual([1, 1]);
    expect(vals(tensor([1, 2], { dtype: "int32" }).isClose(tensor([1, 3], { dtype: "int32" })))).toEqual([1, 0]);
    expect(x.isClose(y).dtype).toBe("bool");
  });

  it("allClose is a bool (;) over batch and base, true when empty; broadcasts", () => {
    const a = tensor(
      [
        [1, 2],
        [3, 4],
      ],
      { batchDim: 1 },
    );
    expect(a.allClose(a.add(1e-6)).itemSync()).toBe(1);
    expect(a.allClose(a.add(1e-3)).itemSync()).toBe(0);
    expect(
      a
        .allClose(
          tensor([1, 2]).add(
            tensor(
              [
                [0, 0],
                [2, 2],
              ],
              { batchDim: 1 },
            ),
          ),
        )
        .itemSync(),
    ).toBe(1);
    expect(a.allClose(a).toString()).toBe("(;)");
    expect(
      zeros([0], [3])
        .allClose(zeros([0], [3]))
        .itemSync(),
    ).toBe(1);
    expect(
      tensor([NaN])
        .allClose(tensor([NaN]))
        .itemSync(),
    ).toBe(0);
    expect(
      tensor([NaN])
        .allClose(tensor([NaN]), { equalNan: true })
        .itemSync(),
    ).toBe(1);
  });

  it("allEqual: same shape and values (array_equal); no broadcasting; NaN unequal unless equalNan", () => {
    const a = tensor(
      [
        [1, 2],
        [3, 4],
      ],
      { batchDim: 1 },
    );
    expect(
      a
        .allEqual(
          tensor(
            [
              [1, 2],
              [3, 4],
            ],
            { batchDim: 1, dtype: "int32" },
          ),
        )
        .itemSync(),
    ).toBe(1);
    expect(
      a
        .allEqual(
          tensor(
            [
              [1, 2],
              [3, 5],
            ],
            { batchDim: 1 },
          ),
        )
        .itemSync(),
    ).toBe(0);
    expect(
      a
        .allEqual(
          tensor(
            [
              [1, 2],
              [3, 4],
            ],
            { batchDim: 2 },
          ),
        )
        .itemSync(),
    ).toBe(0); // (2,2;) vs (2;2)
    expect(a.allEqual(tensor([1, 2])).itemSync()).toBe(0); // would broadcast, but shapes differ
    expect(
      tensor([NaN, 1])
        .allEqual(tensor([NaN, 1]))
        .itemSync(),
    ).toBe(0);
    expect(
      tensor([NaN, 1])
        .allEqual(tensor([NaN, 1]), { equalNan: true })
        .itemSync(),
    ).toBe(1);
    expect(
      tensor([-0])
        .allEqual(tensor([0]))
        .itemSync(),
    ).toBe(1);
    expect(
      zeros([0], [])
        .allEqual(zeros([0], []))
        .itemSync(),
    ).toBe(1);
  });

  it("typed errors", () => {
    const a = tensor([1, 2]);
    expect(() => a.isClose("1" as unknown as number)).toThrow(DTypeError);
    expect(() => a.isClose(a, { rtol: -1 })).toThrow(/isClose: rtol must be a number >= 0, got -1 \(x \(;2\)\)/);
    expect(() => a.allClose(a, { equalNan: 1 as unknown as boolean })).toThrow(DTypeError);
    expect(() => a.allEqual([1, 2] as unknown as Tensor)).toThrow(/allEqual: y must be a Tensor/);
    expect(() => a.isClose(tensor([1, 2, 3]))).toThrow(ShapeError);
  });
});

describe("cross, heaviside, macaulay", () => {
  it("cross on the last axis and on another axis; broadcasting; the formula's NaN/Inf", () => {
    const e = tensor(
      [
        [1, 0, 0],
        [0, 1, 0],
      ],
      { batchDim: 1 },
    );
    const f = tensor(
      [
        [0, 1, 0],
        [0, 0, 1],
      ],
      { batchDim: 1 },
    );
    expect(e.cross(f).toArraySync()).toEqual([
      [0, 0, 1],
      [1, 0, 0],
    ]);
    // NumPy's docs: cross([1, 2, 3], [4, 5, 6]) = [-3, 6, -3].
    expect(
      tensor([1, 2, 3])
        .cross(tensor([4, 5, 6]))
        .toArraySync(),
    ).toEqual([-3, 6, -3]);
    // Axis 0 of a (;3,2) base: the columns are the vectors.
    const a = tensor([
      [1, 4],
      [2, 5],
      [3, 6],
    ]);
    const b = tensor([
      [4, 1],
      [5, 2],
      [6, 3],
    ]);
    expect(a.cross(b, 0).toArraySync()).toEqual([
      [-3, 3],
      [6, -6],
      [-3, 3],
    ]);
    expect(a.cross(b, -2).toString()).toBe("(;3,2)");
    // y without batch broadcasts over x's batch; x ⨯ x = 0.
    expect(e.cross(tensor([1, 0, 0])).toArraySync()).toEqual([
      [0, 0, 0],
      [0, 0, -1],
    ]);
    // [Inf,0,0] ⨯ [0,1,0] = [0·0 - 0·1, 0·0 - Inf·0, Inf·1 - 0·0] = [0, NaN, Inf].
    expect(vals(tensor([Infinity, 0, 0]).cross(tensor([0, 1, 0])))).toEqual([0, NaN, Infinity]);
    expect(tensor([1, 2, 3], { dtype: "int32" }).cross(tensor([4, 5, 6])).dtype).toBe("float32");
    expect(() => tensor([1, 2]).cross(tensor([3, 4]))).toThrow(ShapeError);
    expect(() => tensor([1, 2]).cross(tensor([3, 4]))).toThrow(
      /cross: base dim -1 must have size 3 in x and y, got x \(;2\) and y \(;2\)/,
    );
    expect(() => a.cross(b, 2)).toThrow(ShapeError);
    expect(() => a.cross(3 as unknown as Tensor)).toThrow(DTypeError);
  });

  it("heaviside (NumPy) and macaulay (NEML2) on special values", () => {
    const x = tensor(HX, { batchDim: 1 });
    expect(vals(x.heaviside(0.5))).toEqual(HEAVI);
    expect(vals(tensor([-1.5, 0, 2]).heaviside(1))).toEqual([0, 1, 1]);
    // values broadcast; NaN at 0 gives NaN.
    expect(vals(tensor([0, 0, 1]).heaviside(tensor([NaN, 2, 7])))).toEqual([NaN, 2, 1]);
    expect(tensor([1], { dtype: "int32" }).heaviside(0).dtype).toBe("float32");
    const m = vals(x.macaulay());
    expect(m).toEqual(MAC);
    expect(Object.is(m[3], 0)).toBe(true);
    expect(vals(tensor([-2, 5], { dtype: "int32" }).macaulay())).toEqual([0, 5]);
    expect(() => x.heaviside("a" as unknown as number)).toThrow(DTypeError);
  });
});

describe("batchPermute / batchTranspose / baseStorage", () => {
  const x = () =>
    fromTypedArray(
      Float32Array.from({ length: 12 }, (_, i) => i),
      [2, 3, 2],
      { batchDim: 2 },
    );
  it("permutes the batch block only", () => {
    const t = x().batchTranspose(0, 1);
    expect(t.toString()).toBe("(3,2; 2)");
    expect(t.toArraySync()).toEqual([
      [
        [0, 1],
        [6, 7],
      ],
      [
        [2, 3],
        [8, 9],
      ],
      [
        [4, 5],
        [10, 11],
      ],
    ]);
    expect(x().batchPermute(1, 0).toArraySync()).toEqual(t.toArraySync());
    const same = x();
    expect(same.batchPermute(0, 1)).toBe(same); // the identity permutation is the tensor itself
    expect(x().batchPermute(-2, -1).toString()).toBe("(2,3; 2)");
    expect(zeros([0, 2], [3]).batchPermute(1, 0).toString()).toBe("(2,0; 3)");
    expect(x().baseStorage).toBe(2);
    expect(zeros([4], [3, 3]).baseStorage).toBe(9);
    expect(zeros([4], []).baseStorage).toBe(1);
  });
  it("errors; inside jit a TraceError", () => {
    expect(() => x().batchPermute(0)).toThrow(/not a permutation of the 2 batch dims of x \(2,3; 2\)/);
    expect(() => x().batchPermute(0, 0)).toThrow(ShapeError);
    expect(() => x().batchTranspose(0, 2)).toThrow(ShapeError);
    const f = jit((t: Tensor) => t.batchTranspose(0, 1));
    expect(() => f(x())).toThrow(TraceError);
  });
});

describe("linspace / logspace on plain tensors", () => {
  it("batch placement (NEML2's linspace docs): (3,2;5,5) to (3,1;5,5), 100 steps at dim 1, is (3,100,2;5,5)", () => {
    expect(linspace(zeros([3, 2], [5, 5]), zeros([3, 1], [5, 5]), 100, 1).toString()).toBe("(3,100,2; 5,5)");
    expect(linspace(zeros([5, 3, 1, 2], [6]), zeros([], [6]), 101, 2).toString()).toBe("(5,3,101,1,2; 6)");
    expect(linspace(zeros([2], []), 1, 4, -1).toString()).toBe("(2,4;)");
  });

  it("values: NumPy's endpoints, per-batch starts, numbers", () => {
    expect(vals(linspace(0, 1, 5))).toEqual([0, 0.25, 0.5, 0.75, 1]);
    expect(linspace(0, 1, 5).toString()).toBe("(5;)");
    expect(linspace(tensor([0, 10], { batchDim: 1 }), 1, 3, 1).toArraySync()).toEqual([
      [0, 0.5, 1],
      [10, 5.5, 1],
    ]);
    // The last value is exactly end (0.2 + (0.9 - 0.2)·1 is 0.8999999999999999 in float64).
    const d = vals(linspace(tensor(0.2, { dtype: "float64" }), 0.9, 2));
    expect(d).toEqual([0.2, 0.9]);
    // float32: 0.7 + (0.1 - 0.7)·1 rounds to 0.10000002384185791, not fround(0.1).
    expect(vals(linspace(0.7, 0.1, 2))).toEqual([f32(0.7), f32(0.1)]);
    // One step is start (NEML2), even with an infinite end; zero steps is an empty dim.
    expect(vals(linspace(1, Infinity, 1))).toEqual([1]);
    expect(linspace(1, 2, 0).toString()).toBe("(0;)");
    // NumPy: linspace(0, inf, 3) = [nan, inf, inf]; linspace(NaN, 1, 2) = [NaN, 1].
    expect(vals(linspace(0, Infinity, 3))).toEqual([NaN, Infinity, Infinity]);
    expect(vals(linspace(NaN, 1, 2))).toEqual([NaN, 1]);
    expect(linspace(tensor(0, { dtype: "int32" }), 1, 3).dtype).toBe("float32");
  });

  it("base placement (NEML2's base_linspace)", () => {
    expect(vals(baseLinspace(0, 1, 5))).toEqual([0, 0.25, 0.5, 0.75, 1]);
    expect(baseLinspace(0, 1, 5).toString()).toBe("(;5)");
    expect(baseLinspace(tensor([0, 10]), tensor([1, 20]), 3, 1).toArraySync()).toEqual([
      [0, 0.5, 1],
      [10, 15, 20],
    ]);
    expect(baseLinspace(tensor([0, 10]), tensor([1, 20]), 3).toArraySync()).toEqual([
      [0, 10],
      [0.5, 15],
      [1, 20],
    ]);
    expect(baseLinspace(zeros([7], [3]), 1, 5).toString()).toBe("(7; 5,3)");
    expect(baseLinspace(zeros([7], [3]), 1, 5, -1).toString()).toBe("(7; 3,5)");
  });

  it("logspace: base ** linspace (NumPy: logspace(0, 2, 3) = [1, 10, 100]; base 2)", () => {
    expect(vals(logspace(0, 2, 3))).toEqual([1, 10, 100]);
    expect(vals(baseLogspace(0, 3, 4, 0, 2))).toEqual([1, 2, 4, 8]);
    expect(logspace(tensor([0, 1], { batchDim: 1 }), 2, 3, 1).toString()).toBe("(2,3;)");
  });

  it("typed tensors keep their type (the typed linspace)", () => {
    const s = new Scalar(tensor([0, 1], { batchDim: 1 }));
    const l = linspace(s, new Scalar(tensor(2)), 3, 1);
    expect(l).toBeInstanceOf(Scalar);
    expect(vals(l.t)).toEqual([0, 1, 2, 1, 1.5, 2]);
    expect(logspace(new R2(zeros([], [3, 3])), new R2(zeros([], [3, 3])), 2)).toBeInstanceOf(R2);
  });

  it("errors", () => {
    expect(() => linspace(0, 1, -1)).toThrow(/nstep must be an integer >= 0, got -1/);
    expect(() => linspace(0, 1, 1.5)).toThrow(ShapeError);
    expect(() => linspace(0, 1, 3, 2)).toThrow(/dim 2 is out of range for a new batch dim/);
    expect(() => baseLinspace(zeros([], [3]), 1, 3, 3)).toThrow(ShapeError);
    expect(() => linspace("0" as unknown as number, 1, 3)).toThrow(DTypeError);
    expect(() => linspace(new Scalar(tensor(0)), tensor(1) as unknown as Scalar, 3)).toThrow(DTypeError);
    expect(() => logspace(0, 1, 3, 0, -2)).toThrow(DTypeError);
  });
});

describe("NEML2 shape utilities", () => {
  it("storageSize, addShapes, padPrepend/padAppend (NEML2's utils.h examples)", () => {
    expect([[], [0], [1], [1, 2, 3], [5, 1, 1]].map(storageSize)).toEqual([1, 0, 1, 6, 5]);
    expect(addShapes([2], [], [3, 3])).toEqual([2, 3, 3]);
    expect(addShapes([2], 5, [3])).toEqual([2, 5, 3]);
    expect(padPrepend([3], 3)).toEqual([1, 1, 3]);
    expect(padPrepend([3, 4], 3, 0)).toEqual([0, 3, 4]);
    expect(padAppend([3], 3)).toEqual([3, 1, 1]);
    expect(padPrepend([], 0)).toEqual([]);
    expect(() => padPrepend([1, 2], 1)).toThrow(ShapeError);
    expect(() => storageSize([-1])).toThrow(ShapeError);
    expect(() => addShapes([1.5])).toThrow(ShapeError);
  });

  it("broadcastable (same base, broadcastable batch) and broadcastBatchDim", () => {
    const a = zeros([3, 2], [5, 5]);
    const b = zeros([3, 1], [5, 5]);
    expect(broadcastable(a, b)).toBe(true);
    expect(broadcastable(a, zeros([2], [5, 5]), zeros([], [5, 5]))).toBe(true);
    expect(broadcastable(a, zeros([3], [5, 5]))).toBe(false);
    expect(broadcastable(a, zeros([3, 2], [5]))).toBe(false); // base differs
    expect(broadcastable(zeros([0], []), zeros([1], []))).toBe(true);
    expect(broadcastBatchDim(a, zeros([], [1]), zeros([1, 1, 1], []))).toBe(3);
    expect(() => broadcastable()).toThrow(ShapeError);
    expect(() => broadcastBatchDim([] as unknown as Tensor)).toThrow(DTypeError);
  });

  it("SFFR4 and WFFR4 are NEML2 v2's names of SFR4 and WFR4", () => {
    expect(SFFR4).toBe(SFR4);
    expect(WFFR4).toBe(WFR4);
    expect(new SFFR4(zeros([2], [6, 3, 3])).toString()).toBe("SFR4(2; 6,3,3)");
  });
});

describe("empty batch dims", () => {
  it("every op keeps a zero-size batch", () => {
    const e = zeros([0], [3]);
    expect(e.cross(e).toString()).toBe("(0; 3)");
    expect(e.isClose(e).toString()).toBe("(0; 3)");
    expect(e.heaviside(0.5).toString()).toBe("(0; 3)");
    expect(e.macaulay().toString()).toBe("(0; 3)");
    expect(e.allEqual(zeros([0], [3])).itemSync()).toBe(1);
    expect(linspace(e, 1, 4, 1).toString()).toBe("(0,4; 3)");
    expect(baseLinspace(e, 1, 4).toString()).toBe("(0; 4,3)");
    expect(vals(linspace(e, 1, 4, 1))).toEqual([]);
    expect(zeros([0, 2], []).batchTranspose(0, 1).toString()).toBe("(2,0;)");
  });
});

describe("inside jit: one trace across batch sizes", () => {
  it("isClose, allClose, cross, heaviside, macaulay, linspace", () => {
    const f = jit((x: Tensor, y: Tensor) => [
      x.isClose(y),
      x.allClose(y),
      x.cross(y),
      x.heaviside(0.5),
      x.macaulay(),
      linspace(x, y, 3, 1),
      baseLinspace(x, y, 2),
    ]);
    for (const n of [2, 5]) {
      const x = fromTypedArray(
        Float32Array.from({ length: 3 * n }, (_, i) => i - 4),
        [n, 3],
        { batchDim: 1 },
      );
      const y = fromTypedArray(
        Float32Array.from({ length: 3 * n }, (_, i) => (i % 2 === 0 ? i - 4 : 1)),
        [n, 3],
        {
          batchDim: 1,
        },
      );
      const out = f(x, y) as Tensor[];
      const xv = vals(x);
      const yv = vals(y);
      expect(vals(out[0]!)).toEqual(xv.map((v, i) => (v === yv[i] ? 1 : 0)));
      expect(out[1]!.itemSync()).toBe(0);
      // By hand: row b is a × c with a = x[b], c = y[b].
      const crossRows = Array.from({ length: n }, (_, b) => {
        const [a0, a1, a2] = xv.slice(3 * b, 3 * b + 3) as [number, number, number];
        const [c0, c1, c2] = yv.slice(3 * b, 3 * b + 3) as [number, number, number];
        return [a1 * c2 - a2 * c1, a2 * c0 - a0 * c2, a0 * c1 - a1 * c0];
      });
      expect(vals(out[2]!)).toEqual(crossRows.flat());
      expect(vals(out[3]!)).toEqual(xv.map((v) => (v < 0 ? 0 : v > 0 ? 1 : 0.5)));
      expect(vals(out[4]!)).toEqual(xv.map((v) => Math.max(v, 0)));
      expect(out[5]!.toString()).toBe(`(${n},3; 3)`);
      expect(vals(out[5]!.batchIndex(1, 2))).toEqual(yv);
      expect(out[6]!.toString()).toBe(`(${n}; 2,3)`);
    }
    expect(f.stats.traces).toBe(1);
  });
});

const probe = await probeWebGPUForFile();
describeWebGPU(probe, "comparisons and small ops on WebGPU", (backend) => {
  it("special values match the JS expectations", () =>
    onWebGPU(backend, async () => {
      const x = tensor(CLOSE_X, { batchDim: 1 });
      const y = tensor(CLOSE_Y, { batchDim: 1 });
      expect(Array.from(await x.isClose(y).data())).toEqual(CLOSE);
      expect(Array.from(await x.isClose(y, { equalNan: true }).data())).toEqual(CLOSE_NAN);
      expect(Array.from(await x.allClose(x).data())).toEqual([0]);
      expect(Array.from(await x.allClose(x, { equalNan: true }).data())).toEqual([1]);
      expect(Array.from(await x.allEqual(x, { equalNan: true }).data())).toEqual([1]);
      const h = tensor(HX, { batchDim: 1 });
      expect(Array.from(await h.heaviside(0.5).data())).toEqual(HEAVI);
      const m = Array.from(await h.macaulay().data());
      expect(m).toEqual(MAC);
      expect(Object.is(m[3], 0)).toBe(true);
      expect(
        Array.from(
          await tensor([Infinity, 0, 0])
            .cross(tensor([0, 1, 0]))
            .data(),
        ),
      ).toEqual([0, NaN, Infinity]);
      expect(Array.from(await linspace(0, 1, 5).data())).toEqual([0, 0.25, 0.5, 0.75, 1]);
      expect(Array.from(await linspace(0.7, 0.1, 2).data())).toEqual([f32(0.7), f32(0.1)]);
      expect(Array.from(await linspace(1, Infinity, 1).data())).toEqual([1]);
      expect(
        Array.from(
          await zeros([0], [3])
            .allClose(zeros([0], [3]))
            .data(),
        ),
      ).toEqual([1]);
      const p = fromTypedArray(
        Float32Array.from({ length: 6 }, (_, i) => i),
        [2, 3],
        { batchDim: 2 },
      );
      expect(Array.from(await p.batchTranspose(0, 1).data())).toEqual([0, 3, 1, 4, 2, 5]);
      const l = Array.from(await logspace(0, 2, 3).data());
      l.forEach((v, i) => expect(v).toBeCloseTo([1, 10, 100][i]!, 4));
    }));
});
