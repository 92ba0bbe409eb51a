/** Building typed values from scalar components (numbers or Scalars). */
import type { DType } from "../../ir/dtype.js";
import { DTypeError } from "../../ir/errors.js";
import { checkDType, describe, fitsDType } from "../check.js";
import { Tensor } from "../tensor.js";
import type { ScalarLike } from "./base.js";
import { assemble } from "./components.js";

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
