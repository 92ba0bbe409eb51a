/**
 * The playground page (playground/) in headless Chromium, as its users get it:
 * built by `npm run playground:build` itself (the same config, Vite's production
 * mode, minified) into a temporary folder, served on 127.0.0.1, and driven like a
 * user would.
 *
 * - The default example runs on the JS backend and on the browser's WebGPU
 *   (`navigator.gpu`, SwiftShader here); the test reads what the page shows (IR,
 *   kernels, the rendered graph, counters, result values) and checks the values
 *   against the example's formula written out below, then checks that bad code
 *   shows its error in the page.
 * - Every method is in the built page: the surface of the exports the page offers
 *   (`window.batchwise`: each class's methods and getters, each namespace's keys;
 *   test/browser/families.ts) equals the sources' in Node, so a method whose
 *   installing module the bundler dropped is a difference; and every family's
 *   cases (families.ts) give their hand-computed values in the page.
 * - A function of several method families typed into the function box (softmax,
 *   sort, cumsum, norm, linalg.det, bitwise) shows the values worked out below.
 *
 * A screenshot is saved to a temporary folder and its path printed.
 *
 * Needs Debian's chromium (`/usr/bin/chromium`, or CHROMIUM_PATH). Without it the
 * test is skipped with the reason, except when BATCHWISE_REQUIRE_BROWSER=1.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type Page } from "playwright-core";
import * as sources from "../../src/index.js";
import { CHROMIUM, REQUIRE_BROWSER as REQUIRE, launchChromium } from "./chromium.js";
import { CASES, FAMILIES, RUN_CASES, SURFACE, caseNames, failures, type Ran } from "./families.js";
import { serve } from "./serve.js";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

const BASE = 8;
const BATCHES = [4, 100, 5000];

/**
 * The default example `(x) => x.sub(x.mean(0, { keepdim: true })).tanh()` on the
 * page's input (element i of the flat data is i % 7 - 3), by hand: element i of
 * the result is tanh(x_i - mean of x_i's row of BASE values).
 */
function expected(i: number): number {
  const x = (k: number) => (k % 7) - 3;
  const row = Math.floor(i / BASE) * BASE;
  let sum = 0;
  for (let j = 0; j < BASE; j++) sum += x(row + j);
  return Math.tanh(x(i) - sum / BASE);
}

/** What the page shows after a run. */
interface Shown {
  state: string;
  error: string | null;
  status: string;
  ir: string;
  kernels: string;
  svgs: number;
  svgText: string;
  counters: Record<string, string>;
  rows: { batch: string; output: string; first: string; last: string; traces: string }[];
  passes: string[];
}

async function runExample(page: Page, backend: "js" | "webgpu", code?: string): Promise<Shown> {
  await page.selectOption("#backend", backend);
  if (code !== undefined) await page.fill("#code", code);
  await page.click("#run");
  await page.waitForSelector('body[data-state="done"], body[data-state="error"]', { timeout: 30_000 });
  return page.evaluate(() => {
    const text = (sel: string) => document.querySelector(sel)?.textContent ?? "";
    const err = document.querySelector<HTMLElement>("#error")!;
    const counters: Record<string, string> = {};
    for (const tr of Array.from(document.querySelectorAll<HTMLTableRowElement>("#counters tr")))
      counters[tr.dataset["counter"]!] = tr.cells[1]!.textContent ?? "";
    const rows = Array.from(document.querySelectorAll<HTMLTableRowElement>("#results tbody tr"), (tr) => ({
      batch: tr.dataset["batch"]!,
      output: tr.cells[2]!.textContent ?? "",
      first: tr.querySelector(".first")!.textContent ?? "",
      last: tr.querySelector(".last")!.textContent ?? "",
      traces: tr.cells[6]!.textContent ?? "",
    }));
    return {
      state: document.body.dataset["state"]!,
      error: err.hidden ? null : err.textContent,
      status: text("#status"),
      ir: text("#ir"),
      kernels: text("#kernels"),
      svgs: document.querySelectorAll("#graph svg").length,
      svgText: text("#graph svg"),
      counters,
      rows,
      passes: Array.from(document.querySelectorAll<HTMLOptionElement>("#pass option"), (o) => o.value),
    };
  });
}

/** The page's result values against the formula: first values are elements 0.., last ones end at the last element. */
function checkValues(shown: Shown, tolerance: number): void {
  expect(shown.rows.map((r) => r.batch)).toEqual(BATCHES.map(String));
  for (const [k, r] of shown.rows.entries()) {
    const n = BATCHES[k]! * BASE;
    expect(r.output).toBe(`(${BATCHES[k]}; ${BASE}) float32`);
    const first = r.first.split(", ").map(Number);
    const last = r.last.split(", ").map(Number);
    expect([first.length, last.length]).toEqual([8, 4]);
    const want = [...first.map((_, i) => expected(i)), ...last.map((_, i) => expected(n - last.length + i))];
    const got = [...first, ...last];
    const worst = Math.max(...got.map((v, i) => Math.abs(v - want[i]!)));
    expect([r.batch, worst, worst <= tolerance]).toEqual([r.batch, worst, true]);
    // One trace, already after the first call.
    expect(r.traces).toBe("1");
  }
}

function checkCounters(shown: Shown): void {
  expect(shown.counters["traces"]).toBe("1");
  expect(shown.counters["batch sizes"]).toBe("3");
  expect(shown.counters["calls"]).toBe("3");
  expect(shown.counters["cacheHits"]).toBe("2");
  expect(Number(shown.counters["compiles"])).toBeGreaterThanOrEqual(0);
}

const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && !REQUIRE)
  console.warn(
    `[batchwise] playground test skipped: no Chromium at ${CHROMIUM} (set CHROMIUM_PATH, or install Debian's chromium)`,
  );

/**
 * The playground built as `npm run playground:build` builds it (that very script, with only the output folder
 * moved to a temporary one), once for this file; the build must be Vite's production build, minified.
 */
let builtDir: Promise<string> | undefined;
function built(): Promise<string> {
  builtDir ??= (async () => {
    const dist = await mkdtemp(join(os.tmpdir(), "batchwise-playground-build-"));
    process.once("exit", () => void rm(dist, { recursive: true, force: true }));
    await run("npm", ["run", "playground:build", "--", "--outDir", dist, "--emptyOutDir", "--logLevel", "warn"], {
      cwd: root,
      maxBuffer: 16 << 20,
    });
    const index = await readFile(join(dist, "index.html"), "utf8");
    const main = /<script type="module" crossorigin src="\.\/(assets\/index-[^"]+\.js)">/.exec(index)?.[1];
    expect(main, "the built index.html loads its bundle").toBeDefined();
    const code = await readFile(join(dist, main!), "utf8");
    // Production: no dev client, no HMR; minified: the library's own function names are gone (mangled).
    expect(code).not.toMatch(/@vite\/client|import\.meta\.hot/);
    expect(code).not.toMatch(/\binstall(TensorApi|NumericMethods|Compiler)\b/);
    expect((await readdir(join(dist, "assets"))).some((f) => /^viz-.*\.js$/.test(f))).toBe(true);
    return dist;
  })();
  return builtDir;
}

/** A function of several families for the function box (base (4), input element i = i % 7 - 3). */
const FAMILY_FN =
  '(x) => [x.softmax(), x.sort(), x.cumsum(), x.norm(2, -1), linalg.det(x.reshape([2, 2]).add(eye(2).mul(10))), x.cast("int32").bitwiseAnd(6)]';
/** What the results table names each output: its number, shape and dtype. */
const FAMILY_OUTPUTS = [
  /^#0 \(2; 4\).* float32$/,
  /^#1 \(2; 4\).* float32$/,
  /^#2 \(2; 4\).* float32$/,
  /^#3 \(2;\).* float32$/,
  /^#4 \(2;\).* float32$/,
  /^#5 \(2; 4\).* int32$/,
];
/** Output k of FAMILY_FN on (2; 4) rows [-3, -2, -1, 0] and [-3, 1, 2, 3] (elements 0..7 of i % 7 - 3), written out. */
function familyExpected(k: number): number[] {
  const rows = [0, 1].map((b) => [0, 1, 2, 3].map((j) => ((b * 4 + j) % 7) - 3));
  const each = (f: (r: number[]) => number[]) => rows.flatMap(f);
  switch (k) {
    case 0:
      return each((r) => {
        const e = r.map(Math.exp);
        const s = e.reduce((a, b) => a + b, 0);
        return e.map((v) => v / s);
      });
    case 1:
      return each((r) => [...r].sort((a, b) => a - b));
    case 2:
      return each((r) => r.map((_, j) => r.slice(0, j + 1).reduce((a, b) => a + b, 0)));
    case 3:
      return each((r) => [Math.sqrt(r.reduce((a, v) => a + v * v, 0))]);
    case 4:
      // det [[a + 10, b], [c, d + 10]] = (a + 10)(d + 10) - bc.
      return each(([a, b, c, d]) => [(a! + 10) * (d! + 10) - b! * c!]);
    default:
      // Two's complement: -3 & 6 = 4, -2 & 6 = 6, -1 & 6 = 6.
      return each((r) => r.map((v) => v & 6));
  }
}

describe.runIf(haveBrowser || REQUIRE)("the playground page in headless Chromium", () => {
  it("runs the default example on JS and WebGPU and shows IR, kernels, graph, one trace for 3 batch sizes and correct values; errors stay in the page", async () => {
    expect(haveBrowser, `Chromium at ${CHROMIUM} (BATCHWISE_REQUIRE_BROWSER=1)`).toBe(true);
    const shots = await mkdtemp(join(os.tmpdir(), "batchwise-playground-shot-"));
    const server = await serve(await built());
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      await page.goto(server.url);
      await page.waitForSelector('body[data-state="ready"]', { timeout: 30_000 });
      expect(await page.inputValue("#code")).toBe("(x) => x.sub(x.mean(0, { keepdim: true })).tanh()");
      expect(await page.inputValue("#base")).toBe(String(BASE));
      expect(await page.inputValue("#batches")).toBe(BATCHES.join(", "));

      // JS backend.
      const js = await runExample(page, "js");
      expect(js.error).toBeNull();
      expect(js.state).toBe("done");
      expect(js.passes[0]).toBe("input");
      expect(js.passes.at(-1)).toBe("fuse");
      expect(js.passes).toContain("lower");
      expect(js.ir).toMatch(/= mean %x0 .*: f32\[b0; 1\]/);
      expect(js.ir).toMatch(/= sub %x0, %\d+ : f32\[b0; 8\]/);
      expect(js.ir).toMatch(/= tanh %\d+ : f32\[b0; 8\]/);
      expect(js.kernels).toContain("function kernel");
      expect(js.kernels).toContain("Math.tanh");
      expect(js.svgs).toBe(1);
      expect(js.svgText).toContain("kernel 0");
      expect(js.svgText).toContain("tanh");
      checkCounters(js);
      // The JS kernel computes in float64 and rounds to float32 once; the page prints 6 digits.
      checkValues(js, 2e-6);
      // The fused schedule in the pass selector: one kernel for all three ops.
      await page.selectOption("#pass", "fuse");
      expect(await page.textContent("#ir")).toContain("schedule @jit: 1 kernels");
      await page.selectOption("#pass", "input");

      // WebGPU (SwiftShader): WGSL computes float32 per op, and its tanh may be off by a few ulp.
      const gpu = await runExample(page, "webgpu");
      expect(gpu.error).toBeNull();
      expect(gpu.status).toMatch(/^WebGPU/);
      expect(gpu.ir).toContain("tanh");
      expect(gpu.kernels).toContain("@compute");
      expect(gpu.kernels).not.toContain("function kernel");
      expect(gpu.svgs).toBe(1);
      checkCounters(gpu);
      checkValues(gpu, 1e-5);
      const shot = join(shots, "playground-webgpu.png");
      await page.screenshot({ path: shot, fullPage: true });

      // Bad shapes: a ShapeError from the library, shown in the page.
      const bad = await runExample(page, "js", "(x) => x.reshape([3, 5])");
      expect(bad.state).toBe("error");
      expect(bad.error).toMatch(/^ShapeError: reshape: .*\(3,5\)/);
      expect(bad.rows).toEqual([]);
      await page.screenshot({ path: join(shots, "playground-error.png") });
      // Bad code: a syntax error, shown in the page too.
      const syntax = await runExample(page, "js", "(x) => x.(");
      expect(syntax.state).toBe("error");
      expect(syntax.error).toMatch(/^SyntaxError in the function/);

      // float64 on WebGPU: a DTypeError (never a silent downcast), in the page as well.
      await page.selectOption("#dtype", "float64");
      const f64 = await runExample(page, "webgpu", "(x) => x.tanh()");
      expect(f64.state).toBe("error");
      expect(f64.error).toMatch(/^DTypeError: .*float64/);

      expect(pageErrors).toEqual([]);
      console.log(`[batchwise] playground screenshots: ${shot}, ${join(shots, "playground-error.png")}`);
    } finally {
      await browser.close();
      server.close();
    }
  });

  it("has every method of the sources in the built page, and every family's cases give their values there and in the function box", async () => {
    expect(haveBrowser, `Chromium at ${CHROMIUM} (BATCHWISE_REQUIRE_BROWSER=1)`).toBe(true);
    const server = await serve(await built());
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const pageErrors: string[] = [];
      page.on("pageerror", (e) => pageErrors.push(e.message));
      await page.goto(server.url);
      await page.waitForSelector('body[data-state="ready"]', { timeout: 30_000 });

      // The surface of what the page offers, against the sources' in Node (the list comes from the library).
      const surface = (await page.evaluate(`(${SURFACE})(window.batchwise)`)) as Record<string, unknown>;
      const names = Object.keys(surface);
      expect(names).toEqual(expect.arrayContaining(["Tensor", "TensorDict", "JaggedTensor", "linalg", "random"]));
      expect(names).toEqual(expect.arrayContaining(caseNames()));
      const node = (new Function(`return (${SURFACE});`)() as (bw: object) => Record<string, unknown>)({ ...sources });
      expect(surface).toEqual(Object.fromEntries(names.map((n) => [n, node[n]])));

      // Every family's cases, in the page, against the values by hand.
      const ran = (await page.evaluate(
        `(${RUN_CASES})(window.batchwise, ${JSON.stringify(CASES.map((c) => ({ name: c.name, code: c.code })))})`,
      )) as Ran[];
      expect(new Set(CASES.map((c) => c.family))).toEqual(new Set(FAMILIES));
      expect(failures(ran)).toEqual([]);

      // The function box, traced by jit: several families at once on (2; 4).
      await page.fill("#base", "4");
      await page.fill("#batches", "2");
      const shown = await runExample(page, "js", FAMILY_FN);
      expect(shown.error).toBeNull();
      expect(shown.rows.length).toBe(FAMILY_OUTPUTS.length);
      shown.rows.forEach((r, k) => expect(r.output).toMatch(FAMILY_OUTPUTS[k]!));
      for (const [k, r] of shown.rows.entries()) {
        const got = r.first.split(", ").map(Number);
        const want = familyExpected(k);
        // The page prints 6 significant digits.
        const worst = Math.max(...want.map((w, i) => Math.abs(got[i]! - w) / Math.max(1, Math.abs(w))));
        expect([r.output, got.length, worst <= 1e-5]).toEqual([r.output, want.length, true]);
      }
      expect(pageErrors).toEqual([]);
    } finally {
      await browser.close();
      server.close();
    }
  });
});
