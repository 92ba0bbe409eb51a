/**
 * NEML2's shape utilities on plain tensors and shapes (`neml2/misc/utils.h` of
 * NEML2 v2: `broadcast_batch_dim`, `broadcastable`, `utils::storage_size`,
 * `utils::add_shapes`, `utils::pad_prepend`, `utils::pad_append`), and the v2
 * names of two typed tensors: NEML2 v2.0 and v2.1 call the `(6,3,3)` tensor
 * with minor symmetry in its first two dims `SFFR4` (`include/neml2/tensors/SFFR4.h`)
 * and the `(3,3,3)` one skew in its first two dims `WFFR4` (`WFFR4.h`, v2.1).
 */
import { DTypeError, ShapeError } from "../../ir/errors.js";
import { prod } from "../../ir/types.js";
import { describe } from "../check.js";
import { Tensor } from "../tensor.js";
import { SFR4, WFR4 } from "../typed/higher.js";

function checkTensors(op: string, tensors: readonly unknown[]): asserts tensors is readonly Tensor[] {
  if (tensors.length === 0) throw new ShapeError(`${op}: needs at least one tensor`);
  tensors.forEach((t, i) => {
    if (!(t instanceof Tensor)) throw new DTypeError(`${op}: tensors[${i}] must be a Tensor, got ${describe(t)}`);
  });
}

function checkShape(op: string, name: string, s: unknown, min = 0): readonly number[] {
  if (!Array.isArray(s) || s.some((d) => typeof d !== "number" || !Number.isInteger(d) || d < min))
    throw new ShapeError(`${op}: ${name} must be an array of sizes >= ${min}, got ${describe(s)}`);
  return s as readonly number[];
}

/** The batch rank after broadcasting: the largest `batchDim` of the tensors (NEML2's `broadcast_batch_dim`). */
export function broadcastBatchDim(...tensors: Tensor[]): number {
  checkTensors("broadcastBatchDim", tensors);
  return Math.max(...tensors.map((t) => t.batchDim));
}

/**
 * NEML2's `broadcastable`: the base shapes are the same and the batch shapes
 * broadcast (from the right, each pair of sizes equal, or one of them 1 or
 * missing). Inside `jit` a symbolic batch size is taken as broadcastable (the
 * ops check it when the sizes are bound).
 */
export function broadcastable(...tensors: Tensor[]): boolean {
  checkTensors("broadcastable", tensors);
  const base = tensors[0]!.baseShape;
  if (tensors.some((t) => t.baseDim !== base.length || t.baseShape.some((d, i) => d !== base[i]))) return false;
  const rank = broadcastBatchDim(...tensors);
  for (let k = 1; k <= rank; k++) {
    let size = 1;
    for (const t of tensors) {
      const dims = t.symbolicBatchShape;
      const d = dims[dims.length - k];
      if (d === undefined || typeof d !== "number" || d === 1) continue;
      if (size === 1) size = d;
      else if (size !== d) return false;
    }
  }
  return true;
}

/** The number of elements of a tensor of this shape (NEML2's `storage_size`): `[]` gives 1, `[5,1,1]` gives 5. */
export function storageSize(shape: readonly number[]): number {
  return prod(checkShape("storageSize", "shape", shape));
}

/** The shapes one after the other (NEML2's `add_shapes`): `addShapes([2], [], [3, 3])` is `[2, 3, 3]`; a number is a one-dim shape. */
export function addShapes(...shapes: (readonly number[] | number)[]): number[] {
  const out: number[] = [];
  shapes.forEach((s, i) => {
    if (typeof s === "number") out.push(...checkShape("addShapes", `shapes[${i}]`, [s]));
    else out.push(...checkShape("addShapes", `shapes[${i}]`, s));
  });
  return out;
}

function checkPad(op: string, shape: unknown, dim: unknown, pad: unknown): readonly number[] {
  const s = checkShape(op, "shape", shape);
  if (typeof dim !== "number" || !Number.isInteger(dim) || dim < s.length)
    throw new ShapeError(
      `${op}: dim must be an integer >= the rank ${s.length} of (${s.join(",")}), got ${describe(dim)}`,
    );
  if (typeof pad !== "number" || !Number.isInteger(pad) || pad < 0)
    throw new ShapeError(`${op}: pad must be a size >= 0, got ${describe(pad)}`);
  return s;
}

/** `shape` with `pad` (default 1) prepended up to `dim` dims (NEML2's `pad_prepend`): `padPrepend([3], 3)` is `[1, 1, 3]`. */
export function padPrepend(shape: readonly number[], dim: number, pad = 1): number[] {
  const s = checkPad("padPrepend", shape, dim, pad);
  return [...Array<number>(dim - s.length).fill(pad), ...s];
}

/** `shape` with `pad` (default 1) appended up to `dim` dims (NEML2's `pad_append`): `padAppend([3], 3)` is `[3, 1, 1]`. */
export function padAppend(shape: readonly number[], dim: number, pad = 1): number[] {
  const s = checkPad("padAppend", shape, dim, pad);
  return [...s, ...Array<number>(dim - s.length).fill(pad)];
}

/** NEML2 v2's name of `SFR4` (`(6,3,3)`, Mandel-symmetric in its first two dims): the same class. */
export const SFFR4 = SFR4;
/** NEML2 v2's name of `SFR4`: the same type. */
export type SFFR4 = SFR4;
/** NEML2 v2.1's name of `WFR4` (`(3,3,3)`, skew in its first two dims): the same class. */
export const WFFR4 = WFR4;
/** NEML2 v2.1's name of `WFR4`: the same type. */
export type WFFR4 = WFR4;
