/**
 * The op-facts table (ir/elementwise.ts) states algebraic facts that passes rely on
 * (canonicalize swaps the operands of commutative ops, simplify drops op(x, x) for
 * idempotent ones, the JS code generator skips the float32 rounding of exact ops).
 * Each fact is checked here against the reference interpreter on the special values
 * of every dtype the op accepts (NaN, ±Inf, -0 included), and the derived groups
 * against the graph IR's op table.
 */
import { describe, expect, it } from "vitest";
import type { DType } from "../../ir/dtype.js";
import {
  BINARY_OPS,
  COMMUTATIVE,
  ELEMENTWISE,
  EXACT_ON_F32,
  IDEMPOTENT,
  isBinaryOp,
  isUnaryOp,
  UNARY_OPS,
  type ElementwiseOp,
} from "../../ir/elementwise.js";
import { binaryRef, unaryRef } from "../../ir/interpret.js";
import { OPS } from "../../ir/ops.js";

const FLOATS = [NaN, Infinity, -Infinity, 0, -0, 1, -1, 0.5, -2.5, 3, 1e30, -1e-30, 16777217];
const VALUES: Readonly<Record<DType, readonly number[]>> = {
  float32: FLOATS.map(Math.fround),
  float64: FLOATS,
  int32: [0, 1, -1, 2, -7, 2147483647, -2147483648],
  uint32: [0, 1, 2, 7, 4294967295, 2147483648],
  bool: [0, 1],
  uint8: [0, 1, 2, 7, 255, 128],
  int8: [0, 1, -1, 2, -7, 127, -128],
  uint16: [0, 1, 7, 65535, 32768],
  int16: [0, 1, -1, -7, 32767, -32768],
  float16: [NaN, Infinity, -Infinity, 0, -0, 1, -1, 0.5, -2.5, 3, 65504, -0.0009765625],
};

/** The dtypes an op accepts, by its dtype rule. */
function dtypesOf(op: ElementwiseOp): DType[] {
  switch (ELEMENTWISE[op].dtype) {
    case "float":
      return ["float32", "float64"];
    case "logical":
      return ["bool"];
    case "arith":
      return ["float32", "float64", "int32", "uint32"];
    case "predicate":
    case "compare":
      return ["float32", "float64", "int32", "uint32", "bool"];
    case "int":
      return ["int32", "uint32"];
  }
}

const same = (a: number, b: number): boolean => Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));

describe("elementwise op facts", () => {
  it("every op of the table is a unary or binary op of the graph IR", () => {
    for (const op of Object.keys(ELEMENTWISE) as ElementwiseOp[]) {
      expect(OPS[op].arity, op).toBe(ELEMENTWISE[op].kind === "unary" ? 1 : 2);
    }
    expect(UNARY_OPS.size + BINARY_OPS.size).toBe(Object.keys(ELEMENTWISE).length);
    expect([...COMMUTATIVE].sort()).toEqual([
      "add",
      "and",
      "bitwise_and",
      "bitwise_or",
      "bitwise_xor",
      "eq",
      "maximum",
      "minimum",
      "mul",
      "ne",
      "or",
      "xor",
    ]);
    expect([...IDEMPOTENT].sort()).toEqual(["and", "bitwise_and", "bitwise_or", "maximum", "minimum", "or"]);
  });

  it("commutative ops give op(x, y) = op(y, x), bit for bit", () => {
    for (const op of COMMUTATIVE) {
      for (const d of dtypesOf(op)) {
        for (const a of VALUES[d]) {
          for (const b of VALUES[d]) {
            const ab = binaryRef(op, a, b, d);
            const ba = binaryRef(op, b, a, d);
            if (!same(ab, ba)) expect.fail(`${op}(${a}, ${b}) = ${ab} but ${op}(${b}, ${a}) = ${ba} on ${d}`);
          }
        }
      }
    }
  });

  it("idempotent ops give op(x, x) = x, bit for bit", () => {
    for (const op of IDEMPOTENT) {
      for (const d of dtypesOf(op)) {
        for (const a of VALUES[d]) {
          const r = binaryRef(op, a, a, d);
          if (!same(r, a)) expect.fail(`${op}(${a}, ${a}) = ${r} on ${d}`);
        }
      }
    }
  });

  it("ops exact on float32 give a float32 value from float32 operands", () => {
    const f32 = VALUES.float32;
    for (const op of EXACT_ON_F32) {
      const results = isUnaryOp(op)
        ? f32.map((a) => unaryRef(op, a, "float32"))
        : isBinaryOp(op)
          ? f32.flatMap((a) => f32.map((b) => binaryRef(op, a, b, "float32")))
          : [];
      for (const r of results) if (!same(Math.fround(r), r)) expect.fail(`${op} gives ${r}, not a float32 value`);
    }
    // A control: add is not exact (1 + 2^-30 rounds on float32), and the check above would see it.
    expect(same(Math.fround(binaryRef("add", 1, 2 ** -30, "float32")), binaryRef("add", 1, 2 ** -30, "float32"))).toBe(
      false,
    );
  });
});
