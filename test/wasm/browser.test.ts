/**
 * The WebAssembly backend in headless Chromium: a page bundled for the browser runs B1's
 * chain and a row sum on wasm, served once cross-origin isolated (COOP/COEP headers:
 * SharedArrayBuffer, worker threads from a blob: URL, the main thread spinning while they
 * finish) and once not (one thread, and the reason). Results against written-out formulas.
 * Skipped without Chromium (see test/browser/chromium.ts).
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runBundledPage } from "../browser/bundled-page.js";
import { CHROMIUM, haveChromium, REQUIRE_BROWSER } from "../browser/chromium.js";

const here = dirname(fileURLToPath(import.meta.url));

async function runPage(isolated: boolean): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = isolated
    ? { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp" }
    : {};
  // What a strict page allows: WebAssembly compilation and blob: workers, no eval.
  headers["Content-Security-Policy"] = "script-src 'self' 'wasm-unsafe-eval'; worker-src blob:";
  const { result, errors } = await runBundledPage(join(here, "browser-page.ts"), "batchwise-wasm-browser-", headers);
  const r = result as Record<string, unknown>;
  return errors.length > 0 ? { ...r, pageErrors: errors } : r;
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
