/** `runSharded`: the coordinator that stores a run's shards, enqueues their jobs and gathers their results. */
import type { Queue as BullQueue, QueueEvents as BullQueueEvents } from "bullmq";
import { ShapeError } from "../../ir/errors.js";
import { getBackend } from "../backend.js";
import { CPU_BACKENDS, listBackendNames } from "../../runtime/backend-name.js";
import { JaggedTensor } from "../ragged/jagged.js";
import type { TypedArray } from "../../ir/dtype.js";
import { BackendMismatchError, DistributedError, positiveInt } from "./errors.js";
import { concatGot, type Got } from "./gather.js";
import { openQueue, RUN_KEY } from "./redis.js";
import type { RedisConnection } from "./connection.js";
import { flattenInput, rowsOf, shardRanges, type InputLeaf } from "./shard.js";
import {
  blobKeys,
  fmtValue,
  isDictRef,
  npyBlob,
  readBlob,
  treeRef,
  type BlobRef,
  type Ref,
  type ShardJob,
  type ShardResult,
  type ShardedValue,
} from "./wire.js";

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

/** The backend a run expects its shards to run on, or undefined when any is accepted. */
function expectedBackend(op: string, opts: RunShardedOptions): string | undefined {
  const { backend, allowMixedBackends } = opts;
  if (allowMixedBackends !== undefined && typeof allowMixedBackends !== "boolean")
    throw new DistributedError(`${op}: allowMixedBackends must be true or false, got ${String(allowMixedBackends)}`);
  if (backend !== undefined && (typeof backend !== "string" || backend === ""))
    throw new DistributedError(
      `${op}: backend must be the name of a backend (${listBackendNames()}), got ${typeof backend === "string" ? '""' : String(backend)}`,
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

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("runSharded was aborted", "AbortError");
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
  const firstLeaf: number[] = [];
  const tmpls = inputs.map((v, i) => {
    firstLeaf.push(leaves.length);
    return flattenInput(op, i, v, leaves);
  });
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

  const { bullmq, redis, queue: queueName, options } = await openQueue(connection, opts.queue);
  const queue: BullQueue = new bullmq.Queue(queueName, { connection: options });
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
      const bytes = npyBlob(t.dtype, t.shape, values[li]!);
      await redis.set(key, bytes, "EX", ttl);
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
        const bytes = npyBlob(v.dtype, [vb - va, ...v.shape.slice(1)], sub);
        const key = `${prefix}in:${s}:${li}`;
        pipe.set(key, bytes, "EX", ttl);
        keys.push(key);
        bytesUp += bytes.byteLength;
        piped += bytes.byteLength;
        if (o === undefined) {
          refs.push({ key, batchDim: v.batchDim });
          continue;
        }
        const offs = npyBlob(
          "int32",
          [b - a + 1],
          Int32Array.from(o.subarray(a, b + 1), (x) => x - va),
        );
        const okey = `${prefix}in:${s}:${li}:offsets`;
        pipe.set(okey, offs, "EX", ttl);
        keys.push(okey);
        bytesUp += offs.byteLength;
        piped += offs.byteLength;
        refs.push({ key, batchDim: 1, offsets: okey });
      }
      if (piped >= 4 << 20) await flush();
      jobs.push({
        name: "shard",
        data: {
          run,
          shard: s,
          rows: [a, b],
          hash: bundleHash,
          inputs: tmpls.map((def, i) =>
            // A batched dict's shard has the shard's rows in the first dim of its batch size.
            treeRef(def, refs.slice(firstLeaf[i]!), (dict) =>
              dict.batchDim > 0 ? [b - a, ...(dict.batchSize ?? []).slice(1)] : (dict.batchSize ?? []),
            ),
          ),
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
        `${op}: shard ${s} of ${total} (rows ${a}..${b - 1}) was taken by ${who}, but this run expects ${expected}${opts.backend === undefined ? " (the coordinator's current backend)" : ""}: backends round float32 math differently, so the gathered result would not have the bits of one call on ${expected}. Run the queue's workers on ${expected}${expected !== undefined && (CPU_BACKENDS as readonly string[]).includes(expected) ? ` (batchwise worker --backend ${expected})` : ""}, give this run { backend: ${JSON.stringify(theirs === "unknown" ? "<the workers' backend>" : theirs)} } if its workers are all on ${theirs === "unknown" ? "another backend" : theirs}, or { allowMixedBackends: true } to accept each shard's own backend's bits`,
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
          return readBlob(blob, op);
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
      connection: options,
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
