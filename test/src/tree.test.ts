/**
 * src/tree.ts, the one flattening of structured values that jit's arguments
 * (src/args.ts), the derivatives (src/grad.ts) and sharded runs share. Expected
 * structures, kinds strings and messages are written out by hand.
 */
import { describe, expect, it } from "vitest";
import { argKind, flatten as flattenArgs, leafKinds, unflatten as unflattenArgs } from "../../src/args.js";
import {
  DTypeError,
  grad,
  JaggedTensor,
  NonTensorData,
  SR2,
  Tensor,
  TensorDict,
  TraceError,
  tensor,
} from "../../src/index.js";
import { flatten, LEAF, leafCount, unflatten, type TreePath, type TreeView } from "../../src/tree.js";

const f64 = { dtype: "float64" } as const;
const t1 = tensor([1, 2], { batchDim: 1, ...f64 });
const t2 = tensor([3, 4], { batchDim: 1, ...f64 });
const t3 = tensor([[5, 6, 7, 8, 9, 10]], { batchDim: 1, ...f64 });
const offsets = tensor([0, 1, 3], { dtype: "int32", batchDim: 1 });
const values = tensor([1, 2, 3], { batchDim: 1, ...f64 });

/** Every container a node; rejections record what and where. */
function view(split: "pair" | "values", rejected: [unknown, TreePath][] = []): TreeView<Tensor> {
  return {
    isLeaf: (a): a is Tensor => a instanceof Tensor,
    arrays: true,
    typed: {
      is: (a): a is SR2 => a instanceof SR2,
      classOf: () => SR2 as never,
    },
    jagged: { kind: argKind("jagged", "test"), split },
    dict: argKind("dict", "test"),
    reject: (a, path) => {
      rejected.push([a, path]);
      return new TraceError("rejected");
    },
  };
}

describe("tree: flatten and unflatten", () => {
  it("nested arrays: leaves depth first, the structure without them", () => {
    const { leaves, def } = flatten([t1, [t2, [t3]]], view("pair"));
    expect(leaves).toEqual([t1, t2, t3]);
    expect(leaves[2]).toBe(t3);
    expect(def).toEqual({
      kind: "array",
      children: [LEAF, { kind: "array", children: [LEAF, { kind: "array", children: [LEAF] }] }],
    });
    expect(leafCount(def)).toBe(3);
    expect(unflatten(def, ["a", "b", "c"])).toEqual(["a", ["b", ["c"]]]);
    expect(flatten([], view("pair"))).toEqual({ leaves: [], def: { kind: "array", children: [] } });
  });

  it("jagged tensors: values and offsets as leaves (pair), or the values with the offsets kept (values)", () => {
    const j = new JaggedTensor(values, offsets);
    const pair = flatten(j, view("pair"));
    expect(pair.leaves).toEqual([values, offsets]);
    expect(pair.def).toEqual({ kind: "jagged", children: [LEAF, LEAF] });
    const other = tensor([7, 8, 9], { batchDim: 1, ...f64 });
    const back = unflatten(pair.def, [other, offsets], { jagged: argKind("jagged", "test") }) as JaggedTensor;
    expect(back).toBeInstanceOf(JaggedTensor);
    expect(back.values).toBe(other);
    expect(back.offsets).toBe(offsets);

    const vals = flatten(j, view("values"));
    expect(vals.leaves).toEqual([values]);
    expect(vals.def).toEqual({ kind: "jagged", offsets, children: [LEAF] });
    const again = unflatten(vals.def, [values], { jagged: argKind("jagged", "test") }) as JaggedTensor;
    expect(again.offsets).toBe(offsets);
    expect(again.values).toBe(values);
    // A value that is not a tensor (a nested Jacobian) stands as it is.
    expect(unflatten(vals.def, ["block"], { jagged: argKind("jagged", "test") })).toBe("block");
  });

  it("typed tensors: a node over their tensor, rebuilt in their class unless keepTyped", () => {
    const s = new SR2(t3);
    const { leaves, def } = flatten([s], view("pair"));
    expect(leaves).toEqual([t3]);
    expect(def).toEqual({ kind: "array", children: [{ kind: "typed", cls: SR2, children: [LEAF] }] });
    const [back] = unflatten(def, [t3]) as [SR2];
    expect(back).toBeInstanceOf(SR2);
    expect(back.t).toBe(t3);
    expect((unflatten(def, [t3], { keepTyped: true }) as unknown[])[0]).toBe(t3);
    expect((unflatten(def, [7]) as unknown[])[0]).toBe(7);
  });

  it("TensorDicts: entries in order, nested dicts as nodes, batch sizes recorded", () => {
    const td = new TensorDict({ b: t1, a: { c: t2, d: new JaggedTensor(values, offsets) } }, [2]);
    const { leaves, def } = flatten(td, view("pair"));
    expect(leaves).toEqual([t1, t2, values, offsets]);
    expect(def).toEqual({
      kind: "dict",
      batchDim: 1,
      batchSize: [2],
      keys: ["b", "a"],
      children: [
        LEAF,
        {
          kind: "dict",
          batchDim: 1,
          batchSize: [2],
          keys: ["c", "d"],
          children: [LEAF, { kind: "jagged", children: [LEAF, LEAF] }],
        },
      ],
    });
    const back = unflatten(def, [t2, t1, values, offsets], {
      dict: argKind("dict", "test"),
      jagged: argKind("jagged", "test"),
    }) as TensorDict;
    expect(back.keys()).toEqual(["b", "a"]);
    expect(back.getDict("a").keys()).toEqual(["c", "d"]);
    expect(back.batchSize).toEqual([2]);
    expect(back.getTensor("b")).toBe(t2);
    expect(back.getTensor(["a", "c"])).toBe(t1);
  });

  it("refuses anything else with its path: undefined, null, strings, plain objects, Maps", () => {
    const rejected: [unknown, TreePath][] = [];
    const m = new Map([["x", t1]]);
    for (const bad of [undefined, null, "s", { a: t1 }, m]) {
      expect(() => flatten([t1, [t2, bad]], view("pair", rejected))).toThrow("rejected");
    }
    expect(rejected).toEqual([
      [undefined, [1, 1]],
      [null, [1, 1]],
      ["s", [1, 1]],
      [{ a: t1 }, [1, 1]],
      [m, [1, 1]],
    ]);
    rejected.length = 0;
    const td = new TensorDict({ a: { b: t1, n: new NonTensorData("walk", [2]) } }, [2]);
    expect(() => flatten(td, view("pair", rejected))).toThrow("rejected");
    expect(rejected.map(([, p]) => p)).toEqual([["a", "n"]]);
    // Without arrays in the view, an array is refused too.
    expect(() => flatten([t1], { ...view("pair", rejected), arrays: false })).toThrow("rejected");
    expect(rejected[1]).toEqual([[t1], []]);
  });
});

describe("tree: jit's arguments (src/args.ts)", () => {
  it("kinds strings: t, j, and d<n>:<json> for dicts (size only for a dict without entries)", () => {
    const j = new JaggedTensor(values, offsets);
    const td = new TensorDict({ a: t1 }, [2]);
    const empty = new TensorDict({}, [3]);
    const { tensors, kinds } = flattenArgs([t1, j, td, empty]);
    expect(tensors).toEqual([t1, values, offsets, t1]);
    expect(kinds).toBe('tjd23:{"b":1,"k":[["a","t"]]}d22:{"b":1,"s":[3],"k":[]}');
    expect(leafKinds(kinds)).toBe("tjt");
    const back = unflattenArgs(tensors, kinds);
    expect(back[0]).toBe(t1);
    expect((back[1] as JaggedTensor).offsets).toBe(offsets);
    expect((back[2] as TensorDict).getTensor("a")).toBe(t1);
    expect((back[2] as TensorDict).batchSize).toEqual([2]);
    expect((back[3] as TensorDict).batchSize).toEqual([3]);
    expect((back[3] as TensorDict).keys()).toEqual([]);
  });

  it("names the argument, and a dict's bad entry as 'an argument'", () => {
    expect(() => flattenArgs([t1, undefined])).toThrow(
      new TraceError(
        "jit: argument 1 is undefined; arguments and results must be Tensors, JaggedTensors or TensorDicts",
      ),
    );
    expect(() => flattenArgs([[t1]], "bundle")).toThrow(
      new TraceError(
        "bundle: argument 0 is an array; arguments and results must be Tensors, JaggedTensors or TensorDicts",
      ),
    );
    const td = new TensorDict({ n: new NonTensorData("walk", [2]) }, [2]);
    expect(() => flattenArgs([td])).toThrow(/^jit: an argument is .*; arguments and results must be Tensors/);
  });
});

describe("tree: the derivatives' structures (src/grad.ts)", () => {
  const loss = (x: unknown) => (x as Tensor[])[0]!.sum();
  it('names the position of what is not differentiable: [i] per array element, ["a.b"] per dict path', () => {
    expect(() => grad(loss)([t1, [t2, null]])).toThrow(
      new DTypeError(
        "grad: argument 0[1][1] must be a Tensor, a typed tensor, a JaggedTensor, a TensorDict or an array of these, got null",
      ),
    );
    const td = new TensorDict({ a: { n: new NonTensorData("walk", [2]) } }, [2]);
    expect(() => grad(loss)([t1, td])).toThrow(/^grad: argument 0\[1\]\["a\.n"\] must be a Tensor, a typed tensor/);
  });

  it("gradients keep the structure: arrays, typed tensors, jagged offsets, dict entries", () => {
    const j = new JaggedTensor(values, offsets);
    const td = new TensorDict({ w: t1 }, [2]);
    // d/dv of sum(v^2) = 2v, for every leaf.
    const sq = (t: Tensor) => t.mul(t).sum().batchSum();
    const [gj, [gtd, gs]] = grad(
      (a: JaggedTensor, b: [TensorDict, SR2]) =>
        sq(a.values)
          .add(sq(b[0].getTensor("w")))
          .add(sq(b[1].t)),
      { argnums: [0, 1] },
    )(j, [td, new SR2(t3)]) as unknown as [JaggedTensor, [TensorDict, SR2]];
    expect(gj).toBeInstanceOf(JaggedTensor);
    expect(gj.offsets).toBe(offsets);
    expect(Array.from(gj.values.dataSync())).toEqual([2, 4, 6]);
    expect(Array.from(gtd.getTensor("w").dataSync())).toEqual([2, 4]);
    expect(gs).toBeInstanceOf(SR2);
    expect(Array.from(gs.t.dataSync())).toEqual([10, 12, 14, 16, 18, 20]);
  });
});
