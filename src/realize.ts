/**
 * Realization: the eager path. Reading a lazy tensor builds the graph behind it,
 * finds (or builds) the program for that graph's structure, and runs it. The
 * program cache is keyed by the graph text, whose batch dims are symbolic, so
 * the same code at another batch size reuses the program and its kernels.
 */
import { ARRAY_CTOR, type TypedArray } from "../ir/dtype.js";
import { BackendError, TraceError } from "../ir/errors.js";
import type { Graph } from "../ir/graph.js";
import { printGraph } from "../ir/print.js";
import type { Schedule } from "../ir/schedule.js";
import type { ConcreteType } from "../ir/shapes.js";
import { isConcrete } from "../ir/types.js";
import type { Backend } from "../runtime/backend.js";
import { Program } from "../runtime/program.js";
import { counters } from "../runtime/stats.js";
import { getBackend } from "./backend.js";
import { debugLog } from "../runtime/debug.js";
import { buildGraph } from "./graph.js";
import type { Tensor } from "./tensor.js";

/**
 * Most programs the eager cache keeps (least recently used evicted). Keys are graph
 * texts, constant values included (passes fold and simplify on them); the kernels
 * behind programs that differ only in constants are shared (see `kernelKey`).
 */
export const PROGRAM_CACHE_LIMIT = 512;
const programCache = new Map<string, Program | Promise<Program>>();

/**
 * The pass pipeline for the eager path, installed by the full library
 * (src/compiler.ts) so that `batchwise/runtime`, which has tensors but runs only
 * bundles, carries no passes.
 */
let scheduler: ((graph: Graph, backend: Backend) => Schedule) | undefined;

export function setEagerScheduler(s: (graph: Graph, backend: Backend) => Schedule): void {
  scheduler = s;
}

/** Number of programs in the eager cache (tests check the bound). */
export function programCacheSize(): number {
  return programCache.size;
}

/** The program for a graph on a backend, from the cache or built now. */
export function programFor(
  text: string,
  build: () => { readonly schedule: Schedule },
  backend: Backend,
): Program | Promise<Program> {
  const key = `${backend.name}\n${text}`;
  const hit = programCache.get(key);
  if (hit !== undefined) {
    counters.programCacheHits++;
    programCache.delete(key);
    programCache.set(key, hit);
    debugLog("cache", `program hit @${text.slice(0, text.indexOf("("))}`);
    return hit;
  }
  counters.programBuilds++;
  debugLog("cache", `program miss, building:\n${text}`);
  const { schedule } = build();
  const p = Program.create(schedule, backend);
  programCache.set(key, p);
  // Once compiled, the cache holds the program itself, so later synchronous reads can run it.
  if (p instanceof Promise) {
    p.then(
      (v) => programCache.get(key) === p && programCache.set(key, v),
      () => programCache.get(key) === p && programCache.delete(key),
    );
  }
  if (programCache.size > PROGRAM_CACHE_LIMIT) programCache.delete(programCache.keys().next().value!);
  return p;
}

export function concreteType(t: Tensor): ConcreteType {
  if (!isConcrete(t._type.batch)) throw new TraceError(`cannot read a traced tensor ${t.toString()} inside jit`);
  return t._type as ConcreteType;
}

function leafBuffer(t: Tensor, backend: Backend) {
  const s = t._src;
  if (s.kind !== "buffer") throw new TraceError("internal: leaf is not realized");
  if (s.backend !== backend) {
    throw new BackendError(
      `tensor ${t.toString()} lives on the ${s.backend.name} backend, the program runs on ${backend.name}`,
    );
  }
  return { buffer: s.buffer, type: concreteType(t) };
}

function finish(t: Tensor, program: Program, captured: readonly Tensor[]): void {
  const [out] = program.run(captured.map((c) => leafBuffer(c, program.backend)));
  t._adopt(out!.buffer, program.backend);
}

interface Pending {
  readonly program: Program | Promise<Program>;
  readonly captured: readonly Tensor[];
}

function pendingProgram(t: Tensor): Pending | undefined {
  if (t._src.kind === "buffer") return undefined;
  if (t._src.kind === "disposed") throw new BackendError(`a disposed tensor ${t.toString()} was used`);
  if (t._src.kind === "param") throw new TraceError(`cannot read a traced tensor ${t.toString()} inside jit`);
  concreteType(t);
  const backend = getBackend();
  const built = buildGraph("eager", [t], []);
  const text = printGraph(built.graph);
  const schedule = scheduler;
  if (schedule === undefined) {
    throw new BackendError(
      `${t.toString()}: computing tensor operations needs the compiler of the full batchwise entry; batchwise/runtime only runs bundles`,
    );
  }
  const program = programFor(text, () => ({ schedule: schedule(built.graph, backend) }), backend);
  return { program, captured: built.captured };
}

/** Computes a lazy tensor synchronously (JS backend). */
export function realizeSync(t: Tensor): void {
  const p = pendingProgram(t);
  if (p === undefined) return;
  if (p.program instanceof Promise)
    throw new BackendError(`realize: the ${getBackend().name} backend compiles asynchronously; use await t.data()`);
  finish(t, p.program, p.captured);
}

/** Computes a lazy tensor. */
export async function realize(t: Tensor): Promise<void> {
  const p = pendingProgram(t);
  if (p === undefined) return;
  const program = await p.program;
  // runAsync: jagged offsets the run checks may have to be read back from the device first.
  const [out] = await program.runAsync(p.captured.map((c) => leafBuffer(c, program.backend)));
  t._adopt(out!.buffer, program.backend);
}

export function readTensorSync(t: Tensor, copy = true): TypedArray {
  realizeSync(t);
  const s = t._src;
  if (s.kind !== "buffer") throw new TraceError("internal: not realized");
  if (s.backend.readSync === undefined)
    throw new BackendError(`dataSync: the ${s.backend.name} backend reads asynchronously; use await t.data()`);
  if (!copy && s.backend.view !== undefined) return s.backend.view(s.buffer);
  return s.backend.readSync(s.buffer);
}

export async function readTensor(t: Tensor): Promise<TypedArray> {
  await realize(t);
  const s = t._src;
  if (s.kind !== "buffer") throw new TraceError("internal: not realized");
  const data = await s.backend.read(s.buffer);
  return data instanceof ARRAY_CTOR[t.dtype] ? data : new ARRAY_CTOR[t.dtype](data);
}
