/**
 * tensordict's non-tensor entries, row assignment (`setAt`), `LazyStackedTensorDict.set`,
 * `toPaddedTensor`, lazy stacks of lazy stacks and `lazyStack` of plain tensors.
 * Expected values are written out by hand from tensordict's documented behaviour
 * (quoted next to each case).
 */
import { describe, expect, it } from "vitest";
import {
  DTypeError,
  KeyError,
  LazyStackedTensorDict,
  NonTensorData,
  NonTensorStack,
  ShapeError,
  TensorDict,
  TraceError,
  arange,
  cat,
  jagged,
  jit,
  lazyStack,
  stack,
  tensor,
  zeros,
  type Tensor,
} from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { onWebGPU } from "../helpers/on-webgpu.js";

const arr = (t: unknown) => (t as Tensor).toArraySync();
const vals = (t: unknown) => Array.from((t as Tensor).dataSync());

describe("non-tensor entries", () => {
  it("setNonTensor / getNonTensor; get gives the NonTensorData (tensordict's set_non_tensor docs)", () => {
    const data = new TensorDict({}, []).setNonTensor(["nested", "the string"], "a string!");
    expect(data.getNonTensor(["nested", "the string"])).toBe("a string!");
    const nt = data.get(["nested", "the string"]);
    expect(nt).toBeInstanceOf(NonTensorData);
    expect((nt as NonTensorData).batchSize).toEqual([]);
    expect(String(nt)).toBe('NonTensorData("a string!", batchSize=[])');
  });

  it("NonTensorData: one value for the batch; indexing and batch-dim ops keep it", () => {
    const td = new TensorDict({ x: arange(6).reshape([3, 2]).rebatch(1) }, [3]).setNonTensor("label", "walk");
    expect((td.get("label") as NonTensorData).batchSize).toEqual([3]);
    expect(td.batchIndex(0, 1).getNonTensor("label")).toBe("walk");
    expect((td.batchIndex(0, 1).get("label") as NonTensorData).batchSize).toEqual([]);
    expect((td.batchSlice(0, 1).get("label") as NonTensorData).batchSize).toEqual([2]);
    expect((td.batchUnsqueeze(0).get("label") as NonTensorData).batchSize).toEqual([1, 3]);
    expect((td.batchReshape([3, 1]).get("label") as NonTensorData).batchSize).toEqual([3, 1]);
    expect((td.batchUnsqueeze(0).batchExpand([2, 3]).get("label") as NonTensorData).batchSize).toEqual([2, 3]);
    expect((td.pad([1, 0]).get("label") as NonTensorData).batchSize).toEqual([4]);
    expect((td.get("label") as NonTensorData).tolist()).toEqual(["walk", "walk", "walk"]);
    expect(td.apply((x) => x.mul(2)).getNonTensor("label")).toBe("walk");
    expect(td.toString()).toBe(
      'TensorDict(batchSize=[3]) { x: (3; 2) float32, label: NonTensorData("walk", batchSize=[3]) }',
    );
  });

  it("NonTensorStack: one value per element (the DNA reads of tensordict's non-tensor docs)", () => {
    const reads = new TensorDict(
      { seq: NonTensorStack.fromList(["ACGT", "GGCC", "TTAG"]), gc: tensor([0.5, 1.0, 0.25], { batchDim: 1 }) },
      [3],
    );
    expect(reads.batchSlice(0, 0, 2).getNonTensor("seq")).toEqual(["ACGT", "GGCC"]);
    expect(reads.batchIndex(0, -1).getNonTensor("seq")).toBe("TTAG");
    expect(reads.batchIndex(0, 2).get("seq")).toBeInstanceOf(NonTensorData);
    expect(reads.batchSlice(0, 0, 3, 2).getNonTensor("seq")).toEqual(["ACGT", "TTAG"]);
    const grid = NonTensorStack.fromList([
      ["0", "1"],
      ["2", "3"],
      ["4", "5"],
    ]);
    expect(grid.batchSize).toEqual([3, 2]);
    const td = new TensorDict({ numbers: grid }, [3, 2]);
    // tensordict v0.8 release notes: td.view(-1)["numbers"] is ['0', '1', '2', '3', '4', '5'].
    expect(td.batchReshape([-1]).getNonTensor("numbers")).toEqual(["0", "1", "2", "3", "4", "5"]);
    expect(td.batchIndex(1, 1).getNonTensor("numbers")).toEqual(["1", "3", "5"]);
    expect(td.batchUnsqueeze(1).getNonTensor("numbers")).toEqual([[["0", "1"]], [["2", "3"]], [["4", "5"]]]);
    expect(() => td.pad([0, 1])).toThrow(/no value to pad with/);
    expect(() => NonTensorStack.fromList([["a"], "b"])).toThrow(ShapeError);
  });

  it("stacking gives a NonTensorStack (tensordict ≥ 0.9 keeps identical values apart); cat concatenates", () => {
    const a = new TensorDict({ x: zeros([2], []) }, [2]).setNonTensor("s", "a");
    const b = new TensorDict({ x: zeros([2], []) }, [2]).setNonTensor("s", "a");
    const st = stack([a, b]).get("s") as NonTensorStack;
    expect(st).toBeInstanceOf(NonTensorStack);
    expect(st.batchSize).toEqual([2, 2]);
    expect(st.tolist()).toEqual([
      ["a", "a"],
      ["a", "a"],
    ]);
    const c = new TensorDict({ x: zeros([2], []), s: NonTensorStack.fromList(["p", "q"]) }, [2]);
    const d = new TensorDict({ x: zeros([2], []), s: NonTensorStack.fromList(["r", "t"]) }, [2]);
    // Stacking on dim 1 interleaves: element [i][j] is member j's element i.
    expect(stack([c, d], 1).getNonTensor("s")).toEqual([
      ["p", "r"],
      ["q", "t"],
    ]);
    expect(cat([c, d]).getNonTensor("s")).toEqual(["p", "q", "r", "t"]);
    // A lazy stack's get of a non-tensor key stacks it too.
    expect(lazyStack([c, d]).get("s")).toBeInstanceOf(NonTensorStack);
    expect((lazyStack([c, d]).get("s") as NonTensorStack).tolist()).toEqual([
      ["p", "q"],
      ["r", "t"],
    ]);
    // lazyStack of non-tensor data (tensordict's NonTensorStack docs: a stack of stacks is [3, 2]).
    const nested = lazyStack([0, 1, 2].map((j) => lazyStack([0, 1].map((i) => new NonTensorData([i, j])))));
    expect(nested.batchSize).toEqual([3, 2]);
    expect(nested.tolist()).toEqual([
      [
        [0, 0],
        [1, 0],
      ],
      [
        [0, 1],
        [1, 1],
      ],
      [
        [0, 2],
        [1, 2],
      ],
    ]);
  });

  it("typed errors: getNonTensor of a tensor, a non-tensor TensorDict as a jit argument", () => {
    const td = new TensorDict({ x: zeros([2], []) }, [2]).setNonTensor("s", "a");
    expect(() => td.getNonTensor("x")).toThrow(KeyError);
    expect(() => td.getNonTensor("x")).toThrow(/"x" is \(2;\), not non-tensor data/);
    expect(() => td.getNonTensor("nope")).toThrow(/no key "nope"/);
    expect(() => td.getTensor("s")).toThrow(/"s" is NonTensorData\("a", batchSize=\[2\]\), not a tensor/);
    const f = jit((t: TensorDict) => t);
    expect(() => f(td)).toThrow(TraceError);
    expect(() => new NonTensorStack(["a"], [2])).toThrow(/1 values do not fill batchSize \[2\]/);
  });
});

describe("setAt: functional row assignment (tensordict's td[index] = sub)", () => {
  const base = () =>
    new TensorDict(
      {
        x: zeros([3], [2]),
        n: { y: zeros([3], [], { dtype: "int32" }) },
        label: NonTensorStack.fromList(["a", "b", "c"]),
      },
      [3],
    );

  it("an integer row; the original is unchanged; nested dicts and non-tensor entries", () => {
    const td = base();
    const out = td.setAt(1, {
      x: tensor([5, 6]),
      n: { y: tensor(7.9, { dtype: "float32" }) },
      label: new NonTensorData("z"),
    });
    expect(arr(out.getTensor("x"))).toEqual([
      [0, 0],
      [5, 6],
      [0, 0],
    ]);
    expect(vals(out.getTensor(["n", "y"]))).toEqual([0, 7, 0]); // cast to the entry's int32: truncated
    expect(out.getTensor(["n", "y"]).dtype).toBe("int32");
    expect(out.getNonTensor("label")).toEqual(["a", "z", "c"]);
    expect(arr(td.getTensor("x"))).toEqual([
      [0, 0],
      [0, 0],
      [0, 0],
    ]);
    expect(arr(td.setAt(-1, { x: tensor([1, 2]) }).getTensor("x"))).toEqual([
      [0, 0],
      [0, 0],
      [1, 2],
    ]);
  });

  it("slices, steps, several dims and a number", () => {
    const td = new TensorDict({ x: zeros([4], []) }, [4]);
    expect(vals(td.setAt({ start: 1, stop: 3 }, { x: tensor([1, 2], { batchDim: 1 }) }).getTensor("x"))).toEqual([
      0, 1, 2, 0,
    ]);
    expect(vals(td.setAt({ step: 2 }, { x: tensor([1, 2], { batchDim: 1 }) }).getTensor("x"))).toEqual([1, 0, 2, 0]);
    expect(vals(td.setAt({ start: -2 }, 9).getTensor("x"))).toEqual([0, 0, 9, 9]);
    // A sub-dict of batch [] broadcasts over the indexed [2] (tensordict expands on the left).
    expect(vals(td.setAt({ start: 0, stop: 2 }, { x: tensor(3) }).getTensor("x"))).toEqual([3, 3, 0, 0]);
    const g = new TensorDict({ x: zeros([2, 3], []) }, [2, 3]);
    expect(arr(g.setAt([1, { start: 1 }], { x: tensor([4, 5], { batchDim: 1 }) }).getTensor("x"))).toEqual([
      [0, 0, 0],
      [0, 4, 5],
    ]);
    expect(arr(g.setAt([{ start: 0, stop: 2 }, 2], { x: tensor([4, 5], { batchDim: 1 }) }).getTensor("x"))).toEqual([
      [0, 0, 4],
      [0, 0, 5],
    ]);
    expect(arr(g.setAt(0, true).getTensor("x"))).toEqual([
      [1, 1, 1],
      [0, 0, 0],
    ]);
  });

  it("special values are written exactly: NaN, ±Inf, -0; empty slices change nothing", () => {
    const td = new TensorDict({ x: zeros([4], []) }, [4]);
    const out = vals(
      td.setAt({ start: 0 }, { x: tensor([NaN, Infinity, -Infinity, -0], { batchDim: 1 }) }).getTensor("x"),
    );
    expect(out).toEqual([NaN, Infinity, -Infinity, -0]);
    expect(Object.is(out[3], -0)).toBe(true);
    expect(vals(td.setAt({ start: 2, stop: 2 }, { x: zeros([0], []) }).getTensor("x"))).toEqual([0, 0, 0, 0]);
    const empty = new TensorDict({ x: zeros([0, 2], []) }, [0, 2]);
    expect(empty.setAt({ start: 0 }, 5).getTensor("x").toString()).toBe("(0,2;)");
  });

  it("pre-allocation: new keys are zeros (or an empty dict) with the row written", () => {
    const rows = [tensor([1, 2]), tensor([3, 4])];
    let td = new TensorDict({}, [2]);
    rows.forEach((r, i) => (td = td.setAt(i, { obs: r, info: { step: tensor(i + 1, { dtype: "int32" }) } })));
    expect(arr(td.getTensor("obs"))).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(td.getTensor(["info", "step"]).dtype).toBe("int32");
    expect(vals(td.getTensor(["info", "step"]))).toEqual([1, 2]);
    expect(vals(new TensorDict({}, [3]).setAt(1, { a: tensor(5) }).getTensor("a"))).toEqual([0, 5, 0]);
  });

  it("errors in tensordict's words, (batch; base) shapes", () => {
    const td = base();
    expect(() => td.setAt(3, 0)).toThrow(/index 3 is out of bounds for dimension 0 with size 3/);
    expect(() => td.setAt([0, 0], 0)).toThrow(/too many indices \(2\) for batchSize \[3\]/);
    expect(() => td.setAt({ start: 0, stop: 2 }, new TensorDict({ x: zeros([3], [2]) }, [3]))).toThrow(
      /indexed destination TensorDict batch size is \[2\] \(batch_size = \[3\], index=0:2\), which differs from the source batch size \[3\]/,
    );
    expect(() => td.setAt(0, { x: tensor([1, 2, 3]) })).toThrow(ShapeError);
    expect(() => td.setAt(0, { n: tensor(1) })).toThrow(/entry "n" is a TensorDict/);
    expect(() => td.setAt(0, { z: new NonTensorData("q") })).toThrow(KeyError);
    expect(() => td.setAt(0, "x" as unknown as number)).toThrow(DTypeError);
    expect(() => td.setAt({ step: 0 }, 0)).toThrow(/step must be positive/);
    expect(() => new TensorDict({ j: jagged([tensor([1]), tensor([2, 3])]) }, [2]).setAt(0, 1)).toThrow(/jagged/);
  });

  it("inside jit: one trace across batch sizes (slices and concatenation)", () => {
    const f = jit((t: TensorDict) =>
      t.setAt(1, { x: tensor([7, 8]) }).setAt({ start: 0, stop: 1 }, { x: tensor([[-1, -2]], { batchDim: 1 }) }),
    );
    for (const B of [3, 5]) {
      const td = new TensorDict(
        {
          x: arange(2 * B)
            .reshape([B, 2])
            .rebatch(1),
        },
        [B],
      );
      const out = f(td) as TensorDict;
      const want = Array.from({ length: B }, (_, b) => (b === 0 ? [-1, -2] : b === 1 ? [7, 8] : [2 * b, 2 * b + 1]));
      expect(arr(out.getTensor("x"))).toEqual(want);
    }
    expect(f.stats.traces).toBe(1);
    const g = jit((t: TensorDict) => t.setAt(-1, 0));
    expect(() => g(new TensorDict({ x: zeros([2], []) }, [2]))).toThrow(TraceError);
  });
});

describe("LazyStackedTensorDict.set, toPaddedTensor, lazy stacks of lazy stacks, lazyStack of tensors", () => {
  const ragged = () =>
    lazyStack([
      new TensorDict({ x: arange(6).reshape([3, 2]).rebatch(1) }, [3]),
      new TensorDict({ x: arange(10, 18).reshape([4, 2]).rebatch(1) }, [4]),
    ]);

  it("set: one value per member, a tensor split on the stack dim, plain values as NonTensorData", () => {
    const ls = ragged();
    ls.set("w", [zeros([3], []), tensor([1, 2, 3, 4], { batchDim: 1 })]);
    expect(ls.get("w", { asList: true })!.map((t) => t.toString())).toEqual(["(3;)", "(4;)"]);
    ls.set("label", ["walk", "run"]);
    expect(ls.member(1).getNonTensor("label")).toBe("run");
    // The members' labels span [3] and [4]: no regular stack, but a list.
    expect(() => ls.get("label")).toThrow(
      /the non-tensor entries to stack have batch sizes \[4\] \(item 1\) and \[3\] \(item 0\)/,
    );
    expect((ls.get("label", { asList: true }) as unknown as NonTensorData[]).map((v) => v.data)).toEqual([
      "walk",
      "run",
    ]);
    const dense = lazyStack([new TensorDict({}, [2]), new TensorDict({}, [2])]);
    dense.set(
      "v",
      tensor(
        [
          [1, 2],
          [3, 4],
        ],
        { batchDim: 2 },
      ),
    );
    expect(vals(dense.member(0).getTensor("v"))).toEqual([1, 2]);
    expect(vals(dense.member(1).getTensor("v"))).toEqual([3, 4]);
    dense.set("s", new NonTensorData("k"));
    expect((dense.get("s") as NonTensorStack).tolist()).toEqual([
      ["k", "k"],
      ["k", "k"],
    ]);
  });

  it("set errors: tensordict's 'lengths of iterables differ.'; a refusal sets nothing", () => {
    const ls = ragged();
    expect(() => ls.set("w", [zeros([3], [])])).toThrow(/lengths of iterables differ\. Got 1 values for 2 members/);
    expect(() => ls.set("w", zeros([3], []))).toThrow(/lengths of iterables differ/);
    // The second member refuses a (3;) entry for its [4] batch: the first is not changed either.
    expect(() => ls.set("w", [zeros([3], []), zeros([3], [])])).toThrow(/batch dimension mismatch/);
    expect(ls.member(0).has("w")).toBe(false);
    expect(() => ls.set("w", 5 as unknown as Tensor)).toThrow(DTypeError);
  });

  it("toPaddedTensor pads the ragged dims and stacks; maskKey marks the real elements", () => {
    const out = ragged().toPaddedTensor({ padding: -1, maskKey: "mask" });
    expect(out.batchSize).toEqual([2, 4]);
    expect(arr(out.getTensor("x"))).toEqual([
      [
        [0, 1],
        [2, 3],
        [4, 5],
        [-1, -1],
      ],
      [
        [10, 11],
        [12, 13],
        [14, 15],
        [16, 17],
      ],
    ]);
    expect(arr(out.getTensor("mask"))).toEqual([
      [true, true, true, false],
      [true, true, true, true],
    ]);
    const even = lazyStack([new TensorDict({ x: zeros([2], []) }, [2]), new TensorDict({ x: zeros([2], []) }, [2])]);
    expect(() => even.toPaddedTensor({ maskKey: "m" })).toThrow(
      /mask_key should only be provided if the heterogenous dimension is part of the batch-size/,
    );
    // TensorDict: jagged entries become padded tensors, the batch size stays.
    const td = ragged().densify().toPaddedTensor({ padding: 9 });
    expect(td.batchSize).toEqual([2]);
    expect(td.getTensor("x").toString()).toBe("(2,4; 2)");
    expect(vals(td.getTensor("x")).slice(6, 8)).toEqual([9, 9]);
    expect(() => td.toPaddedTensor({ maskKey: "m" })).toThrow(ShapeError);
  });

  it("lazy stacks of lazy stacks", () => {
    const leaf = (v: number, n: number) => new TensorDict({ x: zeros([n], []).add(v) }, [n]);
    const outer = lazyStack([lazyStack([leaf(1, 2), leaf(2, 3)]), lazyStack([leaf(3, 2), leaf(4, 3)])]);
    expect(outer).toBeInstanceOf(LazyStackedTensorDict);
    expect(outer.batchSize).toEqual([2, 2, -1]);
    expect(outer.member(1)).toBeInstanceOf(LazyStackedTensorDict);
    const inner = outer.batchIndex(1, 1) as LazyStackedTensorDict;
    expect(inner.batchSize).toEqual([2, 3]);
    expect(arr(inner.get("x"))).toEqual([
      [2, 2, 2],
      [4, 4, 4],
    ]);
    const padded = outer.toPaddedTensor();
    expect(padded.batchSize).toEqual([2, 2, 3]);
    expect(arr(padded.getTensor("x"))).toEqual([
      [
        [1, 1, 0],
        [2, 2, 2],
      ],
      [
        [3, 3, 0],
        [4, 4, 4],
      ],
    ]);
    outer.set("k", [
      ["a", "b"],
      ["c", "d"],
    ]);
    expect((outer.member(1) as LazyStackedTensorDict).member(0).getNonTensor("k")).toBe("c");
  });

  it("lazyStack of plain tensors: dense when shapes agree, else a list, a padded or a jagged tensor on request", () => {
    const s = lazyStack([tensor([1, 2]), tensor([3, 4])]);
    expect(s.toString()).toBe("(2; 2)");
    expect(arr(s)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    const a = tensor([0, 0, 0], { batchDim: 1 });
    const b = tensor([1, 1], { batchDim: 1 });
    expect(() => lazyStack([a, b])).toThrow(/Failed to stack tensors within a tensordict/);
    expect(lazyStack([a, b], 0, { asList: true })).toEqual([a, b]);
    // tensordict v0.8 notes: get("a", as_padded_tensor=True, padding_value=-1) = [[0, 0, 0], [1, 1, -1]].
    expect(arr(lazyStack([a, b], 0, { asPaddedTensor: true, paddingValue: -1 }))).toEqual([
      [0, 0, 0],
      [1, 1, -1],
    ]);
    expect(lazyStack([a, b], 0, { asJagged: true }).toString()).toBe("(2,~N;)");
    expect(() => lazyStack([a, b], 0, { asList: true, asJagged: true } as never)).toThrow(/exclusive/);
    expect(() => lazyStack([a, new TensorDict({}, [])] as never)).toThrow(ShapeError);
  });
});

const probe = await probeWebGPUForFile();
describeWebGPU(probe, "tensordict setAt and toPaddedTensor on WebGPU", (backend) => {
  it("writes special values and pads", () =>
    onWebGPU(backend, async () => {
      const td = new TensorDict({ x: zeros([4], []) }, [4]);
      const out = Array.from(
        await td
          .setAt({ start: 1, stop: 3 }, { x: tensor([NaN, -0], { batchDim: 1 }) })
          .setAt(3, { x: tensor(-Infinity) })
          .getTensor("x")
          .data(),
      );
      expect(out).toEqual([0, NaN, -0, -Infinity]);
      expect(Object.is(out[2], -0)).toBe(true);
      const ls = lazyStack([
        new TensorDict({ x: tensor([1, 2], { batchDim: 1 }) }, [2]),
        new TensorDict({ x: tensor([3], { batchDim: 1 }) }, [1]),
      ]);
      const p = ls.toPaddedTensor({ padding: Infinity, maskKey: "m" });
      expect(Array.from(await p.getTensor("x").data())).toEqual([1, 2, 3, Infinity]);
      expect(Array.from(await p.getTensor("m").data())).toEqual([1, 1, 1, 0]);
    }));
});
