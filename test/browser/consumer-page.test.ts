/**
 * A user's page, built as users build it: a fresh project that installed the
 * packed tarball (test/helpers/packed.ts), an index.html and a main.js that
 * import from "batchwise", bundled by Vite (a production build: minified, tree
 * shaken by its bundler) and by esbuild (bundle + minify), served on 127.0.0.1
 * and run in headless Chromium (test/browser/chromium.ts).
 *
 * Four pages per bundler:
 * - `all`: imports every export of "batchwise" by name (the list is read from
 *   the installed package in Node, so a new export is covered without an edit);
 * - `tensor`: imports `tensor` alone, the smallest page that has tensors;
 * - `tensordict`: imports `TensorDict` and `tensor`;
 * - `runtime`: imports `tensor` alone from "batchwise/runtime".
 *
 * In each page: every exposed export's surface (test/browser/families.ts,
 * SURFACE: each class's methods and getters, each namespace's keys) equals what
 * Node gives for the same names from the installed package, so a method whose
 * installing module a bundler shook out shows as a difference; and every case of
 * families.ts whose names the page exposes gives its hand-computed value.
 *
 * And, in Node, each class that an entry exports, imported alone and bundled by
 * rolldown (Vite's bundler), has every method and getter that Node gives it (one
 * small bundle per class, generated from the exports).
 *
 * Needs Chromium (as the other browser tests) and the npm registry (the packed fixture).
 */
import { execFile } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scratchApp } from "../helpers/packed.js";
import { CHROMIUM, REQUIRE_BROWSER, haveChromium, launchChromium } from "./chromium.js";
import { CASES, FAMILIES, RUN_CASES, SURFACE, failures, type Ran } from "./families.js";
import { serve } from "./serve.js";

const run = promisify(execFile);

type Surface = Record<string, unknown>;

interface PageSpec {
  /** The module specifier the page imports from. */
  readonly from: "batchwise" | "batchwise/runtime";
  /** The names it imports (and exposes to the test as `window.__bw`); undefined: every export. */
  readonly names?: readonly string[];
}

const PAGES: Record<string, PageSpec> = {
  all: { from: "batchwise" },
  tensor: { from: "batchwise", names: ["tensor"] },
  tensordict: { from: "batchwise", names: ["TensorDict", "tensor"] },
  runtime: { from: "batchwise/runtime", names: ["tensor"] },
};

const BUNDLERS = ["vite", "esbuild"] as const;

let dir = "";
/** Node's surface of each entry, from the installed package, each in its own process (the full entry adds methods to classes the runtime shares). */
const nodeSurface: Partial<Record<PageSpec["from"], Surface>> = {};
/** What each page gave: `${page} ${bundler}`. */
const results = new Map<string, { surface: Surface; ran: Ran[]; errors: string[] }>();

/** The page's main.js: imports the names and exposes them, and the Tensor class (from a tensor), as `window.__bw`. */
function mainJs(spec: PageSpec, names: readonly string[]): string {
  const tensorClass = names.includes("Tensor") ? "" : "Tensor: tensor([0]).constructor, ";
  return [
    `import { ${names.join(", ")} } from "${spec.from}";`,
    `window.__bw = { ${tensorClass}${names.join(", ")} };`,
    "",
  ].join("\n");
}

const HTML =
  '<!doctype html>\n<html><head><meta charset="utf-8"><title>page</title></head>\n<body><script type="module" src="./main.js"></script></body></html>\n';

async function nodeExports(from: string): Promise<Surface> {
  const script = `import * as bw from ${JSON.stringify(from)}; const surface = ${SURFACE}; console.log(JSON.stringify(surface({ ...bw })));`;
  const r = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: dir, maxBuffer: 16 << 20 });
  return JSON.parse(r.stdout) as Surface;
}

/** Builds a page with Vite (production) into `<page>/vite`, or with esbuild into `<page>/esbuild`. */
async function bundle(pageDir: string, bundler: (typeof BUNDLERS)[number]): Promise<string> {
  const out = join(pageDir, bundler);
  if (bundler === "vite") {
    const { build } = await import("vite");
    await build({
      root: pageDir,
      configFile: false,
      mode: "production",
      logLevel: "warn",
      // The `all` page holds the whole library in one chunk: past Vite's 500 kB warning, as expected.
      build: { outDir: out, emptyOutDir: true, minify: true, chunkSizeWarningLimit: 4096 },
    });
  } else {
    const { build } = await import("esbuild");
    await mkdir(out, { recursive: true });
    await build({
      entryPoints: [join(pageDir, "main.js")],
      absWorkingDir: pageDir,
      outfile: join(out, "main.js"),
      bundle: true,
      minify: true,
      format: "esm",
      platform: "browser",
      logLevel: "warning",
    });
    await writeFile(join(out, "index.html"), HTML);
  }
  return out;
}

const haveBrowser = haveChromium;
if (!haveBrowser && !REQUIRE_BROWSER)
  console.warn(`[batchwise] consumer page test skipped: no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`);

describe.runIf(haveBrowser || REQUIRE_BROWSER)("a consumer's page bundled from the packed tarball", () => {
  let browser: Browser | undefined;

  beforeAll(async () => {
    expect(haveBrowser, `Chromium at ${CHROMIUM} (BATCHWISE_REQUIRE_BROWSER=1)`).toBe(true);
    dir = (await scratchApp("batchwise-page-")).dir;
    nodeSurface["batchwise"] = await nodeExports("batchwise");
    nodeSurface["batchwise/runtime"] = await nodeExports("batchwise/runtime");
    browser = await launchChromium();
    for (const [page, spec] of Object.entries(PAGES)) {
      const names = spec.names ?? Object.keys(nodeSurface[spec.from]!);
      const pageDir = join(dir, page);
      await mkdir(pageDir, { recursive: true });
      await writeFile(join(pageDir, "index.html"), HTML);
      await writeFile(join(pageDir, "main.js"), mainJs(spec, names));
      for (const bundler of BUNDLERS) {
        const server = await serve(await bundle(pageDir, bundler));
        const tab = await browser.newPage();
        const errors: string[] = [];
        tab.on("pageerror", (e) => errors.push(e.message));
        try {
          await tab.goto(server.url);
          await tab.waitForFunction(() => (window as unknown as { __bw?: unknown }).__bw !== undefined, null, {
            timeout: 30_000,
          });
          const surface = (await tab.evaluate(`(${SURFACE})(window.__bw)`)) as Surface;
          const ran = (await tab.evaluate(
            `(${RUN_CASES})(window.__bw, ${JSON.stringify(CASES.map((c) => ({ name: c.name, code: c.code })))})`,
          )) as Ran[];
          results.set(`${page} ${bundler}`, { surface, ran, errors });
        } finally {
          await tab.close();
          server.close();
        }
      }
    }
  }, 600_000);

  it("each exported class imported alone, bundled by rolldown (Vite's bundler): the methods and getters Node gives it", async () => {
    const { rolldown } = await import("rolldown");
    const alone = join(dir, "alone");
    await mkdir(alone, { recursive: true });
    const built: { from: PageSpec["from"]; name: string; file: string }[] = [];
    for (const from of ["batchwise", "batchwise/runtime"] as const)
      for (const [name, v] of Object.entries(nodeSurface[from]!)) {
        if ((v as { kind: string }).kind !== "class") continue;
        const base = `${from.replace("/", "-")}-${name}`;
        await writeFile(
          join(alone, `${base}.js`),
          `import { ${name} } from "${from}";\nexport const surface = (${SURFACE})({ ${name} });\n`,
        );
        const b = await rolldown({
          input: join(alone, `${base}.js`),
          cwd: dir,
          platform: "browser",
          logLevel: "silent",
        });
        await b.write({ file: join(alone, `${base}.mjs`), format: "esm", minify: true, codeSplitting: false });
        await b.close();
        built.push({ from, name, file: `./${base}.mjs` });
      }
    expect(built.map((b) => b.name)).toEqual(expect.arrayContaining(["Tensor", "TensorDict", "JaggedTensor", "Vec"]));
    const runner = `const out = {}; for (const f of ${JSON.stringify(built.map((b) => b.file))}) out[f] = (await import(f)).surface; console.log(JSON.stringify(out));`;
    await writeFile(join(alone, "run.mjs"), runner);
    const r = await run(process.execPath, ["run.mjs"], { cwd: alone, maxBuffer: 16 << 20 });
    const got = JSON.parse(r.stdout) as Record<string, Surface>;
    const differ = built
      .filter((b) => JSON.stringify(got[b.file]![b.name]) !== JSON.stringify(nodeSurface[b.from]![b.name]))
      .map((b) => ({
        from: b.from,
        name: b.name,
        bundled: got[b.file]![b.name],
        node: nodeSurface[b.from]![b.name],
      }));
    expect(differ).toEqual([]);
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  for (const [page, spec] of Object.entries(PAGES))
    for (const bundler of BUNDLERS)
      it(`${page} page (${spec.names?.join(", ") ?? "every export"} from ${spec.from}), ${bundler}: the surface Node has, and each family's values`, () => {
        const r = results.get(`${page} ${bundler}`)!;
        expect(r.errors).toEqual([]);
        const node = nodeSurface[spec.from]!;
        const names = Object.keys(r.surface);
        // The page exposes what it imports (and the Tensor class).
        expect(names).toEqual(expect.arrayContaining([...(spec.names ?? Object.keys(node)), "Tensor"]));
        const want = Object.fromEntries(names.map((n) => [n, node[n]]));
        expect(r.surface).toEqual(want);
        // Every case whose names the page has gives its value; the `all` page runs every family.
        const exposed = new Set(names);
        // (batchwise/runtime computes nothing eagerly: its page is checked for its surface only.)
        const runnable =
          spec.from === "batchwise"
            ? CASES.filter((c) => [...c.code.matchAll(/\bbw\.([A-Za-z_$][\w$]*)/g)].every((m) => exposed.has(m[1]!)))
            : [];
        if (spec.names === undefined) {
          expect(runnable.length).toBe(CASES.length);
          expect(new Set(runnable.map((c) => c.family))).toEqual(new Set(FAMILIES));
        }
        const mine = new Set(runnable.map((c) => c.name));
        const ran = r.ran.filter((x) => mine.has(x.name));
        expect(failures(ran).filter((f) => mine.has(f.name))).toEqual([]);
        if (spec.from === "batchwise") expect(ran.length).toBeGreaterThan(0);
      });
});
