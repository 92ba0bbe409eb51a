// First-call cost against graph size (issue 28, item 3): `npx tsx bench/compile-cost.ts
// [sizes] [backends]` (defaults `10,100,400,800` and `js,wasm`). For each backend and k, a
// fresh Node process (fresh V8 and kernel caches) jits a fused chain of k elementwise ops on
// 1,000 float32 values and times its first call (trace + passes + codegen + compile + run)
// and its second call (run only). It prints the times and, per k, the first call on each
// backend relative to JS's, the figure the target is stated in (wasm within 2× of
// JS at k = 800). A child that takes longer than the limit is reported as such.

import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

interface Measured {
  readonly backend: string;
  readonly k: number;
  readonly nodes: number;
  readonly firstMs: number;
  readonly secondMs: number;
}

const LIMIT_MS = 180_000;

/** The chain: k ops cycling through cheap arithmetic and a transcendental (values stay finite). */
function chain(x: import("../src/tensor.js").Tensor, k: number): import("../src/tensor.js").Tensor {
  let y = x;
  for (let i = 0; i < k; i++) {
    const r = i % 4;
    y = r === 0 ? y.mul(0.999) : r === 1 ? y.add(0.001) : r === 2 ? y.sin() : y.mul(y).sub(0.25);
  }
  return y;
}

async function child(backend: string, k: number): Promise<void> {
  const bw = await import("../src/index.js");
  if (backend === "wasm") await bw.initWasm({ threads: 1 });
  const x = bw.fromTypedArray(
    Float32Array.from({ length: 1000 }, (_, i) => (i % 100) / 100),
    [1000],
    { batchDim: 1 },
  );
  const f = bw.jit((t: import("../src/tensor.js").Tensor) => chain(t, k));
  let t0 = performance.now();
  f(x).dataSync();
  const firstMs = performance.now() - t0;
  t0 = performance.now();
  f(x).dataSync();
  const secondMs = performance.now() - t0;
  if (f.stats.traces !== 1 || f.stats.compiles < 1) throw new Error(`unexpected counters ${JSON.stringify(f.stats)}`);
  const nodes = f
    .dump()
    .split("\n")
    .filter((l) => l.includes(" = ")).length;
  const m: Measured = { backend, k, nodes, firstMs, secondMs };
  console.log(JSON.stringify(m));
}

function parent(): void {
  const sizes = (process.argv[2] ?? "10,100,400,800").split(",").map(Number);
  const backends = (process.argv[3] ?? "js,wasm").split(",");
  const me = fileURLToPath(import.meta.url);
  const rows: (Measured | { backend: string; k: number; error: string })[] = [];
  for (const k of sizes) {
    for (const backend of backends) {
      const r = spawnSync(process.execPath, ["--import", "tsx", me, "--child", backend, String(k)], {
        encoding: "utf8",
        timeout: LIMIT_MS,
      });
      const line = r.stdout.split("\n").find((l) => l.startsWith("{"));
      rows.push(
        line !== undefined
          ? (JSON.parse(line) as Measured)
          : { backend, k, error: r.error !== undefined ? `over ${LIMIT_MS / 1000} s` : r.stderr.split("\n")[0]! },
      );
    }
  }
  console.log(
    "| k | IR nodes | backend | first call ms | second call ms | first / JS first |\n|---|---|---|---|---|---|",
  );
  for (const row of rows) {
    if ("error" in row) {
      console.log(`| ${row.k} | | ${row.backend} | ${row.error} | | |`);
      continue;
    }
    const js = rows.find((r) => r.k === row.k && r.backend === "js");
    const rel = js !== undefined && !("error" in js) ? (row.firstMs / js.firstMs).toFixed(2) : "";
    console.log(
      `| ${row.k} | ${row.nodes} | ${row.backend} | ${row.firstMs.toFixed(1)} | ${row.secondMs.toFixed(2)} | ${rel} |`,
    );
  }
}

if (process.argv[2] === "--child") await child(process.argv[3]!, Number(process.argv[4]));
else parent();
