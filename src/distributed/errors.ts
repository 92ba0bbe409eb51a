/** The errors of `batchwise/distributed`, and the option check the coordinator and the worker share. */
import { BatchwiseError } from "../../ir/errors.js";

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

/** `v` as a positive integer, or a `DistributedError` naming `op` and the option `name`. */
export function positiveInt(op: string, name: string, v: unknown): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1)
    throw new DistributedError(`${op}: ${name} must be a positive integer, got ${String(v)}`);
  return v;
}
