/** The eager tensor API against hand-computed values. */
import { describe, expect, it } from "vitest";
import {
  arange,
  diag,
  eye,
  fromTypedArray,
  full,
  jit,
  ones,
  tensor,
  where,
  zeros,
  type Tensor,
} from "../../src/index.js";

describe("creation and inspection", () => {
  it("splits shapes into (batch; base) and prints NEML2 notation", () => {
    const t = zeros([3, 100, 5], [13, 2]);
    expect(t.toString()).toBe("(3,100,5; 13,2)");
    expect(t.batchShape).toEqual([3, 100, 5]);
    expect(t.baseShape).toEqual([13, 2]);
    expect(t.batchDim).toBe(3);
    expect(t.shape).toEqual([3, 100, 5, 13, 2]);
    expect(zeros([], [3, 3]).toString()).toBe("(;3,3)");
    expect(zeros([4, 5], []).toString()).toBe("(4,5;)");
    expect(tensor(2).toString()).toBe("(;)");
  });

  it("creates from nested arrays, typed arrays and by shape", async () => {
    const a = tensor(
      [
        [1, 2, 3],
        [4, 5, 6],
      ],
      { batchDim: 1 },
    );
    expect(a.toString()).toBe("(2; 3)");
    expect(a.dtype).toBe("float32");
    expect(await a.toArray()).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(tensor([true, false]).dtype).toBe("bool");
    expect(tensor([true, false]).toArraySync()).toEqual([true, false]);
    const b = fromTypedArray(new Int32Array([1, 2, 3, 4]), [2, 2], { batchDim: 1 });
    expect(b.dtype).toBe("int32");
    expect(Array.from(await b.data())).toEqual([1, 2, 3, 4]);
    expect(full([2], [2], 7, { dtype: "int32" }).toArraySync()).toEqual([
      [7, 7],
      [7, 7],
    ]);
    expect(ones([1], [], { dtype: "float64" }).dataSync()).toEqual(new Float64Array([1]));
    expect(arange(4).toArraySync()).toEqual([0, 1, 2, 3]);
    expect(arange(1, 2, 0.25).toArraySync()).toEqual([1, 1.25, 1.5, 1.75]);
    expect(arange(3, 0).toArraySync()).toEqual([]);
    expect(eye(2, { batchShape: [2] }).toArraySync()).toEqual([
      [
        [1, 0],
        [0, 1],
      ],
      [
        [1, 0],
        [0, 1],
      ],
    ]);
  });
});

describe("elementwise ops and promotion", () => {
  const x = tensor(
    [
      [1, -2, 3],
      [-4, 5, -6],
    ],
    { batchDim: 1 },
  );

  it("computes unary math", () => {
    expect(x.abs().toArraySync()).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    expect(x.neg().sign().toArraySync()).toEqual([
      [-1, 1, -1],
      [1, -1, 1],
    ]);
    expect(tensor([0.5, 1.5, 2.5, -0.5, -1.5]).round().toArraySync()).toEqual([0, 2, 2, -0, -2]);
    expect(tensor([1.7, -1.7]).trunc().toArraySync()).toEqual([1, -1]);
    expect(tensor([4], { dtype: "int32" }).sqrt().dtype).toBe("float32");
    expect(tensor([NaN, Infinity, 1]).isNan().toArraySync()).toEqual([true, false, false]);
    expect(tensor([NaN, -Infinity, 1]).isFinite().toArraySync()).toEqual([false, false, true]);
    expect(tensor([0]).sigmoid().itemSync()).toBe(0.5);
  });

  it("broadcasts batch against batch and base against base", () => {
    const row = tensor([10, 20, 30]); // (;3)
    expect(x.add(row).toArraySync()).toEqual([
      [11, 18, 33],
      [6, 25, 24],
    ]);
    const perSample = tensor([100, 200], { batchDim: 1 }); // (2;) broadcasts into the base
    expect(x.add(perSample).toArraySync()).toEqual([
      [101, 98, 103],
      [196, 205, 194],
    ]);
  });

  it("promotes dtypes: weak scalars keep the tensor dtype, true division gives floats", () => {
    const i = tensor([1, 2, 3], { dtype: "int32" });
    expect(i.add(1).dtype).toBe("int32");
    expect(i.add(1.5).dtype).toBe("float32");
    expect(i.div(2).toArraySync()).toEqual([0.5, 1, 1.5]);
    expect(i.add(tensor([1, 1, 1], { dtype: "float64" })).dtype).toBe("float64");
    expect(
      tensor([true, true])
        .add(tensor([true, false]))
        .toArraySync(),
    ).toEqual([2, 1]);
    expect(tensor([-7, 7], { dtype: "int32" }).mod(3).toArraySync()).toEqual([2, 1]);
    expect(tensor([-7.5, 7.5]).mod(-2).toArraySync()).toEqual([-1.5, -0.5]);
    expect(tensor([2147483647], { dtype: "int32" }).add(1).toArraySync()).toEqual([-2147483648]);
  });

  it("compares, combines logically, selects and clips", () => {
    expect(x.gt(0).toArraySync()).toEqual([
      [true, false, true],
      [false, true, false],
    ]);
    expect(x.gt(0).logicalAnd(x.lt(4)).toArraySync()).toEqual([
      [true, false, true],
      [false, false, false],
    ]);
    expect(x.gt(0).logicalNot().logicalXor(x.eq(-4)).toArraySync()).toEqual([
      [false, true, false],
      [false, false, true],
    ]);
    expect(where(x.gt(0), x, 0).toArraySync()).toEqual([
      [1, 0, 3],
      [0, 5, 0],
    ]);
    expect(x.clip(-2, 2).toArraySync()).toEqual([
      [1, -2, 2],
      [-2, 2, -2],
    ]);
    expect(tensor([1, NaN]).clip(0, 0.5).toArraySync()).toEqual([0.5, NaN]);
    expect(tensor([1.9, -1.9]).cast("int32").toArraySync()).toEqual([1, -1]);
  });
});

describe("reductions", () => {
  const x = tensor(
    [
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
      [
        [-1, 0],
        [7, -8],
        [2, 2],
      ],
    ],
    { batchDim: 1 },
  ); // (2; 3,2)

  it("over base axes, with keepdim", () => {
    expect(x.sum().toArraySync()).toEqual([21, 2]);
    expect(x.sum(0).toArraySync()).toEqual([
      [9, 12],
      [8, -6],
    ]);
    expect(x.mean(-1, { keepdim: true }).toArraySync()).toEqual([
      [[1.5], [3.5], [5.5]],
      [[-0.5], [-0.5], [2]],
    ]);
    expect(x.max(0).toArraySync()).toEqual([
      [5, 6],
      [7, 2],
    ]);
    expect(x.min([0, 1]).toArraySync()).toEqual([1, -8]);
    expect(x.prod(1).toArraySync()).toEqual([
      [2, 12, 30],
      [-0, -56, 4],
    ]);
    expect(x.argmax(0).toArraySync()).toEqual([
      [2, 2],
      [1, 2],
    ]);
    expect(x.argmin(1).toArraySync()).toEqual([
      [0, 0, 0],
      [0, 1, 0],
    ]);
    expect(x.gt(0).all(1).toArraySync()).toEqual([
      [true, true, true],
      [false, false, true],
    ]);
    expect(x.gt(0).any().toArraySync()).toEqual([true, true]);
  });

  it("over batch axes", () => {
    expect(x.batchSum().toArraySync()).toEqual([
      [0, 2],
      [10, -4],
      [7, 8],
    ]);
    expect(x.batchMean(0, { keepdim: true }).toString()).toBe("(1; 3,2)");
    expect(x.batchArgmax(0).toArraySync()).toEqual([
      [0, 0],
      [1, 0],
      [0, 0],
    ]);
    expect(x.reduce("sum", { batchAxes: [0], baseAxes: [0, 1] }).itemSync()).toBe(23);
  });
});

describe("movement and matmul", () => {
  const m = tensor(
    [
      [
        [1, 2],
        [3, 4],
      ],
      [
        [0, 1],
        [1, 0],
      ],
    ],
    { batchDim: 1 },
  );

  it("reshapes, permutes and expands the base only", () => {
    expect(m.reshape([4]).toString()).toBe("(2; 4)");
    expect(m.reshape([-1, 1]).toString()).toBe("(2; 4,1)");
    expect(m.transpose().toArraySync()).toEqual([
      [
        [1, 3],
        [2, 4],
      ],
      [
        [0, 1],
        [1, 0],
      ],
    ]);
    expect(m.flatten().unsqueeze(0).toString()).toBe("(2; 1,4)");
    expect(m.unsqueeze(-1).squeeze().toString()).toBe("(2; 2,2)");
    expect(tensor([1, 2]).expand([2, 2]).toArraySync()).toEqual([
      [1, 2],
      [1, 2],
    ]);
  });

  it("reshapes and expands the batch only", () => {
    const b = zeros([2, 3], [4]);
    expect(b.batchFlatten().toString()).toBe("(6; 4)");
    expect(b.batchReshape([3, -1]).toString()).toBe("(3,2; 4)");
    expect(b.batchUnsqueeze(-2).toString()).toBe("(2,1,3; 4)");
    expect(
      tensor([[1, 2]], { batchDim: 1 })
        .batchExpand([3, -1])
        .toArraySync(),
    ).toEqual([[[1, 2]], [[1, 2]], [[1, 2]]]);
  });

  it("multiplies matrices per batch element", () => {
    expect(m.matmul(m).toArraySync()).toEqual([
      [
        [7, 10],
        [15, 22],
      ],
      [
        [1, 0],
        [0, 1],
      ],
    ]);
    expect(m.matmul(tensor([1, 1])).toArraySync()).toEqual([
      [3, 7],
      [1, 1],
    ]);
    expect(tensor([1, 1]).matmul(m).toArraySync()).toEqual([
      [4, 6],
      [1, 1],
    ]);
    expect(m.matmul(eye(2)).toArraySync()).toEqual(m.toArraySync());
  });
});

describe("base concatenation", () => {
  it("cats and stacks along base axes with batch broadcasting", async () => {
    const { baseCat, baseStack } = await import("../../src/index.js");
    const a = tensor(
      [
        [1, 2],
        [3, 4],
      ],
      { batchDim: 1 },
    ); // (2; 2)
    const b = tensor([9]); // (;1)
    expect(baseCat([a, b], 0).toArraySync()).toEqual([
      [1, 2, 9],
      [3, 4, 9],
    ]);
    const x = tensor([1, 2, 3], { batchDim: 1 });
    const v = baseStack([x, x.mul(10), tensor(7)]);
    expect(v.toString()).toBe("(3; 3)");
    expect(v.toArraySync()).toEqual([
      [1, 10, 7],
      [2, 20, 7],
      [3, 30, 7],
    ]);
    expect(baseStack([a, a], 1).toArraySync()).toEqual([
      [
        [1, 1],
        [2, 2],
      ],
      [
        [3, 3],
        [4, 4],
      ],
    ]);
    expect(v.select(0, 1).toArraySync()).toEqual([10, 20, 30]);
    expect(() => baseCat([a, tensor([[1, 2, 3]])], 0)).toThrow(
      "baseCat: x1 (;1,3) does not match x0 (2; 2) outside base axis 0",
    );
  });
});

describe("batch slicing and indexing", () => {
  it("slices and indexes batch dims eagerly and inside jit, as block copies", async () => {
    const { jit } = await import("../../src/index.js");
    const x = tensor(
      [
        [
          [1, 2],
          [3, 4],
          [5, 6],
        ],
        [
          [7, 8],
          [9, 10],
          [11, 12],
        ],
      ],
      { batchDim: 2 },
    ); // (2,3; 2)
    expect(x.batchSlice(1, 1).toArraySync()).toEqual([
      [
        [3, 4],
        [5, 6],
      ],
      [
        [9, 10],
        [11, 12],
      ],
    ]);
    expect(x.batchSlice(1, 0, undefined, 2).toArraySync()).toEqual([
      [
        [1, 2],
        [5, 6],
      ],
      [
        [7, 8],
        [11, 12],
      ],
    ]);
    expect(x.batchSlice(1, -1).toString()).toBe("(2,1; 2)");
    expect(x.batchIndex(0, -1).toArraySync()).toEqual([
      [7, 8],
      [9, 10],
      [11, 12],
    ]);
    expect(x.batchIndex(1, 2).toString()).toBe("(2; 2)");
    expect(x.batchSlice(0, 0, 1).batchSqueeze(0).toString()).toBe("(3; 2)");
    expect(() => x.batchIndex(1, 3)).toThrow("batchIndex: index 3 is out of range for batch dim 1 of x (2,3; 2)");
    const f = jit((t: Tensor) => t.batchSlice(0, 1).add(t.batchIndex(0, 0)));
    for (const n of [3, 6]) {
      const a = fromTypedArray(
        Float32Array.from({ length: n * 2 }, (_, i) => i),
        [n, 2],
        { batchDim: 1 },
      );
      const want = Array.from({ length: n - 1 }, (_, i) => [2 * (i + 1) + 0, 2 * (i + 1) + 1 + 1]);
      expect(f(a).toArraySync()).toEqual(want);
    }
    expect(f.stats.traces).toBe(1);
    expect(f.dump({ after: "fuse" })).toMatch(/copy \(batch_slice\)/);
  });
});

describe("rebatch: moving the batch/base boundary", () => {
  it("keeps the values and their order, as a view, eagerly", () => {
    const x = fromTypedArray(
      Float32Array.from({ length: 30 }, (_, i) => i),
      [2, 5, 3],
      { batchDim: 2 },
    );
    const y = x.rebatch(1);
    expect(y.toString()).toBe("(2; 5,3)");
    expect(Array.from(y.dataSync())).toEqual(Array.from(x.dataSync()));
    // A base reduction now runs over what were batch dims.
    expect(y.sum([0, 1]).toArraySync()).toEqual([105, 330]);
    expect(x.rebatch(0).toString()).toBe("(;2,5,3)");
    expect(x.rebatch(3).rebatch(2).toString()).toBe("(2,5; 3)");
    expect(() => x.rebatch(4)).toThrow("rebatch: batchDim 4 does not fit x (2,5; 3) (rank 3)");
  });

  it("inside jit: fuses with its consumers' kernels as a view, and refuses symbolic dims in the base", () => {
    const f = jit((x: Tensor) => x.rebatch(2).mul(2));
    const x = fromTypedArray(
      Float32Array.from({ length: 12 }, (_, i) => i),
      [2, 2, 3],
      { batchDim: 1 },
    );
    expect(Array.from(f(x).dataSync())).toEqual(Array.from({ length: 12 }, (_, i) => 2 * i));
    expect(f(x).toString()).toBe("(2,2; 3)");
    expect(f.dump({ after: "fuse" })).toMatch(/view %x0 : f32\[b0,2; 3\]/);
    const g = jit((x: Tensor) => x.rebatch(0));
    expect(() => g(x)).toThrow(/rebatch: batchDim 0 would move symbolic batch dims of x \(b0; 2,3\) into the base/);
  });
});

describe("diag", () => {
  it("builds diagonal matrices from vector bases and reads the diagonal of matrix bases (NumPy), batch dims passing through", () => {
    const v = tensor(
      [
        [1, NaN],
        [3, 4],
      ],
      { batchDim: 1 },
    );
    const d = diag(v);
    expect(d.toString()).toBe("(2; 2,2)");
    expect(d.toArraySync()).toEqual([
      [
        [1, 0],
        [0, NaN],
      ],
      [
        [3, 0],
        [0, 4],
      ],
    ]);
    expect(
      diag(
        tensor([
          [1, 2, 3],
          [4, 5, 6],
        ]),
      ).toArraySync(),
    ).toEqual([1, 5]);
    expect(
      diag(
        tensor([
          [1, 2],
          [3, 4],
          [5, 6],
        ]),
      ).toArraySync(),
    ).toEqual([1, 4]);
    expect(diag(d).toArraySync()).toEqual([
      [1, NaN],
      [3, 4],
    ]);
    expect(diag(tensor([[1, 2]], { dtype: "int32" })).dtype).toBe("int32");
    expect(() => diag(tensor(1))).toThrow("diag: x (;) must have a base of rank 1 or 2");
  });
});
