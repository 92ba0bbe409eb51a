/** Empty batches and bases on the JS backend, eager and jit (see test/helpers/empty.ts). */
import { describe, it } from "vitest";
import { checkEmptyBase, checkEmptyBatch, checkEmptyJit } from "../helpers/empty.js";

describe("empty reductions on JS", () => {
  it(
    "over an empty batch axis: sum 0, prod 1, mean NaN, any false, all true; min/max/argmin/argmax a ShapeError",
    checkEmptyBatch,
  );
  it("jit: the empty batch is refused at the call that has it", () =>
    checkEmptyJit(async (f, x) => Array.from(await f(x).data())));
  it("over an empty base axis and an empty base slice", checkEmptyBase);
});
