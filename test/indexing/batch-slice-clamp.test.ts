/**
 * `batchSlice` bounds past the batch size clamp as in NumPy (`x[1:10]` of three rows
 * is rows 1 and 2; `x[5:10]` is empty), eagerly and inside `jit`, where the size is
 * symbolic at trace time and the bounds meet it only at run time. Inside jit this was
 * a ShapeError ("1:10:1 does not fit") while the eager call clamped. Also: `flatten`
 * on a 0-d base accepts only axes 0 and -1 (PyTorch), as it refuses axis 5 on 1-D.
 */
import { describe, expect, it } from "vitest";
import { jit, ShapeError, tensor, type Tensor } from "../../src/index.js";

const rows = (n: number): Tensor =>
  tensor(
    Array.from({ length: n }, (_, r) => [r, -r]),
    { batchDim: 1 },
  );

describe("batchSlice past the batch size (NumPy clamping), eager and jit alike", () => {
  const cases: [number, number | undefined, number, number[]][] = [
    // start, stop, step, rows of a 3-row batch (NumPy: list(range(3))[start:stop:step])
    [1, 10, 1, [1, 2]],
    [5, 10, 1, []],
    [3, undefined, 1, []],
    [0, 10, 2, [0, 2]],
    [2, 3, 1, [2]],
  ];
  it.each(cases)("[%s:%s:%s] of 3 rows", (start, stop, step, want) => {
    const expected = want.map((r) => [r, -r]);
    expect(rows(3).batchSlice(0, start, stop, step).toArraySync()).toEqual(expected);
    const f = jit((x: Tensor) => x.batchSlice(0, start, stop, step).mul(1));
    expect(f(rows(3)).toArraySync()).toEqual(expected);
    // the same trace at another size: 12 rows, bounds inside
    const big = Array.from({ length: 12 }, (_, r) => r)
      .slice(start, stop ?? 12)
      .filter((_, i) => i % step === 0);
    expect(f(rows(12)).toArraySync()).toEqual(big.map((r) => [r, -r]));
    expect(f.stats.traces).toBe(1);
    // and at sizes the bounds pass entirely: 0 and 1 rows (a batch dim of 1 or 0 may trace anew)
    for (const n of [0, 1]) {
      const small = Array.from({ length: n }, (_, r) => r)
        .slice(start, stop ?? n)
        .filter((_, i) => i % step === 0);
      expect(f(rows(n)).toArraySync()).toEqual(small.map((r) => [r, -r]));
    }
  });

  it("flatten of a 0-d base takes axis 0 or -1 only", () => {
    expect(tensor(3).flatten().toArraySync()).toEqual([3]);
    expect(tensor(3).flatten(0, -1).toArraySync()).toEqual([3]);
    expect(() => tensor(3).flatten(1)).toThrow(ShapeError);
    expect(() => tensor(3).flatten(1)).toThrow(/^flatten: base axis 1 is out of range for x \(;\)/);
    expect(() => tensor([1, 2]).flatten(5)).toThrow(/^flatten: base axis 5 is out of range/);
  });
});
