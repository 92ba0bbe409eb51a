/**
 * Stacking, concatenation and padding of TensorDicts (tensordict's
 * `torch.stack`, `torch.cat`, `maybe_dense_stack`, `pad_sequence`,
 * `unpad_sequence`), entry by entry with the plain-tensor
 * versions in ../ragged/sequence.ts. Error texts are tensordict's, with
 * batchwise's names and `(batch; base)` shapes.
 */
import { DTypeError, KeyError, ShapeError } from "../../ir/errors.js";
import { describeValue, optionsArg } from "../ragged/check.js";
import { JaggedTensor } from "../ragged/jagged.js";
import {
  cat as catTensors,
  padSequence as padTensors,
  stack as stackTensors,
  unpadSequence as unpadTensors,
  type PadSequenceOptions,
} from "../ragged/sequence.js";
import { hostTensor } from "../ragged/device.js";
import { Tensor } from "../tensor.js";
import { denselyStackable, LazyStackedTensorDict, lazyStack, lazyStackAs } from "./lazy.js";
import { fmtBatchSize, fmtKey, keyPath, newDim, rebuild, TensorDict, type NestedKey } from "./tensordict.js";
import { isNonTensor, ntCat, ntStack, type NonTensor } from "./nontensor.js";

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

const pathId = (p: NestedKey): string => JSON.stringify(typeof p === "string" ? [p] : p);

/** The tensor entries of `td` by path; a jagged entry is an error for `op`. */
function tensorLeaves(op: string, td: TensorDict): [readonly string[], Tensor][] {
  return td.leaves().map(([p, v]) => {
    if (v instanceof JaggedTensor || isNonTensor(v))
      throw new ShapeError(
        `${op}: entry ${fmtKey(p)} is ${v instanceof JaggedTensor ? "jagged " : ""}${v.toString()}; only tensor entries can be stacked, concatenated or padded`,
      );
    return [p, v];
  });
}

/** The non-tensor entries at `path` in each TensorDict, or undefined when the first is not one (a mix is an error for `op`). */
function nonTensorsAt(op: string, tds: readonly TensorDict[], path: readonly string[]): NonTensor[] | undefined {
  if (!isNonTensor(tds[0]!.get(path))) return undefined;
  return tds.map((t, i) => {
    const x = t.get(path);
    if (isNonTensor(x)) return x;
    throw new ShapeError(
      `${op}: entry ${fmtKey(path)} of td[${i}] is ${x === undefined ? "missing" : x.toString()}, but td[0]'s is non-tensor data`,
    );
  });
}

/** The tensor at `path` in each TensorDict; anything else there is an error for `op`. */
function tensorsAt(op: string, tds: readonly TensorDict[], path: readonly string[]): Tensor[] {
  return tds.map((t, i) => {
    const x = t.get(path);
    if (x instanceof Tensor) return x;
    if (x instanceof JaggedTensor)
      throw new ShapeError(
        `${op}: entry ${fmtKey(path)} is jagged ${x.toString()}; only tensor entries can be stacked, concatenated or padded`,
      );
    throw new ShapeError(
      `${op}: entry ${fmtKey(path)} of td[${i}] is ${x === undefined ? "missing" : x.toString()}, not a tensor`,
    );
  });
}

function keySet(td: TensorDict): string[] {
  return td.keys({ includeNested: true, leavesOnly: true }).map(pathId).sort();
}

function fmtKeySet(td: TensorDict): string {
  return `{${td.keys({ includeNested: true, leavesOnly: true }).map(fmtKey).join(", ")}}`;
}

/** Members of lazy stacks with the same stack dim and member count, or a reason they are not. */
function lazyMembers(op: string, list: readonly LazyStackedTensorDict[]): TensorDict[][] {
  const first = list[0]!;
  list.forEach((l, i) => {
    if (l.stackDim !== first.stackDim || l.tensordicts.length !== first.tensordicts.length) {
      throw new ShapeError(
        `${op}: lazy stacks need the same stackDim and member count, got item ${i} (stackDim ${l.stackDim}, ${l.tensordicts.length} members) and item 0 (stackDim ${first.stackDim}, ${first.tensordicts.length} members)`,
      );
    }
  });
  return first.tensordicts.map((_, j) => list.map((l) => l.tensordicts[j]!));
}

function checkKinds(op: string, list: readonly unknown[]): "dense" | "lazy" {
  if (list.length === 0) throw new ShapeError(`${op}: list cannot be empty`);
  if (list.every((t) => t instanceof TensorDict)) return "dense";
  if (list.every((t) => t instanceof LazyStackedTensorDict)) return "lazy";
  const kinds = [
    ...new Set(
      list.map((t) =>
        t instanceof TensorDict
          ? "TensorDict"
          : t instanceof LazyStackedTensorDict
            ? "LazyStackedTensorDict"
            : t instanceof Tensor
              ? "Tensor"
              : typeof t,
      ),
    ),
  ];
  throw new ShapeError(`${op}: the list mixes ${kinds.join(", ")}; give one kind (densify() lazy stacks first)`);
}

/**
 * Stacks TensorDicts on a new batch dim `dim` (tensordict's default, dense
 * `torch.stack`): every entry is stacked. Lazy stacks with the same stack dim
 * and member count are stacked member by member and stay lazy.
 *
 * Errors: `stacking tensordicts requires them to have congruent batch sizes,
 * got td[i].batchSize=… and td[0].batchSize=…`; `The sets of keys in the
 * tensordicts to stack are exclusive. Consider using maybeDenseStack instead.`
 * (a `KeyError`); `The shapes of the tensors to stack is incompatible: … vs … for key "k".`
 */
export function stackDicts(list: readonly TensorDict[], dim?: number): TensorDict;
export function stackDicts(list: readonly LazyStackedTensorDict[], dim?: number): LazyStackedTensorDict;
export function stackDicts(
  list: readonly (TensorDict | LazyStackedTensorDict)[],
  dim?: number,
): TensorDict | LazyStackedTensorDict;
export function stackDicts(
  list: readonly (TensorDict | LazyStackedTensorDict)[],
  dim = 0,
): TensorDict | LazyStackedTensorDict {
  const op = "stack";
  if (checkKinds(op, list) === "lazy") {
    const lazies = list as readonly LazyStackedTensorDict[];
    const d = newDim(op, dim, lazies[0]!.batchSize);
    const s = lazies[0]!.stackDim;
    // The new dim lands before or after the members' stack dim; inside a member it is the same dim with the stack dim removed.
    const inner = d <= s ? d : d - 1;
    const members = lazyMembers(op, lazies).map((group) => stackDicts(group, inner));
    return new LazyStackedTensorDict(members, d <= s ? s + 1 : s);
  }
  const tds = list as readonly TensorDict[];
  const first = tds[0]!;
  const d = newDim(op, dim, first.batchSize);
  const keys = keySet(first);
  tds.forEach((t, i) => {
    const k = keySet(t);
    if (k.length !== keys.length || k.some((x, j) => x !== keys[j])) {
      throw new KeyError(
        `${op}: The sets of keys in the tensordicts to stack are exclusive. Consider using maybeDenseStack instead. Got td[${i}] ${fmtKeySet(t)} and td[0] ${fmtKeySet(first)}`,
      );
    }
  });
  // Nested dicts are stacked too, so each keeps its own further batch dims.
  return rebuild(
    first,
    (node, path) => {
      const nodes = tds.map((t) => (path.length === 0 ? t : t.get(path)));
      nodes.forEach((n, i) => {
        if (!(n instanceof TensorDict) || !sameDims(n.batchSize, node.batchSize)) {
          const where = path.length === 0 ? "" : ` (at ${fmtKey(path)})`;
          const got = n instanceof TensorDict ? fmtBatchSize(n.batchSize) : String(n);
          throw new ShapeError(
            `${op}: stacking tensordicts requires them to have congruent batch sizes, got td[${i}].batchSize=${got} and td[0].batchSize=${fmtBatchSize(node.batchSize)}${where}`,
          );
        }
      });
      return [...node.batchSize.slice(0, d), tds.length, ...node.batchSize.slice(d)];
    },
    (_, path) => {
      const nts = nonTensorsAt(op, tds, path);
      if (nts !== undefined) return ntStack(op, nts, d);
      const xs = tensorsAt(op, tds, path);
      const x0 = xs[0]!;
      xs.forEach((x) => {
        if (!sameDims(x.batchShape, x0.batchShape) || !sameDims(x.baseShape, x0.baseShape)) {
          throw new ShapeError(
            `${op}: The shapes of the tensors to stack is incompatible: ${x.toString()} vs ${x0.toString()} for key ${fmtKey(path)}.`,
          );
        }
      });
      return stackTensors(xs, d);
    },
  );
}

/**
 * Concatenates TensorDicts along the existing batch dim `dim` (tensordict's
 * `torch.cat`, batch dims only). Key sets must be equal. Lazy stacks
 * concatenate their member lists along their stack dim, and member by member
 * along another dim (member counts must then match).
 */
export function catDicts(list: readonly TensorDict[], dim?: number): TensorDict;
export function catDicts(list: readonly LazyStackedTensorDict[], dim?: number): LazyStackedTensorDict;
export function catDicts(
  list: readonly (TensorDict | LazyStackedTensorDict)[],
  dim?: number,
): TensorDict | LazyStackedTensorDict;
export function catDicts(
  list: readonly (TensorDict | LazyStackedTensorDict)[],
  dim = 0,
): TensorDict | LazyStackedTensorDict {
  const op = "cat";
  const kind = checkKinds(op, list);
  const size0 = (list[0] as TensorDict | LazyStackedTensorDict).batchSize;
  const rank = size0.length;
  const d = dim < 0 ? dim + rank : dim;
  if (!Number.isInteger(d) || d < 0 || d >= rank) {
    throw new ShapeError(
      `${op}: dim must be in the range 0 <= dim < len(batch_size), got dim=${d} and batch_size=${fmtBatchSize(size0)}`,
    );
  }
  if (kind === "lazy") {
    const lazies = list as readonly LazyStackedTensorDict[];
    const s = lazies[0]!.stackDim;
    if (d === s) {
      lazies.forEach((l, i) => {
        if (l.stackDim !== s)
          throw new ShapeError(
            `${op}: lazy stacks need the same stackDim, got item ${i} (stackDim ${l.stackDim}) and item 0 (stackDim ${s})`,
          );
      });
      return lazyStack(
        lazies.flatMap((l) => l.tensordicts),
        s,
      );
    }
    const inner = d < s ? d : d - 1;
    return new LazyStackedTensorDict(
      lazyMembers(op, lazies).map((group) => catDicts(group, inner)),
      s,
    );
  }
  const tds = list as readonly TensorDict[];
  const first = tds[0]!;
  const keys = keySet(first);
  tds.forEach((t, i) => {
    const k = keySet(t);
    if (k.length !== keys.length || k.some((x, j) => x !== keys[j]))
      throw new KeyError(
        `${op}: got keys ${fmtKeySet(first)} and ${fmtKeySet(t)} which are incompatible (td[0] and td[${i}])`,
      );
  });
  return rebuild(
    first,
    (node, path) => {
      const nodes = tds.map((t) => (path.length === 0 ? t : t.get(path)));
      nodes.forEach((n, i) => {
        if (
          !(n instanceof TensorDict) ||
          n.batchDim !== node.batchDim ||
          n.batchSize.some((s, j) => j !== d && s !== node.batchSize[j])
        ) {
          const got = n instanceof TensorDict ? fmtBatchSize(n.batchSize) : String(n);
          throw new ShapeError(
            `${op}: batch sizes must match except in dim ${d}, got td[${i}].batchSize=${got} and td[0].batchSize=${fmtBatchSize(node.batchSize)}${path.length === 0 ? "" : ` (at ${fmtKey(path)})`}`,
          );
        }
      });
      return node.batchSize.map((s, j) =>
        j === d ? nodes.reduce((a, n) => a + (n as TensorDict).batchSize[d]!, 0) : s,
      );
    },
    (_, path) => {
      const nts = nonTensorsAt(op, tds, path);
      return nts !== undefined ? ntCat(op, nts, d) : catTensors(tensorsAt(op, tds, path), d);
    },
  );
}

/**
 * Stacks densely when it can (same batch sizes, same keys, equal entry shapes
 * and no jagged entries), lazily otherwise (tensordict's `maybe_dense_stack`).
 * Batch sizes with different numbers of dims are an error either way:
 * `Lazy stacking of tensordicts requires them to have congruent batch dimensions`.
 */
export function maybeDenseStack(
  list: readonly (TensorDict | LazyStackedTensorDict)[],
  dim = 0,
): TensorDict | LazyStackedTensorDict {
  // Checks the list (kinds, ranks, dim), naming maybeDenseStack in its errors.
  const lazy = lazyStackAs("maybeDenseStack", list, dim) as LazyStackedTensorDict;
  const lazies = list.filter((t): t is LazyStackedTensorDict => t instanceof LazyStackedTensorDict);
  if (lazies.length === 0) return denselyStackable(list as readonly TensorDict[]) ? stackDicts(list, dim) : lazy;
  // Lazy stacks of the same structure (stack dim, member count) stack member by member and stay lazy
  // (tensordict); any other mix is a lazy stack of the items.
  const first = lazies[0]!;
  const same =
    lazies.length === list.length &&
    lazies.every((t) => t.stackDim === first.stackDim && t.tensordicts.length === first.tensordicts.length);
  if (!same) return lazy;
  const columns = first.tensordicts.map((_, m) => lazies.map((t) => t.tensordicts[m]!));
  const dense = columns.every((c) => c.every((t) => t instanceof TensorDict) && denselyStackable(c as TensorDict[]));
  return dense ? stackDicts(lazies, dim) : lazy;
}

/** Options of `padSequence` on TensorDicts; `returnMask` may name the mask entry (default "masks"). */
export interface PadDictsOptions extends Omit<PadSequenceOptions, "returnMask"> {
  /** Add the masks to the result: `true` as the entry "masks", or under the key given. */
  readonly returnMask?: boolean | NestedKey;
}

/** A bool mask `(B, *dims;)`, true on the `lengths[b]` kept positions of dim `p + 1`. */
function lengthMask(lengths: readonly number[], dims: readonly number[], p: number, left: boolean): Tensor {
  const maxLen = dims[p]!;
  const outer = dims.slice(0, p).reduce((a, b) => a * b, 1);
  const inner = dims.slice(p + 1).reduce((a, b) => a * b, 1);
  const mask = new Uint8Array(lengths.length * outer * maxLen * inner);
  lengths.forEach((len, b) => {
    const shift = left ? maxLen - len : 0;
    for (let o = 0; o < outer; o++) {
      const row = (b * outer + o) * maxLen;
      mask.fill(1, (row + shift) * inner, (row + shift + len) * inner);
    }
  });
  // A host tensor (uploaded on WebGPU, with a host copy), so unpadSequence can read it back there.
  return hostTensor(mask, [lengths.length, ...dims], dims.length + 1, "bool");
}

/**
 * Pads every entry along its batch dim `padDim` (counted on the entry; default
 * 0) to the longest, then stacks on a new dim 0 (tensordict's `pad_sequence`).
 * When `padDim` lies in the TensorDicts' batch dims, their batch sizes may
 * differ there and the result's batch size is `[B, …]` with the longest length
 * at `padDim + 1`; otherwise they must be equal and it is `[B, …batchSize]`.
 * With `returnMask`, a nested TensorDict of bool masks (one per entry, same
 * structure) under `"masks"` (or the key given): `(B, …batchSize;)` plus the
 * padded dim when it lies past the batch dims; true on the values, false on the padding.
 *
 * Errors: `padSequence: list_of_tensordicts cannot be empty`, and
 * `padSequence: pad_sequence failed for key "k": …` wrapping an entry's failure
 * (`Cannot pad scalars`, mismatched shapes, a key some TensorDict lacks).
 */
export function padDicts(list: readonly TensorDict[], options?: PadDictsOptions): TensorDict {
  const op = "padSequence";
  const opts: PadDictsOptions = optionsArg(op, options);
  if (list.length === 0) throw new ShapeError(`${op}: list cannot be empty (list_of_tensordicts cannot be empty)`);
  list.forEach((t, i) => {
    if (!(t instanceof TensorDict)) throw new ShapeError(`${op}: item ${i} is not a TensorDict`);
  });
  const first = list[0]!;
  const rank = first.batchDim;
  const padDim = opts.padDim ?? 0;
  const left = opts.paddingSide === "left";
  const maskKey =
    opts.returnMask === true
      ? "masks"
      : opts.returnMask === false || opts.returnMask === undefined
        ? undefined
        : opts.returnMask;
  if (maskKey !== undefined) keyPath(maskKey, `${op}: returnMask`);
  const masks = new Map<string, [readonly string[], Tensor]>();
  const padOne = (path: readonly string[]): Tensor => {
    try {
      const xs = list.map((t, i) => {
        const x = t.get(path);
        if (x === undefined) throw new KeyError(`td[${i}] has no such key`);
        if (!(x instanceof Tensor)) throw new ShapeError(`td[${i}]'s entry is ${x.toString()}, not a tensor`);
        return x;
      });
      const padded = padTensors(xs, {
        paddingValue: opts.paddingValue ?? 0,
        paddingSide: opts.paddingSide ?? "right",
        padDim,
        returnMask: false,
      });
      if (maskKey !== undefined) {
        const x0 = xs[0]!;
        const p = padDim < 0 ? padDim + x0.batchDim : padDim;
        const dims = x0.batchShape.slice(0, Math.max(rank, p + 1));
        dims[p] = Math.max(...xs.map((x) => x.batchShape[p]!));
        masks.set(pathId(path), [
          path,
          lengthMask(
            xs.map((x) => x.batchShape[p]!),
            dims,
            p,
            left,
          ),
        ]);
      }
      return padded;
    } catch (e) {
      const why = e instanceof Error ? e.message.replace(/^padSequence: /, "") : String(e);
      const Err = e instanceof KeyError ? KeyError : ShapeError;
      throw new Err(`${op}: pad_sequence failed for key ${fmtKey(path)}: ${why}`);
    }
  };
  // Each dict, nested ones too, gets [B, ...its batch size], with the longest length at padDim when padDim is one of its dims.
  const out = rebuild(
    first,
    (node, path) => {
      const nodes = list.map((t) => (path.length === 0 ? t : t.get(path)));
      const inBatch = padDim >= 0 && padDim < node.batchDim;
      nodes.forEach((n, i) => {
        const ok =
          n instanceof TensorDict &&
          n.batchDim === node.batchDim &&
          n.batchSize.every((s, j) => (inBatch && j === padDim) || s === node.batchSize[j]);
        if (!ok) {
          const got = n instanceof TensorDict ? fmtBatchSize(n.batchSize) : String(n);
          throw new ShapeError(
            `${op}: the tensordicts must have equal batch sizes except in padDim ${padDim}, got td[${i}].batchSize=${got} and td[0].batchSize=${fmtBatchSize(node.batchSize)}${path.length === 0 ? "" : ` (at ${fmtKey(path)})`}`,
          );
        }
      });
      const size = [...node.batchSize];
      if (inBatch) size[padDim] = Math.max(...nodes.map((n) => (n as TensorDict).batchSize[padDim]!));
      return [list.length, ...size];
    },
    (x, path) => {
      if (x instanceof JaggedTensor || isNonTensor(x))
        throw new ShapeError(
          `${op}: entry ${fmtKey(path)} is ${x instanceof JaggedTensor ? "jagged " : ""}${x.toString()}; only tensor entries can be padded`,
        );
      return padOne(path);
    },
  );
  for (const [path, mask] of masks.values()) out.set([...keyPath(maskKey!), ...path], mask);
  return out;
}

/**
 * Splits a padded TensorDict back into its members (tensordict's
 * `unpad_sequence`), a lazy stack. Each member keeps, along each entry's batch
 * dim `padDim`, the positions its mask marks (one contiguous run per row, so
 * either padding side works). Without `mask`, the masks come from the
 * `"masks"` entry (as `padSequence` with `returnMask` wrote them) and the
 * result has no `"masks"`; a bool `(B, maxL)` mask applies to every entry.
 */
export function unpadDicts(
  padded: TensorDict,
  mask?: Tensor,
  options?: { readonly padDim?: number; readonly maskKey?: NestedKey },
): LazyStackedTensorDict {
  const op = "unpadSequence";
  const opts: { readonly padDim?: number; readonly maskKey?: NestedKey } = optionsArg(op, options);
  if (mask !== undefined && !(mask instanceof Tensor))
    throw new DTypeError(`${op}: mask must be a Tensor, got ${describeValue(mask)}`);
  if (!(padded instanceof TensorDict)) throw new ShapeError(`${op}: padded must be a TensorDict`);
  if (padded.batchDim === 0)
    throw new ShapeError(`${op}: padded ${padded.toString()} needs a leading batch dim over its members`);
  const count = padded.batchSize[0]!;
  const maskKey = keyPath(opts.maskKey ?? "masks", op);
  const stored = mask === undefined ? padded.get(maskKey) : undefined;
  if (mask === undefined && !(stored instanceof TensorDict))
    throw new KeyError(`${op}: no mask given and padded has no ${fmtKey(maskKey)} TensorDict of masks`);
  const maskId = pathId(maskKey);
  // Without a mask argument, the masks entry is read, not unpadded.
  const inMasks = (path: readonly string[]) => mask === undefined && pathId(path.slice(0, maskKey.length)) === maskId;
  const pieces = new Map<string, [readonly string[], Tensor[]]>();
  for (const [path, x] of tensorLeaves(op, padded)) {
    if (inMasks(path)) continue;
    let m = mask;
    if (m === undefined) {
      const own = (stored as TensorDict).get(path);
      if (!(own instanceof Tensor)) throw new KeyError(`${op}: the masks have no entry for key ${fmtKey(path)}`);
      m = own;
    }
    let keep = m;
    // A mask over fewer batch dims than the entry (not the (B, maxL) form) applies along the entry's further dims as well.
    const p = (opts.padDim ?? 0) < 0 ? (opts.padDim ?? 0) + x.batchDim - 1 : (opts.padDim ?? 0);
    const short = sameDims(keep.shape, [count, x.batchShape[p + 1] ?? -1]);
    if (!short && keep.batchDim < x.batchDim && keep.baseDim === 0) {
      keep = keep
        .batchReshape([...keep.batchShape, ...x.batchShape.slice(keep.batchDim).map(() => 1)])
        .batchExpand(x.batchShape);
    }
    pieces.set(pathId(path), [path, unpadTensors(x, keep, { padDim: opts.padDim ?? 0 })]);
  }
  const members = Array.from({ length: count }, (_, i) =>
    rebuild(
      padded,
      // A dict's size in member i: its batch without the leading B, read off the first entry under it (its padded dim has this member's length).
      (node, path) => {
        const under = [...pieces.values()].find(
          ([p]) => pathId(p.slice(0, path.length)) === pathId(path) && !inMasks(p),
        );
        return under === undefined ? node.batchSize.slice(1) : under[1][i]!.batchShape.slice(0, node.batchDim - 1);
      },
      (_, path) => pieces.get(pathId(path))![1][i]!,
      (path) => !inMasks(path),
    ),
  );
  return new LazyStackedTensorDict(members, 0);
}
