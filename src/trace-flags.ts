/**
 * Process-wide facts that `jit` reads around a trace without importing the modules
 * that set them. Reverse-mode sweeps (grad, vjp, jacrev, jacobian, hessian) count
 * themselves here, so a jit function knows whether its trace contains one: such a
 * trace sums cotangents over broadcast batch dims only where the broadcast is
 * visible when tracing, so jit refuses calls whose arguments broadcast batch dims
 * against each other, and so do bundles of such functions (docs/ARCHITECTURE.md,
 * Derivatives).
 */
import { UnsupportedOpError } from "../ir/errors.js";
import { fmtShape } from "../ir/types.js";
import type { Tensor } from "./tensor.js";

let reverseSweeps = 0;

/** Called by every reverse-mode sweep. */
export function noteReverseSweep(): void {
  reverseSweeps++;
}

/** How many reverse-mode sweeps have run in this process. */
export function reverseSweepCount(): number {
  return reverseSweeps;
}

/**
 * A trace holding a reverse-mode sweep sums cotangents over a broadcast batch dim
 * only where the broadcast was visible when tracing (a missing dim); a dim of size
 * 1 against a larger one is decided at run time, where the traced derivative would
 * stay per sample instead of summing, unlike the eager result. Such calls are
 * refused rather than answered differently.
 */
export function checkBatchesAgree(who: string, leaves: string, args: readonly Tensor[]): void {
  // `leaves`: one code per flattened leaf (`leafKinds`): "t" a tensor, "j" a jagged tensor (two
  // tensors: values, offsets), whose batch dims are its own; plain tensors are compared.
  const plain: number[] = [];
  for (let i = 0, k = 0; i < leaves.length; i++) {
    if (leaves[i] === "j") k += 2;
    else plain.push(k++);
  }
  const rank = Math.max(0, ...plain.map((i) => args[i]!.batchDim));
  for (let d = 1; d <= rank; d++) {
    let first: number | undefined;
    for (const i of plain) {
      const a = args[i]!;
      if (a.batchDim < d) continue;
      const size = a.batchShape[a.batchDim - d]!;
      if (first === undefined) first = i;
      else {
        const f = args[first]!;
        const fs = f.batchShape[f.batchDim - d]!;
        if (fs !== size) {
          const shape = (t: Tensor) => fmtShape(t.batchShape, t.baseShape);
          throw new UnsupportedOpError(
            `${who}: takes reverse-mode derivatives, so argument ${first} ${shape(f)} and argument ${i} ${shape(a)} ` +
              `must agree in batch dim ${f.batchDim - d} of the first (${fs} vs ${size}): ` +
              `expand the smaller one (batchExpand) or differentiate outside jit`,
          );
        }
      }
    }
  }
}
