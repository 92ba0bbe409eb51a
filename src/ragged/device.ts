/**
 * The ragged helpers on backends whose memory the host cannot read synchronously
 * (WebGPU). There they record IR ops instead of copying on the host:
 *
 * - Data moves with block copies (`batch_concat`, `batch_slice`) along batch
 *   dims. Kaolin's layouts put ragged dims in the BASE (`packed (; ΣN, C)`,
 *   `padded (B; maxN, C)`): the results are built with those dims in the batch
 *   and then re-split by `rebatch` views (row-major storage is the same under
 *   any split). Everything stays lazy, like any op.
 * - Shapes, offsets and masks are small host data. The ones these helpers upload
 *   keep a host copy (`hostValues`), so they can be passed back in.
 */
import { ARRAY_CTOR, castScalar, type DType, type TypedArray } from "../../ir/dtype.js";
import { BackendError, TraceError } from "../../ir/errors.js";
import { interpret, type Value } from "../../ir/interpret.js";
import type { ConcreteType } from "../../ir/shapes.js";
import { prod } from "../../ir/types.js";
import { rememberHostValues } from "../../runtime/program.js";
import { getBackend } from "../backend.js";
import { fromTypedArray } from "../creation.js";
import { buildGraph } from "../graph.js";
import { Tensor } from "../tensor.js";

// ------------------------------------------------------------------ small int arrays

/** Bytes per slab, and the largest array (in elements) carved from one. */
const SLAB_BYTES = 64 * 1024;
const SLAB_MAX_INTS = 4096;
let slab: ArrayBuffer | undefined;
let slabUsed = 0;

/**
 * A zeroed Int32Array for shapes, offsets and lengths. Small ones are views into
 * a shared 64 KiB slab (as Node's Buffer pool does): every fresh ArrayBuffer
 * makes V8 check its external-memory budget, and a check that fires while a
 * large padded or packed output is still live starts a scavenge that promotes
 * it. A few-KiB offsets array made after a 24 MB output cost the B4 benchmark
 * about half its time that way. The views are never reused, so each starts at
 * zero; one keeps its slab alive, which bounds the waste at 64 KiB per array.
 */
export function hostInts(n: number): Int32Array {
  if (n > SLAB_MAX_INTS) return new Int32Array(n);
  if (slab === undefined || slabUsed + 4 * n > SLAB_BYTES) {
    slab = new ArrayBuffer(SLAB_BYTES);
    slabUsed = 0;
  }
  const out = new Int32Array(slab, slabUsed, n);
  slabUsed += 4 * n;
  return out;
}

let poisonByte: number | undefined;

/**
 * @internal For tests: every `uninitialized` array, whatever its size, starts
 * with each byte set to `byte` (undefined turns this off), so a value a helper
 * forgets to write shows up instead of hiding behind a zero.
 */
export function _poisonUninitialized(byte: number | undefined): void {
  poisonByte = byte;
}

/** Below this size an output comes from a plain (zeroed) typed array. */
const UNINITIALIZED_MIN_BYTES = 64 * 1024;

/**
 * A host array of `n` values whose contents are unspecified: the caller must
 * write every element before anyone reads it. Where Node's `Buffer` exists,
 * large arrays skip the zero fill a typed array constructor does (the layout
 * helpers write each value once, padding included, so zeroing first would
 * write every byte of a padded batch twice).
 */
export function uninitialized(dtype: DType, n: number): TypedArray {
  const Ctor = ARRAY_CTOR[dtype];
  if (poisonByte !== undefined) {
    const dirty = new Ctor(n);
    new Uint8Array(dirty.buffer, dirty.byteOffset, dirty.byteLength).fill(poisonByte);
    return dirty;
  }
  const bytes = n * Ctor.BYTES_PER_ELEMENT;
  const NodeBuffer = (globalThis as { Buffer?: { allocUnsafeSlow?(size: number): Uint8Array } }).Buffer;
  if (bytes < UNINITIALIZED_MIN_BYTES || typeof NodeBuffer?.allocUnsafeSlow !== "function") return new Ctor(n);
  // allocUnsafeSlow never hands out a shared pool slice, so the view starts at byte 0 of its own buffer.
  return new Ctor(NodeBuffer.allocUnsafeSlow(bytes).buffer, 0, n);
}

/**
 * Storage for a helper's output of `n` values, unspecified until the caller writes
 * every one, and `done`, which makes it the tensor. On a backend whose memory the
 * host writes in place (WebAssembly: `view` of a buffer of its memory) the values are
 * written straight into the backend's buffer, not built in a host array and copied
 * in afterwards (which doubled the copies of listToPadded on wasm). Elsewhere it is
 * `uninitialized` wrapped without a copy. The caller must not allocate on the backend
 * between the two (a growing WebAssembly memory detaches the view).
 */
export function outputStorage(
  dtype: DType,
  n: number,
): { data: TypedArray; done(shape: readonly number[], batchDim: number): Tensor } {
  const b = getBackend();
  if (!b.hostMemory && b.view !== undefined && b.readSync !== undefined && b.dtypes.includes(dtype)) {
    const buffer = b.alloc(dtype, n);
    const data = b.view(buffer);
    if (poisonByte !== undefined) new Uint8Array(data.buffer, data.byteOffset, data.byteLength).fill(poisonByte);
    return {
      data,
      done: (shape, batchDim) =>
        Tensor._fromBuffer({ dtype, batch: shape.slice(0, batchDim), base: shape.slice(batchDim) }, buffer, b),
    };
  }
  const data = uninitialized(dtype, n);
  return { data, done: (shape, batchDim) => fromTypedArray(data, shape, { batchDim, dtype, copy: false }) };
}

/** A realized tensor whose values the host can read now (JS backend). */
function hostReadable(t: Tensor): boolean {
  return t._src.kind === "buffer" && t._src.backend.readSync !== undefined;
}

/**
 * True when the host path can read `t` now: a host buffer, or a lazy tensor the
 * current backend computes synchronously. Disposed tensors go to the host path
 * too, which reports them.
 */
export function onHost(t: Tensor): boolean {
  const s = t._src;
  if (s.kind === "buffer") return s.backend.readSync !== undefined;
  if (s.kind === "lazy") return getBackend().readSync !== undefined;
  return s.kind === "disposed";
}

export function allOnHost(list: readonly Tensor[]): boolean {
  for (const t of list) if (!onHost(t)) return false;
  return true;
}

// ------------------------------------------------------------------ host data

/** The host values of device tensors these helpers made from host data (tensors are immutable). */
const hostCopies = new WeakMap<Tensor, TypedArray>();

/**
 * A tensor over host data on the current backend (it uploads on WebGPU), which
 * remembers its values so that they can be read back synchronously.
 */
export function hostTensor(data: TypedArray, shape: readonly number[], batchDim: number, dtype: DType): Tensor {
  const t = fromTypedArray(data, shape, { batchDim, dtype, copy: false });
  if (!hostReadable(t)) {
    hostCopies.set(t, data);
    // Programs check jagged offsets on the host: this copy spares them a read-back.
    if (t._src.kind === "buffer") rememberHostValues(t._src.buffer, data);
  }
  return t;
}

function concrete(t: Tensor): ConcreteType {
  return t._type as ConcreteType;
}

/**
 * The values of a realized tensor the host can read now without computing
 * anything: a host buffer, or the kept host copy of one these helpers uploaded.
 */
export function knownHostValues(t: Tensor): TypedArray | undefined {
  if (hostReadable(t)) return t.dataSync({ copy: false });
  return hostCopies.get(t);
}

/**
 * The values of a small tensor the host needs now (shapes, offsets, lengths, a
 * mask): read directly on the JS backend, from the remembered host copy of a
 * tensor these helpers uploaded, or, for lazy ops on such tensors (say
 * `shapePerTensor.prod(1)`), computed on the host by the reference interpreter.
 * Anything else lives only on the device: a `BackendError` saying so.
 */
export function hostValues(op: string, t: Tensor, what: string): TypedArray {
  if (onHost(t)) return t.dataSync({ copy: false });
  const known = hostCopies.get(t);
  if (known !== undefined) return known;
  const s = t._src;
  if (s.kind === "param")
    throw new TraceError(
      `${op}: ${what} ${t.toString()} is traced; ${op} reads it on the host, so it cannot run inside jit`,
    );
  const deviceOnly = (): BackendError =>
    new BackendError(
      `${op}: ${what} ${t.toString()} lives on the ${getBackend().name} backend, which the host cannot read synchronously; ${what} must be host data ` +
        `(numbers, a tensor made on the js backend, or one returned by these helpers)`,
    );
  if (s.kind !== "lazy") throw deviceOnly();
  const { graph, captured } = buildGraph("host", [t], []);
  const inputs: Value[] = captured.map((c) => {
    const data = hostReadable(c) ? c.dataSync({ copy: false }) : hostCopies.get(c);
    if (data === undefined) throw deviceOnly();
    return { type: concrete(c), data };
  });
  const data = interpret(graph, inputs)[0]!.data;
  hostCopies.set(t, data);
  return data;
}

// ------------------------------------------------------------------ device work

/** Fills an `ARRAY_CTOR` array with `value` cast to `dtype` (bool: `true`/`false`). */
export function filled(dtype: DType, length: number, value: number | boolean): TypedArray {
  const out = new ARRAY_CTOR[dtype](length);
  const v = castScalar(typeof value === "boolean" ? (value ? 1 : 0) : value, dtype);
  if (!Object.is(v, 0)) out.fill(v);
  return out;
}

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * `t` (any split) as `(batch; base)`, same values in the same order, as views
 * (no copy, no kernel): a batch reshape when the base stays, otherwise all dims
 * to the batch (`rebatch`), a batch reshape to the new full shape, and the new
 * split (`rebatch`). Lazy like any op.
 */
export function resplit(
  op: string,
  what: string,
  t: Tensor,
  batch: readonly number[],
  base: readonly number[],
): Tensor {
  if (sameDims(t.batchShape, batch) && sameDims(t.baseShape, base)) return t;
  if (t._src.kind === "param")
    throw new TraceError(`${op}: ${what} ${t.toString()} is traced; ${op} cannot run inside jit`);
  if (sameDims(t.baseShape, base) && prod(t.batchShape) === prod(batch)) return t.batchReshape(batch);
  return t
    .rebatch(t.rank)
    .batchReshape([...batch, ...base])
    .rebatch(batch.length);
}

/** The results of copies, each re-split as `(batch; base)` (see `resplit`). */
export function finish(
  op: string,
  outs: readonly { readonly t: Tensor; readonly batch: readonly number[]; readonly base: readonly number[] }[],
): Tensor[] {
  return outs.map((o) => resplit(op, "its input", o.t, o.batch, o.base));
}

/** `batch_concat` along batch axis 0, skipping parts without rows; `empty` when nothing is left. */
export function concatRows(parts: readonly Tensor[], empty: () => Tensor): Tensor {
  const kept = parts.filter((p) => p.batchShape[0]! > 0);
  if (kept.length === 0) return empty();
  return kept.length === 1 ? kept[0]! : Tensor._op("batch_concat", kept, { axis: 0 });
}
