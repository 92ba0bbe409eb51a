/**
 * Multi-core batch sharding for the WebAssembly backend: a persistent pool of
 * workers (`worker_threads` in Node, Web Workers in browsers) that share the
 * backend's WebAssembly memory (a SharedArrayBuffer) and run the same kernel on
 * disjoint ranges of the batch.
 *
 * Protocol (one control array of int32 in its own SharedArrayBuffer):
 *  - the main thread writes a command (load a kernel, run one, exit), bumps the
 *    generation word and wakes every worker with `Atomics.notify`;
 *  - each worker runs its part and counts itself done; the last one wakes the main
 *    thread, which meanwhile ran part 0 itself;
 *  - a kernel (module bytes) reaches the workers through the shared memory: they
 *    compile it synchronously from there, so no message has to be received while
 *    a worker blocks in `Atomics.wait`.
 * A kernel module exports `run(args, begin, end)`: launch arguments at byte offset
 * `args`, the part [begin, end) of the unit range it shards over.
 *
 * Workers never keep a Node process alive (`unref`), and `close()` stops them.
 * The main thread blocks in `Atomics.wait` in Node; a browser's main thread may not
 * block, so there it spins on the done counter (kernels are short). Browsers give
 * SharedArrayBuffer only to cross-origin isolated pages (`crossOriginIsolated`,
 * COOP/COEP headers); without it the backend runs on one thread.
 */
import { BackendError } from "../../ir/errors.js";
import type { WasmHeap } from "./memory.js";

// Control array slots.
const GEN = 0;
const CMD = 1;
const DONE = 2;
const NWORK = 3;
const KID = 4;
const ARGS = 5;
const UNITS = 6;
const PARTS = 7;
const GRAIN = 8;
const PTR = 9;
const LEN = 10;
const ERR = 11;
const NEXT = 12;
const ENTRY = 13;
const CTL_SIZE = 16;
/** Parts per thread of a launch (see `WorkerPool.run`). */
const CHUNKS_PER_THREAD = 4;
const RUN = 1;
const LOAD = 2;
const EXIT = 3;

/**
 * Start of part `w` of `parts` over [0, n) on multiples of `grain`, on the calling thread
 * and, as source text, in the workers (self-contained: it uses nothing but Math).
 */
function part(n: number, parts: number, grain: number, w: number): number {
  // The last part ends at n itself: rounding to the grain must not drop a tail shorter than it.
  return w >= parts ? n : Math.min(n, Math.round((n * w) / parts / grain) * grain);
}

/**
 * The worker's code (plain JS, the same in Node and browsers). `host` are the math
 * imports (codegen/wasm/math.ts MATH_HOST), written out as source.
 */
function workerSource(hostSource: string): string {
  return `"use strict";
const host = ${hostSource};
let ctl, memory;
const fns = new Map();
function instantiate(id, bytes) {
  const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { memory }, m: host });
  fns.set(id, [inst.exports.run, inst.exports.run_inner]);
}
const part = ${String(part)};
function loop(gen) {
  for (;;) {
    Atomics.wait(ctl, ${GEN}, gen);
    gen = Atomics.load(ctl, ${GEN});
    const cmd = Atomics.load(ctl, ${CMD});
    if (cmd === ${EXIT}) return;
    try {
      if (cmd === ${LOAD}) {
        instantiate(ctl[${KID}], new Uint8Array(memory.buffer, ctl[${PTR}], ctl[${LEN}]).slice());
      } else if (cmd === ${RUN}) {
        const n = ctl[${UNITS}], parts = ctl[${PARTS}], grain = ctl[${GRAIN}];
        const f = fns.get(ctl[${KID}])[ctl[${ENTRY}]], args = ctl[${ARGS}];
        for (let w = Atomics.add(ctl, ${NEXT}, 1); w < parts; w = Atomics.add(ctl, ${NEXT}, 1)) {
          const b = part(n, parts, grain, w), e = part(n, parts, grain, w + 1);
          if (b < e) f(args, b, e);
        }
      }
    } catch (e) {
      Atomics.store(ctl, ${ERR}, 1);
    }
    if (Atomics.add(ctl, ${DONE}, 1) + 1 === Atomics.load(ctl, ${NWORK})) Atomics.notify(ctl, ${DONE});
  }
}
function start(data, post) {
  ctl = new Int32Array(data.ctl);
  memory = data.memory;
  for (const [id, bytes] of data.kernels) instantiate(id, bytes);
  // The generation is read before "ready": the main thread's next command bumps it.
  const gen = Atomics.load(ctl, ${GEN});
  post("ready");
  loop(gen);
}
// Node: worker_threads (through getBuiltinModule, so the code runs as a script or a module).
const wt = typeof process === "object" && typeof process.getBuiltinModule === "function" ? process.getBuiltinModule("worker_threads") : null;
if (wt && wt.parentPort) {
  start(wt.workerData, (m) => wt.parentPort.postMessage(m));
} else {
  self.onmessage = (ev) => start(ev.data, (m) => self.postMessage(m));
}
`;
}

/** The host math functions as source for the worker (see `workerSource`). */
export type HostSource = string;

interface AnyWorker {
  terminate(): unknown;
}

/** Whether this thread may block in Atomics.wait (a browser's main thread may not). */
function canBlock(): boolean {
  try {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0);
    return true;
  } catch {
    return false;
  }
}

/** The number of cores this process may use (Node: availableParallelism; browsers: hardwareConcurrency). */
export function availableCores(): number {
  const os = nodeModule<{ availableParallelism?: () => number; cpus: () => unknown[] }>("os");
  if (os !== undefined) return os.availableParallelism?.() ?? os.cpus().length;
  const nav = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator;
  return Math.max(1, nav?.hardwareConcurrency ?? 1);
}

/** A Node built-in module, synchronously, or undefined outside Node. */
function nodeModule<T>(id: string): T | undefined {
  const p = (globalThis as { process?: { versions?: { node?: string }; getBuiltinModule?: (id: string) => unknown } })
    .process;
  if (p?.versions?.node === undefined || typeof p.getBuiltinModule !== "function") return undefined;
  return p.getBuiltinModule(id) as T;
}

/**
 * Whether threads can work here: SharedArrayBuffer exists and (in a browser) the page
 * is cross-origin isolated; the reason when not.
 */
export function threadSupport(): { ok: true } | { ok: false; why: string } {
  if (typeof SharedArrayBuffer === "undefined")
    return { ok: false, why: "SharedArrayBuffer is not available (a browser page must be cross-origin isolated)" };
  const g = globalThis as { crossOriginIsolated?: boolean; Worker?: unknown };
  if (nodeModule("worker_threads") !== undefined) return { ok: true };
  if (g.crossOriginIsolated === false)
    return { ok: false, why: "the page is not cross-origin isolated (COOP/COEP headers)" };
  if (typeof g.Worker !== "function") return { ok: false, why: "no Worker constructor" };
  return { ok: true };
}

/** A kernel loaded into the pool: its id and the main thread's entry. */
export interface PoolKernel {
  readonly id: number;
  readonly run: (args: number, begin: number, end: number) => void;
}

/** Workers sharing a heap's memory (see the file comment). */
export class WorkerPool {
  private workers: AnyWorker[] = [];
  private readonly ctl = new Int32Array(new SharedArrayBuffer(CTL_SIZE * 4));
  private readonly blocking = canBlock();
  private readonly kernels = new Map<number, Uint8Array>();
  private nextId = 1;

  constructor(
    private readonly heap: WasmHeap,
    private readonly hostSource: HostSource,
  ) {
    if (!heap.shared) throw new BackendError("wasm: worker threads need a shared memory");
  }

  /** Number of threads a run uses: the workers plus the calling thread. */
  get threads(): number {
    return this.workers.length + 1;
  }

  /** Starts or stops workers so that `threads` threads run kernels (1: the calling thread alone). */
  async resize(threads: number): Promise<void> {
    const want = Math.max(0, Math.floor(threads) - 1);
    if (want === this.workers.length) return;
    this.stopWorkers();
    if (want === 0) return;
    const src = workerSource(this.hostSource);
    const kernels = [...this.kernels];
    const started: Promise<void>[] = [];
    const wt = nodeModule<{
      Worker: new (
        src: string,
        o: { eval: boolean; workerData: unknown; execArgv: string[] },
      ) => AnyWorker & {
        unref(): void;
        once(ev: string, f: (x: unknown) => void): void;
      };
    }>("worker_threads");
    for (let i = 0; i < want; i++) {
      const data = { ctl: this.ctl.buffer, memory: this.heap.memory, kernels };
      if (wt !== undefined) {
        // No execArgv: the worker is plain JS (no loaders), whatever flags started this process.
        const w = new wt.Worker(src, { eval: true, workerData: data, execArgv: [] });
        w.unref();
        started.push(
          new Promise((resolve, reject) => {
            w.once("message", () => resolve());
            w.once("error", (e) => reject(e as Error));
          }),
        );
        this.workers.push(w);
      } else {
        const url = URL.createObjectURL(new Blob([src], { type: "text/javascript" }));
        const w = new Worker(url);
        started.push(
          new Promise((resolve, reject) => {
            w.onmessage = () => resolve();
            w.onerror = (e) => reject(new Error(e.message));
          }),
        );
        w.postMessage(data);
        this.workers.push(w);
      }
    }
    try {
      await Promise.all(started);
    } catch (e) {
      this.stopWorkers();
      throw new BackendError(`wasm: worker threads could not start (${(e as Error).message}); running on one thread`);
    }
  }

  /** Registers kernel module bytes with every worker (and future ones); returns its id. */
  load(bytes: Uint8Array): number {
    const id = this.nextId++;
    this.kernels.set(id, bytes);
    if (this.workers.length > 0) {
      const ptr = this.heap.alloc(bytes.length);
      new Uint8Array(this.heap.buffer, ptr, bytes.length).set(bytes);
      this.ctl[KID] = id;
      this.ctl[PTR] = ptr;
      this.ctl[LEN] = bytes.length;
      try {
        this.command(LOAD);
      } finally {
        this.heap.release(ptr, bytes.length);
      }
    }
    return id;
  }

  /**
   * Runs a loaded kernel over `units` units, split into `CHUNKS_PER_THREAD` parts per
   * thread on multiples of `grain`. Every thread, the calling one included (with `main`),
   * takes the next part from a shared counter until none is left: a worker that wakes
   * late, or a core busy with other work, leaves its parts to the others instead of
   * making the launch wait for it. `entry` 1 runs the kernel's `run_inner` export (`main`
   * must then be that export on this thread), 0 its `run`.
   */
  run(
    id: number,
    main: (args: number, begin: number, end: number) => void,
    args: number,
    units: number,
    grain: number,
    entry: 0 | 1 = 0,
  ): void {
    const parts = (this.workers.length + 1) * CHUNKS_PER_THREAD;
    const ctl = this.ctl;
    ctl[KID] = id;
    ctl[ARGS] = args;
    ctl[UNITS] = units;
    ctl[PARTS] = parts;
    ctl[GRAIN] = grain;
    ctl[ENTRY] = entry;
    Atomics.store(ctl, NEXT, 0);
    this.command(RUN, () => {
      for (let w = Atomics.add(ctl, NEXT, 1); w < parts; w = Atomics.add(ctl, NEXT, 1)) {
        const b = part(units, parts, grain, w);
        const e = part(units, parts, grain, w + 1);
        if (b < e) main(args, b, e);
      }
    });
  }

  private command(cmd: number, own?: () => void): void {
    const ctl = this.ctl;
    const n = this.workers.length;
    Atomics.store(ctl, DONE, 0);
    Atomics.store(ctl, ERR, 0);
    Atomics.store(ctl, NWORK, n);
    Atomics.store(ctl, CMD, cmd);
    Atomics.add(ctl, GEN, 1);
    Atomics.notify(ctl, GEN);
    let failure: unknown;
    try {
      own?.();
    } catch (e) {
      failure = e;
    }
    for (;;) {
      const d = Atomics.load(ctl, DONE);
      if (d >= n) break;
      if (this.blocking) Atomics.wait(ctl, DONE, d, 50);
    }
    if (failure !== undefined) throw failure;
    if (Atomics.load(ctl, ERR) !== 0)
      throw new BackendError(`wasm: a worker thread failed (${cmd === LOAD ? "compiling" : "running"} a kernel)`);
  }

  private stopWorkers(): void {
    if (this.workers.length === 0) return;
    Atomics.store(this.ctl, CMD, EXIT);
    Atomics.add(this.ctl, GEN, 1);
    Atomics.notify(this.ctl, GEN);
    for (const w of this.workers) void w.terminate();
    this.workers = [];
  }

  /** Stops every worker; the pool can be resized again later. */
  close(): void {
    this.stopWorkers();
  }
}
