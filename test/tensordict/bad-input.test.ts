/**
 * Bad-input corpus for TensorDict and lazy stacks: every entry must throw the
 * listed BatchwiseError subclass (never a raw TypeError/RangeError or a stack
 * overflow), with a message that starts with the op's name and names the
 * argument, within 1 s. Then keys that are special to JS objects (`__proto__`,
 * `constructor`, `toString`, …) are entries like any other.
 */
import { describe, expect, it } from "vitest";
import { refusesSync } from "../helpers/refuses.js";
import {
  BatchwiseError,
  DTypeError,
  jit,
  KeyError,
  lazyStack,
  padSequence,
  ShapeError,
  stack,
  tensor,
  TensorDict,
  unpadSequence,
  zeros,
  type Tensor,
} from "../../src/index.js";

/** `(4; 3)` and `(4;)` float32 entries under batch size [4]. */
const td4 = (): TensorDict => new TensorDict({ obs: zeros([4], [3]), reward: zeros([4], []) }, [4]);
// Values deliberately of the wrong type reach the API through `any`.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const bad = (v: unknown): any => v;

type Entry = readonly [name: string, error: typeof BatchwiseError, message: RegExp, run: () => unknown];

const CORPUS: readonly Entry[] = [
  // keys
  [
    "set with a number key",
    KeyError,
    /^TensorDict\.set: a key must be a string or an array of strings, got number 5/,
    () => td4().set(bad(5), zeros([4], [])),
  ],
  [
    "set with null key",
    KeyError,
    /^TensorDict\.set: a key must be .* got null/,
    () => td4().set(bad(null), zeros([4], [])),
  ],
  [
    "set with a number in the key path",
    KeyError,
    /^TensorDict\.set: key path entry 1 must be a string, got number 5/,
    () => td4().set(bad(["a", 5]), zeros([4], [])),
  ],
  [
    "set with an empty key path",
    KeyError,
    /^TensorDict\.set: an empty key path names no entry/,
    () => td4().set([], zeros([4], [])),
  ],
  [
    "set through a tensor entry",
    KeyError,
    /^TensorDict\.set: \("obs", "x"\) goes through "obs", which is \(4; 3\)/,
    () => td4().set(["obs", "x"], zeros([4], [])),
  ],
  [
    "get with a symbol key",
    KeyError,
    /^TensorDict\.get: a key must be .* got symbol/,
    () => td4().get(bad(Symbol("k"))),
  ],
  [
    "getTensor with an object key",
    KeyError,
    /^TensorDict\.getTensor: a key must be .* got an object/,
    () => td4().getTensor(bad({})),
  ],
  [
    "getTensor of a missing key",
    KeyError,
    /^TensorDict\.getTensor: no key "missing" \(keys: "obs", "reward"\)/,
    () => td4().getTensor("missing"),
  ],
  [
    "getDict of a tensor",
    KeyError,
    /^TensorDict\.getDict: "obs" is \(4; 3\), not a TensorDict/,
    () => td4().getDict("obs"),
  ],
  ["has with undefined", KeyError, /^TensorDict\.has: a key must be .* got undefined/, () => td4().has(bad(undefined))],
  ["delete with a number", KeyError, /^TensorDict\.delete: a key must be .* got number 1/, () => td4().delete(bad(1))],
  ["select a missing key", KeyError, /^TensorDict\.select: no key "missing"/, () => td4().select("missing")],
  ["select a number", KeyError, /^TensorDict\.select: a key must be .* got number 7/, () => td4().select(bad(7))],
  ["exclude null", KeyError, /^TensorDict\.exclude: a key must be .* got null/, () => td4().exclude(bad(null))],
  [
    "flattenKeys with an empty separator",
    KeyError,
    /^TensorDict\.flattenKeys: separator must be a non-empty string, got string ""/,
    () => td4().flattenKeys(""),
  ],
  [
    "unflattenKeys with a number separator",
    KeyError,
    /^TensorDict\.unflattenKeys: separator must be a non-empty string, got number 5/,
    () => td4().unflattenKeys(bad(5)),
  ],
  [
    "flattenKeys collision",
    KeyError,
    /^TensorDict\.flattenKeys: two entries flatten to "a\.b"/,
    () => new TensorDict({ "a.b": zeros([4], []), a: { b: zeros([4], []) } }, [4]).flattenKeys(),
  ],
  // values
  [
    "set a number",
    ShapeError,
    /^TensorDict\.set: "a" must be a Tensor, a JaggedTensor, a TensorDict or a plain object of them, got number 5/,
    () => td4().set("a", bad(5)),
  ],
  ["set null", ShapeError, /^TensorDict\.set: "a" must be .* got null/, () => td4().set("a", bad(null))],
  [
    "set an array of tensors",
    ShapeError,
    /^TensorDict\.set: "a" must be .* got an array of 1/,
    () => td4().set("a", bad([zeros([4], [])])),
  ],
  [
    "set a class instance",
    ShapeError,
    /^TensorDict\.set: "a" must be .* got a Date/,
    () => td4().set("a", bad(new Date(0))),
  ],
  [
    "set a tensor of another batch size",
    ShapeError,
    /^TensorDict\.set: batch dimension mismatch, got batchSize=\[4\] and "a" \(5;\)/,
    () => td4().set("a", zeros([5], [])),
  ],
  // constructor
  [
    "source a string",
    ShapeError,
    /^TensorDict: source must be a plain object of entries, got string "abc"/,
    () => new TensorDict(bad("abc")),
  ],
  [
    "source a tensor",
    ShapeError,
    /^TensorDict: source must be a plain object of entries, got Tensor \(4;\) float32/,
    () => new TensorDict(bad(zeros([4], []))),
  ],
  [
    "batchSize a string",
    ShapeError,
    /^TensorDict: batchSize must be an array of sizes, got string "4"/,
    () => new TensorDict({}, bad("4")),
  ],
  ["batchSize NaN", ShapeError, /^TensorDict: batchSize \[NaN\] must hold sizes >= 0/, () => new TensorDict({}, [NaN])],
  ["batchSize -2", ShapeError, /^TensorDict: batchSize \[-2\] must hold sizes >= 0/, () => new TensorDict({}, [-2])],
  [
    "cyclic source",
    ShapeError,
    /^TensorDict: the source is cyclic: entry "self" contains an object it is inside of/,
    () => {
      const s: Record<string, unknown> = { x: zeros([4], []) };
      s["inner"] = { self: s };
      return new TensorDict(bad(s), [4]);
    },
  ],
  [
    "source nested 5000 levels deep",
    ShapeError,
    /^TensorDict: the source nests plain objects more than 1000 levels deep/,
    () => {
      let s: Record<string, unknown> = { x: zeros([], []) };
      for (let i = 0; i < 5000; i++) s = { d: s };
      return new TensorDict(bad(s));
    },
  ],
  // methods
  [
    "apply with a non-function",
    DTypeError,
    /^TensorDict\.apply: fn must be a function, got string "x"/,
    () => td4().apply(bad("x")),
  ],
  [
    "apply returning a number",
    DTypeError,
    /^TensorDict\.apply: fn must return a Tensor, got number 1 for "obs" \(4; 3\)/,
    () => td4().apply(bad(() => 1)),
  ],
  [
    "apply with options null",
    DTypeError,
    /^TensorDict\.apply: options must be an object, got null/,
    () => td4().apply((x) => x, bad(null)),
  ],
  [
    "apply to another batch size",
    ShapeError,
    /^TensorDict\.apply: batch dimension mismatch, fn returned \(2; 3\) for "obs" \(4; 3\), whose batch shape does not start with batchSize=\[4\]/,
    () => td4().apply((x) => x.batchSlice(0, 0, 2)),
  ],
  [
    "batchIndex out of range",
    ShapeError,
    /^TensorDict\.batchIndex: index 9 is out of range for dim 0 of batchSize \[4\]/,
    () => td4().batchIndex(0, 9),
  ],
  [
    "batchIndex dim out of range",
    ShapeError,
    /^TensorDict\.batchIndex: dim 3 is out of range for batchSize of 1 dims/,
    () => td4().batchIndex(3, 0),
  ],
  [
    "batchIndex index a string",
    ShapeError,
    /^TensorDict\.batchIndex: index 1 is out of range/,
    () => td4().batchIndex(0, bad("1")),
  ],
  [
    "batchSlice start NaN",
    ShapeError,
    /^TensorDict\.batchSlice: start must be an integer, got number NaN/,
    () => td4().batchSlice(0, NaN),
  ],
  [
    "batchSlice stop 1.5",
    ShapeError,
    /^TensorDict\.batchSlice: stop must be an integer, got number 1\.5/,
    () => td4().batchSlice(0, 0, 1.5),
  ],
  [
    "batchSlice step 0",
    ShapeError,
    /^TensorDict\.batchSlice: step must be a positive integer, got number 0/,
    () => td4().batchSlice(0, 0, 2, 0),
  ],
  [
    "batchReshape of a string",
    ShapeError,
    /^TensorDict\.batchReshape: shape must be an array of sizes, got string "4"/,
    () => td4().batchReshape(bad("4")),
  ],
  [
    "batchReshape to the wrong size",
    ShapeError,
    /^TensorDict\.batchReshape: cannot reshape batchSize \[4\] to \[3\]/,
    () => td4().batchReshape([3]),
  ],
  [
    "batchExpand of null",
    ShapeError,
    /^TensorDict\.batchExpand: shape must be an array of sizes, got null/,
    () => td4().batchExpand(bad(null)),
  ],
  [
    "batchExpand a non-1 dim",
    ShapeError,
    /^TensorDict\.batchExpand: cannot expand batchSize \[4\] to \[5\]/,
    () => td4().batchExpand([5]),
  ],
  [
    "batchSqueeze a dim of 4",
    ShapeError,
    /^TensorDict\.batchSqueeze: dim 0 of batchSize \[4\] is not 1/,
    () => td4().batchSqueeze(0),
  ],
  [
    "batchUnsqueeze dim 5",
    ShapeError,
    /^TensorDict\.batchUnsqueeze: dim 5 is out of range/,
    () => td4().batchUnsqueeze(5),
  ],
  [
    "pad with a number",
    ShapeError,
    /^TensorDict\.pad: pad_size must be an array of integers, got number 5/,
    () => td4().pad(bad(5)),
  ],
  [
    "pad with a string value",
    DTypeError,
    /^TensorDict\.pad: value must be a number, got string "x"/,
    () => td4().pad([0, 1], bad("x")),
  ],
  [
    "pad of odd length",
    ShapeError,
    /^TensorDict\.pad: pad_size must have an even number of dimensions, got 1 entries/,
    () => td4().pad([1]),
  ],
  [
    "split with null",
    ShapeError,
    /^TensorDict\.split: size must be a positive integer or an array of sizes, got null/,
    () => td4().split(bad(null)),
  ],
  [
    "split with 0",
    ShapeError,
    /^TensorDict\.split: split size must be a positive integer, got 0/,
    () => td4().split(0),
  ],
  [
    "split sizes that do not add up",
    ShapeError,
    /^TensorDict\.split: split sizes \[1, 2\] do not add up to dim 0 of batchSize \[4\]/,
    () => td4().split([1, 2]),
  ],
  [
    "keys with options null",
    DTypeError,
    /^TensorDict\.keys: options must be an object, got null/,
    () => td4().keys(bad(null)),
  ],
  [
    "update with a number",
    ShapeError,
    /^TensorDict: source must be a plain object of entries, got number 3/,
    () => td4().update(bad(3)),
  ],
  // containers
  [
    "stack mixing a TensorDict and a tensor",
    ShapeError,
    /^stack: the list mixes TensorDict, Tensor/,
    () => stack(bad([td4(), zeros([4], [])])),
  ],
  [
    "stack TensorDicts with other keys",
    KeyError,
    /^stack: The sets of keys in the tensordicts to stack are exclusive/,
    () => stack([td4(), new TensorDict({ obs: zeros([4], [3]) }, [4])]),
  ],
  [
    "lazyStack of a string",
    DTypeError,
    /^lazyStack: tds must be an array of TensorDicts, got string "x"/,
    () => lazyStack(bad("x")),
  ],
  [
    "lazyStack with options null",
    DTypeError,
    /^lazyStack: options must be an object, got null/,
    () => lazyStack([td4()], 0, bad(null)),
  ],
  ["lazyStack dim 2.5", ShapeError, /^lazyStack: dim 2\.5 is out of range/, () => lazyStack([td4()], 2.5)],
  ["lazyStack of nothing", ShapeError, /^lazyStack: list cannot be empty/, () => lazyStack([])],
  [
    "lazyStack with a tensor item",
    ShapeError,
    /^lazyStack: item 1 is not a TensorDict/,
    () => lazyStack(bad([td4(), zeros([4], [])])),
  ],
  [
    "lazy get with options null",
    DTypeError,
    /^LazyStackedTensorDict\.get: options must be an object, got null/,
    () => lazyStack([td4(), td4()]).get("obs", bad(null)),
  ],
  [
    "lazy get with a number key",
    KeyError,
    /^LazyStackedTensorDict\.get: a key must be .* got number 1/,
    () => lazyStack([td4(), td4()]).get(bad(1)),
  ],
  [
    "lazy member out of range",
    ShapeError,
    /^LazyStackedTensorDict\.member: index 5 is out of range for 2 members/,
    () => lazyStack([td4(), td4()]).member(5),
  ],
  [
    "padSequence returnMask a number",
    KeyError,
    /^padSequence: returnMask: a key must be a string or an array of strings, got number 5/,
    () => padSequence([td4(), td4()], { returnMask: bad(5) }),
  ],
  [
    "padSequence with options a string",
    DTypeError,
    /^padSequence: options must be an object, got string "x"/,
    () => padSequence([td4(), td4()], bad("x")),
  ],
  [
    "unpadSequence with a string mask",
    DTypeError,
    /^unpadSequence: mask must be a Tensor, got string "m"/,
    () => unpadSequence(stack([td4(), td4()]), bad("m")),
  ],
  [
    "unpadSequence without masks",
    KeyError,
    /^unpadSequence: no mask given and padded has no "masks" TensorDict of masks/,
    () => unpadSequence(stack([td4(), td4()])),
  ],
];

describe("bad input to TensorDict", () => {
  it("the corpus has distinct entries", () => {
    expect(new Set(CORPUS.map(([name]) => name)).size).toBe(CORPUS.length);
    expect(CORPUS.length).toBeGreaterThanOrEqual(45);
  });

  for (const [name, Err, message, run] of CORPUS) {
    it(name, () => refusesSync(run, Err, message));
  }
});

describe("keys that are special to JS objects are entries like any other", () => {
  const SPECIAL = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "prototype"];
  const x = (v: number): Tensor => tensor([v, v], { batchDim: 1 });

  it("set, get, keys and toObject keep __proto__ and the rest as own entries", () => {
    const td = new TensorDict({}, [2]);
    SPECIAL.forEach((k, i) => td.set(k, x(i)));
    expect(td.keys()).toEqual(SPECIAL);
    SPECIAL.forEach((k, i) => expect(td.getTensor(k).toArraySync()).toEqual([i, i]));
    const obj = td.toObject();
    // The prototype is untouched and every key is an own, enumerable property.
    expect(Object.getPrototypeOf(obj)).toBe(Object.prototype);
    expect(Object.keys(obj)).toEqual(SPECIAL);
    SPECIAL.forEach((k, i) =>
      expect((Object.getOwnPropertyDescriptor(obj, k)!.value as Tensor).toArraySync()).toEqual([i, i]),
    );
  });

  it("a source object with an own __proto__ key builds the same TensorDict, and toObject round-trips", () => {
    const source = Object.fromEntries(SPECIAL.map((k, i) => [k, x(i)]));
    const td = new TensorDict(source, [2]);
    expect(td.keys()).toEqual(SPECIAL);
    const again = new TensorDict(td.toObject(), [2]);
    expect(again.keys()).toEqual(SPECIAL);
    expect(again.getTensor("__proto__").toArraySync()).toEqual([0, 0]);
    // A null-prototype source works too.
    const bare = Object.create(null) as Record<string, Tensor>;
    bare["__proto__"] = x(7);
    expect(new TensorDict(bare, [2]).getTensor("__proto__").toArraySync()).toEqual([7, 7]);
  });

  it("nested: set through a __proto__ dict, flattenKeys and unflattenKeys, select, exclude, update, nested toObject", () => {
    const td = new TensorDict({}, [2]);
    td.set(["__proto__", "constructor"], x(1));
    td.set(["toString", "__proto__"], x(2));
    expect(td.keys({ includeNested: true, leavesOnly: true })).toEqual([
      ["__proto__", "constructor"],
      ["toString", "__proto__"],
    ]);
    const flat = td.flattenKeys();
    expect(flat.keys()).toEqual(["__proto__.constructor", "toString.__proto__"]);
    expect(flat.unflattenKeys().getTensor(["__proto__", "constructor"]).toArraySync()).toEqual([1, 1]);
    expect(td.select(["toString", "__proto__"]).keys({ includeNested: true, leavesOnly: true })).toEqual([
      ["toString", "__proto__"],
    ]);
    expect(td.exclude("__proto__").keys()).toEqual(["toString"]);
    const obj = td.toObject();
    expect(Object.keys(obj)).toEqual(["__proto__", "toString"]);
    expect(Object.keys(Object.getOwnPropertyDescriptor(obj, "__proto__")!.value as object)).toEqual(["constructor"]);
    const up = new TensorDict({}, [2]).update(obj as never);
    expect(up.getTensor(["toString", "__proto__"]).toArraySync()).toEqual([2, 2]);
  });

  it("through jit and lazy stacks", () => {
    const td = new TensorDict(
      Object.fromEntries([
        ["__proto__", x(3)],
        ["constructor", x(4)],
      ]),
      [2],
    );
    const f = jit((d: TensorDict) => d.apply((t) => t.mul(2)));
    const out = f(td);
    expect(out.keys()).toEqual(["__proto__", "constructor"]);
    expect(out.getTensor("__proto__").toArraySync()).toEqual([6, 6]);
    expect(out.getTensor("constructor").toArraySync()).toEqual([8, 8]);
    const ls = lazyStack([td, td]);
    expect(ls.keys()).toEqual(["__proto__", "constructor"]);
    expect(ls.get("__proto__")!.toString()).toBe("(2,2;)");
  });
});
