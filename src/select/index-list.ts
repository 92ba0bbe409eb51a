/**
 * NumPy-style index lists on the batch axes, the base axes, or both
 * (`x.batchIndex(list)`, `x.baseIndex(list)`, `x.index(list)`; NEML2's
 * `batch_index`/`base_index`, Open3D's `IndexGet`, NumPy's `x[...]`).
 *
 * A list item is an integer, a slice (`sl(start, stop, step)`, `{ start, stop,
 * step }` or the string `"1:5:2"`), `"..."` (Ellipsis), `null` (a new size-1
 * axis), an integer array (nested numbers or an int Tensor) or a boolean array
 * (nested booleans or a bool Tensor). The rules are NumPy's:
 *
 * - integers and slices are *basic* indices: an integer removes its axis (a
 *   negative one counts from the end, out of range is a ShapeError); a slice
 *   keeps it (Python's defaults, negative steps included, bounds clamp);
 * - integer and boolean arrays are *advanced* indices: they broadcast together
 *   (a boolean array of k dims counts as the k integer arrays of its `nonzero`),
 *   and once one is present the integers are advanced indices too (0-d arrays);
 *   the broadcast dims replace the indexed axes at the place of the first
 *   advanced index when the advanced indices are adjacent in the list, else in
 *   front of the result (an `"..."` or a `null` between them counts as a gap);
 * - missing trailing items are full slices; at most one `"..."`.
 *
 * Base axes are static, so base indexing resolves to one flat position tensor
 * (`resolveBaseIndex`) and works inside `jit`. Batch axes are symbolic inside
 * `jit`: integers, slices (negative steps only from the end), `"..."`, `null` and
 * one 1-D integer array run there as batch ops (`batch_slice` copies,
 * `batch_concat`, `batch_squeeze`, `batch_unsqueeze`); other advanced batch
 * indices need concrete sizes, and then run as one gather over every dim.
 */
import type { TypedArray } from "../../ir/dtype.js";
import { BackendError, DTypeError, ShapeError, TraceError } from "../../ir/errors.js";
import { prod } from "../../ir/types.js";
import { describe } from "../check.js";
import { fromTypedArray } from "../creation.js";
import { Tensor, where } from "../tensor.js";
import { checkEager } from "./mask.js";

/** A slice `start:stop:step` as an index-list item (Python's defaults when a field is missing or null). */
export interface IndexSlice {
  /** First position (default 0, or the last position when `step < 0`); negative counts from the end. */
  readonly start?: number | null;
  /** End, exclusive (default: past the end in the direction of `step`); negative counts from the end. */
  readonly stop?: number | null;
  /** Step, non-zero (default 1); negative walks backwards. */
  readonly step?: number | null;
}

/**
 * Nested JavaScript arrays of integers or of booleans: an advanced index (see `IndexItem`).
 * Typed arrays of integers are read as one-dimensional integer arrays.
 */
export type IndexArray = readonly (number | boolean | IndexArray)[] | TypedArray;

/**
 * One item of an index list: an integer, a slice (`sl(…)`, `{ start, stop, step }`,
 * or a string such as `":"`, `"1:"`, `"::-1"`), `"..."`, `null` (a new axis), an
 * integer or boolean array, or an int / bool Tensor. See `Tensor.index`.
 */
export type IndexItem = number | string | null | IndexSlice | IndexArray | Tensor;

/** An index list: one item per indexed axis, plus `"..."` and `null` items. */
export type IndexList = readonly IndexItem[];

/**
 * The slice `start:stop:step` as an index-list item (Python's `slice`): omitted
 * or `null` fields take Python's defaults, which depend on the sign of `step`
 * (`sl(null, null, -1)` reverses an axis, as `x[::-1]`).
 *
 * @example
 * ```ts
 * tensor([0, 1, 2, 3, 4]).baseIndex([sl(null, null, -2)]).toArraySync(); // [4, 2, 0]
 * ```
 */
export function sl(start?: number | null, stop?: number | null, step?: number | null): IndexSlice {
  return Object.freeze({ start: start ?? null, stop: stop ?? null, step: step ?? null });
}

// ------------------------------------------------------------------ parsed items

/** A list item after parsing, on one axis of the dims the list indexes (`axis`), at list position `pos`. */
type Item =
  | { readonly k: "int"; readonly pos: number; readonly axis: number; readonly i: number }
  | {
      readonly k: "slice";
      readonly pos: number;
      readonly axis: number;
      readonly start: number | null;
      readonly stop: number | null;
      readonly step: number;
    }
  | { readonly k: "new"; readonly pos: number }
  | { readonly k: "ell"; readonly pos: number }
  | {
      readonly k: "arr";
      readonly pos: number;
      readonly axis: number;
      readonly data: Int32Array;
      readonly shape: readonly number[];
    }
  | { readonly k: "tensor"; readonly pos: number; readonly axis: number; readonly t: Tensor };

type Scope = "batch" | "base" | "all";

interface Ctx {
  readonly op: string;
  readonly x: Tensor;
}

function where_(ctx: Ctx, pos: number): string {
  return `${ctx.op}: index[${pos}]`;
}

const SLICE_RE = /^\s*(-?\d+)?\s*:\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*)?$/;

function isSliceObject(v: object): v is IndexSlice {
  if (Array.isArray(v) || v instanceof Tensor || ArrayBuffer.isView(v)) return false;
  return Object.keys(v).every((k) => k === "start" || k === "stop" || k === "step");
}

function sliceField(ctx: Ctx, pos: number, name: string, v: unknown): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== "number" || !Number.isInteger(v))
    throw new ShapeError(
      `${where_(ctx, pos)}: slice ${name} must be an integer or null, got ${describe(v)} for x ${ctx.x.toString()}`,
    );
  return v;
}

/** A nested array read into flat data and a shape (booleans flagged), or a ShapeError/DTypeError naming the item. */
function readArray(ctx: Ctx, pos: number, v: IndexArray): { data: number[]; shape: number[]; bool: boolean } {
  if (ArrayBuffer.isView(v)) {
    const a = v as TypedArray;
    if (a instanceof Float32Array || a instanceof Float64Array)
      throw new DTypeError(`${where_(ctx, pos)}: a float array is not an index (x ${ctx.x.toString()})`);
    return { data: Array.from(a), shape: [a.length], bool: false };
  }
  const shape: number[] = [];
  let probe: unknown = v;
  while (Array.isArray(probe)) {
    shape.push(probe.length);
    if (probe.length === 0) break;
    probe = probe[0];
  }
  const data: number[] = [];
  let bools = 0;
  let nums = 0;
  const walk = (a: unknown, d: number): void => {
    if (d === shape.length) {
      if (typeof a === "boolean") {
        bools++;
        data.push(a ? 1 : 0);
      } else if (typeof a === "number" && Number.isInteger(a)) {
        nums++;
        data.push(a);
      } else
        throw new DTypeError(
          `${where_(ctx, pos)}: an index array holds integers or booleans, got ${describe(a)} (x ${ctx.x.toString()})`,
        );
      return;
    }
    if (!Array.isArray(a) || a.length !== shape[d])
      throw new ShapeError(`${where_(ctx, pos)}: the index array is ragged (x ${ctx.x.toString()})`);
    for (const e of a) walk(e, d + 1);
  };
  walk(v, 0);
  if (bools > 0 && nums > 0)
    throw new DTypeError(`${where_(ctx, pos)}: an index array mixes booleans and numbers (x ${ctx.x.toString()})`);
  return { data, shape, bool: bools > 0 };
}

/** Reads a tensor's values now (eager only; synchronous backends). */
function valuesNow(ctx: Ctx, pos: number, t: Tensor): TypedArray {
  checkEager(ctx.op, `index[${pos}]`, t);
  const s = t._src;
  if (s.kind === "buffer" && s.backend.readSync === undefined)
    throw new BackendError(
      `${where_(ctx, pos)}: the index ${t.toString()} is on ${s.backend.displayName}, which reads asynchronously; read it first (await t.data()) and pass the values as an array`,
    );
  return t.dataSync();
}

/** The k integer arrays (one per dim) of a boolean array's true positions, in row-major order (NumPy's `nonzero`). */
function nonzeroArrays(mask: ArrayLike<number>, shape: readonly number[]): Int32Array[] {
  const hits: number[] = [];
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0) hits.push(i);
  const out = shape.map(() => new Int32Array(hits.length));
  hits.forEach((flat, j) => {
    let rem = flat;
    for (let d = shape.length - 1; d >= 0; d--) {
      out[d]![j] = rem % shape[d]!;
      rem = Math.floor(rem / shape[d]!);
    }
  });
  return out;
}

type Raw =
  | { k: "int"; pos: number; i: number }
  | { k: "slice"; pos: number; start: number | null; stop: number | null; step: number }
  | { k: "new"; pos: number }
  | { k: "ell"; pos: number }
  | {
      k: "arr";
      pos: number;
      data: Int32Array;
      shape: readonly number[];
      bool?: { shape: readonly number[]; j: number };
    }
  | { k: "tensor"; pos: number; t: Tensor };

function parseItem(ctx: Ctx, pos: number, v: unknown): Raw[] {
  if (v === null) return [{ k: "new", pos }];
  if (typeof v === "number") {
    if (!Number.isInteger(v))
      throw new ShapeError(
        `${where_(ctx, pos)}: an index must be an integer, got ${describe(v)} for x ${ctx.x.toString()}`,
      );
    return [{ k: "int", pos, i: v }];
  }
  if (typeof v === "string") {
    if (v.trim() === "...") return [{ k: "ell", pos }];
    const m = SLICE_RE.exec(v);
    if (m === null)
      throw new ShapeError(
        `${where_(ctx, pos)}: the string ${JSON.stringify(v)} is neither "..." nor a slice such as "1:5:2" (x ${ctx.x.toString()})`,
      );
    const num = (s: string | undefined): number | null => (s === undefined ? null : Number(s));
    return [sliceRaw(ctx, pos, num(m[1]), num(m[2]), num(m[3]))];
  }
  if (v instanceof Tensor) {
    if (v.dtype === "bool") {
      const vals = valuesNow(ctx, pos, v);
      const shape = v.shape;
      if (shape.length === 0)
        throw new ShapeError(`${where_(ctx, pos)}: a 0-d boolean index is not supported (x ${ctx.x.toString()})`);
      return boolRaws(pos, vals, shape);
    }
    if (v.dtype === "float32" || v.dtype === "float64")
      throw new DTypeError(
        `${where_(ctx, pos)}: an index Tensor must be int32, uint32 or bool, got ${v.dtype} ${v.toString()} (x ${ctx.x.toString()})`,
      );
    return [{ k: "tensor", pos, t: v.dtype === "int32" ? v : v.cast("int32") }];
  }
  if (Array.isArray(v) || ArrayBuffer.isView(v)) {
    const { data, shape, bool } = readArray(ctx, pos, v as IndexArray);
    if (bool) return boolRaws(pos, data, shape);
    return [{ k: "arr", pos, data: Int32Array.from(data), shape }];
  }
  if (typeof v === "boolean")
    throw new ShapeError(`${where_(ctx, pos)}: a scalar boolean index is not supported (x ${ctx.x.toString()})`);
  if (typeof v === "object" && isSliceObject(v)) {
    const o = v as IndexSlice;
    return [
      sliceRaw(
        ctx,
        pos,
        sliceField(ctx, pos, "start", o.start),
        sliceField(ctx, pos, "stop", o.stop),
        sliceField(ctx, pos, "step", o.step),
      ),
    ];
  }
  throw new DTypeError(
    `${where_(ctx, pos)}: an index item is an integer, a slice, "...", null, an integer or boolean array or a Tensor, got ${describe(v)} (x ${ctx.x.toString()})`,
  );
}

function boolRaws(pos: number, mask: ArrayLike<number>, shape: readonly number[]): Raw[] {
  return nonzeroArrays(mask, shape).map((data, j) => ({
    k: "arr",
    pos,
    data,
    shape: [data.length],
    bool: { shape, j },
  }));
}

function sliceRaw(ctx: Ctx, pos: number, start: number | null, stop: number | null, step: number | null): Raw {
  if (step === 0) throw new ShapeError(`${where_(ctx, pos)}: slice step cannot be zero (x ${ctx.x.toString()})`);
  return { k: "slice", pos, start, stop, step: step ?? 1 };
}

/**
 * Parses `list` over `dims` (sizes; -1 for a symbolic batch size): expands
 * boolean arrays, the Ellipsis and the missing trailing axes, and checks integer
 * indices and arrays against concrete sizes.
 */
function parseList(ctx: Ctx, list: unknown, dims: readonly number[], scope: Scope): Item[] {
  if (!Array.isArray(list))
    throw new DTypeError(
      `${ctx.op}: index must be an array of index items, got ${describe(list)} (x ${ctx.x.toString()})`,
    );
  const raws = list.flatMap((v, pos) => parseItem(ctx, pos, v));
  const consumes = (r: Raw): number => (r.k === "new" || r.k === "ell" ? 0 : 1);
  const used = raws.reduce((s, r) => s + consumes(r), 0);
  const ells = raws.filter((r) => r.k === "ell").length;
  const what = scope === "all" ? "dims" : `${scope} dims`;
  if (ells > 1)
    throw new ShapeError(`${ctx.op}: an index can only have a single ellipsis ("...") (x ${ctx.x.toString()})`);
  if (used > dims.length)
    throw new ShapeError(
      `${ctx.op}: too many indices: ${used} for the ${dims.length} ${what} of x ${ctx.x.toString()}`,
    );
  const items: Item[] = [];
  let axis = 0;
  const full = (pos: number): void => {
    items.push({ k: "slice", pos, axis: axis++, start: null, stop: null, step: 1 });
  };
  for (const r of raws) {
    if (r.k === "ell") {
      items.push({ k: "ell", pos: r.pos });
      for (let n = dims.length - used; n > 0; n--) full(r.pos);
      continue;
    }
    if (r.k === "new") {
      items.push(r);
      continue;
    }
    const a = axis++;
    const n = dims[a]!;
    if (r.k === "arr" && r.bool !== undefined && r.bool.j === 0) {
      // A boolean array's dims must match the dims it covers (NumPy's IndexError).
      const bs = r.bool.shape;
      const covered = dims.slice(a, a + bs.length);
      if (covered.some((d, q) => d >= 0 && d !== bs[q]))
        throw new ShapeError(
          `${where_(ctx, r.pos)}: the boolean index of shape (${bs.join(",")}) does not match the ${what} (${covered.join(",")}) it indexes in x ${ctx.x.toString()}`,
        );
    }
    if (r.k === "int") {
      if (n >= 0 && (r.i < -n || r.i >= n))
        throw new ShapeError(
          `${where_(ctx, r.pos)}: index ${r.i} is out of range for ${scope === "all" ? "dim" : `${scope} dim`} ${a} of size ${n} of x ${ctx.x.toString()}`,
        );
      items.push({ k: "int", pos: r.pos, axis: a, i: n >= 0 && r.i < 0 ? r.i + n : r.i });
    } else if (r.k === "arr") {
      const data = new Int32Array(r.data.length);
      r.data.forEach((v, q) => {
        if (n >= 0 && (v < -n || v >= n))
          throw new ShapeError(
            `${where_(ctx, r.pos)}: index ${v} is out of range for ${scope === "all" ? "dim" : `${scope} dim`} ${a} of size ${n} of x ${ctx.x.toString()}`,
          );
        data[q] = v < 0 && n >= 0 ? v + n : v;
      });
      items.push({ k: "arr", pos: r.pos, axis: a, data, shape: r.shape });
    } else if (r.k === "slice") items.push({ ...r, axis: a });
    else items.push({ k: "tensor", pos: r.pos, axis: a, t: r.t });
  }
  while (axis < dims.length) full(Infinity);
  return items;
}

/** Python's `slice.indices(n)` (also for negative steps): start, step and length. */
function sliceBounds(
  s: { start: number | null; stop: number | null; step: number },
  n: number,
): [number, number, number] {
  const { step } = s;
  let start: number;
  let stop: number;
  if (step > 0) {
    const clamp = (v: number): number => Math.min(n, Math.max(0, v < 0 ? v + n : v));
    start = s.start === null ? 0 : clamp(s.start);
    stop = s.stop === null ? n : clamp(s.stop);
    return [start, step, stop > start ? Math.floor((stop - start - 1) / step) + 1 : 0];
  }
  const clamp = (v: number): number => {
    const w = v < 0 ? v + n : v;
    return w < 0 ? -1 : Math.min(w, n - 1);
  };
  start = s.start === null ? n - 1 : clamp(s.start);
  stop = s.stop === null ? -1 : clamp(s.stop);
  return [start, step, start > stop ? Math.floor((start - stop - 1) / -step) + 1 : 0];
}

// ------------------------------------------------------------------ layout (NumPy's rules)

const isAdv = (it: Item, anyArray: boolean): boolean =>
  it.k === "arr" || it.k === "tensor" || (anyArray && it.k === "int");

/** Broadcasts index shapes (NumPy), or a ShapeError naming them. */
function broadcastIndexShapes(ctx: Ctx, shapes: readonly (readonly number[])[]): number[] {
  const r = Math.max(0, ...shapes.map((s) => s.length));
  const out = new Array<number>(r).fill(1);
  for (const s of shapes) {
    for (let i = 0; i < s.length; i++) {
      const j = r - s.length + i;
      const d = s[i]!;
      if (out[j] === 1) out[j] = d;
      else if (d !== 1 && d !== out[j])
        throw new ShapeError(
          `${ctx.op}: the advanced indices cannot be broadcast together: shapes ${shapes.map((q) => `(${q.join(",")})`).join(", ")} for x ${ctx.x.toString()}`,
        );
    }
  }
  return out;
}

interface Layout {
  /** Advanced items (arrays, tensors, and the integers once an array is present). */
  readonly adv: readonly Item[];
  /** The broadcast shape of the advanced indices (tensors by their base dims). */
  readonly block: readonly number[];
  /** Result dims in order: an item (slice, new) or the advanced block. */
  readonly order: readonly (Item | "adv")[];
}

function layout(ctx: Ctx, items: readonly Item[], at?: number): Layout {
  const anyArray = items.some((it) => it.k === "arr" || it.k === "tensor");
  const adv = items.filter((it) => isAdv(it, anyArray));
  const block =
    adv.length === 0
      ? []
      : broadcastIndexShapes(
          ctx,
          adv.map((it) => (it.k === "arr" ? it.shape : it.k === "tensor" ? it.t.baseShape : [])),
        );
  const order: (Item | "adv")[] = [];
  if (adv.length === 0) {
    for (const it of items) if (it.k === "slice" || it.k === "new") order.push(it);
    return { adv, block, order };
  }
  const lo = Math.min(...adv.map((it) => it.pos));
  const hi = Math.max(...adv.map((it) => it.pos));
  const adjacent = !items.some((it) => !isAdv(it, anyArray) && it.pos > lo && it.pos < hi);
  let placed = false;
  for (const it of items) {
    if (isAdv(it, anyArray)) {
      if (adjacent && !placed && at === undefined) order.push("adv");
      placed = true;
    } else if (it.k === "slice" || it.k === "new") order.push(it);
  }
  if (at !== undefined) order.splice(at, 0, "adv");
  else if (!adjacent) order.unshift("adv");
  return { adv, block, order };
}

// ------------------------------------------------------------------ the flat positions

/** What `resolveBaseIndex` returns. */
export interface ResolvedBaseIndex {
  /**
   * int32 positions into the base of `x` flattened row-major (`x.reshape([baseSize])`),
   * one per element of the result's base: base shape `baseShape`. Its batch dims are
   * those of the int Tensor indices (broadcast together; empty when there are none),
   * which broadcast against x's batch dims. Every entry is in `[0, baseSize)`, except
   * where an int Tensor index is out of range for its axis (outside `[-n, n)`): there
   * it is `baseSize`, which `take` reads as its fill value and a scatter drops.
   */
  readonly flat: Tensor;
  /** The base shape of the result (= `flat.baseShape`). */
  readonly baseShape: readonly number[];
  /** The number of base elements of x (`prod(x.baseShape)`); also the out-of-range marker in `flat`. */
  readonly baseSize: number;
}

function flatOf(ctx: Ctx, dims: readonly number[], items: readonly Item[], lay: Layout): ResolvedBaseIndex {
  const strides = new Array<number>(dims.length);
  let acc = 1;
  for (let d = dims.length - 1; d >= 0; d--) {
    strides[d] = acc;
    acc *= dims[d]!;
  }
  const size = acc;
  const bounds = new Map<Item, [number, number, number]>();
  for (const it of items) if (it.k === "slice") bounds.set(it, sliceBounds(it, dims[it.axis]!));
  const shape: number[] = [];
  let blockAt = -1;
  for (const o of lay.order) {
    if (o === "adv") {
      blockAt = shape.length;
      shape.push(...lay.block);
    } else shape.push(o.k === "new" ? 1 : bounds.get(o)![2]);
  }
  const m = lay.block.length;
  const total = prod(shape);
  const host = new Int32Array(total);
  // Constant part: basic integers (no arrays present), and the basic dims of every result position.
  let base0 = 0;
  for (const it of items) if (it.k === "int" && !lay.adv.includes(it)) base0 += it.i * strides[it.axis]!;
  // Per result dim: (stride in x, start offset) for slices; nothing for new axes.
  const dimTerms: ({ mul: number; add: number } | null)[] = [];
  for (const o of lay.order) {
    if (o === "adv") for (let q = 0; q < m; q++) dimTerms.push(null);
    else if (o.k !== "slice") dimTerms.push(null);
    else {
      const [s, st] = bounds.get(o)!;
      dimTerms.push({ mul: st * strides[o.axis]!, add: s * strides[o.axis]! });
    }
  }
  for (const t of dimTerms) if (t !== null) base0 += t.add;
  const hostAdv = lay.adv.filter((it) => it.k === "arr" || it.k === "int");
  const idx = new Array<number>(shape.length).fill(0);
  for (let f = 0; f < total; f++) {
    let v = base0;
    for (let d = 0; d < shape.length; d++) {
      const t = dimTerms[d];
      if (t) v += idx[d]! * t.mul;
    }
    for (const it of hostAdv) {
      if (it.k === "int") v += it.i * strides[it.axis]!;
      else if (it.k === "arr") {
        // Broadcast the array's shape into the block (right-aligned).
        let off = 0;
        let st = 1;
        for (let q = it.shape.length - 1; q >= 0; q--) {
          const bi = idx[blockAt + m - it.shape.length + q]!;
          off += (it.shape[q] === 1 ? 0 : bi) * st;
          st *= it.shape[q]!;
        }
        v += it.data[off]! * strides[it.axis]!;
      }
    }
    host[f] = v;
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d]! < shape[d]!) break;
      idx[d] = 0;
    }
  }
  let flat = fromTypedArray(host, shape, { copy: false });
  const tensors = lay.adv.filter((it): it is Item & { k: "tensor" } => it.k === "tensor");
  if (tensors.length > 0) {
    let valid: Tensor | null = null;
    for (const it of tensors) {
      const n = dims[it.axis]!;
      const t = it.t;
      const ok = t.ge(-n).logicalAnd(t.lt(n));
      const pos = where(t.lt(0), t.add(n), t).mul(strides[it.axis]!);
      const lift = [
        ...new Array<number>(blockAt).fill(1),
        ...new Array<number>(m - t.baseDim).fill(1),
        ...t.baseShape,
        ...new Array<number>(shape.length - blockAt - m).fill(1),
      ];
      flat = flat.add(pos.reshape(lift));
      valid = valid === null ? ok.reshape(lift) : valid.logicalAnd(ok.reshape(lift));
    }
    flat = where(valid!, flat, size);
    if (flat.baseShape.length !== shape.length || flat.baseShape.some((d, i) => d !== shape[i]))
      flat = flat.expand(shape);
  }
  return { flat, baseShape: shape, baseSize: size };
}

/**
 * Resolves an index list on the base axes of `x` (the list `x.baseIndex(list)`
 * takes) to one int32 tensor of flat positions, so that
 * `x.baseIndex(list)` has the values of `x.reshape([baseSize]).take(flat)`
 * (see `ResolvedBaseIndex` for the contract of `flat`). Works inside `jit`
 * (base shapes are static): integers, slices, arrays and `"..."`/`null` become
 * host constants; int Tensor indices add their (possibly traced) positions;
 * boolean Tensors are read now (eager only, a TraceError inside `jit`).
 * Integer items and integer arrays out of range are a ShapeError here; int
 * Tensor indices out of range give the marker `baseSize` (see `flat`).
 */
export function resolveBaseIndex(x: Tensor, list: IndexList): ResolvedBaseIndex {
  return resolveBase({ op: "resolveBaseIndex", x }, x, list);
}

function resolveBase(ctx: Ctx, x: Tensor, list: IndexList): ResolvedBaseIndex {
  needTensor(ctx.op, x);
  const items = parseList(ctx, list, x.baseShape, "base");
  return flatOf(ctx, x.baseShape, items, layout(ctx, items));
}

function needTensor(op: string, x: unknown): asserts x is Tensor {
  if (!(x instanceof Tensor)) throw new DTypeError(`${op}: x must be a Tensor, got ${describe(x)}`);
}

/** Applies parsed base items: basic items as slice/take/reshape ops, anything advanced through the flat positions. */
function applyBase(ctx: Ctx, x: Tensor, items: readonly Item[], at?: number): Tensor {
  const dims = x.baseShape;
  const lay = layout(ctx, items, at);
  if (lay.adv.length > 0) {
    const r = flatOf(ctx, dims, items, lay);
    return x.reshape([r.baseSize]).take(r.flat, 0);
  }
  // Basic only: slices and integers keep their axis (size 1 for an integer), then one reshape.
  let t = x;
  const shape: number[] = [];
  for (const it of items) {
    if (it.k === "new") shape.push(1);
    else if (it.k === "int") t = t.slice(it.axis, it.i, it.i + 1);
    else if (it.k === "slice") {
      const n = dims[it.axis]!;
      const [s, st, len] = sliceBounds(it, n);
      shape.push(len);
      if (st > 0) {
        if (len === 0) t = t.slice(it.axis, 0, 0);
        else if (!(s === 0 && st === 1 && len === n)) t = t.slice(it.axis, s, s + (len - 1) * st + 1, st);
      } else {
        // A negative step reads the positions s, s+st, … (a take with constant indices).
        const pos = Int32Array.from({ length: len }, (_, q) => s + q * st);
        t = t.take(fromTypedArray(pos, [len], { copy: false }), it.axis);
      }
    }
  }
  const same = t.baseShape.length === shape.length && t.baseShape.every((d, i) => d === shape[i]);
  return same ? t : t.reshape(shape);
}

// ------------------------------------------------------------------ batch items

/** True where a batch item can be applied with batch ops (also on symbolic sizes); a 1-D array as copies. */
function batchBasic(it: Item, dims: readonly number[]): boolean {
  if (it.k === "new" || it.k === "ell" || it.k === "int") return true;
  if (it.k === "slice") return it.step > 0 || dims[it.axis]! >= 0 || ((it.start ?? -1) < 0 && it.stop === null);
  return it.k === "arr" && it.shape.length === 1;
}

/**
 * Whether the batch items can run as batch ops (`applyBatch`): basic items and at most
 * one advanced item, a 1-D integer array, whose dim NumPy leaves where the array is
 * (the integers around it count as advanced, but add no dims).
 */
function batchOpsFit(items: readonly Item[], dims: readonly number[], lay: Layout): boolean {
  if (!items.every((it) => batchBasic(it, dims))) return false;
  const arrs = items.filter((it) => it.k === "arr" || it.k === "tensor");
  if (arrs.length === 0) return true;
  if (arrs.length > 1) return false;
  const before = items.slice(0, items.indexOf(arrs[0]!)).filter((it) => it.k === "slice" || it.k === "new").length;
  return lay.order.indexOf("adv") === before;
}

/** Position i of batch axis `axis` as a size-1 dim (a negative i counts from the end, also on a symbolic size). */
function pick(t: Tensor, axis: number, i: number): Tensor {
  if (i >= 0) return Tensor._op("batch_slice", [t], { axis, start: i, stop: i + 1, step: 1 });
  const back = Tensor._op("batch_slice", [t], { axis, start: -i - 1, stop: -1, step: -1 });
  return Tensor._op("batch_slice", [back], { axis, start: 0, stop: 1, step: 1 });
}

/** Applies basic batch items with batch ops (batch_slice, batch_squeeze, batch_unsqueeze). */
function applyBatch(ctx: Ctx, x: Tensor, items: readonly Item[]): Tensor {
  let t = x;
  const dims = x.batchShape;
  for (const it of items) {
    if (it.k !== "slice" || (it.start === null && it.stop === null && it.step === 1)) continue;
    const n = dims[it.axis]!;
    if (it.step < 0) {
      // batch_slice with a negative step walks from position n-1-start (start counted
      // from the end, so it works on symbolic sizes) down to 0.
      const fromEnd = n >= 0 ? n - 1 - sliceBounds(it, n)[0] : -(it.start ?? -1) - 1;
      t = Tensor._op("batch_slice", [t], {
        axis: it.axis,
        start: n >= 0 ? Math.min(fromEnd, n) : fromEnd,
        stop: -1,
        step: it.step,
      });
      if (n >= 0) {
        const len = sliceBounds(it, n)[2];
        if (t.batchShape[it.axis] !== len) t = t.batchSlice(it.axis, 0, len, 1);
      }
    } else if (n >= 0) {
      const [s, st, len] = sliceBounds(it, n);
      t = t.batchSlice(it.axis, s, s + Math.max(0, len - 1) * st + (len > 0 ? 1 : 0), st);
    } else {
      if ((it.start ?? 0) < 0 || (it.stop ?? 0) < 0)
        throw new TraceError(
          `${ctx.op}: the slice ${it.start ?? ""}:${it.stop ?? ""}:${it.step} on batch dim ${it.axis} has a negative bound, which needs a concrete batch size; x ${ctx.x.toString()} is traced`,
        );
      const start = it.start ?? 0;
      // A stop at or before the start is empty whatever the size; a stop past the size is a
      // ShapeError at the call (a symbolic size cannot be clamped while tracing).
      if (it.stop !== null && it.stop <= start)
        t = Tensor._op("batch_slice", [t], { axis: it.axis, start: 0, stop: 0, step: 1 });
      else t = t.batchSlice(it.axis, start, it.stop ?? undefined, it.step);
    }
  }
  // A 1-D integer array: one block copy per index, concatenated along the axis.
  for (const it of items) {
    if (it.k !== "arr") continue;
    const parts = Array.from(it.data, (i) => pick(t, it.axis, i));
    if (parts.length === 0) t = Tensor._op("batch_slice", [t], { axis: it.axis, start: 0, stop: 0, step: 1 });
    else t = parts.length === 1 ? parts[0]! : Tensor._op("batch_concat", parts, { axis: it.axis });
  }
  // Integers drop their dim, last first so the axes stay put.
  const ints = items.filter((it): it is Item & { k: "int" } => it.k === "int").reverse();
  for (const it of ints) t = Tensor._op("batch_squeeze", [pick(t, it.axis, it.i)], { dim: it.axis });
  // New axes at their place among the result's batch dims.
  let at = 0;
  for (const it of items) {
    if (it.k === "new") t = t.batchUnsqueeze(at++);
    else if (it.k === "slice" || it.k === "arr") at++;
  }
  return t;
}

// ------------------------------------------------------------------ the three entry points

/** Every batch dim of x concrete (eager, or a constant inside jit); else a TraceError saying what needed them. */
function needConcrete(ctx: Ctx, why: string): void {
  if (ctx.x.batchShape.some((d) => d < 0))
    throw new TraceError(
      `${ctx.op}: ${why} needs concrete batch sizes, but x ${ctx.x.toString()} is traced (the IR has no gather along a symbolic batch dim, and a negative-step batch slice of one must start from its end and run to its front); index outside jit, or use batchIndex and baseIndex separately`,
    );
}

/**
 * The general path: every dim moved into the base (concrete sizes), indexed there
 * with NumPy's rules over the whole list, split again after `batchOf(layout, rank)` dims.
 * An int Tensor index on a batch dim is read by its whole shape.
 */
function viaBase(ctx: Ctx, items: readonly Item[], batchOf: (lay: Layout, rank: number) => number): Tensor {
  const x = ctx.x;
  const conv = items.map((it) => {
    if (it.k !== "tensor") return it;
    if (it.t.batchShape.some((d) => d < 0))
      throw new TraceError(
        `${ctx.op}: index[${it.pos}] ${it.t.toString()} is traced; an int Tensor index combined with batch-dim indexing needs concrete sizes`,
      );
    if (it.axis >= x.batchDim && it.t.batchDim > 0)
      throw new ShapeError(
        `${ctx.op}: index[${it.pos}] ${it.t.toString()} has batch dims, which broadcast against x's batch only when the batch dims are indexed by batch ops (integers, slices, null); here the list has advanced indices on batch dims of x ${x.toString()}`,
      );
    return { ...it, t: it.t.rebatch(0) };
  });
  const all = x.rebatch(0);
  const lay = layout(ctx, conv);
  const r = flatOf(ctx, all.baseShape, conv, lay);
  const out = all.reshape([r.baseSize]).take(r.flat, 0);
  return out.rebatch(batchOf(lay, r.baseShape.length));
}

/** `x.baseIndex(list)`: see the Tensor declaration. */
export function baseIndex(x: Tensor, list: IndexList): Tensor {
  const ctx = { op: "baseIndex", x };
  needTensor(ctx.op, x);
  return applyBase(ctx, x, parseList(ctx, list, x.baseShape, "base"));
}

/** `x.batchIndex(list)`: see the Tensor declaration. */
export function batchIndexList(x: Tensor, list: IndexList): Tensor {
  const ctx = { op: "batchIndex", x };
  needTensor(ctx.op, x);
  const dims = x.batchShape;
  const items = parseList(ctx, list, dims, "batch");
  const symbolic = dims.some((d) => d < 0);
  const plain = items.every((it) => batchBasic(it, dims) && it.k !== "arr");
  // Concrete sizes take an advanced index as one gather kernel; symbolic ones as block copies.
  if (plain || (symbolic && batchOpsFit(items, dims, layout(ctx, items)))) return applyBatch(ctx, x, items);
  needConcrete(ctx, describeNeed(items, dims));
  // The base follows the batch items as full slices (after every list position: no adjacency change).
  const base = x.baseShape.map((_, q): Item => ({
    k: "slice",
    pos: Infinity,
    axis: dims.length + q,
    start: null,
    stop: null,
    step: 1,
  }));
  return viaBase(ctx, [...items, ...base], (_, rank) => rank - x.baseDim);
}

function describeNeed(items: readonly Item[], dims: readonly number[]): string {
  const it = items.find((q) => !batchBasic(q, dims));
  if (it?.k === "slice")
    return `index[${it.pos}], a negative-step slice with a stop or a non-negative start on a symbolic batch dim,`;
  if (it !== undefined)
    return `index[${it.pos}], an advanced index on a batch dim that is not a 1-D integer array (nested numbers),`;
  return "an advanced index on a batch dim whose dim NumPy moves to the front, or several advanced indices,";
}

/** `x.index(list)`: see the Tensor declaration. */
export function indexList(x: Tensor, list: IndexList): Tensor {
  const ctx = { op: "index", x };
  needTensor(ctx.op, x);
  const nb = x.batchDim;
  const items = parseList(ctx, list, x.shape, "all");
  // The batch part: every item up to the one consuming the last batch dim.
  let cut = 0;
  if (nb > 0) cut = items.findIndex((it) => "axis" in it && it.axis === nb - 1) + 1;
  const batchPart = items.slice(0, cut);
  const basePart = items.slice(cut);
  const lay = layout(ctx, items);
  const batchDimsOut = batchPart.filter((it) => it.k === "new" || (it.k === "slice" && !lay.adv.includes(it))).length;
  const blockBase = lay.adv.length === 0 || blockInBase(lay, batchPart, batchDimsOut);
  const dims = x.shape;
  const splittable =
    blockBase && batchPart.every((it) => batchBasic(it, dims) && !(it.k === "arr" || it.k === "tensor"));
  // Symbolic sizes: one 1-D array on a batch dim and no other arrays run as block copies.
  const copies =
    !splittable &&
    x.batchShape.some((d) => d < 0) &&
    !basePart.some((it) => it.k === "arr" || it.k === "tensor") &&
    batchOpsFit(batchPart, dims, lay);
  if (copies) {
    const t = applyBatch(ctx, x, batchPart);
    const shifted = basePart.map((it) => ("axis" in it ? { ...it, axis: it.axis - nb } : it));
    return applyBase(ctx, t, shifted);
  }
  if (splittable) {
    const t = applyBatch(ctx, x, batchPart);
    const shifted = basePart.map((it) => ("axis" in it ? { ...it, axis: it.axis - nb } : it));
    // The advanced block lands where NumPy puts it in the whole result, after the batch dims.
    const at = lay.adv.length > 0 ? lay.order.indexOf("adv") - batchDimsOut : undefined;
    return applyBase(ctx, t, shifted, at);
  }
  needConcrete(
    ctx,
    !blockBase ? "an advanced index whose dims land among the batch dims" : describeNeed(batchPart, dims),
  );
  return viaBase(ctx, items, (l) => batchDimsOut + (blockBase ? 0 : l.block.length));
}

/**
 * Whether the advanced block of a whole-shape list belongs to the base: every
 * array index is on a base dim and the block lands after every batch-part dim.
 */
function blockInBase(lay: Layout, batchPart: readonly Item[], batchDimsOut: number): boolean {
  if (batchPart.some((it) => it.k === "arr" || it.k === "tensor")) return false;
  return lay.order.indexOf("adv") >= batchDimsOut;
}
