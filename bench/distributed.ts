/**
 * Sharding through batchwise/distributed on one machine: the B1 chain
 * (`x*x` → neg → exp, times sin(3x), plus x/2, minus tanh x) on 1e7 float32
 * elements, run
 *   in-process   one call of the jit function (no Redis, no copies);
 *   W workers    runSharded over W local worker processes (`batchwise worker`),
 *                for W = 1, 2 and 4 and several shard sizes.
 * It starts its own redis-server (Debian's) on a free loopback port, prints
 * medians of REPS runs, throughput (elements/s), and the per-shard overhead: on a
 * small batch (1e4 elements, ~1 ms of compute) cut into 1 and 32 shards,
 * (t32 - t1) / 31 is what each extra shard costs beyond its compute (job round
 * trip, .npy encode/decode, Redis transfer, the coordinator noticing the
 * finished job), measured with 1, 2 and 4 workers. The break-even shard size is
 * the overhead over the in-process compute per element (a shard smaller than
 * that spends more on overhead than on compute); 10x it keeps the overhead under 10%.
 *   npx tsx bench/distributed.ts [--n 10000000] [--reps 3] [--poll-ms ms]
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { fromTypedArray, jit, type Tensor } from "../src/index.js";
import { publishBundle, runSharded } from "../src/distributed/index.js";
import { freePort } from "../test/helpers/free-port.js";
import { b1Chain } from "./libs/batchwise-functions.js";

const { values } = parseArgs({
  options: { n: { type: "string" }, reps: { type: "string" }, "poll-ms": { type: "string" } },
});
const N = Number(values.n ?? "10000000");
const REPS = Number(values.reps ?? "3");
// runSharded's pollMs, when given (the event-driven coordinator only reconciles every pollMs; the
// polling coordinator before it polled every pollMs: `--poll-ms 5` measured that one).
const poll = values["poll-ms"] === undefined ? {} : { pollMs: Number(values["poll-ms"]) };
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const chain = (t: Tensor): Tensor => b1Chain(t);

function waitLine(p: ChildProcess, re: RegExp): Promise<void> {
  return new Promise((res) => {
    let buf = "";
    p.stdout!.on("data", (d: Buffer) => {
      buf += d.toString();
      if (re.test(buf)) res();
    });
  });
}

const median = (a: number[]) => [...a].sort((u, v) => u - v)[Math.floor(a.length / 2)]!;

async function time(f: () => Promise<unknown> | unknown): Promise<number> {
  const ts: number[] = [];
  await f(); // warm-up (bundle load on the workers, JIT)
  for (let r = 0; r < REPS; r++) {
    const t0 = performance.now();
    await f();
    ts.push(performance.now() - t0);
  }
  return median(ts);
}

const dir = mkdtempSync(join(os.tmpdir(), "batchwise-bench-redis-"));
const port = await freePort();
const url = `redis://127.0.0.1:${port}`;
const server = spawn(
  "redis-server",
  ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
  {
    stdio: ["ignore", "pipe", "inherit"],
  },
);
const workers: ChildProcess[] = [];
try {
  await waitLine(server, /Ready to accept connections/);
  const x = fromTypedArray(
    Float32Array.from({ length: N }, (_, i) => Math.sin(i * 1e-4) * 3),
    [N],
    { batchDim: 1 },
  );
  const f = jit(chain);
  f(x).dataSync();
  const hash = await publishBundle(url, f.bundle());
  const inProcess = await time(() => f(x).dataSync());
  const rows: string[] = [];
  const row = (what: string, ms: number, shards: number) =>
    rows.push(
      `| ${what} | ${shards} | ${ms.toFixed(0)} | ${(((N / ms) * 1e3) / 1e6).toFixed(1)} | ${(inProcess / ms).toFixed(2)} |`,
    );
  row("in-process call", inProcess, 1);
  const start = async (count: number) => {
    const batch = Array.from({ length: count }, () =>
      spawn(process.execPath, ["--import", "tsx", "src/cli.ts", "worker", "--redis", url, "--queue", "bench"], {
        cwd: root,
        stdio: ["ignore", "pipe", "inherit"],
      }),
    );
    workers.push(...batch);
    await Promise.all(batch.map((w) => waitLine(w, /ready/)));
  };
  const sharded = (shards: number) => () => runSharded(url, hash, [x], { shards, queue: "bench", ...poll });
  const small = fromTypedArray(
    Float32Array.from({ length: 10_000 }, (_, i) => Math.sin(i * 1e-2) * 3),
    [10_000],
    { batchDim: 1 },
  );
  const smallRun = (shards: number) => () => runSharded(url, hash, [small], { shards, queue: "bench", ...poll });
  const overhead: string[] = [];
  let running = 0;
  for (const w of [1, 2, 4]) {
    await start(w - running);
    running = w;
    for (const shards of w === 1 ? [1, 4, 16, 64] : [...new Set([w, 4 * w, 16])]) {
      const ms = await time(sharded(shards));
      row(`${w} worker(s)`, ms, shards);
    }
    // Per-shard overhead with w workers: a small batch (1e4 elements, compute ~1 ms) in 1 and 32 shards.
    const t1 = await time(smallRun(1));
    const t32 = await time(smallRun(32));
    const slope = (t32 - t1) / 31;
    rows.push(
      `| ${w} worker(s), 1e4 elements | 1 | ${t1.toFixed(1)} | | |`,
      `| ${w} worker(s), 1e4 elements | 32 | ${t32.toFixed(1)} | | |`,
    );
    const nsPerElem = (inProcess / N) * 1e6;
    const breakEven = (slope * 1e6) / nsPerElem;
    overhead.push(
      `${w} worker(s): per-shard overhead (t32 - t1) / 31 = ${slope.toFixed(2)} ms; break-even shard ${(breakEven / 1e3).toFixed(0)}k elements, overhead < 10% from ${((10 * breakEven) / 1e3).toFixed(0)}k`,
    );
  }
  console.log(`B1 chain, ${N.toExponential(0)} float32 elements, median of ${REPS}; ${os.cpus().length} CPU(s)`);
  console.log("| run | shards | ms | Melem/s | vs in-process |");
  console.log("|---|---|---|---|---|");
  for (const r of rows) console.log(r);
  console.log(`in-process compute: ${((inProcess / N) * 1e6).toFixed(1)} ns/element`);
  for (const o of overhead) console.log(o);
} finally {
  for (const w of workers) w.kill("SIGTERM");
  await Promise.all(workers.map((w) => (w.exitCode !== null ? undefined : new Promise((r) => w.once("exit", r)))));
  server.kill("SIGTERM");
  await new Promise((r) => (server.exitCode !== null ? r(undefined) : server.once("exit", r)));
  rmSync(dir, { recursive: true, force: true });
}
