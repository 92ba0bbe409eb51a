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
// The full entry registers JaggedTensor and TensorDict (the bundle loader needs them registered).
import "../index.js";

export { BackendMismatchError, DistributedError } from "./errors.js";
export { DEFAULT_QUEUE, type RedisConnection } from "./connection.js";
export { publishBundle } from "./publish.js";
export type { ShardedValue } from "./wire.js";
export { runSharded, type RunShardedOptions, type ShardProgress } from "./coordinator.js";
export { startWorker, type DistributedWorker, type ShardInfo, type StartWorkerOptions } from "./worker.js";
