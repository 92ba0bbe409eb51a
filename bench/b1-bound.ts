/**
 * How much can fusion buy on B1 (issue 4 asks fused >= 3x faster than unfused)?
 * Times, alternating in one process, on 1,000,000 float32 inputs:
 *   hand     the hand-written loop (bench/cases.ts b1Baseline)
 *   math     the same loop keeping only Math.exp/sin/tanh (the part no fusion removes)
 *   fused    batchwise jit (one kernel)
 *   unfused  batchwise jit({ fusion: false }) (one kernel and buffer per op, buffers reused)
 *   eager    the same ops with a fresh Float32Array per op (as an op-by-op library allocates)
 * and prints medians and ratios. Fusion can at best remove everything but `math`.
 *   npx tsx bench/b1-bound.ts
 */
import { alternateMedians } from "./alternate.js";
import { b1Baseline, makeB1 } from "./cases.js";
import { fromTypedArray, jit, type Tensor } from "../src/index.js";
import { b1Chain } from "./libs/batchwise-functions.js";

const { x } = makeB1(1_000_000);
const n = x.length;
function mathOnly(): Float32Array {
  const y = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const v = x[i]!;
    y[i] = Math.exp(v) + Math.sin(v) + Math.tanh(v);
  }
  return y;
}
/** One loop and one new array per op, as an eager op-by-op library evaluates the chain. */
function eager(): Float32Array {
  const map = (a: Float32Array, f: (v: number) => number): Float32Array => {
    const out = new Float32Array(a.length);
    for (let i = 0; i < a.length; i++) out[i] = f(a[i]!);
    return out;
  };
  const zip = (a: Float32Array, b: Float32Array, f: (u: number, v: number) => number): Float32Array => {
    const out = new Float32Array(a.length);
    for (let i = 0; i < a.length; i++) out[i] = f(a[i]!, b[i]!);
    return out;
  };
  const sq = zip(x, x, (a, b) => a * b);
  const e = map(
    map(sq, (v) => -v),
    Math.exp,
  );
  const s = map(
    map(x, (v) => 3 * v),
    Math.sin,
  );
  const h = map(x, (v) => 0.5 * v);
  return zip(
    zip(
      zip(e, s, (a, b) => a * b),
      h,
      (a, b) => a + b,
    ),
    map(x, Math.tanh),
    (a, b) => a - b,
  );
}
const chain = (t: Tensor): Tensor => b1Chain(t);
const fused = jit(chain);
const unfused = jit(chain, { fusion: false });
const input = fromTypedArray(x, [n], { batchDim: 1, copy: false });
const cases: [string, () => ArrayLike<number>][] = [
  ["hand", () => b1Baseline({ x })],
  ["math", mathOnly],
  ["fused", () => fused(input).dataSync({ copy: false })],
  ["unfused", () => unfused(input).dataSync({ copy: false })],
  ["eager", eager],
];
const med = alternateMedians(cases, 25);
for (const [k] of cases)
  console.log(`${k.padEnd(8)} ${med(k).toFixed(1)} ms  (${(med(k) / med("hand")).toFixed(2)} x hand)`);
console.log(`math share of the hand loop: ${((100 * med("math")) / med("hand")).toFixed(0)}%`);
console.log(
  `unfused / fused: ${(med("unfused") / med("fused")).toFixed(2)}; eager / fused: ${(med("eager") / med("fused")).toFixed(2)}`,
);
console.log(
  `upper bound on any fused/unfused ratio here: unfused / math = ${(med("unfused") / med("math")).toFixed(2)}`,
);
