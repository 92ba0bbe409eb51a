/**
 * Independent semantics tests for batchwise's TensorDict module against PyTorch
 * tensordict's documented behaviour.
 *
 * What is checked: construction and the batch-size prefix rule, keys and nested
 * keys, batch-dim ops (index/slice/reshape/unbind/expand/unsqueeze/squeeze),
 * apply, dense stack and cat with tensordict's error texts, lazy stacks (ragged
 * `-1` batch sizes, key intersection, get with asList/asPaddedTensor/asJagged,
 * member identity), maybeDenseStack, densify, padSequence/unpadSequence on
 * TensorDicts (values, masks, nested keys, errors) and stacks of lazy stacks.
 *
 * Where the expected values come from: every expected array below is written out
 * literally from small inputs that can be checked by eye (indexing, reshaping,
 * stacking and padding worked out by hand), and the expected batch sizes, error
 * texts and types come from tensordict's documentation or its own tests
 * (test_lazy.py / test_generic.py). No expected value is computed with the
 * function under test.
 */
import { describe, expect, it } from "vitest";
import {
  cat,
  JaggedTensor,
  KeyError,
  lazyStack,
  LazyStackedTensorDict,
  maybeDenseStack,
  padSequence,
  scalar,
  ShapeError,
  stack,
  tensor,
  Tensor,
  TensorDict,
  unpadSequence,
  UnsupportedOpError,
  zeros,
} from "../../src/index.js";
import { pastBatchDimPair } from "../helpers/tensordict-pair.js";

/** Nested-array values of a tensor (bool tensors give booleans). */
const vals = (t: unknown): unknown => {
  expect(t).toBeInstanceOf(Tensor);
  return (t as Tensor).toArraySync();
};

/** The tensor at `key`, asserting it is one. */
const leaf = (td: TensorDict, key: string | readonly string[]): Tensor => td.getTensor(key);

const T = true;
const F = false;

// ---------------------------------------------------------------------------------------------

describe("construction, keys and nested keys", () => {
  it("accepts entries whose batch shape starts with batchSize (extra batch dims and any base)", () => {
    const td = new TensorDict({ obs: zeros([4, 10], [3]), reward: zeros([4], []), img: zeros([4], [2, 2]) }, [4]);
    expect(td.batchSize).toEqual([4]);
    expect(td.batchDim).toBe(1);
    expect(leaf(td, "obs").batchShape).toEqual([4, 10]);
    expect(leaf(td, "obs").baseShape).toEqual([3]);
    expect(leaf(td, "img").baseShape).toEqual([2, 2]);
    // batchSize defaults to [] and then takes anything.
    expect(new TensorDict({ a: zeros([], [5]) }).batchSize).toEqual([]);
  });

  it("rejects a mismatched entry with tensordict's 'batch dimension mismatch' naming batchSize and the entry shape", () => {
    const bad = () => new TensorDict({ x: zeros([3], []) }, [2]);
    expect(bad).toThrow(ShapeError);
    expect(bad).toThrow(/batch dimension mismatch/);
    expect(bad).toThrow(/\[2\]/); // the batch size
    expect(bad).toThrow(/\(3;\)/); // the entry, in (batch; base) notation
    // Base dims are not batch dims: a (;2) entry does not fit batchSize [2].
    expect(() => new TensorDict({ x: zeros([], [2]) }, [2])).toThrow(/batch dimension mismatch/);
    // Fewer batch dims than batchSize.
    expect(() => new TensorDict({ x: zeros([2], [3]) }, [2, 3])).toThrow(/batch dimension mismatch/);
    // set checks the same way.
    const td = new TensorDict({}, [2]);
    expect(() => td.set("y", zeros([5, 2], []))).toThrow(/batch dimension mismatch/);
    expect(td.has("y")).toBe(false);
  });

  it("turns nested plain objects into nested TensorDicts with the parent batch size", () => {
    const td = new TensorDict({ a: zeros([2], []), b: { c: zeros([2, 7], []), d: { e: zeros([2], [3]) } } }, [2]);
    const b = td.get("b");
    expect(b).toBeInstanceOf(TensorDict);
    expect((b as TensorDict).batchSize).toEqual([2]);
    expect(td.getDict(["b", "d"]).batchSize).toEqual([2]);
    expect(leaf(td, ["b", "d", "e"]).baseShape).toEqual([3]);
    // A nested entry must also fit the parent batch size.
    expect(() => new TensorDict({ b: { c: zeros([3], []) } }, [2])).toThrow(/batch dimension mismatch/);
  });

  it("get of a missing key is undefined; getTensor/getDict of a missing key is a KeyError", () => {
    const td = new TensorDict({ a: zeros([2], []), b: { c: zeros([2], []) } }, [2]);
    expect(td.get("nope")).toBeUndefined();
    expect(td.get(["b", "nope"])).toBeUndefined();
    expect(td.get(["a", "c"])).toBeUndefined(); // "a" is a tensor, it has no sub-keys
    expect(td.has("a")).toBe(true);
    expect(td.has(["b", "c"])).toBe(true);
    expect(td.has(["b", "x"])).toBe(false);
    expect(() => td.getTensor("nope")).toThrow(KeyError);
    expect(() => td.getTensor("b")).toThrow(KeyError); // a dict, not a tensor
    expect(() => td.getDict("a")).toThrow(KeyError);
    expect(() => td.getDict("nope")).toThrow(KeyError);
  });

  it("set with a nested key creates the intermediate dicts; delete removes entries", () => {
    const td = new TensorDict({}, [3]);
    const t = tensor([1, 2, 3], { batchDim: 1 });
    expect(td.set(["p", "q", "r"], t)).toBe(td); // returns this
    expect(td.getDict("p").batchSize).toEqual([3]);
    expect(td.getDict(["p", "q"]).batchSize).toEqual([3]);
    expect(td.getTensor(["p", "q", "r"])).toBe(t);
    // Setting through a tensor is an error.
    td.set("leafy", t);
    expect(() => td.set(["leafy", "x"], t)).toThrow(KeyError);

    expect(td.delete(["p", "q", "r"])).toBe(true);
    expect(td.get(["p", "q", "r"])).toBeUndefined();
    expect(td.delete(["p", "q", "r"])).toBe(false);
    expect(td.delete("leafy")).toBe(true);
    expect(td.keys()).toEqual(["p"]);
  });

  it("keys() honours includeNested and leavesOnly", () => {
    const z = zeros([2], []);
    const td = new TensorDict({ a: z, b: { c: z, d: { e: z } } }, [2]);
    expect(td.keys()).toEqual(["a", "b"]);
    expect(td.keys({ includeNested: true })).toEqual(["a", "b", ["b", "c"], ["b", "d"], ["b", "d", "e"]]);
    expect(td.keys({ includeNested: true, leavesOnly: true })).toEqual(["a", ["b", "c"], ["b", "d", "e"]]);
    expect(td.keys({ leavesOnly: true })).toEqual(["a"]);
    expect(td.leaves().map(([p]) => p)).toEqual([["a"], ["b", "c"], ["b", "d", "e"]]);
  });

  it("clone gives an independent dict (the tensors are shared, they are immutable)", () => {
    const x = tensor([1, 2], { batchDim: 1 });
    const td = new TensorDict({ x, sub: { y: x } }, [2]);
    const c = td.clone();
    c.set("z", x);
    c.getDict("sub").set("w", x);
    expect(td.has("z")).toBe(false);
    expect(td.has(["sub", "w"])).toBe(false);
    expect(c.getTensor("x")).toBe(x);
  });
});

// ---------------------------------------------------------------------------------------------

/**
 * batch [2,3]:
 *   x      (2,3; 2)  x[i][j]   = [2k, 2k+1] with k = 3i+j
 *   e      (2,3,2;)  the same values with an extra batch dim
 *   sub.z  (2,3;)    z[i][j]   = 100 + 3i + j
 */
function grid(): TensorDict {
  const data = [
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
  ];
  return new TensorDict(
    {
      x: tensor(data, { batchDim: 2 }),
      e: tensor(data, { batchDim: 3 }),
      sub: {
        z: tensor(
          [
            [100, 101, 102],
            [103, 104, 105],
          ],
          { batchDim: 2 },
        ),
      },
    },
    [2, 3],
  );
}

describe("batch-dim ops act on every entry, nested ones too", () => {
  it("batchIndex drops a shared batch dim, keeping extra batch dims and the base", () => {
    const r = grid().batchIndex(0, 1);
    expect(r.batchSize).toEqual([3]);
    expect(leaf(r, "x").batchShape).toEqual([3]);
    expect(leaf(r, "x").baseShape).toEqual([2]);
    expect(vals(leaf(r, "x"))).toEqual([
      [6, 7],
      [8, 9],
      [10, 11],
    ]);
    expect(leaf(r, "e").batchShape).toEqual([3, 2]);
    expect(vals(leaf(r, "e"))).toEqual([
      [6, 7],
      [8, 9],
      [10, 11],
    ]);
    expect(r.getDict("sub").batchSize).toEqual([3]);
    expect(vals(leaf(r, ["sub", "z"]))).toEqual([103, 104, 105]);

    const last = grid().batchIndex(-1, -1); // dim 1, index 2
    expect(last.batchSize).toEqual([2]);
    expect(vals(leaf(last, "x"))).toEqual([
      [4, 5],
      [10, 11],
    ]);
    expect(vals(leaf(last, "e"))).toEqual([
      [4, 5],
      [10, 11],
    ]);
    expect(vals(leaf(last, ["sub", "z"]))).toEqual([102, 105]);
  });

  it("batchSlice slices a shared batch dim (with a step)", () => {
    const r = grid().batchSlice(1, 0, 3, 2); // columns 0 and 2
    expect(r.batchSize).toEqual([2, 2]);
    expect(leaf(r, "x").shape).toEqual([2, 2, 2]);
    expect(vals(leaf(r, "x"))).toEqual([
      [
        [0, 1],
        [4, 5],
      ],
      [
        [6, 7],
        [10, 11],
      ],
    ]);
    expect(leaf(r, "e").batchShape).toEqual([2, 2, 2]);
    expect(vals(leaf(r, ["sub", "z"]))).toEqual([
      [100, 102],
      [103, 105],
    ]);
    expect(grid().batchSlice(0, 1).batchSize).toEqual([1, 3]);
  });

  it("batchReshape reshapes the shared dims only", () => {
    const r = grid().batchReshape([6]);
    expect(r.batchSize).toEqual([6]);
    expect(leaf(r, "x").batchShape).toEqual([6]);
    expect(leaf(r, "x").baseShape).toEqual([2]);
    expect(vals(leaf(r, "x"))).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
      [6, 7],
      [8, 9],
      [10, 11],
    ]);
    expect(leaf(r, "e").batchShape).toEqual([6, 2]); // its own extra dim stays
    expect(vals(leaf(r, ["sub", "z"]))).toEqual([100, 101, 102, 103, 104, 105]);

    const r2 = grid().batchReshape([3, -1]);
    expect(r2.batchSize).toEqual([3, 2]);
    expect(leaf(r2, "e").batchShape).toEqual([3, 2, 2]);
    expect(vals(leaf(r2, "x"))).toEqual([
      [
        [0, 1],
        [2, 3],
      ],
      [
        [4, 5],
        [6, 7],
      ],
      [
        [8, 9],
        [10, 11],
      ],
    ]);
    expect(vals(leaf(r2, ["sub", "z"]))).toEqual([
      [100, 101],
      [102, 103],
      [104, 105],
    ]);
    expect(() => grid().batchReshape([4])).toThrow(ShapeError);
  });

  it("unbind splits along a shared dim", () => {
    const parts = grid().unbind(1);
    expect(parts).toHaveLength(3);
    parts.forEach((p, j) => {
      expect(p.batchSize).toEqual([2]);
      expect(vals(leaf(p, "x"))).toEqual([
        [2 * j, 2 * j + 1],
        [6 + 2 * j, 7 + 2 * j],
      ]);
      expect(leaf(p, "e").batchShape).toEqual([2, 2]);
      expect(vals(leaf(p, ["sub", "z"]))).toEqual([100 + j, 103 + j]);
    });
    expect(grid().unbind()).toHaveLength(2);
  });

  it("batchUnsqueeze / batchSqueeze add and remove a size-1 shared dim", () => {
    const u = grid().batchUnsqueeze(1);
    expect(u.batchSize).toEqual([2, 1, 3]);
    expect(leaf(u, "x").batchShape).toEqual([2, 1, 3]);
    expect(leaf(u, "e").batchShape).toEqual([2, 1, 3, 2]);
    expect(leaf(u, ["sub", "z"]).batchShape).toEqual([2, 1, 3]);
    expect(vals(leaf(u, ["sub", "z"]))).toEqual([[[100, 101, 102]], [[103, 104, 105]]]);

    // -1 counts on the TensorDict's batch (rank 2 + 1), not on the entry: a new last shared dim.
    const u2 = grid().batchUnsqueeze(-1);
    expect(u2.batchSize).toEqual([2, 3, 1]);
    expect(leaf(u2, "e").batchShape).toEqual([2, 3, 1, 2]);

    const s = u.batchSqueeze(1);
    expect(s.batchSize).toEqual([2, 3]);
    expect(vals(leaf(s, "x"))).toEqual(vals(leaf(grid(), "x")));
    expect(leaf(s, "e").batchShape).toEqual([2, 3, 2]);
    expect(() => grid().batchSqueeze(0)).toThrow(ShapeError); // size 2, not 1
  });

  it("batchExpand broadcasts size-1 shared dims and adds leading ones", () => {
    const td = new TensorDict(
      {
        x: tensor(
          [
            [
              [1, 2],
              [3, 4],
              [5, 6],
            ],
          ],
          { batchDim: 2 },
        ), // (1,3; 2)
        e: tensor(
          [
            [
              [7, 8],
              [9, 10],
              [11, 12],
            ],
          ],
          { batchDim: 3 },
        ), // (1,3,2;)
        sub: { z: tensor([[1, 2, 3]], { batchDim: 2 }) }, // (1,3;)
      },
      [1, 3],
    );
    const r = td.batchExpand([2, 2, 3]);
    expect(r.batchSize).toEqual([2, 2, 3]);
    expect(leaf(r, "x").batchShape).toEqual([2, 2, 3]);
    expect(leaf(r, "x").baseShape).toEqual([2]);
    expect(leaf(r, "e").batchShape).toEqual([2, 2, 3, 2]);
    const row = [
      [1, 2],
      [3, 4],
      [5, 6],
    ];
    expect(vals(leaf(r, "x"))).toEqual([
      [row, row],
      [row, row],
    ]);
    const erow = [
      [7, 8],
      [9, 10],
      [11, 12],
    ];
    expect(vals(leaf(r, "e"))).toEqual([
      [erow, erow],
      [erow, erow],
    ]);
    expect(vals(leaf(r, ["sub", "z"]))).toEqual([
      [
        [1, 2, 3],
        [1, 2, 3],
      ],
      [
        [1, 2, 3],
        [1, 2, 3],
      ],
    ]);
    expect(() => td.batchExpand([2, 4])).toThrow(ShapeError); // 3 cannot become 4
  });
});

/**
 * A nested TensorDict may have more batch dims than its parent (tensordict allows
 * it: only the leading len(batch_size) dims must match). batch [2,3]:
 *   x      (2,3;)
 *   sub    TensorDict batch [2,3,2] with z (2,3,2;), z[i][j] = [2k, 2k+1], k = 3i+j
 * tensordict's reshape/expand/view map `t -> t.reshape(*shape, *t.shape[batch_dims:])`
 * with call_on_nested=True, so the nested dict keeps its extra dim; stack/cat of
 * nested dicts stack/cat the nested dicts themselves.
 */
function deep(): TensorDict {
  return new TensorDict(
    {
      x: tensor(
        [
          [0, 1, 2],
          [3, 4, 5],
        ],
        { batchDim: 2 },
      ),
      sub: new TensorDict(
        {
          z: tensor(
            [
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
            ],
            { batchDim: 3 },
          ),
        },
        [2, 3, 2],
      ),
    },
    [2, 3],
  );
}

describe("nested TensorDicts with more batch dims than their parent", () => {
  it("batchIndex / batchSlice / batchUnsqueeze / batchSqueeze keep the nested dict's extra dims", () => {
    const i = deep().batchIndex(0, 1);
    expect(i.getDict("sub").batchSize).toEqual([3, 2]);
    expect(vals(i.getTensor(["sub", "z"]))).toEqual([
      [6, 7],
      [8, 9],
      [10, 11],
    ]);
    expect(deep().batchSlice(1, 1).getDict("sub").batchSize).toEqual([2, 2, 2]);
    const u = deep().batchUnsqueeze(0);
    expect(u.getDict("sub").batchSize).toEqual([1, 2, 3, 2]);
    expect(u.batchSqueeze(0).getDict("sub").batchSize).toEqual([2, 3, 2]);
  });

  it("batchReshape reshapes the shared dims of the nested dict and keeps its extra dim", () => {
    const r = deep().batchReshape([6]);
    expect(r.batchSize).toEqual([6]);
    expect(r.getDict("sub").batchSize).toEqual([6, 2]);
    expect(vals(r.getTensor(["sub", "z"]))).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
      [6, 7],
      [8, 9],
      [10, 11],
    ]);
  });

  it("batchExpand expands the shared dims of the nested dict and keeps its extra dim", () => {
    const td = new TensorDict(
      {
        x: tensor([[1, 2, 3]], { batchDim: 2 }),
        sub: new TensorDict(
          {
            z: tensor(
              [
                [
                  [1, 2],
                  [3, 4],
                  [5, 6],
                ],
              ],
              { batchDim: 3 },
            ),
          },
          [1, 3, 2],
        ),
      },
      [1, 3],
    );
    const r = td.batchExpand([2, 3]);
    expect(r.getDict("sub").batchSize).toEqual([2, 3, 2]);
    const row = [
      [1, 2],
      [3, 4],
      [5, 6],
    ];
    expect(vals(r.getTensor(["sub", "z"]))).toEqual([row, row]);
  });

  it("dense stack and cat keep the nested dict's batch size (stacked / concatenated)", () => {
    const s = stack([deep(), deep()], 0);
    expect(s.getDict("sub").batchSize).toEqual([2, 2, 3, 2]);
    const c = cat([deep(), deep()], 0);
    expect(c.getDict("sub").batchSize).toEqual([4, 3, 2]);
  });

  it("apply keeps the nested dict's batch size", () => {
    const r = deep().apply((t) => t.add(1));
    expect(r.getDict("sub").batchSize).toEqual([2, 3, 2]);
    expect(vals(r.getTensor(["sub", "z"]))).toEqual([
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
    ]);
  });
});

// ---------------------------------------------------------------------------------------------

describe("apply", () => {
  it("maps every tensor leaf (nested too), keeps the structure, and passes the key path", () => {
    const seen: string[] = [];
    const r = grid().apply((t, key) => {
      seen.push(key.join("."));
      return t.mul(10);
    });
    expect(seen).toEqual(["x", "e", "sub.z"]);
    expect(r.batchSize).toEqual([2, 3]);
    expect(r.get("sub")).toBeInstanceOf(TensorDict);
    expect(vals(leaf(r, "x"))).toEqual([
      [
        [0, 10],
        [20, 30],
        [40, 50],
      ],
      [
        [60, 70],
        [80, 90],
        [100, 110],
      ],
    ]);
    expect(leaf(r, "e").batchShape).toEqual([2, 3, 2]);
    expect(vals(leaf(r, ["sub", "z"]))).toEqual([
      [1000, 1010, 1020],
      [1030, 1040, 1050],
    ]);
  });

  it("results that break the batch size are rejected", () => {
    expect(() => grid().apply((t) => t.batchIndex(0, 0))).toThrow(/batch dimension mismatch/);
  });
});

// ---------------------------------------------------------------------------------------------

/** batch [3]: x (3; 2), sub.y (3,2;); `k` shifts the values. */
function pair(k: number): TensorDict {
  return new TensorDict(
    {
      x: tensor(
        [
          [1 + k, 2 + k],
          [3 + k, 4 + k],
          [5 + k, 6 + k],
        ],
        { batchDim: 1 },
      ),
      sub: {
        y: tensor(
          [
            [1 + k, 2 + k],
            [3 + k, 4 + k],
            [5 + k, 6 + k],
          ],
          { batchDim: 2 },
        ),
      },
    },
    [3],
  );
}

describe("dense stack of TensorDicts", () => {
  it("inserts the count at dim 0 and stacks every entry", () => {
    const r = stack([pair(0), pair(10)], 0);
    expect(r).toBeInstanceOf(TensorDict);
    expect(r.batchSize).toEqual([2, 3]);
    expect(leaf(r, "x").batchShape).toEqual([2, 3]);
    expect(leaf(r, "x").baseShape).toEqual([2]);
    expect(vals(leaf(r, "x"))).toEqual([
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
      [
        [11, 12],
        [13, 14],
        [15, 16],
      ],
    ]);
    expect(leaf(r, ["sub", "y"]).batchShape).toEqual([2, 3, 2]);
  });

  it("negative dim counts on len(batch_size)+1 (here -1 is dim 1), not on the entries", () => {
    const r = stack([pair(0), pair(10)], -1);
    expect(r.batchSize).toEqual([3, 2]);
    expect(leaf(r, "x").batchShape).toEqual([3, 2]);
    expect(vals(leaf(r, "x"))).toEqual([
      [
        [1, 2],
        [11, 12],
      ],
      [
        [3, 4],
        [13, 14],
      ],
      [
        [5, 6],
        [15, 16],
      ],
    ]);
    // The nested entry with an extra batch dim gets the new dim at 1 too.
    expect(leaf(r, ["sub", "y"]).batchShape).toEqual([3, 2, 2]);
    expect(vals(leaf(r, ["sub", "y"]))).toEqual([
      [
        [1, 2],
        [11, 12],
      ],
      [
        [3, 4],
        [13, 14],
      ],
      [
        [5, 6],
        [15, 16],
      ],
    ]);
    expect(stack([pair(0), pair(10)], 1).batchSize).toEqual([3, 2]);
  });

  it("different batch sizes: 'stacking tensordicts requires them to have congruent batch sizes'", () => {
    const a = new TensorDict({ x: zeros([3], []) }, [3]);
    const b = new TensorDict({ x: zeros([4], []) }, [4]);
    expect(() => stack([a, b])).toThrow(/stacking tensordicts requires them to have congruent batch sizes/);
  });

  it("different key sets: a KeyError 'The sets of keys in the tensordicts to stack are exclusive'", () => {
    const a = new TensorDict({ x: zeros([3], []) }, [3]);
    const b = new TensorDict({ w: zeros([3], []) }, [3]);
    expect(() => stack([a, b])).toThrow(KeyError);
    expect(() => stack([a, b])).toThrow(/The sets of keys in the tensordicts to stack are exclusive/);
    // A nested key difference counts too.
    const c = new TensorDict({ x: zeros([3], []), s: { p: zeros([3], []) } }, [3]);
    const d = new TensorDict({ x: zeros([3], []), s: { q: zeros([3], []) } }, [3]);
    expect(() => stack([c, d])).toThrow(KeyError);
  });

  it("different entry shapes: 'The shapes of the tensors to stack is incompatible ... for key'", () => {
    const a = new TensorDict({ x: zeros([3], [2]) }, [3]);
    const b = new TensorDict({ x: zeros([3], [3]) }, [3]);
    expect(() => stack([a, b])).toThrow(/The shapes of the tensors to stack is incompatible/);
    expect(() => stack([a, b])).toThrow(/for key "x"/);
    // Extra batch dims count as shape.
    const c = new TensorDict({ s: { y: zeros([3, 2], []) } }, [3]);
    const d = new TensorDict({ s: { y: zeros([3, 4], []) } }, [3]);
    expect(() => stack([c, d])).toThrow(/The shapes of the tensors to stack is incompatible/);
  });
});

// ---------------------------------------------------------------------------------------------

describe("cat of TensorDicts", () => {
  it("concatenates along an existing batch dim, entries keep extra dims", () => {
    const a = new TensorDict(
      {
        x: tensor(
          [
            [1, 2],
            [3, 4],
          ],
          { batchDim: 1 },
        ),
        e: zeros([2, 4], []),
      },
      [2],
    );
    const b = new TensorDict({ x: tensor([[5, 6]], { batchDim: 1 }), e: zeros([1, 4], []) }, [1]);
    const r = cat([a, b], 0);
    expect(r.batchSize).toEqual([3]);
    expect(vals(leaf(r, "x"))).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    expect(leaf(r, "e").batchShape).toEqual([3, 4]);
    expect(cat([a, b], -1).batchSize).toEqual([3]);

    const c = new TensorDict({ x: tensor([[1], [2]], { batchDim: 2 }) }, [2, 1]);
    const d = new TensorDict(
      {
        x: tensor(
          [
            [3, 4],
            [5, 6],
          ],
          { batchDim: 2 },
        ),
      },
      [2, 2],
    );
    const r2 = cat([c, d], 1);
    expect(r2.batchSize).toEqual([2, 3]);
    expect(vals(leaf(r2, "x"))).toEqual([
      [1, 3, 4],
      [2, 5, 6],
    ]);
  });

  it("works on batch dims only: 'dim must be in the range 0 <= dim < len(batch_size)'", () => {
    // The entry has a dim 1 of its own, but the TensorDict has one batch dim.
    const a = new TensorDict({ x: zeros([2, 3], []) }, [2]);
    expect(() => cat([a, a], 1)).toThrow(
      /dim must be in the range 0 <= dim < len\(batch_size\), got dim=1 and batch_size=\[2\]/,
    );
  });

  it("key mismatch is a KeyError '... which are incompatible'", () => {
    const a = new TensorDict({ x: zeros([2], []) }, [2]);
    const b = new TensorDict({ y: zeros([2], []) }, [2]);
    expect(() => cat([a, b])).toThrow(KeyError);
    expect(() => cat([a, b])).toThrow(/which are incompatible/);
  });
});

// ---------------------------------------------------------------------------------------------

/** batch [3]: x (3; 2) rows [1,1],[2,2],[3,3]. */
const td3 = (extra: Record<string, Tensor> = {}) =>
  new TensorDict(
    {
      x: tensor(
        [
          [1, 1],
          [2, 2],
          [3, 3],
        ],
        { batchDim: 1 },
      ),
      ...extra,
    },
    [3],
  );
/** batch [4]: x (4; 2) rows [4,4]..[7,7]. */
const td4 = (extra: Record<string, Tensor> = {}) =>
  new TensorDict(
    {
      x: tensor(
        [
          [4, 4],
          [5, 5],
          [6, 6],
          [7, 7],
        ],
        { batchDim: 1 },
      ),
      ...extra,
    },
    [4],
  );

describe("lazyStack", () => {
  it("ragged batch sizes read -1: [3] and [4] give [2, -1] (and [-1, 2] at dim 1)", () => {
    const ls = lazyStack([td3(), td4()]);
    expect(ls).toBeInstanceOf(LazyStackedTensorDict);
    expect(ls.batchSize).toEqual([2, -1]);
    expect(ls.stackDim).toBe(0);
    expect(lazyStack([td3(), td4()], 1).batchSize).toEqual([-1, 2]);
    expect(lazyStack([td3(), td3()]).batchSize).toEqual([2, 3]);
    expect(lazyStack([td3(), td3()], -1).batchSize).toEqual([3, 2]);
  });

  it("strictShape forbids ragged sizes; members must have the same rank", () => {
    expect(() => lazyStack([td3(), td4()], 0, { strictShape: true })).toThrow(
      /batch sizes in tensordicts differs, LazyStackedTensorDict cannot be created/,
    );
    const rank2 = new TensorDict({ x: zeros([3, 1], []) }, [3, 1]);
    expect(() => lazyStack([td3(), rank2])).toThrow(
      /Lazy stacking of tensordicts requires them to have congruent batch dimensions/,
    );
  });

  it("keys() is the intersection of the members' keys", () => {
    const ls = lazyStack([td3({ a: zeros([3], []) }), td4({ b: zeros([4], []) })]);
    expect(ls.keys()).toEqual(["x"]);
    expect(
      ls
        .exclusiveKeys()
        .map((k) => (typeof k === "string" ? k : k.join(".")))
        .sort(),
    ).toEqual(["a", "b"]);
    // Exclusive keys stay reachable through the members.
    expect(ls.member(0).has("a")).toBe(true);
    expect(ls.member(1).has("b")).toBe(true);
  });

  it("get on heterogeneous entries without a flag: 'Failed to stack tensors within a tensordict'", () => {
    const ls = lazyStack([td3(), td4()]);
    expect(() => ls.get("x")).toThrow(/Failed to stack tensors within a tensordict/);
  });

  it("asList returns the member tensors themselves", () => {
    const a = td3();
    const b = td4();
    const list = lazyStack([a, b]).get("x", { asList: true }) as Tensor[];
    expect(list).toHaveLength(2);
    expect(list[0]).toBe(a.getTensor("x"));
    expect(list[1]).toBe(b.getTensor("x"));
  });

  it("asPaddedTensor pads dim 0 of the members' entries (value and side)", () => {
    const ls = lazyStack([td3(), td4()]);
    const right = ls.get("x", { asPaddedTensor: true }) as Tensor;
    expect(right.shape).toEqual([2, 4, 2]);
    expect(vals(right)).toEqual([
      [
        [1, 1],
        [2, 2],
        [3, 3],
        [0, 0],
      ],
      [
        [4, 4],
        [5, 5],
        [6, 6],
        [7, 7],
      ],
    ]);
    // tensordict's test: padding_side="left", padding_value=100 gives x[0, 0] == 100.
    const left = ls.get("x", { asPaddedTensor: true, paddingSide: "left", paddingValue: 100 }) as Tensor;
    expect(vals(left)).toEqual([
      [
        [100, 100],
        [1, 1],
        [2, 2],
        [3, 3],
      ],
      [
        [4, 4],
        [5, 5],
        [6, 6],
        [7, 7],
      ],
    ]);
  });

  it("asJagged gives a JaggedTensor whose rows are the members' entries", () => {
    const j = lazyStack([td3(), td4()]).get("x", { asJagged: true });
    expect(j).toBeInstanceOf(JaggedTensor);
    const jt = j as JaggedTensor;
    expect(jt.rows).toBe(2);
    expect(Array.from(jt.offsets.dataSync())).toEqual([0, 3, 7]);
    const rows = jt.toList().map((t) => t.toArraySync());
    expect(rows).toEqual([
      [
        [1, 1],
        [2, 2],
        [3, 3],
      ],
      [
        [4, 4],
        [5, 5],
        [6, 6],
        [7, 7],
      ],
    ]);
  });

  it("the get flags are exclusive", () => {
    const ls = lazyStack([td3(), td4()]);
    expect(() => ls.get("x", { asList: true, asJagged: true })).toThrow(/exclusive/);
    expect(() => ls.get("x", { asList: true, asPaddedTensor: true })).toThrow(/exclusive/);
    expect(() => ls.get("x", { asPaddedTensor: true, asJagged: true })).toThrow(/exclusive/);
  });

  it("equal shapes: get gives the dense stack at stackDim; with a flag it pads/nests anyway", () => {
    const a = td3();
    const b = new TensorDict(
      {
        x: tensor(
          [
            [7, 7],
            [8, 8],
            [9, 9],
          ],
          { batchDim: 1 },
        ),
      },
      [3],
    );
    const ls = lazyStack([a, b], 1); // batch [3, 2]
    expect(ls.batchSize).toEqual([3, 2]);
    const dense = ls.get("x") as Tensor;
    expect(dense.batchShape).toEqual([3, 2]);
    expect(vals(dense)).toEqual([
      [
        [1, 1],
        [7, 7],
      ],
      [
        [2, 2],
        [8, 8],
      ],
      [
        [3, 3],
        [9, 9],
      ],
    ]);
    // as_padded_tensor is pad_sequence(batch_first=True): always a new dim 0, even with equal shapes.
    const padded = ls.get("x", { asPaddedTensor: true }) as Tensor;
    expect(padded.batchShape).toEqual([2, 3]);
    expect(vals(padded)).toEqual([
      [
        [1, 1],
        [2, 2],
        [3, 3],
      ],
      [
        [7, 7],
        [8, 8],
        [9, 9],
      ],
    ]);
    const nested = ls.get("x", { asJagged: true });
    expect(nested).toBeInstanceOf(JaggedTensor);
    expect(Array.from((nested as JaggedTensor).offsets.dataSync())).toEqual([0, 3, 6]);
    const list = ls.get("x", { asList: true });
    expect(Array.isArray(list)).toBe(true);
  });

  it("member(i) and indexing the stack dim return the member itself", () => {
    const a = td3();
    const b = td4();
    const ls = lazyStack([a, b]);
    expect(ls.member(0)).toBe(a);
    expect(ls.member(1)).toBe(b);
    expect(ls.member(-1)).toBe(b);
    expect(ls.batchIndex(0, 1)).toBe(b);
    const ls1 = lazyStack([td3(), td3()], 1);
    expect(ls1.batchIndex(1, 0)).toBe(ls1.tensordicts[0]);
  });

  it("get of a nested dict gives a lazy stack of the nested dicts; nested keys reach leaves", () => {
    const a = new TensorDict({ s: { y: tensor([1, 2, 3], { batchDim: 1 }) } }, [3]);
    const b = new TensorDict({ s: { y: tensor([4, 5, 6, 7], { batchDim: 1 }) } }, [4]);
    const ls = lazyStack([a, b]);
    const s = ls.get("s");
    expect(s).toBeInstanceOf(LazyStackedTensorDict);
    expect((s as LazyStackedTensorDict).batchSize).toEqual([2, -1]);
    expect(vals(ls.get(["s", "y"], { asPaddedTensor: true, paddingValue: -1 }))).toEqual([
      [1, 2, 3, -1],
      [4, 5, 6, 7],
    ]);
    expect(ls.keys({ includeNested: true, leavesOnly: true })).toEqual([["s", "y"]]);
  });
});

// ---------------------------------------------------------------------------------------------

describe("maybeDenseStack", () => {
  it("stacks densely when it can", () => {
    const r = maybeDenseStack([pair(0), pair(10)]);
    expect(r).toBeInstanceOf(TensorDict);
    expect(r.batchSize).toEqual([2, 3]);
    expect(vals((r as TensorDict).getTensor("x"))).toEqual([
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
      [
        [11, 12],
        [13, 14],
        [15, 16],
      ],
    ]);
  });

  it("falls back to a lazy stack for exclusive keys, mismatched entry shapes or batch sizes", () => {
    // tensordict's docstring: {"a": 0} and {"b": 0} give a LazyStackedTensorDict of shape [2].
    const ex = maybeDenseStack([new TensorDict({ a: scalar(0) }), new TensorDict({ b: scalar(0) })]);
    expect(ex).toBeInstanceOf(LazyStackedTensorDict);
    expect(ex.batchSize).toEqual([2]);
    const shapes = maybeDenseStack([
      new TensorDict({ a: zeros([3], [2]) }, [3]),
      new TensorDict({ a: zeros([3], [5]) }, [3]),
    ]);
    expect(shapes).toBeInstanceOf(LazyStackedTensorDict);
    expect(shapes.batchSize).toEqual([2, 3]);
    const ragged = maybeDenseStack([td3(), td4()]);
    expect(ragged).toBeInstanceOf(LazyStackedTensorDict);
    expect(ragged.batchSize).toEqual([2, -1]);
    expect(() => maybeDenseStack([td3(), new TensorDict({}, [3, 1])])).toThrow(/congruent batch dimensions/);
  });

  it("nested heterogeneity propagates: nested dicts of batch (2,3) and (2,4) stack to (2,2,-1)", () => {
    const a = new TensorDict({ sub: new TensorDict({ y: zeros([2, 3], []) }, [2, 3]) }, [2]);
    const b = new TensorDict({ sub: new TensorDict({ y: zeros([2, 4], []) }, [2, 4]) }, [2]);
    const r = maybeDenseStack([a, b]);
    expect(r.batchSize).toEqual([2, 2]);
    const sub = r.get("sub");
    expect(sub).toBeInstanceOf(LazyStackedTensorDict);
    expect((sub as LazyStackedTensorDict).batchSize).toEqual([2, 2, -1]);
  });
});

// ---------------------------------------------------------------------------------------------

describe("densify", () => {
  it("stacks equal leaves and turns ragged ones into JaggedTensors", () => {
    const a = new TensorDict({ r: tensor([1, 2, 3], { batchDim: 1 }), b: tensor([1, 2]) });
    const b = new TensorDict({ r: tensor([4], { batchDim: 1 }), b: tensor([3, 4]) });
    const d = lazyStack([a, b]).densify();
    expect(d).toBeInstanceOf(TensorDict);
    expect(d.batchSize).toEqual([2]);
    const dense = d.getTensor("b");
    expect(dense.batchShape).toEqual([2]);
    expect(dense.baseShape).toEqual([2]);
    expect(vals(dense)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    const r = d.get("r");
    expect(r).toBeInstanceOf(JaggedTensor);
    expect((r as JaggedTensor).toList().map((t) => t.toArraySync())).toEqual([[1, 2, 3], [4]]);
    expect(Array.from((r as JaggedTensor).offsets.dataSync())).toEqual([0, 3, 4]);
  });

  it("a ragged batch dim: members [3] and [4] densify to jagged entries over 2 rows", () => {
    const d = lazyStack([td3(), td4()]).densify();
    expect(d.batchSize[0]).toBe(2);
    const x = d.get("x") as JaggedTensor;
    expect(x).toBeInstanceOf(JaggedTensor);
    expect(x.toList().map((t) => t.toArraySync())).toEqual([
      [
        [1, 1],
        [2, 2],
        [3, 3],
      ],
      [
        [4, 4],
        [5, 5],
        [6, 6],
        [7, 7],
      ],
    ]);
  });

  it("an exclusive key becomes a zero-length row for the members that lack it", () => {
    const a = new TensorDict({ r: tensor([1, 2, 3], { batchDim: 1 }), b: tensor([1, 2]) });
    const b = new TensorDict({ b: tensor([3, 4]) });
    const d = lazyStack([a, b]).densify();
    const r = d.get("r") as JaggedTensor;
    expect(r).toBeInstanceOf(JaggedTensor);
    expect(Array.from(r.offsets.dataSync())).toEqual([0, 3, 3]);
    expect(vals(d.getTensor("b"))).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it("scalars with exclusive keys cannot be densified", () => {
    const a = new TensorDict({ s: scalar(1), b: tensor([1, 2]) });
    const b = new TensorDict({ b: tensor([3, 4]) });
    expect(() => lazyStack([a, b]).densify()).toThrow(
      /Cannot densify a tensordict with values with empty shape and exclusive keys/,
    );
  });

  it("ragged leaves densify only for stackDim 0; equal leaves densify on any stack dim", () => {
    expect(() => lazyStack([td3(), td4()], 1).densify()).toThrow(UnsupportedOpError);
    const b = new TensorDict(
      {
        x: tensor(
          [
            [7, 7],
            [8, 8],
            [9, 9],
          ],
          { batchDim: 1 },
        ),
      },
      [3],
    );
    const d = lazyStack([td3(), b], 1).densify();
    expect(d.batchSize).toEqual([3, 2]);
    expect(vals(d.getTensor("x"))).toEqual([
      [
        [1, 1],
        [7, 7],
      ],
      [
        [2, 2],
        [8, 8],
      ],
      [
        [3, 3],
        [9, 9],
      ],
    ]);
  });
});

// ---------------------------------------------------------------------------------------------

/** The cookbook's token sequences of lengths 3, 1, 2, with a feature entry and a nested entry with an extra batch dim. */
function sequences(): TensorDict[] {
  return [
    new TensorDict(
      {
        tokens: tensor([1, 2, 3], { batchDim: 1 }),
        feat: tensor(
          [
            [1, 1],
            [2, 2],
            [3, 3],
          ],
          { batchDim: 1 },
        ),
        sub: {
          y: tensor(
            [
              [1, 2],
              [3, 4],
              [5, 6],
            ],
            { batchDim: 2 },
          ),
        },
      },
      [3],
    ),
    new TensorDict(
      {
        tokens: tensor([4], { batchDim: 1 }),
        feat: tensor([[4, 4]], { batchDim: 1 }),
        sub: { y: tensor([[7, 8]], { batchDim: 2 }) },
      },
      [1],
    ),
    new TensorDict(
      {
        tokens: tensor([5, 6], { batchDim: 1 }),
        feat: tensor(
          [
            [5, 5],
            [6, 6],
          ],
          { batchDim: 1 },
        ),
        sub: {
          y: tensor(
            [
              [9, 10],
              [11, 12],
            ],
            { batchDim: 2 },
          ),
        },
      },
      [2],
    ),
  ];
}

const RIGHT_MASK = [
  [T, T, T],
  [T, F, F],
  [T, T, F],
];
const LEFT_MASK = [
  [T, T, T],
  [F, F, T],
  [F, T, T],
];

describe("padSequence on TensorDicts", () => {
  it("pads every entry along batch dim 0 and stacks on a new dim 0 (values and padding value)", () => {
    const p = padSequence(sequences(), { paddingValue: -1 });
    expect(p).toBeInstanceOf(TensorDict);
    expect(p.batchSize).toEqual([3, 3]);
    expect(p.has("masks")).toBe(false);
    expect(vals(p.getTensor("tokens"))).toEqual([
      [1, 2, 3],
      [4, -1, -1],
      [5, 6, -1],
    ]);
    expect(p.getTensor("feat").baseShape).toEqual([2]);
    expect(vals(p.getTensor("feat"))).toEqual([
      [
        [1, 1],
        [2, 2],
        [3, 3],
      ],
      [
        [4, 4],
        [-1, -1],
        [-1, -1],
      ],
      [
        [5, 5],
        [6, 6],
        [-1, -1],
      ],
    ]);
    expect(p.getTensor(["sub", "y"]).batchShape).toEqual([3, 3, 2]);
    expect(vals(p.getTensor(["sub", "y"]))).toEqual([
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
      [
        [7, 8],
        [-1, -1],
        [-1, -1],
      ],
      [
        [9, 10],
        [11, 12],
        [-1, -1],
      ],
    ]);
    // Default padding value is 0.
    expect(vals(padSequence(sequences()).getTensor("tokens"))).toEqual([
      [1, 2, 3],
      [4, 0, 0],
      [5, 6, 0],
    ]);
  });

  it("returnMask writes a masks TensorDict of shape [B] + batch_size, same structure as the entries", () => {
    const p = padSequence(sequences(), { paddingValue: -1, returnMask: true });
    const masks = p.getDict("masks");
    expect(masks.batchSize).toEqual([3, 3]);
    expect(masks.keys({ includeNested: true, leavesOnly: true })).toEqual(["tokens", "feat", ["sub", "y"]]);
    for (const key of [["tokens"], ["feat"], ["sub", "y"]]) {
      const m = masks.getTensor(key);
      expect(m.dtype).toBe("bool");
      expect(m.shape).toEqual([3, 3]); // mask.ndim == pad_dim + 2
      expect(vals(m)).toEqual(RIGHT_MASK);
    }
    // A named mask entry.
    const named = padSequence(sequences(), { returnMask: "valid" });
    expect(named.has("masks")).toBe(false);
    expect(vals(named.getTensor(["valid", "tokens"]))).toEqual(RIGHT_MASK);
  });

  it("masked positions never hold the pad value, unmasked ones always do", () => {
    const p = padSequence(sequences(), { paddingValue: -1, returnMask: true });
    const tok = p.getTensor("tokens").toArraySync() as number[][];
    const m = p.getTensor(["masks", "tokens"]).toArraySync() as boolean[][];
    for (let b = 0; b < 3; b++) {
      for (let i = 0; i < 3; i++) {
        if (m[b]![i]) expect(tok[b]![i]).not.toBe(-1);
        else expect(tok[b]![i]).toBe(-1);
      }
    }
  });

  it("left padding puts the pad first, and the mask follows", () => {
    const p = padSequence(sequences(), { paddingValue: -1, paddingSide: "left", returnMask: true });
    expect(vals(p.getTensor("tokens"))).toEqual([
      [1, 2, 3],
      [-1, -1, 4],
      [-1, 5, 6],
    ]);
    expect(vals(p.getTensor(["sub", "y"]))).toEqual([
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
      [
        [-1, -1],
        [-1, -1],
        [7, 8],
      ],
      [
        [-1, -1],
        [9, 10],
        [11, 12],
      ],
    ]);
    expect(vals(p.getTensor(["masks", "tokens"]))).toEqual(LEFT_MASK);
  });

  it("padDim past the batch dims keeps the batch [B] + batch_size; the mask gets the padded dim", () => {
    const [a, b] = pastBatchDimPair("w"); // (2,1;) and (2,3;)
    const p = padSequence([a, b], { padDim: 1, returnMask: true });
    expect(p.batchSize).toEqual([2, 2]);
    expect(vals(p.getTensor("w"))).toEqual([
      [
        [1, 0, 0],
        [2, 0, 0],
      ],
      [
        [3, 4, 5],
        [6, 7, 8],
      ],
    ]);
    const m = p.getTensor(["masks", "w"]);
    expect(m.shape).toEqual([2, 2, 3]);
    expect(vals(m)).toEqual([
      [
        [T, F, F],
        [T, F, F],
      ],
      [
        [T, T, T],
        [T, T, T],
      ],
    ]);
  });

  it("an empty list of TensorDicts: 'list_of_tensordicts cannot be empty'", () => {
    // tensordict's pad_sequence error: "list_of_tensordicts cannot be empty".
    expect(() => padSequence([] as TensorDict[])).toThrow(/list_of_tensordicts cannot be empty/);
  });

  it("a per-key failure: 'pad_sequence failed for key' wrapping 'Cannot pad scalars'", () => {
    const s = [new TensorDict({ s: scalar(1) }), new TensorDict({ s: scalar(2) })];
    expect(() => padSequence(s)).toThrow(/pad_sequence failed for key "s"/);
    expect(() => padSequence(s)).toThrow(/Cannot pad scalars/);
  });
});

// ---------------------------------------------------------------------------------------------

/** Checks that `ls` holds the three members of `sequences()` again. */
function expectSequences(ls: LazyStackedTensorDict): void {
  expect(ls).toBeInstanceOf(LazyStackedTensorDict);
  expect(ls.tensordicts).toHaveLength(3);
  expect(ls.tensordicts.map((t) => t.batchSize)).toEqual([[3], [1], [2]]);
  expect(ls.batchSize).toEqual([3, -1]);
  const want = sequences();
  ls.tensordicts.forEach((m, i) => {
    expect(m.has("masks")).toBe(false);
    expect(m.keys({ includeNested: true, leavesOnly: true })).toEqual(["tokens", "feat", ["sub", "y"]]);
    for (const key of [["tokens"], ["feat"], ["sub", "y"]]) {
      expect(m.getTensor(key).batchShape).toEqual(want[i]!.getTensor(key).batchShape);
      expect(m.getTensor(key).baseShape).toEqual(want[i]!.getTensor(key).baseShape);
      expect(vals(m.getTensor(key))).toEqual(want[i]!.getTensor(key).toArraySync());
    }
  });
  // Spot checks written out by hand.
  expect(vals(ls.member(1).getTensor("tokens"))).toEqual([4]);
  expect(vals(ls.member(2).getTensor(["sub", "y"]))).toEqual([
    [9, 10],
    [11, 12],
  ]);
}

describe("unpadSequence on TensorDicts", () => {
  it("recovers members of batch sizes [3], [1], [2] from the stored masks (right padding)", () => {
    const padded = padSequence(sequences(), { paddingValue: -1, returnMask: true });
    expectSequences(unpadSequence(padded));
  });

  it("recovers them with left padding too (the mask says where the run is)", () => {
    const padded = padSequence(sequences(), { paddingValue: -1, paddingSide: "left", returnMask: true });
    expectSequences(unpadSequence(padded));
  });

  it("unpads along an entry dim past the batch dims (padDim 1)", () => {
    const [a, b] = pastBatchDimPair("w"); // (2,1;) and (2,3;)
    const ls = unpadSequence(padSequence([a, b], { padDim: 1, returnMask: true }), undefined, { padDim: 1 });
    expect(ls.tensordicts.map((t) => t.batchSize)).toEqual([[2], [2]]);
    expect(ls.member(0).getTensor("w").batchShape).toEqual([2, 1]);
    expect(vals(ls.member(0).getTensor("w"))).toEqual([[1], [2]]);
    expect(vals(ls.member(1).getTensor("w"))).toEqual([
      [3, 4, 5],
      [6, 7, 8],
    ]);
  });

  it("takes an explicit (B, maxLen) bool mask for every entry", () => {
    const padded = padSequence(sequences(), { paddingValue: -1 });
    const mask = tensor(RIGHT_MASK, { batchDim: 2 });
    expectSequences(unpadSequence(padded, mask));
  });
});

// ---------------------------------------------------------------------------------------------

describe("stacking and concatenating lazy stacks", () => {
  it("stack of lazy stacks (same stackDim and member count) stays lazy", () => {
    const a1 = td3();
    const b1 = td4();
    const a2 = td3().apply((t) => t.add(10));
    const b2 = td4().apply((t) => t.add(10));
    const r = stack([lazyStack([a1, b1]), lazyStack([a2, b2])], 0);
    expect(r).toBeInstanceOf(LazyStackedTensorDict);
    // Two [2, -1] stacks stacked at 0: [2, 2, -1].
    expect(r.batchSize).toEqual([2, 2, -1]);
    // Index 1 of the new dim is the second lazy stack again.
    const second = r.batchIndex(0, 1);
    expect(second).toBeInstanceOf(LazyStackedTensorDict);
    expect((second as LazyStackedTensorDict).batchSize).toEqual([2, -1]);
    const xs = (second as LazyStackedTensorDict).get("x", { asList: true }) as Tensor[];
    expect(xs.map((t) => t.toArraySync())).toEqual([
      [
        [11, 11],
        [12, 12],
        [13, 13],
      ],
      [
        [14, 14],
        [15, 15],
        [16, 16],
        [17, 17],
      ],
    ]);
  });

  it("cat of lazy stacks along the stack dim concatenates the member lists", () => {
    const a = td3();
    const b = td4();
    const c = td3();
    const r = cat([lazyStack([a, b]), lazyStack([c])], 0);
    expect(r).toBeInstanceOf(LazyStackedTensorDict);
    expect(r.batchSize).toEqual([3, -1]);
    expect(r.tensordicts[0]).toBe(a);
    expect(r.tensordicts[1]).toBe(b);
    expect(r.tensordicts[2]).toBe(c);
  });
});
