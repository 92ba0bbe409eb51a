/**
 * TensorDict's row assignment (`setAt`), non-tensor entries (`setNonTensor`,
 * `getNonTensor`), `toPaddedTensor` and `booleanMask`: TensorDict methods,
 * installed on `TensorDict.prototype` by the class's own module
 * (src/tensordict/tensordict.ts calls `installTensorDictApi()`), so that every
 * page that has TensorDict has them (whichever entry it imports, whatever the
 * bundler shakes out) and a page without TensorDict carries none of this.
 */
import { DTypeError, KeyError, ShapeError, TraceError, UnsupportedOpError } from "../../ir/errors.js";
import { full } from "../creation.js";
import { describeValue, optionsArg } from "../ragged/check.js";
import { asCalled } from "../check.js";
import { JaggedTensor } from "../ragged/jagged.js";
import { cat } from "../ragged/sequence.js";
import { booleanMask, checkEager } from "../select/mask.js";
import { Tensor, where } from "../tensor.js";
import { isNonTensor, NonTensorData, NonTensorStack, ntIndex, ntSetAt, ntSlice, type NonTensor } from "./nontensor.js";
import {
  describe,
  entryBatch,
  fmtBatchSize,
  fmtKey,
  keyPath,
  rebuild,
  TensorDict,
  type NestedKey,
  type TensorDictSource,
  type TensorDictValue,
} from "./tensordict.js";

declare module "./tensordict.js" {
  interface TensorDict {
    /**
     * Stores a non-tensor value (a string, a label, any JS value) at `key` as a
     * `NonTensorData` spanning the batch of the dict it lands in (tensordict's
     * `set_non_tensor`); a nested path creates the dicts on the way. Returns `this`.
     */
    setNonTensor(key: NestedKey, value: unknown): this;

    /**
     * The value of a non-tensor entry (tensordict's `get_non_tensor`): a
     * `NonTensorData`'s value, or a `NonTensorStack`'s values as nested arrays. A
     * missing key or a tensor entry is a `KeyError`.
     */
    getNonTensor(key: NestedKey): unknown;

    /**
     * Row assignment as a new TensorDict (tensordict's `td[index] = sub`, which
     * batchwise's immutable tensors turn into a function; this dict is unchanged).
     * `index` picks along the leading batch dims: an integer, a slice
     * `{ start, stop, step }` (Python defaults) or an array of them. `value` is a
     * TensorDict (or a plain object of entries) whose batch size is the indexed
     * one, or broadcasts to it from the left; or a number written into every
     * tensor entry. Keys of `value` this dict lacks are created, zero elsewhere
     * (pre-allocation: `new TensorDict({}, [n]).setAt(i, row)`); keys it does not
     * name are kept. Values are cast to each entry's dtype.
     *
     * Runs as slices and batch concatenations, so it works inside `jit` for
     * non-negative integers and slices with explicit non-negative bounds and step 1.
     *
     * ```ts
     * const td = new TensorDict({ x: zeros([3], [2]) }, [3]);
     * td.setAt(1, { x: tensor([5, 6]) }).getTensor("x").toArraySync(); // [[0, 0], [5, 6], [0, 0]]
     * ```
     */
    setAt(
      index: BatchSelector | readonly BatchSelector[],
      value: TensorDict | TensorDictSource | number | boolean,
    ): TensorDict;

    /**
     * A TensorDict whose jagged entries are padded (tensordict's
     * `to_padded_tensor`): each `JaggedTensor` `(B, ~N; base)` becomes its
     * `(B, maxN; base)` padding with `padding` (default 0); other entries are
     * kept, and so is the batch size. `maskKey` is refused as tensordict refuses
     * it here: a TensorDict's ragged dim is never part of its batch size (a lazy
     * stack's is: see `LazyStackedTensorDict.toPaddedTensor`).
     */
    toPaddedTensor(options?: { readonly padding?: number; readonly maskKey?: NestedKey }): TensorDict;

    /**
     * The rows where the bool `mask` (a tensor over the leading shared batch dims,
     * no base dims) is true (tensordict's `td[mask]`): every entry is masked the same
     * way, the masked dims becoming one dim of the count of true values. Eager only
     * (the batch size is data): a TraceError inside `jit`. Synchronous on the JS
     * backend.
     *
     * ```ts
     * reads.booleanMask(reads.getTensor("gc").gt(0.4)).batchSize; // [2] (tensordict's non-tensor docs)
     * ```
     */
    booleanMask(mask: Tensor): TensorDict;
  }
}

function setNonTensor(this: TensorDict, key: NestedKey, value: unknown): TensorDict {
  const path = keyPath(key, "TensorDict.setNonTensor");
  let node: TensorDictValue | undefined = this;
  let size = this.batchSize;
  for (const k of path.slice(0, -1)) {
    node = node instanceof TensorDict ? node.get(k) : undefined;
    if (node instanceof TensorDict) size = node.batchSize;
    else break;
  }
  return this.set(path, new NonTensorData(value, size));
}

function getNonTensor(this: TensorDict, key: NestedKey): unknown {
  keyPath(key, "TensorDict.getNonTensor");
  const v = this.get(key);
  if (v instanceof NonTensorData) return v.data;
  if (v instanceof NonTensorStack) return v.tolist();
  throw new KeyError(
    v === undefined
      ? `TensorDict.getNonTensor: no key ${fmtKey(key)} (keys: ${this.keys().map(fmtKey).join(", ")})`
      : `TensorDict.getNonTensor: ${fmtKey(key)} is ${describe(v)}, not non-tensor data`,
  );
}

function setAt(
  this: TensorDict,
  index: BatchSelector | readonly BatchSelector[],
  value: TensorDict | TensorDictSource | number | boolean,
): TensorDict {
  // Errors of the ops it runs (cat, where, …) name TensorDict.setAt.
  return asCalled("TensorDict.setAt", () => setAtImpl(this, index, value));
}

function setAtImpl(
  self: TensorDict,
  index: BatchSelector | readonly BatchSelector[],
  value: TensorDict | TensorDictSource | number | boolean,
): TensorDict {
  const op = "TensorDict.setAt";
  const sels = normSelectors(op, index, self.batchSize);
  const indexed = indexedSize(sels, self.batchSize);
  if (typeof value === "number" || typeof value === "boolean") return setAtDict(op, self, sels, indexed, value);
  let sub: TensorDict;
  if (value instanceof TensorDict) sub = value;
  else if (isSource(value)) {
    // The indexed batch size, or the longest suffix of it the entries fit (broadcast on the left, as tensordict expands).
    let made: TensorDict | undefined;
    for (let k = 0; made === undefined && k <= indexed.length; k++) {
      if (indexed.slice(k).some((d) => d < 0)) continue;
      try {
        made = new TensorDict(value, indexed.slice(k));
      } catch (e) {
        if (!(e instanceof ShapeError) || k === indexed.length) throw e;
      }
    }
    sub = made ?? new TensorDict(value, []);
  } else
    throw new DTypeError(
      `${op}: value must be a TensorDict, a plain object of entries or a number, got ${describeValue(value)}`,
    );
  const fitsLeft =
    sub.batchDim <= indexed.length && sub.batchSize.every((d, i) => d === indexed[indexed.length - sub.batchDim + i]);
  const fitsEntries = sub.entries().every(([, v]) => {
    const b = entryBatch(v);
    return b.length >= indexed.length && indexed.every((d, i) => b[i] === d);
  });
  if (!fitsLeft && !fitsEntries)
    throw new ShapeError(
      `${op}: indexed destination TensorDict batch size is ${fmtBatchSize(indexed)} (batch_size = ${fmtBatchSize(self.batchSize)}, index=${fmtSelectors(sels)}), which differs from the source batch size ${fmtBatchSize(sub.batchSize)}`,
    );
  return setAtDict(op, self, sels, indexed, sub);
}

function toPaddedTensor(
  this: TensorDict,
  options?: { readonly padding?: number; readonly maskKey?: NestedKey },
): TensorDict {
  const op = "TensorDict.toPaddedTensor";
  const opts: { readonly padding?: number; readonly maskKey?: NestedKey } = optionsArg(op, options);
  if (opts.maskKey !== undefined)
    throw new ShapeError(
      `${op}: mask_key should only be provided if the heterogenous dimension is part of the batch-size (batchSize ${fmtBatchSize(this.batchSize)})`,
    );
  const padding = opts.padding ?? 0;
  if (typeof padding !== "number")
    throw new DTypeError(`${op}: padding must be a number, got ${describeValue(padding)}`);
  return rebuild(
    this,
    (td) => td.batchSize,
    (x) => (x instanceof JaggedTensor ? x.toPadded({ paddingValue: padding }).padded : x),
  );
}

function booleanMaskDict(this: TensorDict, mask: Tensor): TensorDict {
  const op = "TensorDict.booleanMask";
  if (!(mask instanceof Tensor)) throw new DTypeError(`${op}: mask must be a Tensor, got ${describeValue(mask)}`);
  const k = mask.batchDim;
  if (mask.baseDim !== 0 || k > this.batchDim || mask.batchShape.some((d, i) => d !== this.batchSize[i]))
    throw new ShapeError(
      `${op}: mask ${mask.toString()} must be a (batch;) tensor over the leading dims of batchSize ${fmtBatchSize(this.batchSize)}`,
    );
  checkEager(op, "mask", mask);
  const m = mask.dtype === "bool" ? mask : mask.ne(0);
  const flat = m.dataSync();
  const picked: number[] = [];
  flat.forEach((v, i) => {
    if (v !== 0) picked.push(i);
  });
  const rest = (size: readonly number[]) => [picked.length, ...size.slice(k)];
  return rebuild(
    this,
    (td) => rest(td.batchSize),
    (x, path) => {
      if (x instanceof Tensor) return booleanMask(x, m);
      if (x instanceof NonTensorData) return x.withBatchSize(rest(x.batchSize));
      if (x instanceof NonTensorStack) {
        const unit = x.values.length / Math.max(1, flat.length);
        return new NonTensorStack(
          picked.flatMap((i) => x.values.slice(i * unit, (i + 1) * unit)),
          rest(x.batchSize),
        );
      }
      throw new UnsupportedOpError(
        `${op}: entry ${fmtKey(path)} is jagged ${x.toString()}; booleanMask takes tensor and non-tensor entries`,
      );
    },
  );
}

/** A plain object (or one without a prototype) of entries, as the TensorDict constructor takes. */
function isSource(v: unknown): v is TensorDictSource {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Installs the methods above on `TensorDict.prototype` (src/tensordict/tensordict.ts calls it once). */
export function installTensorDictApi(): void {
  const P = TensorDict.prototype;
  if (Object.hasOwn(P, "setAt")) return;
  const methods = { setNonTensor, getNonTensor, setAt, toPaddedTensor, booleanMask: booleanMaskDict };
  for (const [name, fn] of Object.entries(methods))
    Object.defineProperty(P, name, { value: fn, writable: true, configurable: true, enumerable: false });
}

// ---- row assignment (setAt) helpers ----

/** One index of `setAt`: an integer, or a slice `{ start, stop, step }` with Python's defaults. */
export type BatchSelector = number | SliceSelector;

/** A slice of one batch dim, `start:stop:step` with Python's defaults and rules (negative bounds count from the end). */
export interface SliceSelector {
  /** First position (default 0). */
  readonly start?: number;
  /** One past the last position (default: the dim's size). */
  readonly stop?: number;
  /** Positive step (default 1). */
  readonly step?: number;
}

/** A selector checked against its dim: an index, or a slice `start, start+step, …` (`len` of them; -1 when symbolic). */
type Sel =
  | { readonly kind: "int"; readonly i: number }
  | {
      readonly kind: "slice";
      readonly start: number;
      readonly stop: number | undefined;
      readonly len: number;
      readonly step: number;
    };

function fmtSelectors(sels: readonly Sel[]): string {
  const one = (s: Sel) =>
    s.kind === "int" ? String(s.i) : `${s.start}:${s.stop ?? ""}${s.step === 1 ? "" : `:${s.step}`}`;
  return sels.length === 1 ? one(sels[0]!) : `(${sels.map(one).join(", ")})`;
}

function normSelectors(op: string, index: unknown, size: readonly number[]): Sel[] {
  const list: readonly unknown[] = Array.isArray(index) ? index : [index];
  if (list.length > size.length)
    throw new ShapeError(`${op}: too many indices (${list.length}) for batchSize ${fmtBatchSize(size)}`);
  return list.map((x, dim) => {
    const n = size[dim]!;
    if (typeof x === "number") {
      if (!Number.isInteger(x)) throw new ShapeError(`${op}: index ${x} must be an integer`);
      if (n < 0) {
        if (x < 0)
          throw new TraceError(
            `${op}: a negative index needs a concrete batch size, dim ${dim} is symbolic (inside jit)`,
          );
        return { kind: "int", i: x };
      }
      const i = x < 0 ? x + n : x;
      if (i < 0 || i >= n)
        throw new ShapeError(`${op}: index ${x} is out of bounds for dimension ${dim} with size ${n}`);
      return { kind: "int", i };
    }
    if (typeof x !== "object" || x === null || Array.isArray(x))
      throw new ShapeError(
        `${op}: an index must be an integer or a slice { start, stop, step }, got ${describeValue(x)}`,
      );
    const { start, stop, step = 1 } = x as { start?: unknown; stop?: unknown; step?: unknown };
    for (const [name, v] of [
      ["start", start],
      ["stop", stop],
      ["step", step],
    ] as const)
      if (v !== undefined && (typeof v !== "number" || !Number.isInteger(v)))
        throw new ShapeError(`${op}: slice ${name} must be an integer, got ${describeValue(v)}`);
    if ((step as number) <= 0) throw new ShapeError(`${op}: slice step must be positive, got ${step as number}`);
    if (n < 0) {
      if (
        start === undefined ||
        stop === undefined ||
        (start as number) < 0 ||
        (stop as number) < (start as number) ||
        step !== 1
      )
        throw new TraceError(
          `${op}: inside jit (dim ${dim} is symbolic) a slice needs explicit bounds 0 <= start <= stop and step 1`,
        );
      return {
        kind: "slice",
        start: start as number,
        stop: stop as number,
        len: (stop as number) - (start as number),
        step: 1,
      };
    }
    const clamp = (v: number) => Math.min(n, Math.max(0, v < 0 ? v + n : v));
    const a = clamp((start as number | undefined) ?? 0);
    const b = clamp((stop as number | undefined) ?? n);
    const len = b > a ? Math.ceil((b - a) / (step as number)) : 0;
    return { kind: "slice", start: a, stop: a + len * (step as number), len, step: step as number };
  });
}

function indexedSize(sels: readonly Sel[], size: readonly number[]): number[] {
  const out: number[] = [];
  sels.forEach((s) => {
    if (s.kind === "slice") out.push(s.len);
  });
  return [...out, ...size.slice(sels.length)];
}

/** `piece` (size `len` along dim `d`) in place of `x`'s positions `start … start+len` along `d`: two slices and a batch concatenation. */
function splice(x: Tensor, d: number, start: number, len: number, piece: Tensor): Tensor {
  const n = x.batchShape[d]!;
  const parts: Tensor[] = [];
  if (start > 0) parts.push(x.batchSlice(d, 0, start));
  parts.push(piece.cast(x.dtype));
  if (n < 0 || start + len < n) parts.push(x.batchSlice(d, start + len));
  return parts.length === 1 ? parts[0]! : cat(parts, d);
}

/** `v` broadcast to `inner`'s shape (batch and base) and dtype. */
function fillLike(inner: Tensor, v: Tensor | number | boolean): Tensor {
  const value = typeof v === "boolean" ? (v ? 1 : 0) : v;
  // where(true, v, inner) has inner's shape (broadcast, symbolic dims too) and v's values.
  return where(Tensor._const(1, "bool"), value, inner).cast(inner.dtype);
}

function writeTensor(op: string, x: Tensor, sels: readonly Sel[], v: Tensor | number | boolean, d: number): Tensor {
  const [sel, ...rest] = sels as [Sel, ...Sel[]];
  if (sel.kind === "int") {
    const inner = x.batchIndex(d, sel.i);
    const written = rest.length > 0 ? writeTensor(op, inner, rest, v, d) : fillLike(inner, v);
    return splice(x, d, sel.i, 1, written.batchUnsqueeze(d));
  }
  const inner = x.batchSlice(d, sel.start, sel.stop, sel.step);
  const written = rest.length > 0 ? writeTensor(op, inner, rest, v, d + 1) : fillLike(inner, v);
  if (sel.step === 1) return splice(x, d, sel.start, sel.len, written);
  let out = x;
  for (let k = 0; k < sel.len; k++)
    out = splice(out, d, sel.start + k * sel.step, 1, written.batchIndex(d, k).batchUnsqueeze(d));
  return out;
}

function writeNonTensor(x: NonTensor, sels: readonly Sel[], v: NonTensor, d: number): NonTensor {
  const [sel, ...rest] = sels as [Sel, ...Sel[]];
  if (sel.kind === "int") {
    const written = rest.length > 0 ? writeNonTensor(ntIndex(x, d, sel.i), rest, v, d) : v;
    return ntSetAt(x, d, { start: sel.i, len: 1, step: 1, drop: true }, written);
  }
  const inner = ntSlice(x, d, sel.start, sel.len, sel.step);
  const written = rest.length > 0 ? writeNonTensor(inner, rest, v, d + 1) : v;
  return ntSetAt(x, d, { start: sel.start, len: sel.len, step: sel.step, drop: false }, written);
}

function setAtDict(
  op: string,
  td: TensorDict,
  sels: readonly Sel[],
  indexed: readonly number[],
  value: TensorDict | number | boolean,
): TensorDict {
  const out = new TensorDict({}, td.batchSize);
  const write = (k: string, x: TensorDictValue, v: TensorDictValue | number | boolean): TensorDictValue => {
    if (x instanceof TensorDict) {
      if (typeof v !== "number" && typeof v !== "boolean" && !(v instanceof TensorDict))
        throw new ShapeError(`${op}: entry ${fmtKey(k)} is a TensorDict, but the value's is ${describe(v)}`);
      return setAtDict(op, x, sels, indexed, v);
    }
    if (x instanceof JaggedTensor)
      throw new UnsupportedOpError(
        `${op}: entry ${fmtKey(k)} is jagged ${x.toString()}; setAt writes tensor and non-tensor entries`,
      );
    if (isNonTensor(x)) {
      if (typeof v === "number" || typeof v === "boolean") return x; // a number fills the tensors only
      if (!isNonTensor(v))
        throw new ShapeError(`${op}: entry ${fmtKey(k)} is ${x.toString()}, but the value's is ${describe(v)}`);
      return writeNonTensor(x, sels, v, 0);
    }
    if (!(v instanceof Tensor) && typeof v !== "number" && typeof v !== "boolean")
      throw new ShapeError(`${op}: entry ${fmtKey(k)} is a tensor ${x.toString()}, but the value's is ${describe(v)}`);
    return writeTensor(op, x, sels, v, 0);
  };
  for (const [k, x] of td.entries()) {
    const v = typeof value === "object" ? value.get(k) : value;
    out.set(k, v === undefined ? x : write(k, x, v));
  }
  if (typeof value === "object") {
    for (const [k, v] of value.entries()) {
      if (td.get(k) !== undefined) continue;
      // A new key: zeros (an empty dict) over the whole batch, then written at the index.
      if (td.batchSize.some((d) => d < 0))
        throw new TraceError(`${op}: new key ${fmtKey(k)} needs concrete batch sizes to allocate (inside jit)`);
      const extra = entryBatch(v).slice(indexed.length);
      let fresh: TensorDictValue;
      if (v instanceof Tensor) fresh = full([...td.batchSize, ...extra], v.baseShape, 0, { dtype: v.dtype });
      else if (v instanceof TensorDict) fresh = new TensorDict({}, [...td.batchSize, ...extra]);
      else
        throw new KeyError(
          `${op}: new key ${fmtKey(k)} holds ${describe(v)}; only tensor and TensorDict entries can be allocated by setAt (set non-tensor data on the whole dict first)`,
        );
      out.set(k, write(k, fresh, v));
    }
  }
  return out;
}
