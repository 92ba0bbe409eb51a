/**
 * Issue 26, items 9 and 10: errors name the function the user called (not the IR op
 * or library function underneath: `concat:`, `batch_expand:`, `random.uniform:`,
 * `where:`, `cat:`), `maybeDenseStack` of lazy stacks stacks them (it was a raw
 * TypeError), `norm("fro", axes)` is NumPy's Frobenius norm, and `all`/`any` on int32
 * follow NumPy. Expected values by hand.
 */
import { describe, expect, it } from "vitest";
import {
  BatchwiseError,
  DTypeError,
  LazyStackedTensorDict,
  ShapeError,
  TensorDict,
  baseCat,
  lazyStack,
  maybeDenseStack,
  random,
  tensor,
  type Tensor,
} from "../../src/index.js";

function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error("did not throw");
}

/** A (3; 2) tensor of 1..6. */
const rows3x2 = (): Tensor =>
  tensor(
    [
      [1, 2],
      [3, 4],
      [5, 6],
    ],
    { batchDim: 1 },
  );

describe("errors name the function the user called", () => {
  it.each([
    ["baseCat", () => baseCat([tensor([[1, 2]]), tensor([[1, 2, 3]], { batchDim: 1 })], 0), ShapeError],
    ["batchExpand", () => rows3x2().batchExpand([4]), ShapeError],
    ["random.normal", () => random.normal([2] as never, [3]), DTypeError],
    [
      "at(mask).set",
      () =>
        rows3x2()
          .at(tensor([[true, false, true]], { batchDim: 1 }))
          .set(tensor([1, 2, 3, 4])),
      ShapeError,
    ],
    [
      "at(idx).set",
      () =>
        tensor([1, 2, 3])
          .at([0])
          .set(tensor([1, 2])),
      ShapeError,
    ],
    [
      "TensorDict.setAt",
      () =>
        new TensorDict({ a: tensor([[1], [2]], { batchDim: 1 }) }, [2]).setAt(
          0,
          new TensorDict({ a: tensor([1, 2, 3]) }, []),
        ),
      ShapeError,
    ],
  ] as const)("%s", (name, f, cls) => {
    const e = thrown(f);
    expect(e).toBeInstanceOf(cls);
    expect(e).toBeInstanceOf(BatchwiseError);
    expect(e.message.startsWith(`${name}: `)).toBe(true);
    // the op underneath is kept as the cause
    expect((e as Error & { cause?: unknown }).cause).toBeInstanceOf(BatchwiseError);
  });
});

describe("maybeDenseStack, norm('fro'), all/any on int32", () => {
  const td = (v: number) => new TensorDict({ a: tensor([[v], [v + 1]], { batchDim: 1 }) }, [2]);

  it("maybeDenseStack of two lazy stacks of the same structure stacks member by member and stays lazy", () => {
    const r = maybeDenseStack([lazyStack([td(1), td(3)]), lazyStack([td(5), td(7)])]);
    expect(r).toBeInstanceOf(LazyStackedTensorDict);
    expect(r.batchSize).toEqual([2, 2, 2]);
    // r[i] is the stack of the i-th lazy stack's members: r[1][0] = td(5), r[1][1] = td(7)
    const l = r as LazyStackedTensorDict;
    const got = l.tensordicts.map((m) => (m as TensorDict).getTensor("a").toArraySync());
    // members: stack of (td(1), td(5)) and of (td(3), td(7)) on dim 0
    expect(got).toEqual([
      [
        [[1], [2]],
        [[5], [6]],
      ],
      [
        [[3], [4]],
        [[7], [8]],
      ],
    ]);
  });

  it("maybeDenseStack names itself for a rank mismatch", () => {
    const e = thrown(() => maybeDenseStack([lazyStack([td(1), td(3)]), td(5)]));
    expect(e).toBeInstanceOf(ShapeError);
    expect(e.message).toMatch(
      /^maybeDenseStack: Lazy stacking of tensordicts requires them to have congruent batch dimensions/,
    );
  });

  it("norm(x, 'fro', axes) is sqrt of the sum of squares over the two axes", () => {
    const x = tensor(
      [
        [
          [1, 2],
          [3, 4],
        ],
      ],
      { batchDim: 1 },
    ); // (1; 2,2)
    expect(x.norm("fro", [0, 1]).toArraySync()).toEqual([Math.fround(Math.sqrt(30))]);
    expect(x.norm("fro").toArraySync()).toEqual([Math.fround(Math.sqrt(30))]);
    expect(() => tensor([1, 2, 3]).norm("fro")).toThrow(/^norm: p = "fro" needs two distinct base axes/);
    expect(() => x.norm("nuc" as never)).toThrow(DTypeError);
  });

  it("all/any on int32 as NumPy: non-zero is true", () => {
    const i = tensor([0, 2], { dtype: "int32" });
    expect(i.all().toArraySync()).toBe(false);
    expect(i.any().toArraySync()).toBe(true);
    expect(tensor([3, -1], { dtype: "int32" }).all().toArraySync()).toBe(true);
    expect(tensor([NaN]).all().toArraySync()).toBe(true);
  });
});
