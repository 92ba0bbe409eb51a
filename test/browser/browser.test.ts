/**
 * batchwise in a browser: test/browser/page.ts, bundled for the browser with
 * esbuild, runs in headless Chromium on the browser's own WebGPU
 * (`navigator.gpu`; SwiftShader on a machine without a GPU, docs/ARCHITECTURE.md, Backends) and
 * on the JS backend. It checks results against formulas written out in the page.
 *
 * Needs Debian's chromium (`/usr/bin/chromium`, or CHROMIUM_PATH). Without it the
 * test is skipped with the reason, except when BATCHWISE_REQUIRE_BROWSER=1
 * (CI), where a missing browser fails the run.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { CHROMIUM, REQUIRE_BROWSER as REQUIRE, launchChromium } from "./chromium.js";
import { describe, expect, it } from "vitest";
import type { Outcome } from "./outcome.js";

const here = dirname(fileURLToPath(import.meta.url));

/** Bundles the page, serves it on 127.0.0.1, opens it in Chromium and returns what it reported. */
async function runPage(): Promise<Outcome> {
  const dir = await mkdtemp(join(os.tmpdir(), "batchwise-browser-"));
  // The Node-only `webgpu` package is never imported in a browser (navigator.gpu is there).
  await build({
    entryPoints: [join(here, "page.ts")],
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
    const outcome = (await handle.jsonValue()) as Outcome;
    if (errors.length > 0) return { ...outcome, error: `${outcome.error ?? ""} page errors: ${errors.join("; ")}` };
    return outcome;
  } finally {
    await browser.close();
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && !REQUIRE)
  console.warn(
    `[batchwise] browser test skipped: no Chromium at ${CHROMIUM} (set CHROMIUM_PATH, or install Debian's chromium)`,
  );

describe.runIf(haveBrowser || REQUIRE)("batchwise in headless Chromium", () => {
  it("runs jit, reductions, jagged and TensorDict ops on the browser's WebGPU and on JS, equal to the written-out formulas", async () => {
    expect(haveBrowser, `Chromium at ${CHROMIUM} (BATCHWISE_REQUIRE_BROWSER=1)`).toBe(true);
    const r = await runPage();
    expect(r.error).toBeUndefined();
    expect(r.backendName).toBe("webgpu");
    expect(r.adapter).not.toBe("");
    expect(Object.keys(r.checks).sort()).toEqual([
      "chain n=3000",
      "chain n=5",
      "chain on js",
      "jagged means",
      "jagged padded",
      "row centring",
      "tensordict stack",
    ]);
    // WGSL lets sin be off by 2^-11 absolute on [-pi, pi] (exp and tanh by a few ulp): SwiftShader's
    // chain is off by about 1.5e-4 here. Copies, sums of small integers and the JS backend are exact or float32-close.
    const tolerance = (name: string) => (name.startsWith("chain n=") ? 1e-3 : 1e-6);
    for (const [name, err] of Object.entries(r.checks))
      expect([name, err, err <= tolerance(name)]).toEqual([name, err, true]);
    // One trace for two batch sizes on WebGPU.
    expect(r.traces).toEqual({ chain: 1, centre: 1 });
  });
});
