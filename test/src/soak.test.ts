/**
 * JS memory stays bounded under a soak: 100,000 calls (jit, and eager reads
 * every tenth call) at batch sizes from 1 to 500, never calling `dispose()`.
 * The JS heap after a forced collection must not grow with the number of calls
 * (last quarter vs second quarter), and every program is traced once.
 */
import { expect, it } from "vitest";
import type { Tensor } from "../../src/index.js";
import { heapAfterGc } from "../helpers/memory.js";
import { soakInput, soakProgram } from "../helpers/soak.js";

it("100,000 JS calls without dispose() at varying batch sizes leave the heap bounded", async () => {
  const { f, w } = soakProgram();
  // Column sums of w, for the expected values below: w[k][j] = ((3k + j) % 5) / 10.
  const colSum = [0, 1, 2].map((j) => [0, 1, 2, 3].reduce((p, k) => p + ((3 * k + j) % 5) / 10, 0));
  const N = 100_000;
  const heap: number[] = [];
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const { b, v, x } = soakInput(i);
    const [s, d] = f(x, w) as Tensor[];
    if (i % 10 === 0) {
      // The eager path: lazy ops, fused and cached at the read (same structure every time).
      const e = x.mul(2).sum().dataSync();
      expect(e[b - 1]).toBeCloseTo(8 * v, 5);
    }
    if (i % 5000 === 4999) {
      const want = colSum.reduce((acc, c) => acc + Math.tanh(v * c), 0);
      const got = s!.dataSync();
      expect(got.length).toBe(b);
      expect(got[b - 1]).toBeCloseTo(want, 5);
      expect(Math.max(...Array.from(d!.dataSync(), Math.abs))).toBeLessThan(1e-6);
      heap.push(await heapAfterGc());
    }
  }
  const q = heap.length / 4;
  const mb = (n: number): string => (n / 2 ** 20).toFixed(1);
  const second = Math.max(...heap.slice(q, 2 * q));
  const last = Math.max(...heap.slice(3 * q));
  console.log(
    `JS soak without dispose(): ${N} jit calls + ${N / 10} eager reads in ${((performance.now() - t0) / 1000).toFixed(1)} s; heap after GC: second quarter ≤ ${mb(second)} MB, last quarter ≤ ${mb(last)} MB`,
  );
  expect(f.stats.traces).toBe(1);
  expect(last).toBeLessThanOrEqual(second + 4 * 2 ** 20);
}, 120_000);
