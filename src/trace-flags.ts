/**
 * Process-wide facts that `jit` reads around a trace without importing the modules
 * that set them. Reverse-mode sweeps (grad, vjp, jacrev, jacobian, hessian) count
 * themselves here, so a jit function knows whether its trace contains one: such a
 * trace sums cotangents over broadcast batch dims only where the broadcast is
 * visible when tracing, so jit refuses calls whose arguments broadcast batch dims
 * against each other (docs/ARCHITECTURE.md, Derivatives).
 */
let reverseSweeps = 0;

/** Called by every reverse-mode sweep. */
export function noteReverseSweep(): void {
  reverseSweeps++;
}

/** How many reverse-mode sweeps have run in this process. */
export function reverseSweepCount(): number {
  return reverseSweeps;
}
