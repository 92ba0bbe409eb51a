/**
 * The reduction-facts table (ir/reductions.ts): the derived groups are the table's keys
 * filtered by each fact (and the hand-known NumPy sets), the dtype rule gives NumPy's result
 * dtypes, and each identity is the identity of its combine op on the special values. The
 * type-level part (checked by `tsc`, which covers test/) shows that a rule table over
 * `KReduceOp` missing an entry fails to compile, and pins the derived unions.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import type { DType } from "../../ir/dtype.js";
import { binaryRef, reduceRef } from "../../ir/interpret.js";
import type { KReduceOp } from "../../ir/kernel.js";
import { REDUCE_OPS as OPS_REDUCE_OPS, type SegmentReduceOp as OpsSegmentReduceOp } from "../../ir/ops.js";
import {
  INLINE_REDUCE_OPS,
  isPositional,
  isReduceOp,
  NON_EMPTY_REDUCE,
  POSITIONAL_REDUCE,
  REDUCE_OPS,
  REDUCTIONS,
  reductionDType,
  reductionFacts,
  SEGMENT_REDUCE_OPS,
  type InlineReduceOp,
  type PositionalReduceOp,
  type SegmentReduceOp,
} from "../../ir/reductions.js";

const KEYS = Object.keys(REDUCTIONS) as KReduceOp[];
const sorted = (xs: Iterable<string>): string[] => [...xs].sort();

describe("reduction facts", () => {
  it("the derived sets are the table's keys filtered by each fact", () => {
    expect(sorted(REDUCE_OPS)).toEqual(sorted(KEYS));
    expect(OPS_REDUCE_OPS).toBe(REDUCE_OPS);
    expect(sorted(POSITIONAL_REDUCE)).toEqual(sorted(KEYS.filter((k) => reductionFacts(k).positional)));
    expect(sorted(NON_EMPTY_REDUCE)).toEqual(sorted(KEYS.filter((k) => reductionFacts(k).nonEmpty)));
    expect(sorted(INLINE_REDUCE_OPS)).toEqual(sorted(KEYS.filter((k) => reductionFacts(k).inline)));
    expect(sorted(SEGMENT_REDUCE_OPS)).toEqual(sorted([...KEYS.filter((k) => reductionFacts(k).segment), "count"]));
    for (const k of KEYS) {
      expect(isReduceOp(k)).toBe(true);
      expect(isPositional(k)).toBe(POSITIONAL_REDUCE.has(k as PositionalReduceOp));
    }
    expect(isReduceOp("count")).toBe(false);
    expect(isReduceOp("add")).toBe(false);
    expect(isPositional(null)).toBe(false);
  });

  it("the groups are the ones NumPy and the kernels know", () => {
    expect(sorted(REDUCE_OPS)).toEqual(["all", "any", "argmax", "argmin", "max", "mean", "min", "prod", "sum"]);
    expect(sorted(POSITIONAL_REDUCE)).toEqual(["argmax", "argmin"]);
    // np.min/np.max/np.argmin/np.argmax raise on an empty axis; sum, prod, mean, all, any do not.
    expect(sorted(NON_EMPTY_REDUCE)).toEqual(["argmax", "argmin", "max", "min"]);
    expect(sorted(INLINE_REDUCE_OPS)).toEqual(["all", "any", "max", "mean", "min", "prod", "sum"]);
    expect(sorted(SEGMENT_REDUCE_OPS)).toEqual(["argmax", "count", "max", "mean", "min", "sum"]);
  });

  it("the dtype rule gives NumPy's result dtypes (32-bit where NumPy gives 64-bit)", () => {
    const cases: [KReduceOp | SegmentReduceOp, DType, DType][] = [
      ["sum", "bool", "int32"],
      ["sum", "int8", "int32"],
      ["sum", "uint8", "uint32"],
      ["sum", "uint16", "uint32"],
      ["sum", "float16", "float16"],
      ["sum", "uint32", "uint32"],
      ["prod", "bool", "int32"],
      ["prod", "float32", "float32"],
      ["mean", "int32", "float32"],
      ["mean", "bool", "float32"],
      ["mean", "float64", "float64"],
      ["mean", "float16", "float16"],
      ["min", "int8", "int8"],
      ["max", "uint16", "uint16"],
      ["argmin", "float32", "int32"],
      ["argmax", "uint8", "int32"],
      ["all", "float32", "bool"],
      ["any", "int32", "bool"],
      ["count", "float32", "int32"],
    ];
    for (const [op, x, want] of cases) expect([op, x, reductionDType(op, x)]).toEqual([op, x, want]);
  });

  it("each identity is the identity of its combine op (positional: the worst value of the comparison)", () => {
    const values = [NaN, Infinity, -Infinity, 0, -0, 1, -1, 0.5, -2.5, 1e30];
    for (const op of KEYS) {
      const f = reductionFacts(op);
      const id = f.identity === "highest" ? Infinity : f.identity === "lowest" ? -Infinity : f.identity;
      const dtype: DType = f.dtype === "bool" ? "bool" : "float64";
      const xs = dtype === "bool" ? [0, 1] : values;
      for (const x of xs) {
        if (f.positional) {
          // No value is worse than the start: a finite value is better (strictly), or equal at ±Inf.
          expect(binaryRef(f.combine, id, x, dtype)).toBe(0);
        } else {
          expect(
            Object.is(binaryRef(f.combine, id, x, dtype), x) || (Number.isNaN(x) && op !== "all" && op !== "any"),
          ).toBe(true);
        }
      }
      // The reference reduction of one element is that element (its position, 0, when positional).
      for (const x of xs.filter((v) => !Number.isNaN(v)))
        expect(reduceRef(op, [x], dtype)).toBe(f.positional ? 0 : f.dtype === "bool" ? (x !== 0 ? 1 : 0) : x);
      // The empty start differs from the identity only where an empty result differs (sum: +0, not -0).
      if (f.emptyStart !== undefined && !f.divides)
        expect(Object.is(reduceRef(op, [], dtype), f.emptyStart)).toBe(true);
    }
  });

  it("rule tables over KReduceOp are total (type-level; tsc checks this file)", () => {
    expectTypeOf<KReduceOp>().toEqualTypeOf<
      "sum" | "mean" | "prod" | "min" | "max" | "argmin" | "argmax" | "all" | "any"
    >();
    expectTypeOf<PositionalReduceOp>().toEqualTypeOf<"argmin" | "argmax">();
    expectTypeOf<InlineReduceOp>().toEqualTypeOf<"sum" | "mean" | "prod" | "min" | "max" | "all" | "any">();
    expectTypeOf<SegmentReduceOp>().toEqualTypeOf<"sum" | "mean" | "min" | "max" | "argmax" | "count">();
    expectTypeOf<OpsSegmentReduceOp>().toEqualTypeOf<SegmentReduceOp>();
    // A per-backend table written as a mapped type, as the backends' are: one missing entry fails tsc.
    type Table = { readonly [K in KReduceOp]: number };
    const full: Table = { sum: 0, mean: 0, prod: 1, min: 0, max: 0, argmin: 0, argmax: 0, all: 1, any: 0 };
    // @ts-expect-error -- "any" is missing
    const missing: Table = { sum: 0, mean: 0, prod: 1, min: 0, max: 0, argmin: 0, argmax: 0, all: 1 };
    // @ts-expect-error -- "count" is not a reduction of the table
    const extra: Table = { ...full, count: 0 };
    expect([full, missing, extra].length).toBe(3);
  });
});
