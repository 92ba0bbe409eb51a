/**
 * The bitwise ops on a grid of int32/uint32 values and shift counts, with the
 * expected results written here from NumPy's rules using BigInt (not the library's
 * interpreter): and/or/xor on the 32-bit two's-complement patterns; left_shift wraps to
 * 32 bits and gives 0 for a count outside [0, 32) (npy_lshift); right_shift is logical
 * on uint32 and arithmetic on int32, and a count outside [0, 32) gives 0, or -1 for a
 * negative int32 (npy_rshift). Negative int32 counts are outside [0, 32).
 */
import { fromTypedArray, jit, type Tensor } from "../../src/index.js";
import { METHOD_OF } from "../../src/api/tensor-op-names.js";
import type { IntOnlyBinaryOp } from "../helpers/special-values.js";

export const I32 = [0, 1, -1, 2, 7, -8, 0x55555555, 2147483647, -2147483648, 31, 32, 33, -32, 64, 12345];
export const U32 = [0, 1, 2, 7, 31, 32, 33, 64, 0x80000000, 0xffffffff, 0xaaaaaaaa, 2147483647, 12345];

type D = "int32" | "uint32";
const wrap = (v: bigint, d: D): number => Number(d === "uint32" ? BigInt.asUintN(32, v) : BigInt.asIntN(32, v));

const REF_TABLE = {
  bitwiseAnd: (a, b, d) => wrap(BigInt(a) & BigInt(b), d),
  bitwiseOr: (a, b, d) => wrap(BigInt(a) | BigInt(b), d),
  bitwiseXor: (a, b, d) => wrap(BigInt(a) ^ BigInt(b), d),
  leftShift: (a, b, d) => (b >= 0 && b < 32 ? wrap(BigInt(a) << BigInt(b), d) : 0),
  // BigInt >> is arithmetic on the signed value: exact for int32, and for uint32 the value is non-negative.
  rightShift: (a, b, d) => (b >= 0 && b < 32 ? wrap(BigInt(a) >> BigInt(b), d) : d === "int32" && a < 0 ? -1 : 0),
} satisfies { readonly [K in IntOnlyBinaryOp as (typeof METHOD_OF)[K]]: (a: number, b: number, d: D) => number };
/** The reference of every integer-only op's method: `tsc` checks it has each, and no other. */
export const REF: Readonly<Record<string, (a: number, b: number, d: D) => number>> = REF_TABLE;

export const APPLY: Record<string, (x: Tensor, y: Tensor) => Tensor> = {
  bitwiseAnd: (x, y) => x.bitwiseAnd(y),
  bitwiseOr: (x, y) => x.bitwiseOr(y),
  bitwiseXor: (x, y) => x.bitwiseXor(y),
  leftShift: (x, y) => x.leftShift(y),
  rightShift: (x, y) => x.rightShift(y),
};

/** Every ordered pair of the grid of dtype `d`, as two flat operand tensors. */
export function pairTensors(d: D): { a: number[]; b: number[]; x: Tensor; y: Tensor } {
  const g = d === "int32" ? I32 : U32;
  const a = g.flatMap((v) => g.map(() => v));
  const b = g.flatMap(() => g);
  const C = d === "int32" ? Int32Array : Uint32Array;
  return { a, b, x: fromTypedArray(C.from(a), [a.length]), y: fromTypedArray(C.from(b), [b.length]) };
}

/** The mismatches of `got` (op results on the pairs of `d`) against the reference. */
export function mismatches(op: string, d: D, a: number[], b: number[], got: ArrayLike<number>): string[] {
  const out: string[] = [];
  a.forEach((x, i) => {
    const want = REF[op]!(x, b[i]!, d);
    if (got[i] !== want) out.push(`${op}/${d}(${x}, ${b[i]}) = ${got[i]}, expected ${want}`);
  });
  return out;
}

/**
 * Every op on every pair of the grid of `d`, all in one jit with the operands from
 * buffers, on the current backend (`callAsync`, so any backend): the mismatches.
 */
export async function pairMismatchesInOneJit(d: D): Promise<string[]> {
  const ops = Object.keys(APPLY);
  const { a, b, x, y } = pairTensors(d);
  const outs = (await jit((p: Tensor, q: Tensor) => ops.map((op) => APPLY[op]!(p, q))).callAsync(x, y)) as Tensor[];
  const errors: string[] = [];
  for (const [k, op] of ops.entries()) errors.push(...mismatches(op, d, a, b, await outs[k]!.data()));
  return errors;
}
