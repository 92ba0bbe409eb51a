// One library in one process: `node --import tsx bench/worker.ts <adapter.ts> <backend> <config-json> <out.json>`.
// Spawned by bench/run.ts, so that one library's WASM threads and heap do not
// disturb another's. For every benchmark it first checks the library's output
// against the hand-written baseline, then times them alternately.

import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import {
  BASELINES,
  KERNEL_OF,
  SIZES,
  TOLERANCE,
  compare,
  makeB1,
  makeB2,
  makeB4,
  makeClouds,
  makeB8solve,
  makeB8eigh,
  B8_SIZES,
  makeB9,
  B9_POINTS,
  makeB7,
  B7_SIZES,
  type BenchId,
  type Counters,
  type KernelId,
  type LibAdapter,
  type LoadAdapter,
  type Runner,
} from "./cases.js";
import type { Row, WorkerConfig, WorkerResult } from "./protocol.js";

const [adapterPath, backend, configJson, outFile] = process.argv.slice(2);
if (!adapterPath || !backend || !configJson || !outFile) {
  console.error("usage: worker.ts <adapter.ts> <backend> <config-json> <out.json>");
  process.exit(2);
}
const config = JSON.parse(configJson) as WorkerConfig;

/** Timing budget per benchmark and library (ms of timed work), and sample bounds. */
// A row whose checked first call took longer than slowMs gets no warm-up and slowSamples samples.
const PLAN = config.quick
  ? {
      budgetMs: 600,
      minSamples: 3,
      maxSamples: 8,
      warmup: 1,
      b6Sizes: 3,
      b5Calls: SIZES.b5CallsQuick,
      slowMs: 1500,
      slowSamples: 2,
    }
  : {
      budgetMs: 6000,
      minSamples: 5,
      maxSamples: 30,
      warmup: 2,
      b6Sizes: 10,
      b5Calls: SIZES.b5Calls,
      slowMs: 4000,
      slowSamples: 3,
    };

type AnyRunner = Runner<unknown, unknown>;

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";
}

async function call(runner: AnyRunner, input: unknown): Promise<unknown> {
  const r = runner.run(input);
  return isThenable(r) ? await r : r;
}

async function timeOnce(runner: AnyRunner, input: unknown): Promise<number> {
  const t0 = performance.now();
  const r = runner.run(input);
  if (isThenable(r)) await r;
  return performance.now() - t0;
}

/** Time of `calls` consecutive calls, divided by `calls`. */
async function timePerCall(runner: AnyRunner, input: unknown, calls: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) {
    const r = runner.run(input);
    if (isThenable(r)) await r;
  }
  return (performance.now() - t0) / calls;
}

function stats(xs: number[]): { median: number; min: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]! };
}

function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

function baselineRunner(kernel: KernelId): AnyRunner {
  return { run: BASELINES[kernel] as (input: unknown) => unknown };
}

function inputFor(bench: BenchId): { input: unknown; n: number } {
  switch (bench) {
    case "B1-1e6":
      return { input: makeB1(SIZES.b1Large), n: SIZES.b1Large };
    case "B1-1e4":
      return { input: makeB1(SIZES.b1Small), n: SIZES.b1Small };
    case "B2":
      return { input: makeB2(SIZES.b2Count), n: SIZES.b2Count };
    case "B3":
      return { input: makeClouds(SIZES.b3Clouds, SIZES.b3Points), n: SIZES.b3Clouds };
    case "B4":
      return { input: makeB4(SIZES.b4Clouds, SIZES.b4MaxSize), n: SIZES.b4Clouds };
    case "B5":
      return { input: makeB1(SIZES.b5N, 5), n: SIZES.b5N };
    case "B6":
      return { input: makeClouds(SIZES.b6WarmClouds, SIZES.b6Points, 6), n: SIZES.b6WarmClouds + 1 };
    case "B8-solve":
      return { input: makeB8solve(B8_SIZES.solveCount), n: B8_SIZES.solveCount };
    case "B8-eigh":
      return { input: makeB8eigh(B8_SIZES.eighCount), n: B8_SIZES.eighCount };
    case "B9":
      return { input: makeB9(B9_POINTS), n: B9_POINTS };
    // --- B7: gather + scatter-add ---
    case "B7":
      return { input: makeB7(B7_SIZES.points, B7_SIZES.bins), n: B7_SIZES.points };
  }
}

class WrongResult extends Error {}

function checkOutput(lib: string, bench: BenchId, kernel: KernelId, got: unknown, want: unknown, what: string): number {
  const err = compare(kernel, got, want);
  const tol = TOLERANCE[kernel];
  console.log(`  ${bench} ${lib}: max abs err ${fmtErr(err)} (tolerance ${tol}) ${what}`);
  if (!(err <= tol)) {
    throw new WrongResult(`${bench} ${lib}: WRONG RESULT ${what}: max abs err ${fmtErr(err)} > tolerance ${tol}`);
  }
  return err;
}

function fmtErr(e: number): string {
  return e === 0 ? "0" : e.toExponential(2);
}

function delta(a: Counters | undefined, b: Counters | undefined): Counters | undefined {
  if (!a || !b) return undefined;
  return { traces: b.traces - a.traces, compiles: b.compiles - a.compiles, cacheHits: b.cacheHits - a.cacheHits };
}

/** B1, B2, B3, B4, B5: check once, warm up, then alternate baseline and library samples. */
async function runStandard(adapter: LibAdapter, bench: BenchId, runner: AnyRunner, notes: string[]): Promise<Row> {
  const kernel = KERNEL_OF[bench];
  const { input, n } = inputFor(bench);
  const base = baselineRunner(kernel);
  const label = `${adapter.library}/${adapter.backend}`;
  const want = await call(base, input);
  const before = runner.stats?.();
  const t0 = performance.now();
  const got = await call(runner, input);
  const firstMs = performance.now() - t0;
  const maxAbsErr = checkOutput(label, bench, kernel, got, want, "");

  const perCall = bench === "B5";
  const sample = (r: AnyRunner) => (perCall ? timePerCall(r, input, PLAN.b5Calls) : timeOnce(r, input));
  let samples = PLAN.slowSamples;
  if (firstMs > PLAN.slowMs) {
    notes.push(
      `${bench} ${label}: only ${samples} samples, no warm-up (first call took ${(firstMs / 1000).toFixed(1)} s)`,
    );
  } else {
    for (let i = 0; i < PLAN.warmup; i++) {
      await sample(base);
      await sample(runner);
    }
    // One paired probe sets the sample count from the budget.
    const probe = (await sample(base)) + (await sample(runner));
    const probeMs = perCall ? probe * PLAN.b5Calls : probe;
    samples = Math.max(PLAN.minSamples, Math.min(PLAN.maxSamples, Math.floor(PLAN.budgetMs / Math.max(probeMs, 1e-3))));
  }

  gc();
  const libTimes: number[] = [];
  const baseTimes: number[] = [];
  for (let i = 0; i < samples; i++) {
    // Alternate which goes first, so neither always runs right after the other's garbage.
    if (i % 2 === 0) {
      baseTimes.push(await sample(base));
      libTimes.push(await sample(runner));
    } else {
      libTimes.push(await sample(runner));
      baseTimes.push(await sample(base));
    }
  }
  const l = stats(libTimes);
  const b = stats(baseTimes);
  const counters = delta(before, runner.stats?.());
  return {
    bench,
    library: adapter.library,
    backend: adapter.backend,
    n,
    medianMs: l.median,
    minMs: l.min,
    maxMs: l.max,
    baselineMedianMs: b.median,
    ratio: l.median / b.median,
    maxAbsErr,
    samples,
    ...(perCall ? { callsPerSample: PLAN.b5Calls } : {}),
    ...(counters ? { counters: { ...counters, scope: "all calls of this benchmark" } } : {}),
  };
}

/**
 * B6: the kernel is warm on one batch size; then, for several batch sizes never
 * seen before, time the first call, then a repeat call at the same size.
 */
async function runNewBatchSize(adapter: LibAdapter, runner: AnyRunner): Promise<Row> {
  const bench: BenchId = "B6";
  const kernel = KERNEL_OF[bench];
  const base = baselineRunner(kernel);
  const label = `${adapter.library}/${adapter.backend}`;
  const warm = makeClouds(SIZES.b6WarmClouds, SIZES.b6Points, 6);
  checkOutput(
    label,
    bench,
    kernel,
    await call(runner, warm),
    await call(base, warm),
    `(warm size ${SIZES.b6WarmClouds})`,
  );
  for (let i = 0; i < PLAN.warmup + 1; i++) await call(runner, warm);

  const before = runner.stats?.();
  const first: number[] = [];
  const repeat: number[] = [];
  const baseTimes: number[] = [];
  let maxAbsErr = 0;
  gc();
  for (let k = 0; k < PLAN.b6Sizes; k++) {
    const size = SIZES.b6WarmClouds + 1 + k;
    const input = makeClouds(size, SIZES.b6Points, 600 + k);
    baseTimes.push(await timeOnce(base, input));
    let got: unknown;
    const t0 = performance.now();
    got = await call(runner, input);
    first.push(performance.now() - t0);
    repeat.push(await timeOnce(runner, input));
    if (k === 0 || k === PLAN.b6Sizes - 1) {
      const err = checkOutput(label, bench, kernel, got, await call(base, input), `(new size ${size})`);
      maxAbsErr = Math.max(maxAbsErr, err);
    }
  }
  const counters = delta(before, runner.stats?.());
  const f = stats(first);
  const r = stats(repeat);
  const b = stats(baseTimes);
  return {
    bench,
    library: adapter.library,
    backend: adapter.backend,
    n: SIZES.b6WarmClouds + 1,
    medianMs: f.median,
    minMs: f.min,
    maxMs: f.max,
    baselineMedianMs: b.median,
    ratio: f.median / b.median,
    maxAbsErr,
    samples: PLAN.b6Sizes,
    repeatMedianMs: r.median,
    firstOverRepeat: f.median / r.median,
    ...(counters ? { counters: { ...counters, scope: `${PLAN.b6Sizes} first+repeat calls at new sizes` } } : {}),
  };
}

function message(e: unknown): string {
  if (e instanceof Error) return e.message.split("\n")[0]!;
  return String(e);
}

async function main(): Promise<void> {
  const result: WorkerResult = { library: "?", backend: backend!, rows: [], notes: [], failures: [] };
  const save = () => writeFileSync(outFile!, JSON.stringify(result, null, 2));
  let adapter: LibAdapter;
  try {
    const mod = (await import(pathToFileURL(adapterPath!).href)) as { default: LoadAdapter };
    adapter = await mod.default(backend!);
  } catch (e) {
    result.failures.push(`cannot load adapter ${adapterPath} (${backend}): ${message(e)}`);
    save();
    return;
  }
  result.library = adapter.library;
  const label = `${adapter.library}/${adapter.backend}`;
  for (const note of adapter.notes ?? []) result.notes.push(`${label}: ${note}`);

  // Skips with the same reason share one note: "B1-1e6, B1-1e4 lib: skipped: why".
  const skips = new Map<string, BenchId[]>();
  const skip = (bench: BenchId, why: string) => {
    console.log(`  ${bench} ${label}: skipped: ${why}`);
    skips.set(why, [...(skips.get(why) ?? []), bench]);
  };
  const flushSkips = () => {
    for (const [why, benches] of skips) result.notes.push(`${benches.join(", ")} ${label}: skipped: ${why}`);
    skips.clear();
  };

  for (const bench of config.only) {
    const kernel = KERNEL_OF[bench];
    const factory = adapter.kernels[kernel];
    if (!factory) {
      skip(bench, adapter.skipped[kernel] ?? "not implemented");
      continue;
    }
    const heavy = adapter.heavy?.[kernel];
    if (config.quick && heavy) {
      skip(bench, `left out of --quick: ${heavy}`);
      continue;
    }
    let runner: AnyRunner | undefined;
    try {
      gc();
      runner = (await (factory as () => Promise<AnyRunner> | AnyRunner)()) as AnyRunner;
      const row =
        bench === "B6"
          ? await runNewBatchSize(adapter, runner)
          : await runStandard(adapter, bench, runner, result.notes);
      result.rows.push(row);
      const extra = row.firstOverRepeat !== undefined ? `, first/repeat ${row.firstOverRepeat.toFixed(2)}` : "";
      const ctr = row.counters ? `, traces +${row.counters.traces} compiles +${row.counters.compiles}` : "";
      console.log(
        `  ${bench} ${label}: median ${row.medianMs.toPrecision(4)} ms vs baseline ${row.baselineMedianMs.toPrecision(4)} ms, ratio ${row.ratio.toPrecision(3)}${extra}${ctr} (${row.samples} samples)`,
      );
    } catch (e) {
      if (e instanceof WrongResult) {
        result.failures.push(e.message);
        console.error(`  ${e.message}`);
      } else if (adapter.library === "batchwise") {
        // The library is being built: a missing op is a skip with its reason, not a crash of the run.
        skip(bench, message(e));
      } else {
        result.failures.push(`${bench} ${label}: error: ${message(e)}`);
        console.error(`  ${bench} ${label}: error:`, e);
      }
    } finally {
      try {
        runner?.dispose?.();
      } catch {
        // disposing a half-built runner is best effort
      }
    }
    save();
  }
  flushSkips();
  save();
}

await main();
// Some peers keep worker threads alive (WASM thread pools); the parent has what it needs.
process.exit(0);
