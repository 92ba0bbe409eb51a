/**
 * Typed `mul`/`div` without a typed product for the argument's type take a Scalar or a
 * number only. They accepted any typed value at run time (plain JS, or a cast), which
 * broadcast into an elementwise product: `SR2.fill(1,2,3).mul(SR2.fill(1,2,3))` was an
 * SR2 [1,4,9,0,0,0], a silently wrong answer. Typed products that exist still work.
 */
import { describe, expect, it } from "vitest";
import { DTypeError, R2, Scalar, SR2, tensor, Vec } from "../../src/index.js";

describe("typed scaling takes a Scalar or a number", () => {
  it.each([
    ["SR2.mul", () => SR2.fill(1, 2, 3).mul(SR2.fill(1, 2, 3) as never)],
    ["Vec.mul", () => Vec.fill(1, 2, 3).mul(Vec.fill(1, 2, 3) as never)],
    ["Vec.div", () => Vec.fill(1, 2, 3).div(Vec.fill(1, 2, 3) as never)],
    ["R2.mul", () => R2.fill(1, 2, 3).mul(SR2.fill(1, 2, 3) as never)],
  ])("%s of a typed value without a product is a DTypeError", (op, f) => {
    expect(f).toThrow(DTypeError);
    expect(f).toThrow(new RegExp(`^${op.replace(".", "\\.")}: y must be a Scalar or a number`));
  });

  it("Scalars, numbers and the typed products still work (by hand)", () => {
    expect(
      SR2.fill(1, 2, 3)
        .mul(new Scalar(tensor(2)))
        .t.toArraySync(),
    ).toEqual([2, 4, 6, 0, 0, 0]);
    expect(Vec.fill(1, 2, 3).div(2).t.toArraySync()).toEqual([0.5, 1, 1.5]);
    // R2 diag(1,2,3) · (1,1,1) = (1,2,3)
    expect(
      R2.fill(1, 2, 3)
        .mul(Vec.fill(1, 1, 1))
        .t.toArraySync(),
    ).toEqual([1, 2, 3]);
  });
});
