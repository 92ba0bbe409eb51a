/**
 * `jit(fn)`: trace once per (batch rank, base shape, dtype) of each argument,
 * with symbolic batch dims; compile the graph once; run it at any batch size.
 */
import { isDType, type DType } from "../ir/dtype.js";
import { BackendError, TraceError } from "../ir/errors.js";
import { graphToDot, scheduleToDot } from "../ir/dot.js";
import { printGraph } from "../ir/print.js";
import { fmtType, type Dim } from "../ir/types.js";
import { PASS_NAMES, runPipeline, type PipelineResult } from "../passes/pipeline.js";
import type { FuseOptions } from "../passes/fuse.js";
import { fuseOptionsFor } from "../runtime/fuse-options.js";
import type { Backend } from "../runtime/backend.js";
import { kernelSources, Program, type BoundValue } from "../runtime/program.js";
import { counters } from "../runtime/stats.js";
import { getBackend } from "./backend.js";
import { debugLog, debugOn } from "../runtime/debug.js";
import { bundleSource, bundleSourceAsync, bundleTypes, type BundleTypesOptions, type Traced } from "./bundle.js";
import { installCompiler } from "./compiler.js";
import { buildGraph } from "./graph.js";
import { concreteType, realize, realizeSync } from "./realize.js";
import { Tensor } from "./tensor.js";
import { checkBatchesAgree, reverseSweepCount } from "./trace-flags.js";
import {
  checkFunction,
  checkJitOptions,
  checkSpecParts,
  argKind,
  checkSpecs,
  flatten,
  isJitArg,
  leafKinds,
  unflatten,
  type JitArg,
} from "./args.js";

// jit compiles (a page that imports only jit gets the compiler with it).
installCompiler();

/** Counters of one jit function (`f.stats`): one trace across batch sizes shows as `traces: 1`. */
export interface JitStats {
  /** Times the function was traced. */
  traces: number;
  /** Kernels compiled for this function (kernel cache misses). */
  compiles: number;
  /** Calls served by an existing trace (no retrace, no compile). */
  cacheHits: number;
  /** Kernel cache hits while building this function's programs. */
  kernelCacheHits: number;
  /** Calls so far. */
  calls: number;
}

/** What `JitFunction.dump` prints. */
export interface DumpOptions {
  /** The graph after this pass: "input" (as traced), "lower", or "fuse" (the kernels' graph). */
  readonly after?: string;
  /** The generated kernel source instead of the IR. */
  readonly kernels?: boolean;
}

export type { JitArg };
/** What a jit function returns: one tensor, jagged tensor or TensorDict, or an array of them. */
export type JitOutput = JitArg | readonly JitArg[];

/**
 * The function `jit` and `trace` return: called like `fn` (a trace per new
 * argument signature, kernels reused at any batch size), with its stats, its IR
 * and its bundles.
 */
export interface JitFunction<A extends JitArg[], R extends JitOutput> {
  /** Runs the compiled function (tracing it first for a new argument signature); the JS backend returns at once. */
  (...args: A): R;
  /** Async variant: needed on backends that compile or read asynchronously (WebGPU). */
  callAsync(...args: A): Promise<R>;
  /** Counters of traces, compiles and cache hits. */
  readonly stats: JitStats;
  /** The IR text of the most recent trace (or after a named pass). */
  dump(opts?: DumpOptions): string;
  /** Graphviz DOT of the most recent trace after a pass; `after: "fuse"` draws one cluster per kernel. */
  dot(opts?: { readonly after?: string }): string;
  /**
   * The most recent trace as a bundle: ES module text with the fused graph and its
   * kernels (JS functions and WGSL), to load with `loadBundle` and no compiler.
   */
  bundle(): string;
  /**
   * `bundle()` on any backend: captured constants are read asynchronously (on
   * WebGPU they live on the device, and `bundle()` is a BundleError for them).
   */
  bundleAsync(): Promise<string>;
  /**
   * The TypeScript declarations of `bundle()`'s module, to save next to it
   * (`f.bundle.d.mts` for `f.bundle.mjs`): with them, `await loadBundle(mod)` is
   * typed `(x0: Tensor, …) => …` from the trace's arguments and results.
   */
  bundleTypes(opts?: BundleTypesOptions): string;
}

/**
 * The signature of one argument for `trace`: a tensor's dtype, batch dims (labels:
 * only their number matters, sizes stay run-time) and static base shape, or a
 * jagged tensor's (`jagged: true`; values `(T; base)`, int32 offsets).
 */
export interface ArgSpec {
  /** The element type. */
  readonly dtype: DType;
  /** One label per batch dim (`["B"]`); only their number matters, the sizes are given at run time. */
  readonly batch: readonly string[];
  /** The static base shape. */
  readonly base: readonly number[];
  /** A JaggedTensor `(B, ~N; base)` rather than a Tensor. */
  readonly jagged?: boolean;
}

/** `spec("float32", ["B"], [3, 3])`: a `(B; 3,3)` float32 argument for `trace`. */
export function spec(dtype: DType, batch: readonly string[], base: readonly number[]): ArgSpec {
  checkSpecParts("spec", { batch, base });
  return { dtype, batch: [...batch], base: [...base] };
}

/** A jagged `(B, ~N; base)` argument for `trace`. */
export function jaggedSpec(dtype: DType, base: readonly number[]): ArgSpec {
  checkSpecParts("jaggedSpec", { base });
  return { dtype, batch: ["B", "~N"], base: [...base], jagged: true };
}

/** A TensorDict argument for `trace`: its shared batch labels and its entries' specs. */
export interface DictSpec {
  /** The dict's batch labels, which lead every entry's batch. */
  readonly batch: readonly string[];
  /** Each entry's spec, by key (nested dicts allowed). */
  readonly entries: { readonly [key: string]: ArgSpec | DictSpec };
}

/** `dictSpec(["B"], { obs: spec("float32", ["B"], [3]) })`: a TensorDict with batch size `[B]`. */
export function dictSpec(batch: readonly string[], entries: { readonly [key: string]: ArgSpec | DictSpec }): DictSpec {
  checkSpecParts("dictSpec", { batch, entries });
  return { batch: [...batch], entries: { ...entries } };
}

/**
 * Traces and compiles `fn` ahead of time from argument specs, with no data: the
 * result is the `jit` function, already traced (`dump`, `dot`, `stats` work now)
 * and with its kernels compiled, so its first call at any batch size is a cache hit.
 * ```ts
 * const f = trace((m: Tensor) => new R2(m).det().t, [spec("float32", ["B"], [3, 3])]);
 * f.dump({ after: "fuse" }); // before any data exists
 * ```
 */
export function trace<A extends JitArg[], R extends JitOutput>(
  fn: (...args: A) => R,
  specs: readonly (ArgSpec | DictSpec)[],
  opts: JitOptions = {},
): JitFunction<A, R> {
  checkFunction("trace", fn);
  checkSpecs(specs);
  const f = jit(fn, opts);
  // Placeholders carry only a type: tracing reads dtype, batch rank and base shape (and a dict's keys).
  const of = (dtype: DType, batchRank: number, base: readonly number[]) =>
    new Tensor({ dtype, batch: new Array<number>(batchRank).fill(1), base: [...base] }, { kind: "disposed" });
  const placeholder = (s: ArgSpec | DictSpec, where: string): JitArg => {
    if ("entries" in s) {
      const dict = argKind("dict", `trace: ${where} (a dictSpec)`);
      const entries: [string, JitArg][] = [];
      for (const [k, v] of Object.entries(s.entries)) {
        const x = placeholder(v, `${where}.${k}`);
        const rank = x instanceof Tensor || dict.is(x) ? x.batchDim : 2;
        if (rank < s.batch.length)
          throw new TraceError(
            `trace: ${where}.${k} has ${rank} batch dims, fewer than its dict's [${s.batch.join(", ")}]`,
          );
        entries.push([k, x]);
      }
      return dict.make(new Array<number>(s.batch.length).fill(1), entries);
    }
    if (!isDType(s.dtype)) throw new TraceError(`trace: ${where} has an unknown dtype ${String(s.dtype)}`);
    if (s.base.some((d) => !Number.isInteger(d) || d < 0))
      throw new TraceError(`trace: ${where} base (${s.base.join(",")}) must be static non-negative sizes`);
    return s.jagged
      ? argKind("jagged", `trace: ${where} (a jaggedSpec)`).make(of(s.dtype, 1, s.base), of("int32", 1, []))
      : of(s.dtype, s.batch.length, s.base);
  };
  const { tensors, kinds } = flatten(
    specs.map((s, i) => placeholder(s, `spec ${i}`)),
    "trace",
  );
  (f as unknown as { [TRACE_FOR]: (args: readonly Tensor[], kinds: string) => void })[TRACE_FOR](tensors, kinds);
  return f;
}

const TRACE_FOR = Symbol("traceFor");

/** Options of `jit` and `trace`. */
export interface JitOptions {
  /** A name for the traced graph (in `dump` and bundles). */
  readonly name?: string;
  /** The backend to compile for and run on (default: the current one, `getBackend()`). */
  readonly backend?: Backend;
  /** false: one kernel per op (for comparison). */
  readonly fusion?: boolean;
  /**
   * Default "relaxed": on the JS backend, float32 intermediates stay in float64 inside a
   * kernel and round only when stored (as a hand-written JS loop over Float32Arrays
   * does: faster, at least as accurate, not bit-identical to op-by-op evaluation).
   * "exact": every float32 op rounds, so fused JS kernels give the bits of op-by-op
   * evaluation and of the reference interpreter. WGSL is float32 per op either way.
   */
  readonly float32?: "exact" | "relaxed";
}

interface Entry {
  readonly key: string;
  readonly pipeline: PipelineResult;
  /** The options the schedule was fused with (a bundle records them). */
  readonly fuse: FuseOptions;
  readonly captured: readonly Tensor[];
  readonly program: Program | Promise<Program>;
  readonly multi: boolean;
  /** How the flat outputs rebuild into tensors and jagged tensors. */
  readonly outKinds: string;
  /** The results are plain tensors (no unflattening). */
  readonly plainOut: boolean;
  /** The same for the arguments. */
  readonly kinds: string;
  /** The backend the trace was fused and compiled for. */
  readonly backend: string;
  /** The trace ran a reverse-mode sweep (grad, vjp, jacrev, …): calls whose arguments broadcast batch dims are refused. */
  readonly reverse: boolean;
  /** The program once an asynchronous compile has finished. */
  compiled?: Program;
  /** The program as `Program.create` returned it (its kernel sources exist before an asynchronous compile ends). */
  readonly created: Program | Promise<Program>;
}

let nextTraceId = 1;

/**
 * Compiles `fn` for batch-generic reuse:
 * ```ts
 * const f = jit((x: Tensor) => x.sub(x.mean(0, { keepdim: true })));
 * f(fromTypedArray(a, [7, 100, 3], { batchDim: 1 }));   // traces and compiles
 * f(fromTypedArray(b, [1000, 100, 3], { batchDim: 1 })); // reuses both
 * f.stats; // { traces: 1, compiles: …, cacheHits: 1, … }
 * ```
 */
export function jit<A extends JitArg[], R extends JitOutput>(
  fn: (...args: A) => R,
  opts: JitOptions = {},
): JitFunction<A, R> {
  checkFunction("jit", fn);
  checkJitOptions("jit", opts);
  const stats: JitStats = { traces: 0, compiles: 0, cacheHits: 0, kernelCacheHits: 0, calls: 0 };
  // A function name such as "bound f" or "ü" is not an IR name (`func @name`): keep letters, digits, _ . -
  const name = opts.name ?? ((fn.name || "jit").replace(/[^\w.-]/g, "_") || "jit");
  const cache = new TraceCache(
    (args, kinds, key, forget) => traceEntry({ fn, name, opts, stats }, args, kinds, key, forget),
    stats,
  );
  const entryFor = (args: readonly Tensor[], kinds: string): Entry => {
    // A trace is compiled for one backend: after setBackend, the same signature is another entry.
    const e = cache.lookup(args, kinds, (opts.backend ?? getBackend()).name, name);
    cache.setLast(e);
    return e;
  };

  const f = ((...args: A): R => {
    stats.calls++;
    const { tensors, kinds } = flattenArgs(args);
    for (let i = 0; i < tensors.length; i++) realizeSync(tensors[i]!);
    const e = entryFor(tensors, kinds);
    if (e.program instanceof Promise)
      throw new TraceError(`jit @${name}: this backend compiles asynchronously; use f.callAsync(...)`);
    return outputsOf<R>(e, e.program, e.program.run(bindArgs(name, e, tensors, e.program.backend)));
  }) as JitFunction<A, R>;

  f.callAsync = async (...args: A): Promise<R> => {
    stats.calls++;
    const { tensors, kinds } = flattenArgs(args);
    for (const a of tensors) await realize(a);
    const e = entryFor(tensors, kinds);
    const program = await e.program;
    const bound = bindArgs(name, e, tensors, program.backend);
    // Values the host needs before the launch (offsets of a pad to the longest row), read back now.
    const hostValues = new Map<number, ArrayLike<number>>();
    for (const i of program.hostInputs) hostValues.set(i, await program.backend.read(bound[i]!.buffer));
    // runAsync: jagged offsets computed on the device are read back and checked before a segmented kernel reads them.
    return outputsOf<R>(e, program, await program.runAsync(bound, hostValues));
  };

  Object.defineProperty(f, "stats", { get: () => ({ ...stats }) });
  // `trace`: trace and compile for placeholder arguments (types only); not a call.
  Object.defineProperty(f, TRACE_FOR, {
    value: (args: readonly Tensor[], kinds: string): void => void entryFor(args, kinds),
  });

  const lastEntry = (hint = ""): Entry => {
    const last = cache.last;
    if (last === undefined) throw new TraceError(`jit @${name}: not traced yet; call it once first${hint}`);
    return last;
  };
  f.dot = (o: { after?: string } = {}): string => {
    const last = lastEntry();
    const after = o.after ?? "input";
    if (after === "fuse") return scheduleToDot(last.pipeline.schedule);
    const g = last.pipeline.stages.get(after);
    if (g === undefined) throw new TraceError(`dot: unknown pass "${after}"; passes are ${PASS_NAMES.join(", ")}`);
    return graphToDot(g);
  };

  const traced = (): Traced => {
    const last = lastEntry(" (or use trace)");
    return {
      backend: last.backend,
      schedule: last.pipeline.schedule,
      fuse: last.fuse,
      captured: last.captured,
      args: last.kinds,
      results: last.outKinds,
      multi: last.multi,
      batchesAgree: last.reverse,
    };
  };
  f.bundle = (): string => bundleSource(traced());
  f.bundleAsync = async (): Promise<string> => bundleSourceAsync(traced());
  f.bundleTypes = (o?: BundleTypesOptions): string => bundleTypes(traced(), o);

  f.dump = (o: DumpOptions = {}): string => {
    const last = lastEntry();
    if (o.kernels) {
      // Also while an asynchronous backend is still compiling: the sources exist already.
      return kernelSources(last.created).join("\n\n");
    }
    const after = o.after ?? "input";
    if (after === "fuse") return describeSchedule(last.pipeline);
    const g = last.pipeline.stages.get(after);
    if (g === undefined) throw new TraceError(`dump: unknown pass "${after}"; passes are ${PASS_NAMES.join(", ")}`);
    return printGraph(g);
  };
  return f;
}

/**
 * The traces of one jit function by argument signature, the fast path for a repeated
 * signature, and the most recent trace (what dump, dot and bundle show). A trace is a
 * transaction: a trace that throws, returns something other than tensors, or whose
 * kernels fail to compile leaves no entry, no fast-path signature and no "last trace",
 * so the next call with that signature traces again.
 */
class TraceCache {
  private readonly entries = new Map<string, Entry>();
  /** The trace of the most recent successful call (or `trace`). */
  last: Entry | undefined;
  /** For an entry whose compile is still pending: the `last` it replaced, restored if the compile fails. */
  private readonly replaced = new WeakMap<Entry, Entry | undefined>();
  /** Fast path: the entry and argument signature of the previous successful lookup. */
  private fast: Entry | undefined;
  private fastArgs: readonly Tensor[] = [];
  private fastKinds = "";

  constructor(
    /** Traces and compiles one signature; `forget` drops it if its asynchronous compile fails. */
    private readonly trace: (args: readonly Tensor[], kinds: string, key: string, forget: (e: Entry) => void) => Entry,
    private readonly stats: JitStats,
  ) {}

  lookup(args: readonly Tensor[], kinds: string, backendName: string, name: string): Entry {
    const fast = this.fast;
    if (
      fast !== undefined &&
      kinds === this.fastKinds &&
      fast.backend === backendName &&
      sameSignature(args, this.fastArgs)
    ) {
      this.stats.cacheHits++;
      this.fastArgs = args;
      return fast;
    }
    const key =
      `${backendName}:${kinds}:` + args.map((a) => `${a.dtype}:${a.batchDim}:${a.baseShape.join("x")}`).join("|");
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      this.stats.cacheHits++;
      debugLog("cache", `jit @${name}: trace hit ${key}`);
      return this.remember(hit, args, kinds);
    }
    const entry = this.trace(args, kinds, key, (e) => this.forget(e));
    this.entries.set(key, entry);
    return this.remember(entry, args, kinds);
  }

  setLast(e: Entry): void {
    if (e === this.last) return;
    if (e.program instanceof Promise && !this.replaced.has(e)) this.replaced.set(e, this.last);
    this.last = e;
  }

  private remember(e: Entry, args: readonly Tensor[], kinds: string): Entry {
    this.fast = e;
    this.fastArgs = args;
    this.fastKinds = kinds;
    return e;
  }

  /** Drops every trace of an entry whose compile failed. */
  private forget(e: Entry): void {
    if (this.entries.get(e.key) === e) this.entries.delete(e.key);
    if (this.fast === e) this.fast = undefined;
    if (this.last === e) {
      const before = this.replaced.get(e);
      this.last = before !== undefined && this.entries.get(before.key) === before ? before : undefined;
    }
  }
}

/** The same dtypes, batch ranks and base shapes (batch sizes may differ: the trace serves any). */
function sameSignature(a: readonly Tensor[], b: readonly Tensor[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!._type;
    const y = b[i]!._type;
    if (x.dtype !== y.dtype || x.batch.length !== y.batch.length || x.base.length !== y.base.length) return false;
    for (let j = 0; j < x.base.length; j++) if (x.base[j] !== y.base[j]) return false;
  }
  return true;
}

/** What a trace needs of its jit function: the function, its IR name, its options and its counters. */
interface JitContext<A extends JitArg[], R extends JitOutput> {
  readonly fn: (...args: A) => R;
  readonly name: string;
  readonly opts: JitOptions;
  readonly stats: JitStats;
}

/** The kinds string of `n` plain tensor arguments, per count (the common case needs no flattening). */
const plainKinds: string[] = [];
/** A call's arguments as tensors and their kinds (src/args.ts); plain tensors pass through. */
function flattenArgs(args: readonly unknown[]): { tensors: readonly Tensor[]; kinds: string } {
  for (let i = 0; i < args.length; i++) if (!(args[i] instanceof Tensor)) return flatten(args);
  return { tensors: args as readonly Tensor[], kinds: (plainKinds[args.length] ??= "t".repeat(args.length)) };
}

/** Traces `fn` on parameters of the arguments' types and compiles it; throws (changing nothing but the counters) if any of it fails. */
function traceEntry<A extends JitArg[], R extends JitOutput>(
  { fn, name, opts, stats }: JitContext<A, R>,
  args: readonly Tensor[],
  kinds: string,
  key: string,
  forget: (e: Entry) => void,
): Entry {
  debugLog("cache", `jit @${name}: tracing ${key}`);
  const before = { compiles: counters.compiles, hits: counters.cacheHits };
  const traceId = nextTraceId++;
  const maxRank = Math.max(0, ...args.map((a) => a.batchDim));
  // Symbolic batch dims: b0, b1, … aligned from the right; a jagged argument's packed
  // length is t<k> and its offsets' length r<k> (so its rows are r<k>-1).
  const jaggedIndex = new Map<number, number>();
  const leaves = leafKinds(kinds);
  for (let i = 0, k = 0, jn = 0; i < leaves.length; i++) {
    if (leaves[i] === "j") {
      jaggedIndex.set(k, jn);
      jaggedIndex.set(k + 1, jn++);
      k += 2;
    } else k++;
  }
  const params = args.map((a, index) => {
    const jn = jaggedIndex.get(index);
    const batch: Dim[] =
      jn === undefined
        ? a._type.batch.map((_, j) => `b${maxRank - a.batchDim + j}`)
        : [a.dtype === "int32" && a.baseDim === 0 && jaggedIndex.get(index - 1) === jn ? `r${jn}` : `t${jn}`];
    return new Tensor({ dtype: a.dtype, batch, base: a.baseShape }, { kind: "param", traceId, index });
  });
  const sweeps = reverseSweepCount();
  const result = fn(...(unflatten(params, kinds) as A));
  const reverse = reverseSweepCount() > sweeps;
  const multi = Array.isArray(result);
  const results: unknown[] = multi ? [...(result as readonly unknown[])] : [result];
  results.forEach((o, i) => {
    if (!isJitArg(o)) {
      const what = multi
        ? `element ${i} of the returned array is ${describeValue(o)}`
        : `it returned ${describeValue(o)}`;
      throw new TraceError(
        `jit @${name}: the function must return Tensors, JaggedTensors or TensorDicts (or an array of them); ${what}`,
      );
    }
  });
  const { tensors: outs, kinds: outKinds } = flatten(results);
  // Lazy tensors created outside the trace are realized now and captured as constants.
  const built = buildGraph(name, outs, params, traceId);
  for (const c of built.captured) realizeSync(c);
  stats.traces++;
  counters.traces++;
  const backend = opts.backend ?? getBackend();
  debugLog("ir", printGraph(built.graph));
  const fuseOptions: FuseOptions = fuseOptionsFor(backend, opts);
  const pipeline = runPipeline(
    built.graph,
    fuseOptions,
    debugOn("passes") ? (pass, text) => debugLog("passes", `after ${pass}:\n${text}`) : undefined,
  );
  const program = Program.create(pipeline.schedule, backend);
  stats.compiles += counters.compiles - before.compiles;
  stats.kernelCacheHits += counters.cacheHits - before.hits;
  const common = {
    key,
    pipeline,
    fuse: fuseOptions,
    captured: built.captured,
    multi,
    outKinds,
    plainOut: /^t*$/.test(outKinds),
    kinds,
    backend: backend.name,
    reverse,
  };
  if (!(program instanceof Promise)) return { ...common, program, created: program };
  // An asynchronous compile that fails forgets the entry (and rejects its callers).
  const guarded = program.then(
    (p) => {
      entry.compiled = p;
      return p;
    },
    (e: unknown) => {
      forget(entry);
      throw e;
    },
  );
  // Callers that await `program` see the rejection; nobody awaiting it is not an unhandled rejection.
  guarded.catch(() => undefined);
  const entry: Entry = { ...common, program: guarded, created: program };
  return entry;
}

/** The call's buffers for the program: the arguments, then the captured tensors; each must live on its backend. */
function bindArgs(name: string, e: Entry, args: readonly Tensor[], backend: Backend): BoundValue[] {
  if (e.reverse) checkBatchesAgree(`jit @${name}`, leafKinds(e.kinds), args);
  const captured = e.captured;
  const bound = new Array<BoundValue>(args.length + captured.length);
  for (let i = 0; i < bound.length; i++) {
    const arg = i < args.length;
    const t = arg ? args[i]! : captured[i - args.length]!;
    const s = t._src;
    if (s.kind !== "buffer") throw new TraceError("internal: argument not realized");
    if (!backend.owns(s.buffer)) {
      const what = arg ? `argument ${i} ${t.toString()}` : `a captured tensor ${t.toString()}`;
      throw new BackendError(
        `jit @${name}: ${what} lives on the ${s.backend.name} backend, but this function runs on ${backend.name}: move it first with await t.to("${backend.name}")`,
      );
    }
    bound[i] = { buffer: s.buffer, type: concreteType(t) };
  }
  return bound;
}

/** The program's output buffers as the function's results (tensors, jagged tensors, dicts; one or an array). */
function outputsOf<R>(e: Entry, program: Program, ran: readonly BoundValue[]): R {
  const backend = program.backend;
  if (!e.multi && e.plainOut) return Tensor._fromBuffer(ran[0]!.type, ran[0]!.buffer, backend) as unknown as R;
  const flat = new Array<Tensor>(ran.length);
  for (let i = 0; i < ran.length; i++) flat[i] = Tensor._fromBuffer(ran[i]!.type, ran[i]!.buffer, backend);
  const outs = e.plainOut ? flat : unflatten(flat, e.outKinds);
  return (e.multi ? outs : outs[0]!) as unknown as R;
}

/** What a value is, for an error message: "a number (42)", "undefined", "a Promise (async functions cannot be traced)". */
function describeValue(v: unknown): string {
  if (v === null || v === undefined) return String(v);
  if (Array.isArray(v)) return `an array of ${v.length}`;
  if (v instanceof Promise) return "a Promise (an async function cannot be traced: return the tensors themselves)";
  const t = typeof v;
  if (t === "number" || t === "boolean" || t === "bigint") return `a ${t} (${String(v)})`;
  if (t === "string")
    return `a string (${JSON.stringify((v as string).length > 20 ? `${(v as string).slice(0, 20)}…` : v)})`;
  if (t === "function") return "a function";
  if (t === "symbol") return "a symbol";
  const ctor = (Object.getPrototypeOf(v) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof ctor === "string" && ctor !== "" && ctor !== "Object" ? `a ${ctor}` : "a plain object";
}

/** One line per step of a schedule: which node each kernel writes and what it reads. */
function describeSchedule(p: PipelineResult): string {
  const s = p.schedule;
  const lines = [`schedule @${s.graph.name}: ${s.steps.filter((x) => x.kind === "kernel").length} kernels`];
  const names = new Map<object, string>();
  s.graph.inputs.forEach((n, i) => names.set(n, `%${s.graph.inputNames[i]}`));
  let k = 0;
  let v = 0;
  const nameOf = (n: object): string => {
    let nm = names.get(n);
    if (nm === undefined) names.set(n, (nm = `%t${v++}`));
    return nm;
  };
  for (const step of s.steps) {
    if (step.kind === "view") {
      lines.push(`  ${nameOf(step.node)} = view ${nameOf(step.source)} : ${fmtType(step.node.type)}`);
    } else if (step.kind === "copy") {
      lines.push(
        `  ${nameOf(step.node)} = copy (${step.node.op}) ${step.sources.map(nameOf).join(", ")} : ${fmtType(step.node.type)}`,
      );
    } else {
      const outs = step.outputs.map((o) => `${nameOf(o)}: ${fmtType(o.type)}`).join(", ");
      const seg = step.kernel.segment;
      const red = seg
        ? ` segment ${seg.mode}`
        : step.kernel.reduce
          ? ` reduce(batch=[${step.kernel.reduce.batchAxes}], base=[${step.kernel.reduce.baseAxes}])`
          : "";
      lines.push(
        `  kernel ${k++} (${step.kernel.exprs.length} exprs${red}${step.kernel.unroll ? ", unrolled" : ""}) reads ${step.inputs.map(nameOf).join(", ") || "nothing"} -> ${outs}`,
      );
    }
  }
  return lines.join("\n");
}
