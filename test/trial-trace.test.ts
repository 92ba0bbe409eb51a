import { expect, it } from "vitest";
import { fromTypedArray, jit } from "../src/index.js";
import { Tensor } from "../src/tensor.js";
it("trial routine trace runs through the routine op on the JS backend", () => {
  const x = fromTypedArray(new Float32Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 2, 0, 0, 0, 3, 0, 0, 0, 4]), [2, 3, 3], {
    batchDim: 1,
  });
  const f = jit((a: Tensor) => Tensor._op("routine", [a], { name: "trace", arg: 0 }));
  expect(Array.from(f(x).dataSync())).toEqual([15, 9]);
});
