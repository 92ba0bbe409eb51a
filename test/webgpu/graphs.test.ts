/**
 * Random graphs through the whole pipeline on WebGPU (WGSL kernels) against the
 * reference interpreter. Float graphs leave out ops that jump on a rounding
 * difference (the GPU rounds transcendentals and sums differently); int32
 * graphs are exact. The dispatch counter proves the WGSL path ran.
 */
import fc from "fast-check";
import { afterAll, expect, it } from "vitest";
import { interpret, type Value } from "../../ir/interpret.js";
import { printGraph } from "../../ir/print.js";
import { runPipeline } from "../../passes/pipeline.js";
import { Program } from "../../runtime/program.js";
import type { WebGPUBackend } from "../../runtime/webgpu/backend.js";
import { closeEnough, randomCase, randomInputs, seedArb } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";
import { describeWebGPU, probeWebGPU } from "../helpers/webgpu.js";

const probe = await probeWebGPU();
afterAll(() => probe.backend?.destroy());

async function runOnGpu(gpu: WebGPUBackend, seed: number, family: "float32" | "int32"): Promise<void> {
  const c = randomCase(seed, family, { smooth: true });
  const inputs = randomInputs(c);
  const expected = interpret(c.graph, inputs);
  const { schedule } = runPipeline(c.graph, { maxKernelBuffers: gpu.maxKernelBuffers, unrollLimit: 64 });
  const program = await Program.create(schedule, gpu);
  const bufs = inputs.map((v) => {
    const b = gpu.alloc(v.type.dtype, v.data.length);
    gpu.write(b, v.data);
    return { buffer: b, type: v.type };
  });
  const before = gpu.stats.dispatches;
  const outs = program.run(bufs);
  const kernels = schedule.steps.filter((s) => s.kind === "kernel").length;
  expect(gpu.stats.dispatches - before).toBe(kernels);
  const got: Value[] = await Promise.all(outs.map(async (o) => ({ type: o.type, data: await gpu.read(o.buffer) })));
  got.forEach((g, i) => {
    const err = closeEnough(g.data, expected[i]!.data, family === "int32" ? 0 : 2e-4);
    if (err) throw new Error(`seed ${seed} (${family}) on WebGPU: output ${i} ${err}\n${printGraph(c.graph)}`);
  });
}

describeWebGPU(probe, "random graphs on WebGPU equal the reference interpreter", (gpu) => {
  for (const family of ["float32", "int32"] as const) {
    it(family, async () => {
      await fc.assert(
        fc.asyncProperty(seedArb, (seed) => runOnGpu(gpu, seed, family)),
        { numRuns: 40, seed: FC_SEED },
      );
    });
  }
});
