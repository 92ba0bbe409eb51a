/**
 * One random case (test/helpers/random-graph.ts) through the whole pass pipeline on
 * a backend, compared with the reference interpreter: the differential checks that
 * the per-op test files (take, scatter, routine, …) share. Each throws an Error
 * naming the seed, the backend and the graph when a value differs.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Graph } from "../../ir/graph.js";
import { interpret, type Value } from "../../ir/interpret.js";
import { printGraph } from "../../ir/print.js";
import { runPipeline } from "../../passes/pipeline.js";
import { Program } from "../../runtime/program.js";
import { counters } from "../../runtime/stats.js";
import type { WebGPUBackend } from "../../runtime/webgpu/backend.js";
import type { Schedule } from "../../ir/schedule.js";
import { closeEnough, randomInputs, seedArb, type Family, type RandomCase } from "./random-graph.js";
import { compileJs, runJs, FC_SEED } from "./run.js";
import { uploadValues } from "./gpu-upload.js";
import { WasmBackend } from "../../runtime/wasm/backend.js";

/** The families the per-op differential tests cover, and their tolerances against the interpreter. */
export const DIFF_FAMILIES: readonly Family[] = ["float64", "float32", "int32", "uint32"];
export const DIFF_TOL: Record<Family, number> = { float64: 1e-9, float32: 1e-5, int32: 0, uint32: 0 };

/**
 * The two describe blocks every op with its own random-case generator has: random cases
 * (with and without special values, unrolled or looped) on JS and on a WebAssembly
 * backend, each family against the interpreter. `has` asserts the generated graph holds the op.
 */
export function describeRandomJsAndWasm(
  op: string,
  make: (seed: number, family: Family, opts: { specials: boolean }) => RandomCase,
  has: (g: Graph) => boolean,
  runs: { readonly js: number; readonly wasm: number },
): void {
  describe(`${op} in random graphs on JS equals the reference interpreter`, () => {
    for (const family of DIFF_FAMILIES) {
      it(family, () => {
        fc.assert(
          fc.property(seedArb, fc.boolean(), fc.boolean(), (seed, unroll, specials) => {
            const c = make(seed, family, { specials });
            expect(has(c.graph)).toBe(true);
            checkOnJs(c, family, DIFF_TOL[family], unroll ? 64 : 0);
          }),
          { numRuns: runs.js, seed: FC_SEED },
        );
      });
    }
  });
  describe(`${op} in random graphs on WebAssembly equals the reference interpreter`, () => {
    const wasm = new WasmBackend();
    for (const family of DIFF_FAMILIES) {
      it(family, () => {
        fc.assert(
          fc.property(seedArb, fc.boolean(), fc.boolean(), (seed, unroll, specials) =>
            checkOnWasm(wasm, make(seed, family, { specials }), family, DIFF_TOL[family], unroll ? 64 : 0),
          ),
          { numRuns: runs.wasm, seed: FC_SEED },
        );
      });
    }
  });
}

/** Throws the failure of case `seed` on `where` with the graph's text. */
export function failCase(seed: number, where: string, err: string, g: Graph): never {
  throw new Error(`seed ${seed} (${where}): ${err}\n${printGraph(g)}`);
}

/** The case's inputs and the interpreter's outputs for them. */
function reference(c: RandomCase): { inputs: Value[]; expected: Value[] } {
  const inputs = randomInputs(c);
  return { inputs, expected: interpret(c.graph, inputs) };
}

/** Kernel steps of a schedule: what one run launches on a sequential backend. */
function kernelSteps(s: Schedule): number {
  return s.steps.filter((st) => st.kind === "kernel").length;
}

/** The case on the JS backend (every kernel launched once, the compiled path) against the interpreter. */
export function checkOnJs(c: RandomCase, where: string, tol: number, unrollLimit = 64): void {
  const { inputs, expected } = reference(c);
  const program = compileJs(c.graph, unrollLimit);
  const before = counters.dispatches;
  const actual = runJs(program, inputs);
  expect(counters.dispatches - before).toBe(kernelSteps(program.schedule));
  actual.forEach((a, i) => {
    expect(a.type).toEqual(expected[i]!.type);
    const err = closeEnough(a.data, expected[i]!.data, tol);
    if (err !== undefined) failCase(c.seed, `${where} js`, err, c.graph);
  });
}

/** The case on a WebAssembly backend (every kernel launched once) against the interpreter. */
export function checkOnWasm(wasm: WasmBackend, c: RandomCase, where: string, tol: number, unrollLimit = 64): void {
  const { inputs, expected } = reference(c);
  const p = Program.create(
    runPipeline(c.graph, { maxKernelBuffers: Infinity, unrollLimit, mixedBaseOutputs: true }).schedule,
    wasm,
  );
  if (p instanceof Promise) throw new Error("the wasm backend compiles synchronously");
  const before = wasm.stats.launches;
  const outs = p.run(inputs.map((v) => ({ buffer: wasm.wrap(v.type.dtype, v.data.slice()), type: v.type })));
  expect(wasm.stats.launches - before).toBe(kernelSteps(p.schedule));
  outs.forEach((o, i) => {
    expect(o.type).toEqual(expected[i]!.type);
    const err = closeEnough(wasm.readSync(o.buffer), expected[i]!.data, tol);
    if (err !== undefined) failCase(c.seed, `${where} wasm`, err, c.graph);
  });
}

/**
 * The case on WebGPU against the interpreter. A non-empty result proves the WGSL
 * path ran (empty launches dispatch nothing); `dispatchesOf` bounds the dispatches
 * of one run (default: one per kernel step).
 */
export async function checkOnWebGPU(
  gpu: WebGPUBackend,
  c: RandomCase,
  where: string,
  tol: number,
  dispatchesOf: (s: Schedule) => number = kernelSteps,
): Promise<void> {
  const { inputs, expected } = reference(c);
  const { schedule } = runPipeline(c.graph, { maxKernelBuffers: gpu.maxKernelBuffers, unrollLimit: 64 });
  const program = await Program.create(schedule, gpu);
  const bufs = uploadValues(gpu, inputs);
  const before = gpu.stats.dispatches;
  const outs = program.run(bufs);
  if (expected.every((v) => v.data.length > 0)) expect(gpu.stats.dispatches - before).toBeGreaterThan(0);
  expect(gpu.stats.dispatches - before).toBeLessThanOrEqual(dispatchesOf(schedule));
  for (let i = 0; i < outs.length; i++) {
    const err = closeEnough(await gpu.read(outs[i]!.buffer), expected[i]!.data, tol);
    if (err !== undefined) failCase(c.seed, `${where} webgpu`, err, c.graph);
  }
}
