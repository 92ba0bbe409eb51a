/**
 * The routine facts table (ir/routine-facts.ts): the result bases are the output
 * layouts ir/routines.ts documents, written out here by hand, and shapes that do
 * not fit are refused by the `routine` op's type rule.
 */
import { describe, expect, it } from "vitest";
import { ShapeError } from "../../ir/errors.js";
import { OPS } from "../../ir/ops.js";
import { ROUTINE_FACTS, ROUTINE_NAMES } from "../../ir/routine-facts.js";
import type { TensorType } from "../../ir/types.js";

const mat = (m: number, n: number, dtype: TensorType["dtype"] = "float32"): TensorType => ({
  dtype,
  batch: [7],
  base: [m, n],
});
const typeOf = (name: (typeof ROUTINE_NAMES)[number], arg: number, ...ins: TensorType[]): TensorType =>
  OPS.routine.type("routine", ins, { name, arg });

describe("routine facts", () => {
  it("has one entry per routine name", () => {
    expect(Object.keys(ROUTINE_FACTS).sort()).toEqual([...ROUTINE_NAMES].sort());
  });

  it("gives the documented output layouts", () => {
    expect(typeOf("lu", 0, mat(3, 3)).base).toEqual([3, 5]);
    expect(typeOf("lu_solve", 0, mat(3, 5), mat(3, 2)).base).toEqual([3, 2]);
    expect(typeOf("cholesky", 0, mat(4, 4)).base).toEqual([4, 4]);
    expect(typeOf("qr", 2, mat(5, 2)).base).toEqual([5, 5]); // Q 5×2, R 5×2, tau
    expect(typeOf("qr", 5, mat(5, 2)).base).toEqual([5, 8]); // Q 5×5, R 5×2, tau
    expect(typeOf("eigh", 8, mat(3, 3)).base).toEqual([6, 3]);
    expect(typeOf("svd", 8, mat(4, 3)).base).toEqual([8, 3]);
    expect(typeOf("sort", 1, mat(2, 5, "int32")).base).toEqual([2, 20]);
    expect(typeOf("lu", 0, mat(3, 3)).batch).toEqual([7]);
  });

  it("refuses shapes and dtypes that do not fit", () => {
    expect(() => typeOf("lu", 0, mat(3, 4))).toThrow(ShapeError);
    expect(() => typeOf("lu_solve", 0, mat(3, 5), mat(4, 2))).toThrow(ShapeError);
    expect(() => typeOf("qr", 3, mat(5, 2))).toThrow(ShapeError);
    expect(() => typeOf("svd", 8, mat(3, 4))).toThrow(ShapeError);
    expect(() => typeOf("eigh", 8, mat(3, 3, "int32"))).toThrow(ShapeError);
    expect(() => typeOf("sort", 0, mat(2, 5, "bool"))).toThrow(ShapeError);
  });
});
