/**
 * Non-tensor entries of a TensorDict (tensordict's `NonTensorData` and
 * `NonTensorStack`): strings, labels and other JS values kept next to the
 * tensors and aligned with the batch.
 *
 * - `NonTensorData` holds one value for the whole batch: indexing, slicing and
 *   reshaping keep the value and change only the batch size.
 * - `NonTensorStack` holds one value per batch element, in row-major order.
 *   Stacking `NonTensorData` gives one (tensordict's default since v0.9, which
 *   does not collapse identical values), as does a lazy stack's `get` of a
 *   non-tensor key. `tolist()` gives the values as nested arrays.
 *
 * Non-tensor values live on the host: a TensorDict holding them cannot be a
 * `jit` argument or result (a TraceError names the entry).
 */
import { ShapeError } from "../../ir/errors.js";
import { contiguousStrides as strides } from "../../ir/kernel.js";
import { prod } from "../../ir/types.js";
import { describeValue } from "../ragged/check.js";

/**
 * The brand of non-tensor entries (`"data"` or `"stack"`): TensorDict's core
 * checks it by this registered symbol instead of importing this module, so the
 * lean runtime entry, which holds TensorDicts but no non-tensor data, does not
 * carry it.
 */
export const NON_TENSOR: unique symbol = Symbol.for("batchwise.nonTensor");

/** `[2, 3]` as tensordict prints a batch size. */
function fmtSize(size: readonly number[]): string {
  return `[${size.join(", ")}]`;
}

/** Sizes >= 0 (or >= -1: a NonTensorData made inside `jit` may span a symbolic batch dim). */
function checkSize(op: string, size: unknown, min = 0): readonly number[] {
  if (!Array.isArray(size) || size.some((d) => typeof d !== "number" || !Number.isInteger(d) || d < min))
    throw new ShapeError(`${op}: batchSize must be an array of sizes >= ${min}, got ${describeValue(size)}`);
  return size as readonly number[];
}

/** Calls `fn(multiIndex)` for every index of `shape`, in row-major order. */
function eachIndex(shape: readonly number[], fn: (idx: readonly number[]) => void): void {
  const n = prod(shape);
  const idx = new Array<number>(shape.length).fill(0);
  for (let c = 0; c < n; c++) {
    fn(idx);
    for (let k = shape.length - 1; k >= 0; k--) {
      if (++idx[k]! < shape[k]!) break;
      idx[k] = 0;
    }
  }
}

function normDim(op: string, dim: number, rank: number): number {
  const d = dim < 0 ? dim + rank : dim;
  if (!Number.isInteger(d) || d < 0 || d >= rank)
    throw new ShapeError(`${op}: dim ${dim} is out of range for batchSize of ${rank} dims`);
  return d;
}

/** Nested arrays of `values` (row-major) with `shape`. */
function nestValues(values: readonly unknown[], shape: readonly number[]): unknown {
  if (shape.length === 0) return values[0];
  const rec = (off: number, d: number): unknown[] => {
    const n = shape[d]!;
    const stride = prod(shape.slice(d + 1));
    return Array.from({ length: n }, (_, i) =>
      d === shape.length - 1 ? values[off + i] : rec(off + i * stride, d + 1),
    );
  };
  return rec(0, 0);
}

/**
 * The batch ops NonTensorData and NonTensorStack share, with TensorDict's names
 * and meanings (a TensorDict applies them to its non-tensor entries).
 */
abstract class NonTensorBatchOps {
  /** The batch dims it spans. */
  abstract readonly batchSize: readonly number[];
  /** Describes the entry in messages. */
  abstract toString(): string;
  private self(): NonTensor {
    return this as unknown as NonTensor;
  }

  /** Number of batch dims. */
  get batchDim(): number {
    return this.batchSize.length;
  }

  /** Index `i` of batch dim `dim` (negative counts from the end); the dim goes away. */
  batchIndex(dim: number, i: number): NonTensor {
    const d = normDim("batchIndex", dim, this.batchDim);
    const n = this.batchSize[d]!;
    const j = i < 0 && n >= 0 ? i + n : i;
    if (!Number.isInteger(j) || j < 0 || (n >= 0 && j >= n))
      throw new ShapeError(`batchIndex: index ${i} is out of range for dim ${d} of ${this.toString()}`);
    return ntIndex(this.self(), d, j);
  }
  /** `start:stop:step` of batch dim `dim` (Python's slice rules, positive step). */
  batchSlice(dim: number, start = 0, stop?: number, step = 1): NonTensor {
    const d = normDim("batchSlice", dim, this.batchDim);
    const n = this.batchSize[d]!;
    if (n < 0) return ntSlice(this.self(), d, 0, -1, 1); // symbolic (inside jit): a NonTensorData keeps its value
    const clamp = (v: number) => Math.min(n, Math.max(0, v < 0 ? v + n : v));
    const a = clamp(start);
    const b = clamp(stop ?? n);
    return ntSlice(this.self(), d, a, b > a ? Math.ceil((b - a) / step) : 0, step);
  }
  /** Another batch size of the same element count (row-major, as a reshape). */
  batchReshape(shape: readonly number[]): NonTensor {
    return ntReshape(this.self(), shape);
  }
  /** A new batch dim of size 1 at `dim`. */
  batchUnsqueeze(dim: number): NonTensor {
    const d = dim < 0 ? dim + this.batchDim + 1 : dim;
    return ntReshape(this.self(), [...this.batchSize.slice(0, d), 1, ...this.batchSize.slice(d)]);
  }
  /** Broadcast to `shape` (size-1 and missing leading dims grow). */
  batchExpand(shape: readonly number[]): NonTensor {
    return ntExpand(this.self(), shape);
  }
}

/**
 * One value for a whole batch (tensordict's `NonTensorData`): indexing gives the
 * same value, batch-dim ops change only `batchSize`.
 *
 * ```ts
 * const td = new TensorDict({ x: zeros([3], []) }, [3]).setNonTensor("label", "walk");
 * td.batchIndex(0, 1).getNonTensor("label"); // "walk"
 * ```
 */
export class NonTensorData extends NonTensorBatchOps {
  /** @internal The brand TensorDict checks. */
  readonly [NON_TENSOR] = "data" as const;
  /** The value (any JS value). */
  readonly data: unknown;
  /** The batch dims it spans (those of the dict holding it). */
  readonly batchSize: readonly number[];

  constructor(data: unknown, batchSize: readonly number[] = []) {
    super();
    // A NonTensorData is unwrapped, as tensordict does.
    this.data = data instanceof NonTensorData ? data.data : data;
    this.batchSize = Object.freeze([...checkSize("NonTensorData", batchSize, -1)]);
  }

  /** The same value with another batch size. */
  withBatchSize(size: readonly number[]): NonTensorData {
    return new NonTensorData(this.data, size);
  }

  /** The value repeated over the batch, as nested arrays (the value itself for an empty batch size). */
  tolist(): unknown {
    return nestValues(new Array<unknown>(prod(this.batchSize)).fill(this.data), this.batchSize);
  }

  /** TensorDict's `pad` of the leading batch dims (`[before, after]` per dim): the value spans the new size. */
  pad(padSize: readonly number[], _value?: number): NonTensor {
    return this.withBatchSize(
      this.batchSize.map((s, k) => (2 * k < padSize.length ? s + padSize[2 * k]! + padSize[2 * k + 1]! : s)),
    );
  }
  /** @internal The entry over another batch size (TensorDict.apply): the value spans it. */
  _resize(_op: string, size: readonly number[]): NonTensor {
    return this.withBatchSize(size);
  }

  /** `NonTensorData("walk", batchSize=[3])`. */
  toString(): string {
    return `NonTensorData(${fmtData(this.data)}, batchSize=${fmtSize(this.batchSize)})`;
  }
}

function fmtData(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v.length > 24 ? `${v.slice(0, 24)}…` : v);
  return describeValue(v);
}

/**
 * One value per batch element (tensordict's `NonTensorStack`), row-major.
 * Made by stacking `NonTensorData`, by a lazy stack's `get` of a non-tensor key,
 * or from nested arrays with `NonTensorStack.fromList`.
 *
 * ```ts
 * const seq = NonTensorStack.fromList(["ACGT", "GGCC", "TTAG"]); // batchSize [3]
 * new TensorDict({ seq, gc: tensor([0.5, 1, 0.25], { batchDim: 1 }) }, [3]).batchSlice(0, 0, 2).getNonTensor("seq"); // ["ACGT", "GGCC"]
 * ```
 */
export class NonTensorStack extends NonTensorBatchOps {
  /** @internal The brand TensorDict checks. */
  readonly [NON_TENSOR] = "stack" as const;
  /** The batch size; `values` has one entry per element. */
  readonly batchSize: readonly number[];
  /** The values, row-major over `batchSize`. */
  readonly values: readonly unknown[];

  /** `values` row-major over `batchSize`; prefer `fromList` for nested arrays. */
  constructor(values: readonly unknown[], batchSize: readonly number[]) {
    super();
    const size = checkSize("NonTensorStack", batchSize);
    if (!Array.isArray(values) || values.length !== prod(size))
      throw new ShapeError(
        `NonTensorStack: ${Array.isArray(values) ? `${values.length} values do` : `${describeValue(values)} does`} not fill batchSize ${fmtSize(size)}`,
      );
    this.batchSize = Object.freeze([...size]);
    this.values = Object.freeze([...values]);
  }

  /**
   * From nested arrays, `batchDim` levels deep (default: every level of the first
   * element that is an array); the nesting must be regular.
   */
  static fromList(list: readonly unknown[], batchDim?: number): NonTensorStack {
    const op = "NonTensorStack.fromList";
    if (!Array.isArray(list)) throw new ShapeError(`${op}: list must be an array, got ${describeValue(list)}`);
    const shape: number[] = [];
    let probe: unknown = list;
    while (Array.isArray(probe) && (batchDim === undefined || shape.length < batchDim)) {
      shape.push(probe.length);
      if (probe.length === 0) break;
      probe = probe[0];
    }
    if (batchDim !== undefined && shape.length !== batchDim)
      throw new ShapeError(`${op}: the list is nested ${shape.length} levels deep, not ${batchDim}`);
    const values: unknown[] = [];
    const walk = (v: unknown, d: number, path: string): void => {
      if (d === shape.length) {
        values.push(v);
        return;
      }
      if (!Array.isArray(v) || v.length !== shape[d])
        throw new ShapeError(
          `${op}: list${path} must be an array of ${shape[d]} (the nesting is irregular), got ${describeValue(v)}`,
        );
      v.forEach((x: unknown, i) => walk(x, d + 1, `${path}[${i}]`));
    };
    walk(list, 0, "");
    return new NonTensorStack(values, shape);
  }

  /** The values as nested arrays over the batch size. */
  tolist(): unknown {
    return nestValues(this.values, this.batchSize);
  }

  /** TensorDict's `pad`: a stack holds one value per element, and there is no value to pad with (a ShapeError). */
  pad(_padSize: readonly number[], _value?: number): NonTensor {
    throw new ShapeError(`pad: ${this.toString()} holds one value per element, and there is no value to pad with`);
  }
  /** @internal The entry over another batch size (TensorDict.apply): a stack must keep its own. */
  _resize(op: string, size: readonly number[]): NonTensor {
    if (size.length !== this.batchDim || size.some((d, i) => d !== this.batchSize[i]))
      throw new ShapeError(`${op}: ${this.toString()} cannot take batchSize=${fmtSize(size)}`);
    return this;
  }

  /** `NonTensorStack(["a", "b"], batchSize=[2])`. */
  toString(): string {
    const shown = this.values.slice(0, 6).map(fmtData).join(", ");
    return `NonTensorStack([${shown}${this.values.length > 6 ? ", …" : ""}], batchSize=${fmtSize(this.batchSize)})`;
  }
}

/** A non-tensor entry. */
export type NonTensor = NonTensorData | NonTensorStack;

/** Whether `v` is a non-tensor entry. */
export function isNonTensor(v: unknown): v is NonTensor {
  return v instanceof NonTensorData || v instanceof NonTensorStack;
}

/** The values of a non-tensor entry, row-major over its batch size. */
function valuesOf(v: NonTensor): readonly unknown[] {
  return v instanceof NonTensorStack ? v.values : new Array<unknown>(prod(v.batchSize)).fill(v.data);
}

/** A stack whose values are `fn(index)` over `shape`; a 0-dim result is a NonTensorData, as indexing a stack down to one element is. */
function build(shape: readonly number[], fn: (idx: readonly number[]) => unknown): NonTensor {
  const out: unknown[] = [];
  eachIndex(shape, (idx) => out.push(fn(idx)));
  return shape.length === 0 ? new NonTensorData(out[0], []) : new NonTensorStack(out, shape);
}

/** Index `i` of batch dim `d` (the dim goes away). */
export function ntIndex(v: NonTensor, d: number, i: number): NonTensor {
  const size = v.batchSize.filter((_, k) => k !== d);
  if (v instanceof NonTensorData) return v.withBatchSize(size);
  const st = strides(v.batchSize);
  return build(size, (idx) => v.values[idx.reduce((a, x, k) => a + x * st[k < d ? k : k + 1]!, i * st[d]!)]);
}

/** `start, start+step, …` (`len` of them) of batch dim `d`. */
export function ntSlice(v: NonTensor, d: number, start: number, len: number, step: number): NonTensor {
  const size = v.batchSize.map((s, k) => (k === d ? len : s));
  if (v instanceof NonTensorData) return v.withBatchSize(size);
  const st = strides(v.batchSize);
  return build(size, (idx) => v.values[idx.reduce((a, x, k) => a + (k === d ? start + x * step : x) * st[k]!, 0)]);
}

/** The same values with another batch size of the same element count (row-major, as a reshape). */
export function ntReshape(v: NonTensor, size: readonly number[]): NonTensor {
  if (v instanceof NonTensorData) return v.withBatchSize(size);
  if (prod(size) !== v.values.length)
    throw new ShapeError(`reshape: cannot reshape ${v.toString()} to batchSize ${fmtSize(size)}`);
  return size.length === 0 ? new NonTensorData(v.values[0], []) : new NonTensorStack(v.values, size);
}

/** Broadcasts size-1 dims (and adds leading ones) up to `size`. */
export function ntExpand(v: NonTensor, size: readonly number[]): NonTensor {
  if (v instanceof NonTensorData) return v.withBatchSize(size);
  const lead = size.length - v.batchDim;
  const st = strides(v.batchSize);
  return build(
    size,
    (idx) => v.values[v.batchSize.reduce((a, s, k) => a + (s === 1 ? 0 : idx[lead + k]!) * st[k]!, 0)],
  );
}

/**
 * Stacks non-tensor entries of one batch size on a new dim `d`: always a
 * NonTensorStack (tensordict's default since v0.9 keeps identical values apart).
 */
export function ntStack(op: string, list: readonly NonTensor[], d: number): NonTensorStack {
  const first = list[0]!;
  list.forEach((v, i) => {
    if (v.batchDim !== first.batchDim || v.batchSize.some((s, k) => s !== first.batchSize[k]))
      throw new ShapeError(
        `${op}: the non-tensor entries to stack have batch sizes ${fmtSize(v.batchSize)} (item ${i}) and ${fmtSize(first.batchSize)} (item 0)`,
      );
  });
  const size = [...first.batchSize.slice(0, d), list.length, ...first.batchSize.slice(d)];
  const st = strides(first.batchSize);
  const vals = list.map(valuesOf);
  const out: unknown[] = [];
  eachIndex(size, (idx) => {
    let off = 0;
    for (let k = 0; k < idx.length; k++) if (k !== d) off += idx[k]! * st[k < d ? k : k - 1]!;
    out.push(vals[idx[d]!]![off]);
  });
  return new NonTensorStack(out, size);
}

/** Concatenates non-tensor entries along batch dim `d` (the other dims must match). */
export function ntCat(op: string, list: readonly NonTensor[], d: number): NonTensorStack {
  const first = list[0]!;
  list.forEach((v, i) => {
    if (v.batchDim !== first.batchDim || v.batchSize.some((s, k) => k !== d && s !== first.batchSize[k]))
      throw new ShapeError(
        `${op}: the non-tensor entries to concatenate have batch sizes ${fmtSize(v.batchSize)} (item ${i}) and ${fmtSize(first.batchSize)} (item 0)`,
      );
  });
  const offsets = [0];
  for (const v of list) offsets.push(offsets[offsets.length - 1]! + v.batchSize[d]!);
  const size = first.batchSize.map((s, k) => (k === d ? offsets[offsets.length - 1]! : s));
  const vals = list.map(valuesOf);
  const out: unknown[] = [];
  eachIndex(size, (idx) => {
    let j = 0;
    while (idx[d]! >= offsets[j + 1]!) j++;
    const st = strides(list[j]!.batchSize);
    out.push(vals[j]![idx.reduce((a, x, k) => a + (k === d ? x - offsets[j]! : x) * st[k]!, 0)]);
  });
  return new NonTensorStack(out, size);
}

/** `v` with its elements at index `i` of dim `d` (or the slice `start + k·step`, k < len) replaced by `sub`'s. */
export function ntSetAt(
  v: NonTensor,
  d: number,
  sel: { readonly start: number; readonly len: number; readonly step: number; readonly drop: boolean },
  sub: NonTensor,
): NonTensor {
  const st = strides(v.batchSize);
  const subVals = valuesOf(sub);
  const subSize = sub.batchSize;
  const subSt = strides(subSize);
  const mine = valuesOf(v);
  const out: unknown[] = [];
  eachIndex(v.batchSize, (idx) => {
    const pos = idx[d]! - sel.start;
    const k = pos / sel.step;
    const hit = pos >= 0 && Number.isInteger(k) && k < sel.len;
    if (!hit) {
      out.push(mine[idx.reduce((a, x, j) => a + x * st[j]!, 0)]);
      return;
    }
    // The sub-entry's index: drop dim d for an integer index, else k along it; size-1 dims of sub broadcast.
    const sidx = sel.drop ? idx.filter((_, j) => j !== d) : idx.map((x, j) => (j === d ? k : x));
    const lead = sidx.length - subSize.length;
    out.push(subVals[subSize.reduce((a, s, j) => a + (s === 1 ? 0 : sidx[lead + j]!) * subSt[j]!, 0)]);
  });
  // Replacing part of a one-value entry with other values makes it a stack, unless the value is the same.
  if (v instanceof NonTensorData && sub instanceof NonTensorData && Object.is(v.data, sub.data)) return v;
  return v.batchSize.length === 0 ? new NonTensorData(out[0], []) : new NonTensorStack(out, v.batchSize);
}

export { normDim as ntNormDim };
