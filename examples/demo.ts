/**
 * `npm run demo`: one function of a batch of point clouds, traced once by `jit`,
 * run at batch sizes 1 to 100,000 on the JS backend and on WebAssembly, timed
 * against the same computation written by hand as a plain JS loop, with the
 * counters that show one trace (and no compile after the first call) for every
 * batch size. Fits one screen.
 *
 * The function centres each cloud of N points, takes its 3×3 covariance and the
 * covariance's determinant (`linalg.det`): x (B; N,3) → (B;).
 */
import { fromTypedArray, getBackend, initWasm, jit, linalg, type Tensor } from "batchwise";

function covDet(x: Tensor): Tensor {
  const n = x.baseShape[0]!;
  const c = x.sub(x.mean(0, { keepdim: true })); // (B; N,3)
  return linalg.det(
    c
      .transpose()
      .matmul(c)
      .div(n - 1),
  ); // (B; 3,3) → (B;)
}

/** The baseline: the same computation as a hand-written loop over plain arrays. */
function covDetLoop(x: Float32Array, batch: number, n: number): Float32Array {
  const out = new Float32Array(batch);
  for (let b = 0; b < batch; b++) {
    const o = b * n * 3;
    let mx = 0;
    let my = 0;
    let mz = 0;
    for (let i = o; i < o + 3 * n; i += 3) {
      mx += x[i]!;
      my += x[i + 1]!;
      mz += x[i + 2]!;
    }
    mx /= n;
    my /= n;
    mz /= n;
    // The covariance's six distinct entries (times n - 1).
    let xx = 0;
    let xy = 0;
    let xz = 0;
    let yy = 0;
    let yz = 0;
    let zz = 0;
    for (let i = o; i < o + 3 * n; i += 3) {
      const u = x[i]! - mx;
      const v = x[i + 1]! - my;
      const w = x[i + 2]! - mz;
      xx += u * u;
      xy += u * v;
      xz += u * w;
      yy += v * v;
      yz += v * w;
      zz += w * w;
    }
    const det = xx * (yy * zz - yz * yz) - xy * (xy * zz - yz * xz) + xz * (xy * yz - yy * xz);
    out[b] = det / (n - 1) ** 3;
  }
  return out;
}

/** Deterministic points: a stretched, noisy ellipsoid per cloud. */
function clouds(batch: number, n: number): Float32Array {
  const data = new Float32Array(batch * n * 3);
  let s = 12345;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  for (let i = 0; i < batch * n; i++) {
    data[3 * i] = 3 * rand() + (i % 7);
    data[3 * i + 1] = 2 * rand();
    data[3 * i + 2] = rand() + 0.1 * data[3 * i]!;
  }
  return data;
}

/** The best of a few runs, in ms. */
function time(run: () => unknown, reps = 3): number {
  let best = Infinity;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    run();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

const js = getBackend();
const wasm = await initWasm({ select: false });
const onJs = jit(covDet, { name: "cov_det", backend: js });
const onWasm = jit(covDet, { name: "cov_det", backend: wasm });
const N = 64;
const ms = (v: number) => `${v < 10 ? v.toFixed(2) : v.toFixed(1)} ms`.padStart(10);
const rel = (v: number) => (v === 0 ? "0" : v.toExponential(1));

console.log(`batchwise demo: linalg.det of each cloud's 3×3 covariance, x (B; ${N},3) → (B;)`);
console.log(
  `backends: ${js.displayName} (js), ${wasm.displayName} (wasm, ${wasm.threads} threads); baseline: a JS loop`,
);
console.log(
  `\n${"batch".padStart(7)}${"js jit".padStart(10)}${"wasm jit".padStart(10)}${"JS loop".padStart(10)}  max rel. diff vs loop`,
);
let shown = "";
for (const batch of [1, 7, 1000, 100_000]) {
  const data = clouds(batch, N);
  const x = fromTypedArray(data, [batch, N, 3], { batchDim: 1 });
  const xw = await x.to(wasm);
  const ref = covDetLoop(data, batch, N);
  const diff = (y: Tensor) => {
    const d = y.dataSync();
    if (batch === 7) shown = y.format();
    y.dispose();
    return rel(Math.max(...Array.from(ref, (r, i) => Math.abs(d[i]! - r) / Math.abs(r))));
  };
  const errs = `js ${diff(onJs(x))}, wasm ${diff(onWasm(xw))}`;
  const tJs = time(() => onJs(x).dataSync());
  const tWasm = time(() => onWasm(xw).dispose()); // wasm runs the kernels synchronously
  const tLoop = time(() => covDetLoop(data, batch, N));
  xw.dispose();
  console.log(`${String(batch).padStart(7)}${ms(tJs)}${ms(tWasm)}${ms(tLoop)}  ${errs}`);
}
console.log(`\nconsole.log(det) at batch 7 (wasm):\n${shown}\n`);
for (const [name, f] of [
  ["js", onJs],
  ["wasm", onWasm],
] as const) {
  const s = f.stats;
  console.log(`f.stats on ${name}:`.padEnd(17) + `traces: ${s.traces}, compiles: ${s.compiles}, calls: ${s.calls}`);
  if (s.traces !== 1) throw new Error(`expected one trace on ${name}, got ${s.traces}`);
}
console.log("one trace per backend served all 4 batch sizes; f.dump() prints its IR.");
wasm.close();
