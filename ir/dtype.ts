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
  "bool",
  "uint32",
  "int32",
  "float32",
  "float64",
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
  return `float16 is not available on ${where}: float16 needs a WebGPU device with the "shader-f16" feature; cast to float32 first`;
}

/** Short names used by the IR printer: `f32[b0; 3,3]`. */
export const DTYPE_SHORT: { readonly [D in DType]: string } = {
  float32: "f32",
  float64: "f64",
  int32: "i32",
  uint32: "u32",
  bool: "bool",
  uint8: "u8",
  int8: "i8",
  uint16: "u16",
  int16: "i16",
  float16: "f16",
};

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

/** Bits and signedness of every integer dtype. */
const INT_INFO: { readonly [D in DType]?: { readonly bits: number; readonly signed: boolean } } = {
  uint8: { bits: 8, signed: false },
  int8: { bits: 8, signed: true },
  uint16: { bits: 16, signed: false },
  int16: { bits: 16, signed: true },
  uint32: { bits: 32, signed: false },
  int32: { bits: 32, signed: true },
};

export function isFloat(d: DType): boolean {
  return d === "float32" || d === "float64" || d === "float16";
}

/** Every integer dtype (not bool): int32, uint32 and the narrow ones. */
export function isInt(d: DType): boolean {
  return INT_INFO[d] !== undefined;
}

/** uint8, int8, uint16, int16. */
export function isNarrowInt(d: DType): d is NarrowInt {
  return d === "uint8" || d === "int8" || d === "uint16" || d === "int16";
}

/** The unsigned integer dtypes (uint8, uint16, uint32). */
export function isUnsigned(d: DType): boolean {
  return INT_INFO[d]?.signed === false;
}

/** The signed integer dtypes (int8, int16, int32). */
export function isSignedInt(d: DType): boolean {
  return INT_INFO[d]?.signed === true;
}

/**
 * The 32-bit dtype a narrow dtype computes in: uint32 for the unsigned narrow integers,
 * int32 for the signed ones, float32 for float16; every other dtype computes in itself.
 */
export function computeDType(d: DType): DType {
  if (d === "float16") return "float32";
  return isNarrowInt(d) ? (isUnsigned(d) ? "uint32" : "int32") : d;
}

/** The smallest and largest value of an integer dtype. */
export function intRange(d: DType): readonly [number, number] {
  const info = INT_INFO[d];
  if (info === undefined) return [-Infinity, Infinity];
  return info.signed ? [-(2 ** (info.bits - 1)), 2 ** (info.bits - 1) - 1] : [0, 2 ** info.bits - 1];
}

export function isDType(x: unknown): x is DType {
  return typeof x === "string" && (DTYPES as readonly string[]).includes(x);
}

const FLOAT_RANK: { readonly [D in DType]?: number } = { float16: 1, float32: 2, float64: 3 };

function intOfWidth(bits: number, signed: boolean): DType {
  if (bits >= 32) return signed ? "int32" : "uint32";
  return ((signed ? "int" : "uint") + String(bits)) as DType;
}

/** The dtype two tensor operands compute in (the lattice of the module comment). */
export function promote(a: DType, b: DType): DType {
  if (a === b) return a;
  if (a === "bool") return b;
  if (b === "bool") return a;
  const fa = FLOAT_RANK[a];
  const fb = FLOAT_RANK[b];
  if (fa !== undefined || fb !== undefined) {
    if (fa === undefined) return b;
    if (fb === undefined) return a;
    return fa >= fb ? a : b;
  }
  const ia = INT_INFO[a]!;
  const ib = INT_INFO[b]!;
  if (ia.signed === ib.signed) return ia.bits >= ib.bits ? a : b;
  const [s, u] = ia.signed ? [ia, ib] : [ib, ia];
  if (s.bits > u.bits) return intOfWidth(s.bits, true);
  return intOfWidth(2 * u.bits, true);
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
  // Rounded from the float64 value directly (rounding through float32 first would round twice).
  const e = Math.max(Math.floor(Math.log2(a)), -14);
  const ulp = 2 ** (e - 10);
  let q = a / ulp;
  const r = Math.round(q);
  // Math.round rounds .5 up; ties go to even.
  q = Math.abs(q % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
  const out = q * ulp;
  return out > 65504 ? Math.sign(v) * Infinity : Math.sign(v) * out;
}

/** Converts a JS number to what storing it in dtype `d` keeps (wrapping like a typed array). */
export function castScalar(v: number, d: DType): number {
  switch (d) {
    case "float64":
      return v;
    case "float32":
      return Math.fround(v);
    case "float16":
      return roundFloat16(v);
    case "int32":
      return Number.isFinite(v) ? Math.trunc(v) | 0 : 0;
    case "uint32":
      return Number.isFinite(v) ? Math.trunc(v) >>> 0 : 0;
    case "uint8":
      return Number.isFinite(v) ? Math.trunc(v) & 0xff : 0;
    case "int8":
      return Number.isFinite(v) ? (Math.trunc(v) << 24) >> 24 : 0;
    case "uint16":
      return Number.isFinite(v) ? Math.trunc(v) & 0xffff : 0;
    case "int16":
      return Number.isFinite(v) ? (Math.trunc(v) << 16) >> 16 : 0;
    case "bool":
      return v !== 0 ? 1 : 0;
  }
}
