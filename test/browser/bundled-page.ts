/**
 * A test page in headless Chromium: an entry file bundled for the browser with esbuild,
 * served on 127.0.0.1 as the only script of a module page, and what it reported.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { launchChromium } from "./chromium.js";

/**
 * Bundles `entry` (into a temp dir named from `tmpPrefix`), serves it with `headers` on
 * every response, opens it in Chromium and waits (up to 60 s) for `window.__result`:
 * that value, and the messages of the page's uncaught errors. The Node-only `webgpu`
 * package is left out of the bundle (a browser has navigator.gpu).
 */
export async function runBundledPage(
  entry: string,
  tmpPrefix: string,
  headers: Readonly<Record<string, string>> = {},
): Promise<{ result: unknown; errors: string[] }> {
  const dir = await mkdtemp(join(os.tmpdir(), tmpPrefix));
  await build({
    entryPoints: [entry],
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
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
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
    return { result: await handle.jsonValue(), errors };
  } finally {
    await browser.close();
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
