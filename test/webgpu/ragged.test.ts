/** Segmented kernels (ragged ops) as WGSL on a real adapter, against the reference interpreter. */
import fc from "fast-check";
import { afterAll, expect, it } from "vitest";
import { makeGraph, Node } from "../../ir/graph.js";
import { interpret } from "../../ir/interpret.js";
import { runPipeline } from "../../passes/pipeline.js";
import { Program } from "../../runtime/program.js";
import { raggedCase, raggedInputs } from "../helpers/ragged.js";
import { closeEnough } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";
import { describeWebGPU, probeWebGPU } from "../helpers/webgpu.js";

const probe = await probeWebGPU();
afterAll(() => probe.backend?.destroy());

describeWebGPU(probe, "ragged ops on WebGPU", (gpu) => {
  it("segment reductions, expand, pad and mask equal the interpreter", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1e9 }),
        fc.integer({ min: 0, max: 8 }),
        fc.boolean(),
        async (seed, maxN, left) => {
          const c = raggedCase(seed);
          const [v, o, rows] = raggedInputs(c.S);
          const centred = Node.make("sub", [v, Node.make("segment_expand", [rows, o, v])]);
          const outs = [
            ...(["sum", "mean", "max", "min", "argmax", "count"] as const).map((op) =>
              Node.make("segment_reduce", [Node.make("abs", [centred]), o], { op }),
            ),
            Node.make("mul", [v, Node.make("segment_expand", [rows, o, v])]),
            Node.make("segment_pad", [centred, o], { maxN, value: -7, left }),
            Node.make("segment_mask", [o], { maxN, left }),
            // Right-pad then unpad: the values again, 0 past a short maxN.
            Node.make("segment_unpad", [
              Node.make("segment_pad", [centred, o], { maxN, value: -7, left: false }),
              o,
              v,
            ]),
            // A pad to the longest row with a fused epilogue reading a per-row operand and the mask.
            Node.make("add", [
              Node.make("mul", [
                Node.make("segment_pad", [centred, o], { maxN: -1, value: -7, left }),
                Node.make("batch_unsqueeze", [rows], { dim: 1 }),
              ]),
              Node.make("cast", [Node.make("segment_mask", [o], { maxN: -1, left })], { dtype: "float32" }),
            ]),
          ];
          const g = makeGraph("ragged", [v, o, rows], outs, ["values", "offsets", "rows"]);
          const ins = [c.values, c.offsets, c.rows];
          const expected = interpret(g, ins);
          const program = await Program.create(
            runPipeline(g, { maxKernelBuffers: gpu.maxKernelBuffers, unrollLimit: 64 }).schedule,
            gpu,
          );
          const before = gpu.stats.dispatches;
          // The offsets (input 1) go in as host values too: the pad to the longest row reads them before the launch.
          const res = program.run(
            ins.map((x) => {
              const b = gpu.alloc(x.type.dtype, x.data.length);
              gpu.write(b, x.data);
              return { buffer: b, type: x.type };
            }),
            new Map([[1, c.offsets.data]]),
          );
          expect(gpu.stats.dispatches - before).toBe(program.schedule.steps.filter((s) => s.kind === "kernel").length);
          const got = await Promise.all(res.map((r) => gpu.read(r.buffer)));
          got.forEach((d, i) => {
            const err = closeEnough(d, expected[i]!.data, 1e-5);
            if (err) throw new Error(`lengths ${c.lengths}, output ${i}: ${err}`);
          });
        },
      ),
      { numRuns: 25, seed: FC_SEED },
    );
  });
});
