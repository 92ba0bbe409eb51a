/**
 * The ragged helpers on backends whose memory the host cannot read synchronously
 * (WebGPU). There they record IR ops instead of copying on the host:
 *
 * - Data moves with block copies (`batch_concat`, `batch_slice`) and, where the
 *   result keeps its natural `(batch; base)` split, stays lazy like any op.
 * - Kaolin's layouts put ragged dims in the BASE (`packed (; ΣN, C)`,
 *   `padded (B; maxN, C)`), and no IR op moves a dim between batch and base. So
 *   those results are built as copies only (no kernel to compile, hence no
 *   asynchronous step), run now in one program, and re-split as views of the
 *   resulting buffers: row-major storage is the same under any split.
 * - Shapes, offsets and masks are small host data. The ones these helpers upload
 *   keep a host copy (`hostValues`), so they can be passed back in.
 */
import { ARRAY_CTOR, castScalar, type DType, type TypedArray } from "../../ir/dtype.js";
import { BackendError, TraceError } from "../../ir/errors.js";
import { interpret, type Value } from "../../ir/interpret.js";
import { printGraph } from "../../ir/print.js";
import type { ConcreteType } from "../../ir/shapes.js";
import { prod } from "../../ir/types.js";
import { runPipeline } from "../../passes/pipeline.js";
import type { BoundValue } from "../../runtime/program.js";
import { getBackend } from "../backend.js";
import { fromTypedArray } from "../creation.js";
import { buildGraph } from "../graph.js";
import { programFor } from "../realize.js";
import { Tensor } from "../tensor.js";

/** A realized tensor whose values the host can read now (JS backend). */
export function hostReadable(t: Tensor): boolean {
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
  if (!hostReadable(t)) hostCopies.set(t, data);
  return t;
}

function concrete(t: Tensor): ConcreteType {
  return t._type as ConcreteType;
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
  if (s.kind === "param") throw new TraceError(`${op}: ${what} ${t.toString()} is traced; ${op} reads it on the host, so it cannot run inside jit`);
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

/**
 * Runs lazy tensors now, in one program, and returns their buffers. The helpers
 * only hand it block copies and views, which compile to nothing, so this is
 * synchronous on every backend; a lazy input that still needs a kernel compiled
 * (WebGPU compiles asynchronously) is a `BackendError` naming it.
 */
function runNow(op: string, pending: readonly Tensor[], what: string, hint: string): BoundValue[] {
  const backend = getBackend();
  const { graph, captured } = buildGraph("eager", pending, []);
  // The same options as an eager read, so both share the cached program.
  const cached = programFor(
    printGraph(graph),
    () => runPipeline(graph, { maxKernelBuffers: backend.maxKernelBuffers, unrollLimit: 64, mixedBaseOutputs: backend.name === "js", relaxedFloat32: true }),
    backend,
  );
  if (cached instanceof Promise) {
    // It keeps compiling (the cache holds the program once done); a compile error surfaces when the tensor is read.
    cached.catch(() => undefined);
    throw new BackendError(`${op}: ${what} is not computed yet and the ${backend.name} backend compiles its kernels asynchronously, but ${op} must lay it out now; ${hint}`);
  }
  return cached.run(
    captured.map((c) => {
      const s = c._src;
      if (s.kind !== "buffer") throw new TraceError(`${op}: internal: a leaf of ${what} is not realized`);
      if (s.backend !== backend) throw new BackendError(`${op}: ${what} reads tensor ${c.toString()} on the ${s.backend.name} backend, but ${op} runs on ${backend.name}`);
      return { buffer: s.buffer, type: concrete(c) };
    }),
  );
}

/** A tensor over the same buffer as realized `t`, with another batch/base split. */
function share(t: Tensor, batch: readonly number[], base: readonly number[]): Tensor {
  const s = t._src;
  if (s.kind !== "buffer") throw new TraceError(`internal: share of an unrealized tensor ${t.toString()}`);
  return Tensor._fromBuffer({ dtype: t.dtype, batch: [...batch], base: [...base] }, s.buffer, s.backend);
}

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/**
 * `t` (any split) as `(batch; base)`, same values in the same order: a view of
 * `t`'s buffer, or of a lazy `t` a lazy batch reshape when the base stays (base
 * reshapes are kernels; then `t` is computed first and its buffer viewed).
 */
export function resplit(op: string, what: string, t: Tensor, batch: readonly number[], base: readonly number[]): Tensor {
  if (sameDims(t.batchShape, batch) && sameDims(t.baseShape, base)) return t;
  if (t._src.kind !== "buffer") {
    if (sameDims(t.baseShape, base) && prod(t.batchShape) === prod(batch)) return t.batchReshape(batch);
    if (t._src.kind === "param") throw new TraceError(`${op}: ${what} ${t.toString()} is traced; ${op} cannot run inside jit`);
    const [out] = runNow(op, [t], what, `await ${what}.data() first`);
    t._adopt(out!.buffer, getBackend());
  }
  return share(t, batch, base);
}

/**
 * The results of copies, each re-split as `(batch; base)`. Lazy outputs that
 * only need a batch reshape stay lazy; the others run now, all in one program
 * (see the file comment), and come back as views of their buffers.
 */
export function finish(op: string, outs: readonly { readonly t: Tensor; readonly batch: readonly number[]; readonly base: readonly number[] }[]): Tensor[] {
  const direct = (o: (typeof outs)[number]): boolean => o.t._src.kind !== "lazy" || (sameDims(o.t.baseShape, o.base) && prod(o.t.batchShape) === prod(o.batch));
  const pending = [...new Set(outs.filter((o) => !direct(o)).map((o) => o.t))];
  const buffers = new Map<Tensor, BoundValue>();
  if (pending.length > 0) {
    const run = runNow(op, pending, "an input", "await .data() on its lazy inputs first");
    pending.forEach((t, i) => buffers.set(t, run[i]!));
  }
  return outs.map((o) => {
    const got = buffers.get(o.t);
    if (got === undefined) return resplit(op, "its input", o.t, o.batch, o.base);
    return Tensor._fromBuffer({ dtype: o.t.dtype, batch: [...o.batch], base: [...o.base] }, got.buffer, getBackend());
  });
}

/** `batch_concat` along batch axis 0, skipping parts without rows; `empty` when nothing is left. */
export function concatRows(parts: readonly Tensor[], empty: () => Tensor): Tensor {
  const kept = parts.filter((p) => p.batchShape[0]! > 0);
  if (kept.length === 0) return empty();
  return kept.length === 1 ? kept[0]! : Tensor._op("batch_concat", kept, { axis: 0 });
}
