/**
 * `TensorDict`: named tensors sharing leading batch dims (PyTorch's tensordict).
 *
 * A TensorDict has a `batchSize`, and every entry's batch shape starts with it.
 * An entry may have more batch dims of its own, and any base shape. Batch-dim
 * operations (`batchIndex`, `batchSlice`, `batchReshape`, `unbind`, …) act on
 * those shared dims of every entry at once. Entries are tensors, nested
 * TensorDicts (same leading batch dims) or, as `densify()` makes them, jagged
 * tensors.
 *
 * The dict itself is mutable (`set`, `delete`), as tensordict's is; the tensors
 * in it are immutable, as every batchwise tensor is. `get` of a missing key
 * returns `undefined` (tensordict's `get` returns None since v0.7); `getTensor`
 * and `getDict` throw a `KeyError` instead and narrow the type.
 */
import { DTypeError, KeyError, ShapeError } from "../../ir/errors.js";
import { registerDictArgKind } from "../args.js";
import { full } from "../creation.js";
import { describeValue, optionsArg } from "../ragged/check.js";
import { JaggedTensor } from "../ragged/jagged.js";
import { cat } from "../ragged/sequence.js";
import { Tensor } from "../tensor.js";
import { defineInspect } from "../format.js";
import type { NonTensor, NonTensorData, NonTensorStack } from "./nontensor.js";
import { installTensorDictApi } from "./api.js";

/**
 * Non-tensor entries carry the registered symbol `batchwise.nonTensor` ("data"
 * or "stack"; see nontensor.ts): checked here without importing their module, so
 * the lean runtime entry, which holds TensorDicts but no non-tensor data, does
 * not carry it.
 */
const NON_TENSOR = Symbol.for("batchwise.nonTensor");

/** Whether `v` is a NonTensorData or a NonTensorStack (whose batch ops have TensorDict's names and meanings). */
function isNonTensor(v: unknown): v is NonTensor {
  return typeof v === "object" && v !== null && NON_TENSOR in v;
}

/** A key, or the path of keys to a nested entry: `"obs"` or `["agent", "obs"]`. */
export type NestedKey = string | readonly string[];

/** What a TensorDict holds: tensors, jagged tensors, nested dicts and non-tensor entries. */
export type TensorDictValue = Tensor | JaggedTensor | TensorDict | NonTensorData | NonTensorStack;

/** A TensorDict entry that is not a nested dict. */
export type TensorDictLeaf = Tensor | JaggedTensor | NonTensorData | NonTensorStack;

/** A nested plain object of entries: inner objects become nested TensorDicts with the same batch size. */
export interface TensorDictSource {
  readonly [key: string]: TensorDictValue | TensorDictSource;
}

/** `[2, 3]` as tensordict prints a batch size. */
export function fmtBatchSize(size: readonly number[]): string {
  return `[${size.join(", ")}]`;
}

/**
 * The path of a key. Anything but a string or a non-empty array of strings is a
 * `KeyError` naming `op` (keys are strings, as tensordict's are).
 */
export function keyPath(key: NestedKey, op = "TensorDict"): readonly string[] {
  if (typeof key === "string") return [key];
  if (!Array.isArray(key))
    throw new KeyError(`${op}: a key must be a string or an array of strings, got ${describeValue(key)}`);
  if (key.length === 0) throw new KeyError(`${op}: an empty key path names no entry`);
  for (let i = 0; i < key.length; i++) {
    if (typeof key[i] !== "string")
      throw new KeyError(`${op}: key path entry ${i} must be a string, got ${describeValue(key[i])}`);
  }
  return key;
}

/** `"a"`, or a nested path as `("a", "b")`. */
export function fmtKey(key: NestedKey): string {
  if (typeof key === "string" || key.length === 1) return JSON.stringify(typeof key === "string" ? key : key[0]);
  return `(${key.map((k) => JSON.stringify(k)).join(", ")})`;
}

/** The batch dims of an entry as TensorDict checks see them (a jagged tensor's ragged dim is NaN: it equals no size). */
export function entryBatch(v: TensorDictValue): readonly number[] {
  if (v instanceof TensorDict) return v.batchSize;
  if (v instanceof JaggedTensor) return [v.rows, Number.NaN];
  if (isNonTensor(v)) return v.batchSize;
  return v.batchShape;
}

/** An entry's shape in `(batch; base)` notation, for error messages. */
export function describe(v: TensorDictValue): string {
  if (v instanceof TensorDict) return `TensorDict(batchSize=${fmtBatchSize(v.batchSize)})`;
  return v.toString();
}

/** Sizes are >= 0, or -1 for a symbolic size inside `jit` (as `Tensor.batchShape` shows them there). */
function checkBatchSize(op: string, size: readonly number[], what = "batchSize"): void {
  if (!Array.isArray(size))
    throw new ShapeError(`${op}: ${what} must be an array of sizes, got ${describeValue(size)}`);
  for (const d of size) {
    if (!Number.isInteger(d) || d < -1)
      throw new ShapeError(
        `${op}: batchSize ${fmtBatchSize(size)} must hold sizes >= 0 (or -1 for a symbolic size inside jit)`,
      );
  }
}

/** A plain object (or one without a prototype) of entries; class instances and arrays are not. */
function isSource(v: unknown): v is TensorDictSource {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Sources being read by a constructor now: one met again is a cycle. */
const reading = new Set<object>();
/** How deep plain-object sources may nest. */
const MAX_SOURCE_DEPTH = 1000;

/** Normalizes a batch dim of a TensorDict of rank `rank` (negative counts from the end). */
export function normDim(op: string, dim: number, rank: number): number {
  const d = dim < 0 ? dim + rank : dim;
  if (!Number.isInteger(d) || d < 0 || d >= rank)
    throw new ShapeError(`${op}: dim ${dim} is out of range for batchSize of ${rank} dims`);
  return d;
}

/**
 * Normalizes the position `dim` of a new batch dim in front of batch size `size`
 * (negative counts from the end, `-1` after the last dim, as `torch.stack`'s dim).
 */
export function newDim(op: string, dim: number, size: readonly number[]): number {
  const d = dim < 0 ? dim + size.length + 1 : dim;
  if (!Number.isInteger(d) || d < 0 || d > size.length)
    throw new ShapeError(`${op}: dim ${dim} is out of range for a new dim of batchSize ${fmtBatchSize(size)}`);
  return d;
}

/**
 * A TensorDict shaped like `template`: each dict (the root and nested ones) gets
 * the batch size `size(dict, path)`, each tensor or jagged entry `leaf(entry,
 * path)`; entries whose path `keep` rejects are left out.
 */
export function rebuild(
  template: TensorDict,
  size: (td: TensorDict, path: readonly string[]) => readonly number[],
  leaf: (x: TensorDictLeaf, path: readonly string[]) => TensorDictValue,
  keep: (path: readonly string[]) => boolean = () => true,
  path: readonly string[] = [],
): TensorDict {
  const out = new TensorDict({}, size(template, path));
  for (const [k, v] of template.entries()) {
    const p = [...path, k];
    if (!keep(p)) continue;
    out.set(k, v instanceof TensorDict ? rebuild(v, size, leaf, keep, p) : leaf(v, p));
  }
  return out;
}

function checkSeparator(op: string, separator: unknown): void {
  if (typeof separator !== "string" || separator.length === 0)
    throw new KeyError(`${op}: separator must be a non-empty string, got ${describeValue(separator)}`);
}

/**
 * Named tensors sharing leading batch dims (PyTorch's tensordict): every entry's
 * batch shape starts with the dict's `batchSize`. Entries are tensors, nested
 * TensorDicts or jagged tensors, any base shape; batch-dim operations
 * (`batchIndex`, `batchSlice`, `batchReshape`, `unbind`, …) act on the shared dims
 * of every entry at once. The dict is mutable (`set`, `delete`); its tensors are
 * not. TensorDicts are `jit` arguments and results like tensors.
 *
 * @example
 * ```ts
 * const td = new TensorDict({ obs: zeros([4], [3]), reward: zeros([4], []) }, [4]);
 * td.batchIndex(0, 2).getTensor("obs").toString(); // "(;3)"
 * ```
 */
export class TensorDict {
  /** The leading batch dims every entry shares. */
  readonly batchSize: readonly number[];
  private readonly entries_ = new Map<string, TensorDictValue>();

  /**
   * ```ts
   * const td = new TensorDict({ obs: zeros([4, 10], [3]), reward: zeros([4], []) }, [4]);
   * td.toString(); // TensorDict(batchSize=[4]) { obs: (4,10; 3) float32, reward: (4;) float32 }
   * ```
   * `batchSize` defaults to `[]`. Throws tensordict's
   * `batch dimension mismatch` (a `ShapeError`) for an entry whose batch shape
   * does not start with `batchSize`.
   */
  constructor(source: TensorDictSource = {}, batchSize: readonly number[] = []) {
    if (!isSource(source))
      throw new ShapeError(`TensorDict: source must be a plain object of entries, got ${describeValue(source)}`);
    checkBatchSize("TensorDict", batchSize);
    this.batchSize = Object.freeze([...batchSize]);
    if (reading.size >= MAX_SOURCE_DEPTH)
      throw new ShapeError(`TensorDict: the source nests plain objects more than ${MAX_SOURCE_DEPTH} levels deep`);
    reading.add(source);
    try {
      for (const [k, v] of Object.entries(source)) {
        if (typeof v === "object" && v !== null && reading.has(v))
          throw new ShapeError(
            `TensorDict: the source is cyclic: entry ${JSON.stringify(k)} contains an object it is inside of`,
          );
        this.set(k, v);
      }
    } finally {
      reading.delete(source);
    }
  }

  /** Number of shared batch dims. */
  get batchDim(): number {
    return this.batchSize.length;
  }

  /** Top-level keys in insertion order; with `includeNested`, the paths of nested entries too (`leavesOnly` drops the dicts). */
  keys(options?: { readonly includeNested?: boolean; readonly leavesOnly?: boolean }): NestedKey[] {
    const opts = optionsArg("TensorDict.keys", options);
    const out: NestedKey[] = [];
    for (const [k, v] of this.entries_) {
      const isDict = v instanceof TensorDict;
      if (!(opts.leavesOnly && isDict)) out.push(k);
      if (isDict && opts.includeNested) for (const sub of v.keys(opts)) out.push([k, ...keyPath(sub)]);
    }
    return out;
  }

  /** The top-level entries, in insertion order. */
  entries(): [string, TensorDictValue][] {
    return [...this.entries_];
  }

  /** Every entry that is not a nested dict (tensors, jagged tensors, non-tensor data) with its path, depth first. */
  leaves(): [readonly string[], TensorDictLeaf][] {
    const out: [readonly string[], TensorDictLeaf][] = [];
    for (const [k, v] of this.entries_) {
      if (v instanceof TensorDict) for (const [p, leaf] of v.leaves()) out.push([[k, ...p], leaf]);
      else out.push([[k], v]);
    }
    return out;
  }

  /** True if the dict has an entry at `key` (a nested key is a path of names). */
  has(key: NestedKey): boolean {
    keyPath(key, "TensorDict.has");
    return this.get(key) !== undefined;
  }

  /** The entry at `key`, or `undefined`. */
  get(key: NestedKey): TensorDictValue | undefined {
    let node: TensorDictValue | undefined = this;
    for (const k of keyPath(key, "TensorDict.get")) {
      if (!(node instanceof TensorDict)) return undefined;
      node = node.entries_.get(k);
    }
    return node;
  }

  /** The tensor at `key`; a `KeyError` when there is none (or the entry is a dict or jagged). */
  getTensor(key: NestedKey): Tensor {
    return this.getAs("TensorDict.getTensor", key, (v) => v instanceof Tensor, "a tensor");
  }

  /** The nested TensorDict at `key`; a `KeyError` when there is none. */
  getDict(key: NestedKey): TensorDict {
    return this.getAs("TensorDict.getDict", key, (v) => v instanceof TensorDict, "a TensorDict");
  }

  /** The entry at `key` when `is` accepts it; a `KeyError` of `op` naming the keys when there is none, or `what` it is not. */
  private getAs<T extends TensorDictValue>(
    op: string,
    key: NestedKey,
    is: (v: TensorDictValue) => v is T,
    what: string,
  ): T {
    keyPath(key, op);
    const v = this.get(key);
    if (v !== undefined && is(v)) return v;
    throw new KeyError(
      v === undefined
        ? `${op}: no key ${fmtKey(key)} (keys: ${this.keys().map(fmtKey).join(", ")})`
        : `${op}: ${fmtKey(key)} is ${describe(v)}, not ${what}`,
    );
  }

  /**
   * Sets (or replaces) an entry; a nested path creates the dicts on the way,
   * with this batch size. A plain object becomes a nested TensorDict. Returns `this`.
   */
  set(key: NestedKey, value: TensorDictValue | TensorDictSource): this {
    const path = keyPath(key, "TensorDict.set");
    let node: TensorDict = this;
    for (const k of path.slice(0, -1)) {
      const next = node.entries_.get(k);
      if (next === undefined) {
        const made = new TensorDict({}, node.batchSize);
        node.entries_.set(k, made);
        node = made;
      } else if (next instanceof TensorDict) node = next;
      else
        throw new KeyError(
          `TensorDict.set: ${fmtKey(path)} goes through ${JSON.stringify(k)}, which is ${describe(next)}, not a TensorDict`,
        );
    }
    const v = isSource(value) ? new TensorDict(value, node.batchSize) : value;
    node.checkEntry("TensorDict.set", path, v);
    node.entries_.set(path[path.length - 1]!, v);
    return this;
  }

  /** Removes an entry; returns whether it was there. */
  delete(key: NestedKey): boolean {
    const path = keyPath(key, "TensorDict.delete");
    const parent = path.length === 1 ? this : this.get(path.slice(0, -1));
    return parent instanceof TensorDict && parent.entries_.delete(path[path.length - 1]!);
  }

  private checkEntry(op: string, path: readonly string[], v: TensorDictValue): void {
    if (!(v instanceof Tensor || v instanceof JaggedTensor || v instanceof TensorDict || isNonTensor(v))) {
      throw new ShapeError(
        `${op}: ${fmtKey(path)} must be a Tensor, a JaggedTensor, a TensorDict or a plain object of them, got ${describeValue(v)}`,
      );
    }
    const batch = entryBatch(v);
    const size = this.batchSize;
    if (batch.length < size.length || size.some((d, i) => batch[i] !== d)) {
      throw new ShapeError(
        `${op}: batch dimension mismatch, got batchSize=${fmtBatchSize(size)} and ${fmtKey(path)} ${describe(v)}`,
      );
    }
  }

  /** A new TensorDict with the same entries (tensors are immutable, so they are shared). */
  clone(): TensorDict {
    return this.mapEntries(this.batchSize, (v) => (v instanceof TensorDict ? v.clone() : v));
  }

  /** A new TensorDict with only these entries (nested paths keep their dicts on the way); a missing key is a `KeyError`. */
  select(...keys: NestedKey[]): TensorDict {
    const out = new TensorDict({}, this.batchSize);
    for (const key of keys) {
      const path = keyPath(key, "TensorDict.select");
      const v = this.get(path);
      if (v === undefined)
        throw new KeyError(`TensorDict.select: no key ${fmtKey(path)} (keys: ${this.keys().map(fmtKey).join(", ")})`);
      // Recreate the dicts on the way with their own batch sizes.
      for (let i = 1; i < path.length; i++) {
        if (!out.has(path.slice(0, i)))
          out.set(path.slice(0, i), new TensorDict({}, (this.get(path.slice(0, i)) as TensorDict).batchSize));
      }
      out.set(path, v instanceof TensorDict ? v.clone() : v);
    }
    return out;
  }

  /** A new TensorDict without these entries (missing keys are ignored, as tensordict's `exclude` does). */
  exclude(...keys: NestedKey[]): TensorDict {
    for (const key of keys) keyPath(key, "TensorDict.exclude");
    const out = this.clone();
    for (const key of keys) out.delete(key);
    return out;
  }

  /**
   * Sets every entry of `other` (a TensorDict or a plain object of entries) in
   * this one, nested dicts merged key by key; returns `this` (tensordict's `update`).
   */
  update(other: TensorDict | TensorDictSource): this {
    const src = other instanceof TensorDict ? other : new TensorDict(other, this.batchSize);
    for (const [path, v] of src.leaves()) {
      for (let i = 1; i < path.length; i++) {
        const at = path.slice(0, i);
        if (!this.has(at)) this.set(at, new TensorDict({}, (src.get(at) as TensorDict).batchSize));
      }
      this.set(path, v);
    }
    return this;
  }

  /** One level: nested entries become `"a.b"` keys (tensordict's `flatten_keys`). */
  flattenKeys(separator = "."): TensorDict {
    checkSeparator("TensorDict.flattenKeys", separator);
    const out = new TensorDict({}, this.batchSize);
    for (const [path, v] of this.leaves()) {
      const key = path.join(separator);
      if (out.has(key)) throw new KeyError(`TensorDict.flattenKeys: two entries flatten to ${JSON.stringify(key)}`);
      out.set(key, v);
    }
    return out;
  }

  /** The inverse of `flattenKeys`: `"a.b"` keys become nested dicts (with this batch size). */
  unflattenKeys(separator = "."): TensorDict {
    checkSeparator("TensorDict.unflattenKeys", separator);
    const out = new TensorDict({}, this.batchSize);
    for (const [k, v] of this.entries_) out.set(k.split(separator), v);
    return out;
  }

  /**
   * Splits shared batch dim `dim` into parts of `size` (the last may be
   * shorter), or of the given sizes, which must add up (torch's `split`).
   */
  split(size: number | readonly number[], dim = 0): TensorDict[] {
    const op = "TensorDict.split";
    const d = normDim(op, dim, this.batchDim);
    const n = this.batchSize[d]!;
    if (n < 0)
      throw new ShapeError(`${op}: dim ${d} of batchSize ${fmtBatchSize(this.batchSize)} is symbolic (inside jit)`);
    let sizes: number[];
    if (typeof size === "number") {
      if (!Number.isInteger(size) || size <= 0)
        throw new ShapeError(`${op}: split size must be a positive integer, got ${size}`);
      sizes = Array.from({ length: Math.ceil(n / size) }, (_, i) => Math.min(size, n - i * size));
    } else if (Array.isArray(size)) {
      sizes = [...size];
      if (sizes.some((s) => !Number.isInteger(s) || s < 0) || sizes.reduce((a, b) => a + b, 0) !== n) {
        throw new ShapeError(
          `${op}: split sizes [${sizes.join(", ")}] do not add up to dim ${d} of batchSize ${fmtBatchSize(this.batchSize)}`,
        );
      }
    } else {
      throw new ShapeError(`${op}: size must be a positive integer or an array of sizes, got ${describeValue(size)}`);
    }
    let at = 0;
    return sizes.map((s) => {
      const part = this.batchSlice(d, at, at + s);
      at += s;
      return part;
    });
  }

  /** The entries as a nested plain object. */
  toObject(): { [key: string]: TensorDictLeaf | ReturnType<TensorDict["toObject"]> } {
    // fromEntries defines own properties, so keys such as "__proto__" stay entries (an assignment would set the prototype).
    return Object.fromEntries([...this.entries_].map(([k, v]) => [k, v instanceof TensorDict ? v.toObject() : v]));
  }

  /**
   * `fn` on every tensor entry (nested ones too), keeping the structure. The
   * results must keep the batch size, or fit `opts.batchSize` when given.
   *
   * ```ts
   * td.apply((x) => x.mul(2));
   * ```
   */
  apply(
    fn: (x: Tensor, key: readonly string[]) => Tensor,
    options?: { readonly batchSize?: readonly number[] },
  ): TensorDict {
    if (typeof fn !== "function")
      throw new DTypeError(`TensorDict.apply: fn must be a function, got ${describeValue(fn)}`);
    const opts: { readonly batchSize?: readonly number[] } = optionsArg("TensorDict.apply", options);
    const size = opts.batchSize ?? this.batchSize;
    checkBatchSize("TensorDict.apply", size);
    // A nested dict keeps its batch dims past this one's.
    return rebuild(
      this,
      (td) => [...size, ...td.batchSize.slice(this.batchDim)],
      (v, path) => {
        if (v instanceof JaggedTensor)
          throw new ShapeError(`TensorDict.apply: ${fmtKey(path)} is jagged ${v.toString()}; apply maps tensors only`);
        // Non-tensor entries are kept (tensordict's apply maps tensors), spanning the new batch size.
        if (isNonTensor(v)) return v._resize("TensorDict.apply", [...size, ...v.batchSize.slice(this.batchDim)]);
        const r = fn(v, path);
        if (!(r instanceof Tensor))
          throw new DTypeError(
            `TensorDict.apply: fn must return a Tensor, got ${describeValue(r)} for ${fmtKey(path)} ${v.toString()}`,
          );
        if (r.batchDim < size.length || size.some((d, i) => r.batchShape[i] !== d)) {
          throw new ShapeError(
            `TensorDict.apply: batch dimension mismatch, fn returned ${r.toString()} for ${fmtKey(path)} ${v.toString()}, whose batch shape does not start with batchSize=${fmtBatchSize(size)}`,
          );
        }
        return r;
      },
    );
  }

  /** Maps every entry with `fn` into a new TensorDict of batch size `size`; `fn` sees nested dicts whole. */
  private mapEntries(size: readonly number[], fn: (v: TensorDictValue, key: string) => TensorDictValue): TensorDict {
    const out = new TensorDict({}, size);
    for (const [k, v] of this.entries_) {
      const r = fn(v, k);
      out.checkEntry("TensorDict", [k], r);
      out.entries_.set(k, r);
    }
    return out;
  }

  /**
   * Applies a batch-dim op to every entry. `tensorOp` gets each tensor and the
   * number of its batch dims past the shared ones (so reshapes can keep them).
   */
  private batchOp(
    op: string,
    size: readonly number[],
    tensorOp: (t: Tensor, extra: readonly number[]) => Tensor,
    dictOp: (td: TensorDict) => TensorDict,
  ): TensorDict {
    return this.mapEntries(size, (v, k) => {
      // Non-tensor entries have TensorDict's batch ops (same names, same meanings).
      if (v instanceof TensorDict || isNonTensor(v)) return dictOp(v as TensorDict);
      if (v instanceof JaggedTensor)
        throw new ShapeError(
          `${op}: entry ${JSON.stringify(k)} is jagged ${v.toString()}; batch-dim ops on jagged entries are not supported (index its rows with toList())`,
        );
      return tensorOp(v, v.batchShape.slice(this.batchDim));
    });
  }

  /** Selects index `i` of shared batch dim `dim` in every entry: that dim goes away. */
  batchIndex(dim: number, i: number): TensorDict {
    const op = "TensorDict.batchIndex";
    const d = normDim(op, dim, this.batchDim);
    const n = this.batchSize[d]!;
    // A symbolic size (inside jit) is checked by the tensors' own op at run time.
    const j = i < 0 && n >= 0 ? i + n : i;
    if (!Number.isInteger(j) || (n >= 0 && (j < 0 || j >= n)))
      throw new ShapeError(
        `${op}: index ${i} is out of range for dim ${d} of batchSize ${fmtBatchSize(this.batchSize)}`,
      );
    const size = this.batchSize.filter((_, k) => k !== d);
    return this.batchOp(
      op,
      size,
      (t) => t.batchIndex(d, j),
      (td) => td.batchIndex(d, j),
    );
  }

  /** `start:stop:step` of shared batch dim `dim` in every entry (Python slice rules, positive step). */
  batchSlice(dim: number, start = 0, stop?: number, step = 1): TensorDict {
    const op = "TensorDict.batchSlice";
    const d = normDim(op, dim, this.batchDim);
    if (!Number.isInteger(step) || step <= 0)
      throw new ShapeError(`${op}: step must be a positive integer, got ${describeValue(step)}`);
    if (!Number.isInteger(start)) throw new ShapeError(`${op}: start must be an integer, got ${describeValue(start)}`);
    if (stop !== undefined && !Number.isInteger(stop))
      throw new ShapeError(`${op}: stop must be an integer, got ${describeValue(stop)}`);
    const n = this.batchSize[d]!;
    if (n < 0) {
      // Symbolic inside jit: the tensors slice (and check) at run time; the size stays symbolic.
      const size = this.batchSize.map((s, k) => (k === d ? -1 : s));
      return this.batchOp(
        op,
        size,
        (t) => t.batchSlice(d, start, stop, step),
        (td) => td.batchSlice(d, start, stop, step),
      );
    }
    const clamp = (v: number) => Math.min(n, Math.max(0, v < 0 ? v + n : v));
    const a = clamp(start);
    const b = clamp(stop ?? n);
    const len = b > a ? Math.ceil((b - a) / step) : 0;
    const size = this.batchSize.map((s, k) => (k === d ? len : s));
    return this.batchOp(
      op,
      size,
      (t) => t.batchSlice(d, a, Math.max(a, b), step),
      (td) => td.batchSlice(d, a, Math.max(a, b), step),
    );
  }

  /** Reshapes the shared batch dims (one `-1` allowed); each entry keeps its own further batch dims. */
  batchReshape(shape: readonly number[]): TensorDict {
    const op = "TensorDict.batchReshape";
    if (!Array.isArray(shape))
      throw new ShapeError(`${op}: shape must be an array of sizes, got ${describeValue(shape)}`);
    if (this.batchSize.some((d) => d < 0))
      throw new ShapeError(
        `${op}: batchSize ${fmtBatchSize(this.batchSize)} has symbolic sizes (inside jit); reshape the tensors themselves`,
      );
    const total = this.batchSize.reduce((a, b) => a * b, 1);
    const known = shape.filter((s) => s !== -1).reduce((a, b) => a * b, 1);
    const holes = shape.filter((s) => s === -1).length;
    const bad =
      shape.some((s) => !Number.isInteger(s) || s < -1) ||
      holes > 1 ||
      (holes === 1 ? known === 0 || total % known !== 0 : known !== total);
    if (bad)
      throw new ShapeError(`${op}: cannot reshape batchSize ${fmtBatchSize(this.batchSize)} to ${fmtBatchSize(shape)}`);
    const size = shape.map((s) => (s === -1 ? total / known : s));
    return this.batchOp(
      op,
      size,
      (t, extra) => t.batchReshape([...size, ...extra]),
      (td) => td.batchReshape([...size, ...td.batchSize.slice(this.batchDim)]),
    );
  }

  /** A new shared batch dim of size 1 at `dim` (0 ≤ dim ≤ batchDim; negative counts from the end). */
  batchUnsqueeze(dim: number): TensorDict {
    const d = dim < 0 ? dim + this.batchDim + 1 : dim;
    if (!Number.isInteger(d) || d < 0 || d > this.batchDim)
      throw new ShapeError(
        `TensorDict.batchUnsqueeze: dim ${dim} is out of range for batchSize ${fmtBatchSize(this.batchSize)}`,
      );
    const size = [...this.batchSize.slice(0, d), 1, ...this.batchSize.slice(d)];
    return this.batchOp(
      "TensorDict.batchUnsqueeze",
      size,
      (t) => t.batchUnsqueeze(d),
      (td) => td.batchUnsqueeze(d),
    );
  }

  /** Removes shared batch dim `dim`, which must have size 1. */
  batchSqueeze(dim: number): TensorDict {
    const op = "TensorDict.batchSqueeze";
    const d = normDim(op, dim, this.batchDim);
    if (this.batchSize[d] !== 1)
      throw new ShapeError(`${op}: dim ${d} of batchSize ${fmtBatchSize(this.batchSize)} is not 1`);
    return this.batchIndex(d, 0);
  }

  /** Broadcasts size-1 shared batch dims (and adds leading ones) up to `shape`, as `expand` does. */
  batchExpand(shape: readonly number[]): TensorDict {
    const op = "TensorDict.batchExpand";
    if (!Array.isArray(shape))
      throw new ShapeError(`${op}: shape must be an array of sizes, got ${describeValue(shape)}`);
    const lead = shape.length - this.batchDim;
    const ok = lead >= 0 && this.batchSize.every((s, k) => s === shape[lead + k] || s === 1);
    if (!ok)
      throw new ShapeError(`${op}: cannot expand batchSize ${fmtBatchSize(this.batchSize)} to ${fmtBatchSize(shape)}`);
    checkBatchSize(op, shape);
    return this.batchOp(
      op,
      shape,
      (t, extra) => t.batchExpand([...shape, ...extra]),
      (td) => td.batchExpand([...shape, ...td.batchSize.slice(this.batchDim)]),
    );
  }

  /**
   * Pads the shared batch dims with `value` (tensordict's `pad`): `padSize` is
   * `[dim0 before, dim0 after, dim1 before, …]` from the first batch dim, and a
   * negative amount crops. A `(3,4)` batch padded with `[0, 1, 0, 2]` is `(4,6)`.
   * The value is cast to each entry's dtype.
   */
  pad(padSize: readonly number[], value = 0): TensorDict {
    const op = "TensorDict.pad";
    if (!Array.isArray(padSize))
      throw new ShapeError(`${op}: pad_size must be an array of integers, got ${describeValue(padSize)}`);
    if (typeof value !== "number" && typeof value !== "boolean")
      throw new DTypeError(`${op}: value must be a number, got ${describeValue(value)}`);
    if (padSize.length % 2 !== 0)
      throw new ShapeError(`${op}: pad_size must have an even number of dimensions, got ${padSize.length} entries`);
    if (padSize.length > 2 * this.batchDim) {
      throw new ShapeError(
        `${op}: The length of pad_size must be <= 2 * the number of batch dimensions, got ${padSize.length} for batchSize ${fmtBatchSize(this.batchSize)}`,
      );
    }
    if (padSize.some((p) => !Number.isInteger(p)))
      throw new ShapeError(`${op}: pad_size must hold integers, got [${padSize.join(", ")}]`);
    const size = this.batchSize.map((s, k) => (2 * k < padSize.length ? s + padSize[2 * k]! + padSize[2 * k + 1]! : s));
    if (this.batchSize.some((s) => s < 0))
      throw new ShapeError(
        `${op}: batchSize ${fmtBatchSize(this.batchSize)} has symbolic sizes (inside jit); pad needs known sizes`,
      );
    if (size.some((s) => s < 0))
      throw new ShapeError(
        `${op}: pad_size [${padSize.join(", ")}] crops batchSize ${fmtBatchSize(this.batchSize)} below zero`,
      );
    const padOne = (x: Tensor): Tensor => {
      let y = x;
      for (let k = 0; 2 * k < padSize.length; k++) {
        const before = padSize[2 * k]!;
        const after = padSize[2 * k + 1]!;
        if (before < 0 || after < 0) y = y.batchSlice(k, Math.max(0, -before), y.batchShape[k]! - Math.max(0, -after));
        const block = (n: number) =>
          full(
            y.batchShape.map((s, j) => (j === k ? n : s)),
            y.baseShape,
            value,
            { dtype: y.dtype },
          );
        const parts = [...(before > 0 ? [block(before)] : []), y, ...(after > 0 ? [block(after)] : [])];
        if (parts.length > 1) y = cat(parts, k);
      }
      return y;
    };
    return rebuild(
      this,
      (td) => [...size, ...td.batchSize.slice(this.batchDim)],
      (x, path) => {
        if (x instanceof JaggedTensor)
          throw new ShapeError(`${op}: entry ${fmtKey(path)} is jagged ${x.toString()}; pad takes tensor entries`);
        if (isNonTensor(x)) return x.pad(padSize, value);
        return padOne(x);
      },
    );
  }

  /** The TensorDicts along shared batch dim `dim` (tensordict's `unbind`). */
  unbind(dim = 0): TensorDict[] {
    const d = normDim("TensorDict.unbind", dim, this.batchDim);
    if (this.batchSize[d]! < 0)
      throw new ShapeError(
        `TensorDict.unbind: dim ${d} of batchSize ${fmtBatchSize(this.batchSize)} is symbolic (inside jit), so the number of parts is unknown`,
      );
    return Array.from({ length: this.batchSize[d]! }, (_, i) => this.batchIndex(d, i));
  }

  /** `TensorDict(batchSize=[4]) { obs: (4,10; 3) float32, … }`, nested dicts inline. */
  toString(): string {
    const parts = [...this.entries_].map(
      ([k, v]) =>
        `${k}: ${v instanceof TensorDict || isNonTensor(v) ? v.toString() : `${v.toString()} ${v.dtype}${v instanceof JaggedTensor ? " jagged" : ""}`}`,
    );
    return `TensorDict(batchSize=${fmtBatchSize(this.batchSize)}) { ${parts.join(", ")} }`;
  }
}

// Node's util.inspect (console.log(td)): toString(), not the internals.
defineInspect(TensorDict, (td) => td.toString());

// setAt, setNonTensor, getNonTensor, toPaddedTensor and booleanMask (src/tensordict/api.ts): installed by
// the class's own module, so that they come with the class in every page and entry that has it (a bundler keeps
// a module's statements when it keeps the module: one that has TensorDict has this), and a page without
// TensorDict carries none of it.
installTensorDictApi();

// Compiled functions and bundles take and return TensorDicts once this module is loaded (src/args.ts).
registerDictArgKind({
  is: (a): a is TensorDict => a instanceof TensorDict,
  make: (size, entries) => {
    const td = new TensorDict({}, size);
    // The entries are what unflatten rebuilt from a TensorDict's own flattening: tensors, jagged tensors, dicts.
    for (const [key, v] of entries) td.set(key, v as TensorDictValue);
    return td;
  },
  entryBatch,
});
