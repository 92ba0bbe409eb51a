/** Building typed values from scalar components (numbers or Scalars). */
import { isFloat, type DType } from "../../ir/dtype.js";
import { DTypeError } from "../../ir/errors.js";
import { checkDType, describe, fitsDType } from "../check.js";
import { Tensor } from "../tensor.js";
import { optDType, PrimitiveTensor, type PrimitiveClass, type ScalarLike, type TypedOptions } from "./base.js";
import { assemble, zerosOf } from "./components.js";

/**
 * The dtype a fill computes in: the first Scalar's (they promote in the ops),
 * else `dtype` (default float32).
 */
export function fillDType(values: readonly ScalarLike[], dtype?: DType, who = "fill"): DType {
  values.forEach((v, i) => {
    const ok =
      typeof v === "number" ||
      (typeof v === "object" && v !== null && (v as { t?: unknown }).t instanceof Tensor && v.t.baseDim === 0);
    if (!ok) throw new DTypeError(`${who}: value ${i} must be a number or a Scalar, got ${describe(v)}`);
  });
  if (dtype !== undefined) return checkDType(who, dtype);
  for (const v of values) if (typeof v !== "number") return v.t.dtype;
  return "float32";
}

/** A `(batch;)` tensor for each value: Scalars as they are (cast to `dtype`), numbers as constants. */
export function scalarsOf(values: readonly ScalarLike[], dtype: DType, who = "fill"): Tensor[] {
  return values.map((v, i) => {
    if (typeof v !== "number") return v.t.cast(dtype);
    if (!fitsDType(v, dtype)) throw new DTypeError(`${who}: value ${i} = ${v} does not fit ${dtype}`);
    return Tensor._const(v, dtype);
  });
}

/** Components (row-major) into one tensor of base `shape`; batch shapes of Scalars broadcast. */
export function fillFrom(values: readonly ScalarLike[], shape: readonly number[], dtype?: DType, who = "fill"): Tensor {
  return assemble(scalarsOf(values, fillDType(values, dtype, who), who), shape);
}

/**
 * `C.fill(...)` of a type whose components are given in storage order (Vec, Rot, WR2,
 * Quaternion, MillerIndex). The dtype is `opts.dtype`, else for a float type the first
 * Scalar's (default float32), for an integer type its `DEFAULT_DTYPE`.
 */
export function fillAs<T>(C: PrimitiveClass<T>, values: readonly ScalarLike[], opts: TypedOptions): T {
  const who = `${C.NAME}.fill`;
  const dtype = optDType(who, opts) ?? (isFloat(C.DEFAULT_DTYPE) ? undefined : C.DEFAULT_DTYPE);
  return new C(fillFrom(values, C.BASE, dtype, who));
}

/** Splits `fill`'s rest arguments into the values and a trailing options object. */
export function splitFillArgs(args: readonly (ScalarLike | TypedOptions | undefined)[]): {
  values: ScalarLike[];
  opts: TypedOptions;
} {
  const list = args.filter((a) => a !== undefined);
  const last = list[list.length - 1];
  const isOpts = last !== undefined && typeof last === "object" && !(last instanceof PrimitiveTensor);
  return { values: (isOpts ? list.slice(0, -1) : list) as ScalarLike[], opts: isOpts ? (last as TypedOptions) : {} };
}

/**
 * The values of an overloaded `fill(...values, opts?)` (R2, SR2) as `(batch;)` tensors of
 * one dtype (see `fillDType`), with a zero of that dtype for the components they leave out.
 */
export function fillArgs(
  who: string,
  args: readonly (ScalarLike | TypedOptions | undefined)[],
): { v: Tensor[]; z: Tensor } {
  const { values, opts } = splitFillArgs(args);
  const dtype = fillDType(values, optDType(who, opts), who);
  return { v: scalarsOf(values, dtype, who), z: zerosOf(dtype) };
}
