/**
 * Short reductions (at most 16 elements, which fusion inlines into the consumer's
 * expression, passes/fuse/placement.ts INLINE_REDUCE_LIMIT) accumulate float32 sums,
 * means, products and matmul's K-sum in float64 on WebAssembly, as the long ones do
 * and as docs/ARCHITECTURE.md promises for targets that have float64 (issue 26, item 2:
 * they were added in float32, so [3e38, 3e38, -3e38, -3e38, 1].sum() was Infinity).
 *
 * Expected values: a plain JS loop in float64 over the float32 terms (a product of two
 * float32 values rounded to float32 first, as the mul node is), rounded once. Every
 * length from 1 to 20 (the inlined path and the loop past it), eager and jit (relaxed
 * and exact), one row and 13 rows (the batch loop's four-lane SIMD body, two copies,
 * then four lanes, then the scalar rest), and the JS backend giving the same bits.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromTypedArray, initWasm, jit, setBackend, tensor, type Tensor, type WasmBackend } from "../../src/index.js";
import { rng } from "../helpers/random-graph.js";

let be: WasmBackend;
beforeAll(async () => {
  be = await initWasm({ threads: 1 });
});
afterAll(() => setBackend("js"));

const H = 3e38;
const bits = (a: ArrayLike<number>): string[] => Array.from(a, (v) => (Object.is(v, -0) ? "-0" : String(v)));
const f32 = Math.fround;

/** Rows of float32 values of length n whose float32 running sum or product is wrong (overflow, cancellation, underflow). */
function families(n: number, seed: number): number[][] {
  const r = rng(seed);
  const cancel = Array.from({ length: n }, (_, i) => (i === n - 1 ? 1 : i % 4 < 2 ? H : -H));
  const big = Array.from({ length: n }, (_, i) => (i === 0 ? 2 ** 24 : 1));
  const wide = Array.from({ length: n }, () =>
    f32((r() < 0.5 ? -1 : 1) * (1 + r()) * 2 ** Math.floor(r() * 250 - 125)),
  );
  // Products: an overflow then a zero (NaN in float32), an underflow then its inverse (0 in float32).
  const over = Array.from({ length: n }, (_, i) => (i === n - 1 ? 0 : H));
  const under = Array.from({ length: n }, (_, i) => f32(i % 2 === 0 ? 1e-30 : 1e30));
  const mixed = Array.from({ length: n }, (_, i) => f32([H, 1e-30, -H, 7, 1e30, -0.5][(i + seed) % 6]!));
  return [cancel, big, wide, over, under, mixed];
}

/** The float64 accumulation of the terms, rounded once. */
function want(op: "sum" | "mean" | "prod", xs: readonly number[]): number {
  let acc = op === "prod" ? 1 : -0;
  for (const x of xs) acc = op === "prod" ? acc * x : acc + x;
  return f32(op === "mean" ? acc / xs.length : acc);
}

const LENGTHS = Array.from({ length: 20 }, (_, i) => i + 1);
const OPS = ["sum", "mean", "prod"] as const;
const reduce = (op: (typeof OPS)[number]) => (x: Tensor) =>
  op === "sum" ? x.sum([0]) : op === "mean" ? x.mean([0]) : x.prod([0]);

describe("wasm: float32 sums, means and products of 1-20 elements accumulate in float64", () => {
  it("the cases of issue 26", () => {
    expect(tensor([H, H, -H, -H, 1]).sum().dataSync()[0]).toBe(1);
    expect(tensor([H, H, 0]).prod().dataSync()[0]).toBe(0);
    expect(
      tensor([2 ** 24, ...Array<number>(15).fill(1)])
        .sum()
        .dataSync()[0],
    ).toBe(16777232);
    expect(tensor([H, H, -H, -H, 1]).mean().dataSync()[0]).toBe(f32(0.2));
  });

  it("one row, every length, eager and jit (relaxed, exact), equal to the float64 loop and to the JS backend", () => {
    const fails: string[] = [];
    const relaxed = OPS.map((op) => jit(reduce(op)));
    const exact = OPS.map((op) => jit(reduce(op), { float32: "exact" }));
    for (const n of LENGTHS)
      for (const [k, xs] of families(n, n).entries())
        for (const [o, op] of OPS.entries()) {
          const w = want(op, xs);
          const x = fromTypedArray(Float32Array.from(xs), [n], { batchDim: 0 });
          const got = {
            eager: reduce(op)(x).dataSync()[0]!,
            relaxed: relaxed[o]!(x).dataSync()[0]!,
            exact: exact[o]!(x).dataSync()[0]!,
          };
          setBackend("js");
          const xj = fromTypedArray(Float32Array.from(xs), [n], { batchDim: 0 });
          const js = reduce(op)(xj).dataSync()[0]!;
          setBackend("wasm");
          for (const [how, g] of [...Object.entries(got), ["js eager", js] as const])
            if (!Object.is(g, w)) fails.push(`${op} n=${n} family ${k} ${how}: got ${g}, expected ${w}`);
        }
    expect(fails.slice(0, 10), `${fails.length} failures`).toEqual([]);
  });

  it("13 rows (the batch loop's SIMD lanes and its scalar rest), every length", () => {
    const fails: string[] = [];
    const simd0 = be.stats.simd;
    for (const n of LENGTHS) {
      // Row r: family r % 6, its values rotated by r, so that the lanes hold different cases.
      const rows = Array.from({ length: 13 }, (_, r) => {
        const f = families(n, 100 + r)[r % 6]!;
        return f.map((_, i) => f[(i + r) % n]!);
      });
      const x = fromTypedArray(Float32Array.from(rows.flat()), [13, n], { batchDim: 1 });
      for (const op of OPS) {
        const got = jit(reduce(op))(x).dataSync();
        rows.forEach((row, r) => {
          if (!Object.is(got[r], want(op, row)))
            fails.push(`${op} n=${n} row ${r}: got ${got[r]}, expected ${want(op, row)}`);
        });
      }
    }
    expect(fails.slice(0, 10), `${fails.length} failures`).toEqual([]);
    expect(be.stats.simd - simd0, "the short reductions ran in the four-lane body").toBeGreaterThan(0);
  });

  it("matmul over K = 1-20 (13 rows times a column of ones and a column of twos)", () => {
    const fails: string[] = [];
    for (const n of LENGTHS) {
      const rows = Array.from({ length: 13 }, (_, r) => families(n, 200 + r)[(r + 2) % 6]!);
      const a = fromTypedArray(Float32Array.from(rows.flat()), [13, 1, n], { batchDim: 1 });
      const b = fromTypedArray(
        Float32Array.from({ length: 2 * n }, (_, i) => 1 + (i % 2)),
        [n, 2],
        { batchDim: 0 },
      );
      const got = jit((a: Tensor, b: Tensor) => a.matmul(b))(a, b).dataSync();
      rows.forEach((row, r) =>
        [1, 2].forEach((s, j) => {
          const w = want(
            "sum",
            row.map((v) => f32(v * s)),
          );
          if (!Object.is(got[2 * r + j], w))
            fails.push(`K=${n} row ${r} column ${j}: got ${got[2 * r + j]}, expected ${w}`);
        }),
      );
    }
    expect(fails.slice(0, 10), `${fails.length} failures`).toEqual([]);
  });

  it("the four-lane body gives the scalar body's bits (float64 halves: promote, add, multiply, divide, demote)", () => {
    // The same rows once as 13 rows (lanes) and one at a time (scalar): equal bits, NaN and ±Inf included.
    const n = 7;
    // Overflowing, cancelling, underflowing and signed-zero rows; a NaN, +Inf or -Inf in rows 1, 5 and 9.
    const rows = Array.from({ length: 13 }, (_, r) =>
      Array.from({ length: n }, (_, i) =>
        i === 3 && r % 4 === 1
          ? [NaN, Infinity, -Infinity][(r >> 2) % 3]!
          : f32([H, -H, 1e-30, 1e30, 3, -0.5, -0, 1e-45][(r * 3 + i * 5) % 8]!),
      ),
    );
    const f = jit((x: Tensor) =>
      x
        .sum([0])
        .add(x.mean([0]))
        .mul(x.prod([0])),
    );
    const all = f(fromTypedArray(Float32Array.from(rows.flat()), [13, n], { batchDim: 1 })).dataSync();
    const one = rows.map((row) => f(fromTypedArray(Float32Array.from(row), [1, n], { batchDim: 1 })).dataSync()[0]!);
    expect(bits(all)).toEqual(bits(one));
    expect(bits(all)).toEqual(
      bits(rows.map((row) => f32(f32(want("sum", row) + want("mean", row)) * want("prod", row)))),
    );
  });
});
