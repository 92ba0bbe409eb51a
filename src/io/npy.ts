/**
 * NumPy's `.npy` format, bytes in and bytes out (a `Uint8Array`, so it works in
 * browsers as well as in Node).
 *
 * A file is the magic `\x93NUMPY`, a version (1.0: a 2-byte little-endian header
 * length; 2.0: 4 bytes; 3.0: 4 bytes and a UTF-8 header), a header that is a
 * Python dict literal `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`
 * padded with spaces and a newline so that the data starts at a multiple of 64
 * bytes, and then the elements, C (row-major) or Fortran (column-major) order.
 * The header is written exactly as NumPy writes it (same keys, spacing, the
 * 21-digit growth room after the shape, the same padding), so the bytes of
 * `saveNpy` equal those of `numpy.save` for the same array.
 */
import { ARRAY_CTOR, type DType, type TypedArray } from "../../ir/dtype.js";
import { BatchwiseError, DTypeError, ShapeError } from "../../ir/errors.js";
import { checkElementCount } from "../../ir/shapes.js";
import { prod } from "../../ir/types.js";
import { checkOptions, describe, typedArrayName } from "../check.js";
import { fromTypedArray } from "../creation.js";
import { Tensor } from "../tensor.js";
import { bytesView, copyBytes } from "./bytes.js";

/** A file that is not a well-formed `.npy` or `.npz` (bad magic, header, length or zip structure). */
export class FileFormatError extends BatchwiseError {
  /** The class name, kept under minification (`e.name` in messages and checks). */
  override name = "FileFormatError";
}

/** The array a `.npy` file holds, before it becomes a tensor: C-order values and the full shape. */
export interface NpyArray {
  /** The element type. */
  readonly dtype: DType;
  /** The full shape (NumPy's; no batch/base split). */
  readonly shape: readonly number[];
  /** The values in C (row-major) order, whatever order the file had. */
  readonly data: TypedArray;
}

/** Options of `loadNpy` and `loadNpz`. */
export interface LoadNpyOptions {
  /** How many leading dims are batch dims (default 0): a `(4, 3)` array with `batchDim: 1` is `(4; 3)`. */
  readonly batchDim?: number;
}

/** Options of `saveNpy` and `saveNpySync`. */
export interface SaveNpyOptions {
  /** Write the elements in Fortran (column-major) order with `'fortran_order': True` (default false). */
  readonly fortranOrder?: boolean;
}

/** The `descr` of each dtype as NumPy writes it on a little-endian machine (the type char and size). */
const DESCR: { readonly [D in DType]: { readonly kind: string; readonly size: number } } = {
  float32: { kind: "f", size: 4 },
  float64: { kind: "f", size: 8 },
  int32: { kind: "i", size: 4 },
  uint32: { kind: "u", size: 4 },
  bool: { kind: "b", size: 1 },
  uint8: { kind: "u", size: 1 },
  int8: { kind: "i", size: 1 },
  uint16: { kind: "u", size: 2 },
  int16: { kind: "i", size: 2 },
  float16: { kind: "f", size: 2 },
};

/** The float value of IEEE half-precision bits. */
function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return sign * m * 2 ** -24;
  if (e === 31) return m === 0 ? sign * Infinity : NaN;
  return sign * (1 + m / 1024) * 2 ** (e - 15);
}

/** The IEEE half-precision bits of `v`, a float16 value (NaN as NumPy's quiet NaN 0x7e00). */
function floatToHalf(v: number): number {
  if (Number.isNaN(v)) return 0x7e00;
  const sign = v < 0 || Object.is(v, -0) ? 0x8000 : 0;
  const a = Math.abs(v);
  if (a === Infinity) return sign | 0x7c00;
  if (a < 2 ** -14) return sign | Math.round(a * 2 ** 24);
  const e = Math.floor(Math.log2(a));
  const m = Math.round((a / 2 ** e - 1) * 1024);
  return m === 1024 ? sign | ((e + 16) << 10) : sign | ((e + 15) << 10) | m;
}

/** NumPy's names for the type codes batchwise has no dtype for, to name them in errors. */
const NUMPY_NAME: Readonly<Record<string, string>> = {
  b1: "bool",
  i1: "int8",
  u1: "uint8",
  i2: "int16",
  u2: "uint16",
  i4: "int32",
  u4: "uint32",
  i8: "int64",
  u8: "uint64",
  f2: "float16",
  f4: "float32",
  f8: "float64",
  f16: "longdouble",
  f12: "longdouble",
  c8: "complex64",
  c16: "complex128",
  c32: "clongdouble",
};

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY
const ALIGN = 64;
/** NumPy leaves room in the header for the growing axis to reach 21 digits. */
const GROWTH_AXIS_MAX_DIGITS = 21;
const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

// ---- the header: a Python literal ----

type PyValue = string | number | boolean | null | PyValue[] | { list: PyValue[] } | Map<string, PyValue>;

/**
 * Parses the Python literal of a header: dicts, tuples, lists, quoted strings,
 * integers, True/False/None. Anything else is a FileFormatError naming `op`.
 */
function parsePyLiteral(op: string, text: string): PyValue {
  let i = 0;
  const fail = (what: string): never => {
    throw new FileFormatError(
      `${op}: the header is not a Python literal NumPy writes (${what} at character ${i}): ${JSON.stringify(text.slice(0, 200))}`,
    );
  };
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const value = (depth: number): PyValue => {
    if (depth > 16) fail("nesting too deep");
    ws();
    const c = text[i];
    if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1);
      if (end < 0) fail("an unterminated string");
      const s = text.slice(i + 1, end);
      if (s.includes("\\")) fail("an escape in a string");
      i = end + 1;
      return s;
    }
    if (c === "{") {
      i++;
      const m = new Map<string, PyValue>();
      for (;;) {
        ws();
        if (text[i] === "}") {
          i++;
          return m;
        }
        const k = value(depth + 1);
        if (typeof k !== "string") fail("a key that is not a string");
        ws();
        if (text[i] !== ":") fail("a missing ':'");
        i++;
        if (m.has(k as string)) fail(`a repeated key '${k as string}'`);
        m.set(k as string, value(depth + 1));
        ws();
        if (text[i] === ",") i++;
        else if (text[i] !== "}") fail("a missing ',' or '}'");
      }
    }
    if (c === "(" || c === "[") {
      const close = c === "(" ? ")" : "]";
      i++;
      const items: PyValue[] = [];
      let comma = false;
      for (;;) {
        ws();
        if (text[i] === close) {
          i++;
          // `(3)` is 3 in Python; only `(3,)` is a tuple.
          if (c === "(" && items.length === 1 && !comma) return items[0]!;
          return c === "(" ? items : { list: items };
        }
        items.push(value(depth + 1));
        ws();
        comma = false;
        if (text[i] === ",") {
          i++;
          comma = true;
        } else if (text[i] !== close) fail(`a missing ',' or '${close}'`);
      }
    }
    const m = /^(-?\d+)L?|^(True|False|None)\b/.exec(text.slice(i, i + 40));
    if (m === null) return fail("an unexpected character");
    i += m[0].length;
    if (m[2] !== undefined) return m[2] === "None" ? null : m[2] === "True";
    return Number(m[1]);
  };
  const v = value(0);
  ws();
  if (i !== text.length) fail("text after the literal");
  return v;
}

/** The dtype and byte order of a `descr`, or a DTypeError naming the NumPy dtype. */
function parseDescr(op: string, descr: PyValue): { dtype: DType; little: boolean } {
  if (typeof descr !== "string") {
    throw new DTypeError(
      `${op}: the array has a structured (record) NumPy dtype ${describePy(descr)}; batchwise loads plain numeric and bool arrays`,
    );
  }
  const m = /^([<>|=]?)([a-zA-Z])(\d*)$/.exec(descr);
  const order = m?.[1] ?? "";
  const code = m === null ? "" : `${m[2]}${m[3]}`;
  const name = NUMPY_NAME[code];
  let dtype: DType | undefined;
  if (code === "f4") dtype = "float32";
  else if (code === "f8") dtype = "float64";
  else if (code === "i4") dtype = "int32";
  else if (code === "u4") dtype = "uint32";
  else if (code === "b1" || code === "?") dtype = "bool";
  else if (code === "u1" || code === "B") dtype = "uint8";
  else if (code === "i1" || code === "b") dtype = "int8";
  else if (code === "u2" || code === "H") dtype = "uint16";
  else if (code === "i2" || code === "h") dtype = "int16";
  else if (code === "f2" || code === "e") dtype = "float16";
  if (dtype === undefined) {
    const what =
      name !== undefined
        ? `${name} ('${descr}')`
        : m !== null && /^[USOMmVa]$/.test(m[2]!)
          ? `'${descr}' (${KIND_NAME[m[2]!]})`
          : `'${descr}'`;
    throw new DTypeError(
      `${op}: NumPy dtype ${what} is not supported: batchwise holds float32, float64, int32, uint32, bool, uint8, int8, uint16, int16 and float16; convert the array first, e.g. a.astype(np.float32) or a.astype(np.int32)`,
    );
  }
  if (DESCR[dtype].size > 1 && order === "|")
    throw new FileFormatError(`${op}: descr '${descr}' has no byte order, but ${dtype} is ${DESCR[dtype].size} bytes`);
  return { dtype, little: order === ">" ? false : order === "=" ? LITTLE_ENDIAN_HOST : true };
}

const KIND_NAME: Readonly<Record<string, string>> = {
  U: "unicode strings",
  S: "byte strings",
  a: "byte strings",
  O: "Python objects",
  M: "datetime64",
  m: "timedelta64",
  V: "raw bytes (void)",
};

function describePy(v: PyValue): string {
  return JSON.stringify(v, (_, x: unknown) => (x instanceof Map ? Object.fromEntries(x) : x));
}

// ---- reading ----

/**
 * Reads a `.npy` file into its dtype, shape and C-order values, without making a
 * tensor (what `loadNpy` does before placing the values on the backend). Fortran
 * order is transposed, big-endian values are swapped. `bytes` is any form of
 * bytes, as for `loadNpy`; the values are always a copy (the caller's bytes are
 * neither kept nor changed).
 */
export function readNpy(bytes: ArrayBufferLike | ArrayBufferView, op = "readNpy"): NpyArray {
  const b = bytesView(op, "bytes", bytes);
  if (b.length < 10 || MAGIC.some((m, k) => b[k] !== m))
    throw new FileFormatError(`${op}: not a .npy file (it does not start with the magic \\x93NUMPY)`);
  const major = b[6]!;
  const minor = b[7]!;
  if ((major !== 1 && major !== 2 && major !== 3) || minor !== 0)
    throw new FileFormatError(`${op}: .npy format version ${major}.${minor} is not supported (1.0, 2.0 and 3.0 are)`);
  const lenBytes = major === 1 ? 2 : 4;
  if (b.length < 8 + lenBytes) throw new FileFormatError(`${op}: the file ends inside its header length`);
  let hlen = 0;
  for (let k = lenBytes - 1; k >= 0; k--) hlen = hlen * 256 + b[8 + k]!;
  const start = 8 + lenBytes;
  if (b.length < start + hlen)
    throw new FileFormatError(`${op}: the header says ${hlen} bytes, but the file ends after ${b.length - start}`);
  const raw = b.subarray(start, start + hlen);
  const text = major === 3 ? new TextDecoder("utf-8", { fatal: false }).decode(raw) : latin1(raw);
  const header = parsePyLiteral(op, text);
  if (!(header instanceof Map))
    throw new FileFormatError(`${op}: the header is not a dict: ${JSON.stringify(text.slice(0, 200))}`);
  const keys = [...header.keys()].sort();
  if (keys.join() !== "descr,fortran_order,shape")
    throw new FileFormatError(
      `${op}: the header must have exactly the keys 'descr', 'fortran_order' and 'shape', got ${keys.map((k) => `'${k}'`).join(", ")}`,
    );
  const { dtype, little } = parseDescr(op, header.get("descr")!);
  const fortran = header.get("fortran_order");
  if (typeof fortran !== "boolean")
    throw new FileFormatError(`${op}: 'fortran_order' must be True or False, got ${describePy(fortran!)}`);
  const shapeV = header.get("shape");
  if (!Array.isArray(shapeV) || shapeV.some((d) => typeof d !== "number" || !Number.isSafeInteger(d) || d < 0))
    throw new FileFormatError(`${op}: 'shape' must be a tuple of sizes >= 0, got ${describePy(shapeV!)}`);
  const shape = shapeV as number[];
  checkElementCount(op, { batch: [], base: shape }, "the array");
  const n = prod(shape);
  const size = DESCR[dtype].size;
  const dataStart = start + hlen;
  const have = b.length - dataStart;
  if (have !== n * size) {
    throw new FileFormatError(
      `${op}: shape (${shape.join(",")}) of ${dtype} needs ${n * size} bytes of data, the file has ${have}${have < n * size ? " (truncated)" : " (extra bytes after the data)"}`,
    );
  }
  // A copy in a buffer of its own (aligned for the typed array, whatever the caller's byteOffset),
  // swapped when the file's byte order is not the host's.
  const copy = copyBytes(b.subarray(dataStart, dataStart + n * size));
  if (size > 1 && little !== LITTLE_ENDIAN_HOST) swapBytes(copy, size);
  let data: TypedArray =
    dtype === "float16"
      ? Float32Array.from(new Uint16Array(copy.buffer, 0, n), halfToFloat)
      : new ARRAY_CTOR[dtype](copy.buffer, 0, n);
  if (dtype === "bool") for (let k = 0; k < n; k++) if (data[k]! > 1) data[k] = 1;
  if (fortran && shape.length > 1) data = transposeOrder(data, shape, "fromFortran");
  return { dtype, shape, data };
}

function latin1(b: Uint8Array): string {
  let s = "";
  for (let k = 0; k < b.length; k++) s += String.fromCharCode(b[k]!);
  return s;
}

function swapBytes(b: Uint8Array, size: number): void {
  for (let k = 0; k < b.length; k += size) {
    for (let a = 0, z = size - 1; a < z; a++, z--) {
      const t = b[k + a]!;
      b[k + a] = b[k + z]!;
      b[k + z] = t;
    }
  }
}

/**
 * Between C and Fortran order for `shape`: element (i0, …, in) sits at
 * Σ ik·cstride_k in C order and at Σ ik·fstride_k in Fortran order, where the C
 * strides grow from the last dim and the Fortran strides from the first.
 */
function transposeOrder(src: TypedArray, shape: readonly number[], dir: "fromFortran" | "toFortran"): TypedArray {
  const n = src.length;
  const out = new (src.constructor as new (n: number) => TypedArray)(n);
  const r = shape.length;
  const fstride: number[] = [];
  let s = 1;
  for (let k = 0; k < r; k++) {
    fstride.push(s);
    s *= shape[k]!;
  }
  const idx = new Array<number>(r).fill(0);
  let f = 0;
  for (let c = 0; c < n; c++) {
    if (dir === "fromFortran") out[c] = src[f]!;
    else out[f] = src[c]!;
    // Next C index: the last dim moves fastest.
    for (let k = r - 1; k >= 0; k--) {
      idx[k]!++;
      f += fstride[k]!;
      if (idx[k]! < shape[k]!) break;
      f -= idx[k]! * fstride[k]!;
      idx[k] = 0;
    }
  }
  return out;
}

function batchDimOf(op: string, opts: LoadNpyOptions, shape: readonly number[]): number {
  const bd: unknown = opts.batchDim ?? 0;
  if (typeof bd !== "number" || !Number.isInteger(bd) || bd < 0 || bd > shape.length)
    throw new ShapeError(`${op}: batchDim ${describe(bd)} does not fit the array's shape (${shape.join(",")})`);
  return bd;
}

/**
 * A tensor from the bytes of a `.npy` file (as `numpy.save` writes them), on the
 * current backend. `bytes` is any form of bytes: a `Uint8Array`, a Node `Buffer`
 * (`readFileSync("a.npy")`), a `DataView` or any typed array (only its
 * `byteLength` bytes from its `byteOffset` are read), an `ArrayBuffer` or a
 * `SharedArrayBuffer`; the values are copied. Every dtype batchwise has loads
 * (`<f4`, `<f8`, `<i4`, `<u4`, `|b1`, `|u1`, `|i1`, `<u2`, `<i2`, and `<f2` where
 * the backend holds float16), little- or big-endian, C or Fortran order; other
 * NumPy dtypes (int64, strings, …) are a DTypeError naming the dtype. `batchDim`
 * splits the shape: a `(4, 3)` array with `{ batchDim: 1 }` is `(4; 3)`.
 *
 * ```ts
 * const pts = loadNpy(readFileSync("points.npy"), { batchDim: 1 }); // (N; 3), in Node
 * const same = loadNpy(await (await fetch("points.npy")).arrayBuffer(), { batchDim: 1 }); // in a browser
 * ```
 */
export function loadNpy(bytes: ArrayBufferLike | ArrayBufferView, opts: LoadNpyOptions = {}): Tensor {
  const o = checkOptions("loadNpy", opts);
  const a = readNpy(bytes, "loadNpy");
  return tensorOf(a, batchDimOf("loadNpy", o, a.shape));
}

/** @internal The tensor of a read array. */
export function tensorOf(a: NpyArray, batchDim: number): Tensor {
  return fromTypedArray(a.data, a.shape, { batchDim, dtype: a.dtype, copy: false });
}

// ---- writing ----

/** `(2, 3)`, `(3,)`, `()`: Python's repr of a tuple of ints. */
function reprShape(shape: readonly number[]): string {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(", ")})`;
}

/**
 * The bytes of a `.npy` file holding `data` (C order) with `shape`, as
 * `numpy.save` writes them (version 1.0 unless the header needs more room).
 */
export function writeNpy(
  dtype: DType,
  shape: readonly number[],
  data: TypedArray,
  opts: SaveNpyOptions = {},
  op = "writeNpy",
): Uint8Array {
  const fortran = opts.fortranOrder ?? false;
  if (typeof fortran !== "boolean")
    throw new DTypeError(`${op}: fortranOrder must be true or false, got ${describe(fortran)}`);
  const { kind, size } = DESCR[dtype];
  const descr = `${size === 1 ? "|" : "<"}${kind}${size}`;
  let header = `{'descr': '${descr}', 'fortran_order': ${fortran ? "True" : "False"}, 'shape': ${reprShape(shape)}, }`;
  if (shape.length > 0) {
    const growing = String(shape[fortran ? shape.length - 1 : 0]);
    header += " ".repeat(GROWTH_AXIS_MAX_DIGITS - growing.length);
  }
  const hlen = header.length + 1; // the closing newline
  let lenBytes = 2;
  let pad = ALIGN - ((MAGIC.length + 2 + lenBytes + hlen) % ALIGN);
  if (hlen + pad >= 65536) {
    lenBytes = 4;
    pad = ALIGN - ((MAGIC.length + 2 + lenBytes + hlen) % ALIGN);
  }
  const total = hlen + pad;
  const dataStart = MAGIC.length + 2 + lenBytes + total;
  const out = new Uint8Array(dataStart + data.length * size);
  out.set(MAGIC, 0);
  out[6] = lenBytes === 2 ? 1 : 2;
  out[7] = 0;
  for (let k = 0; k < lenBytes; k++) out[8 + k] = Math.floor(total / 256 ** k) % 256;
  const h = 8 + lenBytes;
  for (let k = 0; k < header.length; k++) out[h + k] = header.charCodeAt(k);
  out.fill(0x20, h + header.length, dataStart - 1);
  out[dataStart - 1] = 0x0a;
  let ordered = fortran && shape.length > 1 ? transposeOrder(data, shape, "toFortran") : data;
  // float16 values are held in a Float32Array: written as their half-precision bits.
  if (dtype === "float16") ordered = Uint16Array.from(ordered, floatToHalf);
  const bytes = new Uint8Array(ordered.buffer, ordered.byteOffset, ordered.length * size);
  out.set(bytes, dataStart);
  if (size > 1 && !LITTLE_ENDIAN_HOST) swapBytes(out.subarray(dataStart), size);
  return out;
}

function checkTensor(op: string, t: unknown): asserts t is Tensor {
  if (!(t instanceof Tensor)) {
    const hint = typedArrayName(t) !== undefined ? " (wrap a typed array with fromTypedArray first)" : "";
    throw new DTypeError(`${op}: x must be a Tensor, got ${describe(t)}${hint}`);
  }
}

/**
 * The bytes of a `.npy` file holding the tensor, as `numpy.save` writes them
 * (the same header, byte for byte): the full shape, batch dims first (the file
 * does not record the batch/base split; give `batchDim` again when loading).
 * Reads the tensor back from its backend, so it is async; `saveNpySync` is the
 * JS backend's synchronous form. `fortranOrder: true` writes column-major order.
 */
export async function saveNpy(x: Tensor, opts: SaveNpyOptions = {}): Promise<Uint8Array> {
  checkTensor("saveNpy", x);
  const o = checkOptions("saveNpy", opts);
  return writeNpy(x.dtype, x.shape, await x.data(), o, "saveNpy");
}

/** Synchronous `saveNpy`, for tensors on the JS backend. */
export function saveNpySync(x: Tensor, opts: SaveNpyOptions = {}): Uint8Array {
  checkTensor("saveNpySync", x);
  const o = checkOptions("saveNpySync", opts);
  return writeNpy(x.dtype, x.shape, x.dataSync({ copy: false }), o, "saveNpySync");
}
