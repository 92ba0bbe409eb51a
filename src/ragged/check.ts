/**
 * Argument checks for the ragged helpers and TensorDict: a wrong kind of value
 * (not a tensor, not an array, a string where a number belongs) is a
 * `DTypeError`, a bad size, length, dim or option a `ShapeError`, each naming
 * the op and the argument, so no bad input gets as far as a raw `TypeError`.
 */
import { DTypeError, ShapeError } from "../../ir/errors.js";
import { Tensor } from "../tensor.js";

/** A short description of any value for an error message: `number NaN`, `string "a"`, `Tensor (2; 3) float32`, `array of 2`. */
export function describeValue(v: unknown): string {
  if (v instanceof Tensor) return `Tensor ${v.toString()} ${v.dtype}`;
  if (v === null) return "null";
  if (Array.isArray(v)) return `an array of ${v.length}`;
  switch (typeof v) {
    case "number":
      return `number ${String(v)}`;
    case "string":
      return `string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
    case "bigint":
      return `bigint ${String(v)}n`;
    case "undefined":
    case "boolean":
    case "symbol":
    case "function":
      return typeof v === "boolean" ? `boolean ${String(v)}` : typeof v;
    default: {
      const name = (v as { constructor?: { name?: unknown } }).constructor?.name;
      return typeof name === "string" && name !== "Object" ? `a ${name}` : "an object";
    }
  }
}

/** `v` as a Tensor, or a `DTypeError` naming `op` and `what`. */
export function tensorArg(op: string, v: unknown, what: string): Tensor {
  if (v instanceof Tensor) return v;
  throw new DTypeError(`${op}: ${what} must be a Tensor, got ${describeValue(v)}`);
}

/** `v` as an array of Tensors (`list[i]` named in the error). */
export function tensorList(op: string, v: unknown, what = "list"): readonly Tensor[] {
  if (!Array.isArray(v)) throw new DTypeError(`${op}: ${what} must be an array of Tensors, got ${describeValue(v)}`);
  for (let i = 0; i < v.length; i++) tensorArg(op, v[i], `${what}[${i}]`);
  return v as readonly Tensor[];
}

/** An options argument: undefined (none) or an object. */
export function optionsArg<T extends object>(
  op: string,
  v: T | undefined,
  what = "options",
): T | Record<string, never> {
  if (v === undefined) return {};
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw new DTypeError(`${op}: ${what} must be an object, got ${describeValue(v)}`);
  return v;
}

/** An integer (negative allowed when `min` says so); `ShapeError` otherwise. */
export function intArg(op: string, v: unknown, what: string, min = -Infinity): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < min) {
    throw new ShapeError(
      `${op}: ${what} must be an integer${min > -Infinity ? ` >= ${min}` : ""}, got ${describeValue(v)}`,
    );
  }
  return v;
}

/** `"right"` (the default) or `"left"`. */
export function sideArg(op: string, v: unknown, what = "paddingSide"): "right" | "left" {
  if (v === undefined || v === "right") return "right";
  if (v === "left") return "left";
  throw new ShapeError(`${op}: ${what} must be "right" or "left", got ${describeValue(v)}`);
}

/** An optional boolean flag. */
export function flagArg(op: string, v: unknown, what: string): boolean {
  if (v === undefined) return false;
  if (typeof v !== "boolean") throw new DTypeError(`${op}: ${what} must be true or false, got ${describeValue(v)}`);
  return v;
}

/**
 * A padding value: a number or a boolean (true/false are 1/0), which the op then
 * casts to the output dtype as documented. Anything else is a `DTypeError`.
 */
export function paddingArg(op: string, v: unknown, what = "paddingValue"): number {
  if (v === undefined) return 0;
  if (typeof v === "boolean") return v ? 1 : 0;
  if (typeof v !== "number")
    throw new DTypeError(`${op}: ${what} must be a number or a boolean, got ${describeValue(v)}`);
  return v;
}

/** The largest number of elements a helper allocates on the host (int32 indexing, as the index tensors). */
export const MAX_ELEMENTS = 2 ** 31 - 1;

/** A `ShapeError` when an output of `n` elements is too large to allocate. */
export function checkElements(op: string, n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n > MAX_ELEMENTS)
    throw new ShapeError(`${op}: ${what} would hold ${n} elements, more than ${MAX_ELEMENTS}`);
}
