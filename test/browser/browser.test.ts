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
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runBundledPage } from "./bundled-page.js";
import { CHROMIUM, REQUIRE_BROWSER as REQUIRE } from "./chromium.js";
import { describe, expect, it } from "vitest";
import type { Outcome } from "./outcome.js";

const here = dirname(fileURLToPath(import.meta.url));

/** Bundles the page, serves it on 127.0.0.1, opens it in Chromium and returns what it reported. */
async function runPage(): Promise<Outcome> {
  const { result, errors } = await runBundledPage(join(here, "page.ts"), "batchwise-browser-");
  const outcome = result as Outcome;
  if (errors.length > 0) return { ...outcome, error: `${outcome.error ?? ""} page errors: ${errors.join("; ")}` };
  return outcome;
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
