/**
 * Element types and the promotion policy.
 *
 * Policy (documented in the README): bool < uint32 < int32 < float32 < float64.
 * A binary op on two tensors computes in the larger of the two dtypes. A plain
 * JS number is "weak" (as in JAX and PyTorch): it takes the tensor's dtype,
 * except that a non-integer number meeting an integer or bool tensor gives float32.
 */
export type DType = "float32" | "float64" | "int32" | "uint32" | "bool";

export const DTYPES: readonly DType[] = ["bool", "uint32", "int32", "float32", "float64"];

/** Short names used by the IR printer: `f32[b0; 3,3]`. */
export const DTYPE_SHORT: { readonly [D in DType]: string } = {
  float32: "f32",
  float64: "f64",
  int32: "i32",
  uint32: "u32",
  bool: "bool",
};

export const DTYPE_FROM_SHORT: Readonly<Record<string, DType>> = Object.fromEntries(
  DTYPES.map((d) => [DTYPE_SHORT[d], d]),
);

const RANK: { readonly [D in DType]: number } = { bool: 0, uint32: 1, int32: 2, float32: 3, float64: 4 };

/**
 * The typed arrays tensors are stored in: Float32Array, Float64Array, Int32Array,
 * Uint32Array, and Uint8Array for bool.
 */
export type TypedArray = Float32Array | Float64Array | Int32Array | Uint32Array | Uint8Array;

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
};

export function isFloat(d: DType): boolean {
  return d === "float32" || d === "float64";
}

export function isInt(d: DType): boolean {
  return d === "int32" || d === "uint32";
}

export function isDType(x: unknown): x is DType {
  return typeof x === "string" && (DTYPES as readonly string[]).includes(x);
}

/** The dtype two tensor operands compute in. */
export function promote(a: DType, b: DType): DType {
  return RANK[a] >= RANK[b] ? a : b;
}

/** The dtype a tensor of dtype `t` and a weak JS number `v` compute in. */
export function promoteWithNumber(t: DType, v: number): DType {
  if (isFloat(t)) return t;
  if (Number.isInteger(v)) return t === "bool" ? "int32" : t;
  return "float32";
}

/** Converts a JS number to what storing it in dtype `d` keeps (wrapping like a typed array). */
export function castScalar(v: number, d: DType): number {
  switch (d) {
    case "float64":
      return v;
    case "float32":
      return Math.fround(v);
    case "int32":
      return Number.isFinite(v) ? Math.trunc(v) | 0 : 0;
    case "uint32":
      return Number.isFinite(v) ? Math.trunc(v) >>> 0 : 0;
    case "bool":
      return v !== 0 ? 1 : 0;
  }
}
