/** TensorDict fixtures shared by the tensordict tests. */
import { tensor, TensorDict } from "../../src/index.js";

/**
 * Two TensorDicts of batch size [2] whose entry `key` is (2, 1;) = [[1], [2]] and
 * (2, 3;) = [[3, 4, 5], [6, 7, 8]]: their dim 1 differs, past the shared batch dims.
 */
export function pastBatchDimPair(key: string): [TensorDict, TensorDict] {
  const a = new TensorDict({ [key]: tensor([[1], [2]], { batchDim: 2 }) }, [2]);
  const b = new TensorDict(
    {
      [key]: tensor(
        [
          [3, 4, 5],
          [6, 7, 8],
        ],
        { batchDim: 2 },
      ),
    },
    [2],
  );
  return [a, b];
}
