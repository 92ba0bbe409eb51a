/**
 * Kaolin's batch helpers (`kaolin.ops.batch`): the round trips of Kaolin's own
 * test_batch.py on random shapes and every dtype, the padding checked at every
 * position outside each tensor, and the exact error texts.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { castScalar, type DType, type TypedArray } from "../../ir/dtype.js";
import { DTypeError, fromTypedArray, jit, ShapeError, tensor, Tensor, TraceError, zeros } from "../../src/index.js";
import {
  fillMaxShape,
  getFirstIdx,
  getShapePerTensor,
  listToPacked,
  listToPadded,
  packedToList,
  packedToPadded,
  paddedToList,
  paddedToPacked,
  tileToPacked,
} from "../../src/ragged/index.js";
import { _poisonUninitialized } from "../../src/ragged/device.js";

const DTYPES: readonly DType[] = ["float32", "float64", "int32", "uint32", "bool"];
const CTOR: { readonly [D in DType]?: new (n: number) => TypedArray } = {
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  uint32: Uint32Array,
  bool: Uint8Array,
} as const;

/** mulberry32, so that one fast-check integer seeds all the values of a case. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomValues(dtype: DType, n: number, r: () => number): TypedArray {
  const out = new CTOR[dtype]!(n);
  for (let i = 0; i < n; i++) {
    const u = r();
    out[i] =
      dtype === "bool"
        ? u < 0.5
          ? 1
          : 0
        : dtype === "uint32"
          ? Math.floor(u * 4e9)
          : dtype === "int32"
            ? Math.floor(u * 2e9 - 1e9)
            : (u - 0.5) * 100;
  }
  return out;
}

const prod = (s: readonly number[]) => s.reduce((a, b) => a * b, 1);

interface Case {
  readonly dtype: DType;
  readonly shapes: number[][]; // each without the last dim
  readonly last: number;
  readonly list: Tensor[];
  readonly data: TypedArray[];
  readonly pad: number | boolean;
}

/** Kaolin's parametrisation: batch 1..8, 1 or 3 dims before the last, last dim 1 or 8, every dtype. */
const caseArb: fc.Arbitrary<Case> = fc
  .record({
    dtype: fc.constantFrom(...DTYPES),
    batch: fc.integer({ min: 1, max: 8 }),
    ndim: fc.constantFrom(1, 3),
    last: fc.constantFrom(1, 8),
    seed: fc.integer(),
    padPick: fc.constantFrom(0, 1, 2),
  })
  .map(({ dtype, batch, ndim, last, seed, padPick }) => {
    const r = rng(seed);
    const maxSize = ndim === 1 ? 12 : 4;
    const shapes = Array.from({ length: batch }, () =>
      Array.from({ length: ndim }, () => Math.floor(r() * (maxSize + 1))),
    );
    const data = shapes.map((s) => randomValues(dtype, prod(s) * last, r));
    // Any batchDim: Kaolin reads the full shape.
    const list = shapes.map((s, i) =>
      fromTypedArray(data[i]!, [...s, last], { batchDim: Math.floor(r() * (ndim + 2)), dtype }),
    );
    const pad = dtype === "bool" ? [false, true, false][padPick]! : [-1, 0, 2.5][padPick]!;
    return { dtype, shapes, last, list, data, pad };
  });

function same(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

/** Kaolin's check_padded_tensor: each tensor at [:shape], the padding value EVERYWHERE else. */
function checkPadded(padded: Tensor, c: Case, maxShape: readonly number[]): void {
  expect(padded.shape).toEqual([c.list.length, ...maxShape, c.last]);
  expect(padded.batchDim).toBe(1);
  expect(padded.dtype).toBe(c.dtype);
  const got = padded.dataSync();
  const fill = castScalar(typeof c.pad === "boolean" ? Number(c.pad) : c.pad, c.dtype);
  const slotShape = [...maxShape, c.last];
  const slot = prod(slotShape);
  let bad = 0;
  c.shapes.forEach((shape, b) => {
    const full = [...shape, c.last];
    const strides = full.map((_, j) => prod(full.slice(j + 1)));
    for (let k = 0; k < slot; k++) {
      // Position k of the slot as a multi-index; inside the tensor iff every index < its size.
      let rem = k;
      let src = 0;
      let inside = true;
      for (let j = 0; j < slotShape.length; j++) {
        const st = prod(slotShape.slice(j + 1));
        const ix = Math.floor(rem / st);
        rem -= ix * st;
        if (ix >= full[j]!) inside = false;
        else src += ix * strides[j]!;
      }
      const want = inside ? c.data[b]![src]! : fill;
      if (!Object.is(got[b * slot + k], want)) bad++;
    }
  });
  expect(bad).toBe(0);
}

function expectList(list: readonly Tensor[], c: Case): void {
  expect(list.length).toBe(c.list.length);
  list.forEach((t, i) => {
    expect(t.shape).toEqual([...c.shapes[i]!, c.last]);
    expect(t.dtype).toBe(c.dtype);
    expect(same(t.dataSync(), c.data[i]!)).toBe(true);
  });
}

const colMax = (shapes: readonly number[][]) => shapes[0]!.map((_, j) => Math.max(...shapes.map((s) => s[j]!)));

describe("round trips (fast-check)", () => {
  // Outputs are uninitialized memory: poisoned here, so every value a helper leaves unwritten fails a check.
  beforeAll(() => _poisonUninitialized(0xa5));
  afterAll(() => _poisonUninitialized(undefined));

  it("list -> padded -> list, padding everywhere outside each tensor", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const [padded, spt] = listToPadded(c.list, c.pad);
        expect(spt.dtype).toBe("int32");
        expect(spt.shape).toEqual([c.list.length, c.shapes[0]!.length]);
        expect(spt.toArraySync()).toEqual(c.shapes);
        checkPadded(padded, c, colMax(c.shapes));
        expectList(paddedToList(padded, spt), c);
      }),
      { numRuns: 60 },
    );
  });

  it("list -> padded with a maxShape larger than needed (and -1 entries)", () => {
    fc.assert(
      fc.property(caseArb, fc.array(fc.integer({ min: -1, max: 2 }), { minLength: 3, maxLength: 3 }), (c, extra) => {
        const max = colMax(c.shapes);
        const partial = max.map((m, j) => (extra[j]! < 0 ? -1 : m + extra[j]!));
        const want = max.map((m, j) => (extra[j]! < 0 ? m : m + extra[j]!));
        const [padded, spt] = listToPadded(c.list, c.pad, partial);
        checkPadded(padded, c, want);
        expectList(paddedToList(padded, spt), c);
      }),
      { numRuns: 50 },
    );
  });

  it("list -> packed -> list, with firstIdx from the numel of each tensor", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const [packed, spt] = listToPacked(c.list);
        const numel = c.shapes.map(prod);
        expect(packed.shape).toEqual([numel.reduce((a, b) => a + b, 0), c.last]);
        expect(packed.batchDim).toBe(0);
        expect(packed.dtype).toBe(c.dtype);
        expect(same(packed.dataSync(), concat(c.dtype, c.data))).toBe(true);
        const first = getFirstIdx(spt.prod(1));
        expect(first.shape).toEqual([c.list.length + 1]);
        expectList(packedToList(packed, spt, first), c);
      }),
      { numRuns: 60 },
    );
  });

  it("packed <-> padded", () => {
    fc.assert(
      fc.property(caseArb, fc.boolean(), (c, bigger) => {
        const [packed, spt] = listToPacked(c.list);
        const first = getFirstIdx(c.shapes.map(prod));
        const max = colMax(c.shapes).map((m) => m + (bigger ? 1 : 0));
        const padded = packedToPadded(packed, spt, first, c.pad, bigger ? max : undefined);
        checkPadded(padded, c, max);
        expect(same(padded.dataSync(), listToPadded(c.list, c.pad, max)[0].dataSync())).toBe(true);
        const back = paddedToPacked(padded, spt);
        expect(back.shape).toEqual(packed.shape);
        expect(same(back.dataSync(), packed.dataSync())).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it("getFirstIdx: starts at 0 and its diffs are the numel of each tensor", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 20 }), (numel) => {
        const first = getFirstIdx(numel).dataSync();
        expect(first.length).toBe(numel.length + 1);
        expect(first[0]).toBe(0);
        numel.forEach((n, i) => expect(first[i + 1]! - first[i]!).toBe(n));
        expect(getFirstIdx(tensor(numel, { dtype: "int32" })).dataSync()).toEqual(first);
      }),
    );
  });

  it("tileToPacked against a naive concatenation of full tensors", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...DTYPES),
        fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 8 }),
        fc.integer(),
        (dtype, numel, seed) => {
          const values = randomValues(dtype, numel.length, rng(seed));
          const out = tileToPacked(fromTypedArray(values, [numel.length], { dtype }), numel);
          const naive: number[] = [];
          numel.forEach((n, i) => naive.push(...new Array<number>(n).fill(values[i]!)));
          expect(out.shape).toEqual([naive.length, 1]);
          expect(out.dtype).toBe(dtype);
          expect(same(out.dataSync(), naive)).toBe(true);
        },
      ),
    );
  });
});

function concat(dtype: DType, parts: readonly TypedArray[]): TypedArray {
  const out = new CTOR[dtype]!(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

describe("Kaolin's examples and details", () => {
  it("shapePerTensor and firstIdx of the docs", () => {
    const list = [zeros([], [32, 32, 3]), zeros([], [64, 16, 3])];
    const spt = getShapePerTensor(list);
    expect(spt.toArraySync()).toEqual([
      [32, 32],
      [64, 16],
    ]);
    expect(spt.toString()).toBe("(;2,2)");
    expect(getFirstIdx([1024, 1024]).toArraySync()).toEqual([0, 1024, 2048]);
  });

  it("fillMaxShape: the column max, -1 takes the max, the input is not changed", () => {
    const spt = tensor(
      [
        [3, 5, 1],
        [4, 2, 1],
      ],
      { dtype: "int32" },
    );
    expect(fillMaxShape(spt).toArraySync()).toEqual([4, 5, 1]);
    const partial = [-1, 7, -1];
    expect(fillMaxShape(spt, partial).toArraySync()).toEqual([4, 7, 1]);
    expect(partial).toEqual([-1, 7, -1]);
    expect(fillMaxShape(spt, tensor([6, -1, 2], { dtype: "int32" })).toArraySync()).toEqual([6, 5, 2]);
    expect(fillMaxShape(spt).dtype).toBe("int32");
  });

  it("the padding value is cast to list[0]'s dtype", () => {
    const [p] = listToPadded([tensor([[1], [2]], { dtype: "uint32" }), tensor([[3]], { dtype: "uint32" })], -1);
    expect(Array.from(p.dataSync())).toEqual([1, 2, 3, 4294967295]);
    const [q] = listToPadded([tensor([[1.5]], { dtype: "int32" }), tensor([[2], [3]], { dtype: "int32" })], 9.75);
    expect(Array.from(q.dataSync())).toEqual([1, 9, 2, 3]);
    const [r] = listToPadded([tensor([[true]]), tensor([[false], [true]])], true);
    expect(r.toArraySync()).toEqual([
      [[true], [true]],
      [[false], [true]],
    ]);
  });

  it("counts and offsets may be Int32Array/Uint32Array as well as arrays and tensors", () => {
    expect(Array.from(getFirstIdx(Int32Array.from([2, 0, 3])).dataSync())).toEqual([0, 2, 2, 5]);
    expect(Array.from(getFirstIdx(Uint32Array.from([4])).dataSync())).toEqual([0, 4]);
    expect(() => getFirstIdx(Int32Array.from([1, -1]))).toThrowError(
      "getFirstIdx: numelPerTensor has a negative count -1 at index 1",
    );
    const list = [tensor([[1], [2]]), tensor([[3]])];
    const [packed, spt] = listToPacked(list);
    const padded = packedToPadded(packed, spt, Int32Array.from([0, 2, 3]), -1);
    expect(padded.toArraySync()).toEqual([
      [[1], [2]],
      [[3], [-1]],
    ]);
  });

  it("outputs of 64 KiB and more (Node's uninitialized memory): every value written, padding included", () => {
    // Clouds of 5000 and 3 points: padded is (2; 5000, 3) float32, 120 KB, and packed 60 KB.
    const a = Float32Array.from({ length: 15000 }, (_, i) => i + 1);
    const b = Float32Array.from([-1, -2, -3, -4, -5, -6, -7, -8, -9]);
    for (let round = 0; round < 3; round++) {
      const list = [fromTypedArray(b, [3, 3]), fromTypedArray(a, [5000, 3])];
      const [padded] = listToPadded(list, 0.5);
      const got = padded.dataSync();
      expect(Array.from(got.subarray(0, 9))).toEqual(Array.from(b));
      expect(got.subarray(9, 15000).every((v) => v === 0.5)).toBe(true);
      expect(same(got.subarray(15000), a)).toBe(true);
      const [packed] = listToPacked(list);
      expect(same(packed.dataSync(), Float32Array.from([...b, ...a]))).toBe(true);
      // Garbage for the next round's allocations to find, should they skip a value.
      padded.dataSync({ copy: false }).fill(Number.NaN);
    }
  });

  it("rank-1 tensors: shapePerTensor has no columns and nothing is padded", () => {
    const list = [tensor([1, 2]), tensor([3, 4])];
    const [padded, spt] = listToPadded(list, -1);
    expect(spt.shape).toEqual([2, 0]);
    expect(padded.toString()).toBe("(2; 2)");
    expect(padded.toArraySync()).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });
});

describe("errors", () => {
  it("ranks differ: Kaolin's get_shape_per_tensor text, after the op's name", () => {
    const list = [zeros([], [4, 3]), zeros([], [2, 2, 3])];
    for (const [op, f] of [
      ["getShapePerTensor", () => getShapePerTensor(list)],
      ["listToPadded", () => listToPadded(list, 0)],
      ["listToPacked", () => listToPacked(list)],
    ] as const) {
      expect(f).toThrow(ShapeError);
      expect(f).toThrow(new ShapeError(`${op}: Expected all tensors to have 2 dimensions but got 3 at index 1`));
    }
  });

  it("last dims differ: Kaolin's list_to_packed text", () => {
    const list = [zeros([], [4, 3]), zeros([], [2, 3]), zeros([], [5, 2])];
    expect(() => listToPacked(list)).toThrow(
      new ShapeError("listToPacked: Expected all tensor to have last dimension 3 but got 2 at index 2"),
    );
    expect(() => listToPadded(list, 0)).toThrow(
      new ShapeError("listToPadded: Expected all tensor to have last dimension 3 but got 2 at index 2"),
    );
  });

  it("dtypes differ: Kaolin's type text as a DTypeError", () => {
    const list = [zeros([], [4, 3]), zeros([], [2, 3], { dtype: "int32" })];
    expect(() => listToPacked(list)).toThrow(DTypeError);
    expect(() => listToPacked(list)).toThrow(
      new DTypeError("listToPacked: Expected all tensor to have type float32 but got int32 at index 1"),
    );
    expect(() => listToPadded(list, 0)).toThrow(DTypeError);
  });

  it("a max_shape entry below the max: fill_max_shape's text with the parenthesis balanced", () => {
    const spt = tensor(
      [
        [3, 5],
        [4, 2],
        [4, 1],
      ],
      { dtype: "int32" },
    );
    const msg = "fillMaxShape: dim 0 of max_shape (3) is smaller than for tensor 1 (4)";
    expect(() => fillMaxShape(spt, [3, -1])).toThrow(new ShapeError(msg));
    const list = [zeros([], [3, 5, 1]), zeros([], [4, 2, 1])];
    expect(() => listToPadded(list, 0, [-1, 4])).toThrow(
      new ShapeError("listToPadded: dim 1 of max_shape (4) is smaller than for tensor 0 (5)"),
    );
    const [packed, s] = listToPacked(list);
    expect(() => packedToPadded(packed, s, [0, 15, 23], 0, [3, 5])).toThrow(
      new ShapeError("packedToPadded: dim 0 of max_shape (3) is smaller than for tensor 1 (4)"),
    );
  });

  it("None is not 'take the max' (the upstream docstring bug): only -1 is", () => {
    const spt = tensor([[3, 5]], { dtype: "int32" });
    expect(() => fillMaxShape(spt, [null as unknown as number, 5])).toThrow(ShapeError);
    expect(() => fillMaxShape(spt, [-1])).toThrow(ShapeError);
  });

  it("firstIdx and padded shapes that do not fit", () => {
    const [packed, spt] = listToPacked([zeros([], [2, 3]), zeros([], [3, 3])]);
    expect(() => packedToList(packed, spt, [0, 2])).toThrow(ShapeError);
    expect(() => packedToList(packed, spt, [0, 3, 5])).toThrow(ShapeError);
    expect(() => packedToList(packed, spt, [0, 2, 6])).toThrow(ShapeError);
    expect(() => paddedToList(zeros([2], [2, 3]), spt)).toThrow(ShapeError);
    expect(() => tileToPacked(tensor([1, 2, 3]), [1, 2])).toThrow(ShapeError);
    expect(() => getFirstIdx(tensor([1.5]))).toThrow(DTypeError);
    expect(() => getShapePerTensor([])).toThrow(ShapeError);
    expect(() => listToPacked([tensor(1)])).toThrow(ShapeError);
  });

  it("eager only: inside jit the inputs are traced", () => {
    const f = jit((x: Tensor) => listToPacked([x])[0]);
    expect(() => f(zeros([2], [3]))).toThrow(TraceError);
  });
});
