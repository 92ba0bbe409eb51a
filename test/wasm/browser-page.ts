/**
 * Runs in headless Chromium (bundled by test/wasm/browser.test.ts): the WebAssembly
 * backend in a page, on as many threads as it can get there, checked against formulas
 * written out here. The outcome goes to `window.__result`.
 */
import { fromTypedArray, initWasm, jit, type Tensor } from "../../src/index.js";

const chain = (v: number): number => Math.exp(-v * v) * Math.sin(3 * v) + 0.5 * v - Math.tanh(v);

async function main(): Promise<Record<string, unknown>> {
  // minParallelWork 0: every sharded launch goes to the workers when there are any.
  const be = await initWasm({ minParallelWork: 0 });
  const f = jit((x: Tensor) => x.mul(x).neg().exp().mul(x.mul(3).sin()).add(x.mul(0.5)).sub(x.tanh()));
  const n = 100_003;
  const xs = Float32Array.from({ length: n }, (_, i) => -3 + (6 * i) / n);
  const y = f(fromTypedArray(xs, [n], { batchDim: 1 })).dataSync();
  let chainErr = 0;
  for (let i = 0; i < n; i++) chainErr = Math.max(chainErr, Math.abs(y[i]! - chain(xs[i]!)));
  // Row sums of (B; 7): 0 + 1 + ... + 6 shifted by the row.
  const B = 1000;
  const rows = Float32Array.from({ length: B * 7 }, (_, k) => (k % 7) + Math.floor(k / 7));
  const s = jit((x: Tensor) => x.sum([0]))(fromTypedArray(rows, [B, 7], { batchDim: 1 })).dataSync();
  let sumErr = 0;
  for (let b = 0; b < B; b++) sumErr = Math.max(sumErr, Math.abs(s[b]! - (21 + 7 * b)));
  return {
    threads: be.threads,
    threadNote: be.threadNote,
    isolated: (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true,
    chainErr,
    sumErr,
    threaded: be.stats.threaded,
    simd: be.stats.simd,
  };
}

main().then(
  (r) => ((window as unknown as { __result: unknown }).__result = r),
  (e: unknown) => ((window as unknown as { __result: unknown }).__result = { error: String(e) }),
);
