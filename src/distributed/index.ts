/**
 * `batchwise/distributed`: shard a batch across worker processes and machines
 * through BullMQ on Redis, with bundles as the unit of work.
 *
 * A bundle traced once runs on any batch size, so any split of a batch along its
 * leading batch dim is free: `runSharded` cuts the inputs into shards of rows,
 * stores each shard as `.npy` bytes in Redis, enqueues one BullMQ job per shard,
 * and gathers the outputs, in shard order, into tensors of the full batch.
 * Workers (`startWorker`, or `batchwise worker --redis <url>`) load the bundle by
 * its SHA-256 from Redis, verify it with `loadBundle(mod, { sha256 })` (a bundle
 * whose content does not hash to the key it was fetched under is refused), run
 * the shard on their local backend and write the results back.
 *
 * What BullMQ gives: retries (`attempts`), stalled-job recovery (a worker killed
 * mid-shard stops renewing its job's lock; after `lockDuration` another worker
 * takes the job), concurrency. Shards are idempotent (a shard's outputs live
 * under keys named by run and shard index, and a re-run writes the same bytes),
 * so a shard run twice is neither lost nor duplicated in the gathered result.
 *
 * Rules:
 * - Bundles are stored as their module source text (what `f.bundle()` and
 *   `batchwise bundle` write) under `batchwise:bundle:<sha256>`; workers import
 *   that text as an ES module (it contains the kernels as JS functions, so only
 *   publish bundles you trust, and run workers only against a Redis you trust).
 * - Inputs are plain tensors, jagged tensors and TensorDicts, as the bundle's
 *   arguments are (a TensorDict is one argument, as it was when the bundle was
 *   traced). Every tensor input with batch dims is cut along its leading batch
 *   dim, a jagged tensor by its rows (its values and its offsets, rebased to
 *   start at 0), a TensorDict along the first dim of its batch size (every
 *   entry, nested dicts included, keys and order kept); all must have the same
 *   number of rows N. A tensor input with no batch dims (parameters), or a
 *   TensorDict of batch size `[]` whose entries have none, goes whole to every
 *   shard (stored once).
 * - Not sharded, with a `DistributedError` naming the fix: lazy stacks
 *   (`LazyStackedTensorDict`: `.densify()` it, or stack densely with `stack`)
 *   and non-tensor entries (`NonTensorData`, `NonTensorStack`), which compiled
 *   functions do not take either (`td.exclude(key)` before the call and
 *   `set` the entry on the result after it).
 * - The function must be row-wise along the leading batch dim: each result's
 *   leading batch dim (a jagged result's rows, a TensorDict result's first batch
 *   size) must equal the shard's row count (checked when gathering). TensorDict
 *   results are gathered into a TensorDict of the full batch, entry by entry.
 * - The coordinator learns of finished shards from BullMQ's job events (one
 *   `QueueEvents` reader per run), and reconciles with the jobs' states every
 *   `pollMs` (default 1000) so that an event missed across a reconnect cannot
 *   stall a run.
 * - Backends: every shard runs on the run's backend (`backend`, by default the
 *   coordinator's current one), so that the result has the bits of one call on
 *   it. Workers report their backend with each shard; one on another backend
 *   does not run the shard, and the run rejects with a `BackendMismatchError`
 *   naming the worker and both backends. `allowMixedBackends: true` accepts any
 *   worker: each shard then has its own worker's bits.
 * - A `BatchwiseError` in a shard (a shape that does not match, a bundle that
 *   fails its checks) is deterministic: the job fails at once, with no retry.
 *   Other errors (a missing blob, an error in a `beforeShard` hook, a lost
 *   connection) are retried up to `attempts` times. Either way `runSharded`
 *   rejects with a `DistributedError` naming the shard index, its rows, and the
 *   worker's error text.
 * - Run data (`batchwise:run:<id>:…`) is deleted when `runSharded` settles, and
 *   expires after `ttlSeconds` if the caller dies first.
 * - Redis restarts: every client reconnects and retries its commands, so a run
 *   survives a restart of a Redis that persists its data (an append-only file,
 *   or a snapshot on shutdown). A shard whose job vanished (a flush, or a
 *   restart without persistence) rejects the run with a `DistributedError`
 *   instead of waiting forever.
 *
 * `bullmq` and `ioredis` are optional peer dependencies, imported only when a
 * function of this entry runs (a `BackendError` with the install command says so
 * when they are missing).
 *
 * @module batchwise/distributed
 */
import type { Queue as BullQueue, QueueEvents as BullQueueEvents, Worker as BullWorker } from "bullmq";
import type { Redis as IORedis } from "ioredis";
import { BackendError, BatchwiseError, BundleError, ShapeError } from "../../ir/errors.js";
import type { DType, TypedArray } from "../../ir/dtype.js";
import { getBackend, setBackend } from "../backend.js";
import { loadBundle, type BundleFunction, type BundleModule } from "../bundle.js";
import { fromTypedArray } from "../creation.js";
import { bytesView, copyBytes } from "../io/bytes.js";
import { readNpy, writeNpy } from "../io/npy.js";
import { describe } from "../check.js";
import { JaggedTensor } from "../ragged/jagged.js";
import { Tensor } from "../tensor.js";
import { LazyStackedTensorDict } from "../tensordict/lazy.js";
import { isNonTensor } from "../tensordict/nontensor.js";
import { TensorDict } from "../tensordict/tensordict.js";
// The full entry registers JaggedTensor and TensorDict (the bundle loader needs them registered).
import "../index.js";

/** A sharded run or a worker failed (a shard's error after its retries, a cancelled run, unsupported inputs). */
export class DistributedError extends BatchwiseError {
  /** The class name, kept under minification (`e.name` in messages and checks). */
  override name = "DistributedError";
}

/**
 * A shard of a run was taken by a worker whose backend is not the one the run
 * expects (`RunShardedOptions.backend`, by default the coordinator's current
 * backend). Backends round float32 math differently, so such a shard would not
 * give the bits of one call on the whole batch: the run is refused rather than
 * returning shards of different backends side by side.
 */
export class BackendMismatchError extends DistributedError {
  override name = "BackendMismatchError";
  constructor(
    message: string,
    /** The worker's name (`StartWorkerOptions.name`, by default `<hostname>:<pid>`), or "unknown" for one that did not say. */
    readonly worker: string,
    /** The backend the worker runs shards on ("unknown" for a worker that did not say). */
    readonly workerBackend: string,
    /** The backend the run expects. */
    readonly expected: string,
    /** The shard the worker took. */
    readonly shard: number,
  ) {
    super(message);
  }
}

/**
 * Where Redis is: a URL (`redis://127.0.0.1:6379/0`) or ioredis-style options
 * (`{ host, port, password, db }`).
 */
export type RedisConnection =
  | string
  | {
      /** The host (default 127.0.0.1). */
      readonly host?: string;
      /** The port (default 6379). */
      readonly port?: number;
      /** The password, if Redis requires one. */
      readonly password?: string;
      /** The database index (default 0). */
      readonly db?: number;
    };

/** The default BullMQ queue name of `runSharded` and `startWorker`. */
export const DEFAULT_QUEUE = "batchwise";

const BUNDLE_KEY = "batchwise:bundle:";
const RUN_KEY = "batchwise:run:";

interface Deps {
  readonly bullmq: typeof import("bullmq");
  readonly Redis: typeof IORedis;
}

let depsPromise: Promise<Deps> | undefined;

/** bullmq and ioredis, imported on first use; a BackendError with the install command when missing. */
function deps(): Promise<Deps> {
  depsPromise ??= (async () => {
    try {
      const bullmq = await import("bullmq");
      const io = (await import("ioredis")) as unknown as { Redis?: typeof IORedis; default?: typeof IORedis };
      const Redis = io.Redis ?? io.default;
      if (Redis === undefined) throw new Error("ioredis exports no Redis class");
      return { bullmq, Redis };
    } catch (e) {
      depsPromise = undefined;
      const msg = e instanceof Error ? e.message : String(e);
      throw new BackendError(
        `batchwise/distributed needs its optional peer dependencies bullmq and ioredis (${msg}); install them with: npm install bullmq@6 ioredis@6`,
      );
    }
  })();
  return depsPromise;
}

/** The connection options BullMQ and ioredis take (BullMQ's blocking connections need maxRetriesPerRequest: null). */
function redisOptions(connection: RedisConnection): Record<string, unknown> {
  if (typeof connection === "string") {
    let u: URL;
    try {
      u = new URL(connection);
    } catch {
      throw new DistributedError(
        `Redis connection: not a URL: ${JSON.stringify(connection)} (e.g. redis://127.0.0.1:6379)`,
      );
    }
    if (u.protocol !== "redis:" && u.protocol !== "rediss:")
      throw new DistributedError(
        `Redis connection: the URL must start with redis:// or rediss://, got ${u.protocol}//`,
      );
    const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
    return {
      host: u.hostname || "127.0.0.1",
      port: u.port === "" ? 6379 : Number(u.port),
      ...(u.password !== "" ? { password: decodeURIComponent(u.password) } : {}),
      ...(u.username !== "" ? { username: decodeURIComponent(u.username) } : {}),
      ...(Number.isInteger(db) ? { db } : {}),
      ...(u.protocol === "rediss:" ? { tls: {} } : {}),
      maxRetriesPerRequest: null,
    };
  }
  if (connection === null || typeof connection !== "object")
    throw new DistributedError(`Redis connection: expected a URL or { host, port }, got ${typeof connection}`);
  return { ...connection, maxRetriesPerRequest: null };
}

async function client(connection: RedisConnection): Promise<IORedis> {
  const { Redis } = await deps();
  return new Redis(redisOptions(connection));
}

/** The module text of `publishBundle`'s source: the text itself, or the UTF-8 bytes of the file (any form of bytes). */
function bundleText(source: unknown): string {
  if (typeof source === "string") return source;
  if (source === null || (typeof source !== "object" && typeof source !== "function"))
    throw new BundleError(
      `publishBundle: source must be the bundle module's text (f.bundle()) or its file's bytes (readFileSync("f.bundle.mjs")), got ${source === null ? "null" : typeof source}`,
    );
  let bytes: Uint8Array;
  try {
    bytes = bytesView("publishBundle", "source", source);
  } catch {
    throw new BundleError(
      `publishBundle: source must be the bundle module's text (f.bundle()) or its file's bytes (readFileSync("f.bundle.mjs")), got ${describe(source)}`,
    );
  }
  try {
    // A copy: TextDecoder does not read views of a SharedArrayBuffer everywhere.
    return new TextDecoder("utf-8", { fatal: true }).decode(copyBytes(bytes));
  } catch {
    throw new BundleError("publishBundle: source bytes are not UTF-8 text (a bundle module is a UTF-8 .mjs/.js file)");
  }
}

function bundleHashOf(source: string): string {
  const m = /^export const sha256 = "([0-9a-f]{64})";$/m.exec(source);
  if (m === null || !/^export const format = /m.test(source))
    throw new BundleError(
      "publishBundle: the source is not a batchwise bundle module (no `export const sha256`); pass the text f.bundle() or `batchwise bundle` writes",
    );
  return m[1]!;
}

/**
 * Stores a bundle in Redis under its SHA-256 and resolves to that hash (the
 * value to pass to `runSharded`). `source` is the bundle module's text, as
 * `f.bundle()` / `await f.bundleAsync()` return it or `batchwise bundle` writes
 * it, or the bytes of such a file in any form (`readFileSync("f.bundle.mjs")`, a
 * view, an `ArrayBuffer`), read as UTF-8. The hash is the bundle's recorded
 * `sha256`; workers recompute it with `loadBundle(mod, { sha256 })` and refuse a
 * bundle whose content does not match it. Publishing the same bundle twice is
 * harmless.
 *
 * @example
 * ```ts
 * const f = jit((x: Tensor) => x.mul(x).neg().exp());
 * f(ones([4], []));
 * const hash = await publishBundle("redis://127.0.0.1:6379", f.bundle());
 * ```
 */
export async function publishBundle(
  connection: RedisConnection,
  source: string | ArrayBufferLike | ArrayBufferView,
): Promise<string> {
  const text = bundleText(source);
  const hash = bundleHashOf(text);
  const redis = await client(connection);
  try {
    await redis.set(BUNDLE_KEY + hash, text);
  } finally {
    redis.disconnect();
  }
  return hash;
}

/** Progress of a sharded run (`RunShardedOptions.onProgress`). */
export interface ShardProgress {
  /** Shards whose outputs are gathered. */
  readonly done: number;
  /** All shards of the run. */
  readonly total: number;
  /** Bytes of input shards written to Redis. */
  readonly bytesUp: number;
  /** Bytes of output shards read from Redis. */
  readonly bytesDown: number;
}

/** Options of `runSharded`: `shardSize` or `shards` (one of them). */
export interface RunShardedOptions {
  /** Rows (leading batch elements) per shard; the last shard takes the rest. */
  readonly shardSize?: number;
  /** The number of shards (rows split as evenly as possible). Default: 1 shard when neither is given. */
  readonly shards?: number;
  /** The BullMQ queue (default `"batchwise"`); workers must listen on the same one. */
  readonly queue?: string;
  /** Attempts per shard for errors other than BatchwiseErrors (default 3). */
  readonly attempts?: number;
  /** Called when the inputs are stored and after each gathered shard. */
  readonly onProgress?: (p: ShardProgress) => void;
  /** Aborting it removes the waiting shards, deletes the run's data and rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /**
   * How often, in ms, the pending shards' states are read from their jobs besides
   * the job events the run listens to (default 1000): the fallback that finds a
   * shard whose event was missed across a reconnect, or whose job vanished.
   */
  readonly pollMs?: number;
  /** Seconds before a run's data expires if the caller dies (default 86400). */
  readonly ttlSeconds?: number;
  /**
   * The backend every shard must run on (`"js"`, `"wasm"`, `"webgpu"`): default
   * the coordinator's current backend, so that the gathered result has the bits
   * of one call on the whole batch here. A shard taken by a worker on another
   * backend rejects the run with a `BackendMismatchError` naming the worker and
   * both backends.
   */
  readonly backend?: string;
  /**
   * Accept shards from workers on any backend (default false; not with
   * `backend`). The result is then backend-dependent: each shard has the bits
   * of its worker's backend (float32 math within the ulp bounds the docs list).
   */
  readonly allowMixedBackends?: boolean;
}

/** One tensor of a shard in Redis: a tensor's `.npy` blob, or a jagged tensor's values and offsets blobs. */
interface BlobRef {
  readonly key: string;
  readonly batchDim: number;
  /** For a jagged tensor: the key of its int32 offsets `(rows+1;)`, starting at 0 (`key` holds the values `(T; base)`). */
  readonly offsets?: string;
}

/** A shard's TensorDict in Redis: its batch size and its entries, in order (nested dicts inline). */
interface DictRef {
  readonly dict: readonly number[];
  readonly entries: readonly (readonly [string, Ref])[];
}

/** One argument or result of a shard in Redis. */
type Ref = BlobRef | DictRef;

const isDictRef = (r: Ref): r is DictRef => "dict" in r;

/** The blob keys under `r`, depth first (a jagged tensor's values, then its offsets). */
function blobKeys(r: Ref, out: string[] = []): string[] {
  if (isDictRef(r)) for (const [, e] of r.entries) blobKeys(e, out);
  else {
    out.push(r.key);
    if (r.offsets !== undefined) out.push(r.offsets);
  }
  return out;
}

/** What `runSharded` takes per argument and gives back per result. */
export type ShardedValue = Tensor | JaggedTensor | TensorDict;

/** A shard job's data. */
interface ShardJob {
  readonly run: string;
  readonly shard: number;
  readonly rows: readonly [number, number];
  readonly hash: string;
  readonly inputs: readonly Ref[];
  readonly ttl: number;
  /** The backend the run expects the shard to run on, or null when any backend is accepted. */
  readonly backend?: string | null;
}

/** A shard job's return value. */
interface ShardResult {
  readonly outputs: readonly Ref[];
  readonly multi: boolean;
  /** The worker's name (absent from workers of batchwise 0.5 and before). */
  readonly worker?: string;
  /** The backend the shard ran on, or would have: the worker's (absent from workers of batchwise 0.5 and before). */
  readonly backend?: string;
  /** The worker did not run the shard: its backend is not the one the job expects. */
  readonly refused?: boolean;
}

/** The backend a run expects its shards to run on, or undefined when any is accepted. */
function expectedBackend(op: string, opts: RunShardedOptions): string | undefined {
  const { backend, allowMixedBackends } = opts;
  if (allowMixedBackends !== undefined && typeof allowMixedBackends !== "boolean")
    throw new DistributedError(`${op}: allowMixedBackends must be true or false, got ${String(allowMixedBackends)}`);
  if (backend !== undefined && (typeof backend !== "string" || backend === ""))
    throw new DistributedError(
      `${op}: backend must be the name of a backend ("js", "wasm", "webgpu"), got ${typeof backend === "string" ? '""' : String(backend)}`,
    );
  if (allowMixedBackends === true) {
    if (backend !== undefined)
      throw new DistributedError(
        `${op}: give backend (every shard on ${JSON.stringify(backend)}) or allowMixedBackends: true (any backend), not both`,
      );
    return undefined;
  }
  return backend ?? getBackend().name;
}

function positiveInt(op: string, name: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1)
    throw new DistributedError(`${op}: ${name} must be a positive integer, got ${String(v)}`);
  return v;
}

function fmtShapeOf(t: Tensor): string {
  const s = t.shape;
  return `(${s.slice(0, t.batchDim).join(",")}; ${s.slice(t.batchDim).join(",")})`;
}

/** The row ranges of the shards. */
function shardRanges(n: number, opts: RunShardedOptions): [number, number][] {
  if (opts.shardSize !== undefined && opts.shards !== undefined)
    throw new DistributedError("runSharded: give shardSize or shards, not both");
  let count: number;
  if (opts.shardSize !== undefined)
    count = Math.max(1, Math.ceil(n / positiveInt("runSharded", "shardSize", opts.shardSize)));
  else count = opts.shards !== undefined ? positiveInt("runSharded", "shards", opts.shards) : 1;
  count = Math.max(1, Math.min(count, n));
  const out: [number, number][] = [];
  if (opts.shardSize !== undefined) {
    for (let s = 0; s < n; s += opts.shardSize) out.push([s, Math.min(n, s + opts.shardSize)]);
    if (out.length === 0) out.push([0, 0]);
    return out;
  }
  for (let i = 0; i < count; i++) out.push([Math.floor((i * n) / count), Math.floor(((i + 1) * n) / count)]);
  return out;
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("runSharded was aborted", "AbortError");
}

/** A tensor or jagged tensor of the inputs, and whether it is cut into rows (else stored once, for every shard). */
interface InputLeaf {
  readonly value: Tensor | JaggedTensor;
  readonly batched: boolean;
}

/** An input's structure: a leaf (an index into the leaves), or a TensorDict's batch size and entries. */
type InputTmpl =
  | { readonly leaf: number }
  | {
      readonly size: readonly number[];
      readonly batched: boolean;
      readonly entries: readonly (readonly [string, InputTmpl])[];
    };

/** `"a"`, or a nested key as `("a", "b")` (as TensorDict's messages name keys). */
function fmtPath(path: readonly string[]): string {
  return path.length === 1 ? JSON.stringify(path[0]) : `(${path.map((k) => JSON.stringify(k)).join(", ")})`;
}

/** `what` for messages: a tensor's `(batch; base)`, a jagged tensor's text, a TensorDict's batch size. */
function fmtValue(v: unknown): string {
  if (v instanceof Tensor) return fmtShapeOf(v);
  if (v instanceof JaggedTensor) return v.toString();
  if (v instanceof TensorDict) return `TensorDict(batchSize=[${v.batchSize.join(", ")}])`;
  return v !== null && typeof v === "object" ? ((v as object).constructor?.name ?? "object") : typeof v;
}

/**
 * Flattens input `i` into `leaves` and returns its structure. A TensorDict's
 * entries are batched when the dict is (every entry's batch shape starts with
 * the dict's batch size); lazy stacks and non-tensor entries are typed errors.
 */
function flattenInput(op: string, i: number, v: unknown, leaves: InputLeaf[], path: readonly string[] = []): InputTmpl {
  const where = path.length === 0 ? `input ${i}` : `input ${i} entry ${fmtPath(path)}`;
  if (v instanceof Tensor || v instanceof JaggedTensor) {
    leaves.push({ value: v, batched: v instanceof JaggedTensor || v.batchDim > 0 });
    return { leaf: leaves.length - 1 };
  }
  if (v instanceof TensorDict) {
    const batched = v.batchDim > 0;
    const start = leaves.length;
    const entries = v.entries().map(([k, e]) => {
      const p = [...path, k];
      if (isNonTensor(e))
        throw new DistributedError(
          `${op}: input ${i} holds the non-tensor entry ${fmtPath(p)} (${e.toString()}); compiled functions take tensor entries only: td.exclude(${JSON.stringify(p.length === 1 ? p[0] : p)}) before the call and set it on the result after it`,
        );
      return [k, flattenInput(op, i, e, leaves, p)] as const;
    });
    if (!batched) {
      const stray = leaves.slice(start).find((l) => l.batched);
      if (stray !== undefined)
        throw new ShapeError(
          `${op}: ${where} is ${fmtValue(v)} with the batched entry ${fmtValue(stray.value)}: give the dict a batch size of at least the leading batch dim its entries share to shard it (runSharded cuts a TensorDict along the first dim of its batch size)`,
        );
    }
    return { size: v.batchSize, batched, entries };
  }
  if (v instanceof LazyStackedTensorDict)
    throw new DistributedError(
      `${op}: ${where} is a lazy stack (${v.toString()}); runSharded takes dense TensorDicts: call .densify() (members of different lengths become jagged entries) or stack the members with stack()`,
    );
  throw new DistributedError(
    `${op}: ${where} is a ${fmtValue(v)}; plain tensors, jagged tensors and TensorDicts are sharded`,
  );
}

/** The rows input `v` is cut into (undefined for one stored whole). */
function rowsOf(v: ShardedValue): number | undefined {
  if (v instanceof JaggedTensor) return v.rows;
  if (v instanceof TensorDict) return v.batchDim > 0 ? v.batchSize[0]! : undefined;
  return v.batchDim > 0 ? v.shape[0]! : undefined;
}

/** A gathered shard result: a tensor's data, or a TensorDict's batch size and entries. */
type Got =
  | {
      readonly dtype: DType;
      readonly shape: readonly number[];
      readonly data: TypedArray;
      readonly batchDim: number;
      readonly offsets: Int32Array | undefined;
    }
  | { readonly size: readonly number[]; readonly entries: readonly (readonly [string, Got])[] };

const isGotDict = (g: Got): g is Extract<Got, { size: readonly number[] }> => "size" in g;

/** The concatenation of shard results `parts` (one per shard, in order) into a value of the full batch of `n` rows. */
function concatGot(op: string, what: string, parts: readonly Got[], n: number): ShardedValue {
  const g0 = parts[0]!;
  if (isGotDict(g0)) {
    const keys0 = g0.entries.map(([k]) => k).join("\u0000");
    parts.forEach((p, s) => {
      if (
        !isGotDict(p) ||
        p.size.slice(1).join() !== g0.size.slice(1).join() ||
        p.entries.map(([k]) => k).join("\u0000") !== keys0
      )
        throw new ShapeError(
          `${op}: ${what} of shard ${s} is ${isGotDict(p) ? `a TensorDict of batch size [${p.size.join(", ")}] with keys ${JSON.stringify(p.entries.map(([k]) => k))}` : "a tensor"}, of shard 0 a TensorDict of batch size [${g0.size.join(", ")}] with keys ${JSON.stringify(g0.entries.map(([k]) => k))}`,
        );
    });
    const td = new TensorDict({}, [n, ...g0.size.slice(1)]);
    g0.entries.forEach(([k], e) => {
      const sub = parts.map((p) => (p as typeof g0).entries[e]![1]);
      td.set(k, concatGot(op, `${what} entry ${JSON.stringify(k)}`, sub, n));
    });
    return td;
  }
  const rest = g0.shape.slice(1);
  const datas = parts.map((p, s) => {
    if (
      isGotDict(p) ||
      p.dtype !== g0.dtype ||
      p.batchDim !== g0.batchDim ||
      p.shape.slice(1).join() !== rest.join() ||
      (p.offsets === undefined) !== (g0.offsets === undefined)
    )
      throw new ShapeError(
        `${op}: ${what} of shard ${s} is ${isGotDict(p) ? "a TensorDict" : `${p.offsets !== undefined ? "jagged " : ""}${p.dtype} (${p.shape.join(",")})`}, of shard 0 ${g0.offsets !== undefined ? "jagged " : ""}${g0.dtype} (${g0.shape.join(",")})`,
      );
    return p.data;
  });
  const len = datas.reduce((m, p) => m + p.length, 0);
  const Ctor = g0.data.constructor as new (n: number) => TypedArray;
  const all = new Ctor(len);
  let at = 0;
  for (const p of datas) {
    all.set(p as never, at);
    at += p.length;
  }
  if (g0.offsets === undefined)
    return fromTypedArray(all, [n, ...rest], { batchDim: g0.batchDim, dtype: g0.dtype, copy: false });
  // Jagged: the values one shard after the other, the offsets rebased by the values before each shard.
  const offsets = new Int32Array(n + 1);
  let row = 0;
  let base = 0;
  for (const p of parts) {
    const o = (p as typeof g0).offsets!;
    for (let i = 1; i < o.length; i++) offsets[row + i] = o[i]! + base;
    row += o.length - 1;
    base += o[o.length - 1]!;
  }
  return new JaggedTensor(
    fromTypedArray(all, [base, ...rest], { batchDim: 1, dtype: g0.dtype, copy: false }),
    fromTypedArray(offsets, [n + 1], { batchDim: 1, copy: false }),
  );
}

/**
 * Runs the bundle `bundleHash` (published with `publishBundle`) on `inputs`,
 * sharded along their leading batch dim across the workers listening on the
 * queue, and resolves to the results of the full batch, in order, as the bundle
 * returns them (one tensor, jagged tensor or TensorDict, or an array for a
 * bundle of several results). The gathered values are bit for bit those of one
 * call on the whole batch on the run's backend when the function is row-wise
 * (each row's results depend on that row only). The run's backend is `backend`,
 * by default the coordinator's current one; a shard taken by a worker on another
 * backend rejects the run with a `BackendMismatchError` (backends round float32
 * math differently), unless `allowMixedBackends: true` accepts each shard with
 * its worker's bits. It waits until workers take the shards: bound the wait with
 * `signal` (`AbortSignal.timeout(ms)`).
 *
 * A TensorDict input is one argument of the bundle (as it was when traced) and
 * is cut along the first dim of its batch size, every entry (nested dicts
 * included) with it; a TensorDict result comes back as a TensorDict of the full
 * batch with the same keys.
 *
 * Rejects with a `DistributedError` naming the shard index when a shard fails
 * (after its retries), with a `BackendMismatchError` (a `DistributedError`)
 * naming the worker and both backends when a worker's backend is not the run's,
 * and with the signal's reason when `signal` aborts.
 *
 * @example
 * ```ts
 * const y = await runSharded("redis://127.0.0.1:6379", hash, [x], { shardSize: 100_000 });
 * ```
 */
export async function runSharded(
  connection: RedisConnection,
  bundleHash: string,
  inputs: readonly ShardedValue[],
  opts: RunShardedOptions = {},
): Promise<ShardedValue | ShardedValue[]> {
  const op = "runSharded";
  if (typeof bundleHash !== "string" || !/^[0-9a-f]{64}$/.test(bundleHash))
    throw new DistributedError(
      `${op}: bundleHash must be 64 lowercase hex digits (publishBundle's result), got ${String(bundleHash)}`,
    );
  if (!Array.isArray(inputs))
    throw new DistributedError(`${op}: inputs must be an array of tensors, jagged tensors or TensorDicts`);
  const leaves: InputLeaf[] = [];
  const tmpls = inputs.map((v, i) => flattenInput(op, i, v, leaves));
  const first = inputs.findIndex((t) => rowsOf(t) !== undefined);
  if (first < 0)
    throw new ShapeError(`${op}: no input has a batch dim to shard along (inputs ${inputs.map(fmtValue).join(", ")})`);
  const n = rowsOf(inputs[first]!)!;
  inputs.forEach((t, i) => {
    const r = rowsOf(t);
    if (r !== undefined && r !== n)
      throw new ShapeError(
        `${op}: input ${i} ${fmtValue(t)} has ${r} rows in its leading batch dim, input ${first} ${fmtValue(inputs[first]!)} has ${n}`,
      );
  });
  const ranges = shardRanges(n, opts);
  const attempts = opts.attempts === undefined ? 3 : positiveInt(op, "attempts", opts.attempts);
  const ttl = opts.ttlSeconds === undefined ? 86400 : positiveInt(op, "ttlSeconds", opts.ttlSeconds);
  const pollMs = opts.pollMs === undefined ? 1000 : positiveInt(op, "pollMs", opts.pollMs);
  const expected = expectedBackend(op, opts);
  const signal = opts.signal;
  if (signal?.aborted) throw abortReason(signal);

  const { bullmq } = await deps();
  const redis = await client(connection);
  redis.on("error", () => undefined); // ioredis reconnects; its errors surface as failed commands
  const queueName = opts.queue ?? DEFAULT_QUEUE;
  const queue: BullQueue = new bullmq.Queue(queueName, { connection: redisOptions(connection) });
  queue.on("error", () => undefined);
  let events: BullQueueEvents | undefined;
  // Shards whose outputs are being read (awaited before the run's data is deleted).
  const inflight = new Set<Promise<void>>();
  const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
  const prefix = `${RUN_KEY}${run}:`;
  const keys: string[] = [];
  const total = ranges.length;
  let bytesUp = 0;
  let bytesDown = 0;
  let done = 0;
  const progress = () => opts.onProgress?.({ done, total, bytesUp, bytesDown });
  const jobId = (s: number) => `${run}-${s}`;
  try {
    // Inputs: each batched leaf cut into rows; unbatched leaves stored once.
    const values = await Promise.all(
      leaves.map(({ value: t }) => (t instanceof JaggedTensor ? t.values.data() : t.data())),
    );
    const offsetsOf = await Promise.all(
      leaves.map(async ({ value: t }) =>
        t instanceof JaggedTensor ? ((await t.offsets.data()) as Int32Array) : undefined,
      ),
    );
    const shared = new Map<number, BlobRef>();
    for (let li = 0; li < leaves.length; li++) {
      const { value: t, batched } = leaves[li]!;
      if (batched || t instanceof JaggedTensor) continue;
      const key = `${prefix}param:${li}`;
      const bytes = writeNpy(t.dtype, t.shape, values[li]!);
      await redis.set(key, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), "EX", ttl);
      keys.push(key);
      bytesUp += bytes.byteLength;
      shared.set(li, { key, batchDim: 0 });
    }
    const jobs: { name: string; data: ShardJob; opts: Record<string, unknown> }[] = [];
    // The shards' blobs go out in few round trips: one pipeline per ~4 MB (not one per shard), so
    // that many small shards do not pay a round trip each before their jobs are even added.
    let pipe = redis.pipeline();
    let piped = 0;
    const flush = async () => {
      if (piped === 0) return;
      const p = pipe;
      pipe = redis.pipeline();
      piped = 0;
      for (const [err] of (await p.exec()) ?? []) if (err) throw err;
    };
    for (let s = 0; s < ranges.length; s++) {
      const [a, b] = ranges[s]!;
      const refs: BlobRef[] = [];
      for (let li = 0; li < leaves.length; li++) {
        const sh = shared.get(li);
        if (sh !== undefined) {
          refs.push(sh);
          continue;
        }
        const t = leaves[li]!.value;
        const v = t instanceof JaggedTensor ? t.values : t;
        const o = offsetsOf[li];
        // A jagged tensor's rows a..b are its values o[a]..o[b].
        const [va, vb] = o === undefined ? [a, b] : [o[a]!, o[b]!];
        const row = v.shape.slice(1).reduce((p: number, d: number) => p * d, 1);
        const sub = (values[li] as TypedArray).subarray(va * row, vb * row);
        const bytes = writeNpy(v.dtype, [vb - va, ...v.shape.slice(1)], sub);
        const key = `${prefix}in:${s}:${li}`;
        pipe.set(key, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), "EX", ttl);
        keys.push(key);
        bytesUp += bytes.byteLength;
        piped += bytes.byteLength;
        if (o === undefined) {
          refs.push({ key, batchDim: v.batchDim });
          continue;
        }
        const offs = writeNpy(
          "int32",
          [b - a + 1],
          Int32Array.from(o.subarray(a, b + 1), (x) => x - va),
        );
        const okey = `${prefix}in:${s}:${li}:offsets`;
        pipe.set(okey, Buffer.from(offs.buffer, offs.byteOffset, offs.byteLength), "EX", ttl);
        keys.push(okey);
        bytesUp += offs.byteLength;
        piped += offs.byteLength;
        refs.push({ key, batchDim: 1, offsets: okey });
      }
      if (piped >= 4 << 20) await flush();
      // A batched dict's shard has the shard's rows in the first dim of its batch size.
      const refOf = (t: InputTmpl): Ref =>
        "leaf" in t
          ? refs[t.leaf]!
          : {
              dict: t.batched ? [b - a, ...t.size.slice(1)] : t.size,
              entries: t.entries.map(([k, e]) => [k, refOf(e)] as const),
            };
      jobs.push({
        name: "shard",
        data: {
          run,
          shard: s,
          rows: [a, b],
          hash: bundleHash,
          inputs: tmpls.map(refOf),
          ttl,
          backend: expected ?? null,
        },
        opts: { jobId: jobId(s), attempts, removeOnComplete: false, removeOnFail: false },
      });
    }
    await flush();
    if (signal?.aborted) throw abortReason(signal);

    // Gather, driven by the queue's job events: one QueueEvents reader for the run, reading the
    // event stream from its last entry before the jobs are added (so no event of the run is missed
    // between adding and listening). Every pollMs the pending shards' states are also read from
    // the jobs themselves, so that an event lost across a reconnect (or a job that vanished with a
    // flushed Redis) cannot leave the run waiting forever.
    const last = (await redis.xrevrange(queue.keys.events!, "+", "-", "COUNT", 1))[0]?.[0] ?? "0-0";
    const results: (readonly Got[] | undefined)[] = new Array(total).fill(undefined);
    let multi = false;
    const pending = new Set(ranges.map((_, s) => s));

    let failure: { error: unknown } | undefined;
    let wake: (() => void) | undefined;
    const poke = () => {
      const w = wake;
      wake = undefined;
      w?.();
    };
    const fail = (error: unknown) => {
      failure ??= { error };
      poke();
    };
    const shardOf = (id: unknown): number | undefined => {
      if (typeof id !== "string" || !id.startsWith(`${run}-`)) return undefined;
      const s = Number(id.slice(run.length + 1));
      return pending.has(s) ? s : undefined;
    };
    const failedError = async (s: number, reason: string | undefined) => {
      const job = await queue.getJob(jobId(s)).catch(() => undefined);
      const [a, b] = ranges[s]!;
      return new DistributedError(
        `${op}: shard ${s} of ${total} (rows ${a}..${b - 1}) failed after ${job?.attemptsMade ?? "?"} attempt(s): ${job?.failedReason ?? reason ?? "unknown reason"}`,
      );
    };
    // A shard from a worker on another backend than the run expects (or one that does not say).
    const mismatch = (s: number, r: ShardResult): BackendMismatchError => {
      const [a, b] = ranges[s]!;
      const worker = typeof r.worker === "string" ? r.worker : "unknown";
      const theirs = typeof r.backend === "string" ? r.backend : "unknown";
      const who =
        typeof r.backend === "string"
          ? `worker ${JSON.stringify(worker)}, which runs shards on the ${theirs} backend`
          : "a worker that does not say which backend it runs on (batchwise 0.5 or older: upgrade it)";
      return new BackendMismatchError(
        `${op}: shard ${s} of ${total} (rows ${a}..${b - 1}) was taken by ${who}, but this run expects ${expected}${opts.backend === undefined ? " (the coordinator's current backend)" : ""}: backends round float32 math differently, so the gathered result would not have the bits of one call on ${expected}. Run the queue's workers on ${expected}${expected === "js" || expected === "wasm" ? ` (batchwise worker --backend ${expected})` : ""}, give this run { backend: ${JSON.stringify(theirs === "unknown" ? "<the workers' backend>" : theirs)} } if its workers are all on ${theirs === "unknown" ? "another backend" : theirs}, or { allowMixedBackends: true } to accept each shard's own backend's bits`,
        worker,
        theirs,
        expected!,
        s,
      );
    };
    // Reads shard s's outputs once (the first of its completed event and the reconciliation wins).
    const take = (s: number, r: ShardResult) => {
      if (!pending.delete(s)) return;
      if (expected !== undefined && (r.refused === true || r.backend !== expected)) return fail(mismatch(s, r));
      if (r.refused === true)
        return fail(new DistributedError(`${op}: internal: shard ${s} was refused by its worker`));
      const [a, b] = ranges[s]!;
      const p = (async () => {
        multi = r.multi;
        const outKeys = r.outputs.flatMap((o) => blobKeys(o));
        const blobs = outKeys.length > 0 ? await redis.mgetBuffer(...outKeys) : [];
        keys.push(...outKeys);
        const read = (key: string, what: string) => {
          const blob = blobs[outKeys.indexOf(key)];
          // Outputs expire only after ttlSeconds: gone earlier, they went with a flush or a restart without persistence.
          if (blob === null || blob === undefined)
            throw new DistributedError(
              `${op}: shard ${s} of ${total} (rows ${a}..${b - 1}) vanished from Redis: its ${what} (${key}) is gone (flushed, or restarted without persistence: run Redis with an append-only file or snapshots to survive restarts)`,
            );
          bytesDown += blob.byteLength;
          return readNpy(new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength), op);
        };
        const rowsError = (what: string, got: string) =>
          new ShapeError(
            `${op}: shard ${s} (rows ${a}..${b - 1}): ${what} ${got}; a sharded function must return results whose leading batch dim has the shard's ${b - a} rows`,
          );
        const got = (o: Ref, what: string): Got => {
          if (isDictRef(o)) {
            if (o.dict.length < 1 || o.dict[0] !== b - a)
              throw rowsError(what, `is a TensorDict of batch size [${o.dict.join(", ")}]`);
            return {
              size: o.dict,
              entries: o.entries.map(([k, e]) => [k, got(e, `${what} entry ${JSON.stringify(k)}`)] as const),
            };
          }
          const arr = read(o.key, what);
          const offsets = o.offsets === undefined ? undefined : (read(o.offsets, `${what} offsets`).data as Int32Array);
          const rows = offsets === undefined ? arr.shape[0] : offsets.length - 1;
          if (o.batchDim < 1 || rows !== b - a)
            throw rowsError(
              what,
              `has ${offsets === undefined ? `shape (${arr.shape.join(",")}) with ${o.batchDim} batch dim(s)` : `${rows} jagged rows`}`,
            );
          return { dtype: arr.dtype, shape: arr.shape, data: arr.data, batchDim: o.batchDim, offsets };
        };
        results[s] = r.outputs.map((o, k) => got(o, `result ${k}`));
        done++;
        progress();
      })();
      inflight.add(p);
      p.catch(fail).finally(() => {
        inflight.delete(p);
        poke();
      });
    };
    const reconcile = async () => {
      for (const s of [...pending]) {
        if (failure !== undefined) return;
        const state = await queue.getJobState(jobId(s));
        if (!pending.has(s)) continue; // its event came meanwhile
        if (state === "failed") return fail(await failedError(s, undefined));
        if (state === "unknown") {
          // The job is gone: Redis was flushed, or restarted without persistence (its blobs went with it).
          const [a, b] = ranges[s]!;
          return fail(
            new DistributedError(
              `${op}: shard ${s} of ${total} (rows ${a}..${b - 1}) vanished from Redis (flushed, or restarted without persistence: run Redis with an append-only file or snapshots to survive restarts)`,
            ),
          );
        }
        if (state !== "completed") continue;
        const job = await queue.getJob(jobId(s));
        const r = job?.returnvalue as ShardResult | undefined | null;
        if (r !== undefined && r !== null && pending.has(s)) take(s, r);
      }
    };
    events = new bullmq.QueueEvents(queueName, {
      connection: redisOptions(connection),
      lastEventId: last,
      blockingTimeout: Math.max(pollMs, 1000),
    });
    events.on("error", () => undefined); // it reconnects; the reconciliation covers what it misses meanwhile
    events.on("completed", ({ jobId: id, returnvalue }: { jobId: string; returnvalue: unknown }) => {
      const s = shardOf(id);
      if (s !== undefined && returnvalue !== null && typeof returnvalue === "object")
        take(s, returnvalue as ShardResult);
    });
    events.on("failed", ({ jobId: id, failedReason }: { jobId: string; failedReason?: string }) => {
      const s = shardOf(id);
      if (s !== undefined) failedError(s, failedReason).then(fail, fail);
    });
    const onAbort = () => poke();
    signal?.addEventListener("abort", onAbort);
    try {
      await queue.addBulk(jobs);
      progress();
      let nextReconcile = Date.now() + pollMs;
      while ((pending.size > 0 || inflight.size > 0) && failure === undefined) {
        if (signal?.aborted) throw abortReason(signal);
        const wait = nextReconcile - Date.now();
        if (wait <= 0) {
          await reconcile();
          nextReconcile = Date.now() + pollMs;
          continue;
        }
        await new Promise<void>((res) => {
          const t = setTimeout(() => {
            wake = undefined;
            res();
          }, wait);
          wake = () => {
            clearTimeout(t);
            res();
          };
        });
      }
      if (signal?.aborted) throw abortReason(signal);
      if (failure !== undefined) throw failure.error;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }

    const out = results[0]!.map((_, k) =>
      concatGot(
        op,
        `result ${k}`,
        results.map((r) => r![k]!),
        n,
      ),
    );
    return multi ? out : out[0]!;
  } finally {
    // Remove the run's jobs and data, whatever happened (an active job of a cancelled run finishes; its outputs expire).
    await events?.close().catch(() => undefined);
    await Promise.allSettled([...inflight]);
    await Promise.allSettled(ranges.map((_, s) => queue.remove(jobId(s))));
    const outKeys: string[] = [];
    try {
      let cursor = "0";
      do {
        const [next, found] = await redis.scan(cursor, "MATCH", `${prefix}out:*`, "COUNT", 1000);
        outKeys.push(...found);
        cursor = next;
      } while (cursor !== "0");
    } catch {
      // the keys expire after ttlSeconds anyway
    }
    const all = [...new Set([...keys, ...outKeys])];
    if (all.length > 0) await redis.del(...all).catch(() => undefined);
    await queue.close().catch(() => undefined);
    redis.disconnect();
  }
}

/** What a worker is about to run (`StartWorkerOptions.beforeShard`). */
export interface ShardInfo {
  /** The shard's index in its run. */
  readonly shard: number;
  /** Its rows `[start, end)` in the full batch. */
  readonly rows: readonly [number, number];
  /** The bundle's SHA-256. */
  readonly hash: string;
  /** Which attempt this is (1 for the first). */
  readonly attempt: number;
}

/** Options of `startWorker`. */
export interface StartWorkerOptions {
  /** The BullMQ queue to take shards from (default `"batchwise"`). */
  readonly queue?: string;
  /** Shards run at once by this worker (default 1; the JS backend runs one kernel at a time anyway). */
  readonly concurrency?: number;
  /**
   * The backend shards run on, by name (default: the current one). It becomes the
   * process's current backend (`setBackend`), so that the shards' tensors live on
   * it; initialise it first (`await initWebGPU()` for "webgpu").
   */
  readonly backend?: "js" | "webgpu" | "wasm";
  /** BullMQ's lock duration in ms: a job whose worker stops renewing its lock for this long is stalled (default 30000). */
  readonly lockDuration?: number;
  /** BullMQ's stalled-job check interval in ms (default 30000). */
  readonly stalledInterval?: number;
  /** How many times a job may stall before it fails (default 1). */
  readonly maxStalledCount?: number;
  /** A hook run before each shard (logging, admission checks); an error it throws fails the attempt. */
  readonly beforeShard?: (shard: ShardInfo) => void | Promise<void>;
  /**
   * The worker's name, in the errors of runs it refuses and on the jobs it takes
   * (BullMQ's worker name). Default `<hostname>:<pid>`.
   */
  readonly name?: string;
}

/** A running worker (`startWorker`). */
export interface DistributedWorker {
  /** Resolves once the worker is connected and taking jobs. */
  readonly ready: Promise<void>;
  /** Stops taking jobs, waits for the running ones and disconnects. */
  close(): Promise<void>;
}

/** A module namespace from source text (a data: URL; Node and browsers import these). */
async function importSource(source: string): Promise<BundleModule> {
  const url = `data:text/javascript;base64,${Buffer.from(source, "utf8").toString("base64")}`;
  return (await import(/* @vite-ignore */ url)) as BundleModule;
}

function errorText(e: unknown): string {
  if (e instanceof BatchwiseError) return `${e.name}: ${e.message}`;
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

/**
 * Starts a worker that takes shards from the queue, loads their bundles by
 * hash from Redis (verified with `loadBundle(mod, { sha256 })`, cached per
 * hash), runs them on the local backend and writes the results to Redis.
 * A shard that fails reports the error's text (`Name: message`, with the shard
 * index); a BatchwiseError fails the job at once, other errors are retried.
 * A shard of a run that expects another backend than this worker's is not run:
 * the worker reports its name and backend, and the run rejects with a
 * `BackendMismatchError` (see `RunShardedOptions.backend`).
 */
export async function startWorker(
  connection: RedisConnection,
  opts: StartWorkerOptions = {},
): Promise<DistributedWorker> {
  const { bullmq } = await deps();
  if (opts.name !== undefined && (typeof opts.name !== "string" || opts.name === ""))
    throw new DistributedError(`startWorker: name must be a non-empty string, got ${JSON.stringify(opts.name)}`);
  if (opts.backend !== undefined) setBackend(opts.backend);
  const name = opts.name ?? `${(await import("node:os")).hostname()}:${process.pid}`;
  const concurrency = opts.concurrency === undefined ? 1 : positiveInt("startWorker", "concurrency", opts.concurrency);
  const redis = await client(connection);
  const bundles = new Map<string, Promise<BundleFunction>>();
  const bundleFor = (hash: string): Promise<BundleFunction> => {
    let p = bundles.get(hash);
    if (p === undefined) {
      p = (async () => {
        const source = await redis.get(BUNDLE_KEY + hash);
        if (source === null)
          throw new BundleError(`no bundle ${hash} in Redis (publish it with publishBundle before runSharded)`);
        let mod: BundleModule;
        try {
          mod = await importSource(source);
        } catch (e) {
          throw new BundleError(`the bundle stored under ${hash} does not import as an ES module (${errorText(e)})`);
        }
        return loadBundle(mod, { sha256: hash, backend: getBackend() });
      })();
      bundles.set(hash, p);
      p.catch(() => bundles.delete(hash));
    }
    return p;
  };

  const processor = async (job: { data: ShardJob; attemptsMade: number }): Promise<ShardResult> => {
    const d = job.data;
    // A run that expects another backend gets this worker's name and backend instead of results.
    const mine = getBackend().name;
    if (typeof d.backend === "string" && d.backend !== mine)
      return { outputs: [], multi: false, worker: name, backend: mine, refused: true };
    try {
      await opts.beforeShard?.({ shard: d.shard, rows: d.rows, hash: d.hash, attempt: job.attemptsMade + 1 });
      const f = await bundleFor(d.hash);
      const inKeys = d.inputs.flatMap((r) => blobKeys(r));
      const blobs = inKeys.length > 0 ? await redis.mgetBuffer(...inKeys) : [];
      let at = 0;
      const next = (key: string) => {
        const blob = blobs[at++];
        if (blob === null || blob === undefined)
          throw new Error(`input ${key} is missing from Redis (expired, or the run was cancelled)`);
        return readNpy(new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength), "worker");
      };
      // The arguments in the bundle's order: tensors, jagged tensors, TensorDicts (in blobKeys' order).
      const build = (r: Ref): ShardedValue => {
        if (isDictRef(r)) {
          const td = new TensorDict({}, r.dict);
          for (const [k, e] of r.entries) td.set(k, build(e));
          return td;
        }
        const a = next(r.key);
        const t = fromTypedArray(a.data, a.shape, { batchDim: r.batchDim, dtype: a.dtype, copy: false });
        if (r.offsets === undefined) return t;
        const o = next(r.offsets);
        return new JaggedTensor(t, fromTypedArray(o.data, o.shape, { batchDim: 1, copy: false }));
      };
      const out = await f.callAsync(...d.inputs.map(build));
      const list = Array.isArray(out) ? out : [out];
      const pipe = redis.pipeline();
      let k = 0;
      const store = async (item: unknown, what: string): Promise<Ref> => {
        if (item instanceof TensorDict) {
          const entries: (readonly [string, Ref])[] = [];
          for (const [key, e] of item.entries())
            entries.push([key, await store(e, `${what} entry ${JSON.stringify(key)}`)]);
          return { dict: item.batchSize, entries };
        }
        if (!(item instanceof Tensor) && !(item instanceof JaggedTensor))
          throw new DistributedError(
            `${what} is ${fmtValue(item)}; only tensors, jagged tensors and TensorDicts of them are gathered`,
          );
        const t = item instanceof JaggedTensor ? item.values : item;
        const bytes = writeNpy(t.dtype, t.shape, await t.data());
        const key = `${RUN_KEY}${d.run}:out:${d.shard}:${k++}`;
        pipe.set(key, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), "EX", d.ttl);
        if (item instanceof Tensor) return { key, batchDim: t.batchDim };
        const o = item.offsets;
        const obytes = writeNpy("int32", o.shape, await o.data());
        const okey = `${key}:offsets`;
        pipe.set(okey, Buffer.from(obytes.buffer, obytes.byteOffset, obytes.byteLength), "EX", d.ttl);
        return { key, batchDim: 1, offsets: okey };
      };
      const outputs: Ref[] = [];
      for (let r = 0; r < list.length; r++) outputs.push(await store(list[r], `result ${r}`));
      await pipe.exec();
      return { outputs, multi: Array.isArray(out), worker: name, backend: f.backend.name };
    } catch (e) {
      const text = `shard ${d.shard} (rows ${d.rows[0]}..${d.rows[1] - 1}): ${errorText(e)}`;
      // A library error is deterministic (same input, same error): no retry.
      if (e instanceof BatchwiseError) throw new bullmq.UnrecoverableError(text);
      throw new Error(text);
    }
  };

  const worker: BullWorker = new bullmq.Worker(opts.queue ?? DEFAULT_QUEUE, processor as never, {
    connection: redisOptions(connection),
    concurrency,
    name,
    ...(opts.lockDuration !== undefined ? { lockDuration: opts.lockDuration } : {}),
    ...(opts.stalledInterval !== undefined ? { stalledInterval: opts.stalledInterval } : {}),
    ...(opts.maxStalledCount !== undefined ? { maxStalledCount: opts.maxStalledCount } : {}),
  });
  // Connection errors are retried by ioredis; without a listener Node would treat them as fatal.
  worker.on("error", () => undefined);
  redis.on("error", () => undefined);
  return {
    ready: worker.waitUntilReady().then(() => undefined),
    async close() {
      await worker.close();
      redis.disconnect();
    },
  };
}
