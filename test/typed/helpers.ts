/** Helpers for the typed-tensor tests: NEML2's four batched/unbatched combinations. */
import { expect } from "vitest";
import type { PrimitiveTensor } from "../../src/typed/index.js";

/** NEML2's test batch shape. */
export const B = [5, 3, 1, 2] as const;

type Typed = PrimitiveTensor<unknown>;

/** `x` batch-expanded to B (NEML2's `batch_expand(B)`). */
export function bx<T extends Typed>(x: T): T {
  return x.batchExpand(B) as T;
}

/** Flat values of a typed value. */
export function vals(x: Typed): number[] {
  return Array.from(x.dataSync(), Number);
}

/** Every element of `actual` is close to the (repeated) `expected` values. */
export function expectClose(actual: Typed, expected: readonly number[], tol = 1e-5): void {
  const a = vals(actual);
  expect(a.length % expected.length).toBe(0);
  for (let i = 0; i < a.length; i++) {
    const e = expected[i % expected.length]!;
    if (Math.abs(a[i]! - e) > tol * Math.max(1, Math.abs(e))) {
      throw new Error(`element ${i}: ${a[i]} vs expected ${e} (tol ${tol})`);
    }
  }
}

/**
 * Runs `op(a, b)` for the four combinations (a, b each unbatched or batch-expanded
 * to B) and checks the batch shape and the values against `expected`.
 */
export function fourWays<A extends Typed, C extends Typed, R extends Typed>(
  a: A,
  b: C,
  op: (a: A, b: C) => R,
  expected: readonly number[],
  tol = 1e-5,
): void {
  for (const [x, y, batched] of [
    [a, b, false],
    [bx(a), b, true],
    [a, bx(b), true],
    [bx(a), bx(b), true],
  ] as const) {
    const r = op(x as A, y as C);
    expect(r.batchShape).toEqual(batched ? [...B] : []);
    expectClose(r, expected, tol);
  }
}

/** `op(a)` unbatched and batch-expanded. */
export function twoWays<A extends Typed, R extends Typed>(
  a: A,
  op: (a: A) => R,
  expected: readonly number[],
  tol = 1e-5,
): void {
  for (const [x, batched] of [
    [a, false],
    [bx(a), true],
  ] as const) {
    const r = op(x);
    expect(r.batchShape).toEqual(batched ? [...B] : []);
    expectClose(r, expected, tol);
  }
}

/** Row-major 3×3 product of plain arrays. */
export function mm3(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) out.push(a[i * 3]! * b[j]! + a[i * 3 + 1]! * b[3 + j]! + a[i * 3 + 2]! * b[6 + j]!);
  return out;
}

export function transpose3(a: readonly number[]): number[] {
  return [0, 3, 6, 1, 4, 7, 2, 5, 8].map((k) => a[k]!);
}

export const I3 = [1, 0, 0, 0, 1, 0, 0, 0, 1];
