/**
 * The WebAssembly backend in headless Chromium: a page bundled for the browser runs B1's
 * chain and a row sum on wasm, served once cross-origin isolated (COOP/COEP headers:
 * SharedArrayBuffer, worker threads from a blob: URL, the main thread spinning while they
 * finish) and once not (one thread, and the reason). Results against written-out formulas.
 * Skipped without Chromium (see test/browser/chromium.ts).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { CHROMIUM, haveChromium, launchChromium, REQUIRE_BROWSER } from "../browser/chromium.js";

const here = dirname(fileURLToPath(import.meta.url));

async function runPage(isolated: boolean): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(join(os.tmpdir(), "batchwise-wasm-browser-"));
  await build({
    entryPoints: [join(here, "browser-page.ts")],
    outfile: join(dir, "page.js"),
    bundle: true,
    platform: "browser",
    format: "esm",
    target: "es2022",
    external: ["webgpu"],
    logLevel: "warning",
  });
  const script = await readFile(join(dir, "page.js"));
  const server = http.createServer((req, res) => {
    if (isolated) {
      res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
      res.setHeader("Cross-Origin-Embedder-Policy", "require-corp");
    }
    // What a strict page allows: WebAssembly compilation and blob: workers, no eval.
    res.setHeader("Content-Security-Policy", "script-src 'self' 'wasm-unsafe-eval'; worker-src blob:");
    if (req.url === "/page.js") {
      res.setHeader("content-type", "text/javascript");
      res.end(script);
    } else {
      res.setHeader("content-type", "text/html");
      res.end('<!doctype html><meta charset="utf-8"><script type="module" src="/page.js"></script>');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`http://127.0.0.1:${port}/`);
    const handle = await page.waitForFunction(() => (window as unknown as { __result?: unknown }).__result, null, {
      timeout: 60_000,
    });
    const r = (await handle.jsonValue()) as Record<string, unknown>;
    return errors.length > 0 ? { ...r, pageErrors: errors } : r;
  } finally {
    await browser.close();
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

describe.runIf(haveChromium || REQUIRE_BROWSER)("the WebAssembly backend in headless Chromium", () => {
  it("cross-origin isolated: worker threads, launches split over them, results right (under a strict CSP)", async () => {
    expect(haveChromium, `Chromium at ${CHROMIUM}`).toBe(true);
    const r = await runPage(true);
    expect(r["error"]).toBeUndefined();
    expect(r["pageErrors"]).toBeUndefined();
    expect(r["isolated"]).toBe(true);
    expect(r["threads"] as number).toBeGreaterThan(1);
    expect(r["threaded"] as number).toBeGreaterThan(0);
    expect(r["simd"] as number).toBeGreaterThan(0);
    expect(r["chainErr"] as number).toBeLessThan(1e-6);
    expect(r["sumErr"]).toBe(0);
  });

  it("not isolated: one thread, the reason given, results right", async () => {
    const r = await runPage(false);
    expect(r["error"]).toBeUndefined();
    expect(r["isolated"]).toBe(false);
    expect(r["threads"]).toBe(1);
    expect(String(r["threadNote"])).toMatch(/SharedArrayBuffer|cross-origin isolated/);
    expect(r["chainErr"] as number).toBeLessThan(1e-6);
    expect(r["sumErr"]).toBe(0);
  });
});
