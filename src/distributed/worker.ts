/** `startWorker`: a worker that takes shards from the queue, runs them with their bundles and stores the results. */
import type { Worker as BullWorker } from "bullmq";
import { BatchwiseError, BundleError } from "../../ir/errors.js";
import { getBackend, setBackend } from "../backend.js";
import { loadBundle, type BundleFunction, type BundleModule } from "../bundle.js";
import { fromTypedArray } from "../creation.js";
import { JaggedTensor } from "../ragged/jagged.js";
import { Tensor } from "../tensor.js";
import { TensorDict } from "../tensordict/tensordict.js";
import { argKind } from "../args.js";
import { flatten } from "../tree.js";
import { DistributedError, positiveInt } from "./errors.js";
import { BUNDLE_KEY, deps, openQueue, RUN_KEY } from "./redis.js";
import type { RedisConnection } from "./connection.js";
import {
  blobKeys,
  fmtValue,
  isDictRef,
  npyBlob,
  readBlob,
  treeRef,
  type BlobRef,
  type Ref,
  type ShardedValue,
  type ShardJob,
  type ShardResult,
} from "./wire.js";

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
  readonly backend?: import("../../runtime/backend-name.js").BackendName;
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
  // bullmq and ioredis first: a missing peer dependency is the first error.
  await deps();
  if (opts.name !== undefined && (typeof opts.name !== "string" || opts.name === ""))
    throw new DistributedError(`startWorker: name must be a non-empty string, got ${JSON.stringify(opts.name)}`);
  if (opts.backend !== undefined) setBackend(opts.backend);
  const name = opts.name ?? `${(await import("node:os")).hostname()}:${process.pid}`;
  const concurrency = opts.concurrency === undefined ? 1 : positiveInt("startWorker", "concurrency", opts.concurrency);
  const { bullmq, redis, queue, options } = await openQueue(connection, opts.queue);
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
        return readBlob(blob, "worker");
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
      const store = async (item: Tensor | JaggedTensor): Promise<BlobRef> => {
        const t = item instanceof JaggedTensor ? item.values : item;
        const key = `${RUN_KEY}${d.run}:out:${d.shard}:${k++}`;
        pipe.set(key, npyBlob(t.dtype, t.shape, await t.data()), "EX", d.ttl);
        if (item instanceof Tensor) return { key, batchDim: t.batchDim };
        const o = item.offsets;
        const okey = `${key}:offsets`;
        pipe.set(okey, npyBlob("int32", o.shape, await o.data()), "EX", d.ttl);
        return { key, batchDim: 1, offsets: okey };
      };
      const outputs: Ref[] = [];
      for (let r = 0; r < list.length; r++) {
        // Tensors and jagged tensors are stored, TensorDicts kept as their batch sizes and entries.
        const { leaves, def } = flatten(list[r], {
          isLeaf: (a): a is Tensor | JaggedTensor => a instanceof Tensor || a instanceof JaggedTensor,
          dict: argKind("dict", "worker"),
          reject: (a, path) =>
            new DistributedError(
              `result ${r}${path.map((key) => ` entry ${JSON.stringify(key)}`).join("")} is ${fmtValue(a)}; only tensors, jagged tensors and TensorDicts of them are gathered`,
            ),
        });
        const refs: BlobRef[] = [];
        for (const leaf of leaves) refs.push(await store(leaf));
        outputs.push(treeRef(def, refs, (dict) => dict.batchSize ?? []));
      }
      await pipe.exec();
      return { outputs, multi: Array.isArray(out), worker: name, backend: f.backend.name };
    } catch (e) {
      const text = `shard ${d.shard} (rows ${d.rows[0]}..${d.rows[1] - 1}): ${errorText(e)}`;
      // A library error is deterministic (same input, same error): no retry.
      if (e instanceof BatchwiseError) throw new bullmq.UnrecoverableError(text);
      throw new Error(text);
    }
  };

  const worker: BullWorker = new bullmq.Worker(queue, processor as never, {
    connection: options,
    concurrency,
    name,
    ...(opts.lockDuration !== undefined ? { lockDuration: opts.lockDuration } : {}),
    ...(opts.stalledInterval !== undefined ? { stalledInterval: opts.stalledInterval } : {}),
    ...(opts.maxStalledCount !== undefined ? { maxStalledCount: opts.maxStalledCount } : {}),
  });
  // Connection errors are retried by ioredis; without a listener Node would treat them as fatal.
  worker.on("error", () => undefined);
  return {
    ready: worker.waitUntilReady().then(() => undefined),
    async close() {
      await worker.close();
      redis.disconnect();
    },
  };
}
