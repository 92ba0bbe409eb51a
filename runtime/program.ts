/**
 * The program executor: binds a schedule to concrete input shapes, allocates
 * buffers, launches kernels and frees intermediates after their last use.
 * Batch sizes enter only here, as launch arguments.
 */
import type { DType } from "../ir/dtype.js";
import { BackendError, ShapeError } from "../ir/errors.js";
import type { Node } from "../ir/graph.js";
import { kernelKey, type Launch } from "../ir/kernel.js";
import type { Schedule } from "../ir/schedule.js";
import { inferConcrete, longestRow, runtimeLengthNodes, runtimeLengthOffsets, type ConcreteType } from "../ir/shapes.js";
import { fmtTypeShape, prod } from "../ir/types.js";
import type { Backend, CompiledKernel, DeviceBuffer, ShippedKernel } from "./backend.js";
import { debugLog, debugOn } from "./debug.js";
import { counters } from "./stats.js";

const kernelCaches = new WeakMap<Backend, Map<string, CompiledKernel | Promise<CompiledKernel>>>();

/** Compiles through a per-backend cache keyed by the kernel's structure (no batch size in it). */
export function compileCached(backend: Backend, key: string, compile: () => CompiledKernel | Promise<CompiledKernel>): CompiledKernel | Promise<CompiledKernel> {
  let cache = kernelCaches.get(backend);
  if (cache === undefined) kernelCaches.set(backend, (cache = new Map()));
  const hit = cache.get(key);
  if (hit !== undefined) {
    counters.cacheHits++;
    return hit;
  }
  counters.compiles++;
  const c = compile();
  if (debugOn("kernels")) {
    if (c instanceof Promise) c.then((k) => debugLog("kernels", `${backend.name} kernel:\n${k.source}`), () => undefined);
    else debugLog("kernels", `${backend.name} kernel:\n${c.source}`);
  }
  cache.set(key, c);
  if (c instanceof Promise) {
    c.then(
      (v) => cache.set(key, v),
      () => cache.delete(key),
    );
  }
  return c;
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
  const axis = node.attrs.axis as number;
  const outer = prod(out.batch.slice(0, axis));
  const inner = prod(out.batch.slice(axis + 1)) * prod(out.base);
  const outLen = out.batch[axis]!;
  if (node.op === "batch_slice") {
    const srcLen = types.get(sources[0]!)!.batch[axis]!;
    const start = node.attrs.start as number;
    const step = node.attrs.step as number;
    const regions: Region[] = [];
    for (let o = 0; o < outer; o++) {
      if (step === 1) regions.push([(o * srcLen + start) * inner, o * outLen * inner, outLen * inner]);
      else for (let j = 0; j < outLen; j++) regions.push([(o * srcLen + start + j * step) * inner, (o * outLen + j) * inner, inner]);
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

/** Reductions that have no value over no elements (NumPy raises for them too). */
const NO_EMPTY = new Set(["min", "max", "argmin", "argmax"]);

/**
 * Batch sizes are known only here, so this is where a min/max/argmin/argmax over an
 * empty batch axis becomes a ShapeError (as over an empty base axis at trace time),
 * never a silent ±Inf or 0. sum gives 0, prod 1, mean NaN, all true, any false.
 */
function checkEmptyReductions(order: readonly Node[], types: ReadonlyMap<Node, ConcreteType>): void {
  for (const n of order) {
    if (!NO_EMPTY.has(n.op)) continue;
    const x = types.get(n.inputs[0]!)!;
    for (const a of (n.attrs.batchAxes as readonly number[] | undefined) ?? []) {
      if (x.batch[a] === 0) throw new ShapeError(`${n.op}: cannot reduce an empty batch axis ${a} of x ${fmtTypeShape(x)}`);
    }
  }
}

export class Program {
  private readonly compiled: (CompiledKernel | undefined)[];
  /** For each step, the nodes whose buffers die after it. */
  private readonly releases: Node[][];
  /** Pad/mask nodes padding to the longest row, and the input index of their offsets. */
  private readonly runtimeLengths: readonly (readonly [Node, number])[];

  private constructor(
    readonly schedule: Schedule,
    readonly backend: Backend,
    compiled: (CompiledKernel | undefined)[],
  ) {
    this.compiled = compiled;
    this.releases = Program.planReleases(schedule);
    const inputs = schedule.graph.inputs;
    this.runtimeLengths = runtimeLengthNodes(schedule.order).map((n) => [n, inputs.indexOf(runtimeLengthOffsets(n))] as const);
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
    const parts = schedule.steps.map((s) => (s.kind === "kernel" ? compileCached(backend, `${backend.name}:${kernelKey(s.kernel)}`, () => backend.compile(s.kernel)) : undefined));
    if (parts.some((p) => p instanceof Promise)) {
      return Promise.all(parts).then((ks) => new Program(schedule, backend, ks));
    }
    return new Program(schedule, backend, parts as (CompiledKernel | undefined)[]);
  }

  /** A program over kernels a bundle ships (no code generation; see `Backend.load`). */
  static fromShipped(schedule: Schedule, backend: Backend, shipped: readonly (ShippedKernel | undefined)[]): Program | Promise<Program> {
    const parts = schedule.steps.map((s, i) => {
      if (s.kind !== "kernel") return undefined;
      const code = shipped[i];
      if (code === undefined) throw new BackendError(`program @${schedule.graph.name}: step ${i} has no shipped kernel`);
      return backend.load(s.kernel, code);
    });
    if (parts.some((p) => p instanceof Promise)) return Promise.all(parts).then((ks) => new Program(schedule, backend, ks));
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
   */
  run(inputs: readonly BoundValue[], hostValues?: ReadonlyMap<number, ArrayLike<number>>): BoundValue[] {
    const g = this.schedule.graph;
    if (inputs.length !== g.inputs.length) throw new BackendError(`program @${g.name}: expects ${g.inputs.length} inputs, got ${inputs.length}`);
    const plan = this.plan(inputs, this.lengths(inputs, hostValues));
    const buffers = new Map<Node, DeviceBuffer>();
    for (let i = 0; i < inputs.length; i++) buffers.set(g.inputs[i]!, inputs[i]!.buffer);
    const b = this.backend;
    // Buffer planning: an intermediate whose last use has passed is reused by a
    // later step that needs the same dtype and length; what is left goes back to the backend.
    let spare: Map<string, DeviceBuffer[]> | undefined;
    const steps = this.schedule.steps;
    for (let si = 0; si < steps.length; si++) {
      const step = steps[si]!;
      if (step.kind === "view") {
        buffers.set(step.node, buffers.get(step.source)!);
      } else if (step.kind === "copy") {
        const { dtype, length } = plan.outputs[si]![0]!;
        let buf = spare?.get(`${dtype}:${length}`)?.pop();
        if (buf === undefined) buf = b.alloc(dtype, length);
        else counters.buffersReused++;
        buffers.set(step.node, buf);
        b.copy(buf, step.sources.map((src, k) => ({ src: buffers.get(src)!, regions: plan.copies[si]![k]! })));
      } else {
        const sizes = plan.outputs[si]!;
        const outs: DeviceBuffer[] = [];
        for (let j = 0; j < step.outputs.length; j++) {
          const { dtype, length } = sizes[j]!;
          let buf = spare?.get(`${dtype}:${length}`)?.pop();
          if (buf === undefined) buf = b.alloc(dtype, length);
          else counters.buffersReused++;
          buffers.set(step.outputs[j]!, buf);
          outs.push(buf);
        }
        const ins: DeviceBuffer[] = [];
        for (const n of step.inputs) ins.push(buffers.get(n)!);
        b.dispatch(this.compiled[si]!, ins, outs, plan.launches[si]!);
        counters.dispatches++;
      }
      for (const n of this.releases[si]!) {
        const buf = buffers.get(n)!;
        const key = `${buf.dtype}:${buf.length}`;
        spare ??= new Map();
        const list = spare.get(key);
        if (list) list.push(buf);
        else spare.set(key, [buf]);
      }
    }
    if (spare) for (const list of spare.values()) for (const buf of list) b.free(buf);
    const out: BoundValue[] = [];
    for (let i = 0; i < g.outputs.length; i++) out.push({ buffer: buffers.get(g.outputs[i]!)!, type: plan.outputTypes[i]! });
    return out;
  }

  /** This call's padded lengths (the longest row of each run-time-length pad's offsets). */
  private lengths(inputs: readonly BoundValue[], hostValues: ReadonlyMap<number, ArrayLike<number>> | undefined): Map<Node, number> | undefined {
    if (this.runtimeLengths.length === 0) return undefined;
    const out = new Map<Node, number>();
    const read = new Map<number, ArrayLike<number>>();
    for (const [n, i] of this.runtimeLengths) {
      let values = hostValues?.get(i) ?? read.get(i);
      if (values === undefined) {
        if (this.backend.readSync === undefined) {
          throw new BackendError(`${n.op}: padding to the longest row reads the offsets (input ${i}) on the host; the ${this.backend.name} backend reads asynchronously: use callAsync, or give maxLength`);
        }
        values = this.backend.readSync(inputs[i]!.buffer);
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
    if (this.lastPlan !== undefined && this.lastInputs !== undefined && sameTypes(this.lastInputs, inputs) && sameLengths(this.lastLengths, lengths)) return this.lastPlan;
    const bound = new Map<Node, ConcreteType>();
    this.schedule.graph.inputs.forEach((n, i) => bound.set(n, inputs[i]!.type));
    const types = inferConcrete(this.schedule.order, bound, lengths);
    checkEmptyReductions(this.schedule.order, types);
    const plan: LaunchPlan = {
      outputs: this.schedule.steps.map((st) => {
        const outs = st.kind === "kernel" ? st.outputs : st.kind === "copy" ? [st.node] : [];
        return outs.map((n) => ({ dtype: types.get(n)!.dtype, length: prod(types.get(n)!.batch) * prod(types.get(n)!.base) }));
      }),
      copies: this.schedule.steps.map((st) => (st.kind === "copy" ? copyRegions(st.node, st.sources, types) : [])),
      launches: this.schedule.steps.map((st) =>
        st.kind === "kernel"
          ? {
              // A pad to the longest row passes that length as a second size (see `launchRank`).
              batchSizes: st.kernel.segment?.maxN === -1 ? [...types.get(st.space)!.batch, types.get(st.outputs[0]!)!.batch[1]!] : types.get(st.space)!.batch,
              // Padded inputs of segmented kernels get their plain row-major strides: M = s0 / s1.
              inputBatchStrides: st.inputs.map((n, j) => batchStrides(types.get(n)!, st.kernel.inputs[j]!.padded === true)),
            }
          : undefined,
      ),
      outputTypes: this.schedule.graph.outputs.map((o) => types.get(o)!),
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

