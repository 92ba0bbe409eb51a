/**
 * The numerics compositions on the JS backend: the hand-written cases of
 * ./numerics-cases.ts eagerly and inside jit, one trace for two batch sizes (and an
 * empty batch), float64, the axis-length limit, and typed errors for bad input.
 */
import { describe, expect, it } from "vitest";
import {
  argsort,
  counters,
  DTypeError,
  einsum,
  jit,
  MAX_AXIS_LENGTH,
  ShapeError,
  sort,
  tensor,
  topk,
  zeros,
  type Tensor,
} from "../../src/index.js";
import { CASES, mismatches } from "./numerics-cases.js";

describe("numerics along base axes (JS)", () => {
  it("every case, eagerly", () => {
    const errors = CASES.flatMap((c) => {
      const r = c.run();
      return mismatches(c, r.dataSync(), r.dtype);
    });
    expect(errors).toEqual([]);
  });

  it("every case inside jit (the case's tensors captured)", () => {
    const errors = CASES.flatMap((c) => {
      const r = jit(() => c.run())() as Tensor;
      return mismatches(c, r.dataSync(), r.dtype);
    });
    expect(errors).toEqual([]);
  });

  it("one trace serves two batch sizes and an empty batch", () => {
    const f = jit((x: Tensor) => [
      x.cumsum(),
      x.softmax(),
      x.logsumexp(),
      x.var(-1, { correction: 1 }),
      x.sort(),
      x.argsort(),
      x.topk(2).values,
      einsum("ij,j->i", x.reshape([2, 2]), tensor([1, -1])),
      x.norm(),
    ]);
    const before = counters.traces;
    const a = f(tensor([[4, 1, 3, 2]], { batchDim: 1 })) as Tensor[];
    const b = f(
      tensor(
        [
          [4, 1, 3, 2],
          [0, 0, 0, 0],
          [1, 2, 3, 4],
        ],
        { batchDim: 1 },
      ),
    ) as Tensor[];
    const e = f(zeros([0], [4])) as Tensor[];
    expect(counters.traces - before).toBe(1);
    expect(a[0]!.toArraySync()).toEqual([[4, 5, 8, 10]]);
    expect(b[0]!.toArraySync()).toEqual([
      [4, 5, 8, 10],
      [0, 0, 0, 0],
      [1, 3, 6, 10],
    ]);
    expect(b[3]!.toArraySync()).toEqual([5 / 3, 0, 5 / 3].map(Math.fround));
    expect(b[4]!.toArraySync()).toEqual([
      [1, 2, 3, 4],
      [0, 0, 0, 0],
      [1, 2, 3, 4],
    ]);
    expect(b[5]!.toArraySync()).toEqual([
      [1, 3, 2, 0],
      [0, 1, 2, 3],
      [0, 1, 2, 3],
    ]);
    expect(b[6]!.toArraySync()).toEqual([
      [4, 3],
      [0, 0],
      [4, 3],
    ]);
    expect(b[7]!.toArraySync()).toEqual([
      [3, 1],
      [0, 0],
      [-1, -1],
    ]);
    expect(b[8]!.toArraySync()).toEqual([Math.fround(Math.sqrt(30)), 0, Math.fround(Math.sqrt(30))]);
    for (const t of e) expect(t.batchShape).toEqual([0]);
  });

  it("float64 stays float64 (and is exact where float32 rounds)", () => {
    const x = tensor([1e16, 1, -1e16], { dtype: "float64" });
    expect(x.cumsum().toArraySync()).toEqual([1e16, 1e16 + 1, 0]);
    expect(x.softmax().dtype).toBe("float64");
    expect(tensor([1, 2, 3, 4], { dtype: "float64" }).var(undefined, { correction: 1 }).itemSync()).toBe(5 / 3);
    expect(tensor([0.1, 0.2, 0.3], { dtype: "float64" }).sort(-1, { descending: true }).toArraySync()).toEqual([
      0.3, 0.2, 0.1,
    ]);
  });

  it("sorts long axes: 1024 elements; cumsum and cumprod refuse more (ShapeError)", () => {
    const n = MAX_AXIS_LENGTH;
    const vals = Array.from({ length: n }, (_, i) => (i * 7919) % n);
    const s = sort(tensor(vals)).dataSync();
    expect([...s]).toEqual(Array.from({ length: n }, (_, i) => i));
    const i = argsort(tensor(vals)).dataSync();
    expect([...i].map((k) => vals[k])).toEqual(Array.from({ length: n }, (_, j) => j));
    const big = zeros([], [n + 1]);
    // sort, argsort and topk of longer axes run as a looped merge sort (test/linalg/sort-looped.test.ts).
    for (const f of [() => big.cumsum(), () => big.cumprod()]) {
      expect(f).toThrow(ShapeError);
    }
    expect(() => big.cumsum()).toThrow(
      /cumsum: base axis 0 of x \(;1025\) has 1025 elements, more than the limit 1024/,
    );
  });

  it("typed errors for bad axes, options and arguments", () => {
    const x = tensor(
      [
        [1, 2],
        [3, 4],
      ],
      { batchDim: 1 },
    );
    expect(() => x.cumsum(1)).toThrow(ShapeError);
    expect(() => x.cumsum(1)).toThrow(/cumsum: base axis 1 is out of range for x \(2; 2\)/);
    expect(() => x.softmax(0.5)).toThrow(ShapeError);
    expect(() => x.logsumexp([0, 0])).toThrow(ShapeError);
    expect(() => x.var(0, { correction: NaN })).toThrow(DTypeError);
    expect(() => x.var(0, { keepdim: 1 as unknown as boolean })).toThrow(ShapeError);
    expect(() => x.norm(NaN)).toThrow(DTypeError);
    expect(() => tensor([[]], { batchDim: 1 }).norm(Infinity)).toThrow(ShapeError);
    expect(() => x.topk(3)).toThrow(/topk: k must be an integer in \[0, 2\]/);
    expect(() => x.sort(-1, { descending: "yes" as unknown as boolean })).toThrow(DTypeError);
    expect(() => topk(1 as unknown as Tensor, 1)).toThrow(DTypeError);
  });

  it("einsum: typed errors for bad subscripts", () => {
    const a = tensor([
      [1, 2],
      [3, 4],
    ]);
    const v = tensor([1, 2, 3]);
    const bad: [() => unknown, RegExp][] = [
      [() => einsum("ij,jk", a), /names 2 operand\(s\) but 1 tensor\(s\) were given/],
      [() => einsum("i1", a), /invalid character "1"/],
      [() => einsum("ijk", a), /operand 0 has 3 label\(s\) but x0 \(;2,2\) has 2 base dim\(s\)/],
      [() => einsum("ij,j", a, v), /label "j" is 2 in one operand but 3 in x1 \(;3\)/],
      [() => einsum("ij->k", a), /output label "k" is not in any input/],
      [() => einsum("ij->ii", a), /output label "i" appears twice/],
      [() => einsum("ij->i->j", a), /"->" appears twice/],
      [() => einsum("i.j", a), /"\." must be part of "\.\.\."/],
      [() => einsum("......", a), /"\.\.\." appears twice/],
      [() => einsum("ij", 3 as unknown as Tensor), /einsum: operand 0 must be a Tensor/],
      [() => einsum(3 as unknown as string, a), /subscripts must be a string/],
    ];
    for (const [f, re] of bad) {
      expect(f).toThrow(re);
      try {
        f();
      } catch (e) {
        expect(["ShapeError", "DTypeError"]).toContain((e as Error).name);
      }
    }
  });
});
