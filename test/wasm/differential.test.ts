/**
 * Differential tests on the WebAssembly backend: random graphs through the whole pass
 * pipeline, printed as WebAssembly, against the reference interpreter, on random batch
 * sizes (the same generator and tolerances as test/passes/differential.test.ts; float32
 * math is the vector library's, within 2 ulp, see test/wasm/math.test.ts).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Graph } from "../../ir/graph.js";
import { interpret, type Value } from "../../ir/interpret.js";
import { printGraph } from "../../ir/print.js";
import { runPipeline } from "../../passes/pipeline.js";
import { Program } from "../../runtime/program.js";
import { counters } from "../../runtime/stats.js";
import { WasmBackend } from "../../runtime/wasm/backend.js";
import { closeEnough, randomCase, randomInputs, seedArb, type Family } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";

const wasm = new WasmBackend();

function compile(g: Graph, unrollLimit: number, relaxedFloat32: boolean): Program {
  const p = Program.create(
    runPipeline(g, { maxKernelBuffers: Infinity, unrollLimit, mixedBaseOutputs: true, relaxedFloat32 }).schedule,
    wasm,
  );
  if (p instanceof Promise) throw new Error("the wasm backend compiles synchronously");
  return p;
}

function run(p: Program, inputs: readonly Value[]): Value[] {
  const outs = p.run(inputs.map((v) => ({ buffer: wasm.wrap(v.type.dtype, v.data.slice()), type: v.type })));
  return outs.map((o) => ({ type: o.type, data: wasm.readSync(o.buffer) }));
}

type Mode = Family | "float32 relaxed";
const TOL: Record<Mode, number> = {
  float64: 1e-9,
  // float32 ops round as the interpreter's; transcendental functions are within 2 ulp.
  float32: 1e-5,
  "float32 relaxed": 1e-4,
  int32: 0,
  uint32: 0,
};

function check(seed: number, mode: Mode, unrollLimit: number): void {
  const family: Family = mode === "float32 relaxed" ? "float32" : mode;
  const c = randomCase(seed, family, {});
  const inputs = randomInputs(c);
  const expected = interpret(c.graph, inputs);
  const program = compile(c.graph, unrollLimit, mode === "float32 relaxed");
  const before = counters.dispatches;
  const actual = run(program, inputs);
  const kernels = program.schedule.steps.filter((s) => s.kind === "kernel").length;
  expect(counters.dispatches - before, "every kernel of the schedule was launched").toBe(kernels);
  actual.forEach((a, i) => {
    expect(a.type).toEqual(expected[i]!.type);
    const err = closeEnough(a.data, expected[i]!.data, TOL[mode]);
    if (err !== undefined) throw new Error(`seed ${seed} (${mode}): output ${i} ${err}\n${printGraph(c.graph)}`);
  });
}

describe("WebAssembly kernels equal the reference interpreter on random graphs", () => {
  for (const mode of ["float64", "float32", "float32 relaxed", "int32", "uint32"] as const) {
    it(`${mode}, unrolled and looped base`, () => {
      fc.assert(
        fc.property(seedArb, fc.boolean(), (seed, unroll) => check(seed, mode, unroll ? 64 : 0)),
        { numRuns: 150, seed: FC_SEED },
      );
    });
  }
});
