/**
 * Reverse mode inside jit and batch broadcasting: eagerly, the gradient with
 * respect to a (1; 3) argument that broadcasts against a (3; 3) one is summed over
 * the broadcast (shape (1; 3), as JAX). Inside jit that broadcast is decided only
 * at run time, so the call is refused with a typed error instead of returning a
 * per-sample (3; 3) gradient. Values written out by hand.
 */
import { describe, expect, it } from "vitest";
import { grad, jit, tensor, UnsupportedOpError, type Tensor } from "../../src/index.js";

const f = (p: Tensor, x: Tensor) => p.mul(x).sum().batchSum();
const x = tensor(
  [
    [1, 1, 1],
    [2, 2, 2],
    [3, 3, 3],
  ],
  { batchDim: 1 },
);

describe("grad inside jit with broadcast batch dims", () => {
  it("eagerly sums over the broadcast: d/dp sum(p·x) = Σ_b x_b", () => {
    const g = grad(f)(tensor([[1, 2, 3]], { batchDim: 1 }), x) as Tensor;
    expect(g.shape).toEqual([1, 3]);
    expect(g.toArraySync()).toEqual([[6, 6, 6]]);
  });

  it("inside jit refuses a size-1 batch dim against a larger one, naming both shapes", () => {
    const h = jit((p: Tensor, y: Tensor) => grad(f)(p, y) as Tensor);
    expect(() => h(tensor([[1, 2, 3]], { batchDim: 1 }), x)).toThrow(UnsupportedOpError);
    expect(() => h(tensor([[1, 2, 3]], { batchDim: 1 }), x)).toThrow(/argument 0 \(1; 3\) and argument 1 \(3; 3\)/);
  });

  it("inside jit agrees with eager when the batch dims agree or the parameter has none", () => {
    const h = jit((p: Tensor, y: Tensor) => grad(f)(p, y) as Tensor);
    const same = h(
      tensor(
        [
          [1, 2, 3],
          [4, 5, 6],
          [7, 8, 9],
        ],
        { batchDim: 1 },
      ),
      x,
    );
    expect(same.toArraySync()).toEqual([
      [1, 1, 1],
      [2, 2, 2],
      [3, 3, 3],
    ]);
    const none = h(tensor([1, 2, 3]), x);
    expect(none.shape).toEqual([3]);
    expect(none.toArraySync()).toEqual([6, 6, 6]);
  });
});
