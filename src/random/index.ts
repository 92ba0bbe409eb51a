/**
 * Counter-based random numbers with explicit keys, as JAX's default generator:
 * Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as easy as
 * 1, 2, 3", SC 2011), keyed by a uint32 pair. Every number is a pure function of the
 * key and of its position, built from IR ops (uint32 add, xor and shifts), so:
 *
 * - the JS and WebGPU backends give the same bits (and the same uniforms, which are
 *   exact functions of the bits);
 * - a `jit` function that draws numbers traces once for every batch size: keys are
 *   tensors of base shape `(2,)` and may carry batch dims, one independent stream per
 *   batch element (`random.split(key, B).rebatch(1)` makes B keys eagerly, or pass a
 *   `(B; 2)` key tensor as an argument);
 * - the streams follow JAX with `jax_threefry_partitionable` on (JAX's default since
 *   0.5): value i of a draw of `shape` hashes the counter (0, i) (i the row-major
 *   position), `split(key, n)[i]` and `foldIn(key, i)` are the hash of (0, i), and
 *   32-bit draws use the xor of the two output words.
 */
import { isFloat, type DType } from "../../ir/dtype.js";
import { DTypeError, ShapeError } from "../../ir/errors.js";
import { checkElementCount } from "../../ir/ops.js";
import { prod } from "../../ir/types.js";
import { asCalled, describe } from "../check.js";
import { fromTypedArray } from "../creation.js";
import { argsort } from "../numerics/sort.js";
import { MAX_AXIS_LENGTH } from "../numerics/common.js";
import { baseStack, Tensor, where } from "../tensor.js";

const ROTATIONS: readonly (readonly number[])[] = [
  [13, 15, 26, 6],
  [17, 29, 16, 24],
];
/** Threefry's key-schedule parity constant (Skein's C240 for 32-bit words). */
const PARITY = 0x1bd11bda;

function rotl(x: Tensor, r: number): Tensor {
  return x.leftShift(r).bitwiseOr(x.rightShift(32 - r));
}

function checkKey(op: string, key: unknown): Tensor {
  if (!(key instanceof Tensor)) throw new DTypeError(`${op}: key must be a Tensor, got ${describe(key)}`);
  if (key.dtype !== "uint32") {
    throw new DTypeError(`${op}: key ${key.toString()} must be uint32 (made by random.key), got ${key.dtype}`);
  }
  if (key.baseDim !== 1 || key.baseShape[0] !== 2) {
    throw new ShapeError(`${op}: key ${key.toString()} must have base shape (2) (batch dims allowed)`);
  }
  return key;
}

/**
 * The Threefry-2x32 (20 rounds) hash of the counter pairs `(c0, c1)` under `key`: two
 * uint32 words per pair. `key` is uint32 with base shape `(2,)` (batch dims allowed);
 * `c0` and `c1` are uint32 tensors that broadcast with the key's two words.
 * Checked against Random123's known-answer vectors.
 * @example threefry2x32(tensor([0, 0], { dtype: "uint32" }), c0, c1) // [y0, y1]
 */
export function threefry2x32(key: Tensor, c0: Tensor, c1: Tensor): [Tensor, Tensor] {
  const k = checkKey("threefry2x32", key);
  for (const [name, c] of [
    ["c0", c0],
    ["c1", c1],
  ] as const) {
    if (!(c instanceof Tensor) || c.dtype !== "uint32") {
      throw new DTypeError(`threefry2x32: ${name} must be a uint32 Tensor, got ${describe(c)}`);
    }
  }
  const k0 = k.select(0, 0);
  const k1 = k.select(0, 1);
  return rounds(k0, k1, c0.add(k0), c1.add(k1));
}

/** Threefry-2x32's 20 rounds and 5 key injections from the key words and the counters with the first injection added. */
function rounds(k0: Tensor, k1: Tensor, x0: Tensor, x1: Tensor): [Tensor, Tensor] {
  const ks = [k0, k1, k0.bitwiseXor(k1).bitwiseXor(PARITY)];
  for (let g = 0; g < 5; g++) {
    for (const r of ROTATIONS[g % 2]!) {
      x0 = x0.add(x1);
      x1 = rotl(x1, r).bitwiseXor(x0);
    }
    // Key injection g+1: words (g+1) mod 3 and (g+2) mod 3 of the schedule, plus the injection count.
    x0 = x0.add(ks[(g + 1) % 3]!);
    x1 = x1.add(ks[(g + 2) % 3]!).add(g + 1);
  }
  return [x0, x1];
}

function checkShape(op: string, shape: unknown): readonly number[] {
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
    throw new ShapeError(`${op}: shape must be an array of sizes (integers >= 0), got ${describe(shape)}`);
  }
  checkElementCount(op, { batch: [], base: shape as number[] }, "the shape");
  return shape as number[];
}

/**
 * The two Threefry words for every position of `shape`: counters (0, i), `(batch; shape)`.
 * The first injection `i + k1` is computed with the positions as a base axis, which then
 * moves into the batch (a view), so that the rounds run on a scalar base: their values
 * that are used several times stay inlined and the whole hash fuses into one kernel
 * (with a large base, every round would write a buffer).
 */
function words(op: string, key: Tensor, shape: readonly number[]): [Tensor, Tensor] {
  const k = checkKey(op, key);
  const s = checkShape(op, shape);
  const n = prod(s);
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  const nb = k.batchDim;
  const k0 = k.select(0, 0);
  const k1 = k.select(0, 1);
  const x1 = fromTypedArray(a, [n])
    .add(k1)
    .rebatch(nb + 1); // (batch…, n;)
  const lift = (t: Tensor): Tensor => t.batchUnsqueeze(-1); // (batch…, 1;)
  const [y0, y1] = rounds(lift(k0), lift(k1), lift(k0), x1);
  const back = (y: Tensor): Tensor => y.rebatch(nb).reshape(s);
  return [back(y0), back(y1)];
}

/**
 * A key from an integer seed: the uint32 pair `(hi, lo)` of the seed as a 64-bit integer,
 * `(;2)`, as JAX's `random.key(seed)` / `PRNGKey(seed)`. A negative seed gives
 * `(0, seed mod 2^32)`, as JAX's default 32-bit mode. The seed must be a safe integer.
 * @example random.key(0) // [0, 0]
 */
export function key(seed: number): Tensor {
  if (typeof seed !== "number" || !Number.isSafeInteger(seed)) {
    throw new DTypeError(`random.key: seed must be a safe integer, got ${describe(seed)}`);
  }
  const hi = seed < 0 ? 0 : Math.floor(seed / 2 ** 32);
  const lo = ((seed % 2 ** 32) + 2 ** 32) % 2 ** 32;
  return fromTypedArray(new Uint32Array([hi, lo]), [2]);
}

/**
 * `num` new keys from `key`, `(batch; num, 2)`: key i is the Threefry hash of the counter
 * (0, i), as JAX's `random.split` (partitionable). `split(k, 2)` gives two keys; take one with
 * `.select(0, i)`, or move them into the batch with `.rebatch(k.batchDim + 1)`.
 */
export function split(key: Tensor, num = 2): Tensor {
  if (!Number.isInteger(num) || num < 0) {
    throw new ShapeError(`random.split: num must be an integer >= 0, got ${describe(num)}`);
  }
  const [y0, y1] = words("random.split", key, [num]);
  return baseStack([y0, y1], -1);
}

/**
 * A new key from `key` and an integer `data` (a number in [0, 2^32), or a uint32/int32
 * tensor that broadcasts with the key's batch, e.g. one index per batch element): the
 * Threefry hash of (0, data), as JAX's `random.fold_in`. `foldIn(k, i)` equals `split(k, n)[i]`.
 */
export function foldIn(key: Tensor, data: number | Tensor): Tensor {
  const k = checkKey("random.foldIn", key);
  let d: Tensor;
  if (typeof data === "number") {
    if (!Number.isInteger(data) || data < -(2 ** 31) || data >= 2 ** 32) {
      throw new DTypeError(`random.foldIn: data must be an integer in [-2^31, 2^32), got ${describe(data)}`);
    }
    d = Tensor._const(data >>> 0, "uint32");
  } else if (data instanceof Tensor && (data.dtype === "uint32" || data.dtype === "int32")) {
    d = data.cast("uint32");
  } else {
    throw new DTypeError(`random.foldIn: data must be an integer or an int32/uint32 Tensor, got ${describe(data)}`);
  }
  const [y0, y1] = threefry2x32(k, Tensor._const(0, "uint32"), d);
  return baseStack([y0, y1], -1);
}

/**
 * Uniform random uint32 bits `(batch; shape)`: the xor of the two Threefry words of the
 * counter (0, i) at position i, as JAX's `random.bits` (partitionable).
 */
export function bits(key: Tensor, shape: readonly number[] = []): Tensor {
  const [y0, y1] = words("random.bits", key, shape);
  return y0.bitwiseXor(y1);
}

/** Options of `uniform`. */
export interface UniformOptions {
  /** Lower bound (inclusive), a number or a tensor that broadcasts (default 0). */
  readonly minval?: number | Tensor;
  /** Upper bound (exclusive), a number or a tensor that broadcasts (default 1). */
  readonly maxval?: number | Tensor;
  /** float32 (default) or float64 (JS backend). */
  readonly dtype?: DType;
}

function floatDType(op: string, d: unknown): "float32" | "float64" {
  if (d === undefined) return "float32";
  if (d === "float32" || d === "float64") return d;
  throw new DTypeError(`${op}: dtype must be float32 or float64, got ${describe(d)}`);
}

/** [0, 1) in `dtype` from the key: the float with the top mantissa bits random (JAX's construction, exactly). */
function unit(op: string, key: Tensor, shape: readonly number[], dtype: "float32" | "float64"): Tensor {
  const [y0, y1] = words(op, key, shape);
  if (dtype === "float32") {
    // JAX: bitcast((bits >> 9) | bits(1.0)) - 1, which is exactly (bits >> 9) · 2^-23.
    return y0
      .bitwiseXor(y1)
      .rightShift(9)
      .cast("float32")
      .mul(2 ** -23);
  }
  // 64-bit draws: bits = (y0 << 32) | y1; JAX keeps the top 52 bits: (y0 · 2^20 + (y1 >> 12)) · 2^-52.
  return y0
    .cast("float64")
    .mul(2 ** 20)
    .add(y1.rightShift(12).cast("float64"))
    .mul(2 ** -52);
}

function bound(op: string, name: string, v: unknown, dflt: number, dtype: DType): Tensor | number {
  if (v === undefined) return dflt;
  if (typeof v === "number") return dtype === "float32" ? Math.fround(v) : v;
  if (v instanceof Tensor) return v.cast(dtype);
  throw new DTypeError(`${op}: ${name} must be a number or a Tensor, got ${describe(v)}`);
}

/**
 * Uniform floats in [minval, maxval), `(batch; shape)` with the key's batch dims (and the
 * bounds' if they are tensors): `u · (maxval - minval) + minval`, at least minval, with `u`
 * the top 23 (float32) or 52 (float64) random bits, as JAX's `random.uniform`. The JS and
 * WebGPU backends give the same values.
 * @example random.uniform(random.key(0), [3]) // three float32 values in [0, 1)
 */
export function uniform(key: Tensor, shape: readonly number[] = [], opts: UniformOptions = {}): Tensor {
  const op = "random.uniform";
  if (opts === null || typeof opts !== "object") throw new DTypeError(`${op}: options must be an object`);
  const dtype = floatDType(op, opts.dtype);
  const lo = bound(op, "minval", opts.minval, 0, dtype);
  const hi = bound(op, "maxval", opts.maxval, 1, dtype);
  const u = unit(op, key, shape, dtype);
  const span =
    typeof lo === "number" && typeof hi === "number"
      ? dtype === "float32"
        ? Math.fround(hi - lo)
        : hi - lo
      : (typeof hi === "number" ? Tensor._const(hi, dtype) : hi).sub(lo);
  return u.mul(span).add(lo).maximum(lo);
}

/** The coefficients of Giles' single-precision erfinv ("Approximating the erfinv function", 2010). */
const ERFINV_CENTRAL = [
  2.81022636e-8, 3.43273939e-7, -3.5233877e-6, -4.39150654e-6, 0.00021858087, -0.00125372503, -0.00417768164,
  0.246640727, 1.50140941,
];
const ERFINV_TAIL = [
  -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
  1.00167406, 2.83297682,
];

function horner(coefs: readonly number[], w: Tensor): Tensor {
  let p = w.mul(coefs[0]!).add(coefs[1]!);
  for (const c of coefs.slice(2)) p = p.mul(w).add(c);
  return p;
}

/** The inverse error function on (-1, 1) (Giles' approximation, single precision). */
function erfinv(x: Tensor): Tensor {
  const w = x.neg().add(1).mul(x.add(1)).log().neg();
  const central = horner(ERFINV_CENTRAL, w.sub(2.5));
  const tail = horner(ERFINV_TAIL, w.sqrt().sub(3));
  return where(w.lt(5), central, tail).mul(x);
}

/** Options of `normal`. */
export interface NormalOptions {
  /** float32 (default) or float64 (JS backend). */
  readonly dtype?: DType;
}

/**
 * Standard normal floats `(batch; shape)`, as JAX's `random.normal`: `√2 · erfinv(u)` with
 * `u` uniform in (-1, 1). The inverse error function is Giles' single-precision
 * approximation (relative error about 1e-7; float64 draws get that accuracy too). The
 * uniforms are bit-identical across backends; `log` and `sqrt` may differ in the last
 * bits between JS and WebGPU.
 */
export function normal(key: Tensor, shape: readonly number[] = [], opts: NormalOptions = {}): Tensor {
  const op = "random.normal";
  if (opts === null || typeof opts !== "object") throw new DTypeError(`${op}: options must be an object`);
  const dtype = floatDType(op, opts.dtype);
  // The float just above -1 (JAX: nextafter(-1, 0)), so that erfinv stays finite.
  const lo = dtype === "float32" ? -1 + 2 ** -24 : -1 + 2 ** -53;
  const u = asCalled(op, () => uniform(key, shape, { minval: lo, maxval: 1, dtype }));
  return erfinv(u).mul(Math.SQRT2);
}

/**
 * Bernoulli draws: true with probability `p` (a number or a float tensor that broadcasts),
 * `uniform(key, shape) < p` as JAX's `random.bernoulli`. `shape` defaults to `p`'s base shape.
 */
export function bernoulli(key: Tensor, p: number | Tensor = 0.5, shape?: readonly number[]): Tensor {
  const op = "random.bernoulli";
  let dtype: "float32" | "float64" = "float32";
  if (p instanceof Tensor) dtype = p.dtype === "float64" ? "float64" : "float32";
  else if (typeof p !== "number") throw new DTypeError(`${op}: p must be a number or a Tensor, got ${describe(p)}`);
  const s = shape ?? (p instanceof Tensor ? p.baseShape : []);
  const u = uniform(key, s, { dtype });
  return u.lt(p instanceof Tensor ? (isFloat(p.dtype) ? p : p.cast("float32")) : p);
}

/**
 * A random permutation of `0 … n-1` (int32, `(batch; n)`), as JAX's
 * `random.permutation(key, n)`: the stable argsort of `bits(split(key)[1], [n])` (one
 * sorting round, which is JAX's count for every n up to 1625). `n` is at most 1024, the
 * sort's axis limit.
 */
export function permutation(key: Tensor, n: number): Tensor {
  const op = "random.permutation";
  if (!Number.isInteger(n) || n < 0) throw new ShapeError(`${op}: n must be an integer >= 0, got ${describe(n)}`);
  if (n > MAX_AXIS_LENGTH) {
    throw new ShapeError(`${op}: n = ${n} is more than the sort's axis limit ${MAX_AXIS_LENGTH}`);
  }
  // n <= 1: JAX sorts no round and returns arange(n); the argsort below gives the same.
  const sub = split(checkKey(op, key), 2).select(-2, 1);
  return argsort(bits(sub, [n]));
}
