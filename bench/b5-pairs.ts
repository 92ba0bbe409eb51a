/**
 * B5 (per-call cost at N = 16) by pairs: 400 alternations of 300 calls of the B5
 * adapter's call (fromTypedArray, the jit call, dataSync without a copy; on wasm the
 * previous call's tensors disposed first, as bench/libs/batchwise-wasm.ts does) and
 * 300 calls of the hand-written loop, in one process; prints quantiles of the 400
 * per-pair ratios. On a busy machine the median of pair ratios moves far less than
 * the harness's median of 8 samples of 2,000 calls.
 * Run it bundled, as the harness runs its workers (through tsx's loader this
 * allocation-heavy call reads about 1.7 times slower, the hand loop hardly changes):
 *   npx esbuild --bundle --platform=node --format=esm --external:webgpu bench/b5-pairs.ts --outfile=/tmp/b5-pairs.mjs
 *   node /tmp/b5-pairs.mjs js      (or wasm)
 */
import { b1Baseline, makeB1, SIZES } from "./cases.js";
import { fromTypedArray, initWasm, jit, type Tensor } from "../src/index.js";
import { b1Chain } from "./libs/batchwise-functions.js";

const backend = process.argv[2] ?? "js";
if (backend !== "js" && backend !== "wasm") throw new Error(`b5-pairs: backend js or wasm, got ${backend}`);
if (backend === "wasm") await initWasm({ threads: 1 });
const f = jit((x: Tensor) => b1Chain(x));
const input = makeB1(SIZES.b5N, 5);
const x = input.x;
let held: Tensor[] = [];
const run = (): ArrayLike<number> => {
  if (backend === "wasm") {
    for (const t of held) t.dispose();
    const t = fromTypedArray(x, [x.length], { batchDim: 1 });
    const y = f(t);
    held = [t, y];
    return y.dataSync({ copy: false });
  }
  return f(fromTypedArray(x, [x.length], { batchDim: 1, copy: false })).dataSync({ copy: false });
};

const pairs = 400;
const calls = 300;
let sink = 0;
for (let w = 0; w < 50; w++) {
  for (let i = 0; i < calls; i++) sink += run()[3]!;
  for (let i = 0; i < calls; i++) sink += b1Baseline(input)[3]!;
}
const ratios: number[] = [];
let lib = 0;
let hand = 0;
for (let r = 0; r < pairs; r++) {
  let t0 = performance.now();
  for (let i = 0; i < calls; i++) sink += run()[3]!;
  const a = performance.now() - t0;
  t0 = performance.now();
  for (let i = 0; i < calls; i++) sink += b1Baseline(input)[3]!;
  const b = performance.now() - t0;
  ratios.push(a / b);
  lib += a;
  hand += b;
}
ratios.sort((p, q) => p - q);
const q = (p: number): string => ratios[Math.floor(p * (pairs - 1))]!.toFixed(2);
const us = (ms: number): string => ((ms / pairs / calls) * 1e3).toFixed(3);
console.log(
  `B5 ${backend}: pair ratios p10 ${q(0.1)} p25 ${q(0.25)} median ${q(0.5)} p75 ${q(0.75)}; mean per call: batchwise ${us(lib)} us, hand ${us(hand)} us${Number.isNaN(sink) ? " (NaN)" : ""}`,
);
