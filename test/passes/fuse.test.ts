/** Fusion: kernel counts for the canonical examples, multi-output kernels, and the buffer limit. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { interpret } from "../../ir/interpret.js";
import { fromTypedArray, jit, Tensor } from "../../src/index.js";
import { closeEnough, randomCase, randomInputs, rng, seedArb } from "../helpers/random-graph.js";
import { compileJs, FC_SEED, runJs } from "../helpers/run.js";

const kernels = (dump: string): number => Number(/: (\d+) kernels/.exec(dump)![1]);

function clouds(b: number, n: number): Tensor {
  const r = rng(b * 7 + n);
  return fromTypedArray(
    Float32Array.from({ length: b * n * 3 }, () => r() * 2 - 1),
    [b, n, 3],
    { batchDim: 1 },
  );
}

describe("kernel counts", () => {
  it("the benchmark chain is one kernel with no intermediate buffer", () => {
    const f = jit((x: Tensor) => x.mul(x).neg().exp().mul(x.mul(3).sin()).add(x.mul(0.5)).sub(x.tanh()));
    f(fromTypedArray(new Float32Array(10), [10], { batchDim: 1 }));
    expect(kernels(f.dump({ after: "fuse" }))).toBe(1);
    // On a base-only tensor too (one loop over 1e6 elements, no batch).
    const g = jit((x: Tensor) => x.mul(x).neg().exp().mul(x.mul(3).sin()).add(x.mul(0.5)).sub(x.tanh()));
    g(fromTypedArray(new Float32Array(1000), [1000]));
    expect(kernels(g.dump({ after: "fuse" }))).toBe(1);
  });

  it("point-cloud normalisation takes at most 3 kernels and equals a hand-written loop", () => {
    const normalise = jit((x: Tensor) => {
      const c = x.sub(x.mean(0, { keepdim: true }));
      return c.div(c.mul(c).sum(-1).sqrt().max(0, { keepdim: true }).unsqueeze(-1));
    });
    const x = clouds(5, 50);
    const y = normalise(x).dataSync();
    expect(kernels(normalise.dump({ after: "fuse" }))).toBeLessThanOrEqual(3);
    const d = x.dataSync();
    const ref = new Float64Array(d.length);
    for (let b = 0; b < 5; b++) {
      const m = [0, 0, 0];
      for (let i = 0; i < 50; i++) for (let k = 0; k < 3; k++) m[k]! += d[(b * 50 + i) * 3 + k]! / 50;
      let mx = 0;
      for (let i = 0; i < 50; i++) {
        let s = 0;
        for (let k = 0; k < 3; k++) s += (d[(b * 50 + i) * 3 + k]! - m[k]!) ** 2;
        mx = Math.max(mx, Math.sqrt(s));
      }
      for (let i = 0; i < 50; i++)
        for (let k = 0; k < 3; k++) ref[(b * 50 + i) * 3 + k] = (d[(b * 50 + i) * 3 + k]! - m[k]!) / mx;
    }
    expect(closeEnough(y, ref, 1e-5)).toBeUndefined();
  });

  it("writes several reductions of one value in one kernel", () => {
    const f = jit((x: Tensor) => {
      const c = x.sub(1).abs();
      return [c.sum(0), c.max(0), c.argmin(0)];
    });
    // Rows of 20 (over the inline-reduction limit, so these are real reduction kernels).
    const data = Float32Array.from({ length: 40 }, (_, i) => ((i * 7) % 11) - 3);
    const [s, m, a] = f(fromTypedArray(data, [2, 20], { batchDim: 1 }));
    const rows = [data.slice(0, 20), data.slice(20)].map((r) => Array.from(r, (v) => Math.abs(v - 1)));
    expect(s.toArraySync()).toEqual(rows.map((r) => r.reduce((p, v) => p + v, 0)));
    expect(m.toArraySync()).toEqual(rows.map((r) => Math.max(...r)));
    expect(a.toArraySync()).toEqual(rows.map((r) => r.indexOf(Math.min(...r))));
    expect(kernels(f.dump({ after: "fuse" }))).toBe(1);
    expect(f.dump({ kernels: true }).match(/out\d = outs/g)).toHaveLength(3);
  });

  it("inlines small base reductions (a norm over xyz) into their consumer", () => {
    const f = jit((x: Tensor) => x.mul(x).sum(-1).sqrt());
    const y = f(fromTypedArray(new Float32Array([3, 4, 0, 1, 2, 2]), [2, 3], { batchDim: 1 }));
    expect(y.toArraySync()).toEqual([5, 3]);
    expect(f.dump({ after: "fuse" })).toMatch(/1 kernels\n {2}kernel 0 \(\d+ exprs, unrolled\)/);
  });
});

describe("the storage-buffer limit", () => {
  it("splits kernels so none binds more buffers than the backend allows, with the same results", () => {
    fc.assert(
      fc.property(seedArb, fc.integer({ min: 4, max: 6 }), (seed, limit) => {
        const c = randomCase(seed, "float64", { steps: 10 });
        const inputs = randomInputs(c);
        const program = compileJs(c.graph, 64, limit);
        for (const step of program.schedule.steps) {
          if (step.kind === "kernel") expect(step.inputs.length + step.outputs.length).toBeLessThanOrEqual(limit);
        }
        const expected = interpret(c.graph, inputs);
        runJs(program, inputs).forEach((a, i) => expect(closeEnough(a.data, expected[i]!.data, 1e-9)).toBeUndefined());
      }),
      { numRuns: 150, seed: FC_SEED },
    );
  });

  it("splits a sum of eight inputs for a 4-buffer device", () => {
    const xs = Array.from({ length: 8 }, (_, i) => fromTypedArray(new Float32Array([i, i + 1]), [2], { batchDim: 1 }));
    const f = jit((...a: Tensor[]) => a.slice(1).reduce((s, t) => s.add(t.mul(t)), a[0]!.mul(a[0]!)));
    const ref = [0, 1].map((j) => xs.reduce((s, _, i) => s + (i + j) ** 2, 0));
    expect(Array.from(f(...xs).dataSync())).toEqual(ref);
    const program = compileJs(parseAfterTrace(f.dump()), 64, 4);
    const counts = program.schedule.steps.map((s) => (s.kind === "kernel" ? s.inputs.length + s.outputs.length : 0));
    expect(Math.max(...counts)).toBeLessThanOrEqual(4);
    expect(counts.length).toBeGreaterThan(1);
  });
});

import { parseGraph } from "../../ir/parse.js";
function parseAfterTrace(text: string) {
  return parseGraph(text);
}

describe("fusion off", () => {
  it("gives one kernel per op and the same values", () => {
    const chain = (x: Tensor) => x.mul(x).neg().exp().mul(x.mul(3).sin()).add(x.mul(0.5)).sub(x.tanh());
    // Unfused, every op stores (and so rounds to) float32: the bits of exact fused kernels.
    const fused = jit(chain, { float32: "exact" });
    const unfused = jit(chain, { fusion: false });
    const x = fromTypedArray(
      Float32Array.from({ length: 50 }, (_, i) => i / 10 - 2),
      [50],
      { batchDim: 1 },
    );
    expect(Array.from(unfused(x).dataSync())).toEqual(Array.from(fused(x).dataSync()));
    expect(kernels(unfused.dump({ after: "fuse" }))).toBe(10);
  });
});

describe("relaxed float32 (the default)", () => {
  it("keeps intermediates in float64 (no per-op rounding) and stays within float32 rounding of exact", () => {
    const chain = (x: Tensor) => x.mul(x).neg().exp().mul(x.mul(3).sin()).add(x.mul(0.5)).sub(x.tanh());
    const exact = jit(chain, { float32: "exact" });
    const relaxed = jit(chain);
    const x = fromTypedArray(
      Float32Array.from({ length: 200 }, (_, i) => i / 50 - 2),
      [200],
      { batchDim: 1 },
    );
    expect(closeEnough(relaxed(x).dataSync(), exact(x).dataSync(), 1e-6)).toBeUndefined();
    expect(exact.dump({ kernels: true })).toContain("Math.fround");
    expect(relaxed.dump({ kernels: true })).not.toContain("Math.fround");
  });
});
