/** Option checks shared by the linear-algebra routines. */
import { ShapeError } from "../../ir/errors.js";
import { describe } from "../check.js";

/** One of the allowed string values, or a ShapeError naming the option. */
export function checkChoice<const T extends readonly string[]>(
  op: string,
  name: string,
  v: unknown,
  allowed: T,
): T[number] {
  if (typeof v !== "string" || !allowed.includes(v))
    throw new ShapeError(
      `${op}: ${name} must be one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}, got ${describe(v)}`,
    );
  return v as T[number];
}

/** A positive integer option (sweep counts), or a ShapeError naming it. */
export function checkCount(op: string, name: string, v: unknown, max: number): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v > max)
    throw new ShapeError(`${op}: ${name} must be an integer in [0, ${max}], got ${describe(v)}`);
  return v;
}
