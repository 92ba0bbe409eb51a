import { expect, it } from "vitest";
import { fromTypedArray, initCpu2, jit, setBackend, type Tensor } from "../src/index.js";
it("TRIAL: a jit function runs on the cpu2 backend", async () => {
  await initCpu2();
  const f = jit((x: Tensor) => x.square().add(1));
  expect(Array.from(f(fromTypedArray(new Float32Array([1, 2, 3]), [3], { batchDim: 1 })).dataSync())).toEqual([
    2, 5, 10,
  ]);
  setBackend("js");
});
