// Two checkouts of batchwise in one process: `tsx bench/compare-builds.ts <other checkout>
// [rounds] [row]` loads bench/libs/batchwise.ts (the JS backend) and bench/libs/batchwise-wasm.ts
// (WebAssembly, one thread) of this checkout and of the other one (each importing its own
// src/), and times B1, B2, B3, B4 and B5 on both, interleaved round by round (ABBA) on the same
// inputs, with the hand-written baseline of bench/cases.ts in the same rounds. It prints each
// build's median ratio to the baseline and new/old, so a refactor's cost reads as a ratio
// measured in one run (issue 27: "compare old and new in one process"). Every output is
// checked against the baseline within the bench's tolerance before it is timed.

import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import {
  BASELINES,
  compare,
  makeB1,
  makeB2,
  makeB4,
  makeClouds,
  SIZES,
  TOLERANCE,
  type KernelId,
  type LibAdapter,
  type LoadAdapter,
  type Runner,
} from "./cases.js";

const other = process.argv[2];
if (other === undefined) throw new Error("usage: tsx bench/compare-builds.ts <other checkout> [rounds]");
const rounds = Number(process.argv[3] ?? 7);
/** Only the rows whose id starts with this (e.g. "B5"). */
const only = process.argv[4] ?? "";

interface Row {
  readonly id: string;
  readonly kernel: KernelId;
  readonly input: unknown;
  /** Calls per timed sample (B5: many small calls). */
  readonly calls: number;
}
const ROWS: readonly Row[] = [
  { id: "B1 1e6", kernel: "B1", input: makeB1(SIZES.b1Large), calls: 1 },
  { id: "B2 3×3 inv+det 1e6", kernel: "B2", input: makeB2(SIZES.b2Count), calls: 1 },
  { id: "B3 normalise", kernel: "B3", input: makeClouds(SIZES.b3Clouds, SIZES.b3Points), calls: 1 },
  { id: "B4 ragged", kernel: "B4", input: makeB4(SIZES.b4Clouds, SIZES.b4MaxSize), calls: 1 },
  { id: "B5 N=16", kernel: "B1", input: makeB1(SIZES.b5N), calls: SIZES.b5CallsQuick },
];

async function adapters(root: string): Promise<LibAdapter[]> {
  const load = async (file: string, backend: string): Promise<LibAdapter> => {
    const m = (await import(pathToFileURL(resolve(root, "bench/libs", file)).href)) as { default: LoadAdapter };
    return m.default(backend);
  };
  return [await load("batchwise.ts", "js"), await load("batchwise-wasm.ts", "wasm-1")];
}

type AnyRunner = Runner<unknown, unknown>;
async function runner(a: LibAdapter, k: KernelId): Promise<AnyRunner | undefined> {
  const f = a.kernels[k] as (() => AnyRunner | Promise<AnyRunner>) | undefined;
  return f === undefined ? undefined : await f();
}

async function time(run: (x: unknown) => unknown, input: unknown, calls: number): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) await run(input);
  return performance.now() - t0;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
};

const builds = { new: await adapters(process.cwd()), old: await adapters(other) };
console.log(
  `new: ${process.cwd()}\nold: ${resolve(other)}\n${rounds} rounds, medians; ratios to the hand-written loop`,
);
console.log("| bench | backend | old | new | new/old |\n|---|---|---|---|---|");
for (const row of ROWS.filter((r) => r.id.startsWith(only))) {
  const base = BASELINES[row.kernel] as (x: unknown) => unknown;
  const want = base(row.input);
  for (let b = 0; b < builds.new.length; b++) {
    const made = { new: await runner(builds.new[b]!, row.kernel), old: await runner(builds.old[b]!, row.kernel) };
    if (made.new === undefined || made.old === undefined) continue;
    const pair = { new: made.new, old: made.old };
    for (const r of [pair.new, pair.old]) {
      const err = compare(row.kernel, await r.run(row.input), want);
      if (!(err <= TOLERANCE[row.kernel])) throw new Error(`${row.id}: max error ${err} over the tolerance`);
      await time((x) => r.run(x), row.input, row.calls); // warm
    }
    const ratio = { new: [] as number[], old: [] as number[], newOverOld: [] as number[] };
    for (let i = 0; i < rounds; i++) {
      // ABBA: the build timed first alternates round by round (allocation and GC state favour neither).
      const tb = await time(base, row.input, row.calls);
      const first = i % 2 === 0 ? pair.new : pair.old;
      const second = i % 2 === 0 ? pair.old : pair.new;
      const t1 = await time((x) => first.run(x), row.input, row.calls);
      const t2 = await time((x) => second.run(x), row.input, row.calls);
      const [tn, to] = i % 2 === 0 ? [t1, t2] : [t2, t1];
      ratio.new.push(tn / tb);
      ratio.old.push(to / tb);
      ratio.newOverOld.push(tn / to);
    }
    pair.new.dispose?.();
    pair.old.dispose?.();
    const f = (x: number): string => x.toFixed(2);
    console.log(
      `| ${row.id} | ${builds.new[b]!.backend} | ${f(median(ratio.old))} | ${f(median(ratio.new))} | ${f(median(ratio.newOverOld))} (${f(Math.min(...ratio.newOverOld))}–${f(Math.max(...ratio.newOverOld))}) |`,
    );
  }
}
process.exit(0);
