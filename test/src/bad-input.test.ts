/**
 * The bad-input corpus for plain tensors, creation, jit/trace, typed tensors and
 * IR text: every entry is a call a user could make by mistake, and each must
 * throw the named `BatchwiseError` subclass, with a message naming the function
 * and the argument, within a second (no raw TypeError/RangeError, no hang, no
 * silently built tensor of shape NaN). The jagged/Kaolin/TensorDict and bundle
 * parts of the corpus live beside their own tests.
 */
import { describe, expect, it } from "vitest";
import { refusesSync } from "../helpers/refuses.js";
import {
  arange,
  baseCat,
  baseStack,
  BatchwiseError,
  batchStack,
  batchCat,
  diag,
  dictSpec,
  DTypeError,
  empty,
  eye,
  fromTypedArray,
  full,
  fullToMandel,
  IRError,
  jit,
  linspace,
  logspace,
  MillerIndex,
  ones,
  parseGraph,
  printGraph,
  Quaternion,
  R2,
  Rot,
  Scalar,
  scalar,
  ShapeError,
  spec,
  SR2,
  SSR4,
  tensor,
  Tensor,
  trace,
  TraceError,
  UnsupportedOpError,
  Vec,
  where,
  zeros,
} from "../../src/index.js";

type ErrorClass = new (...args: never[]) => BatchwiseError;
type Case = readonly [name: string, thunk: () => unknown, cls: ErrorClass, message: RegExp];

/** Loosely typed access, as a JavaScript caller (or a bad cast) would reach the API. */
const any = (v: unknown): never => v as never;

// Fixtures: x is (2; 3) float32, m a (;2,3) matrix, i an int32 and u a uint32 vector.
const x = tensor(
  [
    [1, 2, 3],
    [4, 5, 6],
  ],
  { batchDim: 1 },
);
const m = tensor([
  [1, 2, 3],
  [4, 5, 6],
]);
const i32 = tensor([1, 2, 3], { dtype: "int32" });
const u32 = tensor([1, 2, 3], { dtype: "uint32" });
const f = jit((a: Tensor) => a.mul(2));
const cyclic: unknown[] = [1];
cyclic[0] = cyclic;
let deep: unknown = 1;
for (let k = 0; k < 100; k++) deep = [deep];
const HEADER_240K = `func @f(${"x) -> (".repeat(34000)}\n}`;

const tensorCases: Case[] = [
  // elementwise: operands that are neither Tensors nor numbers, and numbers an integer dtype cannot hold
  ["add a string", () => x.add(any("a")), DTypeError, /^add: y must be a Tensor or a number, got a string \("a"\)/],
  ["add null", () => x.add(any(null)), DTypeError, /^add: y must be a Tensor or a number, got null/],
  ["add an object", () => x.add(any({})), DTypeError, /^add: y must be a Tensor or a number, got an object/],
  ["add undefined", () => x.add(any(undefined)), DTypeError, /^add: y must be .* got undefined/],
  ["sub a bigint", () => x.sub(any(3n)), DTypeError, /^sub: y must be .* got a bigint/],
  ["mul an array", () => x.mul(any([1, 2, 3])), DTypeError, /^mul: y must be .* got an array/],
  ["div a boolean", () => x.div(any(true)), DTypeError, /^div: y must be .* got true/],
  ["pow a typed array", () => x.pow(any(new Float32Array(3))), DTypeError, /^pow: y must be .* got a Float32Array/],
  ["maximum a function", () => x.maximum(any(() => 1)), DTypeError, /^maximum: y must be .* got a function/],
  ["minimum a symbol", () => x.minimum(any(Symbol("s"))), DTypeError, /^minimum: y must be .* got a symbol/],
  ["mod a typed value", () => x.mod(any(Vec.ones([2]))), DTypeError, /^mod: y must be .* got a Vec/],
  ["atan2 a string", () => x.atan2(any("1")), DTypeError, /^atan2: y must be .* got a string/],
  ["eq a string", () => x.eq(any("1")), DTypeError, /^eq: y must be .* got a string/],
  ["lt null", () => x.lt(any(null)), DTypeError, /^lt: y must be .* got null/],
  ["logicalAnd an object", () => x.gt(1).logicalAnd(any({})), DTypeError, /^logicalAnd: y must be .* got an object/],
  ["int32 add 2**40", () => i32.add(2 ** 40), DTypeError, /^add: y = 1099511627776 does not fit int32/],
  ["uint32 add -1", () => u32.add(-1), DTypeError, /^add: y = -1 does not fit uint32/],
  ["int32 ge 2**31", () => i32.ge(2 ** 31), DTypeError, /^ge: y = 2147483648 does not fit int32/],
  ["broadcast mismatch", () => x.add(zeros([3], [3])), ShapeError, /^add: cannot broadcast x \(2; 3\) with y \(3; 3\)/],
  // where / clip / cast
  [
    "where cond not a tensor",
    () => where(any([true]), x, 0),
    DTypeError,
    /^where: cond must be a Tensor, got an array/,
  ],
  [
    "where x a string",
    () => where(x.gt(2), any("a"), 0),
    DTypeError,
    /^where: x must be a Tensor or a number, got a string/,
  ],
  ["where y null", () => where(x.gt(2), x, any(null)), DTypeError, /^where: y must be a Tensor or a number, got null/],
  [
    "where int32 y out of range",
    () => where(i32.gt(1), i32, 2 ** 32),
    DTypeError,
    /^where: y = 4294967296 does not fit int32/,
  ],
  ["clip lo a string", () => x.clip(any("0"), 1), DTypeError, /^clip: lo must be a Tensor or a number, got a string/],
  [
    "clip hi undefined",
    () => x.clip(0, any(undefined)),
    DTypeError,
    /^clip: hi must be a Tensor or a number, got undefined/,
  ],
  ["clip int32 with NaN", () => i32.clip(NaN, 1), DTypeError, /^clip: lo = NaN does not fit int32/],
  ["cast to complex64", () => x.cast(any("complex64")), DTypeError, /^cast: unknown dtype complex64/],
  ["cast to a number", () => x.cast(any(32)), DTypeError, /^cast: unknown dtype 32/],
  // reductions
  [
    "reduce median",
    () => x.reduce(any("median"), {}),
    UnsupportedOpError,
    /^reduce: unknown reduction "median" for x \(2; 3\)/,
  ],
  [
    "reduce with a null spec",
    () => x.reduce("sum", any(null)),
    ShapeError,
    /^sum: the axes spec must be an object, got null/,
  ],
  ["sum axis NaN", () => x.sum(NaN), ShapeError, /^sum: base axis must be an integer, got NaN for x \(2; 3\)/],
  ["sum axis 0.5", () => x.sum(0.5), ShapeError, /^sum: base axis must be an integer, got 0.5/],
  [
    "sum axis a string",
    () => x.sum(any("0")),
    ShapeError,
    /^sum: base axes must be an integer or an array of integers, got a string/,
  ],
  ["sum axis out of range", () => m.sum(2), ShapeError, /^sum: base axis 2 is out of range for x \(;2,3\)/],
  ["sum repeated axis", () => m.sum([0, 0]), ShapeError, /^sum: base axis 0 appears twice in \(0,0\) for x \(;2,3\)/],
  [
    "sum same axis twice via a negative",
    () => m.sum([1, -1]),
    ShapeError,
    /^sum: base axis 1 appears twice in \(1,-1\)/,
  ],
  [
    "mean axes with a string",
    () => m.mean(any([0, "1"])),
    ShapeError,
    /^mean: base axis must be an integer, got a string/,
  ],
  [
    "max keepdim not a boolean",
    () => m.max(0, any({ keepdim: 1 })),
    ShapeError,
    /^max: keepdim must be true or false, got 1/,
  ],
  ["argmax two axes", () => m.argmax(any([0, 1])), ShapeError, /^argmax: needs exactly one axis, got 2 for x \(;2,3\)/],
  [
    "argmin of an empty axis",
    () => zeros([], [0]).argmin(0),
    ShapeError,
    /^argmin: cannot reduce an empty base axis 0 of x \(;0\)/,
  ],
  ["batchSum axis out of range", () => x.batchSum(1), ShapeError, /^sum: batch axis 1 is out of range for x \(2; 3\)/],
  [
    "batchMax repeated axis",
    () => zeros([2, 2], []).batchMax([1, 1]),
    ShapeError,
    /^max: batch axis 1 appears twice in \(1,1\)/,
  ],
  ["batchMean axis NaN", () => x.batchMean(NaN), ShapeError, /^mean: batch axis must be an integer, got NaN/],
  // base shape and movement ops
  [
    "reshape with NaN",
    () => m.reshape([NaN]),
    ShapeError,
    /^reshape: shape \(NaN\) has an invalid size NaN at index 0/,
  ],
  ["reshape not an array", () => m.reshape(any(6)), ShapeError, /^reshape: shape must be an array of sizes, got 6/],
  ["reshape wrong size", () => m.reshape([4]), ShapeError, /^reshape: cannot reshape the base of x \(;2,3\) to \(4\)/],
  [
    "reshape two -1",
    () => m.reshape([-1, -1]),
    ShapeError,
    /^reshape: cannot reshape the base of x \(;2,3\) to \(-1,-1\)/,
  ],
  ["expand to -5", () => x.expand([-5]), ShapeError, /^expand: shape \(-5\) has an invalid size -5 at index 0/],
  [
    "expand a new dim of -1",
    () => x.expand([-1, 3]),
    ShapeError,
    /^expand: shape \(-1,3\) has an invalid size -1 for x \(2; 3\)/,
  ],
  ["expand to 0.5", () => x.expand([0.5]), ShapeError, /^expand: shape \(0.5\) has an invalid size 0.5/],
  ["expand incompatible", () => x.expand([4]), ShapeError, /^expand: cannot expand the base of x \(2; 3\) to \(4\)/],
  ["slice start NaN", () => x.slice(0, NaN), ShapeError, /^slice: start must be an integer, got NaN for x \(2; 3\)/],
  ["slice start 0.5", () => x.slice(0, 0.5), ShapeError, /^slice: start must be an integer, got 0.5/],
  ["slice stop Infinity", () => x.slice(0, 0, Infinity), ShapeError, /^slice: stop must be an integer, got Infinity/],
  ["slice step 0", () => x.slice(0, 0, 3, 0), ShapeError, /^slice: step 0 must be a positive integer/],
  ["slice axis 1 of a vector", () => x.slice(1), ShapeError, /^slice: base axis 1 is out of range for x \(2; 3\)/],
  [
    "select index 3",
    () => x.select(0, 3),
    ShapeError,
    /^select: index 3 is out of range for base axis 0 of x \(2; 3\)/,
  ],
  ["select index NaN", () => x.select(0, NaN), ShapeError, /^select: index must be an integer, got NaN/],
  [
    "permute not a permutation",
    () => m.permute(0, 0),
    ShapeError,
    /^permute: \(0,0\) is not a permutation of the base axes of x \(;2,3\)/,
  ],
  ["permute axis NaN", () => m.permute(NaN, 0), ShapeError, /^permute: base axis must be an integer, got NaN/],
  ["transpose a vector", () => x.transpose(), ShapeError, /^transpose: base axis -2 is out of range for x \(2; 3\)/],
  ["flatten start after end", () => m.flatten(1, 0), ShapeError, /^flatten: start 1 is after end 0 for x \(;2,3\)/],
  ["unsqueeze axis 3", () => x.unsqueeze(3), ShapeError, /^unsqueeze: base axis 3 is out of range for x \(2; 3\)/],
  [
    "squeeze axis a string",
    () => x.squeeze(any("0")),
    ShapeError,
    /^squeeze: base axis must be an integer, got a string/,
  ],
  // batch ops
  [
    "batchExpand NaN",
    () => x.batchExpand([NaN]),
    ShapeError,
    /^batchExpand: shape \(NaN\) has an invalid size NaN at index 0/,
  ],
  [
    "batchExpand -5",
    () => tensor([1, 2, 3], { batchDim: 1 }).batchExpand([-5]),
    ShapeError,
    /^batchExpand: shape \(-5\) has an invalid size -5/,
  ],
  [
    "batchExpand not an array",
    () => x.batchExpand(any("4")),
    ShapeError,
    /^batchExpand: shape must be an array of sizes, got a string/,
  ],
  [
    "batchExpand incompatible",
    () => x.batchExpand([3]),
    ShapeError,
    /^batchExpand: cannot expand the batch of x \(2; 3\) to \(3\): dim 0 is 2 vs 3/,
  ],
  [
    "batchExpand past the element limit",
    () => ones([1], [1]).batchExpand([2 ** 20, 2 ** 12]),
    ShapeError,
    /^batchExpand: the result \(1048576,4096; 1\) would have 4294967296 elements, more than the limit/,
  ],
  [
    "batchReshape with 1.5",
    () => x.batchReshape([1.5]),
    ShapeError,
    /^batchReshape: shape \(1.5\) has an invalid size 1.5/,
  ],
  [
    "batchReshape wrong size",
    () => x.batchReshape([3]),
    ShapeError,
    /^batchReshape: cannot reshape the batch of x \(2; 3\) to \(3\)/,
  ],
  [
    "batchSlice stop NaN",
    () => x.batchSlice(0, 0, NaN),
    ShapeError,
    /^batchSlice: stop must be an integer, got NaN for x \(2; 3\)/,
  ],
  [
    "batchSlice step -1",
    () => x.batchSlice(0, 0, 2, -1),
    ShapeError,
    /^batchSlice: step -1 must be a positive integer/,
  ],
  [
    "batchIndex out of range",
    () => x.batchIndex(0, 2),
    ShapeError,
    /^batchIndex: index 2 is out of range for batch dim 0 of x \(2; 3\)/,
  ],
  ["batchIndex index 0.5", () => x.batchIndex(0, 0.5), ShapeError, /^batchIndex: index must be an integer, got 0.5/],
  [
    "batchUnsqueeze axis 5",
    () => x.batchUnsqueeze(5),
    ShapeError,
    /^batchUnsqueeze: batch axis 5 is out of range for x \(2; 3\)/,
  ],
  [
    "batchSqueeze a size-2 dim",
    () => x.batchSqueeze(0),
    ShapeError,
    /^batch_squeeze: batch dim 0 of x \(2; 3\) is not of size 1/,
  ],
  ["rebatch NaN", () => x.rebatch(NaN), ShapeError, /^rebatch: batchDim NaN does not fit x \(2; 3\) \(rank 2\)/],
  [
    "baseCat not an array",
    () => baseCat(any(x)),
    DTypeError,
    /^baseCat: tensors must be an array of Tensors, got a Tensor/,
  ],
  ["baseCat with a number", () => baseCat([x, any(1)]), DTypeError, /^baseCat: tensors\[1\] must be a Tensor, got 1/],
  ["baseCat of nothing", () => baseCat([]), ShapeError, /^baseCat: needs at least one tensor/],
  [
    "baseStack with null",
    () => baseStack([any(null)]),
    DTypeError,
    /^baseStack: tensors\[0\] must be a Tensor, got null/,
  ],
  // matmul
  ["matmul a number", () => m.matmul(any(2)), DTypeError, /^matmul: y must be a Tensor, got 2 \(x \(;2,3\)\)/],
  ["matmul mismatched", () => m.matmul(m), ShapeError, /^matmul: x \(;2,3\) has 3 columns but y \(;2,3\) has 2 rows/],
  [
    "matmul a scalar",
    () => m.matmul(scalar(2)),
    ShapeError,
    /^matmul: x \(;2,3\) and y \(;\) need at least one base dim each/,
  ],
  [
    "matmul batch mismatch",
    () => zeros([2], [2, 3]).matmul(zeros([3], [3, 2])),
    ShapeError,
    /^matmul: cannot broadcast x \(2; 2,3\) with y \(3; 3,2\): batch dim 0 is 2 vs 3/,
  ],
];

const creationCases: Case[] = [
  // tensor(nested data)
  [
    "tensor with a string",
    () => tensor(any([1, "a"])),
    DTypeError,
    /^tensor: data\[1\] is a string \("a"\); entries must be numbers or booleans/,
  ],
  ["tensor with null", () => tensor(any([1, null])), DTypeError, /^tensor: data\[1\] is null/],
  [
    "tensor with a hole",
    () => tensor(any([1, , 3])),
    DTypeError,
    /^tensor: data\[1\] is undefined \(a hole or a missing element\)/,
  ],
  [
    "tensor with an object deep inside",
    () =>
      tensor(
        any([
          [1, 2],
          [3, {}],
        ]),
      ),
    DTypeError,
    /^tensor: data\[1\]\[1\] is an object/,
  ],
  ["tensor with a bigint", () => tensor(any([1n])), DTypeError, /^tensor: data\[0\] is a bigint/],
  [
    "tensor ragged (short row)",
    () => tensor(any([[1, 2], [3]])),
    ShapeError,
    /^tensor: data\[1\] has 1 entries, but the data has shape \(2,2\)/,
  ],
  [
    "tensor ragged (number for a row)",
    () => tensor(any([[1, 2], 3])),
    ShapeError,
    /^tensor: data\[1\] is 3, but the data has shape \(2,2\)/,
  ],
  [
    "tensor ragged (too deep)",
    () => tensor(any([1, [2]])),
    ShapeError,
    /^tensor: data\[1\] is an array, deeper than the shape \(2\)/,
  ],
  [
    "tensor cyclic",
    () => tensor(any(cyclic)),
    ShapeError,
    /^tensor: data\[0\] is an array that contains itself \(cyclic nesting\)/,
  ],
  ["tensor 100 deep", () => tensor(any(deep)), ShapeError, /^tensor: data is nested deeper than 64 levels/],
  ["tensor a string", () => tensor(any("123")), DTypeError, /^tensor: data is a string/],
  [
    "tensor a list of a typed array",
    () => tensor(any([new Float32Array([1, 2])])),
    DTypeError,
    /^tensor: data\[0\] is a Float32Array \(typed arrays go to fromTypedArray\)/,
  ],
  [
    "tensor rows of typed arrays",
    () => tensor(any([new Float32Array(2)])),
    DTypeError,
    /^tensor: data\[0\] is a Float32Array/,
  ],
  [
    "tensor NaN into int32",
    () => tensor([1, NaN], { dtype: "int32" }),
    DTypeError,
    /^tensor: data\[1\] is NaN, which int32 cannot hold/,
  ],
  [
    "tensor 2**32 into uint32",
    () => tensor([[2 ** 32]], { dtype: "uint32" }),
    DTypeError,
    /^tensor: data\[0\]\[0\] is 4294967296, which uint32 cannot hold/,
  ],
  ["tensor complex64", () => tensor([1], any({ dtype: "complex64" })), DTypeError, /^tensor: unknown dtype complex64/],
  [
    "tensor batchDim too large",
    () => tensor([1, 2], { batchDim: 2 }),
    ShapeError,
    /^tensor: batchDim 2 does not fit shape \(2\)/,
  ],
  ["tensor options a number", () => tensor([1], any(3)), DTypeError, /^tensor: options must be an object, got 3/],
  // fromTypedArray
  [
    "tensor -1 as uint8",
    () => tensor([-1], { dtype: "uint8" }),
    DTypeError,
    /^tensor: data\[0\] is -1, which uint8 cannot hold/,
  ],
  ["uint8 tensor plus 256", () => tensor(new Uint8Array([1])).add(256), DTypeError, /^add: y = 256 does not fit uint8/],
  [
    "int16 tensor bitwiseAnd 0.5",
    () => tensor(new Int16Array([1])).bitwiseAnd(0.5),
    DTypeError,
    /^bitwiseAnd: needs integer operands .* of dtype int16 and y = 0.5/,
  ],
  [
    "fromTypedArray Uint8ClampedArray",
    () => fromTypedArray(any(new Uint8ClampedArray(3)), [3]),
    DTypeError,
    /^fromTypedArray: data is a Uint8ClampedArray/,
  ],
  [
    "fromTypedArray BigInt64Array",
    () => fromTypedArray(any(new BigInt64Array(3)), [3]),
    DTypeError,
    /^fromTypedArray: data is a BigInt64Array/,
  ],
  [
    "fromTypedArray BigUint64Array",
    () => fromTypedArray(any(new BigUint64Array(3)), [3]),
    DTypeError,
    /^fromTypedArray: data is a BigUint64Array/,
  ],
  [
    "fromTypedArray a plain array",
    () => fromTypedArray(any([1, 2, 3]), [3]),
    DTypeError,
    /^fromTypedArray: data is an array; accepted are/,
  ],
  [
    "fromTypedArray a DataView",
    () => fromTypedArray(any(new DataView(new ArrayBuffer(4))), [1]),
    DTypeError,
    /^fromTypedArray: data is a DataView/,
  ],
  [
    "tensor 256 as uint8",
    () => tensor([1, 256], { dtype: "uint8" }),
    DTypeError,
    /^tensor: data\[1\] is 256, which uint8 cannot hold/,
  ],
  [
    "fromTypedArray complex64",
    () => fromTypedArray(new Float32Array(3), [3], any({ dtype: "complex64" })),
    DTypeError,
    /^fromTypedArray: unknown dtype complex64/,
  ],
  [
    "fromTypedArray shape NaN",
    () => fromTypedArray(new Float32Array(3), [NaN]),
    ShapeError,
    /^fromTypedArray: shape \(NaN\) has an invalid size NaN at index 0/,
  ],
  [
    "fromTypedArray shape not filled",
    () => fromTypedArray(new Float32Array(5), [2, 3]),
    ShapeError,
    /^fromTypedArray: 5 values do not fill shape \(2,3\)/,
  ],
  [
    "fromTypedArray batchDim -1",
    () => fromTypedArray(new Float32Array(3), [3], { batchDim: -1 }),
    ShapeError,
    /^fromTypedArray: batchDim -1 does not fit shape \(3\)/,
  ],
  // by shape
  [
    "zeros 2**40",
    () => zeros([2 ** 40], [3]),
    ShapeError,
    /^zeros: the result \(1099511627776; 3\) would have 3298534883328 elements, more than the limit 2147483647/,
  ],
  [
    "ones batch NaN",
    () => ones([NaN], [3]),
    ShapeError,
    /^ones: batchShape \(NaN\) has an invalid size NaN at index 0/,
  ],
  ["empty base -1", () => empty([2], [-1]), ShapeError, /^empty: baseShape \(-1\) has an invalid size -1/],
  ["full value a string", () => full([2], [2], any("1")), DTypeError, /^full: value must be a number, got a string/],
  [
    "full NaN into int32",
    () => full([2], [2], NaN, { dtype: "int32" }),
    DTypeError,
    /^full: value NaN does not fit int32/,
  ],
  [
    "full shape not an array",
    () => full(any(3), [2], 1),
    ShapeError,
    /^full: batchShape must be an array of sizes, got 3/,
  ],
  ["zeros complex64", () => zeros([], [1], any({ dtype: "complex64" })), DTypeError, /^zeros: unknown dtype complex64/],
  ["scalar a string", () => scalar(any("2")), DTypeError, /^scalar: value must be a number, got a string/],
  ["arange stop NaN", () => arange(0, NaN), ShapeError, /^arange: stop must be a finite number, got NaN/],
  ["arange stop Infinity", () => arange(Infinity), ShapeError, /^arange: start must be a finite number, got Infinity/],
  ["arange step 0", () => arange(0, 3, 0), ShapeError, /^arange: step cannot be 0/],
  [
    "arange too many elements",
    () => arange(0, 1, 1e-12),
    ShapeError,
    /^arange: the result \(;1000000000000\) would have 1000000000000 elements/,
  ],
  [
    "arange int32 past 2**31",
    () => arange(2 ** 31 - 2, 2 ** 31 + 2, 1, { dtype: "int32" }),
    DTypeError,
    /^arange: the values 2147483646 … 2147483649 do not fit int32/,
  ],
  ["eye n 2.5", () => eye(2.5), ShapeError, /^eye: n must be an integer, got 2.5/],
  ["eye n -1", () => eye(-1), ShapeError, /^eye: n must be >= 0, got -1/],
  [
    "eye batchShape a string",
    () => eye(2, { batchShape: any("2") }),
    ShapeError,
    /^eye: batchShape must be an array of sizes, got a string/,
  ],
  ["diag a number", () => diag(any(3)), DTypeError, /^diag: x must be a Tensor, got 3/],
  [
    "diag a rank-3 base",
    () => diag(zeros([], [2, 2, 2])),
    ShapeError,
    /^diag: x \(;2,2,2\) must have a base of rank 1 or 2/,
  ],
];

const jitCases: Case[] = [
  ["jit a non-function", () => jit(any(5)), TraceError, /^jit: fn must be a function, got 5/],
  ["jit options a number", () => jit((a: Tensor) => a, any(5)), TraceError, /^jit: options must be an object, got 5/],
  [
    "jit float32 mode",
    () => jit((a: Tensor) => a, any({ float32: "fast" })),
    TraceError,
    /^jit: options.float32 must be "exact" or "relaxed", got a string/,
  ],
  [
    "jit fusion not a boolean",
    () => jit((a: Tensor) => a, any({ fusion: 1 })),
    TraceError,
    /^jit: options.fusion must be true or false, got 1/,
  ],
  [
    "jit name with a space",
    () => jit((a: Tensor) => a, { name: "my fn" }),
    TraceError,
    /^jit: options.name must be a name of letters, digits/,
  ],
  [
    "jit call with a string",
    () => f(any("a")),
    TraceError,
    /^jit: argument 0 is a string \("a"\); arguments and results must be Tensors/,
  ],
  ["jit call with null", () => f(any(null)), TraceError, /^jit: argument 0 is null/],
  ["jit call with a number", () => f(any(3)), TraceError, /^jit: argument 0 is 3/],
  ["jit call with an array of tensors", () => f(any([x])), TraceError, /^jit: argument 0 is an array/],
  ["jit call with a typed tensor", () => f(any(Vec.ones([2]))), TraceError, /^jit: argument 0 is a Vec/],
  [
    "jit call, second argument bad",
    () => jit((a: Tensor, b: Tensor) => a.add(b))(x, any({})),
    TraceError,
    /^jit: argument 1 is an object/,
  ],
  [
    "jit returning a string",
    () => jit((_a: Tensor) => any("a"))(x),
    TraceError,
    /^jit @.*: the function must return Tensors/,
  ],
  [
    "trace a non-function",
    () => trace(any(null), [spec("float32", ["B"], [3])]),
    TraceError,
    /^trace: fn must be a function, got null/,
  ],
  [
    "trace specs not an array",
    () => trace((a: Tensor) => a, any(spec("float32", ["B"], [3]))),
    TraceError,
    /^trace: specs must be an array with one spec per argument, got an object/,
  ],
  [
    "trace spec null",
    () => trace((a: Tensor) => a, [any(null)]),
    TraceError,
    /^trace: spec 0 must be a spec \(spec\(\), jaggedSpec\(\) or dictSpec\(\)\), got null/,
  ],
  [
    "trace spec without base",
    () => trace((a: Tensor) => a, [any({ dtype: "float32", batch: ["B"] })]),
    TraceError,
    /^trace: spec 0.base must be static non-negative sizes, got undefined/,
  ],
  [
    "trace spec base NaN",
    () => trace((a: Tensor) => a, [any({ dtype: "float32", batch: ["B"], base: [NaN] })]),
    TraceError,
    /^trace: spec 0.base must be static non-negative sizes, got \(NaN\)/,
  ],
  [
    "trace spec batch a string",
    () => trace((a: Tensor) => a, [any({ dtype: "float32", batch: "B", base: [3] })]),
    TraceError,
    /^trace: spec 0.batch must be an array of batch labels \(strings\), got a string/,
  ],
  [
    "trace spec dtype complex64",
    () => trace((a: Tensor) => a, [spec(any("complex64"), ["B"], [])]),
    DTypeError,
    /^trace: spec 0 has an unknown dtype complex64/,
  ],
  [
    "trace dict spec entries null",
    () => trace((a: Tensor) => a, [any({ batch: ["B"], entries: null })]),
    TraceError,
    /^trace: spec 0.entries must be an object of specs, got null/,
  ],
  [
    "trace dict spec bad entry",
    () =>
      trace(
        (a: Tensor) => a,
        [any({ batch: ["B"], entries: { obs: { dtype: "float32", batch: ["B"], base: [-1] } } })],
      ),
    TraceError,
    /^trace: spec 0.obs.base must be static non-negative sizes, got \(-1\)/,
  ],
  [
    "spec base a number",
    () => spec("float32", ["B"], any(3)),
    TraceError,
    /^spec: base must be an array of static non-negative sizes, got 3/,
  ],
  [
    "spec batch not an array",
    () => spec("float32", any(5), [3]),
    TraceError,
    /^spec: batch must be an array of batch labels \(strings\), got 5/,
  ],
  [
    "dictSpec entries a string",
    () => dictSpec(["B"], any("x")),
    TraceError,
    /^dictSpec: entries must be an object of specs, got a string/,
  ],
];

const v = Vec.ones([2]);
const r2 = R2.ones([2]);
const typedCases: Case[] = [
  [
    "R2 over a plain array",
    () =>
      new R2(
        any([
          [1, 0, 0],
          [0, 1, 0],
          [0, 0, 1],
        ]),
      ),
    DTypeError,
    /^R2: expected a Tensor, got an array/,
  ],
  ["Vec over the wrong base", () => new Vec(zeros([2], [4])), ShapeError, /^Vec: expected base \(3\), got x \(2; 4\)/],
  [
    "MillerIndex over floats",
    () => new MillerIndex(zeros([], [3])),
    DTypeError,
    /^MillerIndex: expected an integer dtype, got float32/,
  ],
  [
    "R2.zeros batch NaN",
    () => R2.zeros([NaN]),
    ShapeError,
    /^R2.zeros: batchShape \(NaN\) has an invalid size NaN at index 0/,
  ],
  [
    "Vec.ones batch not an array",
    () => Vec.ones(any(3)),
    ShapeError,
    /^Vec.ones: batchShape must be an array of sizes, got 3/,
  ],
  [
    "SR2.full value a string",
    () => SR2.full([2], any("1")),
    DTypeError,
    /^SR2.full: value must be a number, got a string/,
  ],
  [
    "Vec.zeros dtype complex64",
    () => Vec.zeros([2], any({ dtype: "complex64" })),
    DTypeError,
    /^Vec.zeros: unknown dtype complex64/,
  ],
  [
    "Vec.create cyclic",
    () => Vec.create(any(cyclic)),
    ShapeError,
    /^tensor: data\[0\] is an array that contains itself/,
  ],
  ["Vec.create with a string", () => Vec.create(any([1, 2, "3"])), DTypeError, /^tensor: data\[2\] is a string/],
  [
    "Vec.fill with a string",
    () => Vec.fill(1, any("2"), 3),
    DTypeError,
    /^Vec.fill: value 1 must be a number or a Scalar, got a string/,
  ],
  [
    "Vec.fill with a Vec",
    () => Vec.fill(1, any(v), 3),
    DTypeError,
    /^Vec.fill: value 1 must be a number or a Scalar, got a Vec/,
  ],
  ["R2.fill with 2 values", () => R2.fill(any(1), any(2)), ShapeError, /^R2.fill: expected 1, 3, 6 or 9 values, got 2/],
  [
    "SR2.fill with null",
    () => SR2.fill(1, any(null), 3),
    DTypeError,
    /^SR2.fill: value 1 must be a number or a Scalar, got null/,
  ],
  [
    "Scalar.fill a string",
    () => Scalar.fill(any("2")),
    DTypeError,
    /^Scalar.fill: value 0 must be a number or a Scalar, got a string/,
  ],
  [
    "MillerIndex.fill NaN",
    () => MillerIndex.fill(1, NaN, 0),
    DTypeError,
    /^MillerIndex.fill: value 1 = NaN does not fit int32/,
  ],
  [
    "SSR4.identity dtype",
    () => SSR4.identity(any({ dtype: "half" })),
    DTypeError,
    /^SSR4.identity: unknown dtype half/,
  ],
  ["Vec add a string", () => v.add(any("1")), DTypeError, /^add: y must be a typed tensor or a number, got a string/],
  [
    "Vec mul a plain Tensor",
    () => v.mul(any(x)),
    DTypeError,
    /^Vec.mul: y must be a typed tensor or a number, got a Tensor \(wrap a plain Tensor/,
  ],
  ["Vec add an R2", () => v.add(any(r2)), DTypeError, /^Vec.add: y must be a Vec, a Scalar or a number, got an R2/],
  ["Vec.dot a number", () => v.dot(any(1)), DTypeError, /^Vec.dot: v must be a Vec, got 1/],
  ["Vec.cross an R2", () => v.cross(any(r2)), DTypeError, /^Vec.cross: v must be a Vec, got an R2/],
  ["Vec.rotate a Vec", () => v.rotate(any(v)), DTypeError, /^Vec.rotate: r must be one of Rot, R2, got a Vec/],
  [
    "R2.mul a string",
    () => r2.mul(any("2")),
    DTypeError,
    /^R2.mul: y must be a typed tensor or a number, got a string/,
  ],
  ["R2.inner a Vec", () => r2.inner(any(v)), DTypeError, /^R2.inner: b must be an R2, got a Vec/],
  ["R2.skew null", () => R2.skew(any(null)), DTypeError, /^R2.skew: v must be a Vec, got null/],
  ["R2.row 3", () => r2.row(3), ShapeError, /^select: index 3 is out of range for base axis 0 of x \(2; 3,3\)/],
  ["SR2.component 3", () => SR2.ones([2]).component(3, 0), ShapeError, /^SR2.component: i must be in \[0, 2\], got 3/],
  ["Rot.fromMatrix a Vec", () => Rot.fromMatrix(any(v)), DTypeError, /^Rot.fromMatrix: m must be an R2, got a Vec/],
  [
    "Rot.fromEulerAngles convention",
    () => Rot.fromEulerAngles(v, any("xyz")),
    DTypeError,
    /^Rot.fromEulerAngles: Unknown Rot angle_convention xyz/,
  ],
  [
    "Rot.fromEulerAngles angle type",
    () => Rot.fromEulerAngles(v, "kocks", any("turns")),
    DTypeError,
    /^Rot.fromEulerAngles: Rot angle_type must be either 'degrees' or 'radians'/,
  ],
  [
    "Quaternion.fromRot an R2",
    () => Quaternion.fromRot(any(r2)),
    DTypeError,
    /^Quaternion.fromRot: r must be a Rot, got an R2/,
  ],
  [
    "Scalar.pow a string",
    () => Scalar.ones([2]).pow(any("2")),
    DTypeError,
    /^Scalar.pow: y must be a typed tensor or a number, got a string/,
  ],
  [
    "batchIndex with a string",
    () => v.batchIndex([any("a")]),
    ShapeError,
    /^batchIndex: index 0 must be an integer, a \{start, stop, step\} slice, null or "...", got a string/,
  ],
  [
    "batchIndex slice with NaN",
    () => v.batchIndex([{ start: NaN }]),
    ShapeError,
    /^batchIndex: index 0.start must be an integer, got NaN/,
  ],
  ["batchIndex not an array", () => v.batchIndex(any(0)), ShapeError, /^batchIndex: indices must be an array, got 0/],
  ["batchSlice dim NaN", () => v.batchSlice(NaN), ShapeError, /^batchSlice: dim must be an integer, got NaN/],
  [
    "batchStack mixed types",
    () => batchStack<Vec>([v, any(r2)]),
    DTypeError,
    /^batchStack: xs\[1\] is an R2 but xs\[0\] is a Vec/,
  ],
  [
    "batchStack not typed",
    () => batchStack<Vec>([any(x)]),
    DTypeError,
    /^batchStack: xs\[0\] must be a typed tensor, got a Tensor/,
  ],
  ["batchCat of nothing", () => batchCat<Vec>([]), ShapeError, /^batchCat: needs at least one tensor/],
  ["linspace nstep 0", () => linspace(v, v, 0), ShapeError, /^linspace: nstep 0 must be a positive integer/],
  ["linspace end a number", () => linspace(v, any(1), 3), DTypeError, /^linspace: end must be a typed tensor, got 1/],
  [
    "logspace base -10",
    () => logspace(v, v, 3, 0, -10),
    DTypeError,
    /^logspace: base must be a positive finite number, got -10/,
  ],
  ["fullToMandel a Vec", () => fullToMandel(any(v)), DTypeError, /^fullToMandel: t must be a Tensor, got a Vec/],
  ["fullToMandel dim NaN", () => fullToMandel(r2.t, NaN), ShapeError, /^fullToMandel: dim must be an integer, got NaN/],
];

const irCases: Case[] = [
  ["parseGraph a number", () => parseGraph(any(42)), IRError, /^parseGraph: text must be a string, got number/],
  ["parseGraph empty", () => parseGraph(""), IRError, /^line 1: empty text/],
  [
    "parseGraph 240 KB header",
    () => parseGraph(HEADER_240K),
    IRError,
    /^line 1: expected 'func @name\(\.\.\.\) -> \(\.\.\.\) \{', got: func @f\(x\) -> .{60,}… \(238008 characters\)$/,
  ],
  [
    "parseGraph bad parameter",
    () => parseGraph("func @f(x: f32[; 3]) -> (f32[; 3]) {\n  return %x\n}"),
    IRError,
    /^line 1: bad parameter: x: f32\[; 3\]/,
  ],
  [
    "parseGraph bad type",
    () => parseGraph("func @f(%x: i64[; 3]) -> (f32[; 3]) {\n  return %x\n}"),
    IRError,
    /^line 1: not a type: i64\[; 3\]/,
  ],
  [
    "parseGraph base dim NaN",
    () => parseGraph("func @f(%x: f32[; NaN]) -> (f32[; 3]) {\n  return %x\n}"),
    IRError,
    /^line 1: base dims are numbers, got NaN/,
  ],
  [
    "parseGraph huge dims",
    () => parseGraph("func @f(%x: f32[; 99999,99999]) -> (f32[; 3]) {\n  return %x\n}"),
    IRError,
    /^line 1: type: the result \(;99999,99999\) would have 9999800001 elements/,
  ],
  [
    "parseGraph result type differs",
    () => parseGraph("func @f(%x: f32[b0; 3]) -> (i32[; ]) {\n  return %x\n}"),
    IRError,
    /^line 2: result 0 is f32\[b0; 3\] but the header says i32\[; \]/,
  ],
  [
    "parseGraph unknown op (after a blank line)",
    () => parseGraph("func @f(%x: f32[b0; 3]) -> (f32[b0; 3]) {\n\n  %0 = frob %x : f32[b0; 3]\n  return %0\n}"),
    IRError,
    /^line 3: unknown op frob/,
  ],
  [
    "parseGraph unsorted reduce axes",
    () =>
      parseGraph(
        "func @f(%x: f32[; 2,3]) -> (f32[; ]) {\n  %0 = sum %x {baseAxes=[1,0], batchAxes=[], keep=false} : f32[; ]\n  return %0\n}",
      ),
    IRError,
    /^line 2: sum: base axes \(1,0\) must be sorted in increasing order for x \(;2,3\)/,
  ],
  [
    "parseGraph repeated reduce axes",
    () =>
      parseGraph(
        "func @f(%x: f32[b0,b1; 2]) -> (f32[; 2]) {\n  %0 = sum %x {baseAxes=[], batchAxes=[1,1], keep=false} : f32[; 2]\n  return %0\n}",
      ),
    IRError,
    /^line 2: sum: repeated batch axis 1/,
  ],
  [
    "parseGraph a value defined twice",
    () =>
      parseGraph(
        "func @f(%x: f32[; 3]) -> (f32[; 3]) {\n  %0 = neg %x : f32[; 3]\n  %0 = neg %0 : f32[; 3]\n  return %0\n}",
      ),
    IRError,
    /^line 3: %0 is defined twice/,
  ],
  [
    "parseGraph an attribute twice",
    () =>
      parseGraph(
        "func @f(%x: f32[; 3]) -> (f32[; 3]) {\n  %0 = cast %x {dtype=f32, dtype=i32} : f32[; 3]\n  return %0\n}",
      ),
    IRError,
    /^line 2: attribute dtype is given twice/,
  ],
  [
    "parseGraph a bad number",
    () =>
      parseGraph(
        "func @f(%x: f32[; 3]) -> (f32[; 3]) {\n  %0 = slice %x {axis=0, start=0x1, step=1, stop=3} : f32[; 3]\n  return %0\n}",
      ),
    IRError,
    /^line 2: not a number: 0x1/,
  ],
  [
    "parseGraph an empty list entry",
    () =>
      parseGraph("func @f(%x: f32[; 3]) -> (f32[; 3]) {\n  %0 = reshape %x {shape=[3,]} : f32[; 3]\n  return %0\n}"),
    IRError,
    /^line 2: not a number: $/m,
  ],
  [
    "parseGraph a bad string",
    () => parseGraph('func @f(%x: f32[; 3]) -> (f32[; 3]) {\n  %0 = neg %x {a="x} : f32[; 3]\n  return %0\n}'),
    IRError,
    /^line 2: bad string "x/,
  ],
  [
    "parseGraph expand to -5",
    () => parseGraph("func @f(%x: f32[; ]) -> (f32[; 3]) {\n  %0 = expand %x {shape=[-5]} : f32[; 3]\n  return %0\n}"),
    IRError,
    /^line 2: expand: shape \(-5\) has an invalid size -5/,
  ],
  [
    "parseGraph __proto__ attribute",
    () => parseGraph("func @f(%x: f32[; 3]) -> (f32[; 3]) {\n  %0 = neg %x {__proto__=1} : f32[; 3]\n  return %0\n}"),
    IRError,
    /^line 2: neg: bad attributes/,
  ],
  [
    "parseGraph no return",
    () => parseGraph("func @f(%x: f32[; 3]) -> (f32[; 3]) {\n  %0 = neg %x : f32[; 3]"),
    IRError,
    /^line 2: missing 'return' and '\}'/,
  ],
  [
    "parseGraph text after the brace",
    () => parseGraph("func @f(%x: f32[; 3]) -> (f32[; 3]) {\n  return %x\n}\nmore"),
    IRError,
    /^line 4: text after the closing brace/,
  ],
  ["printGraph a string", () => printGraph(any("g")), IRError, /^printGraph: g must be a graph/],
];

const groups: readonly (readonly [string, readonly Case[]])[] = [
  ["tensors", tensorCases],
  ["creation", creationCases],
  ["jit and trace", jitCases],
  ["typed tensors", typedCases],
  ["IR text", irCases],
];

describe("bad-input corpus (tensors, creation, jit/trace, typed tensors, IR text)", () => {
  it("has at least 110 distinct inputs", () => {
    const names = groups.flatMap(([, cases]) => cases.map(([n]) => n));
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBeGreaterThanOrEqual(110);
  });

  for (const [group, cases] of groups) {
    describe(group, () => {
      it.each(cases.map((c) => [c[0], c] as const))("%s", (_name, [, thunk, cls, message]) =>
        refusesSync(thunk, cls, message),
      );
    });
  }
});
