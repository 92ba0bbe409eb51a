/**
 * A bundle of a function that takes reverse-mode derivatives records it
 * (`batchesAgree`) and, like the jit function it came from, refuses arguments that
 * broadcast batch dims against each other (the traced gradient cannot sum over such
 * a broadcast); with agreeing batch sizes it gives the gradient written out by hand.
 */
import { describe, expect, it } from "vitest";
import { grad, jit, loadBundle, tensor, UnsupportedOpError, type Tensor } from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";

const f = (p: Tensor, x: Tensor) => p.mul(x).sum().batchSum();
const x = tensor(
  [
    [1, 1, 1],
    [2, 2, 2],
  ],
  { batchDim: 1 },
);

describe("bundles of reverse-mode derivatives", () => {
  it("record batchesAgree and refuse broadcast batch dims; agreeing sizes give d/dp sum(p·x) = x", async () => {
    const h = jit((p: Tensor, y: Tensor) => grad(f)(p, y) as Tensor);
    const p2 = tensor(
      [
        [5, 6, 7],
        [8, 9, 10],
      ],
      { batchDim: 1 },
    );
    h(p2, x);
    const src = h.bundle();
    expect(src).toContain("export const batchesAgree = true;");
    const mod = await importBundle(src);
    const g = (await loadBundle(mod)) as (p: Tensor, y: Tensor) => Tensor;
    expect(g(p2, x).toArraySync()).toEqual([
      [1, 1, 1],
      [2, 2, 2],
    ]);
    expect(() => g(tensor([[5, 6, 7]], { batchDim: 1 }), x)).toThrow(UnsupportedOpError);
    expect(() => g(tensor([[5, 6, 7]], { batchDim: 1 }), x)).toThrow(
      /bundle @.*argument 0 \(1; 3\) and argument 1 \(2; 3\)/,
    );
  });

  it("a bundle without derivatives does not carry the flag", () => {
    const h = jit((p: Tensor, y: Tensor) => p.mul(y));
    h(tensor([[1, 2, 3]], { batchDim: 1 }), x);
    expect(h.bundle()).not.toContain("batchesAgree");
  });
});
