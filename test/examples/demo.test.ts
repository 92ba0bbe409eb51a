/**
 * `npm run demo` (examples/demo.ts) as a user runs it: a child process under tsx.
 * Its output fits one screen (at most 25 lines of at most 80 columns), names what
 * it uses (linalg.det; the js and wasm backends; the plain JS loop baseline),
 * agrees with the baseline (the hand-written loop is the reference: relative
 * differences of a few float32 ulps), and its counters show one trace per backend
 * for all four batch sizes.
 */
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");

it("npm run demo: one screen, linalg.det on js and wasm against a JS loop, traces: 1", async () => {
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(
      process.execPath,
      [join(root, "node_modules/tsx/dist/cli.mjs"), join(root, "examples/demo.ts")],
      { cwd: root, maxBuffer: 1 << 20 },
      (err, stdout, stderr) =>
        done({ code: err === null ? 0 : typeof err.code === "number" ? err.code : -1, stdout, stderr }),
    );
  });
  expect(stderr).toBe("");
  expect(code).toBe(0);
  const lines = stdout.trimEnd().split("\n");
  expect(lines.length).toBeLessThanOrEqual(25);
  for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
  expect(stdout).toContain("linalg.det");
  expect(stdout).toMatch(/backends: JS \(js\), WebAssembly \(wasm, \d+ threads?\); baseline: a JS loop/);
  expect(stdout).not.toMatch(/%\d+ = /); // no IR dump
  // One row per batch size: three timings and the differences from the loop.
  const rows = lines.filter((l) => /^ *\d+ +[\d.]+ ms/.test(l));
  expect(rows.map((r) => Number(r.trim().split(/\s+/)[0]))).toEqual([1, 7, 1000, 100000]);
  for (const r of rows) {
    const m = /js (\S+), wasm (\S+)$/.exec(r);
    expect(m, r).not.toBeNull();
    expect(Number(m![1]!.replace(/,$/, ""))).toBeLessThan(1e-5);
    expect(Number(m![2]!)).toBeLessThan(1e-5);
  }
  expect(stdout).toMatch(/^f\.stats on js: +traces: 1, compiles: \d+, calls: 16$/m);
  expect(stdout).toMatch(/^f\.stats on wasm: +traces: 1, compiles: \d+, calls: 16$/m);
  // The batch-7 result as console.log shows a tensor (dtype, shape, backend, values).
  expect(stdout).toMatch(/^Tensor float32 \(7;\) wasm\n\[/m);
}, 180_000);
