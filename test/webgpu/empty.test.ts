/**
 * Empty batches and bases on WebGPU (see test/helpers/empty.ts): the same results
 * as on JS; a launch with no output elements is a no-op, a reduction over no
 * elements still writes its identity, and zero-length buffers bind.
 */
import { expect, it } from "vitest";
import { fromTypedArray, type Tensor } from "../../src/index.js";
import { checkEmptyBase, checkEmptyBatch, checkEmptyJit } from "../helpers/empty.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { onWebGPU } from "../helpers/on-webgpu.js";

const probe = await probeWebGPUForFile();

describeWebGPU(probe, "empty reductions on WebGPU", (gpu) => {
  const on = (f: () => Promise<void>) => (): Promise<void> => onWebGPU(gpu, f);
  it(
    "over an empty batch axis: sum 0, prod 1, mean NaN, any false, all true; min/max/argmin/argmax a ShapeError",
    on(checkEmptyBatch),
  );
  it(
    "jit: the empty batch is refused at the call that has it",
    on(() =>
      checkEmptyJit(async (f, x) =>
        Array.from(await (await (f as unknown as { callAsync(x: Tensor): Promise<Tensor> }).callAsync(x)).data()),
      ),
    ),
  );
  it("over an empty base axis and an empty base slice", on(checkEmptyBase));
  it(
    "zero-length tensors upload, compute and read back",
    on(async () => {
      const x = fromTypedArray(new Float32Array(0), [0, 3], { batchDim: 1 });
      expect(Array.from(await x.mul(2).data())).toEqual([]);
      expect(Array.from(await x.batchSum().data())).toEqual([0, 0, 0]);
    }),
  );
});
