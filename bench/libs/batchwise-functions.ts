// The functions batchwise's rows jit (libs/batchwise.ts on JS and WebGPU,
// libs/batchwise-wasm.ts on WebAssembly): one definition for every backend.

/** The tensor methods they use (batchwise's Tensor has them). */
export interface BenchTensor<T> {
  neg(): T;
  mul(other: T | number): T;
  add(other: T | number): T;
  sub(other: T | number): T;
  div(other: T | number): T;
  exp(): T;
  sin(): T;
  tanh(): T;
  sqrt(): T;
  sum(axes: number[], opts?: { keepdim?: boolean }): T;
  mean(axes: number[], opts?: { keepdim?: boolean }): T;
  max(axes: number[], opts?: { keepdim?: boolean }): T;
}

/** B1 on (N;): exp(-x*x) * sin(3x) + 0.5x - tanh(x). */
export function b1Chain<T extends BenchTensor<T>>(x: T): T {
  return x.mul(x).neg().exp().mul(x.mul(3).sin()).add(x.mul(0.5)).sub(x.tanh());
}

/** B3 on (clouds; points, 3): subtract the mean point, divide by the max point norm. */
export function b3Normalize<T extends BenchTensor<T>>(x: T): T {
  const centred = x.sub(x.mean([0], { keepdim: true }));
  const norms = centred.mul(centred).sum([1], { keepdim: true }).sqrt();
  return centred.div(norms.max([0], { keepdim: true }));
}
