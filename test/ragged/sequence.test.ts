/**
 * stack / cat / padSequence / unpadSequence on plain tensors along batch dims
 * (torch and tensordict semantics): values against a
 * per-element reference, the padding checked everywhere, masks, and the errors.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DTypeError, fromTypedArray, jit, ShapeError, tensor, Tensor, TraceError, zeros } from "../../src/index.js";
import { cat, padSequence, stack, unpadSequence } from "../../src/ragged/index.js";

const prod = (s: readonly number[]) => s.reduce((a, b) => a * b, 1);

/** A (batch; base) tensor with distinct values 1000*tag + position. */
function seq(batch: readonly number[], base: readonly number[], tag: number): Tensor {
  const n = prod(batch) * prod(base);
  return fromTypedArray(
    Float64Array.from({ length: n }, (_, i) => 1000 * tag + i),
    [...batch, ...base],
    { batchDim: batch.length },
  );
}

/** The value of a flat row-major tensor at a multi-index. */
function at(data: ArrayLike<number>, shape: readonly number[], idx: readonly number[]): number {
  let off = 0;
  for (let j = 0; j < shape.length; j++) off = off * shape[j]! + idx[j]!;
  return data[off]!;
}

function* indices(shape: readonly number[]): Generator<number[]> {
  const n = prod(shape);
  for (let k = 0; k < n; k++) {
    const idx: number[] = [];
    let rem = k;
    for (let j = shape.length - 1; j >= 0; j--) {
      idx.unshift(rem % shape[j]!);
      rem = Math.floor(rem / shape[j]!);
    }
    yield idx;
  }
}

const shapeArb = (min: number, max: number, maxLen = 4) =>
  fc.array(fc.integer({ min: 0, max: maxLen }), { minLength: min, maxLength: max });

describe("stack", () => {
  it("inserts a new batch dim at dim (property, every dim incl. negative)", () => {
    fc.assert(
      fc.property(
        shapeArb(0, 3),
        shapeArb(0, 2),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: -4, max: 3 }),
        (batch, base, n, dimRaw) => {
          const d = ((dimRaw % (batch.length + 1)) + batch.length + 1) % (batch.length + 1);
          const dim = dimRaw < 0 ? d - batch.length - 1 : d;
          const list = Array.from({ length: n }, (_, i) => seq(batch, base, i + 1));
          const out = stack(list, dim);
          const outBatch = [...batch.slice(0, d), n, ...batch.slice(d)];
          expect(out.batchShape).toEqual(outBatch);
          expect(out.baseShape).toEqual(base);
          const data = out.dataSync();
          const src = list.map((t) => t.dataSync());
          for (const idx of indices(out.shape)) {
            const i = idx[d]!;
            const rest = [...idx.slice(0, d), ...idx.slice(d + 1)];
            expect(at(data, out.shape, idx)).toBe(at(src[i]!, list[i]!.shape, rest));
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("promotes mixed dtypes like torch.stack", () => {
    const out = stack([tensor([1, 2], { batchDim: 1, dtype: "int32" }), tensor([true, false], { batchDim: 1 })]);
    expect(out.dtype).toBe("int32");
    expect(out.toArraySync()).toEqual([
      [1, 2],
      [1, 0],
    ]);
    expect(stack([tensor([1], { dtype: "uint32" }), tensor([0.5])]).dtype).toBe("float32");
  });

  it("errors: tensordict's congruent-batch text, base shapes, empty list, dim", () => {
    const a = zeros([4], [2]);
    expect(() => stack([a, a, zeros([3], [2])])).toThrow(
      new ShapeError("stack: tensors must have congruent batch sizes, got list[2] (3; 2) and list[0] (4; 2)"),
    );
    expect(() => stack([a, zeros([4, 1], [2])])).toThrow(
      "stack: tensors must have congruent batch sizes, got list[1] (4,1; 2) and list[0] (4; 2)",
    );
    expect(() => stack([a, zeros([4], [3])])).toThrow(
      new ShapeError("stack: the shapes of the tensors to stack is incompatible: list[1] (4; 3) vs list[0] (4; 2)"),
    );
    expect(() => stack([])).toThrow(new ShapeError("stack: list cannot be empty"));
    expect(() => stack([a], 2)).toThrow(ShapeError);
    expect(() => stack([a], -3)).toThrow(ShapeError);
  });
});

describe("cat", () => {
  it("concatenates along an existing batch dim (property)", () => {
    fc.assert(
      fc.property(
        shapeArb(1, 3),
        shapeArb(0, 2),
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 4 }),
        fc.nat(),
        fc.boolean(),
        (batch, base, sizes, dimPick, neg) => {
          const d = dimPick % batch.length;
          const list = sizes.map((s, i) => {
            const b = [...batch];
            b[d] = s;
            return seq(b, base, i + 1);
          });
          const out = cat(list, neg ? d - batch.length : d);
          const total = sizes.reduce((a, b) => a + b, 0);
          const outBatch = [...batch];
          outBatch[d] = total;
          expect(out.batchShape).toEqual(outBatch);
          expect(out.baseShape).toEqual(base);
          const data = out.dataSync();
          for (const idx of indices(out.shape)) {
            let i = 0;
            let k = idx[d]!;
            while (k >= sizes[i]!) k -= sizes[i++]!;
            const src = [...idx];
            src[d] = k;
            expect(at(data, out.shape, idx)).toBe(at(list[i]!.dataSync(), list[i]!.shape, src));
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it("errors: tensordict's dim-range text, other batch sizes, base shapes", () => {
    const a = zeros([3, 4], [2]);
    expect(() => cat([a, a], 2)).toThrow(
      new ShapeError("cat: dim must be in the range 0 <= dim < len(batch_size), got dim=2 and batch_size=[3, 4]"),
    );
    expect(() => cat([zeros([], [2])])).toThrow(
      "cat: dim must be in the range 0 <= dim < len(batch_size), got dim=0 and batch_size=[]",
    );
    expect(() => cat([a, zeros([3, 5], [2])], 0)).toThrow(
      new ShapeError("cat: batch sizes must match except in dim 0, got list[1] (3,5; 2) and list[0] (3,4; 2)"),
    );
    expect(cat([a, zeros([3, 5], [2])], 1).toString()).toBe("(3,9; 2)");
    expect(() => cat([a, zeros([3, 4], [1])])).toThrow(ShapeError);
    expect(() => cat([])).toThrow(new ShapeError("cat: list cannot be empty"));
  });
});

interface PadCase {
  readonly list: Tensor[];
  readonly rest: number[]; // batch dims other than padDim, in order
  readonly base: number[];
  readonly padDim: number;
  readonly lengths: number[];
}

const padCaseArb: fc.Arbitrary<PadCase> = fc
  .record({
    rank: fc.integer({ min: 1, max: 3 }),
    padPick: fc.nat(),
    lengths: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 5 }),
    other: shapeArb(2, 2, 3),
    base: shapeArb(0, 2, 3),
  })
  .map(({ rank, padPick, lengths, other, base }) => {
    const padDim = padPick % rank;
    const rest = other.slice(0, rank - 1).map((s) => s + 1);
    const list = lengths.map((len, i) => seq([...rest.slice(0, padDim), len, ...rest.slice(padDim)], base, i + 1));
    return { list, rest, base, padDim, lengths };
  });

describe("padSequence / unpadSequence", () => {
  it("pads batch dim padDim right or left, the padding value everywhere else, and the mask marks the values", () => {
    fc.assert(
      fc.property(
        padCaseArb,
        fc.constantFrom("right" as const, "left" as const),
        fc.constantFrom(0, -7.5),
        (c, side, pad) => {
          const { padded, mask } = padSequence(c.list, {
            paddingValue: pad,
            paddingSide: side,
            returnMask: true,
            padDim: c.padDim,
          });
          const maxLen = Math.max(...c.lengths);
          const batch = [c.list.length, ...c.rest.slice(0, c.padDim), maxLen, ...c.rest.slice(c.padDim)];
          expect(padded.batchShape).toEqual(batch);
          expect(padded.baseShape).toEqual(c.base);
          expect(mask.dtype).toBe("bool");
          expect(mask.batchShape).toEqual(batch);
          expect(mask.baseShape).toEqual([]);
          const data = padded.dataSync();
          const m = mask.dataSync();
          const p = c.padDim + 1;
          for (const idx of indices(padded.shape)) {
            const i = idx[0]!;
            const len = c.lengths[i]!;
            const j = idx[p]! - (side === "left" ? maxLen - len : 0);
            const inside = j >= 0 && j < len;
            const src = idx.slice(1);
            src[c.padDim] = j;
            const want = inside ? at(c.list[i]!.dataSync(), c.list[i]!.shape, src) : pad;
            expect(Object.is(at(data, padded.shape, idx), want)).toBe(true);
            expect(at(m, batch, idx.slice(0, batch.length))).toBe(inside ? 1 : 0);
          }
          // Round trip, with the full mask and with the (B, maxL) mask.
          for (const mk of [mask, rowMask(c.lengths, maxLen, side)]) {
            const back = unpadSequence(padded, mk, { padDim: c.padDim });
            expect(back.length).toBe(c.list.length);
            back.forEach((t, i) => {
              expect(t.shape).toEqual(c.list[i]!.shape);
              expect(Array.from(t.dataSync())).toEqual(Array.from(c.list[i]!.dataSync()));
            });
          }
        },
      ),
      { numRuns: 80 },
    );
  });

  it("tensordict's pad_sequence example shape: a (3,8) and (5,8) pad to (2,5,8)", () => {
    const padded = padSequence([zeros([3], [8]), zeros([5], [8])]);
    expect(padded.toString()).toBe("(2,5; 8)");
    const { mask } = padSequence([zeros([3], [8]), zeros([5], [8])], { returnMask: true });
    expect(mask.toArraySync()).toEqual([
      [true, true, true, false, false],
      [true, true, true, true, true],
    ]);
  });

  it("the padding value is cast to the output dtype; bool padding", () => {
    const p = padSequence(
      [tensor([1, 2], { batchDim: 1, dtype: "uint32" }), tensor([3], { batchDim: 1, dtype: "uint32" })],
      { paddingValue: -1 },
    );
    expect(Array.from(p.dataSync())).toEqual([1, 2, 3, 4294967295]);
    const b = padSequence([tensor([true], { batchDim: 1 }), tensor([false, false], { batchDim: 1 })], {
      paddingValue: true,
      paddingSide: "left",
    });
    expect(b.toArraySync()).toEqual([
      [true, true],
      [false, false],
    ]);
  });

  it("unpadSequence: left padding read from the mask; errors when a row is not one run", () => {
    const padded = tensor(
      [
        [0, 1, 2],
        [3, 4, 5],
      ],
      { batchDim: 2 },
    );
    const back = unpadSequence(
      padded,
      tensor(
        [
          [false, true, true],
          [true, false, false],
        ],
        { batchDim: 2 },
      ),
    );
    expect(back.map((t) => t.toArraySync())).toEqual([[1, 2], [3]]);
    expect(back.map((t) => t.toString())).toEqual(["(2;)", "(1;)"]);
    expect(
      unpadSequence(
        padded,
        tensor([
          [false, false, false],
          [true, true, true],
        ]),
      )[0]!.toString(),
    ).toBe("(0;)");
    expect(() =>
      unpadSequence(
        padded,
        tensor([
          [true, false, true],
          [true, true, true],
        ]),
      ),
    ).toThrow(ShapeError);
    expect(() =>
      unpadSequence(
        padded,
        tensor([
          [true, false, true],
          [true, true, true],
        ]),
      ),
    ).toThrow("unpadSequence: the mask of row 0 is not one contiguous run along padDim 0");
    expect(() =>
      unpadSequence(
        padded,
        tensor([
          [1, 1, 1],
          [1, 1, 1],
        ]),
      ),
    ).toThrow(DTypeError);
    expect(() =>
      unpadSequence(
        padded,
        tensor([
          [true, true],
          [true, true],
        ]),
      ),
    ).toThrow(ShapeError);
    // A full mask that differs across another batch dim.
    const p2 = zeros([1, 2, 2], []);
    expect(() =>
      unpadSequence(
        p2,
        tensor(
          [
            [
              [true, true],
              [true, false],
            ],
          ],
          { batchDim: 3 },
        ),
      ),
    ).toThrow("unpadSequence: the mask of row 0 differs");
  });

  it("errors: tensordict's empty-list and scalar texts, mismatched shapes, padDim", () => {
    expect(() => padSequence([])).toThrow(new ShapeError("padSequence: list cannot be empty"));
    expect(() => padSequence([zeros([2], [3]), zeros([], [3])])).toThrow(ShapeError);
    expect(() => padSequence([zeros([2], [3]), zeros([], [3])])).toThrow("padSequence: Cannot pad scalars");
    expect(() => padSequence([zeros([2, 3], []), zeros([2, 4], [])])).toThrow(
      "padSequence: list[1] (2,4;) and list[0] (2,3;) must have equal shapes except in batch dim 0",
    );
    expect(padSequence([zeros([2, 3], []), zeros([2, 4], [])], { padDim: 1 }).toString()).toBe("(2,2,4;)");
    expect(padSequence([zeros([2, 3], []), zeros([2, 4], [])], { padDim: -1 }).toString()).toBe("(2,2,4;)");
    expect(() => padSequence([zeros([2], [3])], { padDim: 1 })).toThrow(ShapeError);
  });

  it("stack and cat trace inside jit (a batch_concat op); padSequence stays eager", () => {
    const f = jit((x: Tensor, y: Tensor) => [stack([x, y], 1), cat([x, y], 0)]);
    for (const rows of [2, 5]) {
      const a = fromTypedArray(
        Float32Array.from({ length: rows * 2 }, (_, i) => i),
        [rows, 2],
        { batchDim: 1 },
      );
      const b = fromTypedArray(
        Float32Array.from({ length: rows * 2 }, (_, i) => 100 + i),
        [rows, 2],
        { batchDim: 1 },
      );
      const [s, c] = f(a, b);
      expect(s.toArraySync()).toEqual(stack([a, b], 1).toArraySync());
      expect(c.toArraySync()).toEqual(cat([a, b], 0).toArraySync());
    }
    expect(f.stats.traces).toBe(1);
    expect(f.dump({ after: "fuse" })).toMatch(/copy \(batch_concat\)/);
    const g = jit((x: Tensor) => padSequence([x]));
    expect(() => g(zeros([2], [3]))).toThrow(TraceError);
  });
});

function rowMask(lengths: readonly number[], maxLen: number, side: "left" | "right"): Tensor {
  const m = new Uint8Array(lengths.length * maxLen);
  lengths.forEach((len, i) => {
    const s = side === "left" ? maxLen - len : 0;
    m.fill(1, i * maxLen + s, i * maxLen + s + len);
  });
  return fromTypedArray(m, [lengths.length, maxLen], { batchDim: 2, dtype: "bool" });
}
