/**
 * Measures the max float32 ulp error of every wasm vector math function
 * (codegen/wasm/math.ts) against Math.fround of the float64 result: every
 * `stride`-th float32 bit pattern (both signs) plus the edge grids of
 * test/wasm/ulp.ts; binary functions over pairs from two strided grids plus
 * random pairs in the ranges that matter.
 *   npx tsx bench/wasm-math-ulp.ts [stride]      (default 97: 44 million inputs per unary function)
 */
import { MATH_FN1, MATH_FN2 } from "../codegen/wasm/math.js";
import { edges, measure, MathRunner, SPECIALS, strided } from "../test/wasm/ulp.js";
import { pairs } from "../test/wasm/pairs.js";

const stride = Number(process.argv[2] ?? 97);
const runner = new MathRunner([...MATH_FN1, ...MATH_FN2]);
for (const fn of MATH_FN1) {
  let worst = { maxUlp: 0, at: [] as number[], count: 0 };
  for (const chunk of [0, 1]) {
    // Two offsets so the sweep does not only hit one residue class of the bits.
    const r = measure(runner, fn, strided(stride * 2, chunk * stride + 13));
    worst.count += r.count;
    if (r.maxUlp > worst.maxUlp) worst = { ...r, count: worst.count };
  }
  const e = measure(runner, fn, edges(fn));
  worst.count += e.count;
  if (e.maxUlp > worst.maxUlp) worst = { ...e, count: worst.count };
  console.log(`${fn.padEnd(8)} max ${worst.maxUlp} ulp at ${worst.at.join(", ")}  (${worst.count} inputs)`);
}
for (const fn of MATH_FN2) {
  const [a, b] = pairs(fn, Math.max(600, Math.round(6000 / Math.sqrt(stride / 97))));
  const r = measure(runner, fn, a, b);
  console.log(`${fn.padEnd(8)} max ${r.maxUlp} ulp at ${r.at.join(", ")}  (${r.count} pairs)`);
}
void SPECIALS;
