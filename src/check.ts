/**
 * Argument checks shared by the public functions. Each is a few comparisons
 * (nothing allocates unless it throws), and each error names the function and
 * the argument: sizes, bounds and axes are ShapeErrors, values of the wrong
 * kind (a string where a number belongs, an unknown dtype, an unsupported
 * typed array) are DTypeErrors.
 */
import { DTYPES, intRange, isDType, isInt, type DType } from "../ir/dtype.js";
import { BatchwiseError, DTypeError, ShapeError } from "../ir/errors.js";

const TYPED_ARRAY_TAG = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Int8Array.prototype) as object,
  Symbol.toStringTag,
)!.get!;

/**
 * The built-in name of a typed array (`"Float32Array"`, `"Int8Array"`, …), or
 * undefined for anything else. Reads the internal slot, so it works across realms
 * and cannot be faked by a `Symbol.toStringTag` property.
 */
export function typedArrayName(v: unknown): string | undefined {
  return TYPED_ARRAY_TAG.call(v) as string | undefined;
}

/**
 * "a" or "an" before a type name, as it is read aloud: an Int8Array, a Uint16Array,
 * an R2 and an SSR4 (letters read by name), a Rot.
 */
export function article(name: string): string {
  return /^[AEIO]/.test(name) || /^[FHLMNRSX][A-Z0-9]/.test(name) ? "an" : "a";
}

/** A short description of a value for error messages: `NaN`, `a string ("a")`, `null`, `an object`. */
export function describe(v: unknown): string {
  switch (typeof v) {
    case "number":
      return Object.is(v, -0) ? "-0" : String(v);
    case "string":
      return `a string (${JSON.stringify(v.length > 24 ? `${v.slice(0, 24)}…` : v)})`;
    case "bigint":
      return `a bigint (${v}n)`;
    case "boolean":
      return String(v);
    case "undefined":
      return "undefined";
    case "function":
      return "a function";
    case "symbol":
      return "a symbol";
  }
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  const ta = typedArrayName(v);
  if (ta !== undefined) return `${article(ta)} ${ta}`;
  let name: unknown;
  try {
    name = (v as { constructor?: { name?: unknown } }).constructor?.name;
  } catch {
    name = undefined;
  }
  return typeof name === "string" && name !== "" && name !== "Object" ? `${article(name)} ${name}` : "an object";
}

/** An integer argument (finite, no fraction) within [min, max]. */
export function checkInt(op: string, name: string, v: unknown, min = -Infinity, max = Infinity): number {
  if (typeof v !== "number" || !Number.isInteger(v))
    throw new ShapeError(`${op}: ${name} must be an integer, got ${describe(v)}`);
  if (v < min || v > max) {
    const range = max === Infinity ? `>= ${min}` : min === -Infinity ? `<= ${max}` : `in [${min}, ${max}]`;
    throw new ShapeError(`${op}: ${name} must be ${range}, got ${v}`);
  }
  return v;
}

/** A finite number argument. */
export function checkFinite(op: string, name: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isFinite(v))
    throw new ShapeError(`${op}: ${name} must be a finite number, got ${describe(v)}`);
  return v;
}

/**
 * A list of sizes: an array of integers `>= min` (0 for sizes; -1 where the
 * function infers or keeps a dim). `of` (a tensor) is named in errors.
 */
export function checkSizes(
  op: string,
  name: string,
  shape: unknown,
  min = 0,
  of?: { toString(): string },
): readonly number[] {
  if (!Array.isArray(shape))
    throw new ShapeError(`${op}: ${name} must be an array of sizes, got ${describe(shape)}${forX(of)}`);
  for (let i = 0; i < shape.length; i++) {
    const d: unknown = shape[i];
    if (typeof d !== "number" || !Number.isInteger(d) || d < min) {
      const list = shape.map((x: unknown) => (typeof x === "number" ? String(x) : "?")).join(",");
      throw new ShapeError(
        `${op}: ${name} (${list}) has an invalid size ${describe(d)} at index ${i}${min < 0 ? " (sizes are >= 0, or -1)" : ""}${forX(of)}`,
      );
    }
  }
  // Sizes as int32 (small integers to the engine): a size computed as 10 ** 3 is a heap
  // number in V8, and every size, stride and index computed from it would be one too.
  return (shape as number[]).map((d) => (d <= 0x7fffffff ? d | 0 : d));
}

/** ` for x (2; 3)`: the context of a message, formatted only when it is thrown. */
function forX(of: { toString(): string } | undefined): string {
  return of === undefined ? "" : ` for x ${of.toString()}`;
}

/** A dtype name. */
export function checkDType(op: string, dtype: unknown): DType {
  if (!isDType(dtype))
    throw new DTypeError(
      `${op}: unknown dtype ${typeof dtype === "string" ? dtype : describe(dtype)} (dtypes are ${DTYPES.join(", ")})`,
    );
  return dtype;
}

/** An options object (or undefined). */
export function checkOptions<T extends object>(op: string, opts: T | undefined): T | Record<string, never> {
  if (opts === undefined) return {};
  if (typeof opts !== "object" || opts === null || Array.isArray(opts))
    throw new DTypeError(`${op}: options must be an object, got ${describe(opts)}`);
  return opts;
}

/**
 * Whether a JS number stored in `dtype` keeps its value (up to the truncation
 * of a fraction for integers): finite and in range for the integer dtypes
 * (uint8 0 … 255, int8 -128 … 127, …, int32, uint32). Floats and bool take any
 * number (bool is `v != 0`).
 */
export function fitsDType(v: number, dtype: DType): boolean {
  if (!isInt(dtype)) return true;
  const [lo, hi] = intRange(dtype);
  return v > lo - 1 && v < hi + 1;
}

/**
 * Runs `f`, and names `fn` (the public function the user called) in any batchwise error
 * it throws that names another op first (an IR op such as `concat:` or `batch_expand:`,
 * or a library function called inside, such as `random.uniform:`): same class, the
 * message's leading `op:` replaced, the original as `cause`.
 */
export function asCalled<T>(fn: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (!(e instanceof BatchwiseError)) throw e;
    const m = /^([\w.]+): /.exec(e.message);
    if (m === null || m[1] === fn) throw e;
    const E = e.constructor as new (message: string, options?: ErrorOptions) => BatchwiseError;
    throw new E(`${fn}: ${e.message.slice(m[0].length)}`, { cause: e });
  }
}
