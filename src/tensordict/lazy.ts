/**
 * Lazy stacks of TensorDicts (tensordict's `LazyStackedTensorDict`,
 * `lazy_stack`, `maybe_dense_stack`, `densify`).
 *
 * A lazy stack copies nothing: it holds its members and the dim they are
 * stacked on. Members must have the same number of batch dims; where their
 * sizes differ, the stack's `batchSize` says `-1` (a ragged dim). Its keys are
 * the keys every member has. `get` stacks one entry on demand, densely when the
 * members' entries have equal shapes, or as a list, a padded tensor or a jagged
 * tensor when asked.
 */
import { DTypeError, ShapeError, UnsupportedOpError } from "../../ir/errors.js";
import { describeValue, optionsArg } from "../ragged/check.js";
import { jagged } from "../ragged/build.js";
import { JaggedTensor } from "../ragged/jagged.js";
import { padSequence, stack as stackTensors } from "../ragged/sequence.js";
import { Tensor } from "../tensor.js";
import { isNonTensor, NonTensorData, NonTensorStack, ntIndex, ntStack, type NonTensor } from "./nontensor.js";
import { stackDicts } from "./ops.js";
import { full } from "../creation.js";

/** An entry for messages: a tensor's shape, a dict's batch size, a list's length. */
function describeAny(v: unknown): string {
  if (v instanceof LazyStackedTensorDict) return `LazyStackedTensorDict(batchSize=${fmtBatchSize(v.batchSize)})`;
  if (Array.isArray(v)) return `a list of ${v.length}`;
  return describe(v as TensorDictValue);
}
import {
  describe,
  entryBatch,
  fmtBatchSize,
  fmtKey,
  keyPath,
  newDim,
  normDim,
  TensorDict,
  type NestedKey,
  type TensorDictValue,
} from "./tensordict.js";

/** How `get` returns an entry whose member shapes differ (tensordict's `as_list`, `as_padded_tensor`, `as_nested_tensor`). */
export interface LazyGetOptions {
  /** The members' entries as an array. */
  readonly asList?: boolean;
  /** `padSequence` of the members' entries along their dim 0, stacked on a new dim 0. */
  readonly asPaddedTensor?: boolean;
  /** A `JaggedTensor` whose rows are the members' entries (tensordict's nested tensors; the ragged dim is each entry's dim 0). */
  readonly asJagged?: boolean;
  /** For `asPaddedTensor` (default 0). */
  readonly paddingValue?: number;
  /** For `asPaddedTensor` (default "right"). */
  readonly paddingSide?: "right" | "left";
}

function sameDims(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/** `[3]` and `[4]` stacked at 0 give `[2, -1]`. */
function stackedSize(sizes: readonly (readonly number[])[], dim: number): number[] {
  const first = sizes[0]!;
  const merged = first.map((d, j) => (sizes.every((s) => s[j] === d) ? d : -1));
  return [...merged.slice(0, dim), sizes.length, ...merged.slice(dim)];
}

/** What a lazy stack holds: TensorDicts, or lazy stacks (of lazy stacks, …). */
export type LazyMember = TensorDict | LazyStackedTensorDict<LazyMember>;

/**
 * A stack of TensorDicts that copies nothing (tensordict's
 * `LazyStackedTensorDict`, made by `lazyStack`): it holds its members and the dim
 * they are stacked on, and where their sizes differ its `batchSize` reads `-1`.
 * Its keys are those every member has; `get` stacks one entry on demand, densely
 * when the members' entries have equal shapes, else as a list, a padded tensor or
 * a jagged tensor when asked.
 */
export class LazyStackedTensorDict<M extends LazyMember = TensorDict> {
  /** The members, in stack order (no copies); a member may itself be a lazy stack. */
  readonly tensordicts: readonly M[];
  /** The batch dim the members are stacked on. */
  readonly stackDim: number;
  /** The members' batch sizes with the member count inserted at `stackDim`; `-1` where they differ. */
  readonly batchSize: readonly number[];

  /** Prefer `lazyStack(tds, dim)`, which checks its input. */
  constructor(tensordicts: readonly M[], stackDim: number) {
    this.tensordicts = Object.freeze([...tensordicts]);
    this.stackDim = stackDim;
    this.batchSize = Object.freeze(
      stackedSize(
        tensordicts.map((t) => t.batchSize),
        stackDim,
      ),
    );
  }

  /** Number of batch dims (the members' plus the stack dim). */
  get batchDim(): number {
    return this.batchSize.length;
  }

  /** Keys every member has (tensordict's intersection); `includeNested` as for `TensorDict.keys`. */
  keys(options?: { readonly includeNested?: boolean; readonly leavesOnly?: boolean }): NestedKey[] {
    const opts = optionsArg("LazyStackedTensorDict.keys", options);
    const all = this.tensordicts.map((t) => new Set(t.keys(opts).map((k) => JSON.stringify(keyPath(k)))));
    return this.tensordicts[0]!.keys(opts).filter((k) => all.every((s) => s.has(JSON.stringify(keyPath(k)))));
  }

  /** Keys some member lacks. */
  exclusiveKeys(): NestedKey[] {
    const shared = new Set(this.keys({ includeNested: true }).map((k) => JSON.stringify(keyPath(k))));
    const seen = new Map<string, NestedKey>();
    for (const t of this.tensordicts)
      for (const k of t.keys({ includeNested: true })) {
        const id = JSON.stringify(keyPath(k));
        if (!shared.has(id) && !seen.has(id)) seen.set(id, k);
      }
    return [...seen.values()];
  }

  /**
   * One entry across the members:
   * - nested dicts give a lazy stack of them;
   * - tensors of equal shapes give their dense stack at `stackDim`;
   * - otherwise one of `asList`, `asPaddedTensor`, `asJagged` must say what to
   *   return (with a flag, the members are padded or nested even if their shapes match);
   * - a key some member lacks gives `undefined`.
   *
   * ```ts
   * const ls = lazyStack([td3, td4]);        // batchSize [2, -1]
   * ls.get("x", { asPaddedTensor: true });  // (2, 4; …), padded with 0
   * ```
   */
  get(key: NestedKey, opts: LazyGetOptions & { readonly asList: true }): Tensor[] | undefined;
  get(key: NestedKey, opts: LazyGetOptions & { readonly asPaddedTensor: true }): Tensor | undefined;
  get(key: NestedKey, opts: LazyGetOptions & { readonly asJagged: true }): JaggedTensor | undefined;
  get(key: NestedKey, opts?: LazyGetOptions): TensorDictValue | LazyStackedTensorDict | Tensor[] | undefined;
  get(key: NestedKey, options?: LazyGetOptions): TensorDictValue | LazyStackedTensorDict | Tensor[] | undefined {
    keyPath(key, "LazyStackedTensorDict.get");
    const opts: LazyGetOptions = optionsArg("LazyStackedTensorDict.get", options);
    const flags = [opts.asList, opts.asPaddedTensor, opts.asJagged].filter((f) => f === true).length;
    if (flags > 1)
      throw new UnsupportedOpError("LazyStackedTensorDict.get: asList, asPaddedTensor and asJagged are exclusive.");
    const values = this.tensordicts.map((t) => t.get(key));
    if (values.some((v) => v === undefined)) return undefined;
    const present = values as (TensorDictValue | LazyStackedTensorDict | Tensor[])[];
    if (present.every((v) => v instanceof TensorDict || v instanceof LazyStackedTensorDict))
      // Typed as TensorDict members; in a lazy stack of lazy stacks some are lazy stacks themselves.
      return lazyStack(present as TensorDict[], this.stackDim);
    if (present.every(isNonTensor)) {
      const nts = present as NonTensor[];
      if (opts.asList === true) return nts as unknown as Tensor[];
      return ntStack("LazyStackedTensorDict.get", nts, this.stackDim);
    }
    const tensors = present.filter((v): v is Tensor => v instanceof Tensor);
    if (tensors.length !== present.length) {
      throw new ShapeError(
        `LazyStackedTensorDict.get: the members' entries ${fmtKey(key)} are not all tensors: ${present.map(describeAny).join(", ")}`,
      );
    }
    return stackAs("LazyStackedTensorDict.get", tensors, this.stackDim, opts, `Entry ${fmtKey(key)} has shapes`);
  }

  /** Member `i` (the member itself, not a copy). */
  member(i: number): M {
    const n = this.tensordicts.length;
    const j = i < 0 ? i + n : i;
    if (!Number.isInteger(j) || j < 0 || j >= n)
      throw new ShapeError(`LazyStackedTensorDict.member: index ${i} is out of range for ${n} members`);
    return this.tensordicts[j]!;
  }

  /** Index `i` of batch dim `dim`: along `stackDim`, that member; along another dim, a lazy stack of the members indexed there. */
  batchIndex(dim: number, i: number): M extends TensorDict ? TensorDict | LazyStackedTensorDict : LazyMember;
  batchIndex(dim: number, i: number): LazyMember {
    const op = "LazyStackedTensorDict.batchIndex";
    const d = normDim(op, dim, this.batchDim);
    if (d === this.stackDim) return this.member(i);
    const inner = d < this.stackDim ? d : d - 1;
    // A lazy member (a lazy stack of lazy stacks) indexes itself the same way.
    const members = this.tensordicts.map((t): LazyMember => (t as LazyMember).batchIndex(inner, i));
    return new LazyStackedTensorDict(members, d < this.stackDim ? this.stackDim - 1 : this.stackDim);
  }

  /** The members along the stack dim. */
  unbind(): M[] {
    return [...this.tensordicts];
  }

  /**
   * A TensorDict with the same entries (tensordict's `densify`). Entries of
   * equal shapes are stacked densely. Entries whose sizes differ become
   * `JaggedTensor`s (tensordict's nested tensors): only for `stackDim` 0, and
   * each member's entry must differ only in its dim 0. A key some member lacks
   * is filled with a zero-length row there. The result's batch size is the
   * stack's dims up to the first ragged one.
   */
  densify(): TensorDict {
    // Lazy members (lazy stacks of lazy stacks) densify first.
    return this.densifyLevel(
      this.tensordicts.map((t): TensorDict => (t instanceof LazyStackedTensorDict ? t.densify() : (t as TensorDict))),
      [],
    );
  }

  /** One level of `densify`: `nodes` are the members' dicts at `path` (undefined where a member lacks it). */
  private densifyLevel(nodes: readonly (TensorDict | undefined)[], path: readonly string[]): TensorDict {
    const op = "LazyStackedTensorDict.densify";
    const present = nodes.filter((n): n is TensorDict => n !== undefined);
    // Nested dicts may have further batch dims: each level has its own stacked size, up to its first ragged dim.
    const size = stackedSize(
      present.map((n) => n.batchSize),
      this.stackDim,
    );
    if (present.length < nodes.length) size[this.stackDim] = nodes.length;
    const ragged = size.indexOf(-1);
    const out = new TensorDict({}, ragged < 0 ? size : size.slice(0, ragged));
    const keys: string[] = [];
    for (const n of present) for (const k of n.keys()) if (!keys.includes(k as string)) keys.push(k as string);
    for (const k of keys) {
      const at = [...path, k];
      const values = nodes.map((n) => n?.get(k));
      const got = values.filter((v): v is TensorDictValue => v !== undefined);
      if (got.every((v) => v instanceof TensorDict)) {
        out.set(
          k,
          this.densifyLevel(
            values.map((v) => v as TensorDict | undefined),
            at,
          ),
        );
        continue;
      }
      if (got.some((v) => !(v instanceof Tensor))) {
        throw new UnsupportedOpError(
          `${op}: entry ${fmtKey(at)} is ${got.map(describe).join(", ")} across members; densify takes tensor entries (or dicts of them)`,
        );
      }
      const tensors = got as Tensor[];
      const first = tensors[0]!;
      const full = values.every((v) => v !== undefined);
      if (
        full &&
        tensors.every((t) => sameDims(t.batchShape, first.batchShape) && sameDims(t.baseShape, first.baseShape))
      ) {
        // Equal entries mean equal member batch sizes, so the stack has no ragged dim here.
        out.set(k, stackTensors(tensors, this.stackDim));
        continue;
      }
      if (this.stackDim !== 0)
        throw new UnsupportedOpError(
          `${op}: entry ${fmtKey(at)} differs across members, and only a stack along dim 0 densifies into jagged entries (stackDim is ${this.stackDim})`,
        );
      if (first.batchDim === 0) {
        throw new ShapeError(
          `${op}: Cannot densify a tensordict with values with empty shape and exclusive keys: entry ${fmtKey(at)} ${first.toString()}`,
        );
      }
      // A member without the key holds a zero-length row of the others' shape.
      const rows = values.map((v) => (v instanceof Tensor ? v : emptyLike(first)));
      const rest = (t: Tensor) => t.shape.slice(1);
      if (rows.some((t) => !sameDims(rest(t), rest(first)) || t.dtype !== first.dtype)) {
        throw new ShapeError(
          `${op}: entry ${fmtKey(at)} differs beyond its dim 0 across members (${rows.map((t) => t.toString()).join(", ")}); a jagged entry has one ragged dim`,
        );
      }
      out.set(k, jagged(rows));
    }
    return out;
  }

  // --- api: set with one value per member, toPaddedTensor ---

  /**
   * Sets `key` in every member (tensordict's `LazyStackedTensorDict.set`), in
   * place, as tensordict does; returns `this`. `value` gives one value per member:
   * an array of them (tensors, dicts, non-tensor entries; any other JS value
   * becomes that member's `NonTensorData`), or a tensor, TensorDict or
   * NonTensorStack that is split along `stackDim` (a NonTensorData goes to every
   * member). A count that is not the member count is tensordict's `lengths of
   * iterables differ.`; nothing is set when any member would refuse its value.
   *
   * ```ts
   * const ls = lazyStack([td3, td4]);                 // batchSize [2, -1]
   * ls.set("w", [zeros([3], []), zeros([4], [])]);     // ragged: one tensor per member
   * ls.set("label", ["walk", "run"]);                  // NonTensorData per member
   * ```
   */
  set(key: NestedKey, value: Tensor | TensorDict | NonTensorData | NonTensorStack | readonly unknown[]): this {
    const op = "LazyStackedTensorDict.set";
    keyPath(key, op);
    const n = this.tensordicts.length;
    const s = this.stackDim;
    const splitSize = (what: string, size: readonly number[]): void => {
      if (size.length <= s || size[s] !== n)
        throw new ShapeError(
          `${op}: lengths of iterables differ. ${what} has batch size ${fmtBatchSize(size)}, which must have the ${n} members at stackDim ${s}`,
        );
    };
    let values: unknown[];
    if (Array.isArray(value)) values = [...(value as readonly unknown[])];
    else if (value instanceof Tensor) {
      splitSize(`value ${value.toString()}`, value.batchShape);
      values = Array.from({ length: n }, (_, i) => value.batchIndex(s, i));
    } else if (value instanceof TensorDict) {
      splitSize("the TensorDict", value.batchSize);
      values = value.unbind(s);
    } else if (value instanceof NonTensorStack) {
      splitSize(value.toString(), value.batchSize);
      values = Array.from({ length: n }, (_, i) => ntIndex(value, s, i));
    } else if (value instanceof NonTensorData) {
      values = this.tensordicts.map((m) => value.withBatchSize(m.batchSize));
    } else
      throw new DTypeError(
        `${op}: value must be a Tensor, a TensorDict, non-tensor data or an array of one value per member, got ${describeValue(value)}`,
      );
    if (values.length !== n)
      throw new ShapeError(`${op}: lengths of iterables differ. Got ${values.length} values for ${n} members`);
    const items = values.map((v, i) => {
      const m = this.tensordicts[i]!;
      const known =
        v instanceof Tensor ||
        v instanceof TensorDict ||
        v instanceof JaggedTensor ||
        isNonTensor(v) ||
        (m instanceof LazyStackedTensorDict && Array.isArray(v)); // a lazy member splits an array itself
      return known || (typeof v === "object" && v !== null && Object.getPrototypeOf(v) === Object.prototype)
        ? v
        : new NonTensorData(v, m.batchSize);
    });
    // Every member checks its value on a copy first, so a refusal leaves the stack as it was.
    this.tensordicts.forEach((m, i) => {
      if (m instanceof TensorDict) m.clone().set(key, items[i] as TensorDictValue);
    });
    this.tensordicts.forEach((m, i) => {
      const member = m as LazyMember;
      if (member instanceof TensorDict) member.set(key, items[i] as TensorDictValue);
      else member.set(key, items[i] as Parameters<LazyStackedTensorDict["set"]>[1]);
    });
    return this;
  }

  /**
   * A TensorDict with the members padded to the largest size along each ragged
   * batch dim and stacked densely (tensordict's `to_padded_tensor` of a stack
   * whose batch size holds -1): batchSize `[2, -1]` with members `[3]` and `[4]`
   * gives `[2, 4]`, padded with `padding` (default 0). `maskKey` adds a bool entry
   * of the new batch size, true on the members' real elements (tensordict's text
   * when no dim is ragged). Lazy members are padded first.
   */
  toPaddedTensor(options?: { readonly padding?: number; readonly maskKey?: NestedKey }): TensorDict {
    const op = "LazyStackedTensorDict.toPaddedTensor";
    const opts: { readonly padding?: number; readonly maskKey?: NestedKey } = optionsArg(op, options);
    const padding = opts.padding ?? 0;
    if (typeof padding !== "number")
      throw new DTypeError(`${op}: padding must be a number, got ${describeValue(padding)}`);
    if (opts.maskKey !== undefined) {
      keyPath(opts.maskKey, op);
      if (!this.batchSize.includes(-1))
        throw new ShapeError(
          `${op}: mask_key should only be provided if the heterogenous dimension is part of the batch-size (batchSize ${fmtBatchSize(this.batchSize)})`,
        );
    }
    const members = this.tensordicts.map((t): TensorDict =>
      t instanceof LazyStackedTensorDict ? t.toPaddedTensor({ padding }) : (t as TensorDict),
    );
    const rank = members[0]!.batchDim;
    const max = Array.from({ length: rank }, (_, j) => Math.max(...members.map((m) => m.batchSize[j]!)));
    const pads = (m: TensorDict) => m.batchSize.flatMap((d, j) => [0, max[j]! - d]);
    const padded = members.map((m) => (pads(m).every((p) => p === 0) ? m : m.pad(pads(m), padding)));
    const out = stackDicts(padded, this.stackDim);
    if (opts.maskKey !== undefined) {
      const masks = members.map((m) =>
        new TensorDict({ m: full(m.batchSize, [], 1, { dtype: "bool" }) }, m.batchSize).pad(pads(m), 0).getTensor("m"),
      );
      out.set(opts.maskKey, stackTensors(masks, this.stackDim));
    }
    return out;
  }

  /** `LazyStackedTensorDict(batchSize=[2, -1], stackDim=0) [TensorDict(...), ...]`. */
  toString(): string {
    return `LazyStackedTensorDict(batchSize=${fmtBatchSize(this.batchSize)}, stackDim=${this.stackDim}) [${this.tensordicts.map((t) => t.toString()).join(", ")}]`;
  }
}

function emptyLike(t: Tensor): Tensor {
  return t.batchSlice(0, 0, 0);
}

/**
 * Stacks TensorDicts lazily on batch dim `dim` (tensordict's `lazy_stack`): no
 * copy, and member batch sizes may differ where they have the same number of
 * dims (those dims read `-1`). `strictShape` forbids that.
 *
 * ```ts
 * lazyStack([new TensorDict({ x }, [3]), new TensorDict({ x: y }, [4])]).batchSize; // [2, -1]
 * ```
 */
export function lazyStack(
  tds: readonly TensorDict[],
  dim?: number,
  options?: { readonly strictShape?: boolean },
): LazyStackedTensorDict;
export function lazyStack(
  tds: readonly LazyMember[],
  dim?: number,
  options?: { readonly strictShape?: boolean },
): LazyStackedTensorDict<LazyMember>;
export function lazyStack(
  tensors: readonly Tensor[],
  dim: number,
  options: LazyGetOptions & { readonly asList: true },
): Tensor[];
export function lazyStack(
  tensors: readonly Tensor[],
  dim: number,
  options: LazyGetOptions & { readonly asJagged: true },
): JaggedTensor;
export function lazyStack(tensors: readonly Tensor[], dim?: number, options?: LazyGetOptions): Tensor;
export function lazyStack(items: readonly NonTensor[], dim?: number): NonTensorStack;
export function lazyStack(
  tds: readonly (LazyMember | Tensor | NonTensor)[],
  dim = 0,
  options?: { readonly strictShape?: boolean } & LazyGetOptions,
): LazyStackedTensorDict<LazyMember> | Tensor | Tensor[] | JaggedTensor | NonTensorStack {
  return lazyStackAs("lazyStack", tds, dim, options);
}

/** `lazyStack` with errors naming `op`, the function the user called (`maybeDenseStack` uses it). */
export function lazyStackAs(
  op: string,
  tds: readonly (LazyMember | Tensor | NonTensor)[],
  dim = 0,
  options?: { readonly strictShape?: boolean } & LazyGetOptions,
): LazyStackedTensorDict<LazyMember> | Tensor | Tensor[] | JaggedTensor | NonTensorStack {
  const opts: { readonly strictShape?: boolean } & LazyGetOptions = optionsArg(op, options);
  if (!Array.isArray(tds))
    throw new DTypeError(`${op}: tds must be an array of TensorDicts, got ${describeValue(tds)}`);
  if (tds.length === 0) throw new ShapeError(`${op}: list cannot be empty`);
  if (tds.every((t) => t instanceof Tensor)) return lazyStackTensors(tds as readonly Tensor[], dim, opts);
  if (tds.every(isNonTensor)) {
    const r = tds[0]!.batchDim;
    const nd = dim < 0 ? dim + r + 1 : dim;
    if (!Number.isInteger(nd) || nd < 0 || nd > r)
      throw new ShapeError(`${op}: dim ${dim} is out of range for a new dim of ${r} dims`);
    return ntStack(op, tds as readonly NonTensor[], nd);
  }
  tds.forEach((t, i) => {
    if (!(t instanceof TensorDict || t instanceof LazyStackedTensorDict))
      throw new ShapeError(
        `${op}: item ${i} is not a TensorDict (got ${describeValue(t)}; a list of Tensors or of non-tensor data stacks too, but not a mix)`,
      );
  });
  const list = tds as readonly LazyMember[];
  const rank = list[0]!.batchDim;
  const d = newDim(op, dim, list[0]!.batchSize);
  list.forEach((t, i) => {
    if (t.batchDim !== rank) {
      throw new ShapeError(
        `${op}: Lazy stacking of tensordicts requires them to have congruent batch dimensions, got td[${i}].batchSize=${fmtBatchSize(t.batchSize)} and td[0].batchSize=${fmtBatchSize(list[0]!.batchSize)}`,
      );
    }
    if (opts.strictShape === true && !sameDims(t.batchSize, list[0]!.batchSize)) {
      throw new ShapeError(
        `${op}: batch sizes in tensordicts differs, LazyStackedTensorDict cannot be created. Got td[${i}].batchSize=${fmtBatchSize(t.batchSize)} and td[0].batchSize=${fmtBatchSize(list[0]!.batchSize)}`,
      );
    }
  });
  return new LazyStackedTensorDict(list, d);
}

/** Whether the TensorDicts can be stacked densely: same batch size, same keys, equal entry shapes and dtypes. */
export function denselyStackable(tds: readonly TensorDict[]): boolean {
  const first = tds[0]!;
  const firstLeaves = first.leaves();
  return tds.every((t) => {
    if (!sameDims(t.batchSize, first.batchSize)) return false;
    const leaves = t.leaves();
    if (leaves.length !== firstLeaves.length) return false;
    return firstLeaves.every(([p, v]) => {
      const w = t.get(p);
      if (w === undefined || w instanceof TensorDict || w instanceof JaggedTensor || v instanceof JaggedTensor)
        return false;
      if (isNonTensor(v) || isNonTensor(w))
        return isNonTensor(v) && isNonTensor(w) && sameDims(entryBatch(w), entryBatch(v));
      return sameDims(entryBatch(w), entryBatch(v)) && sameDims(w.baseShape, v.baseShape);
    });
  });
}

/**
 * `lazyStack` of plain tensors (tensordict's `lazy_stack` of tensors): their
 * dense stack on batch dim `dim` when their shapes agree, else, as asked, a
 * list (`asList`), a padded tensor (`asPaddedTensor`, padding along each
 * tensor's batch dim 0) or a jagged tensor (`asJagged`).
 */
function lazyStackTensors(
  tensors: readonly Tensor[],
  dim: number,
  opts: LazyGetOptions,
): Tensor | Tensor[] | JaggedTensor {
  const op = "lazyStack";
  const flags = [opts.asList, opts.asPaddedTensor, opts.asJagged].filter((f) => f === true).length;
  if (flags > 1) throw new UnsupportedOpError(`${op}: as_list, as_padded_tensor and as_nested_tensor are exclusive.`);
  return stackAs(op, tensors, dim, opts, "Got");
}

/**
 * `tensors` as `opts` asks: a list (`asList`), a padded tensor (`asPaddedTensor`,
 * padding along each tensor's batch dim 0) or a jagged tensor (`asJagged`); with
 * no flag, their dense stack on batch dim `dim`, and when their shapes differ a
 * ShapeError of `op` whose list of the shapes follows `shapesAre`.
 */
function stackAs(
  op: string,
  tensors: readonly Tensor[],
  dim: number,
  opts: LazyGetOptions,
  shapesAre: string,
): Tensor | Tensor[] | JaggedTensor {
  if (opts.asList === true) return [...tensors];
  if (opts.asPaddedTensor === true)
    return padSequence(tensors, {
      paddingValue: opts.paddingValue ?? 0,
      paddingSide: opts.paddingSide ?? "right",
      returnMask: false,
    });
  if (opts.asJagged === true) return jagged(tensors);
  const first = tensors[0]!;
  if (tensors.some((t) => !sameDims(t.batchShape, first.batchShape) || !sameDims(t.baseShape, first.baseShape)))
    throw new ShapeError(
      `${op}: Failed to stack tensors within a tensordict. You can use nested tensors, padded tensors or return lists via specialized keyword arguments (asJagged, asPaddedTensor, asList). ${shapesAre} ${tensors.map((t) => t.toString()).join(", ")}`,
    );
  return stackTensors(tensors, dim);
}
