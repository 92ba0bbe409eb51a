/**
 * Component algebra: typed formulas are written over the scalar components of
 * a base (each a `(batch;)` tensor picked with `select`) and assembled back with
 * `baseStack`. Inside `jit` such chains fuse into one unrolled kernel with
 * straight-line code per batch element (small bases, shared subexpressions
 * computed once), which a `matmul` or base reduction would not give: those
 * lower to reduction kernels.
 */
import { isFloat, type DType } from "../../ir/dtype.js";
import { baseStack, Tensor } from "../tensor.js";

/** The component `t[i, j, …]` of the base (drops those base axes). */
export function at(t: Tensor, ...idx: number[]): Tensor {
  let x = t;
  for (const i of idx) x = x.select(0, i);
  return x;
}

/** All base components in row-major order. */
export function comps(t: Tensor): Tensor[] {
  const shape = t.baseShape;
  const out: Tensor[] = [];
  const rec = (x: Tensor, d: number): void => {
    if (d === shape.length) {
      out.push(x);
      return;
    }
    for (let i = 0; i < shape[d]!; i++) rec(x.select(0, i), d + 1);
  };
  rec(t, 0);
  return out;
}

/** Components (row-major) back to one tensor of base `shape`; batch shapes broadcast. */
export function assemble(flat: readonly Tensor[], shape: readonly number[]): Tensor {
  if (shape.length === 0) return flat[0]!;
  const [n, ...rest] = shape;
  const block = flat.length / n!;
  const parts: Tensor[] = [];
  for (let i = 0; i < n!; i++) parts.push(assemble(flat.slice(i * block, (i + 1) * block), rest));
  return baseStack(parts, 0);
}

/** Sum of tensors, left to right (no reduction kernel). */
export function sumOf(xs: readonly Tensor[]): Tensor {
  let acc = xs[0]!;
  for (let i = 1; i < xs.length; i++) acc = acc.add(xs[i]!);
  return acc;
}

/** `Σ a[i]·b[i]`. */
export function dotOf(a: readonly Tensor[], b: readonly Tensor[]): Tensor {
  return sumOf(a.map((x, i) => x.mul(b[i]!)));
}

/** The float dtype formulas over `t` compute in (integers compute in float32). */
export function floatOf(t: Tensor): DType {
  return isFloat(t.dtype) ? t.dtype : "float32";
}

/** A scalar constant `(;)` in the dtype of `like` (so float64 keeps its precision). */
export function cst(value: number, like: Tensor | DType): Tensor {
  return Tensor._const(value, typeof like === "string" ? like : floatOf(like));
}

/** The 3×3 components `m[i][j]` of a `(…; 3,3)` tensor. */
export function mat3(t: Tensor): Tensor[][] {
  return [0, 1, 2].map((i) => [0, 1, 2].map((j) => at(t, i, j)));
}

/** The components of a `(…; n)` tensor. */
export function vecOf(t: Tensor): Tensor[] {
  return Array.from({ length: t.baseShape[0]! }, (_, i) => at(t, i));
}

/** `a × b` over components. */
export function cross3(a: readonly Tensor[], b: readonly Tensor[]): Tensor[] {
  return [
    a[1]!.mul(b[2]!).sub(a[2]!.mul(b[1]!)),
    a[2]!.mul(b[0]!).sub(a[0]!.mul(b[2]!)),
    a[0]!.mul(b[1]!).sub(a[1]!.mul(b[0]!)),
  ];
}

/** `A·B` of 3×3 component matrices. */
export function matmul3(a: readonly (readonly Tensor[])[], b: readonly (readonly Tensor[])[]): Tensor[][] {
  return [0, 1, 2].map((i) => [0, 1, 2].map((j) => sumOf([0, 1, 2].map((k) => a[i]![k]!.mul(b[k]![j]!)))));
}

/** `Aᵀ` of a component matrix. */
export function transposeOf<T>(a: readonly (readonly T[])[]): T[][] {
  return a[0]!.map((_, j) => a.map((row) => row[j]!));
}

/** det of a 3×3 component matrix (cofactor expansion along row 0). */
export function det3(m: readonly (readonly Tensor[])[]): Tensor {
  const c = cofactors3(m);
  return dotOf(m[0]!, c[0]!);
}

/** The cofactor matrix `C[i][j] = (-1)^(i+j) M_ij` of a 3×3 component matrix. */
export function cofactors3(m: readonly (readonly Tensor[])[]): Tensor[][] {
  const e = (i: number, j: number) => m[i]![j]!;
  const minor = (r0: number, r1: number, c0: number, c1: number) =>
    e(r0, c0)
      .mul(e(r1, c1))
      .sub(e(r0, c1).mul(e(r1, c0)));
  return [
    [minor(1, 2, 1, 2), minor(1, 2, 2, 0), minor(1, 2, 0, 1)],
    [minor(2, 0, 1, 2), minor(2, 0, 2, 0), minor(2, 0, 0, 1)],
    [minor(0, 1, 1, 2), minor(0, 1, 2, 0), minor(0, 1, 0, 1)],
  ];
}

/** `inverse = adj/det = Cᵀ/det` of a 3×3 component matrix. */
export function inverse3(m: readonly (readonly Tensor[])[]): Tensor[][] {
  const c = cofactors3(m);
  const d = dotOf(m[0]!, c[0]!);
  // One division, then products (as a hand-written inverse does): 9 divisions cost more.
  const r = cst(1, d).div(d);
  return transposeOf(c).map((row) => row.map((x) => x.mul(r)));
}

/** A constant zero of base `base` in the float dtype of `like` (batch `()`; it broadcasts). */
export function zerosOf(like: Tensor | DType, base: readonly number[] = []): Tensor {
  const z = cst(0, like);
  return base.length === 0 ? z : z.expand(base);
}

/** `-x`. */
export function negate(x: Tensor): Tensor {
  return x.neg();
}
