/**
 * The compiled kernels against the reference interpreter (ir/interpret.ts) on
 * the traced graph of every routine: random batches of two sizes, float64.
 */
import { describe, expect, it } from "vitest";
import { jit, linalg, type Tensor } from "../../src/index.js";
import { expectInterpreterAgrees, mats, randomMats, spdMats } from "./helpers.js";

function allOf(a: Tensor, s: Tensor, b: Tensor): Tensor[] {
  const lu = linalg.lu(a);
  const f = linalg.luFactor(a);
  const q = linalg.qr(a);
  const e = linalg.eigh(s);
  const v = linalg.svd(a);
  const l = linalg.lstsq(a, b);
  return [
    linalg.det(a),
    linalg.inv(a),
    linalg.solve(a, b),
    lu.P,
    lu.L,
    lu.U,
    f.LU,
    f.pivots.cast("float64"),
    linalg.cholesky(s),
    q.Q,
    q.R,
    e.eigenvalues,
    e.eigenvectors,
    v.U,
    v.S,
    v.Vh,
    l.solution,
    l.residuals,
    linalg.matrixNorm(a, "nuc"),
    linalg.trace(a),
  ];
}

describe("linalg against the reference interpreter", () => {
  it("every routine on 3×3 batches of two sizes (one trace) matches the interpreter on the traced graph", () => {
    const f = jit(allOf);
    for (const count of [4, 9]) {
      const a = mats(randomMats(count, 3, 3, count), count, 3, 3, "float64");
      const s = mats(spdMats(count, 3, count + 1), count, 3, 3, "float64");
      const b = mats(randomMats(count, 3, 1, count + 2), count, 3, 1, "float64");
      const got = f(a, s, b); // the first call traces f; dump() prints that graph
      expectInterpreterAgrees(f.dump(), [a, s, b], got, count);
    }
    expect(f.stats.traces).toBe(1);
  });
});
