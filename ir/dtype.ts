/**
 * Element types and the promotion policy.
 *
 * Policy (documented in the README): NumPy's promotion lattice, capped at 32-bit
 * integers. bool is below every dtype; two unsigned or two signed integers give the
 * wider one; an unsigned and a signed integer give the signed one when it is wider,
 * else the signed integer of twice the unsigned width (uint8 + int8 = int16,
 * uint16 + int16 = int32), where batchwise's widest integer, int32, stands for
 * NumPy's int64 (uint32 + int32 = int32); any integer and a float give that float;
 * float32 < float64. A plain JS number is "weak" (as in JAX and PyTorch): it takes
 * the tensor's dtype, except that a non-integer number meeting an integer or bool
 * tensor gives float32.
 *
 * The narrow integers (uint8, int8, uint16, int16) are stored narrow (Uint8Array,
 * Int8Array, Uint16Array, Int16Array) and computed in 32-bit: every op's result is
 * wrapped back into the dtype (NumPy's modular integer arithmetic).
 *
 * float16 exists only on a WebGPU device with the `shader-f16` feature; every other
 * backend refuses it with a DTypeError (see `F16_UNAVAILABLE`).
 */
export type DType =
  | "float32"
  | "float64"
  | "int32"
  | "uint32"
  | "bool"
  // --- narrow dtypes ---
  | "uint8"
  | "int8"
  | "uint16"
  | "int16"
  | "float16";

export const DTYPES: readonly DType[] = [
  "float32",
  "float64",
  "int32",
  "uint32",
  "bool",
  "uint8",
  "int8",
  "uint16",
  "int16",
  "float16",
];

/**
 * The reason float16 cannot run on a backend, for its DTypeError: `where` names the
 * backend (and, for WebGPU, the missing feature).
 */
export function F16_UNAVAILABLE(where: string): string {
  return `float16 is not available on ${where}: it needs a WebGPU device with "shader-f16"; cast to float32 first`;
}

/** Short names used by the IR printer: `f32[b0; 3,3]` (the first letter and the width: f32, u8, i16; bool). */
export const DTYPE_SHORT: { readonly [D in DType]: string } = Object.fromEntries(
  DTYPES.map((d) => [d, d === "bool" ? d : d.replace(/^(.)\D*/, "$1")]),
) as { readonly [D in DType]: string };

export const DTYPE_FROM_SHORT: Readonly<Record<string, DType>> = Object.fromEntries(
  DTYPES.map((d) => [DTYPE_SHORT[d], d]),
);

/**
 * The typed arrays tensors are stored in: Float32Array, Float64Array, Int32Array,
 * Uint32Array, Uint8Array (uint8, and bool as 0/1), Int8Array, Uint16Array, Int16Array.
 * float16 values are held on the host as a Float32Array (each value exactly a float16).
 */
export type TypedArray =
  Float32Array | Float64Array | Int32Array | Uint32Array | Uint8Array | Int8Array | Uint16Array | Int16Array;

export const ARRAY_CTOR: {
  readonly [D in DType]: {
    new (n: number): TypedArray;
    new (a: ArrayLike<number>): TypedArray;
    new (buffer: ArrayBufferLike, byteOffset: number, length: number): TypedArray;
    readonly BYTES_PER_ELEMENT: number;
  };
} = {
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  uint32: Uint32Array,
  bool: Uint8Array,
  uint8: Uint8Array,
  int8: Int8Array,
  uint16: Uint16Array,
  int16: Int16Array,
  float16: Float32Array,
};

/** The narrow integer dtypes: stored in 8 or 16 bits, computed in 32 (see the module comment). */
export type NarrowInt = "uint8" | "int8" | "uint16" | "int16";

/** The bits of an integer dtype (`uint8` 8, …, `int32` 32), or 0 for floats and bool. */
function intBits(d: DType): number {
  return /int/.test(d) ? +d.replace(/\D/g, "") : 0;
}

export function isFloat(d: DType): boolean {
  return d[0] === "f";
}

/** Every integer dtype (not bool): int32, uint32 and the narrow ones. */
export function isInt(d: DType): boolean {
  return intBits(d) > 0;
}

/** uint8, int8, uint16, int16. */
export function isNarrowInt(d: DType): d is NarrowInt {
  return isInt(d) && intBits(d) < 32;
}

/** The unsigned integer dtypes (uint8, uint16, uint32). */
export function isUnsigned(d: DType): boolean {
  return d[0] === "u";
}

/** The signed integer dtypes (int8, int16, int32). */
export function isSignedInt(d: DType): boolean {
  return d[0] === "i";
}

/**
 * The 32-bit dtype a narrow dtype computes in: uint32 for the unsigned narrow integers,
 * int32 for the signed ones, float32 for float16; every other dtype computes in itself.
 */
export function computeDType(d: DType): DType {
  return d === "float16" ? "float32" : isNarrowInt(d) ? (isUnsigned(d) ? "uint32" : "int32") : d;
}

/** The smallest and largest value of an integer dtype (±Infinity for the others). */
export function intRange(d: DType): readonly [number, number] {
  const b = intBits(d);
  return !b ? [-Infinity, Infinity] : isUnsigned(d) ? [0, 2 ** b - 1] : [-(2 ** (b - 1)), 2 ** (b - 1) - 1];
}

export function isDType(x: unknown): x is DType {
  return typeof x === "string" && (DTYPES as readonly string[]).includes(x);
}

/** The dtype two tensor operands compute in (the lattice of the module comment). */
export function promote(a: DType, b: DType): DType {
  if (a === b || b === "bool") return a;
  if (a === "bool") return b;
  // Floats are above every integer; of two floats the wider (the names compare as the widths:
  // "float16" < "float32" < "float64").
  if (isFloat(a) || isFloat(b)) return !isFloat(b) || (isFloat(a) && a > b) ? a : b;
  const [x, y] = [intBits(a), intBits(b)];
  if (isUnsigned(a) === isUnsigned(b)) return x >= y ? a : b;
  const [s, u] = isUnsigned(a) ? [y, x] : [x, y];
  return `int${Math.min(s > u ? s : 2 * u, 32)}` as DType;
}

/** The dtype a tensor of dtype `t` and a weak JS number `v` compute in. */
export function promoteWithNumber(t: DType, v: number): DType {
  if (isFloat(t)) return t;
  if (Number.isInteger(v)) return t === "bool" ? "int32" : t;
  return "float32";
}

/** `v` rounded to the nearest float16 (ties to even), ±Infinity past the range, NaN kept. */
export function roundFloat16(v: number): number {
  if (!Number.isFinite(v) || v === 0) return v;
  const a = Math.abs(v);
  // The float16 spacing at a (subnormals below 2^-14), rounded from the float64 value directly.
  const ulp = 2 ** (Math.max(Math.floor(Math.log2(a)), -14) - 10);
  const q = a / ulp;
  const r = Math.round(q) - (q % 1 === 0.5 && Math.round(q) % 2 ? 1 : 0);
  return Math.sign(v) * (r * ulp > 65504 ? Infinity : r * ulp);
}

/** Converts a JS number to what storing it in dtype `d` keeps (wrapping like a typed array). */
export function castScalar(v: number, d: DType): number {
  if (d === "bool") return v !== 0 ? 1 : 0;
  if (d === "float32") return Math.fround(v);
  if (d === "float16") return roundFloat16(v);
  const b = intBits(d);
  if (!b) return v;
  // Truncate, then keep the low b bits (sign-extended for the signed dtypes); NaN and ±Infinity give 0.
  const t = Number.isFinite(v) ? Math.trunc(v) : 0;
  const s = 32 - b;
  return isUnsigned(d) ? (t << s) >>> s : (t << s) >> s;
}
