/**
 * How a tensor shows itself: `t.format()`, `t.print()` and Node's `util.inspect`
 * (`console.log(t)`), NumPy-style:
 * ```
 * Tensor float32 (2; 3) js
 * [[1., 2., 3.],
 *  [4., 5., 6.]]
 * ```
 * A header (the kind, dtype, `(batch; base)` shape and where the values are) and, when
 * they can be read now, the values: nested brackets by shape, past `threshold`
 * elements only `edgeitems` at each end of every dim with `…` between. A lazy
 * tensor is not computed unless asked (`values: true`, or `print()`), so looking at
 * a tensor never runs a kernel. No `node:` import: this ships to browsers.
 */
import { castScalar, isFloat, type DType } from "../ir/dtype.js";
import { fmtShape, isConcrete } from "../ir/types.js";
import { DTypeError } from "../ir/errors.js";
import { checkInt, describe } from "./check.js";
import { getBackend } from "./backend.js";
import type { Tensor } from "./tensor.js";

/**
 * Gives a class Node's `util.inspect` (`console.log(x)`) by the `Symbol.for` key of
 * `util.inspect.custom` (so no `node:util` import). On the prototype, not a class
 * member, so that `keyof Tensor` stays the method names.
 * @internal
 */
export function defineInspect<T>(
  cls: { prototype: T },
  show: (x: T, depth: number | null | undefined) => string,
): void {
  Object.defineProperty(cls.prototype, Symbol.for("nodejs.util.inspect.custom"), {
    value(this: T, depth?: number | null) {
      return show(this, depth);
    },
    writable: true,
    configurable: true,
  });
}

/** Options of `format` and `print`. */
export interface FormatOptions {
  /**
   * Compute a lazy tensor to show its values (`format` on backends that run
   * synchronously: JS, WebAssembly). Default false: a lazy tensor shows that it is
   * lazy and nothing runs. `print()` always computes.
   */
  readonly values?: boolean;
  /** Summarise a tensor of more than this many elements (default 1000, as NumPy). */
  readonly threshold?: number;
  /** Items shown at each end of a summarised dim (default 3, as NumPy). */
  readonly edgeitems?: number;
  /** Most significant digits of a float (default 8); fewer when fewer give the same value back. */
  readonly precision?: number;
  /** Rows of values wrap at this many characters (default 75, as NumPy). */
  readonly linewidth?: number;
}

interface Opts {
  readonly values: boolean;
  readonly threshold: number;
  readonly edgeitems: number;
  readonly precision: number;
  readonly linewidth: number;
}

/** @internal Checked options, defaults filled in (`op` names the method in errors). */
export function formatOptions(op: string, o: FormatOptions | undefined): Opts {
  if (o === undefined || o === null) o = {};
  if (typeof o !== "object" || Array.isArray(o))
    throw new DTypeError(`${op}: options must be an object such as { values: true }, got ${describe(o)}`);
  if (o.values !== undefined && typeof o.values !== "boolean")
    throw new DTypeError(`${op}: options.values must be true or false, got ${describe(o.values)}`);
  const int = (name: keyof FormatOptions, v: unknown, def: number, min: number, max = Infinity): number =>
    v === undefined ? def : v === Infinity && max === Infinity ? v : checkInt(op, `options.${name}`, v, min, max);
  return {
    values: o.values ?? false,
    threshold: int("threshold", o.threshold, 1000, 0),
    edgeitems: int("edgeitems", o.edgeitems, 3, 1),
    precision: int("precision", o.precision, 8, 1, 17),
    linewidth: int("linewidth", o.linewidth, 75, 1),
  };
}

/** What a display says about where a tensor's values are, and the values when they can be read now. */
function state(t: Tensor, compute: boolean): { where: string; data?: ArrayLike<number> } {
  const s = t._src;
  if (s.kind === "disposed") return { where: "disposed" };
  if (s.kind === "param" || !isConcrete(t._type.batch)) return { where: "traced (no values inside jit)" };
  if (s.kind === "lazy") {
    const b = getBackend();
    if (!compute) return { where: `lazy (${s.op}; print() computes it)` };
    if (!b.syncCompile || b.readSync === undefined)
      return { where: `lazy (${s.op}; on ${b.name}: await print() computes it)` };
  } else if (s.backend.readSync === undefined) {
    return { where: `${s.backend.name} (on the device: await print() reads it)` };
  }
  // No copy: only the shown elements are read.
  const data = t.dataSync({ copy: false });
  return { where: (t._src as { backend: { name: string } }).backend.name, data };
}

/**
 * The display of `t` (`kind` names a typed tensor's type: `R2 float32 (5; 3,3) js`).
 * `data`, when given, are its values (read asynchronously by `print`).
 * @internal
 */
export function formatTensor(t: Tensor, o: Opts, kind = "Tensor", data?: ArrayLike<number>): string {
  const head = `${kind} ${t.dtype} ${fmtShape(t._type.batch, t._type.base)}`;
  let where: string;
  if (data !== undefined) {
    where = t._src.kind === "buffer" ? t._src.backend.name : "";
  } else {
    try {
      ({ where, data } = state(t, o.values));
    } catch (e) {
      // Looking at a tensor never throws (console.log in a catch block must work).
      return `${head} (values unavailable: ${e instanceof Error ? e.message : String(e)})`;
    }
  }
  const line = `${head} ${where}`;
  if (data === undefined) return line;
  const v = formatValues(data, t.shape, t.dtype, o);
  return !v.includes("\n") && line.length + 1 + v.length <= o.linewidth ? `${line} ${v}` : `${line}\n${v}`;
}

/**
 * `print()`: logs the display with the values, computing a lazy tensor (reading
 * asynchronously from a device or a backend that compiles asynchronously).
 * @internal
 */
export async function printTensor(t: Tensor, opts: FormatOptions | undefined, kind = "Tensor"): Promise<void> {
  const o = { ...formatOptions(`${kind === "Tensor" ? "" : `${kind}.`}print`, opts), values: true };
  const s = t._src;
  const b = getBackend();
  const readLater =
    isConcrete(t._type.batch) &&
    ((s.kind === "lazy" && (!b.syncCompile || b.readSync === undefined)) ||
      (s.kind === "buffer" && s.backend.readSync === undefined));
  // Without an await on the way, this logs before print() returns.
  console.log(readLater ? formatTensor(t, o, kind, await t.data()) : formatTensor(t, o, kind));
}

/** Node's `util.inspect` of a tensor: the display without computing; the header alone past inspect's depth. @internal */
export function inspectTensor(t: Tensor, depth: number | null | undefined, kind = "Tensor"): string {
  if (typeof depth === "number" && depth < 0) return `[${kind} ${t.dtype} ${fmtShape(t._type.batch, t._type.base)}]`;
  return formatTensor(t, formatOptions("inspect", {}), kind);
}

/** A jagged tensor: its shape, then its packed values and offsets (indented). @internal */
export function formatJagged(
  j: { readonly values: Tensor; readonly offsets: Tensor; toString(): string },
  opts: FormatOptions | undefined,
): string {
  const o = formatOptions("JaggedTensor.format", opts);
  const indent = (s: string) => s.replace(/\n/g, "\n  ");
  return [
    `JaggedTensor ${j.values.dtype} ${j.toString()}`,
    `  values: ${indent(formatTensor(j.values, o))}`,
    `  offsets: ${indent(formatTensor(j.offsets, o))}`,
  ].join("\n");
}

/** The indices shown along a dim of size n: all, or the ends with -1 for the `…`. */
function shownIndices(n: number, summarise: boolean, e: number): number[] {
  if (!summarise || n <= 2 * e) return Array.from({ length: n }, (_, i) => i);
  return [...Array.from({ length: e }, (_, i) => i), -1, ...Array.from({ length: e }, (_, i) => n - e + i)];
}

/** One element's text: JS spellings for the special values (NaN, Infinity, -0). */
function elementFormatter(values: readonly number[], dtype: DType, precision: number): (v: number) => string {
  if (dtype === "bool") return (v) => (v !== 0 ? "true" : "false");
  if (!isFloat(dtype)) return (v) => String(v);
  // Scientific notation for the whole tensor when a finite value is large or tiny (NumPy's rule).
  let sci = false;
  for (const v of values) {
    const a = Math.abs(v);
    if (Number.isFinite(a) && a !== 0 && (a >= 1e8 || a < 1e-4)) sci = true;
  }
  return (v) => {
    if (Number.isNaN(v)) return "NaN";
    if (v === Infinity) return "Infinity";
    if (v === -Infinity) return "-Infinity";
    const neg = v < 0 || Object.is(v, -0) ? "-" : "";
    const a = Math.abs(v);
    // The fewest significant digits that give the same value back in this dtype.
    let p = 1;
    while (p < precision && castScalar(Number(a.toPrecision(p)), dtype) !== a) p++;
    if (sci) return `${neg}${a.toExponential(p - 1)}`;
    const s = String(Number(a.toPrecision(p)));
    return `${neg}${s}${s.includes(".") ? "" : "."}`;
  };
}

/** The values of a tensor of `shape`, row-major in `data`, as nested brackets. */
function formatValues(data: ArrayLike<number>, shape: readonly number[], dtype: DType, o: Opts): string {
  const rank = shape.length;
  const size = shape.reduce((a, b) => a * b, 1);
  if (size === 0) return "[]";
  const summarise = size > o.threshold;
  const idx = shape.map((n) => shownIndices(n, summarise, o.edgeitems));
  const strides = shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * b, 1));
  // The shown elements first: the format (fixed or scientific) and the width depend on them only.
  const shown: number[] = [];
  const gather = (d: number, off: number): void => {
    if (d === rank) shown.push(data[off]!);
    else for (const i of idx[d]!) if (i >= 0) gather(d + 1, off + i * strides[d]!);
  };
  gather(0, 0);
  const fmt = elementFormatter(shown, dtype, o.precision);
  const texts = shown.map(fmt);
  const width = Math.max(...texts.map((s) => s.length));
  let k = 0;
  const next = (): string => texts[k++]!.padStart(width);
  if (rank === 0) return texts[0]!;
  const rec = (d: number): string => {
    if (d === rank - 1) {
      // One row, wrapped at linewidth; continuation lines align with the first element.
      const items = idx[d]!.map((i) => (i < 0 ? "…" : next()));
      const lines: string[] = [];
      let cur = "";
      for (const [j, item] of items.entries()) {
        const piece = j < items.length - 1 ? `${item},` : item;
        if (cur !== "" && rank + cur.length + 1 + piece.length > o.linewidth) {
          lines.push(cur);
          cur = piece;
        } else cur = cur === "" ? piece : `${cur} ${piece}`;
      }
      lines.push(cur);
      return `[${lines.join(`\n${" ".repeat(rank)}`)}]`;
    }
    const sep = `,${"\n".repeat(rank - d - 1)}${" ".repeat(d + 1)}`;
    return `[${idx[d]!.map((i) => (i < 0 ? "…" : rec(d + 1))).join(sep)}]`;
  };
  return rec(0);
}
