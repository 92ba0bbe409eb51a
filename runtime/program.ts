/**
 * The program executor: binds a schedule to concrete input shapes, allocates
 * buffers, launches kernels and frees intermediates after their last use.
 * Batch sizes enter only here, as launch arguments.
 */
import type { DType } from "../ir/dtype.js";
import { BackendError, ShapeError } from "../ir/errors.js";
import { attrsOf, hasOp, isReduceNode, type Node } from "../ir/graph.js";
import { kernelConsts, kernelKey, type Launch } from "../ir/kernel.js";
import { SEGMENT_OPS } from "../ir/ops.js";
import { NON_EMPTY_REDUCE } from "../ir/reductions.js";
import type { Schedule } from "../ir/schedule.js";
import {
  inferConcrete,
  longestRow,
  runtimeLengthNodes,
  runtimeLengthOffsets,
  type ConcreteType,
} from "../ir/shapes.js";
import { fmtTypeShape, prod } from "../ir/types.js";
import type { Backend, CompiledKernel, DeviceBuffer, ShippedKernel } from "./backend.js";
import { debugLog, debugOn } from "./debug.js";
import { counters } from "./stats.js";

/**
 * Most compiled kernels kept per backend. Kernel keys leave constant values out, so
 * one program shape needs one kernel whatever its constants; the bound is for
 * programs of many different shapes (each evicted kernel is simply compiled again).
 */
export const KERNEL_CACHE_LIMIT = 1024;

const kernelCaches = new WeakMap<Backend, Map<string, CompiledKernel | Promise<CompiledKernel>>>();

/** Number of kernels the cache of `backend` holds now (tests check the bound). */
export function kernelCacheSize(backend: Backend): number {
  return kernelCaches.get(backend)?.size ?? 0;
}

/**
 * Compiles through a per-backend cache keyed by the kernel's structure (no batch
 * size and no constant value in it). Least recently used entries are evicted past
 * `KERNEL_CACHE_LIMIT`; programs already built keep the kernels they hold.
 */
export function compileCached(
  backend: Backend,
  key: string,
  compile: () => CompiledKernel | Promise<CompiledKernel>,
): CompiledKernel | Promise<CompiledKernel> {
  let cache = kernelCaches.get(backend);
  if (cache === undefined) kernelCaches.set(backend, (cache = new Map()));
  const hit = cache.get(key);
  if (hit !== undefined) {
    counters.cacheHits++;
    // Most recently used last: Map iteration order is insertion order.
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  counters.compiles++;
  const c = compile();
  if (debugOn("kernels")) {
    if (c instanceof Promise)
      c.then(
        (k) => debugLog("kernels", `${backend.name} kernel:\n${k.source}`),
        () => undefined,
      );
    else debugLog("kernels", `${backend.name} kernel:\n${c.source}`);
  }
  cache.set(key, c);
  if (c instanceof Promise) {
    const owner = cache;
    // Only while the entry is still this compile (not evicted or replaced meanwhile).
    c.then(
      (v) => owner.get(key) === c && owner.set(key, v),
      () => owner.get(key) === c && owner.delete(key),
    );
  }
  while (cache.size > KERNEL_CACHE_LIMIT) {
    cache.delete(cache.keys().next().value!);
    counters.kernelEvictions++;
  }
  return c;
}

/** Programs still compiling (asynchronous backends): how to get their kernels' sources now. */
const pendingSources = new WeakMap<Promise<Program>, () => string[]>();

/**
 * The generated source of every kernel of a program, in launch order, also while
 * it is still compiling (the source exists before the driver's compile finishes).
 */
export function kernelSources(p: Program | Promise<Program>): string[] {
  if (!(p instanceof Promise)) return p.kernelSources();
  const get = pendingSources.get(p);
  if (get === undefined) throw new BackendError("kernelSources: not a program from Program.create");
  return get();
}

export interface BoundValue {
  readonly buffer: DeviceBuffer;
  readonly type: ConcreteType;
}

/** Contiguous batch strides in elements, 0 where a dim has size 1 (broadcast) unless `plain`. */
export function batchStrides(t: ConcreteType, plain = false): number[] {
  const s = new Array<number>(t.batch.length);
  let acc = prod(t.base);
  for (let i = t.batch.length - 1; i >= 0; i--) {
    s[i] = t.batch[i] === 1 && !plain ? 0 : acc;
    acc *= t.batch[i]!;
  }
  return s;
}

type Region = readonly [number, number, number];

/**
 * Block copies for a batch slice or concatenation, per source: `[srcOffset,
 * dstOffset, length]` in elements. Everything after the axis is one contiguous block.
 */
function copyRegions(node: Node, sources: readonly Node[], types: ReadonlyMap<Node, ConcreteType>): Region[][] {
  const out = types.get(node)!;
  const axis = attrsOf(node, "batch_slice", "batch_concat").axis;
  const outer = prod(out.batch.slice(0, axis));
  const inner = prod(out.batch.slice(axis + 1)) * prod(out.base);
  const outLen = out.batch[axis]!;
  if (hasOp(node, "batch_slice")) {
    // Nothing to copy from a slice that is empty (bounds past the size clamp to it, as in NumPy):
    // its start may lie past the end of the source.
    if (outLen === 0 || outer === 0 || inner === 0) return [[]];
    const srcLen = types.get(sources[0]!)!.batch[axis]!;
    const step = node.attrs.step;
    // A negative step starts at position srcLen-1-start (start counts from the end).
    const start = step < 0 ? srcLen - 1 - node.attrs.start : node.attrs.start;
    const regions: Region[] = [];
    for (let o = 0; o < outer; o++) {
      if (step === 1) regions.push([(o * srcLen + start) * inner, o * outLen * inner, outLen * inner]);
      else
        for (let j = 0; j < outLen; j++)
          regions.push([(o * srcLen + start + j * step) * inner, (o * outLen + j) * inner, inner]);
    }
    return [regions];
  }
  let at = 0;
  return sources.map((src) => {
    const len = types.get(src)!.batch[axis]!;
    const regions: Region[] = [];
    for (let o = 0; o < outer; o++) regions.push([o * len * inner, (o * outLen + at) * inner, len * inner]);
    at += len;
    return regions;
  });
}

interface LaunchPlan {
  /** Per step: dtype and length of each output buffer. */
  readonly outputs: readonly (readonly { dtype: DType; length: number }[])[];
  /** Per copy step: the regions to copy from each source. */
  readonly copies: readonly (readonly (readonly Region[])[])[];
  readonly launches: readonly (Launch | undefined)[];
  readonly outputTypes: readonly ConcreteType[];
  /** Per offsets check, per use: the packed tensor whose length (first batch dim) the offsets must end at (undefined: none). */
  readonly offsetPacked: readonly (readonly (ConcreteType | undefined)[])[];
  /** Per offsets check: the concrete type of the offsets, for messages. */
  readonly offsetTypes: readonly ConcreteType[];
}

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function sameTypes(a: readonly ConcreteType[], b: readonly BoundValue[]): boolean {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!.type;
    if (x.dtype !== y.dtype || !sameDims(x.batch, y.batch) || !sameDims(x.base, y.base)) return false;
  }
  return true;
}

function sameLengths(a: ReadonlyMap<Node, number> | undefined, b: ReadonlyMap<Node, number> | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  for (const [n, v] of a) if (b.get(n) !== v) return false;
  return true;
}

// ------------------------------------------------------------------ jagged offsets checks
//
// A segmented kernel reads row b of a jagged tensor at the packed positions
// [offsets[b], offsets[b+1]). Offsets that do not start at 0, decrease, or end
// anywhere but at the packed length would make it read other rows' values, or
// past the end of the buffer. So the program checks every offsets buffer a
// segmented kernel reads on the host, right after the buffer holds its values
// (before the first step for graph inputs, after the producing step for offsets
// the graph computes) and so before any kernel reads it. This one place covers
// eager reads, jit and trace calls and bundles alike.
//
// Where the values come from: a host copy remembered for the buffer (offsets
// uploaded from host data), `readSync` (the JS backend), or, on a backend that
// reads asynchronously (WebGPU), an awaited read-back in `runAsync`, which
// stops the launches at that point until the values are back. Input buffers
// checked that way are remembered (device buffers of tensors are never
// written again), so offsets passed again are not read back again.

/** Host copies of device buffers uploaded from host data (see `rememberHostValues`). */
const hostCopies = new WeakMap<DeviceBuffer, ArrayLike<number>>();
/** Input offsets buffers already checked, with the packed lengths they were checked against (-1: no packed length). */
const checkedInputs = new WeakMap<DeviceBuffer, Set<number>>();

/**
 * Records the values a device buffer was written with, so that a program can check
 * them (as jagged offsets) without reading the device. The buffer must never be
 * written again (a tensor's buffer).
 */
export function rememberHostValues(buffer: DeviceBuffer, values: ArrayLike<number>): void {
  hostCopies.set(buffer, values);
}

/**
 * What is wrong with jagged offsets `o` for `total` packed values (undefined: any
 * total), or undefined when they are valid: at least one entry, starting at 0,
 * never decreasing, ending at `total`.
 */
export function offsetsProblem(o: ArrayLike<number>, total: number | undefined): string | undefined {
  if (o.length === 0) return "have no entries (they need B+1 for B rows)";
  if (o[0] !== 0) return `start at ${o[0]}, not 0`;
  for (let i = 1; i < o.length; i++) {
    if (!(o[i]! >= o[i - 1]!)) return `decrease at entry ${i} (${o[i - 1]} then ${o[i]})`;
  }
  const last = o[o.length - 1]!;
  if (total !== undefined && last !== total) return `end at ${last}, but there are ${total} packed values`;
  return undefined;
}

/** One offsets node a segmented kernel reads, and the segment ops reading it. */
interface OffsetsCheck {
  readonly node: Node;
  /** Its graph input index, or -1 when a step computes it. */
  readonly input: number;
  /** The step after which its buffer holds its values (-1: before the first step). */
  readonly after: number;
  /** Per segment op reading it: the node whose packed (first batch) dim the offsets must end at. */
  readonly uses: readonly { readonly op: Node; readonly packed: Node | undefined }[];
}

function planOffsetChecks(s: Schedule): OffsetsCheck[] {
  const uses = new Map<Node, { op: Node; packed: Node | undefined }[]>();
  const use = (o: Node, op: Node, packed: Node | undefined): void => {
    let list = uses.get(o);
    if (list === undefined) uses.set(o, (list = []));
    list.push({ op, packed });
  };
  for (const n of s.order) {
    if (!SEGMENT_OPS.has(n.op)) continue;
    // reduce and pad read packed values (input 0); expand and unpad write packed values (their own type); mask reads none.
    if (n.op === "segment_mask") use(n.inputs[0]!, n, undefined);
    else use(n.inputs[1]!, n, n.op === "segment_reduce" || n.op === "segment_pad" ? n.inputs[0]! : n);
  }
  const producedAt = new Map<Node, number>();
  s.steps.forEach((st, i) => {
    for (const n of st.kind === "kernel" ? st.outputs : [st.node]) producedAt.set(n, i);
  });
  // Whatever buffer a segmented kernel takes its rows from is checked, even if no segment op names it.
  for (const st of s.steps) {
    if (st.kind === "kernel" && st.kernel.segment !== undefined) {
      const o = st.inputs[st.kernel.segment.offsets]!;
      if (!uses.has(o)) uses.set(o, []);
    }
  }
  const out: OffsetsCheck[] = [];
  for (const [node, u] of uses) {
    const input = s.graph.inputs.indexOf(node);
    const after = input >= 0 ? -1 : producedAt.get(node);
    // Offsets no step materializes are read by no kernel.
    if (after !== undefined) out.push({ node, input, after, uses: u });
  }
  return out;
}

/** A host read a run needs: the buffer, and what for (for the error where it cannot be read now). */
interface HostRead {
  readonly buffer: DeviceBuffer;
  readonly what: string;
}

function segmentOpName(n: Node): string {
  return hasOp(n, "segment_reduce") ? `segment_reduce(${n.attrs.op})` : n.op;
}

/**
 * Batch sizes are known only here, so this is where a reduction that has no value over no
 * elements (`nonEmpty` in ir/reductions.ts: min, max, argmin, argmax; NumPy raises too) over an
 * empty batch axis becomes a ShapeError (as over an empty base axis at trace time),
 * never a silent ±Inf or 0. sum gives 0, prod 1, mean NaN, all true, any false.
 */
function checkEmptyReductions(order: readonly Node[], types: ReadonlyMap<Node, ConcreteType>): void {
  for (const n of order) {
    if (!isReduceNode(n) || !NON_EMPTY_REDUCE.has(n.op)) continue;
    const x = types.get(n.inputs[0]!)!;
    for (const a of n.attrs.batchAxes) {
      if (x.batch[a] === 0)
        throw new ShapeError(`${n.op}: cannot reduce an empty batch axis ${a} of x ${fmtTypeShape(x)}`);
    }
  }
}

/** A run's buffer of a node (the offsets checks look theirs up by node). */
interface BufferLookup {
  get(n: Node): DeviceBuffer | undefined;
}

/** Intermediates whose last use has passed, by `dtype:length`, for later steps to reuse. */
type Spare = Map<string, DeviceBuffer[]>;

/** A step's buffers as slot numbers (see `Program.slotOf`). */
interface StepSlots {
  /** A view's source, a copy's sources, a kernel's inputs. */
  readonly ins: readonly number[];
  /** A view's or copy's node, a kernel's outputs. */
  readonly outs: readonly number[];
}

export class Program {
  private readonly compiled: (CompiledKernel | undefined)[];
  /** Pad/mask nodes padding to the longest row, and the input index of their offsets. */
  private readonly runtimeLengths: readonly (readonly [Node, number])[];
  /** Per kernel step: the values of its kernel's constants, passed at every launch. */
  private readonly consts: readonly (Float64Array | undefined)[];
  /** Every offsets buffer a segmented kernel reads, checked before that kernel runs. */
  private readonly offsetChecks: readonly OffsetsCheck[];
  /** The same, by the step after which each is checked (index `after + 1`). */
  private readonly checksAfter: readonly (readonly number[] | undefined)[];
  /**
   * A run keeps its buffers in an array, one slot per node that holds one: the graph
   * inputs (slots 0…), then every step's results in step order.
   */
  private readonly slotOf = new Map<Node, number>();
  private readonly slotCount: number;
  private readonly stepSlots: readonly StepSlots[];
  /** Per step, the slots whose buffers die after it. */
  private readonly releaseSlots: readonly (readonly number[])[];
  private readonly outputSlots: readonly number[];
  /** No step needs host values (jagged offsets to check, a pad to the longest row): `run` needs no generator. */
  private readonly plain: boolean;
  private readonly spare: Spare = new Map();

  private constructor(
    readonly schedule: Schedule,
    readonly backend: Backend,
    compiled: (CompiledKernel | undefined)[],
  ) {
    this.compiled = compiled;
    this.consts = schedule.steps.map((st) => (st.kind === "kernel" ? kernelConsts(st.kernel) : undefined));
    const inputs = schedule.graph.inputs;
    this.runtimeLengths = runtimeLengthNodes(schedule.order).map(
      (n) => [n, inputs.indexOf(runtimeLengthOffsets(n))] as const,
    );
    this.offsetChecks = planOffsetChecks(schedule);
    const after: number[][] = [];
    this.offsetChecks.forEach((c, k) => (after[c.after + 1] ??= []).push(k));
    this.checksAfter = after;
    const slotOf = this.slotOf;
    inputs.forEach((n, i) => slotOf.set(n, i));
    // Steps come in order, so every node a step reads has its slot already.
    const ofNode = (n: Node): number => slotOf.get(n)!;
    const slot = (n: Node): number => {
      slotOf.set(n, slotOf.size);
      return slotOf.size - 1;
    };
    this.stepSlots = schedule.steps.map((st): StepSlots => {
      const kernel = st.kind === "kernel";
      return {
        ins: (kernel ? st.inputs : st.kind === "view" ? [st.source] : st.sources).map(ofNode),
        outs: (kernel ? st.outputs : [st.node]).map(slot),
      };
    });
    this.releaseSlots = Program.planReleases(schedule).map((list) => list.map(ofNode));
    this.outputSlots = schedule.graph.outputs.map(ofNode);
    this.slotCount = slotOf.size;
    this.plain = this.runtimeLengths.length === 0 && this.offsetChecks.length === 0;
  }

  /**
   * Graph inputs whose values the host must read before a run (offsets of a pad to
   * the longest row). A backend without `readSync` needs them passed to `run`.
   */
  get hostInputs(): readonly number[] {
    return [...new Set(this.runtimeLengths.map(([, i]) => i))];
  }

  /** Compiles every kernel of a schedule (cache first). Sync on backends that compile synchronously. */
  static create(schedule: Schedule, backend: Backend): Program | Promise<Program> {
    const parts = schedule.steps.map((s) =>
      s.kind === "kernel"
        ? compileCached(backend, `${backend.name}:${kernelKey(s.kernel)}`, () => backend.compile(s.kernel))
        : undefined,
    );
    if (parts.some((p) => p instanceof Promise)) {
      const pending = Promise.all(parts).then((ks) => new Program(schedule, backend, ks));
      pendingSources.set(pending, () =>
        schedule.steps.flatMap((s) => (s.kind === "kernel" ? [backend.source(s.kernel)] : [])),
      );
      return pending;
    }
    return new Program(schedule, backend, parts as (CompiledKernel | undefined)[]);
  }

  /** A program over kernels a bundle ships (no code generation; see `Backend.load`). */
  static fromShipped(
    schedule: Schedule,
    backend: Backend,
    shipped: readonly (ShippedKernel | undefined)[],
  ): Program | Promise<Program> {
    const parts = schedule.steps.map((s, i) => {
      if (s.kind !== "kernel") return undefined;
      const code = shipped[i];
      if (code === undefined)
        throw new BackendError(`program @${schedule.graph.name}: step ${i} has no shipped kernel`);
      return backend.load(s.kernel, code);
    });
    if (parts.some((p) => p instanceof Promise))
      return Promise.all(parts).then((ks) => new Program(schedule, backend, ks));
    return new Program(schedule, backend, parts as (CompiledKernel | undefined)[]);
  }

  /** Last-use analysis: a buffer (and its views) can be freed after the last step that reads it. */
  private static planReleases(s: Schedule): Node[][] {
    const owner = new Map<Node, Node>();
    const lastUse = new Map<Node, number>();
    s.steps.forEach((step, i) => {
      if (step.kind === "view") {
        owner.set(step.node, owner.get(step.source) ?? step.source);
        lastUse.set(owner.get(step.node)!, i);
      } else if (step.kind === "copy") {
        for (const n of step.sources) lastUse.set(owner.get(n) ?? n, i);
        lastUse.set(step.node, i);
      } else {
        for (const n of step.inputs) lastUse.set(owner.get(n) ?? n, i);
        for (const n of step.outputs) lastUse.set(n, i);
      }
    });
    const keep = new Set<Node>();
    for (const o of s.graph.outputs) keep.add(owner.get(o) ?? o);
    const rel: Node[][] = s.steps.map(() => []);
    for (const [n, i] of lastUse) if (n.op !== "input" && !keep.has(n)) rel[i]!.push(n);
    return rel;
  }

  /**
   * Runs on bound inputs (one per graph input); returns the outputs' buffers and
   * concrete types. `hostValues` holds the values of `hostInputs` already read.
   * Host values the run needs (jagged offsets to check, see `offsetsProblem`) are
   * read with `readSync`; a backend without it needs `runAsync` unless they are known.
   */
  run(inputs: readonly BoundValue[], hostValues?: ReadonlyMap<number, ArrayLike<number>>): BoundValue[] {
    if (this.plain) return this.execPlain(inputs);
    const it = this.exec(inputs, hostValues);
    let r = it.next();
    while (!r.done) {
      // Only reached on a backend without readSync (exec reads synchronously where it can).
      r = it.throw(
        new BackendError(
          `${r.value.what}: the ${this.backend.name} backend reads asynchronously; use await t.data() or f.callAsync(...)`,
        ),
      );
    }
    return r.value;
  }

  /** `run`, reading host values the run needs from the device with `await read` (WebGPU). */
  async runAsync(
    inputs: readonly BoundValue[],
    hostValues?: ReadonlyMap<number, ArrayLike<number>>,
  ): Promise<BoundValue[]> {
    const it = this.exec(inputs, hostValues);
    let r = it.next();
    while (!r.done) {
      let values: ArrayLike<number>;
      try {
        values = await this.backend.read(r.value.buffer);
      } catch (e) {
        r = it.throw(e);
        continue;
      }
      r = it.next(values);
    }
    return r.value;
  }

  /** The values of a small input or intermediate: known on the host, read synchronously, or asked of the driver (yield). */
  private *hostRead(
    buffer: DeviceBuffer,
    input: number,
    hostValues: ReadonlyMap<number, ArrayLike<number>> | undefined,
    what: string,
  ): Generator<HostRead, ArrayLike<number>, ArrayLike<number>> {
    const known = (input >= 0 ? hostValues?.get(input) : undefined) ?? hostCopies.get(buffer);
    if (known !== undefined) return known;
    if (this.backend.readSync !== undefined) return this.backend.readSync(buffer);
    return yield { buffer, what };
  }

  /** Checks the offsets of `checks` (indices into offsetChecks) against this call's packed lengths. */
  private *checkOffsets(
    checks: readonly number[],
    plan: LaunchPlan,
    buffers: BufferLookup,
    hostValues: ReadonlyMap<number, ArrayLike<number>> | undefined,
  ): Generator<HostRead, void, ArrayLike<number>> {
    for (const k of checks) {
      const c = this.offsetChecks[k]!;
      const buffer = buffers.get(c.node)!;
      const packedTypes = plan.offsetPacked[k]!;
      const totals = packedTypes.map((t) => t?.batch[0]);
      // Only read-backs are worth remembering: a host array (JS) may be a caller's zero-copy view, so it is checked each time.
      const remember = c.input >= 0 && this.backend.readSync === undefined;
      const done = remember ? checkedInputs.get(buffer) : undefined;
      if (done !== undefined && totals.every((t) => done.has(t ?? -1) || (t === undefined && done.size > 0))) continue;
      const type = plan.offsetTypes[k]!;
      const first = c.uses[0] ? segmentOpName(c.uses[0].op) : "segmented kernel";
      const values = yield* this.hostRead(
        buffer,
        c.input,
        hostValues,
        `${first}: jagged offsets ${fmtTypeShape(type)} are checked on the host before a segmented kernel reads them`,
      );
      const problems =
        totals.length === 0 ? [offsetsProblem(values, undefined)] : totals.map((t) => offsetsProblem(values, t));
      const bad = problems.findIndex((p) => p !== undefined);
      if (bad >= 0) {
        const u = c.uses[bad];
        const pt = packedTypes[bad];
        const packed = pt !== undefined ? ` (packed values ${fmtTypeShape(pt)})` : "";
        throw new ShapeError(
          `${u ? segmentOpName(u.op) : "segmented kernel"}: jagged offsets ${fmtTypeShape(type)} ${problems[bad]}${packed}; offsets must start at 0, never decrease and end at the number of packed values`,
        );
      }
      if (remember) {
        const seen = checkedInputs.get(buffer) ?? new Set<number>();
        for (const t of totals) seen.add(t ?? -1);
        if (totals.length === 0) seen.add(-1);
        checkedInputs.set(buffer, seen);
      }
    }
  }

  private *exec(
    inputs: readonly BoundValue[],
    hostValues: ReadonlyMap<number, ArrayLike<number>> | undefined,
  ): Generator<HostRead, BoundValue[], ArrayLike<number>> {
    const bufs = this.bindSlots(inputs);
    const plan = this.plan(inputs, yield* this.lengths(inputs, hostValues));
    const buffers: BufferLookup = { get: (n) => bufs[this.slotOf.get(n)!] };
    // Input offsets are checked before anything is allocated or launched.
    const before = this.checksAfter[0];
    if (before !== undefined) yield* this.checkOffsets(before, plan, buffers, hostValues);
    const spare: Spare = new Map();
    for (let si = 0; si < this.stepSlots.length; si++) {
      this.step(si, bufs, plan, spare);
      const checks = this.checksAfter[si + 1];
      if (checks !== undefined) {
        try {
          yield* this.checkOffsets(checks, plan, buffers, hostValues);
        } catch (e) {
          // Bad offsets (or a failed read-back) end the run: free every buffer it allocated.
          const mine = new Set(bufs);
          mine.delete(undefined);
          for (let i = 0; i < inputs.length; i++) mine.delete(bufs[i]);
          for (const buf of mine) this.backend.free(buf!);
          throw e;
        }
      }
    }
    return this.finish(bufs, plan, spare);
  }

  /**
   * `exec` for a program that needs no host values (no jagged offsets to check, no
   * pad to the longest row): the same steps without a generator, which is most of
   * what a call on a small batch costs besides the kernel itself.
   */
  private execPlain(inputs: readonly BoundValue[]): BoundValue[] {
    const bufs = this.bindSlots(inputs);
    const plan = this.plan(inputs, undefined);
    // A plain run is synchronous and no kernel calls back into it, so one map serves every run.
    const spare = this.spare;
    if (spare.size > 0) spare.clear();
    for (let si = 0; si < this.stepSlots.length; si++) this.step(si, bufs, plan, spare);
    return this.finish(bufs, plan, spare);
  }

  /** The buffer of every slot (graph inputs first, then each step's results), inputs filled in. */
  private bindSlots(inputs: readonly BoundValue[]): (DeviceBuffer | undefined)[] {
    const g = this.schedule.graph;
    if (inputs.length !== g.inputs.length)
      throw new BackendError(`program @${g.name}: expects ${g.inputs.length} inputs, got ${inputs.length}`);
    const bufs = new Array<DeviceBuffer | undefined>(this.slotCount);
    for (let i = 0; i < inputs.length; i++) bufs[i] = inputs[i]!.buffer;
    return bufs;
  }

  /** One step: a view, a copy or a kernel launch, then the buffers that die after it go to `spare`. */
  private step(si: number, bufs: (DeviceBuffer | undefined)[], plan: LaunchPlan, spare: Spare): void {
    const b = this.backend;
    const sl = this.stepSlots[si]!;
    const kind = this.schedule.steps[si]!.kind;
    if (kind === "view") {
      bufs[sl.outs[0]!] = bufs[sl.ins[0]!];
    } else if (kind === "copy") {
      const buf = this.allocOrReuse(plan.outputs[si]![0]!, spare);
      bufs[sl.outs[0]!] = buf;
      b.copy(
        buf,
        sl.ins.map((src, k) => ({ src: bufs[src]!, regions: plan.copies[si]![k]! })),
      );
    } else {
      const sizes = plan.outputs[si]!;
      const outs: DeviceBuffer[] = [];
      for (let j = 0; j < sl.outs.length; j++) {
        const buf = this.allocOrReuse(sizes[j]!, spare);
        bufs[sl.outs[j]!] = buf;
        outs.push(buf);
      }
      const ins: DeviceBuffer[] = [];
      for (let j = 0; j < sl.ins.length; j++) ins.push(bufs[sl.ins[j]!]!);
      b.dispatch(this.compiled[si]!, ins, outs, plan.launches[si]!);
      counters.dispatches++;
    }
    // Buffer planning: an intermediate whose last use has passed is reused by a
    // later step that needs the same dtype and length; what is left goes back to the backend.
    const rel = this.releaseSlots[si]!;
    for (let j = 0; j < rel.length; j++) {
      const buf = bufs[rel[j]!]!;
      const key = `${buf.dtype}:${buf.length}`;
      const list = spare.get(key);
      if (list) list.push(buf);
      else spare.set(key, [buf]);
    }
  }

  private allocOrReuse(size: { dtype: DType; length: number }, spare: Spare): DeviceBuffer {
    const buf = spare.size === 0 ? undefined : spare.get(`${size.dtype}:${size.length}`)?.pop();
    if (buf !== undefined) {
      counters.buffersReused++;
      return buf;
    }
    return this.backend.alloc(size.dtype, size.length);
  }

  /** Frees what no later step reused and returns the graph outputs. */
  private finish(bufs: readonly (DeviceBuffer | undefined)[], plan: LaunchPlan, spare: Spare): BoundValue[] {
    for (const list of spare.values()) for (const buf of list) this.backend.free(buf);
    return this.outputSlots.map((k, i) => ({ buffer: bufs[k]!, type: plan.outputTypes[i]! }));
  }

  /** This call's padded lengths (the longest row of each run-time-length pad's offsets). */
  private *lengths(
    inputs: readonly BoundValue[],
    hostValues: ReadonlyMap<number, ArrayLike<number>> | undefined,
  ): Generator<HostRead, Map<Node, number> | undefined, ArrayLike<number>> {
    if (this.runtimeLengths.length === 0) return undefined;
    const out = new Map<Node, number>();
    const read = new Map<number, ArrayLike<number>>();
    for (const [n, i] of this.runtimeLengths) {
      let values = read.get(i);
      if (values === undefined) {
        values = yield* this.hostRead(
          inputs[i]!.buffer,
          i,
          hostValues,
          `${n.op}: padding to the longest row reads the offsets (input ${i}) on the host (or give maxLength)`,
        );
        read.set(i, values);
      }
      out.set(n, longestRow(values));
    }
    return out;
  }

  private lastInputs: ConcreteType[] | undefined;
  private lastLengths: Map<Node, number> | undefined;
  private lastPlan: LaunchPlan | undefined;

  /**
   * Shapes, output sizes and launch arguments for one call. Shape inference runs only
   * when the input shapes (and run-time padded lengths) differ from the previous call's.
   */
  private plan(inputs: readonly BoundValue[], lengths: Map<Node, number> | undefined): LaunchPlan {
    if (
      this.lastPlan !== undefined &&
      this.lastInputs !== undefined &&
      sameTypes(this.lastInputs, inputs) &&
      sameLengths(this.lastLengths, lengths)
    )
      return this.lastPlan;
    const bound = new Map<Node, ConcreteType>();
    this.schedule.graph.inputs.forEach((n, i) => bound.set(n, inputs[i]!.type));
    const types = inferConcrete(this.schedule.order, bound, lengths);
    checkEmptyReductions(this.schedule.order, types);
    const plan: LaunchPlan = {
      outputs: this.schedule.steps.map((st) => {
        const outs = st.kind === "kernel" ? st.outputs : st.kind === "copy" ? [st.node] : [];
        return outs.map((n) => ({
          dtype: types.get(n)!.dtype,
          length: prod(types.get(n)!.batch) * prod(types.get(n)!.base),
        }));
      }),
      copies: this.schedule.steps.map((st) => (st.kind === "copy" ? copyRegions(st.node, st.sources, types) : [])),
      launches: this.schedule.steps.map((st, si) =>
        st.kind === "kernel"
          ? {
              consts: this.consts[si],
              // A pad to the longest row passes that length as a second size (see `launchRank`).
              // As int32 (`| 0`): kernels index with these, and a heap-number size would make every index one.
              batchSizes: (st.kernel.segment?.maxN === -1
                ? [...types.get(st.space)!.batch, types.get(st.outputs[0]!)!.batch[1]!]
                : types.get(st.space)!.batch
              ).map((v) => v | 0),
              // Padded inputs of segmented kernels get their plain row-major strides: M = s0 / s1.
              inputBatchStrides: st.inputs.map((n, j) =>
                batchStrides(types.get(n)!, st.kernel.inputs[j]!.padded === true).map((v) => v | 0),
              ),
            }
          : undefined,
      ),
      outputTypes: this.schedule.graph.outputs.map((o) => types.get(o)!),
      offsetPacked: this.offsetChecks.map((c) =>
        c.uses.map((u) => (u.packed === undefined ? undefined : types.get(u.packed)!)),
      ),
      offsetTypes: this.offsetChecks.map((c) => types.get(c.node)!),
    };
    this.lastInputs = inputs.map((v) => v.type);
    this.lastLengths = lengths;
    this.lastPlan = plan;
    return plan;
  }

  /** The generated source of every kernel, in launch order. */
  kernelSources(): string[] {
    return this.compiled.filter((c): c is CompiledKernel => c !== undefined).map((c) => c.source);
  }
}
