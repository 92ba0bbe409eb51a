/**
 * Writes the bundle test/runtime/runtime-entry.test.ts loads, in a process of its
 * own, so that the test's process never imports the compiler (the full entry).
 * f(x) = [sum over the base of 2x + c, max over the base of x], c = [1, 2, 3] captured.
 */
import { jit, tensor, type Tensor } from "../../src/index.js";

const c = tensor([1, 2, 3]);
const f = jit((x: Tensor) => [x.mul(2).add(c).sum(-1), x.max(-1)]);
f(tensor([[0, 0, 0]], { batchDim: 1 }));
process.stdout.write(f.bundle());
