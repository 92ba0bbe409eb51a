/** How a run's inputs are cut into shards: their leaves and structure (src/tree.ts), and the row ranges. */
import { ShapeError } from "../../ir/errors.js";
import { JaggedTensor } from "../ragged/jagged.js";
import { Tensor } from "../tensor.js";
import { LazyStackedTensorDict } from "../tensordict/lazy.js";
import { isNonTensor } from "../tensordict/nontensor.js";
import { TensorDict } from "../tensordict/tensordict.js";
import { argKind } from "../args.js";
import { flattenInto, type TreeDef, type TreePath } from "../tree.js";
import type { RunShardedOptions } from "./coordinator.js";
import { DistributedError, positiveInt } from "./errors.js";
import { fmtPath, fmtValue, type ShardedValue } from "./wire.js";

/** The row ranges of the shards. */
export function shardRanges(n: number, opts: Pick<RunShardedOptions, "shardSize" | "shards">): [number, number][] {
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

/** A tensor or jagged tensor of the inputs, and whether it is cut into rows (else stored once, for every shard). */
export interface InputLeaf {
  readonly value: Tensor | JaggedTensor;
  readonly batched: boolean;
}

/**
 * Flattens input `i` (src/tree.ts: tensors and jagged tensors are leaves,
 * TensorDicts nodes), appending its leaves to `leaves`, and returns its
 * structure. A TensorDict's entries are batched when the dict is (every entry's
 * batch shape starts with the dict's batch size); lazy stacks and non-tensor
 * entries are typed errors.
 */
export function flattenInput(op: string, i: number, v: unknown, leaves: InputLeaf[]): TreeDef {
  const where = (path: TreePath) =>
    path.length === 0 ? `input ${i}` : `input ${i} entry ${fmtPath(path.map(String))}`;
  const batched = (l: Tensor | JaggedTensor) => l instanceof JaggedTensor || l.batchDim > 0;
  const values: (Tensor | JaggedTensor)[] = [];
  const def = flattenInto(
    v,
    {
      isLeaf: (a): a is Tensor | JaggedTensor => a instanceof Tensor || a instanceof JaggedTensor,
      dict: argKind("dict", op),
      afterDict: (d, path, under) => {
        if (d.batchDim > 0) return;
        const stray = under.find(batched);
        if (stray !== undefined)
          throw new ShapeError(
            `${op}: ${where(path)} is ${fmtValue(d)} with the batched entry ${fmtValue(stray)}: give the dict a batch size of at least the leading batch dim its entries share to shard it (runSharded cuts a TensorDict along the first dim of its batch size)`,
          );
      },
      reject: (a, path) => {
        if (path.length > 0 && isNonTensor(a)) {
          const p = path.map(String);
          return new DistributedError(
            `${op}: input ${i} holds the non-tensor entry ${fmtPath(p)} (${a.toString()}); compiled functions take tensor entries only: td.exclude(${JSON.stringify(p.length === 1 ? p[0] : p)}) before the call and set it on the result after it`,
          );
        }
        if (a instanceof LazyStackedTensorDict)
          return new DistributedError(
            `${op}: ${where(path)} is a lazy stack (${a.toString()}); runSharded takes dense TensorDicts: call .densify() (members of different lengths become jagged entries) or stack the members with stack()`,
          );
        return new DistributedError(
          `${op}: ${where(path)} is a ${fmtValue(a)}; plain tensors, jagged tensors and TensorDicts are sharded`,
        );
      },
    },
    values,
    [],
  );
  for (const value of values) leaves.push({ value, batched: batched(value) });
  return def;
}

/** The rows input `v` is cut into (undefined for one stored whole). */
export function rowsOf(v: ShardedValue): number | undefined {
  if (v instanceof JaggedTensor) return v.rows;
  if (v instanceof TensorDict) return v.batchDim > 0 ? v.batchSize[0]! : undefined;
  return v.batchDim > 0 ? v.shape[0]! : undefined;
}
