/**
 * Runs in headless Chromium (bundled by browser.test.ts): batchwise on the
 * browser's own WebGPU (`navigator.gpu`, SwiftShader there) and on the JS
 * backend, checked against formulas written out here. The outcome goes to
 * `window.__result` for the test to read.
 */
import {
  arange,
  fromTypedArray,
  getBackend,
  initWebGPU,
  jagged,
  jit,
  setBackend,
  stack,
  TensorDict,
  type Tensor,
} from "../../src/index.js";
import type { Outcome } from "./outcome.js";

/** B1's chain, written out with Math (the independent reference). */
const chain = (v: number) => Math.exp(-v * v) * Math.sin(3 * v) + 0.5 * v - Math.tanh(v);

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

async function run(): Promise<Outcome> {
  const gpu = await initWebGPU();
  const backendName = getBackend().name;
  const checks: Record<string, number> = {};

  // A fused elementwise chain at two batch sizes: one trace on WebGPU.
  const f = jit((x: Tensor) => x.mul(x).neg().exp().mul(x.mul(3).sin()).add(x.mul(0.5)).sub(x.tanh()));
  for (const n of [5, 3000]) {
    const xs = Float32Array.from({ length: n }, (_, i) => -2 + (4 * i) / n);
    const y = await (await f.callAsync(fromTypedArray(xs, [n], { batchDim: 1 }))).data();
    checks[`chain n=${n}`] = maxDiff(y, Array.from(xs, chain));
  }

  // A reduction over the base: each row minus its mean, over (B; 4).
  const centre = jit((x: Tensor) => x.sub(x.mean(0, { keepdim: true })));
  const rows = Float32Array.from({ length: 12 }, (_, i) => i * i);
  const centred = await (await centre.callAsync(fromTypedArray(rows, [3, 4], { batchDim: 1 }))).data();
  const want = Array.from(rows, (v, i) => {
    const r = Math.floor(i / 4) * 4;
    return v - (rows[r]! + rows[r + 1]! + rows[r + 2]! + rows[r + 3]!) / 4;
  });
  checks["row centring"] = maxDiff(centred, want);

  // Ragged rows: per-row means of a jagged tensor, and its padded form.
  const j = jagged([arange(3).rebatch(1), arange(10, 12).rebatch(1)]);
  checks["jagged means"] = maxDiff(await j.mean().data(), [1, 10.5]);
  checks["jagged padded"] = maxDiff(await j.toPadded({ paddingValue: -1 }).padded.data(), [0, 1, 2, 10, 11, -1]);

  // A TensorDict stacked on the device.
  const td = new TensorDict({ a: arange(4).rebatch(1) }, [4]);
  checks["tensordict stack"] = maxDiff(await stack([td, td], 1).getTensor("a").data(), [0, 0, 1, 1, 2, 2, 3, 3]);

  const traces = { chain: f.stats.traces, centre: centre.stats.traces };
  setBackend("js");
  const onJs = await f(fromTypedArray(Float32Array.from([0.25]), [1], { batchDim: 1 })).data();
  checks["chain on js"] = maxDiff(onJs, [chain(0.25)]);
  const a = gpu.adapter;
  return { adapter: [a.vendor, a.architecture, a.description].filter((s) => s).join(" "), backendName, checks, traces };
}

const w = window as unknown as { __result?: Outcome };
run().then(
  (r) => (w.__result = r),
  (e: unknown) =>
    (w.__result = {
      adapter: "",
      backendName: "",
      checks: {},
      traces: {},
      error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
    }),
);
