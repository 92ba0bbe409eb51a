/**
 * The program the no-dispose() soaks (test/src/soak.test.ts on JS, test/webgpu/soak.test.ts)
 * call: two outputs, a reduction and a base-shaped result, at batch sizes from 1 to 500.
 */
import { fromTypedArray, jit, type Tensor } from "../../src/index.js";

/**
 * A fresh jit of f(x, w) = [sum over base of h, h - its batch mean], h = tanh(x·w), and
 * its weight w (4, 3), w[k][j] = ((3k + j) % 5) / 10.
 */
export function soakProgram() {
  const f = jit((x: Tensor, w: Tensor) => {
    const h = x.matmul(w).tanh();
    return [h.sum(0), h.sub(h.batchMean(0, { keepdim: true }))];
  });
  const w = fromTypedArray(
    Float32Array.from({ length: 4 * 3 }, (_, k) => (k % 5) / 10),
    [4, 3],
  );
  return { f, w };
}

const SIZES = [1, 17, 500, 3, 128, 64, 250, 9];

/** Call i's input x (b; 4): b cycles through the soak's batch sizes, every element is v = (i % 7) / 7. */
export function soakInput(i: number): { b: number; v: number; x: Tensor } {
  const b = SIZES[i % SIZES.length]!;
  const v = (i % 7) / 7;
  return { b, v, x: fromTypedArray(new Float32Array(b * 4).fill(v), [b, 4], { batchDim: 1 }) };
}
