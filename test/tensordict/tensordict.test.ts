/**
 * TensorDict internals that the semantics suite (semantics.test.ts) does not
 * reach: lazy stacks of lazy stacks, `cat` of lazy stacks along and across the
 * stack dim, padding past the shared batch dims (masks keep the padded dim),
 * entries with extra batch dims through pad/unpad, jagged entries, and the
 * `(batch; base)` shapes in the error texts. Expected values are written out by hand.
 */
import { describe, expect, it } from "vitest";
import {
  cat,
  jagged,
  JaggedTensor,
  KeyError,
  lazyStack,
  LazyStackedTensorDict,
  padSequence,
  ShapeError,
  stack,
  tensor,
  TensorDict,
  unpadSequence,
  UnsupportedOpError,
} from "../../src/index.js";
import { pastBatchDimPair } from "../helpers/tensordict-pair.js";

/** `(n;)` float32 holding start, start+1, …. */
const seq = (n: number, start = 0) =>
  tensor(
    Array.from({ length: n }, (_, i) => start + i),
    { batchDim: 1 },
  );

describe("TensorDict structure", () => {
  it("entries keep their own further batch dims and base through batch ops", () => {
    // x: (2,3; 2) = [[[0,1],[2,3],[4,5]], [[6,7],[8,9],[10,11]]]; shared batchSize [2].
    const x = tensor(
      Array.from({ length: 12 }, (_, i) => i),
      { batchDim: 1 },
    )
      .batchReshape([2, 3, 2])
      .rebatch(2);
    expect(x.toString()).toBe("(2,3; 2)");
    const td = new TensorDict({ x, n: { y: seq(2, 5) } }, [2]);
    const row1 = td.batchIndex(0, -1);
    expect(row1.batchSize).toEqual([]);
    expect(row1.getTensor("x").toArraySync()).toEqual([
      [6, 7],
      [8, 9],
      [10, 11],
    ]);
    expect(row1.getTensor(["n", "y"]).toArraySync()).toBe(6);
    const r = td.batchReshape([1, 2]);
    expect(r.getTensor("x").toString()).toBe("(1,2,3; 2)");
    expect(td.batchUnsqueeze(-1).getTensor("x").toString()).toBe("(2,1,3; 2)");
    expect(td.batchExpand([4, 2]).getTensor(["n", "y"]).toArraySync()).toEqual([
      [5, 6],
      [5, 6],
      [5, 6],
      [5, 6],
    ]);
    expect(td.unbind(0).map((t) => t.getTensor(["n", "y"]).toArraySync())).toEqual([5, 6]);
  });

  it("errors name the op, the key and the shapes in (batch; base) notation", () => {
    expect(() => new TensorDict({ a: { b: seq(3) } }, [2])).toThrowError(
      new ShapeError('TensorDict.set: batch dimension mismatch, got batchSize=[2] and "b" (3;)'),
    );
    const td = new TensorDict({ a: seq(2) }, [2]);
    expect(() => td.getTensor("z")).toThrowError(KeyError);
    expect(() => td.set(["a", "b"], seq(2))).toThrowError(/goes through "a", which is \(2;\), not a TensorDict/);
    expect(() => td.batchIndex(0, 2)).toThrowError(/index 2 is out of range for dim 0 of batchSize \[2\]/);
    expect(() => td.batchReshape([3])).toThrowError(/cannot reshape batchSize \[2\] to \[3\]/);
  });

  it("jagged entries are held and shown, but batch ops and apply refuse them", () => {
    const j = jagged([seq(2), seq(3)]);
    const td = new TensorDict({ j, x: seq(2) }, [2]);
    expect(td.get("j")).toBe(j);
    expect(td.toString()).toBe("TensorDict(batchSize=[2]) { j: (2,~N;) float32 jagged, x: (2;) float32 }");
    expect(() => td.batchIndex(0, 0)).toThrowError(/entry "j" is jagged/);
    expect(() => td.apply((t) => t)).toThrowError(/"j" is jagged/);
    // A jagged entry's ragged dim cannot be a shared batch dim.
    expect(() => new TensorDict({ j }, [2, 2])).toThrowError(ShapeError);
  });
});

describe("lazy stacks inside stack and cat", () => {
  const a = new TensorDict({ x: seq(3) }, [3]);
  const b = new TensorDict({ x: seq(4, 10) }, [4]);

  it("stack of lazy stacks stacks member by member and stays lazy", () => {
    const l1 = lazyStack([a, b]);
    const l2 = lazyStack([a, b]);
    const s = stack([l1, l2]); // new dim 0 comes before the members' stack dim
    expect(s).toBeInstanceOf(LazyStackedTensorDict);
    expect(s.stackDim).toBe(1);
    expect(s.batchSize).toEqual([2, 2, -1]);
    expect(s.member(1).getTensor("x").toArraySync()).toEqual([
      [10, 11, 12, 13],
      [10, 11, 12, 13],
    ]);
  });

  it("cat of lazy stacks: along the stack dim the member lists join; along another dim members concatenate", () => {
    const joined = cat([lazyStack([a]), lazyStack([b])]);
    expect(joined.tensordicts).toEqual([a, b]);
    expect(joined.batchSize).toEqual([2, -1]);
    const inner = cat([lazyStack([a, b]), lazyStack([a, b])], 1);
    expect(inner.batchSize).toEqual([2, -1]);
    expect(inner.member(0).getTensor("x").toArraySync()).toEqual([0, 1, 2, 0, 1, 2]);
    expect(() => cat([lazyStack([a, b]), lazyStack([a])], 1)).toThrowError(/same stackDim and member count/);
  });

  it("densify refuses what a jagged tensor cannot hold", () => {
    const wide = new TensorDict({ x: tensor([[1, 2]], { batchDim: 2 }) }, [1]); // (1,2;)
    const tall = new TensorDict({ x: tensor([[1], [2]], { batchDim: 2 }) }, [2]); // (2,1;)
    expect(() => lazyStack([wide, tall]).densify()).toThrowError(/differs beyond its dim 0/);
    expect(() => lazyStack([a, b], 1).densify()).toThrowError(UnsupportedOpError);
    const d = lazyStack([a, b]).densify();
    expect(d.get("x")).toBeInstanceOf(JaggedTensor);
    expect((d.get("x") as JaggedTensor).toList().map((t) => t.toArraySync())).toEqual([
      [0, 1, 2],
      [10, 11, 12, 13],
    ]);
  });
});

describe("padSequence and unpadSequence on TensorDicts", () => {
  it("padding past the shared batch dims keeps the padded dim in the mask", () => {
    // batchSize [2]; x is (2, L; ) with L = 1 and 3: padDim 1 lies past the shared dims.
    const [t1, t2] = pastBatchDimPair("x");
    const p = padSequence([t1, t2], { padDim: 1, paddingValue: -1, returnMask: "valid" });
    expect(p.batchSize).toEqual([2, 2]);
    expect(p.getTensor("x").toArraySync()).toEqual([
      [
        [1, -1, -1],
        [2, -1, -1],
      ],
      [
        [3, 4, 5],
        [6, 7, 8],
      ],
    ]);
    expect(p.getTensor(["valid", "x"]).toArraySync()).toEqual([
      [
        [true, false, false],
        [true, false, false],
      ],
      [
        [true, true, true],
        [true, true, true],
      ],
    ]);
    const back = unpadSequence(p, undefined, { padDim: 1, maskKey: "valid" });
    expect(back.member(0).getTensor("x").toArraySync()).toEqual([[1], [2]]);
    expect(back.member(1).keys()).toEqual(["x"]);
  });

  it("an entry with extra batch dims is unpadded with the shared-dims mask", () => {
    // y: (L, 2;) per member with L = 2 and 1, left padding.
    const m1 = new TensorDict(
      {
        y: tensor(
          [
            [1, 2],
            [3, 4],
          ],
          { batchDim: 2 },
        ),
      },
      [2],
    );
    const m2 = new TensorDict({ y: tensor([[5, 6]], { batchDim: 2 }) }, [1]);
    const p = padSequence([m1, m2], { paddingSide: "left", returnMask: true });
    expect(p.getTensor(["masks", "y"]).toArraySync()).toEqual([
      [true, true],
      [false, true],
    ]);
    expect(p.getTensor("y").toArraySync()).toEqual([
      [
        [1, 2],
        [3, 4],
      ],
      [
        [0, 0],
        [5, 6],
      ],
    ]);
    const back = unpadSequence(p);
    expect(back.batchSize).toEqual([2, -1]);
    expect(back.member(1).getTensor("y").toArraySync()).toEqual([[5, 6]]);
    expect(back.member(0).get("masks")).toBeUndefined();
  });

  it("a bool (B, maxL) mask given explicitly applies to every entry; no mask and no masks entry is a KeyError", () => {
    const p = padSequence([new TensorDict({ z: seq(1) }, [1]), new TensorDict({ z: seq(2) }, [2])]);
    const mask = tensor(
      [
        [true, false],
        [true, true],
      ],
      { batchDim: 2 },
    );
    expect(unpadSequence(p, mask).member(0).getTensor("z").toArraySync()).toEqual([0]);
    expect(() => unpadSequence(p)).toThrowError(KeyError);
  });
});

describe("TensorDict.pad (tensordict's pad)", () => {
  it("pads a (3,4) batch with [0, 1, 0, 2] to (4,6), as tensordict's own test; crops with negative amounts", () => {
    // a[i][j] = 4i + j + 1, and a nested b (3,4,2;) whose own last batch dim is left alone.
    const a = tensor(
      Array.from({ length: 12 }, (_, i) => i + 1),
      { batchDim: 1 },
    ).batchReshape([3, 4]);
    const b = tensor(
      Array.from({ length: 24 }, (_, i) => i),
      { batchDim: 1, dtype: "int32" },
    ).batchReshape([3, 4, 2]);
    const td = new TensorDict({ a, n: new TensorDict({ b }, [3, 4, 2]) }, [3, 4]);
    const p = td.pad([0, 1, 0, 2], -1);
    expect(p.batchSize).toEqual([4, 6]);
    expect(p.getDict("n").batchSize).toEqual([4, 6, 2]);
    expect(p.getTensor("a").toArraySync()).toEqual([
      [1, 2, 3, 4, -1, -1],
      [5, 6, 7, 8, -1, -1],
      [9, 10, 11, 12, -1, -1],
      [-1, -1, -1, -1, -1, -1],
    ]);
    expect(p.getTensor(["n", "b"]).dtype).toBe("int32");
    expect((p.getTensor(["n", "b"]).toArraySync() as number[][][])[0]![5]).toEqual([-1, -1]);
    // Crop the first row and the last two columns, pad one column on the left.
    expect(td.pad([-1, 0, 1, -2], 0).getTensor("a").toArraySync()).toEqual([
      [0, 5, 6],
      [0, 9, 10],
    ]);
  });

  it("tensordict's errors", () => {
    const td = new TensorDict({ a: seq(3) }, [3]);
    expect(() => td.pad([1])).toThrowError(
      "TensorDict.pad: pad_size must have an even number of dimensions, got 1 entries",
    );
    expect(() => td.pad([1, 1, 1, 1])).toThrowError(
      /The length of pad_size must be <= 2 \* the number of batch dimensions, got 4 for batchSize \[3\]/,
    );
    expect(() => td.pad([-2, -2])).toThrowError(/crops batchSize \[3\] below zero/);
  });
});

describe("select, exclude, update, flattenKeys, split", () => {
  // n has a batch dim of its own: [4, 2] under the shared [4].
  const make = () =>
    new TensorDict(
      { a: seq(4), n: new TensorDict({ b: seq(8).batchReshape([4, 2]) }, [4, 2]), m: { c: seq(4, 100) } },
      [4],
    );

  it("select and exclude keep nested dicts and their batch sizes; select of a missing key is a KeyError", () => {
    const td = make();
    const s = td.select(["n", "b"]);
    expect(s.keys({ includeNested: true })).toEqual(["n", ["n", "b"]]);
    expect(s.getDict("n").batchSize).toEqual([4, 2]);
    expect(s.getTensor(["n", "b"]).toString()).toBe("(4,2;)");
    expect(td.exclude("a", ["m", "c"], "zzz").keys({ includeNested: true })).toEqual(["n", ["n", "b"], "m"]);
    expect(td.keys({ includeNested: true })).toEqual(["a", "n", ["n", "b"], "m", ["m", "c"]]);
    expect(() => td.select("zzz")).toThrowError(KeyError);
  });

  it("update merges nested dicts key by key; flattenKeys and unflattenKeys invert each other", () => {
    const td = make();
    td.update({ m: { d: seq(4, 7) }, e: seq(4, 9) });
    expect(td.keys({ includeNested: true, leavesOnly: true })).toEqual(["a", ["n", "b"], ["m", "c"], ["m", "d"], "e"]);
    expect(td.getTensor(["m", "d"]).toArraySync()).toEqual([7, 8, 9, 10]);
    expect(td.getDict("n").batchSize).toEqual([4, 2]);
    const flat = td.flattenKeys();
    expect(flat.keys()).toEqual(["a", "n.b", "m.c", "m.d", "e"]);
    expect(flat.unflattenKeys().keys({ includeNested: true, leavesOnly: true })).toEqual([
      "a",
      ["n", "b"],
      ["m", "c"],
      ["m", "d"],
      "e",
    ]);
    expect(() => new TensorDict({ "n.b": seq(4), n: { b: seq(4) } }, [4]).flattenKeys()).toThrowError(
      /two entries flatten to "n.b"/,
    );
  });

  it("split by a size (last part shorter) or by sizes that add up", () => {
    const td = make();
    expect(td.split(3).map((t) => t.getTensor("a").toArraySync())).toEqual([[0, 1, 2], [3]]);
    expect(td.split([1, 3]).map((t) => t.getTensor(["m", "c"]).toArraySync())).toEqual([[100], [101, 102, 103]]);
    expect(td.split(2)[1]!.getDict("n").batchSize).toEqual([2, 2]);
    expect(() => td.split([1, 2])).toThrowError(/do not add up/);
  });
});

describe("bad input is a typed error", () => {
  it("mixed lists, non-object sources and non-entries", () => {
    const td = new TensorDict({ x: seq(2) }, [2]);
    expect(() => stack([seq(2), td] as unknown as TensorDict[])).toThrowError(
      "stack: the list mixes Tensor, TensorDict; give one kind (densify() lazy stacks first)",
    );
    expect(() => cat([td, seq(2)] as unknown as TensorDict[])).toThrowError(
      "cat: the list mixes TensorDict, Tensor; give one kind (densify() lazy stacks first)",
    );
    expect(() => padSequence([seq(2), td] as unknown as TensorDict[])).toThrowError(
      "padSequence: item 0 is not a TensorDict",
    );
    expect(() => new TensorDict(null as unknown as Record<string, never>)).toThrowError(
      "TensorDict: source must be a plain object of entries, got null",
    );
    expect(() => td.set("y", 5 as unknown as TensorDict)).toThrowError(ShapeError);
  });
});
