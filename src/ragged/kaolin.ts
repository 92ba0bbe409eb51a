/**
 * Kaolin's batching helpers (`kaolin.ops.batch`), camelCased, with Kaolin's
 * semantics and error texts, each text after the name of the op.
 *
 * Layouts, for a list of sub-tensors of shapes `(*shape_i, C)`:
 * - **padded** `(B; *maxShape, C)`: each sub-tensor is padded with a constant on
 *   every dim but the last, then stacked on one batch dim.
 * - **packed** `(; sum_i prod(shape_i), C)`: each sub-tensor reshaped to `(-1, C)`
 *   and concatenated.
 * - **shapePerTensor** `(; B, ndim-1)`: each shape without its last dim.
 * - **firstIdx** `(; B+1)`: row offsets into packed, `firstIdx[0] = 0`.
 *
 * Kaolin tensors have no batch/base split, so a list element is read by its
 * FULL shape whatever its `batchDim`. Kaolin's index tensors are int64; ours are
 * int32 (batchwise has no int64), so a layout may hold at most 2^31-1 rows.
 *
 * These are data-movement helpers. On the JS backend they read their inputs on
 * the host (`dataSync`), copy contiguous runs with `TypedArray.set`, and return
 * realized tensors. When the data lives where the host cannot read it
 * synchronously (WebGPU), they move it with block copies on the device instead
 * (`device.ts`, `kaolin-device.ts`); the shapes, `shapePerTensor` and
 * `firstIdx` are host data either way. They are eager, so they cannot be used inside `jit` (a traced
 * input is a `TraceError`). Where Kaolin returns views (`packedToList`,
 * `paddedToList`), these return copies (on WebGPU, possibly the input buffer).
 */
import { castScalar, isInt, ARRAY_CTOR, type DType, type TypedArray } from "../../ir/dtype.js";
import { DTypeError, ShapeError, TraceError } from "../../ir/errors.js";
import { prod } from "../../ir/types.js";
import { fromTypedArray } from "../creation.js";
import { Tensor } from "../tensor.js";
import { checkElements, describeValue, paddingArg, tensorArg, tensorList } from "./check.js";
import {
  allOnHost,
  concatRows,
  finish,
  hostInts,
  hostTensor,
  hostValues,
  onHost,
  outputStorage,
  resplit,
  uninitialized,
} from "./device.js";
import { emptyRows, padOnDevice, slotsOnDevice, tileOnDevice } from "./kaolin-device.js";

/** A padding value; it is cast to the output dtype (`true`/`false` for bool, as Kaolin's `False`). */
export type PaddingValue = number | boolean;

/** A list of integers: an integer tensor (read by its full shape), a plain array or an Int32Array/Uint32Array. */
export type IntsLike = Tensor | readonly number[] | Int32Array | Uint32Array;

const INT32_MAX = 2 ** 31 - 1;

// ------------------------------------------------------------------ host helpers

/** The full shape of an eager tensor; inside `jit` its batch sizes are unknown. */
function concreteShape(op: string, t: Tensor, what: string): readonly number[] {
  // Without batch dims the base shape is the full shape (no copy: these run per list element).
  if (t.batchDim === 0) return t.baseShape;
  const shape = t.shape;
  if (shape.some((d) => d < 0)) {
    throw new TraceError(
      `${op}: ${what} ${t.toString()} is traced; Kaolin's batch helpers are eager and cannot run inside jit`,
    );
  }
  return shape;
}

/** The tensor's storage, read without a copy (callers never write to it). */
const NO_COPY = { copy: false } as const;

function hostData(t: Tensor): TypedArray {
  return t.dataSync(NO_COPY);
}

function output(data: TypedArray, shape: readonly number[], batchDim: number, dtype: DType): Tensor {
  return fromTypedArray(data, shape, { batchDim, dtype, copy: false });
}

/** The integers of `x`, read-only (a plain array is returned as it is, after its check). */
function readInts(op: string, x: IntsLike, what: string): ArrayLike<number> {
  if (x instanceof Int32Array || x instanceof Uint32Array) return x;
  if (!Array.isArray(x) && !(x instanceof Tensor)) {
    throw new DTypeError(
      `${op}: ${what} must be an integer Tensor, an array of integers or an Int32Array/Uint32Array, got ${describeValue(x)}`,
    );
  }
  if (Array.isArray(x)) {
    const list = x as readonly unknown[];
    for (let i = 0; i < list.length; i++) {
      const v = list[i];
      if (typeof v !== "number" || !Number.isInteger(v))
        throw new ShapeError(`${op}: ${what} must hold integers, got ${describeValue(v)} at index ${i}`);
    }
    return x as readonly number[];
  }
  const t = x as Tensor;
  if (!isInt(t.dtype)) throw new DTypeError(`${op}: ${what} ${t.toString()} must be int32 or uint32, got ${t.dtype}`);
  concreteShape(op, t, what);
  return Array.from(hostValues(op, t, what));
}

/** Reads shapePerTensor `(B, K)` into one flat Int32Array plus its row count and width. */
function readShapes(op: string, shapePerTensor: Tensor): { shapes: Int32Array; count: number; width: number } {
  tensorArg(op, shapePerTensor, "shapePerTensor");
  const shape = concreteShape(op, shapePerTensor, "shapePerTensor");
  if (shape.length !== 2)
    throw new ShapeError(`${op}: shapePerTensor ${shapePerTensor.toString()} must have 2 dims (B, ndim-1)`);
  if (!isInt(shapePerTensor.dtype))
    throw new DTypeError(
      `${op}: shapePerTensor ${shapePerTensor.toString()} must be int32 or uint32, got ${shapePerTensor.dtype}`,
    );
  const data = hostValues(op, shapePerTensor, "shapePerTensor");
  // Always a copy (B·K ints): the data may be a view of a WebAssembly memory, which is
  // detached when the memory grows, and the callers make output tensors while they read the shapes.
  const shapes = Int32Array.from(data);
  for (let i = 0; i < shapes.length; i++) {
    if (shapes[i]! < 0)
      throw new ShapeError(`${op}: shapePerTensor ${shapePerTensor.toString()} has a negative size ${shapes[i]}`);
  }
  return { shapes, count: shape[0]!, width: shape[1]! };
}

function rowNumel(shapes: Int32Array, i: number, width: number): number {
  let n = 1;
  for (let j = 0; j < width; j++) n *= shapes[i * width + j]!;
  return n;
}

function checkRows(op: string, rows: number): void {
  if (rows > INT32_MAX)
    throw new ShapeError(`${op}: ${rows} rows do not fit the int32 index tensors (Kaolin's are int64)`);
}

/** Copies `len` values; short runs in a loop, since a `subarray` per run costs more than it saves. */
function copyRun(dst: TypedArray, dstOff: number, src: TypedArray, srcOff: number, len: number): void {
  // A whole source needs no subarray (about a microsecond each: B4 copies a thousand clouds).
  if (srcOff === 0 && len === src.length) dst.set(src, dstOff);
  else if (len >= 32) dst.set(src.subarray(srcOff, srcOff + len), dstOff);
  else for (let k = 0; k < len; k++) dst[dstOff + k] = src[srcOff + k]!;
}

/**
 * Moves one sub-tensor `(*shape, C)` between its dense row-major layout
 * (`dense` from `denseOff`) and its slot `(*maxShape, C)` in a padded buffer
 * (`padded` from `slot`). Trailing dims where `shape` equals `maxShape` merge
 * into one contiguous run, so a point cloud `(N, 3)` is a single `set`. Towards
 * the padded layout, `fill` (when given) is written to the gaps between runs, so
 * every slot value is written once.
 */
function copySlot(
  toPadded: boolean,
  padded: TypedArray,
  slot: number,
  dense: TypedArray,
  denseOff: number,
  shape: Int32Array,
  shapeOff: number,
  maxShape: readonly number[],
  c: number,
  slotSize: number,
  fill: number | undefined,
): void {
  const k = maxShape.length;
  const slotEnd = slot + slotSize;
  let numel = c;
  for (let j = 0; j < k; j++) numel *= shape[shapeOff + j]!;
  if (numel === 0) {
    if (toPadded && fill !== undefined) padded.fill(fill, slot, slotEnd);
    return;
  }
  // p: the last dim where the shape falls short of maxShape; the dims after it merge into the run.
  let p = k - 1;
  let inner = c;
  while (p >= 0 && shape[shapeOff + p] === maxShape[p]) inner *= maxShape[p--]!;
  const run = p >= 0 ? shape[shapeOff + p]! * inner : inner;
  if (p <= 0) {
    // One run (the common case: a cloud (N, C) in a slot (maxN, C)).
    if (toPadded) {
      copyRun(padded, slot, dense, denseOff, run);
      if (fill !== undefined && slot + run < slotEnd) padded.fill(fill, slot + run, slotEnd);
    } else {
      copyRun(dense, denseOff, padded, slot, run);
    }
    return;
  }
  // strides[j]: the padded stride of dim j < p; the runs step through dims 0..p-1 of the shape.
  const strides = new Array<number>(p);
  let outerRuns = 1;
  for (let j = p - 1, s = maxShape[p]! * inner; j >= 0; s *= maxShape[j--]!) {
    strides[j] = s;
    outerRuns *= shape[shapeOff + j]!;
  }
  const idx = new Int32Array(p);
  let dst = slot;
  let src = denseOff;
  let pos = slot;
  for (let r = 0; r < outerRuns; r++) {
    if (toPadded) {
      if (fill !== undefined && dst > pos) padded.fill(fill, pos, dst);
      copyRun(padded, dst, dense, src, run);
      pos = dst + run;
    } else {
      copyRun(dense, src, padded, dst, run);
    }
    src += run;
    for (let j = p - 1; j >= 0; j--) {
      dst += strides[j]!;
      if (++idx[j]! < shape[shapeOff + j]!) break;
      dst -= idx[j]! * strides[j]!;
      idx[j] = 0;
    }
  }
  if (toPadded && fill !== undefined && pos < slotEnd) padded.fill(fill, pos, slotEnd);
}

/** The padding value cast to the output dtype (outputs are uninitialized, so padding is always written). */
function fillValue(paddingValue: PaddingValue, dtype: DType): number {
  return castScalar(typeof paddingValue === "boolean" ? (paddingValue ? 1 : 0) : paddingValue, dtype);
}

// ------------------------------------------------------------------ list checks

interface ListInfo {
  readonly shapes: readonly (readonly number[])[];
  readonly dtype: DType;
  readonly lastDim: number;
}

/** Rank check of `get_shape_per_tensor`, then (with `full`) the last-dim and type checks of `list_to_packed`. */
function checkList(op: string, list: readonly Tensor[], full: boolean): ListInfo {
  tensorList(op, list);
  if (list.length === 0) throw new ShapeError(`${op}: list cannot be empty (the rank and last dim come from list[0])`);
  // The label is built only for the error: B4 checks a thousand tensors per call.
  const shapes = list.map((t, i) => (t.batchDim === 0 ? t.baseShape : concreteShape(op, t, `list[${i}]`)));
  const ndim = shapes[0]!.length;
  shapes.forEach((s, i) => {
    if (s.length !== ndim)
      throw new ShapeError(`${op}: Expected all tensors to have ${ndim} dimensions but got ${s.length} at index ${i}`);
  });
  if (ndim === 0)
    throw new ShapeError(`${op}: list[0] ${list[0]!.toString()} is a scalar; Kaolin's layouts need a last dim C`);
  const lastDim = shapes[0]![ndim - 1]!;
  const dtype = list[0]!.dtype;
  if (full) {
    list.forEach((t, i) => {
      const c = shapes[i]![ndim - 1]!;
      if (c !== lastDim)
        throw new ShapeError(`${op}: Expected all tensor to have last dimension ${lastDim} but got ${c} at index ${i}`);
      if (t.dtype !== dtype)
        throw new DTypeError(`${op}: Expected all tensor to have type ${dtype} but got ${t.dtype} at index ${i}`);
    });
  }
  return { shapes, dtype, lastDim };
}

/** The first `width` dims of each shape, row after row. */
function shapeArray(shapes: readonly (readonly number[])[], width: number): Int32Array {
  const out = hostInts(shapes.length * width);
  for (let i = 0; i < shapes.length; i++) {
    const s = shapes[i]!;
    for (let j = 0; j < width; j++) out[i * width + j] = s[j]!;
  }
  return out;
}

function shapeTensor(shapes: readonly (readonly number[])[], width: number): Tensor {
  return hostTensor(shapeArray(shapes, width), [shapes.length, width], 0, "int32");
}

// ------------------------------------------------------------------ public API

/**
 * The shape of each tensor without its last dim, as an int32 `(; B, ndim-1)`
 * tensor (Kaolin's `get_shape_per_tensor`; Kaolin's is int64).
 *
 * ```ts
 * getShapePerTensor([zeros([], [32, 32, 3]), zeros([], [64, 16, 3])]); // [[32,32],[64,16]]
 * ```
 * Throws `ShapeError("Expected all tensors to have {ndim} dimensions but got {t.ndim} at index {i}")`.
 * Unlike Kaolin, an empty list and scalars are errors (Kaolin returns a `(0,)`
 * tensor, or fails later on `t.shape[-1]`).
 */
export function getShapePerTensor(list: readonly Tensor[]): Tensor {
  const { shapes } = checkList("getShapePerTensor", list, false);
  const width = shapes[0]!.length - 1;
  return shapeTensor(shapes, width);
}

/**
 * Row offsets `(; B+1)` int32 from the row count of each sub-tensor:
 * `firstIdx[0] = 0`, `firstIdx[i+1] = firstIdx[i] + numel[i]` (Kaolin's `get_first_idx`).
 *
 * ```ts
 * getFirstIdx([1024, 1024]); // [0, 1024, 2048]
 * ```
 */
export function getFirstIdx(numelPerTensor: IntsLike): Tensor {
  const numel = readInts("getFirstIdx", numelPerTensor, "numelPerTensor");
  const out = hostInts(numel.length + 1);
  let acc = 0;
  for (let i = 0; i < numel.length; i++) {
    const n = numel[i]!;
    if (n < 0) throw new ShapeError(`getFirstIdx: numelPerTensor has a negative count ${n} at index ${i}`);
    acc += n;
    checkRows("getFirstIdx", acc);
    out[i + 1] = acc;
  }
  return hostTensor(out, [numel.length + 1], 0, "int32");
}

/**
 * Completes a partial max shape against `shapePerTensor` (Kaolin's
 * `fill_max_shape`): without `partialMaxShape`, the column-wise max; otherwise a
 * copy in which every `-1` becomes the column max. Returns an int32 `(; ndim-1)`.
 *
 * ```ts
 * fillMaxShape(getShapePerTensor(list), [-1, 16]); // [max N_i, 16]
 * ```
 * Deliberate differences from Kaolin: its docstring says a `None` entry means
 * "take the max" but its code needs `-1`; here only `-1` is accepted (a
 * non-integer entry is a `ShapeError`). Its error text has an unbalanced
 * parenthesis and prints 0-d tensors; here it reads
 * `dim {i} of max_shape ({max_shape[i]}) is smaller than for tensor {idx} ({max_dim})`
 * with plain numbers, `idx` being the first tensor that attains the max.
 */
export function fillMaxShape(shapePerTensor: Tensor, partialMaxShape?: IntsLike): Tensor {
  const { shapes, count, width } = readShapes("fillMaxShape", shapePerTensor);
  const max = completeMaxShape("fillMaxShape", shapes, count, width, partialMaxShape);
  const out = hostInts(width);
  out.set(max);
  return hostTensor(out, [width], 0, "int32");
}

function completeMaxShape(
  op: string,
  shapes: Int32Array,
  count: number,
  width: number,
  partial: IntsLike | undefined,
): number[] {
  if (count === 0) throw new ShapeError(`${op}: shapePerTensor has no rows, so it has no max shape`);
  const max = new Array<number>(width).fill(-1);
  const argmax = new Array<number>(width).fill(0);
  for (let i = 0; i < count; i++) {
    for (let j = 0; j < width; j++) {
      const s = shapes[i * width + j]!;
      if (s > max[j]!) [max[j], argmax[j]] = [s, i];
    }
  }
  if (partial === undefined) return max;
  const want = Array.from(readInts(op, partial, "max_shape"));
  if (want.length !== width)
    throw new ShapeError(
      `${op}: max_shape (${want.join(",")}) has ${want.length} dims, but the tensors have ${width} dims before the last`,
    );
  return want.map((m, j) => {
    if (m === -1) return max[j]!;
    if (m > INT32_MAX) throw new ShapeError(`${op}: dim ${j} of max_shape (${m}) does not fit the int32 shape tensors`);
    if (m < max[j]!)
      throw new ShapeError(`${op}: dim ${j} of max_shape (${m}) is smaller than for tensor ${argmax[j]} (${max[j]})`);
    return m;
  });
}

/**
 * Pads each tensor with `paddingValue` on every dim but the last, up to
 * `maxShape` (default: the max of each dim, `-1` entries take the max), and
 * stacks them: `[padded (B; *maxShape, C), shapePerTensor (; B, ndim-1)]`
 * (Kaolin's `list_to_padded`). The dtype is list[0]'s; the padding value is cast to it.
 *
 * ```ts
 * const [padded, spt] = listToPadded([cloudA, cloudB], 0); // (2; maxN, 3)
 * ```
 * Stricter than Kaolin, which copies with casts and broadcasting: every tensor
 * must have list[0]'s last dim and dtype (the `listToPacked` errors).
 */
export function listToPadded(
  list: readonly Tensor[],
  paddingValue: PaddingValue,
  maxShape?: IntsLike,
): [Tensor, Tensor] {
  const op = "listToPadded";
  const { shapes, dtype, lastDim } = checkList(op, list, true);
  paddingArg(op, paddingValue);
  const width = shapes[0]!.length - 1;
  const spt = shapeArray(shapes, width);
  const max = completeMaxShape(op, spt, list.length, width, maxShape);
  checkElements(op, list.length * prod(max) * lastDim, `padded (${list.length}; ${[...max, lastDim].join(",")})`);
  const sptTensor = hostTensor(spt, [list.length, width], 0, "int32");
  if (!allOnHost(list)) {
    const rows = list.map((t, i) => resplit(op, `list[${i}]`, t, [prod(shapes[i]!.slice(0, width))], [lastDim]));
    return [padOnDevice(op, rows, spt, max, lastDim, dtype, paddingValue), sptTensor];
  }
  const slotSize = prod(max) * lastDim;
  // Lazy list entries are computed first: the output's storage may be a view that a later allocation detaches.
  for (let i = 0; i < list.length; i++) hostData(list[i]!);
  const { data: out, done } = outputStorage(dtype, list.length * slotSize);
  const fill = fillValue(paddingValue, dtype);
  for (let i = 0; i < list.length; i++)
    copySlot(true, out, i * slotSize, hostData(list[i]!), 0, spt, i * width, max, lastDim, slotSize, fill);
  return [done([list.length, ...max, lastDim], 1), sptTensor];
}

/**
 * The sub-tensors of a padded batch, `padded[i, :s0, :s1, ...]` for each row of
 * `shapePerTensor` (Kaolin's `padded_to_list`), as `(; *shape_i, C)` copies.
 * `padded` is read by its full shape `(B, *maxShape, C)`.
 *
 * ```ts
 * const clouds = paddedToList(padded, spt);
 * ```
 * Kaolin's slicing silently clamps a size larger than the padded dim; here it is a `ShapeError`.
 */
export function paddedToList(padded: Tensor, shapePerTensor: Tensor): Tensor[] {
  const op = "paddedToList";
  const { shapes, count, max, c } = checkPadded(op, padded, shapePerTensor);
  if (!onHost(padded)) {
    const items = slotsOnDevice(op, padded, shapes, count, max, c);
    return finish(
      op,
      items.map((t, i) => ({ t, batch: [], base: [...shapes.subarray(i * max.length, (i + 1) * max.length), c] })),
    );
  }
  const src = hostData(padded);
  const slotSize = prod(max) * c;
  // Every copy is made before any output tensor: making one may allocate on the backend,
  // and a growing WebAssembly memory detaches `src` (a view of it).
  const dense: TypedArray[] = [];
  for (let i = 0; i < count; i++) {
    const d = new ARRAY_CTOR[padded.dtype](rowNumel(shapes, i, max.length) * c);
    copySlot(false, src, i * slotSize, d, 0, shapes, i * max.length, max, c, slotSize, undefined);
    dense.push(d);
  }
  return dense.map((d, i) => output(d, [...shapes.subarray(i * max.length, (i + 1) * max.length), c], 0, padded.dtype));
}

function checkPadded(
  op: string,
  padded: Tensor,
  shapePerTensor: Tensor,
): { shapes: Int32Array; count: number; max: number[]; c: number } {
  tensorArg(op, padded, "padded");
  const full = concreteShape(op, padded, "padded");
  const { shapes, count, width } = readShapes(op, shapePerTensor);
  if (full.length !== width + 2 || full[0] !== count) {
    throw new ShapeError(
      `${op}: padded ${padded.toString()} does not fit shapePerTensor ${shapePerTensor.toString()}: expected (B, *maxShape, C) with B = ${count} and ${width} dims in maxShape`,
    );
  }
  const max = full.slice(1, width + 1);
  for (let i = 0; i < count; i++) {
    for (let j = 0; j < width; j++) {
      if (shapes[i * width + j]! > max[j]!) {
        throw new ShapeError(
          `${op}: shapePerTensor row ${i} (${Array.from(shapes.subarray(i * width, (i + 1) * width)).join(",")}) does not fit in padded ${padded.toString()}`,
        );
      }
    }
  }
  return { shapes, count, max, c: full[width + 1]! };
}

/**
 * Concatenates the tensors, each reshaped to `(-1, C)`:
 * `[packed (; sumN, C), shapePerTensor (; B, ndim-1)]` (Kaolin's `list_to_packed`).
 *
 * ```ts
 * const [packed, spt] = listToPacked([cloudA, cloudB]); // (; NA+NB, 3)
 * ```
 * Errors: `Expected all tensor to have last dimension {C} but got {c} at index {i}`
 * (`ShapeError`) and `Expected all tensor to have type {dtype} but got {dtype_i} at index {i}`
 * (`DTypeError`, with batchwise dtype names where Kaolin prints `t.type()` such as
 * `torch.FloatTensor`; Kaolin raises it only across devices, since torch's `cat` promotes).
 */
export function listToPacked(list: readonly Tensor[]): [Tensor, Tensor] {
  const op = "listToPacked";
  const { shapes, dtype, lastDim } = checkList(op, list, true);
  const width = shapes[0]!.length - 1;
  if (!allOnHost(list)) {
    const rows = list.map((t, i) => resplit(op, `list[${i}]`, t, [prod(shapes[i]!.slice(0, width))], [lastDim]));
    const total = rows.reduce((n, r) => n + r.batchShape[0]!, 0);
    checkRows(op, total);
    const [packed] = finish(op, [
      { t: concatRows(rows, () => emptyRows(dtype, lastDim)), batch: [], base: [total, lastDim] },
    ]);
    return [packed!, shapeTensor(shapes, width)];
  }
  let size = 0;
  for (let i = 0; i < list.length; i++) size += hostData(list[i]!).length;
  const rows = lastDim === 0 ? shapes.reduce((n, s) => n + prod(s.slice(0, width)), 0) : size / lastDim;
  checkRows(op, rows);
  // Small arrays first: while a large output is live, every new ArrayBuffer can set off
  // an external-memory garbage collection.
  const spt = shapeTensor(shapes, width);
  const { data: out, done } = outputStorage(dtype, size);
  for (let i = 0, off = 0; i < list.length; i++) {
    const d = hostData(list[i]!);
    out.set(d, off);
    off += d.length;
  }
  return [done([rows, lastDim], 0), spt];
}

interface PackedInfo {
  readonly shapes: Int32Array;
  readonly count: number;
  readonly width: number;
  readonly first: ArrayLike<number>;
  readonly c: number;
}

function checkPacked(op: string, packed: Tensor, shapePerTensor: Tensor, firstIdx: IntsLike): PackedInfo {
  tensorArg(op, packed, "packed");
  const full = concreteShape(op, packed, "packed");
  if (full.length !== 2) throw new ShapeError(`${op}: packed ${packed.toString()} must have 2 dims (sumN, C)`);
  const { shapes, count, width } = readShapes(op, shapePerTensor);
  const first = readInts(op, firstIdx, "firstIdx");
  if (first.length !== count + 1)
    throw new ShapeError(
      `${op}: firstIdx has ${first.length} entries, expected B+1 = ${count + 1} for shapePerTensor ${shapePerTensor.toString()}`,
    );
  for (let i = 0; i < count; i++) {
    const n = rowNumel(shapes, i, width);
    if (first[i + 1]! - first[i]! !== n || first[i]! < 0 || first[i + 1]! > full[0]!) {
      throw new ShapeError(
        `${op}: rows ${first[i]}..${first[i + 1]} of packed ${packed.toString()} cannot hold tensor ${i} of shape (${Array.from(shapes.subarray(i * width, (i + 1) * width)).join(",")}) (${n} rows)`,
      );
    }
  }
  return { shapes, count, width, first, c: full[1]! };
}

/**
 * The sub-tensors of a packed tensor, `packed[f_i:f_{i+1}].reshape(*shape_i, C)`
 * (Kaolin's `packed_to_list`), as `(; *shape_i, C)` copies.
 *
 * ```ts
 * const clouds = packedToList(packed, spt, getFirstIdx(spt.prod(1)));
 * ```
 */
export function packedToList(packed: Tensor, shapePerTensor: Tensor, firstIdx: IntsLike): Tensor[] {
  const op = "packedToList";
  const { shapes, count, width, first, c } = checkPacked(op, packed, shapePerTensor, firstIdx);
  if (!onHost(packed)) {
    const rows = resplit(op, "packed", packed, [packed.shape[0]!], [c]);
    const outs = [];
    for (let i = 0; i < count; i++)
      outs.push({
        t: rows.batchSlice(0, first[i]!, first[i + 1]!),
        batch: [],
        base: [...shapes.subarray(i * width, (i + 1) * width), c],
      });
    return finish(op, outs);
  }
  const src = hostData(packed);
  // Every slice is copied before any output tensor is made (see paddedToList).
  const parts: TypedArray[] = [];
  for (let i = 0; i < count; i++) parts.push(src.slice(first[i]! * c, first[i + 1]! * c));
  return parts.map((part, i) => output(part, [...shapes.subarray(i * width, (i + 1) * width), c], 0, packed.dtype));
}

/**
 * The padded layout `(B; *maxShape, C)` of a packed tensor (Kaolin's
 * `packed_to_padded`); `maxShape` as in `listToPadded`.
 *
 * ```ts
 * const padded = packedToPadded(packed, spt, firstIdx, -1);
 * ```
 */
export function packedToPadded(
  packed: Tensor,
  shapePerTensor: Tensor,
  firstIdx: IntsLike,
  paddingValue: PaddingValue,
  maxShape?: IntsLike,
): Tensor {
  const op = "packedToPadded";
  const { shapes, count, width, first, c } = checkPacked(op, packed, shapePerTensor, firstIdx);
  paddingArg(op, paddingValue);
  const max = completeMaxShape(op, shapes, count, width, maxShape);
  checkElements(op, count * prod(max) * c, `padded (${count}; ${[...max, c].join(",")})`);
  if (!onHost(packed)) {
    const all = resplit(op, "packed", packed, [packed.shape[0]!], [c]);
    const rows = Array.from({ length: count }, (_, i) => all.batchSlice(0, first[i]!, first[i + 1]!));
    return padOnDevice(op, rows, shapes, max, c, packed.dtype, paddingValue);
  }
  const slotSize = prod(max) * c;
  const out = uninitialized(packed.dtype, count * slotSize);
  const src = hostData(packed);
  const fill = fillValue(paddingValue, packed.dtype);
  for (let i = 0; i < count; i++)
    copySlot(true, out, i * slotSize, src, first[i]! * c, shapes, i * width, max, c, slotSize, fill);
  return output(out, [count, ...max, c], 1, packed.dtype);
}

/**
 * The packed layout `(; sumN, C)` of a padded batch (Kaolin's `padded_to_packed`:
 * the `(-1, C)` reshapes of `paddedToList`, concatenated).
 *
 * ```ts
 * const packed = paddedToPacked(padded, spt);
 * ```
 */
export function paddedToPacked(padded: Tensor, shapePerTensor: Tensor): Tensor {
  const op = "paddedToPacked";
  const { shapes, count, max, c } = checkPadded(op, padded, shapePerTensor);
  const width = max.length;
  let rows = 0;
  for (let i = 0; i < count; i++) rows += rowNumel(shapes, i, width);
  if (!onHost(padded)) {
    const items = slotsOnDevice(op, padded, shapes, count, max, c).map((y, i) =>
      width <= 1 ? y : y.batchReshape([rowNumel(shapes, i, width)]),
    );
    return finish(op, [{ t: concatRows(items, () => emptyRows(padded.dtype, c)), batch: [], base: [rows, c] }])[0]!;
  }
  const out = uninitialized(padded.dtype, rows * c);
  const src = hostData(padded);
  const slotSize = prod(max) * c;
  let off = 0;
  for (let i = 0; i < count; i++) {
    copySlot(false, src, i * slotSize, out, off, shapes, i * width, max, c, slotSize, undefined);
    off += rowNumel(shapes, i, width) * c;
  }
  return output(out, [rows, c], 0, padded.dtype);
}

/**
 * Repeats `values[i]` `numelPerTensor[i]` times into a packed `(; sumN, 1)`
 * tensor of the same dtype (Kaolin's `tile_to_packed`). `values` is read by its
 * full shape, which must be `(B)`.
 *
 * ```ts
 * tileToPacked(tensor([1, 2]), [2, 3]); // [[1],[1],[2],[2],[2]]
 * ```
 * Kaolin's version is a CUDA kernel (`values_tensor must be a CUDA tensor` on
 * the CPU); this one fills on the host on the JS backend and repeats by block
 * copies on WebGPU.
 */
export function tileToPacked(values: Tensor, numelPerTensor: IntsLike): Tensor {
  const op = "tileToPacked";
  tensorArg(op, values, "values");
  const shape = concreteShape(op, values, "values");
  const numel = Array.from(readInts(op, numelPerTensor, "numelPerTensor"));
  if (shape.length !== 1 || shape[0] !== numel.length) {
    throw new ShapeError(
      `${op}: values ${values.toString()} must have shape (B) with B = ${numel.length}, the length of numelPerTensor`,
    );
  }
  let rows = 0;
  numel.forEach((n, i) => {
    if (n < 0) throw new ShapeError(`${op}: numelPerTensor has a negative count ${n} at index ${i}`);
    rows += n;
  });
  checkRows(op, rows);
  if (!onHost(values)) return tileOnDevice(op, values, numel, rows);
  const src = hostData(values);
  const out = uninitialized(values.dtype, rows);
  let off = 0;
  numel.forEach((n, i) => {
    out.fill(src[i]!, off, off + n);
    off += n;
  });
  return output(out, [rows, 1], 0, values.dtype);
}
