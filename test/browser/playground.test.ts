/**
 * The playground page (playground/) in headless Chromium: built with Vite's API
 * into a temporary folder, served on 127.0.0.1, and driven like a user would.
 * The default example runs on the JS backend and on the browser's WebGPU
 * (`navigator.gpu`, SwiftShader here); the test reads what the page shows (IR,
 * kernels, the rendered graph, counters, result values) and checks the values
 * against the example's formula written out below, then checks that bad code
 * shows its error in the page. A screenshot is saved to a temporary folder and
 * its path printed.
 *
 * Needs Debian's chromium (`/usr/bin/chromium`, or CHROMIUM_PATH). Without it the
 * test is skipped with the reason, except when BATCHWISE_REQUIRE_BROWSER=1.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { dirname, extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { type Page } from "playwright-core";
import { build } from "vite";
import { CHROMIUM, REQUIRE_BROWSER as REQUIRE, launchChromium } from "./chromium.js";
import { describe, expect, it } from "vitest";

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

const TYPES: Record<string, string> = {
  ".html": "text/html",
  ".js": "text/javascript",
  ".css": "text/css",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
};

/** Serves a folder on 127.0.0.1 (no directory listings, nothing outside the folder). */
async function serve(dir: string): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    const file = normalize(join(dir, path === "/" ? "index.html" : path));
    if (!file.startsWith(dir + sep)) {
      res.statusCode = 403;
      res.end();
      return;
    }
    readFile(file).then(
      (body) => {
        res.setHeader("content-type", TYPES[extname(file)] ?? "application/octet-stream");
        res.end(body);
      },
      () => {
        res.statusCode = 404;
        res.end();
      },
    );
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close: () => server.close() };
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

describe.runIf(haveBrowser || REQUIRE)("the playground page in headless Chromium", () => {
  it("runs the default example on JS and WebGPU and shows IR, kernels, graph, one trace for 3 batch sizes and correct values; errors stay in the page", async () => {
    expect(haveBrowser, `Chromium at ${CHROMIUM} (BATCHWISE_REQUIRE_BROWSER=1)`).toBe(true);
    const dist = await mkdtemp(join(os.tmpdir(), "batchwise-playground-build-"));
    const shots = await mkdtemp(join(os.tmpdir(), "batchwise-playground-shot-"));
    await build({
      configFile: join(root, "playground/vite.config.ts"),
      build: { outDir: dist, emptyOutDir: true },
      logLevel: "warn",
    });
    const server = await serve(dist);
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
      await rm(dist, { recursive: true, force: true });
    }
  });
});
