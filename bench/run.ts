// `npm run bench` (= tsx bench/run.ts) [--quick] [--only B1,B3] [--libs batchwise,jax]
//
// Installs the peer libraries into bench/peers (their own package, not the
// library's dependencies) when missing, bundles the worker and each adapter
// with esbuild, then runs one plain-Node worker process per library/backend
// (bench/worker.ts), which checks outputs against the
// hand-written baseline and times library and baseline alternately. Collects
// the rows into bench/results/latest.{json,svg,md} and prints the table.
// Exits non-zero when any library produced a wrong result or crashed.

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { BENCH_IDS, type BenchId } from "./cases.js";
import type { Row, WorkerConfig, WorkerResult } from "./protocol.js";
import { markdownTable, svgChart } from "./report.js";
import { build } from "esbuild";

const benchDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = dirname(benchDir);
const peersDir = join(benchDir, "peers");
const resultsDir = join(benchDir, "results");

interface LibSpec {
  id: string;
  adapter: string;
  backend: string;
  needsPeers: boolean;
  env?: Record<string, string>;
}

/** One worker process each, in this order. */
const LIBS: LibSpec[] = [
  { id: "hand-written", adapter: "libs/hand-written.ts", backend: "js", needsPeers: false },
  { id: "batchwise", adapter: "libs/batchwise.ts", backend: "js", needsPeers: false },
  // The same B1 code evaluated op by op (one kernel and buffer per op): what fusion buys.
  { id: "batchwise-unfused", adapter: "libs/batchwise.ts", backend: "js-unfused", needsPeers: false },
  // Every float32 op rounded, bit-identical to op-by-op evaluation (jit option float32: "exact").
  { id: "batchwise-exact", adapter: "libs/batchwise.ts", backend: "js-exact", needsPeers: false },
  // Skipped (with the reason) when no WebGPU adapter can be had. Dawn on Mesa needs a
  // surfaceless EGL; Mesa's shader cache off keeps first-compile times honest (docs/ARCHITECTURE.md, Backends).
  {
    id: "batchwise-webgpu",
    adapter: "libs/batchwise.ts",
    backend: "webgpu",
    needsPeers: false,
    env: { EGL_PLATFORM: "surfaceless", MESA_SHADER_CACHE_DISABLE: "true" },
  },
  // The same B1 code with fusion off on WebGPU: what fusion buys on the WGSL path.
  {
    id: "batchwise-webgpu-unfused",
    adapter: "libs/batchwise.ts",
    backend: "webgpu-unfused",
    needsPeers: false,
    env: { EGL_PLATFORM: "surfaceless", MESA_SHADER_CACHE_DISABLE: "true" },
  },
  { id: "tfjs-cpu", adapter: "peers/adapters/tfjs.ts", backend: "cpu", needsPeers: true },
  { id: "tfjs-wasm", adapter: "peers/adapters/tfjs.ts", backend: "wasm", needsPeers: true },
  { id: "jax", adapter: "peers/adapters/jax.ts", backend: "wasm", needsPeers: true },
  { id: "ndarray", adapter: "peers/adapters/ndarray.ts", backend: "js", needsPeers: true },
  { id: "onnx", adapter: "peers/adapters/onnx.ts", backend: "cpu", needsPeers: true },
  // --- WebAssembly backend ---
  // One thread, then every available core (batch sharding over worker threads).
  { id: "batchwise-wasm-1", adapter: "libs/batchwise-wasm.ts", backend: "wasm-1", needsPeers: false },
  { id: "batchwise-wasm", adapter: "libs/batchwise-wasm.ts", backend: "wasm", needsPeers: false },
];

function parseArgs(argv: string[]): { quick: boolean; only: BenchId[]; libs: LibSpec[] } {
  let quick = false;
  let only: BenchId[] = [...BENCH_IDS];
  let libs = LIBS;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const eq = a.indexOf("=");
      if (eq >= 0) return a.slice(eq + 1);
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--quick") quick = true;
    else if (a.startsWith("--only")) {
      const wanted = value()
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      only = BENCH_IDS.filter((id) => wanted.some((w) => id === w || id.startsWith(`${w}-`)));
      const unknown = wanted.filter((w) => !BENCH_IDS.some((id) => id === w || id.startsWith(`${w}-`)));
      if (unknown.length)
        throw new Error(`--only: unknown benchmark ${unknown.join(", ")} (have ${BENCH_IDS.join(", ")})`);
    } else if (a.startsWith("--libs")) {
      const wanted = value()
        .split(",")
        .map((s) => s.trim());
      const unknown = wanted.filter((w) => !LIBS.some((l) => l.id === w));
      if (unknown.length)
        throw new Error(`--libs: unknown library ${unknown.join(", ")} (have ${LIBS.map((l) => l.id).join(", ")})`);
      libs = LIBS.filter((l) => wanted.includes(l.id));
    } else if (a === "--help" || a === "-h") {
      console.log(
        "usage: tsx bench/run.ts [--quick] [--only B1,B3,...] [--libs " + LIBS.map((l) => l.id).join(",") + "]",
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${a}`);
  }
  return { quick, only, libs };
}

/** `npm ci` into bench/peers unless a finished install is there; returns why not, or undefined when ready. */
function ensurePeers(): string | undefined {
  if (existsSync(join(peersDir, "node_modules", ".package-lock.json"))) return undefined;
  console.log("Installing the peer libraries: npm ci --prefix bench/peers");
  const r = spawnSync("npm", ["ci", "--prefix", peersDir, "--no-audit", "--no-fund"], {
    stdio: "inherit",
    // onnxruntime-node ships its CPU binaries; its postinstall would only fetch GPU extras.
    env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: "skip" },
  });
  if (r.status === 0) return undefined;
  return `npm ci --prefix bench/peers failed (${r.error?.message ?? `exit ${r.status}`})`;
}

/**
 * Compiles `entry` (TypeScript) into one ES module at `<its dir>/.bundle/<name>.mjs`
 * and returns its path, as an application would ship it.
 * - The worker and batchwise's adapter inline their JavaScript dependencies (zod);
 *   only `webgpu`, a native addon, stays a package import.
 * - The peers' adapters keep every package external, since those packages load
 *   their own WASM and native files; written beside the adapter, the bundle
 *   resolves them from bench/peers/node_modules as the source would.
 *
 * Why workers run bundles and not `node --import tsx`: with tsx's loader in the
 * process, allocation-heavy rows (B4) took 2-3 times as long and their ratios
 * moved by tens of percent, while the hand loops, which allocate little, hardly
 * changed. What users run is compiled JavaScript, so that is what is timed.
 */
async function bundle(entry: string): Promise<string> {
  const outfile = join(dirname(entry), ".bundle", basename(entry).replace(/\.ts$/, ".mjs"));
  const deps = entry.startsWith(peersDir) ? { packages: "external" as const } : { external: ["webgpu"] };
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
    ...deps,
  });
  return outfile;
}

function runWorker(
  lib: LibSpec,
  worker: string,
  adapter: string,
  config: WorkerConfig,
  outFile: string,
  timeoutMs: number,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["--expose-gc", worker, adapter, lib.backend, JSON.stringify(config), outFile],
      { cwd: repoRoot, stdio: "inherit", env: { ...lib.env, ...process.env } },
    );
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      if (timedOut) resolve(`timed out after ${timeoutMs / 1000} s`);
      else if (code !== 0) resolve(`worker exited with ${signal ?? `code ${code}`}`);
      else resolve(undefined);
    });
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve(`could not start worker: ${e.message}`);
    });
  });
}

function machine(): Record<string, unknown> {
  const cpus = os.cpus();
  let commit: string | undefined;
  const git = spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot, encoding: "utf8" });
  if (git.status === 0) commit = git.stdout.trim();
  return {
    cpu: cpus[0]?.model ?? "unknown",
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    node: process.version,
    ...(commit ? { commit } : {}),
  };
}

async function main(): Promise<void> {
  let args: ReturnType<typeof parseArgs>;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    console.error(`bench: ${(e as Error).message}`);
    process.exit(2);
  }
  const { quick, only, libs } = args;
  const command = `npx tsx bench/run.ts ${process.argv.slice(2).join(" ")}`.trim();
  const started = Date.now();
  const config: WorkerConfig = { only, quick };
  const rows: Row[] = [];
  const notes: string[] = [];
  const failures: string[] = [];

  const peersProblem = libs.some((l) => l.needsPeers) ? ensurePeers() : undefined;
  if (peersProblem) notes.push(`peers skipped: ${peersProblem}`);

  const tmp = mkdtempSync(join(os.tmpdir(), "batchwise-bench-"));
  const bundles = new Map<string, Promise<string>>();
  const bundled = (entry: string): Promise<string> => {
    let b = bundles.get(entry);
    if (b === undefined) bundles.set(entry, (b = bundle(entry)));
    return b;
  };
  try {
    const worker = await bundled(join(benchDir, "worker.ts"));
    for (const lib of libs) {
      if (lib.needsPeers && peersProblem) continue;
      console.log(`\n== ${lib.id} (${lib.backend}) ==`);
      let adapter: string;
      try {
        adapter = await bundled(join(benchDir, lib.adapter));
      } catch (e) {
        failures.push(
          `${lib.id} (${lib.backend}): could not bundle ${lib.adapter}: ${(e as Error).message.split("\n")[0]}`,
        );
        continue;
      }
      // One process per benchmark: what one benchmark leaves in the heap (B2's
      // inputs, B1's programs) must not time the next one's garbage collections.
      // In one process per library, hand-written B4 against itself read 1.34.
      for (const bench of only) {
        const outFile = join(tmp, `${lib.id}-${bench}.json`);
        const problem = await runWorker(
          lib,
          worker,
          adapter,
          { ...config, only: [bench] },
          outFile,
          (quick ? 90 : 300) * 1000,
        );
        let result: WorkerResult | undefined;
        if (existsSync(outFile)) result = JSON.parse(readFileSync(outFile, "utf8")) as WorkerResult;
        if (result) {
          rows.push(...result.rows);
          for (const n of result.notes) if (!notes.includes(n)) notes.push(n);
          failures.push(...result.failures);
        }
        if (problem)
          failures.push(
            `${lib.id} (${lib.backend}) ${bench}: ${problem}${result ? " (rows measured before that are kept)" : ""}`,
          );
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }

  const order = (r: Row) => BENCH_IDS.indexOf(r.bench);
  rows.sort((a, b) => order(a) - order(b));
  const date = new Date().toISOString();
  const info = machine();
  mkdirSync(resultsDir, { recursive: true });
  const report = {
    date,
    command,
    quick,
    machine: info,
    rows,
    notes,
    failures,
    seconds: Math.round((Date.now() - started) / 1000),
  };
  writeFileSync(join(resultsDir, "latest.json"), JSON.stringify(report, null, 2) + "\n");
  const title = `batchwise benchmarks${quick ? " (--quick)" : ""}: ${info.cores} × ${String(info.cpu)}, Node ${process.version}, ${date.slice(0, 10)}`;
  writeFileSync(join(resultsDir, "latest.svg"), svgChart(rows, title));
  const table = markdownTable(rows, [...failures.map((f) => `FAILED: ${f}`), ...notes]);
  const md = `${title}\n\nCommand: \`${command}\`\n\n${table}\n`;
  writeFileSync(join(resultsDir, "latest.md"), md);

  console.log(`\n${md}`);
  console.log(`Wrote ${relative(repoRoot, resultsDir)}/latest.{json,svg,md} in ${report.seconds} s.`);
  if (failures.length) {
    console.error(`\n${failures.length} FAILURE(S):\n${failures.map((f) => `  - ${f}`).join("\n")}`);
    process.exitCode = 1;
  }
}

await main();
