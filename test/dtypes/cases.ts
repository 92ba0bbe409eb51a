/**
 * The narrow dtypes' cases, shared by the JS, WebAssembly and WebGPU tests: NumPy's
 * results written out literally (computed once with NumPy 2.4 and pasted here, e.g.
 * `np.array([250, 3, 128, 0, 255], np.uint8) + np.array([10, 7, 128, 1, 255], np.uint8)`),
 * and the documented cast rule (truncate, wrap modulo 2^bits, NaN and ±Infinity to 0)
 * worked out by hand where NumPy's float-to-integer cast is undefined (out of range,
 * NaN, Inf). Each case runs eagerly and inside `jit`.
 */
import type { DType, TypedArray } from "../../ir/dtype.js";
import { fromTypedArray, jit, type Tensor } from "../../src/index.js";

const CTOR = {
  uint8: Uint8Array,
  int8: Int8Array,
  uint16: Uint16Array,
  int16: Int16Array,
  int32: Int32Array,
  uint32: Uint32Array,
  float32: Float32Array,
  float64: Float64Array,
  bool: Uint8Array,
} as const;
type D = keyof typeof CTOR;

/** A 1-D tensor of `v` in dtype `d` (from its own typed array). */
export function t(d: D, v: readonly number[]): Tensor {
  return fromTypedArray(CTOR[d].from(v), [v.length], d === "bool" ? { dtype: "bool" } : {});
}

export interface Case {
  readonly name: string;
  readonly args: readonly [D, readonly number[]][];
  readonly f: (...x: Tensor[]) => Tensor;
  readonly dtype: DType;
  readonly want: readonly number[];
}

const U8A: [D, number[]] = ["uint8", [250, 3, 128, 0, 255]];
const U8B: [D, number[]] = ["uint8", [10, 7, 128, 1, 255]];
const I8A: [D, number[]] = ["int8", [127, -128, -7, 100, -1]];
const I8B: [D, number[]] = ["int8", [1, -1, 2, 100, -128]];
const U16A: [D, number[]] = ["uint16", [65535, 300, 32768]];
const U16B: [D, number[]] = ["uint16", [1, 300, 32768]];
const I16A: [D, number[]] = ["int16", [32767, -32768, -300]];
const I16B: [D, number[]] = ["int16", [1, -1, 300]];
/** float32 sources of the cast rule: NaN, ±Inf, ±0, fractions, out of range both ways. */
const F32: [D, number[]] = [
  "float32",
  [NaN, Infinity, -Infinity, 0, -0, 1.9, -1.9, 300.5, -129.7, 65536.5, 1e10, 33554436, -33554436],
];
const I32: [D, number[]] = ["int32", [70000, -1, 2147483647, -2147483648, 255, 128]];
const U32: [D, number[]] = ["uint32", [4294967295, 65536, 40000]];

const bin = (name: string, a: [D, number[]], b: [D, number[]], f: Case["f"], dtype: DType, want: number[]): Case => ({
  name,
  args: [a, b],
  f,
  dtype,
  want,
});
const un = (name: string, a: [D, number[]], f: Case["f"], dtype: DType, want: number[]): Case => ({
  name,
  args: [a],
  f,
  dtype,
  want,
});

/** Wrap-around arithmetic, bitwise ops and shifts (NumPy's values). */
export const ARITH: readonly Case[] = [
  bin("uint8 add", U8A, U8B, (x, y) => x!.add(y!), "uint8", [4, 10, 0, 1, 254]),
  bin("uint8 sub", U8A, U8B, (x, y) => x!.sub(y!), "uint8", [240, 252, 0, 255, 0]),
  bin("uint8 mul", U8A, U8B, (x, y) => x!.mul(y!), "uint8", [196, 21, 0, 0, 1]),
  bin("uint8 maximum", U8A, U8B, (x, y) => x!.maximum(y!), "uint8", [250, 7, 128, 1, 255]),
  bin("uint8 mod", U8A, U8B, (x, y) => x!.mod(y!), "uint8", [0, 3, 0, 0, 0]),
  bin("uint8 pow", U8A, ["uint8", [2, 5, 1, 3, 2]], (x, y) => x!.pow(y!), "uint8", [36, 243, 128, 0, 1]),
  un("uint8 neg", U8A, (x) => x!.neg(), "uint8", [6, 253, 128, 0, 1]),
  un("uint8 abs", U8A, (x) => x!.abs(), "uint8", [250, 3, 128, 0, 255]),
  bin("uint8 bitwise_xor", U8A, U8B, (x, y) => x!.bitwiseXor(y!), "uint8", [240, 4, 0, 1, 0]),
  bin("uint8 left_shift", U8A, ["uint8", [1, 7, 8, 2, 0]], (x, y) => x!.leftShift(y!), "uint8", [244, 128, 0, 0, 255]),
  bin("uint8 right_shift", U8A, ["uint8", [1, 7, 8, 2, 0]], (x, y) => x!.rightShift(y!), "uint8", [125, 0, 0, 0, 255]),
  bin("uint8 lt", U8A, U8B, (x, y) => x!.lt(y!), "bool", [0, 1, 0, 1, 0]),
  bin("int8 add", I8A, I8B, (x, y) => x!.add(y!), "int8", [-128, 127, -5, -56, 127]),
  bin("int8 sub", I8A, I8B, (x, y) => x!.sub(y!), "int8", [126, -127, -9, 0, 127]),
  bin("int8 mul", I8A, I8B, (x, y) => x!.mul(y!), "int8", [127, -128, -14, 16, -128]),
  bin("int8 maximum", I8A, I8B, (x, y) => x!.maximum(y!), "int8", [127, -1, 2, 100, -1]),
  bin("int8 mod (floor)", I8A, I8B, (x, y) => x!.mod(y!), "int8", [0, 0, 1, 0, -1]),
  bin("int8 pow", I8A, ["int8", [2, 2, 3, 2, 7]], (x, y) => x!.pow(y!), "int8", [1, 0, -87, 16, -1]),
  un("int8 neg", I8A, (x) => x!.neg(), "int8", [-127, -128, 7, -100, 1]),
  un("int8 abs", I8A, (x) => x!.abs(), "int8", [127, -128, 7, 100, 1]),
  bin("int8 bitwise_xor", I8A, I8B, (x, y) => x!.bitwiseXor(y!), "int8", [126, 127, -5, 0, 127]),
  bin("int8 left_shift", I8A, ["int8", [1, 3, 1, 9, 2]], (x, y) => x!.leftShift(y!), "int8", [-2, 0, -14, 0, -4]),
  bin("int8 right_shift", I8A, ["int8", [1, 3, 1, 9, 2]], (x, y) => x!.rightShift(y!), "int8", [63, -16, -4, 0, -1]),
  bin("int8 lt", I8A, I8B, (x, y) => x!.lt(y!), "bool", [0, 1, 1, 0, 0]),
  bin("uint16 add", U16A, U16B, (x, y) => x!.add(y!), "uint16", [0, 600, 0]),
  bin("uint16 mul", U16A, U16B, (x, y) => x!.mul(y!), "uint16", [65535, 24464, 0]),
  bin("uint16 sub", U16B, U16A, (x, y) => x!.sub(y!), "uint16", [2, 0, 0]),
  bin("int16 add", I16A, I16B, (x, y) => x!.add(y!), "int16", [-32768, 32767, 0]),
  bin("int16 mul", I16A, I16B, (x, y) => x!.mul(y!), "int16", [32767, -32768, -24464]),
  bin("int16 sub", I16A, I16B, (x, y) => x!.sub(y!), "int16", [32766, -32767, -600]),
  un("int16 neg", I16A, (x) => x!.neg(), "int16", [-32767, -32768, 300]),
  // A chain: every op wraps (127 + 1 = -128, then * 2 = 0).
  un("int8 (x + 1) * 2", I8A, (x) => x!.add(1).mul(2), "int8", [0, 2, -12, -54, 0]),
  // Weak numbers take the tensor's dtype where they fit (NumPy 2).
  un("uint8 + 1", U8A, (x) => x!.add(1), "uint8", [251, 4, 129, 1, 0]),
];

/** Promotion (NumPy's result types and values). */
export const PROMOTION: readonly Case[] = [
  bin("uint8 + int8", U8A, I8A, (x, y) => x!.add(y!), "int16", [377, -125, 121, 100, 254]),
  bin("uint16 + int16", U16A, I16A, (x, y) => x!.add(y!), "int32", [98302, -32468, 32468]),
  bin("uint8 * uint16", ["uint8", [250, 3, 128]], U16A, (x, y) => x!.mul(y!), "uint16", [65286, 900, 0]),
  bin(
    "uint8 + int32",
    U8A,
    ["int32", [-300, -300, -300, -300, -300]],
    (x, y) => x!.add(y!),
    "int32",
    [-50, -297, -172, -300, -45],
  ),
  bin(
    "int8 + float32",
    I8A,
    ["float32", [0.5, 0.5, 0.5, 0.5, 0.5]],
    (x, y) => x!.add(y!),
    "float32",
    [127.5, -127.5, -6.5, 100.5, -0.5],
  ),
];

/** Casts: the float rule by hand, integer casts as NumPy's `astype` (modular). */
export const CASTS: readonly Case[] = [
  un("float32 -> uint8", F32, (x) => x!.cast("uint8"), "uint8", [0, 0, 0, 0, 0, 1, 255, 44, 127, 0, 0, 4, 252]),
  un("float32 -> int8", F32, (x) => x!.cast("int8"), "int8", [0, 0, 0, 0, 0, 1, -1, 44, 127, 0, 0, 4, -4]),
  un(
    "float32 -> uint16",
    F32,
    (x) => x!.cast("uint16"),
    "uint16",
    [0, 0, 0, 0, 0, 1, 65535, 300, 65407, 0, 58368, 4, 65532],
  ),
  un("float32 -> int16", F32, (x) => x!.cast("int16"), "int16", [0, 0, 0, 0, 0, 1, -1, 300, -129, 0, -7168, 4, -4]),
  un("int32 -> uint8", I32, (x) => x!.cast("uint8"), "uint8", [112, 255, 255, 0, 255, 128]),
  un("int32 -> int8", I32, (x) => x!.cast("int8"), "int8", [112, -1, -1, 0, -1, -128]),
  un("int32 -> uint16", I32, (x) => x!.cast("uint16"), "uint16", [4464, 65535, 65535, 0, 255, 128]),
  un("int32 -> int16", I32, (x) => x!.cast("int16"), "int16", [4464, -1, -1, 0, 255, 128]),
  un("uint32 -> uint8", U32, (x) => x!.cast("uint8"), "uint8", [255, 0, 64]),
  un("uint32 -> int8", U32, (x) => x!.cast("int8"), "int8", [-1, 0, 64]),
  un("uint32 -> uint16", U32, (x) => x!.cast("uint16"), "uint16", [65535, 0, 40000]),
  un("uint32 -> int16", U32, (x) => x!.cast("int16"), "int16", [-1, 0, -25536]),
  un("int8 -> uint8", I8A, (x) => x!.cast("uint8"), "uint8", [127, 128, 249, 100, 255]),
  un("uint8 -> int8", U8A, (x) => x!.cast("int8"), "int8", [-6, 3, -128, 0, -1]),
  un("int16 -> uint16", I16A, (x) => x!.cast("uint16"), "uint16", [32767, 32768, 65236]),
  un("bool -> uint8", ["bool", [1, 0]], (x) => x!.cast("uint8"), "uint8", [1, 0]),
  un("uint8 -> bool", U8A, (x) => x!.cast("bool"), "bool", [1, 1, 1, 0, 1]),
  un("uint8 -> float32", U8A, (x) => x!.cast("float32"), "float32", [250, 3, 128, 0, 255]),
  un("int8 -> float32", I8A, (x) => x!.cast("float32"), "float32", [127, -128, -7, 100, -1]),
  un("int16 -> int32", I16A, (x) => x!.cast("int32"), "int32", [32767, -32768, -300]),
  un("uint16 -> uint32", U16A, (x) => x!.cast("uint32"), "uint32", [65535, 300, 32768]),
  // A float op on narrow integers computes in float32 (as every integer dtype in batchwise).
  un("sqrt(uint8)", ["uint8", [0, 4, 255]], (x) => x!.sqrt(), "float32", [0, 2, Math.fround(Math.sqrt(255))]),
];

/** Reductions: sums and products of the narrow integers are 32-bit (NumPy's: its default integers). */
export const REDUCTIONS: readonly Case[] = [
  un("sum uint8", ["uint8", [200, 100, 255]], (x) => x!.sum(), "uint32", [555]),
  un("sum int8", ["int8", [-128, -128, 127]], (x) => x!.sum(), "int32", [-129]),
  un("prod int8", ["int8", [100, 100]], (x) => x!.prod(), "int32", [10000]),
  un("max uint8", U8A, (x) => x!.max(), "uint8", [255]),
  un("min int16", I16A, (x) => x!.min(), "int16", [-32768]),
  un("argmax int8", I8A, (x) => x!.argmax(0), "int32", [0]),
  un("mean uint8", ["uint8", [255, 254]], (x) => x!.mean(), "float32", [254.5]),
];

export const ALL_CASES: readonly Case[] = [...ARITH, ...PROMOTION, ...CASTS, ...REDUCTIONS];

function compare(c: Case, how: string, got: Tensor, data: TypedArray, errors: string[]): void {
  if (got.dtype !== c.dtype) errors.push(`${c.name} (${how}): dtype ${got.dtype}, expected ${c.dtype}`);
  const a = [...data];
  if (a.length !== c.want.length || a.some((v, i) => !Object.is(v, c.want[i]) && !(v === 0 && c.want[i] === 0)))
    errors.push(`${c.name} (${how}): [${a.join(", ")}], expected [${c.want.join(", ")}]`);
  const ctor = CTOR[c.dtype as D];
  if (ctor !== undefined && !(data instanceof ctor))
    errors.push(`${c.name} (${how}): read back as ${data.constructor.name}, expected ${ctor.name}`);
}

/** Runs every case eagerly and in `jit`; returns the mismatches. */
export async function runCases(cases: readonly Case[]): Promise<string[]> {
  const errors: string[] = [];
  for (const c of cases) {
    const args = c.args.map(([d, v]) => t(d, v));
    const eager = c.f(...args);
    compare(c, "eager", eager, await eager.data(), errors);
    const traced = (await jit((...x: Tensor[]) => c.f(...x)).callAsync(...args)) as Tensor;
    compare(c, "jit", traced, await traced.data(), errors);
  }
  return errors;
}
