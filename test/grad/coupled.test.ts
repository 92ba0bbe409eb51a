/**
 * Per-sample Jacobians (jacfwd, jacrev, jacobian, hessian) seed every sample of the
 * batch at once, which is right only when result sample b depends on argument sample
 * b alone. A function that couples samples (a batch reduction, a batch reshape, slice
 * or concatenation, a ragged segment op) used to give silently wrong Jacobians
 * (jacfwd of `x ↦ x.batchMean(0, { keepdim: true }).sum()` was 1 where the derivative
 * is 1/3) or a ShapeError from an internal op. Now the transforms either give the true
 * derivative (one seeded sample: reverse mode with a single result sample, forward
 * mode with a single argument sample) or throw a TraceError naming the coupling.
 * Expected values are by hand.
 */
import { describe, expect, it } from "vitest";
import { TraceError, grad, hessian, jacfwd, jacobian, jacrev, jagged, tensor, type Tensor } from "../../src/index.js";

const x = () =>
  tensor(
    [
      [1, 2],
      [3, 4],
      [5, 6],
    ],
    { batchDim: 1, dtype: "float64" },
  ); // (3; 2)

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

describe("Jacobians of functions that couple batch samples", () => {
  const mean = (t: Tensor) => t.batchMean(0, { keepdim: true }).sum(); // (1;)
  const centre = (t: Tensor) => t.sub(t.batchMean(0, { keepdim: true })); // (3; 2), coupled

  it("jacrev of a single result sample is the true derivative, shaped by the argument's batch", () => {
    const J = jacrev(mean)(x()) as Tensor;
    expect(J.toString()).toBe("(3; 2)");
    expect(J.toArraySync()).toEqual([
      [1 / 3, 1 / 3],
      [1 / 3, 1 / 3],
      [1 / 3, 1 / 3],
    ]);
    // and agrees with grad
    expect((grad(mean)(x()) as Tensor).toArraySync()).toEqual(J.toArraySync());
  });

  it("jacrev of an unbatched result of a batch sum: ones", () => {
    const J = jacrev((t: Tensor) => t.batchSum(0).sum())(x()) as Tensor;
    expect(J.toArraySync()).toEqual([
      [1, 1],
      [1, 1],
      [1, 1],
    ]);
  });

  it.each([
    ["jacfwd", jacfwd],
    ["jacrev", jacrev],
    ["jacobian", jacobian],
  ] as const)("%s of batchMean(…).sum() or centring throws a TraceError naming the coupling", (name, transform) => {
    for (const f of name === "jacfwd" ? [mean, centre] : [centre]) {
      const e = thrown(() => transform(f)(x()));
      expect(e).toBeInstanceOf(TraceError);
      expect((e as Error).message).toMatch(
        new RegExp(`^${name}: f couples the samples of the batch through a reduction over batch axes`),
      );
      expect((e as Error).message).toMatch(/\(3; 2\)/);
      expect((e as Error).message).toMatch(/grad, vjp or jvp/);
    }
  });

  it.each([
    ["batchSlice", (t: Tensor) => t.batchSlice(0, 1, 3), /a slice of the batch \(batchSlice\)/],
    ["batchReshape", (t: Tensor) => t.batchReshape([3, 1]).batchReshape([3]), /a reshape of the batch/],
  ] as const)("jacfwd through %s throws", (_name, f, how) => {
    const e = thrown(() => jacfwd(f)(x()));
    expect(e).toBeInstanceOf(TraceError);
    expect((e as Error).message).toMatch(how);
  });

  it("a ragged segment op on a jagged argument is a coupling", () => {
    const j = jagged([
      tensor(
        [
          [1, 2],
          [3, 4],
        ],
        { batchDim: 1, dtype: "float64" },
      ),
      tensor([[5, 6]], { batchDim: 1, dtype: "float64" }),
    ]);
    const e = thrown(() => jacfwd((v: typeof j) => v.sum())(j));
    expect(e).toBeInstanceOf(TraceError);
    expect((e as Error).message).toMatch(/segment/);
  });

  it("independent samples still work: per-sample Jacobian of x² and the Hessian of a summed loss", () => {
    const J = jacfwd((t: Tensor) => t.mul(t))(x()) as Tensor; // diag(2x) per sample
    expect(J.toArraySync()).toEqual([
      [
        [2, 0],
        [0, 4],
      ],
      [
        [6, 0],
        [0, 8],
      ],
      [
        [10, 0],
        [0, 12],
      ],
    ]);
    // loss = Σ_b Σ_i x_bi³: the per-sample Hessian is diag(6 x_b)
    const H = hessian((t: Tensor) => t.mul(t).mul(t).sum())(x()) as Tensor;
    expect(H.toArraySync()).toEqual([
      [
        [6, 0],
        [0, 12],
      ],
      [
        [18, 0],
        [0, 24],
      ],
      [
        [30, 0],
        [0, 36],
      ],
    ]);
  });

  it("a batch reduction of something that does not depend on the argument is no coupling", () => {
    const c = tensor([[1], [2], [3]], { batchDim: 1, dtype: "float64" });
    const J = jacfwd((t: Tensor) => t.mul(c.batchSum(0)))(x()) as Tensor; // 6 x
    expect(J.toArraySync()).toEqual([
      [
        [6, 0],
        [0, 6],
      ],
      [
        [6, 0],
        [0, 6],
      ],
      [
        [6, 0],
        [0, 6],
      ],
    ]);
  });
});
