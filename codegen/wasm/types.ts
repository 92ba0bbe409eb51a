/** Value types and memory access of the loop form's dtypes in WebAssembly, and the opcodes the encoder's table lacks. */
import { isNarrowInt, type DType } from "../../ir/dtype.js";
import type { LType } from "../loop.js";
import { F32, F64, I32, Op, type ValType } from "./encoder.js";

export const wasmType = (t: LType): ValType => (t === "float32" ? F32 : t === "float64" ? F64 : I32);
export const isInt = (t: LType): boolean => t !== "float32" && t !== "float64";
// --- narrow dtypes: stored narrow in the memory (load8/16_s/u, store8/16), i32 in locals ---
export const NARROW_BYTES = { uint8: 1, int8: 1, uint16: 2, int16: 2, float16: 4 } as const;
export const NARROW_ALIGN = { uint8: 0, int8: 0, uint16: 1, int16: 1, float16: 2 } as const;
export const BYTES: Record<DType, number> = { float32: 4, float64: 8, int32: 4, uint32: 4, bool: 1, ...NARROW_BYTES };
export const ALIGN: Record<DType, number> = { float32: 2, float64: 3, int32: 2, uint32: 2, bool: 0, ...NARROW_ALIGN };
export const isNarrowL = (t: LType): boolean => t !== "index" && (isNarrowInt(t) || t === "float16");
/** The integer load and store opcodes of each non-float dtype (the narrow ones sign- or zero-extend). */
export function intLoad(d: DType): number {
  return d === "bool" || d === "uint8"
    ? 0x2d
    : d === "int8"
      ? 0x2c
      : d === "uint16"
        ? 0x2f
        : d === "int16"
          ? 0x2e
          : Op.i32_load;
}
export function intStore(d: DType): number {
  return BYTES[d] === 1 ? 0x3a : BYTES[d] === 2 ? 0x3b : Op.i32_store;
}

/** Extra opcodes not in the encoder's core table. */
export const X = {
  f32_ceil: 0x8d,
  f32_floor: 0x8e,
  f32_trunc: 0x8f,
  f32_nearest: 0x90,
  f32_min: 0x96,
  f32_max: 0x97,
  i32_wrap_i64: 0xa7,
  f32_convert_i32_s: 0xb2,
  f32_convert_i32_u: 0xb3,
  i32_load8_u: 0x2d,
  i32_store8: 0x3a,
  // 0xFC prefix
  i32_trunc_sat_f64_s: 2,
  i64_trunc_sat_f64_s: 6,
} as const;
