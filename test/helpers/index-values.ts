/** Small values the indexing tests (take, scatter, index lists) share. */
import { tensor, type Tensor } from "../../src/index.js";

/** An int32 tensor of `data` (indices) with `batchDim` batch dims. */
export const I = (data: Parameters<typeof tensor>[0], batchDim = 0): Tensor =>
  tensor(data, { dtype: "int32", batchDim });

/** Values with -0 spelled out, so that a sign error fails. */
export const bits = (a: ArrayLike<number>): string[] => Array.from(a, (v) => (Object.is(v, -0) ? "-0" : String(v)));

export const INT_MIN = -2147483648;
export const INT_MAX = 2147483647;
export const UINT_MAX = 4294967295;

/** The (2; 3) float32 tensor [[1, 2, 3], [4, 5, 6]], made on the current backend. */
export const rows2x3 = (): Tensor =>
  tensor(
    [
      [1, 2, 3],
      [4, 5, 6],
    ],
    { batchDim: 1 },
  );
