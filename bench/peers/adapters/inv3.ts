// Closed-form 3×3 inverse and determinant over any "array of values" type, so
// every tensor peer runs the same cofactor formula as the hand-written loop
// (entries a..i row-major; inv = adj / det).

export interface Arith<T> {
  mul(x: T, y: T): T;
  sub(x: T, y: T): T;
  add(x: T, y: T): T;
  div(x: T, y: T): T;
}

/** `m` holds the 9 entries (each a batch of values); returns 9 inverse entries and det. */
export function inverse3<T>(ops: Arith<T>, m: readonly T[]): { inv: T[]; det: T } {
  const [a, b, c, d, e, f, g, h, i] = m as [T, T, T, T, T, T, T, T, T];
  const { mul, sub, add, div } = ops;
  const c00 = sub(mul(e, i), mul(f, h));
  const c01 = sub(mul(f, g), mul(d, i));
  const c02 = sub(mul(d, h), mul(e, g));
  const det = add(add(mul(a, c00), mul(b, c01)), mul(c, c02));
  const adj = [
    c00,
    sub(mul(c, h), mul(b, i)),
    sub(mul(b, f), mul(c, e)),
    c01,
    sub(mul(a, i), mul(c, g)),
    sub(mul(c, d), mul(a, f)),
    c02,
    sub(mul(b, g), mul(a, h)),
    sub(mul(a, e), mul(b, d)),
  ];
  return { inv: adj.map((v) => div(v, det)), det };
}
