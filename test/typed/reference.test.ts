/**
 * Typed formulas compiled (JS, and WGSL on a WebGPU adapter) against the
 * reference interpreter running the traced graph, on random batches.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { interpret } from "../../ir/interpret.js";
import { parseGraph } from "../../ir/parse.js";
import { registerBackend } from "../../src/backend.js";
import { fromTypedArray, jit, R2, Rot, setBackend, SR2, SSR4, Vec, type Tensor } from "../../src/index.js";
import { closeEnough, rng } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";

/** Well-conditioned random inputs: diagonal-dominant matrices, modest rotations. */
function data(n: number, size: number, seed: number, diag: number): Float32Array {
  const r = rng(seed);
  const k = Math.round(Math.sqrt(size));
  return Float32Array.from(
    { length: n * size },
    (_, i) => (r() * 2 - 1) * 0.5 + (k * k === size && (i % size) % (k + 1) === 0 ? diag : 0),
  );
}

const CASES: { name: string; base: number[]; diag: number; fn: (x: Tensor) => Tensor[] }[] = [
  { name: "R2 inverse and det", base: [3, 3], diag: 2, fn: (x) => [new R2(x).inverse().t, new R2(x).det().t] },
  // x + 2 in every Mandel entry keeps the symmetric matrices away from singular.
  {
    name: "SR2 dev norm, inverse",
    base: [6],
    diag: 0,
    fn: (x) => [new SR2(x).dev().norm().t, new SR2(x.add(2)).inverse().t],
  },
  {
    name: "Rot matrix and composition",
    base: [3],
    diag: 0,
    fn: (x) => [new Rot(x).eulerRodrigues().t, new Rot(x).mul(new Rot(x.mul(0.5))).t],
  },
  { name: "SSR4 inverse", base: [6, 6], diag: 3, fn: (x) => [new SSR4(x).inverse().t] },
  { name: "Vec cross and rotate", base: [3], diag: 0, fn: (x) => [new Vec(x).cross(new Vec(x.mul(x).add(1))).t] },
];

function run(c: (typeof CASES)[number], n: number, seed: number, float32: "exact" | "relaxed" = "relaxed") {
  const f = jit(c.fn, { name: c.name.replace(/\W/g, "_"), float32 });
  const size = c.base.reduce((a, b) => a * b, 1);
  const x = fromTypedArray(data(n, size, seed, c.diag), [n, ...c.base], { batchDim: 1 });
  return { f, x };
}

// Exact float32 rounds every op as the interpreter does; relaxed (the default) keeps
// intermediates in float64, so it differs from the per-op-rounded interpreter by the
// interpreter's own rounding error, amplified by the conditioning of the inverses.
const MODES = [
  ["exact", 1e-6],
  ["relaxed", 1e-4],
] as const;

describe("typed formulas on JS equal the reference interpreter", () => {
  for (const c of CASES)
    for (const [mode, tol] of MODES) {
      it(`${c.name} (${mode} float32)`, () => {
        fc.assert(
          fc.property(fc.integer({ min: 1, max: 40 }), fc.integer(), (n, seed) => {
            const { f, x } = run(c, n, seed, mode);
            const outs = f(x);
            const g = parseGraph(f.dump());
            expect(g.inputs.length, "no captured tensors").toBe(1);
            const ref = interpret(g, [{ type: { dtype: "float32", batch: [n], base: c.base }, data: x.dataSync() }]);
            outs.forEach((o, i) => expect(closeEnough(o.dataSync(), ref[i]!.data, tol)).toBeUndefined());
          }),
          { numRuns: 15, seed: FC_SEED },
        );
      });
    }
});

const probe = await probeWebGPUForFile();

describeWebGPU(probe, "typed formulas on WebGPU equal the reference interpreter", (gpu) => {
  it("every case, random batch sizes", async () => {
    registerBackend(gpu);
    for (const c of CASES) {
      for (const [n, seed] of [
        [1, 1],
        [17, 2],
        [300, 3],
      ] as const) {
        setBackend("js");
        const size = c.base.reduce((a, b) => a * b, 1);
        const host = data(n, size, seed, c.diag);
        const fj = jit(c.fn);
        fj(fromTypedArray(host, [n, ...c.base], { batchDim: 1 }));
        const ref = interpret(parseGraph(fj.dump()), [
          { type: { dtype: "float32", batch: [n], base: c.base }, data: host },
        ]);
        setBackend("webgpu");
        const fg = jit(c.fn);
        const before = gpu.stats.dispatches;
        const outs = await fg.callAsync(fromTypedArray(host, [n, ...c.base], { batchDim: 1 }));
        expect(gpu.stats.dispatches).toBeGreaterThan(before);
        const got = await Promise.all(outs.map((o) => o.data()));
        // The GPU's f32 transcendentals and sums round differently: a relative tolerance.
        got.forEach((d, i) => expect([c.name, closeEnough(d, ref[i]!.data, 2e-4)]).toEqual([c.name, undefined]));
      }
    }
    setBackend("js");
  }, 120_000);
});
