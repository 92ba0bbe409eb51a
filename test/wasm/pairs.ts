/** Input pairs for the binary vector math functions (atan2(y, x), pow(x, y)). */
import type { MathFn2 } from "../../codegen/wasm/math.js";
import { rng } from "../../bench/cases.js";
import { SPECIALS, strided } from "./ulp.js";

/**
 * `grid`² pairs from a strided grid of all float32 values (specials included) crossed
 * with itself, plus random pairs where the function is delicate (pow: x near 1 with
 * large |y|, moderate x and y; atan2: comparable magnitudes).
 */
export function pairs(fn: MathFn2, grid: number): [Float32Array, Float32Array] {
  const g = Float32Array.from([...strided(Math.floor(2 ** 32 / grid) + 1, 7), ...SPECIALS]);
  const a: number[] = [];
  const b: number[] = [];
  for (const u of g) for (const v of g) (a.push(u), b.push(v));
  const r = rng(fn === "pow" ? 5 : 6);
  const extra = grid * grid;
  for (let i = 0; i < extra; i++) {
    if (fn === "pow") {
      const k = i % 3;
      if (k === 0) (a.push(1 + (r() - 0.5) * 2 ** -10), b.push((r() - 0.5) * 2 ** 21));
      else if (k === 1) (a.push(r() * 4), b.push((r() - 0.5) * 300));
      else (a.push((r() - 0.5) * 20), b.push(Math.round((r() - 0.5) * 60)));
    } else {
      (a.push((r() - 0.5) * 10), b.push((r() - 0.5) * 10));
    }
  }
  return [Float32Array.from(a), Float32Array.from(b)];
}
