/**
 * Bad-input corpus for jagged tensors, the Kaolin helpers and the batch
 * sequence helpers: every entry must throw the listed BatchwiseError subclass
 * (never a raw TypeError/RangeError), with a message that starts with the op's
 * name and names the argument, within 1 s.
 */
import { describe, expect, it } from "vitest";
import { refusesSync } from "../helpers/refuses.js";
import {
  BatchwiseError,
  cat,
  DTypeError,
  fillMaxShape,
  fromPadded,
  fromTypedArray,
  getFirstIdx,
  getShapePerTensor,
  jagged,
  JaggedTensor,
  listToPacked,
  listToPadded,
  packedToList,
  packedToPadded,
  paddedToList,
  paddedToPacked,
  padSequence,
  ShapeError,
  stack,
  tensor,
  tileToPacked,
  unpadSequence,
  zeros,
  type Tensor,
} from "../../src/index.js";

// Fixtures, made fresh per entry so no entry depends on another.
/** Packed values 1..5 `(5;)`. */
const values = (): Tensor => fromTypedArray(Float32Array.from([1, 2, 3, 4, 5]), [5], { batchDim: 1 });
const ints = (o: readonly number[]): Tensor => fromTypedArray(Int32Array.from(o), [o.length], { batchDim: 1 });
/** Rows of 3, 0 and 2 entries: `(3, ~N;)`. */
const j3 = (): JaggedTensor => new JaggedTensor(values(), ints([0, 3, 3, 5]));
/** A padded `(2, 3; 2)` batch. */
const padded23 = (): Tensor => zeros([2, 3], [2]);
/** Two point clouds `(; 2, 3)` and `(; 4, 3)`. */
const clouds = (): Tensor[] => [zeros([], [2, 3]), zeros([], [4, 3])];
const spt = (): Tensor => tensor([[2], [4]], { dtype: "int32" });
const packed6 = (): Tensor => zeros([], [6, 3]);
// Values deliberately of the wrong type reach the API through `any`.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const bad = (v: unknown): any => v;

type Entry = readonly [name: string, error: typeof BatchwiseError, message: RegExp, run: () => unknown];

const CORPUS: readonly Entry[] = [
  // JaggedTensor constructor
  [
    "values not a tensor",
    DTypeError,
    /^jagged: values must be a Tensor, got string "v"/,
    () => new JaggedTensor(bad("v"), ints([0, 5])),
  ],
  [
    "offsets null",
    DTypeError,
    /^jagged: offsets must be a Tensor, got null/,
    () => new JaggedTensor(values(), bad(null)),
  ],
  [
    "offsets a plain array",
    DTypeError,
    /^jagged: offsets must be a Tensor, got an array of 2/,
    () => new JaggedTensor(values(), bad([0, 5])),
  ],
  [
    "float32 offsets",
    DTypeError,
    /^jagged: offsets must be int32 .* dtype float32/,
    () => new JaggedTensor(values(), fromTypedArray(Float32Array.from([0, 5]), [2], { batchDim: 1 })),
  ],
  [
    "offsets with two batch dims",
    ShapeError,
    /^jagged: offsets must be int32 \(B\+1;\), got offsets \(1,2;\)/,
    () => new JaggedTensor(values(), fromTypedArray(Int32Array.from([0, 5]), [1, 2], { batchDim: 2 })),
  ],
  [
    "offsets with a base dim",
    ShapeError,
    /^jagged: offsets must be int32 \(B\+1;\), got offsets \(2; 1\)/,
    () => new JaggedTensor(values(), fromTypedArray(Int32Array.from([0, 5]), [2, 1], { batchDim: 1 })),
  ],
  [
    "offsets without entries",
    ShapeError,
    /^jagged: offsets \(0;\) have no entries/,
    () => new JaggedTensor(values(), ints([])),
  ],
  [
    "values not packed",
    ShapeError,
    /^jagged: values must be packed \(T; base\), got values \(;5\)/,
    () => new JaggedTensor(zeros([], [5]), ints([0, 5])),
  ],
  [
    "host offsets decreasing",
    ShapeError,
    /^jagged: offsets \(4;\) decrease at entry 2 \(3 then 2\)/,
    () => new JaggedTensor(values(), ints([0, 3, 2, 5])),
  ],
  [
    "host offsets not starting at 0",
    ShapeError,
    /^jagged: offsets \(3;\) start at 1, not 0/,
    () => new JaggedTensor(values(), ints([1, 3, 5])),
  ],
  [
    "host offsets ending early",
    ShapeError,
    /^jagged: offsets \(2;\) end at 2, but there are 5 packed values/,
    () => new JaggedTensor(values(), ints([0, 2])),
  ],
  [
    "lazy offsets past the end",
    ShapeError,
    /^segment_reduce\(sum\): jagged offsets \(3;\) end at 7, but there are 5 packed values/,
    () => new JaggedTensor(values(), ints([0, 3, 7]).add(0)).sum().dataSync(),
  ],
  // JaggedTensor methods
  [
    "add a string",
    DTypeError,
    /^jagged add: y must be a JaggedTensor, a Tensor or a number, got string "a"/,
    () => j3().add(bad("a")),
  ],
  ["mul null", DTypeError, /^jagged mul: y must be .* got null/, () => j3().mul(bad(null))],
  ["sub other offsets", ShapeError, /^jagged sub: both operands must share one offsets tensor/, () => j3().sub(j3())],
  [
    "per-row operand of the wrong row count",
    ShapeError,
    /^segment_expand: x \(2;\) must have one batch dim of 3 rows/,
    () => j3().add(zeros([2], [])),
  ],
  ["map with a non-function", DTypeError, /^jagged\.map: fn must be a function, got number 5/, () => j3().map(bad(5))],
  [
    "map returning a number",
    DTypeError,
    /^jagged\.map: the function must return a Tensor, got number 1/,
    () => j3().map(bad(() => 1)),
  ],
  [
    "map dropping the packed dim",
    ShapeError,
    /^jagged\.map: the function must keep the packed batch dim/,
    () => j3().map(() => zeros([], [1])),
  ],
  [
    "toPadded with options 5",
    DTypeError,
    /^jagged\.toPadded: options must be an object, got number 5/,
    () => j3().toPadded(bad(5)),
  ],
  [
    "toPadded maxLength -1",
    ShapeError,
    /^jagged\.toPadded: maxLength must be a non-negative integer, got number -1/,
    () => j3().toPadded({ maxLength: -1 }),
  ],
  [
    "toPadded maxLength NaN",
    ShapeError,
    /^jagged\.toPadded: maxLength must be a non-negative integer, got number NaN/,
    () => j3().toPadded({ maxLength: NaN }),
  ],
  [
    "toPadded maxLength a string",
    ShapeError,
    /^jagged\.toPadded: maxLength must be a non-negative integer, got string "3"/,
    () => j3().toPadded({ maxLength: bad("3") }),
  ],
  [
    "toPadded maxLength below the longest row",
    ShapeError,
    /^jagged\.toPadded: maxLength 1 is smaller than the longest row \(3\)/,
    () => j3().toPadded({ maxLength: 1 }),
  ],
  [
    "toPadded maxLength too large to allocate",
    ShapeError,
    /^jagged\.toPadded: padded \(3,1099511627776;\) would hold/,
    () => j3().toPadded({ maxLength: 2 ** 40 }),
  ],
  [
    "toPadded maxShape a number",
    ShapeError,
    /^jagged\.toPadded: maxShape must be \[n\] .* got number 3/,
    () => j3().toPadded({ maxShape: bad(3) }),
  ],
  [
    "toPadded maxShape of two dims",
    ShapeError,
    /^jagged\.toPadded: maxShape must be \[n\] .* got \[3,3\]/,
    () => j3().toPadded({ maxShape: [3, 3] }),
  ],
  [
    "toPadded paddingSide up",
    ShapeError,
    /^jagged\.toPadded: paddingSide must be "right" or "left", got string "up"/,
    () => j3().toPadded({ paddingSide: bad("up") }),
  ],
  [
    "toPadded paddingValue a string",
    DTypeError,
    /^jagged\.toPadded: paddingValue must be a number or a boolean, got string "0"/,
    () => j3().toPadded({ paddingValue: bad("0") }),
  ],
  ["unpad a string", DTypeError, /^jagged\.unpad: padded must be a Tensor, got string "p"/, () => j3().unpad(bad("p"))],
  // jagged(list)
  [
    "jagged of a string",
    DTypeError,
    /^jagged: list must be an array of Tensors, got string "abc"/,
    () => jagged(bad("abc")),
  ],
  [
    "jagged with a number item",
    DTypeError,
    /^jagged: list\[1\] must be a Tensor, got number 5/,
    () => jagged(bad([zeros([2], []), 5])),
  ],
  ["jagged of nothing", ShapeError, /^jagged: needs at least one tensor/, () => jagged([])],
  ["jagged of a scalar", ShapeError, /^jagged: item 0 \(;\) has no dim to be ragged/, () => jagged([zeros([], [])])],
  [
    "jagged with trailing dims that differ",
    ShapeError,
    /^jagged: item 1 \(;2,4\) does not match item 0 \(;2,3\)/,
    () => jagged([zeros([], [2, 3]), zeros([], [2, 4])]),
  ],
  [
    "jagged with dtypes that differ",
    DTypeError,
    /^jagged: item 1 \(;2\) is int32 but item 0 \(;2\) is float32/,
    () => jagged([zeros([], [2]), zeros([], [2], { dtype: "int32" })]),
  ],
  // fromPadded
  [
    "fromPadded of a number",
    DTypeError,
    /^fromPadded: padded must be a Tensor, got number 5/,
    () => fromPadded(bad(5), [1]),
  ],
  [
    "fromPadded lengths a string",
    DTypeError,
    /^fromPadded: lengths must be an array of integers or an integer Tensor, got string "12"/,
    () => fromPadded(padded23(), bad("12")),
  ],
  [
    "fromPadded lengths NaN",
    ShapeError,
    /^fromPadded: lengths\[1\] = number NaN does not fit padded \(2,3; 2\)/,
    () => fromPadded(padded23(), [1, NaN]),
  ],
  [
    "fromPadded negative length",
    ShapeError,
    /^fromPadded: lengths\[0\] = number -1 does not fit/,
    () => fromPadded(padded23(), [-1, 1]),
  ],
  [
    "fromPadded length past maxN",
    ShapeError,
    /^fromPadded: lengths\[1\] = number 4 does not fit padded \(2,3; 2\) \(0 <= length <= 3\)/,
    () => fromPadded(padded23(), [1, 4]),
  ],
  [
    "fromPadded one length for two rows",
    ShapeError,
    /^fromPadded: 1 lengths for padded \(2,3; 2\)/,
    () => fromPadded(padded23(), [1]),
  ],
  [
    "fromPadded float32 lengths",
    DTypeError,
    /^fromPadded: lengths \(;2\) must be int32 or uint32, got float32/,
    () => fromPadded(padded23(), tensor([1, 2])),
  ],
  [
    "fromPadded of a (B;) tensor",
    ShapeError,
    /^fromPadded: padded must be \(B, maxN; base\), got padded \(3;\)/,
    () => fromPadded(zeros([3], []), [1, 1, 1]),
  ],
  // Kaolin helpers
  [
    "getShapePerTensor of a number",
    DTypeError,
    /^getShapePerTensor: list must be an array of Tensors, got number 5/,
    () => getShapePerTensor(bad(5)),
  ],
  [
    "getShapePerTensor with a string item",
    DTypeError,
    /^getShapePerTensor: list\[1\] must be a Tensor, got string "a"/,
    () => getShapePerTensor(bad([zeros([], [2, 3]), "a"])),
  ],
  ["getShapePerTensor of nothing", ShapeError, /^getShapePerTensor: list cannot be empty/, () => getShapePerTensor([])],
  [
    "getShapePerTensor ranks differ",
    ShapeError,
    /^getShapePerTensor: Expected all tensors to have 2 dimensions but got 3 at index 1/,
    () => getShapePerTensor([zeros([], [2, 3]), zeros([], [1, 2, 3])]),
  ],
  [
    "getFirstIdx of a string",
    DTypeError,
    /^getFirstIdx: numelPerTensor must be an integer Tensor, an array of integers or an Int32Array\/Uint32Array, got string "12"/,
    () => getFirstIdx(bad("12")),
  ],
  [
    "getFirstIdx of a Float32Array",
    DTypeError,
    /^getFirstIdx: numelPerTensor must be .* got a Float32Array/,
    () => getFirstIdx(bad(Float32Array.from([1]))),
  ],
  [
    "getFirstIdx non-integer count",
    ShapeError,
    /^getFirstIdx: numelPerTensor must hold integers, got number 2\.5 at index 1/,
    () => getFirstIdx([1, 2.5]),
  ],
  [
    "getFirstIdx negative count",
    ShapeError,
    /^getFirstIdx: numelPerTensor has a negative count -2 at index 1/,
    () => getFirstIdx([1, -2]),
  ],
  [
    "getFirstIdx float tensor",
    DTypeError,
    /^getFirstIdx: numelPerTensor \(;2\) must be int32 or uint32, got float32/,
    () => getFirstIdx(tensor([1, 2])),
  ],
  [
    "getFirstIdx past int32",
    ShapeError,
    /^getFirstIdx: 2147483648 rows do not fit the int32 index tensors/,
    () => getFirstIdx([2 ** 31, 2 ** 31]),
  ],
  [
    "fillMaxShape of null",
    DTypeError,
    /^fillMaxShape: shapePerTensor must be a Tensor, got null/,
    () => fillMaxShape(bad(null)),
  ],
  [
    "fillMaxShape float shapes",
    DTypeError,
    /^fillMaxShape: shapePerTensor \(;2,1\) must be int32 or uint32, got float32/,
    () => fillMaxShape(tensor([[2], [4]])),
  ],
  [
    "fillMaxShape NaN entry",
    ShapeError,
    /^fillMaxShape: max_shape must hold integers, got number NaN at index 0/,
    () => fillMaxShape(spt(), [NaN]),
  ],
  [
    "fillMaxShape wrong number of dims",
    ShapeError,
    /^fillMaxShape: max_shape \(1,2,3\) has 3 dims, but the tensors have 1 dims/,
    () => fillMaxShape(spt(), [1, 2, 3]),
  ],
  [
    "fillMaxShape past int32",
    ShapeError,
    /^fillMaxShape: dim 0 of max_shape \(1099511627776\) does not fit the int32 shape tensors/,
    () => fillMaxShape(spt(), [2 ** 40]),
  ],
  [
    "listToPadded of a string",
    DTypeError,
    /^listToPadded: list must be an array of Tensors, got string "x"/,
    () => listToPadded(bad("x"), 0),
  ],
  [
    "listToPadded padding a string",
    DTypeError,
    /^listToPadded: paddingValue must be a number or a boolean, got string "0"/,
    () => listToPadded(clouds(), bad("0")),
  ],
  [
    "listToPadded max shape too large",
    ShapeError,
    /^listToPadded: padded \(2; 1073741824,3\) would hold 6442450944 elements/,
    () => listToPadded(clouds(), 0, [2 ** 30]),
  ],
  [
    "listToPadded last dims differ",
    ShapeError,
    /^listToPadded: Expected all tensor to have last dimension 3 but got 4 at index 1/,
    () => listToPadded([zeros([], [2, 3]), zeros([], [2, 4])], 0),
  ],
  [
    "listToPacked dtypes differ",
    DTypeError,
    /^listToPacked: Expected all tensor to have type float32 but got int32 at index 1/,
    () => listToPacked([zeros([], [2, 3]), zeros([], [2, 3], { dtype: "int32" })]),
  ],
  [
    "listToPacked of undefined",
    DTypeError,
    /^listToPacked: list must be an array of Tensors, got undefined/,
    () => listToPacked(bad(undefined)),
  ],
  [
    "paddedToList shapes a string",
    DTypeError,
    /^paddedToList: shapePerTensor must be a Tensor, got string "spt"/,
    () => paddedToList(zeros([], [2, 4, 3]), bad("spt")),
  ],
  [
    "paddedToList shapes that do not fit",
    ShapeError,
    /^paddedToList: shapePerTensor row 1 \(4\) does not fit in padded \(;2,3,3\)/,
    () => paddedToList(zeros([], [2, 3, 3]), spt()),
  ],
  [
    "paddedToPacked of a number",
    DTypeError,
    /^paddedToPacked: padded must be a Tensor, got number 5/,
    () => paddedToPacked(bad(5), spt()),
  ],
  [
    "packedToList firstIdx a string",
    DTypeError,
    /^packedToList: firstIdx must be an integer Tensor, .* got string "0,2,6"/,
    () => packedToList(packed6(), spt(), bad("0,2,6")),
  ],
  [
    "packedToList firstIdx past the rows",
    ShapeError,
    /^packedToList: rows 2\.\.99 of packed \(;6,3\) cannot hold tensor 1/,
    () => packedToList(packed6(), spt(), [0, 2, 99]),
  ],
  [
    "packedToList firstIdx of the wrong length",
    ShapeError,
    /^packedToList: firstIdx has 2 entries, expected B\+1 = 3/,
    () => packedToList(packed6(), spt(), [0, 2]),
  ],
  [
    "packedToPadded packed a string",
    DTypeError,
    /^packedToPadded: packed must be a Tensor, got string "p"/,
    () => packedToPadded(bad("p"), spt(), [0, 2, 6], 0),
  ],
  [
    "packedToPadded padding an object",
    DTypeError,
    /^packedToPadded: paddingValue must be a number or a boolean, got an object/,
    () => packedToPadded(packed6(), spt(), [0, 2, 6], bad({})),
  ],
  [
    "tileToPacked values a string",
    DTypeError,
    /^tileToPacked: values must be a Tensor, got string "v"/,
    () => tileToPacked(bad("v"), [1]),
  ],
  [
    "tileToPacked count mismatch",
    ShapeError,
    /^tileToPacked: values \(;2\) must have shape \(B\) with B = 1/,
    () => tileToPacked(tensor([1, 2]), [1]),
  ],
  // Batch sequence helpers
  ["stack of a string", DTypeError, /^stack: list must be an array of Tensors, got string "x"/, () => stack(bad("x"))],
  [
    "stack dim a string",
    ShapeError,
    /^stack: dim must be an integer, got string "0"/,
    () => stack([zeros([2], [])], bad("0")),
  ],
  [
    "cat with a number item",
    DTypeError,
    /^cat: list\[1\] must be a Tensor, got number 5/,
    () => cat(bad([zeros([2], []), 5])),
  ],
  ["cat dim NaN", ShapeError, /^cat: dim must be an integer, got number NaN/, () => cat([zeros([2], [])], NaN)],
  [
    "padSequence paddingSide middle",
    ShapeError,
    /^padSequence: paddingSide must be "right" or "left", got string "middle"/,
    () => padSequence([zeros([2], [])], { paddingSide: bad("middle") }),
  ],
  [
    "padSequence returnMask a string",
    DTypeError,
    /^padSequence: returnMask must be true or false, got string "yes"/,
    () => padSequence([zeros([2], [])], { returnMask: bad("yes") }),
  ],
  [
    "padSequence padDim 0.5",
    ShapeError,
    /^padSequence: padDim must be an integer, got number 0\.5/,
    () => padSequence([zeros([2], [])], { padDim: 0.5 }),
  ],
  [
    "padSequence of null",
    DTypeError,
    /^padSequence: list must be an array of Tensors, got null/,
    () => padSequence(bad(null)),
  ],
  [
    "unpadSequence mask a string",
    DTypeError,
    /^unpadSequence: mask must be a Tensor, got string "m"/,
    () => unpadSequence(zeros([2, 3], []), bad("m")),
  ],
  [
    "unpadSequence float mask",
    DTypeError,
    /^unpadSequence: mask \(2,3;\) must be bool, got float32/,
    () => unpadSequence(zeros([2, 3], []), zeros([2, 3], [])),
  ],
];

describe("bad input to jagged tensors, Kaolin helpers and sequence helpers", () => {
  it("the corpus has distinct entries", () => {
    expect(new Set(CORPUS.map(([name]) => name)).size).toBe(CORPUS.length);
    expect(CORPUS.length).toBeGreaterThanOrEqual(45);
  });

  for (const [name, Err, message, run] of CORPUS) {
    it(name, () => refusesSync(run, Err, message));
  }
});
