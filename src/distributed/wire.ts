/**
 * What a run keeps in Redis and passes through BullMQ: shard jobs' data and
 * return values, whose arguments and results name `.npy` blobs by key (workers
 * of other versions read and write these, so their shapes stay as they are),
 * and the texts messages use for the values.
 */
import type { DType, TypedArray } from "../../ir/dtype.js";
import { readNpy, writeNpy, type NpyArray } from "../io/npy.js";
import { JaggedTensor } from "../ragged/jagged.js";
import { Tensor } from "../tensor.js";
import { TensorDict } from "../tensordict/tensordict.js";
import type { TreeDef } from "../tree.js";

/** One tensor of a shard in Redis: a tensor's `.npy` blob, or a jagged tensor's values and offsets blobs. */
export interface BlobRef {
  readonly key: string;
  readonly batchDim: number;
  /** For a jagged tensor: the key of its int32 offsets `(rows+1;)`, starting at 0 (`key` holds the values `(T; base)`). */
  readonly offsets?: string;
}

/** A shard's TensorDict in Redis: its batch size and its entries, in order (nested dicts inline). */
export interface DictRef {
  readonly dict: readonly number[];
  readonly entries: readonly (readonly [string, Ref])[];
}

/** One argument or result of a shard in Redis. */
export type Ref = BlobRef | DictRef;

export const isDictRef = (r: Ref): r is DictRef => "dict" in r;

/**
 * The `Ref` of a value of structure `def` (src/tree.ts) whose leaves are stored
 * as `leaves`, in order; `size` gives each dict's batch size in the ref.
 */
export function treeRef(
  def: TreeDef,
  leaves: readonly BlobRef[],
  size: (dict: Extract<TreeDef, { kind: "dict" }>) => readonly number[],
): Ref {
  let i = 0;
  const refOf = (d: TreeDef): Ref =>
    d.kind !== "dict"
      ? leaves[i++]!
      : { dict: size(d), entries: d.keys.map((k, e) => [k, refOf(d.children[e]!)] as const) };
  return refOf(def);
}

/** The blob keys under `r`, depth first (a jagged tensor's values, then its offsets). */
export function blobKeys(r: Ref, out: string[] = []): string[] {
  if (isDictRef(r)) for (const [, e] of r.entries) blobKeys(e, out);
  else {
    out.push(r.key);
    if (r.offsets !== undefined) out.push(r.offsets);
  }
  return out;
}

/** The `.npy` blob of an array, as Redis keeps it. */
export function npyBlob(dtype: DType, shape: readonly number[], data: TypedArray): Buffer {
  const bytes = writeNpy(dtype, shape, data);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The array of a `.npy` blob read from Redis (`op` names the reader in its errors). */
export function readBlob(blob: Buffer, op: string): NpyArray {
  return readNpy(new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength), op);
}

/** What `runSharded` takes per argument and gives back per result. */
export type ShardedValue = Tensor | JaggedTensor | TensorDict;

/** A shard job's data. */
export interface ShardJob {
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
export interface ShardResult {
  readonly outputs: readonly Ref[];
  readonly multi: boolean;
  /** The worker's name (absent from workers of batchwise 0.5 and before). */
  readonly worker?: string;
  /** The backend the shard ran on, or would have: the worker's (absent from workers of batchwise 0.5 and before). */
  readonly backend?: string;
  /** The worker did not run the shard: its backend is not the one the job expects. */
  readonly refused?: boolean;
}

export function fmtShapeOf(t: Tensor): string {
  const s = t.shape;
  return `(${s.slice(0, t.batchDim).join(",")}; ${s.slice(t.batchDim).join(",")})`;
}

/** `"a"`, or a nested key as `("a", "b")` (as TensorDict's messages name keys). */
export function fmtPath(path: readonly string[]): string {
  return path.length === 1 ? JSON.stringify(path[0]) : `(${path.map((k) => JSON.stringify(k)).join(", ")})`;
}

/** `what` for messages: a tensor's `(batch; base)`, a jagged tensor's text, a TensorDict's batch size. */
export function fmtValue(v: unknown): string {
  if (v instanceof Tensor) return fmtShapeOf(v);
  if (v instanceof JaggedTensor) return v.toString();
  if (v instanceof TensorDict) return `TensorDict(batchSize=[${v.batchSize.join(", ")}])`;
  return v !== null && typeof v === "object" ? ((v as object).constructor?.name ?? "object") : typeof v;
}
