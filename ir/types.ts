/**
 * Tensor types: a dtype, a batch shape whose dims may be symbolic, and a static
 * base shape (docs/ARCHITECTURE.md, Shapes and types).
 */
import { DTYPE_SHORT, type DType } from "./dtype.js";
import { ShapeError } from "./errors.js";

/** A batch dim: a size, or a symbol (`b0`, `b0*b1`, …) whose size is known at run time. */
export type Dim = number | string;

/** A tensor's type in the IR: dtype, batch dims (sizes or symbols) and static base shape, `(batch; base)`. */
export interface TensorType {
  /** The element type. */
  readonly dtype: DType;
  /** The batch dims: sizes, or symbols inside a trace. */
  readonly batch: readonly Dim[];
  /** The static base shape. */
  readonly base: readonly number[];
}

export function tensorType(dtype: DType, batch: readonly Dim[], base: readonly number[]): TensorType {
  return { dtype, batch: [...batch], base: [...base] };
}

/** NEML2 notation: `(3,100,5; 13,2)`, `(;3,3)`, `(4,5;)`, `(;)`. */
export function fmtShape(batch: readonly Dim[], base: readonly Dim[]): string {
  const b = batch.join(",");
  const s = base.join(",");
  return `(${b};${b && s ? " " : ""}${s})`;
}

export function fmtTypeShape(t: TensorType): string {
  return fmtShape(t.batch, t.base);
}

/** IR notation: `f32[b0,b1; 3,3]`. */
export function fmtType(t: TensorType): string {
  return `${DTYPE_SHORT[t.dtype]}[${t.batch.join(",")}; ${t.base.join(",")}]`;
}

export function typesEqual(a: TensorType, b: TensorType): boolean {
  return fmtType(a) === fmtType(b);
}

export function isConcrete(dims: readonly Dim[]): dims is readonly number[] {
  return dims.every((d) => typeof d === "number");
}

export function prod(dims: readonly number[]): number {
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

/** The broadcast of two dims, or null when they cannot meet. Symbols are checked at run time. */
export function broadcastDim(a: Dim, b: Dim): Dim | null {
  if (a === b) return a;
  if (a === 1) return b;
  if (b === 1) return a;
  if (typeof a === "number" && typeof b === "number") return null;
  if (typeof a === "number") return a;
  if (typeof b === "number") return b;
  return [a, b].sort().join("|");
}

/**
 * Broadcasts shapes aligned from the right (NumPy). Returns the result or the
 * index (in the result) of the first dim that does not meet.
 */
export function broadcastShapes<D extends Dim>(
  a: readonly D[],
  b: readonly D[],
): { ok: true; shape: D[] } | { ok: false; dim: number; a: D; b: D } {
  const n = Math.max(a.length, b.length);
  const out = new Array<D>(n);
  for (let i = 0; i < n; i++) {
    const da = a[a.length - n + i];
    const db = b[b.length - n + i];
    if (da === undefined) out[i] = db!;
    else if (db === undefined) out[i] = da;
    else {
      const r = broadcastDim(da, db);
      if (r === null) return { ok: false, dim: i, a: da, b: db };
      out[i] = r as D;
    }
  }
  return { ok: true, shape: out };
}

/** Broadcasts several tensor types (batch against batch, base against base), or throws a ShapeError. */
export function broadcastTypes(
  op: string,
  args: readonly { name: string; type: TensorType }[],
): { batch: Dim[]; base: number[] } {
  let batch: Dim[] = [];
  let base: number[] = [];
  let first = args[0]!;
  for (const [i, arg] of args.entries()) {
    const rb = broadcastShapes<Dim>(batch, arg.type.batch);
    if (!rb.ok) {
      throw new ShapeError(
        `${op}: cannot broadcast ${first.name} ${fmtTypeShape(first.type)} with ${arg.name} ${fmtTypeShape(arg.type)}: batch dim ${rb.dim} is ${rb.a} vs ${rb.b}`,
      );
    }
    const rs = broadcastShapes<number>(base, arg.type.base);
    if (!rs.ok) {
      throw new ShapeError(
        `${op}: cannot broadcast ${first.name} ${fmtTypeShape(first.type)} with ${arg.name} ${fmtTypeShape(arg.type)}: base dim ${rs.dim} is ${rs.a} vs ${rs.b}`,
      );
    }
    batch = rb.shape;
    base = rs.shape;
    if (i === 0) first = arg;
  }
  return { batch, base };
}
