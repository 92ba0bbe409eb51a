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
 * - Inputs are plain tensors and jagged tensors. Every tensor input with batch
 *   dims is cut along its leading batch dim, a jagged tensor by its rows (its
 *   values and its offsets, rebased to start at 0); all must have the same
 *   number of rows N. A tensor input with no batch dims (parameters) goes whole
 *   to every shard (stored once). TensorDicts are not supported yet (a
 *   `DistributedError`).
 * - The function must be row-wise along the leading batch dim: each result's
 *   leading batch dim (a jagged result's rows) must equal the shard's row count
 *   (checked when gathering).
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
import type { Queue as BullQueue, Worker as BullWorker } from "bullmq";
import type { Redis as IORedis } from "ioredis";
import { BackendError, BatchwiseError, BundleError, ShapeError } from "../../ir/errors.js";
import type { DType, TypedArray } from "../../ir/dtype.js";
import { getBackend, setBackend } from "../backend.js";
import { loadBundle, type BundleFunction, type BundleModule } from "../bundle.js";
import { fromTypedArray } from "../creation.js";
import { readNpy, writeNpy } from "../io/npy.js";
import { JaggedTensor } from "../ragged/jagged.js";
import { Tensor } from "../tensor.js";
// The full entry registers JaggedTensor and TensorDict (the bundle loader needs them registered).
import "../index.js";

/** A sharded run or a worker failed (a shard's error after its retries, a cancelled run, unsupported inputs). */
export class DistributedError extends BatchwiseError {
  /** The class name, kept under minification (`e.name` in messages and checks). */
  override name = "DistributedError";
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
 * it (a file's contents). The hash is the bundle's recorded `sha256`; workers
 * recompute it with `loadBundle(mod, { sha256 })` and refuse a bundle whose
 * content does not match it. Publishing the same bundle twice is harmless.
 *
 * @example
 * ```ts
 * const f = jit((x: Tensor) => x.mul(x).neg().exp());
 * f(ones([4], []));
 * const hash = await publishBundle("redis://127.0.0.1:6379", f.bundle());
 * ```
 */
export async function publishBundle(connection: RedisConnection, source: string): Promise<string> {
  if (typeof source !== "string")
    throw new BundleError(
      `publishBundle: source must be the bundle module's text (f.bundle()), got ${source === null ? "null" : typeof source}`,
    );
  const hash = bundleHashOf(source);
  const redis = await client(connection);
  try {
    await redis.set(BUNDLE_KEY + hash, source);
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
  /** How often the shards' states are polled, in ms (default 20). */
  readonly pollMs?: number;
  /** Seconds before a run's data expires if the caller dies (default 86400). */
  readonly ttlSeconds?: number;
}

/** One input or result of a shard in Redis: a tensor's `.npy` blob, or a jagged tensor's values and offsets blobs. */
interface BlobRef {
  readonly key: string;
  readonly batchDim: number;
  /** For a jagged tensor: the key of its int32 offsets `(rows+1;)`, starting at 0 (`key` holds the values `(T; base)`). */
  readonly offsets?: string;
}

/** What `runSharded` takes per argument and gives back per result. */
export type ShardedValue = Tensor | JaggedTensor;

/** A shard job's data. */
interface ShardJob {
  readonly run: string;
  readonly shard: number;
  readonly rows: readonly [number, number];
  readonly hash: string;
  readonly inputs: readonly BlobRef[];
  readonly ttl: number;
}

/** A shard job's return value. */
interface ShardResult {
  readonly outputs: readonly BlobRef[];
  readonly multi: boolean;
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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Runs the bundle `bundleHash` (published with `publishBundle`) on `inputs`,
 * sharded along their leading batch dim across the workers listening on the
 * queue, and resolves to the results of the full batch, in order, as the bundle
 * returns them (one tensor or jagged tensor, or an array for a bundle of several
 * results). The gathered values are bit for bit those of one call on the whole
 * batch when the function is row-wise (each row's results depend on that row
 * only). It waits until workers take the shards: bound the wait with `signal`
 * (`AbortSignal.timeout(ms)`).
 *
 * Rejects with a `DistributedError` naming the shard index when a shard fails
 * (after its retries), and with the signal's reason when `signal` aborts.
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
  if (!Array.isArray(inputs)) throw new DistributedError(`${op}: inputs must be an array of tensors`);
  inputs.forEach((t, i) => {
    if (!(t instanceof Tensor) && !(t instanceof JaggedTensor)) {
      const kind = t !== null && typeof t === "object" ? ((t as object).constructor?.name ?? "object") : typeof t;
      throw new DistributedError(
        `${op}: input ${i} is a ${kind}; plain tensors and jagged tensors are sharded (TensorDicts are not supported yet)`,
      );
    }
  });
  const fmt = (t: ShardedValue) => (t instanceof JaggedTensor ? t.toString() : fmtShapeOf(t));
  const rowsOf = (t: ShardedValue) => (t instanceof JaggedTensor ? t.rows : t.batchDim > 0 ? t.shape[0]! : undefined);
  const first = inputs.findIndex((t) => rowsOf(t) !== undefined);
  if (first < 0)
    throw new ShapeError(`${op}: no input has a batch dim to shard along (inputs ${inputs.map(fmt).join(", ")})`);
  const n = rowsOf(inputs[first]!)!;
  inputs.forEach((t, i) => {
    const r = rowsOf(t);
    if (r !== undefined && r !== n)
      throw new ShapeError(
        `${op}: input ${i} ${fmt(t)} has ${r} rows in its leading batch dim, input ${first} ${fmt(inputs[first]!)} has ${n}`,
      );
  });
  const ranges = shardRanges(n, opts);
  const attempts = opts.attempts === undefined ? 3 : positiveInt(op, "attempts", opts.attempts);
  const ttl = opts.ttlSeconds === undefined ? 86400 : positiveInt(op, "ttlSeconds", opts.ttlSeconds);
  const pollMs = opts.pollMs ?? 20;
  const signal = opts.signal;
  if (signal?.aborted) throw abortReason(signal);

  const { bullmq } = await deps();
  const redis = await client(connection);
  const queue: BullQueue = new bullmq.Queue(opts.queue ?? DEFAULT_QUEUE, { connection: redisOptions(connection) });
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
    // Inputs: each batched input cut into rows; unbatched inputs stored once.
    const values = await Promise.all(inputs.map((t) => (t instanceof JaggedTensor ? t.values.data() : t.data())));
    const offsetsOf = await Promise.all(
      inputs.map(async (t) => (t instanceof JaggedTensor ? ((await t.offsets.data()) as Int32Array) : undefined)),
    );
    const shared = new Map<number, BlobRef>();
    for (let i = 0; i < inputs.length; i++) {
      const t = inputs[i]!;
      if (t instanceof JaggedTensor || t.batchDim > 0) continue;
      const key = `${prefix}param:${i}`;
      const bytes = writeNpy(t.dtype, t.shape, values[i]!);
      await redis.set(key, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), "EX", ttl);
      keys.push(key);
      bytesUp += bytes.byteLength;
      shared.set(i, { key, batchDim: 0 });
    }
    const jobs: { name: string; data: ShardJob; opts: Record<string, unknown> }[] = [];
    for (let s = 0; s < ranges.length; s++) {
      const [a, b] = ranges[s]!;
      const refs: BlobRef[] = [];
      const pipe = redis.pipeline();
      for (let i = 0; i < inputs.length; i++) {
        const t = inputs[i]!;
        const sh = shared.get(i);
        if (sh !== undefined) {
          refs.push(sh);
          continue;
        }
        const v = t instanceof JaggedTensor ? t.values : t;
        const o = offsetsOf[i];
        // A jagged tensor's rows a..b are its values o[a]..o[b].
        const [va, vb] = o === undefined ? [a, b] : [o[a]!, o[b]!];
        const row = v.shape.slice(1).reduce((p: number, d: number) => p * d, 1);
        const sub = (values[i] as TypedArray).subarray(va * row, vb * row);
        const bytes = writeNpy(v.dtype, [vb - va, ...v.shape.slice(1)], sub);
        const key = `${prefix}in:${s}:${i}`;
        pipe.set(key, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), "EX", ttl);
        keys.push(key);
        bytesUp += bytes.byteLength;
        if (o === undefined) {
          refs.push({ key, batchDim: v.batchDim });
          continue;
        }
        const offs = writeNpy(
          "int32",
          [b - a + 1],
          Int32Array.from(o.subarray(a, b + 1), (x) => x - va),
        );
        const okey = `${prefix}in:${s}:${i}:offsets`;
        pipe.set(okey, Buffer.from(offs.buffer, offs.byteOffset, offs.byteLength), "EX", ttl);
        keys.push(okey);
        bytesUp += offs.byteLength;
        refs.push({ key, batchDim: 1, offsets: okey });
      }
      await pipe.exec();
      jobs.push({
        name: "shard",
        data: { run, shard: s, rows: [a, b], hash: bundleHash, inputs: refs, ttl },
        opts: { jobId: jobId(s), attempts, removeOnComplete: false, removeOnFail: false },
      });
    }
    if (signal?.aborted) throw abortReason(signal);
    await queue.addBulk(jobs);
    progress();

    // Gather: poll the shards' states; read each completed shard's outputs once.
    const results: (
      | readonly {
          dtype: DType;
          shape: readonly number[];
          data: TypedArray;
          batchDim: number;
          offsets: Int32Array | undefined;
        }[]
      | undefined
    )[] = new Array(total).fill(undefined);
    let multi = false;
    const pending = new Set(ranges.map((_, s) => s));
    while (pending.size > 0) {
      if (signal?.aborted) throw abortReason(signal);
      for (const s of [...pending]) {
        const state = await queue.getJobState(jobId(s));
        if (state === "failed") {
          const job = await queue.getJob(jobId(s));
          const [a, b] = ranges[s]!;
          throw new DistributedError(
            `${op}: shard ${s} of ${total} (rows ${a}..${b - 1}) failed after ${job?.attemptsMade ?? "?"} attempt(s): ${job?.failedReason ?? "unknown reason"}`,
          );
        }
        if (state === "unknown") {
          // The job is gone: Redis was flushed, or restarted without persistence (its blobs went with it).
          const [a, b] = ranges[s]!;
          throw new DistributedError(
            `${op}: shard ${s} of ${total} (rows ${a}..${b - 1}) vanished from Redis (flushed, or restarted without persistence: run Redis with an append-only file or snapshots to survive restarts)`,
          );
        }
        if (state !== "completed") continue;
        const job = await queue.getJob(jobId(s));
        const r = job?.returnvalue as ShardResult | undefined;
        if (r === undefined || r === null) continue; // completed but not yet readable: next round
        multi = r.multi;
        const outKeys = r.outputs.flatMap((o) => (o.offsets === undefined ? [o.key] : [o.key, o.offsets]));
        const blobs = await redis.mgetBuffer(...outKeys);
        const read = (key: string, k: number) => {
          const blob = blobs[outKeys.indexOf(key)];
          if (blob === null || blob === undefined)
            throw new DistributedError(`${op}: shard ${s}: its output ${k} is missing from Redis (${key})`);
          bytesDown += blob.byteLength;
          return readNpy(new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength), op);
        };
        const [a, b] = ranges[s]!;
        results[s] = r.outputs.map((o, k) => {
          const arr = read(o.key, k);
          const offsets = o.offsets === undefined ? undefined : (read(o.offsets, k).data as Int32Array);
          const rows = offsets === undefined ? arr.shape[0] : offsets.length - 1;
          if (o.batchDim < 1 || rows !== b - a)
            throw new ShapeError(
              `${op}: shard ${s} (rows ${a}..${b - 1}): result ${k} has ${offsets === undefined ? `shape (${arr.shape.join(",")}) with ${o.batchDim} batch dim(s)` : `${rows} jagged rows`}; a sharded function must return results whose leading batch dim has the shard's ${b - a} rows`,
            );
          return { dtype: arr.dtype, shape: arr.shape, data: arr.data, batchDim: o.batchDim, offsets };
        });
        keys.push(...outKeys);
        pending.delete(s);
        done++;
        progress();
      }
      if (pending.size > 0) await sleep(pollMs);
    }

    // Concatenate along the leading batch dim.
    const out = results[0]!.map((r0, k): ShardedValue => {
      const rest = r0.shape.slice(1);
      const parts = results.map((r, s) => {
        const p = r![k]!;
        if (
          p.dtype !== r0.dtype ||
          p.batchDim !== r0.batchDim ||
          p.shape.slice(1).join() !== rest.join() ||
          (p.offsets === undefined) !== (r0.offsets === undefined)
        )
          throw new ShapeError(
            `${op}: result ${k} of shard ${s} is ${p.offsets !== undefined ? "jagged " : ""}${p.dtype} (${p.shape.join(",")}), of shard 0 ${r0.offsets !== undefined ? "jagged " : ""}${r0.dtype} (${r0.shape.join(",")})`,
          );
        return p.data;
      });
      const len = parts.reduce((m, p) => m + p.length, 0);
      const Ctor = r0.data.constructor as new (n: number) => TypedArray;
      const all = new Ctor(len);
      let at = 0;
      for (const p of parts) {
        all.set(p as never, at);
        at += p.length;
      }
      if (r0.offsets === undefined)
        return fromTypedArray(all, [n, ...rest], { batchDim: r0.batchDim, dtype: r0.dtype, copy: false });
      // Jagged: the values one shard after the other, the offsets rebased by the values before each shard.
      const offsets = new Int32Array(n + 1);
      let row = 0;
      let base = 0;
      for (const r of results) {
        const o = r![k]!.offsets!;
        for (let i = 1; i < o.length; i++) offsets[row + i] = o[i]! + base;
        row += o.length - 1;
        base += o[o.length - 1]!;
      }
      return new JaggedTensor(
        fromTypedArray(all, [base, ...rest], { batchDim: 1, dtype: r0.dtype, copy: false }),
        fromTypedArray(offsets, [n + 1], { batchDim: 1, copy: false }),
      );
    });
    return multi ? out : out[0]!;
  } finally {
    // Remove the run's jobs and data, whatever happened (an active job of a cancelled run finishes; its outputs expire).
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
 */
export async function startWorker(
  connection: RedisConnection,
  opts: StartWorkerOptions = {},
): Promise<DistributedWorker> {
  const { bullmq } = await deps();
  if (opts.backend !== undefined) setBackend(opts.backend);
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
    try {
      await opts.beforeShard?.({ shard: d.shard, rows: d.rows, hash: d.hash, attempt: job.attemptsMade + 1 });
      const f = await bundleFor(d.hash);
      const blobs = await redis.mgetBuffer(...d.inputs.map((i) => i.key));
      const args = d.inputs.map((ref, i) => {
        const blob = blobs[i];
        if (blob === null || blob === undefined)
          throw new Error(`input ${i} (${ref.key}) is missing from Redis (expired, or the run was cancelled)`);
        const a = readNpy(new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength), "worker");
        const t = fromTypedArray(a.data, a.shape, { batchDim: ref.batchDim, dtype: a.dtype, copy: false });
        return ref.offsets === undefined ? t : { values: t, offsets: ref.offsets, i };
      });
      const offsetBlobs = await redis.mgetBuffer(
        ...args.flatMap((x) => (x instanceof Tensor ? [] : [x.offsets])),
        "batchwise:none", // mget needs at least one key
      );
      let ob = 0;
      const callArgs = args.map((x) => {
        if (x instanceof Tensor) return x;
        const blob = offsetBlobs[ob++];
        if (blob === null || blob === undefined)
          throw new Error(
            `input ${x.i} offsets (${x.offsets}) are missing from Redis (expired, or the run was cancelled)`,
          );
        const o = readNpy(new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength), "worker");
        return new JaggedTensor(x.values, fromTypedArray(o.data, o.shape, { batchDim: 1, copy: false }));
      });
      const out = await f.callAsync(...callArgs);
      const list = Array.isArray(out) ? out : [out];
      const pipe = redis.pipeline();
      const outputs: BlobRef[] = [];
      for (let k = 0; k < list.length; k++) {
        const item = list[k];
        if (!(item instanceof Tensor) && !(item instanceof JaggedTensor))
          throw new DistributedError(
            `result ${k} is not a tensor or a jagged tensor; only those are gathered (TensorDicts are not supported yet)`,
          );
        const t = item instanceof JaggedTensor ? item.values : item;
        const bytes = writeNpy(t.dtype, t.shape, await t.data());
        const key = `${RUN_KEY}${d.run}:out:${d.shard}:${k}`;
        pipe.set(key, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), "EX", d.ttl);
        if (item instanceof Tensor) {
          outputs.push({ key, batchDim: t.batchDim });
          continue;
        }
        const o = item.offsets;
        const obytes = writeNpy("int32", o.shape, await o.data());
        const okey = `${key}:offsets`;
        pipe.set(okey, Buffer.from(obytes.buffer, obytes.byteOffset, obytes.byteLength), "EX", d.ttl);
        outputs.push({ key, batchDim: 1, offsets: okey });
      }
      await pipe.exec();
      return { outputs, multi: Array.isArray(out) };
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
