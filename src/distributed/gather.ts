/** How a run's shard results are put together into values of the full batch. */
import type { DType, TypedArray } from "../../ir/dtype.js";
import { ShapeError } from "../../ir/errors.js";
import { fromTypedArray } from "../creation.js";
import { JaggedTensor } from "../ragged/jagged.js";
import { TensorDict } from "../tensordict/tensordict.js";
import type { ShardedValue } from "./wire.js";

/** A gathered shard result: a tensor's data, or a TensorDict's batch size and entries. */
export type Got =
  | {
      readonly dtype: DType;
      readonly shape: readonly number[];
      readonly data: TypedArray;
      readonly batchDim: number;
      readonly offsets: Int32Array | undefined;
    }
  | { readonly size: readonly number[]; readonly entries: readonly (readonly [string, Got])[] };

export const isGotDict = (g: Got): g is Extract<Got, { size: readonly number[] }> => "size" in g;

/** The concatenation of shard results `parts` (one per shard, in order) into a value of the full batch of `n` rows. */
export function concatGot(op: string, what: string, parts: readonly Got[], n: number): ShardedValue {
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
