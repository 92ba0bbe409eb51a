/**
 * B1's chain on 1,000,000 float32 elements laid out as different batch shapes, on the
 * wasm backend (one thread and every core) and on the JS backend, in one process:
 * the time per call (median of `rounds`, input already in place, output not read),
 * and how many launches ran split over threads and with a SIMD outer loop. With one
 * batch dim the kernel has one loop; with several, the loops nest (the outer one is
 * split over threads, the inner one runs in SIMD lanes).
 *   npx tsx bench/wasm-batch-dims.ts [rounds]
 */
import { availableCores } from "../runtime/wasm/pool.js";
import { fromTypedArray, initWasm, jit, setBackend, setThreads, type Tensor } from "../src/index.js";
import { b1Chain } from "./libs/batchwise-functions.js";

const rounds = Number(process.argv[2] ?? 15);
const n = 1_000_000;
const chain = (x: Tensor): Tensor => b1Chain(x);
const layouts: [number[], number][] = [
  [[n], 1],
  [[1000, 1000], 2],
  [[2, 500_000], 2],
  [[1, n], 2],
  [[10, 100, 1000], 3],
];
const data = new Float32Array(n).map((_, i) => Math.sin(i) * 4);
const median = (a: number[]): number => a.sort((p, q) => p - q)[a.length >> 1]!;

const wasm = await initWasm({ select: false });
const cores = availableCores();
const runs: ["js" | "wasm", number][] = [
  ["js", 0],
  ["wasm", 1],
  ["wasm", cores],
];
for (const [shape, batchDim] of layouts) {
  const row: string[] = [];
  for (const [name, threads] of runs) {
    setBackend(name);
    if (name === "wasm") await setThreads(threads);
    const be = name === "wasm" ? wasm : null;
    const label = name === "js" ? "js" : `wasm, ${wasm.threads} thread${wasm.threads === 1 ? "" : "s"}`;
    const f = jit(chain);
    const x = fromTypedArray(data, shape, { batchDim });
    f(x).dispose();
    const before = be ? { ...be.stats } : undefined;
    const times: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const t0 = performance.now();
      const y = f(x);
      times.push(performance.now() - t0);
      y.dispose();
    }
    const launches = be && before ? be.stats.launches - before.launches : 0;
    const how =
      be && before
        ? ` (threaded ${be.stats.threaded - before.threaded}/${launches}, SIMD outer ${be.stats.simd - before.simd}/${launches})`
        : "";
    row.push(`${label} ${median(times).toFixed(2)} ms${how}`);
    x.dispose();
  }
  console.log(`(${shape.join(", ")};)  ${row.join("  |  ")}`);
}
setBackend("js");
wasm.close();
