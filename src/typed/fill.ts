/** Building typed values from scalar components (numbers or Scalars). */
import type { DType } from "../../ir/dtype.js";
import { Tensor } from "../tensor.js";
import type { ScalarLike } from "./base.js";
import { assemble } from "./components.js";

/**
 * The dtype a fill computes in: the first Scalar's (they promote in the ops),
 * else `dtype` (default float32).
 */
export function fillDType(values: readonly ScalarLike[], dtype?: DType): DType {
  if (dtype !== undefined) return dtype;
  for (const v of values) if (typeof v !== "number") return v.t.dtype;
  return "float32";
}

/** A `(batch;)` tensor for each value: Scalars as they are (cast to `dtype`), numbers as constants. */
export function scalarsOf(values: readonly ScalarLike[], dtype: DType): Tensor[] {
  return values.map((v) => (typeof v === "number" ? Tensor._const(v, dtype) : v.t.cast(dtype)));
}

/** Components (row-major) into one tensor of base `shape`; batch shapes of Scalars broadcast. */
export function fillFrom(values: readonly ScalarLike[], shape: readonly number[], dtype?: DType): Tensor {
  return assemble(scalarsOf(values, fillDType(values, dtype)), shape);
}
