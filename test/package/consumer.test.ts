/**
 * The package as a user gets it: `npm pack`, then `npm install` of the tarball
 * into a fresh project (no webgpu package: it is an optional peer), and there:
 * - the declarations type-check under strict settings with `skipLibCheck` off,
 *   for `moduleResolution` bundler (a browser program: the DOM lib) and node16 and
 *   nodenext (Node programs: no DOM lib; the declarations name no global WebGPU
 *   type, so none is needed); test/package/types.test.ts checks every public
 *   method under TypeScript 5.9 and 7, with and without the DOM lib;
 * - esbuild (platform browser) and Vite bundle an importing file with no flags,
 *   no errors and no warnings;
 * - Node runs it through `import` and through `require`;
 * - `initWebGPU` without the optional package is a BackendError that says how to install it.
 *
 * Needs the npm registry (for the tarball's own dependencies), as `npm ci` does.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile, readdir, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { build as esbuild } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scratchApp } from "../helpers/packed.js";

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const tsc = join(root, "node_modules/typescript/bin/tsc");
let dir = "";

const consumerTs = `import { jit, tensor, initWebGPU, BackendError, type Tensor } from "batchwise";
const f = jit((x: Tensor) => x.mul(2).add(1));
const y: Tensor = f(tensor([[1, 2, 3]], { batchDim: 1 }));
export const out: number[] = Array.from(y.dataSync());
export { initWebGPU, BackendError };
`;

const consumerJs = `import { jit, tensor } from "batchwise";
const f = jit((x) => x.mul(2).add(1));
document.body.textContent = String(f(tensor([[1, 2, 3]], { batchDim: 1 })).dataSync());
`;

function tsconfig(module: string, moduleResolution: string, extra: object): string {
  return JSON.stringify({
    compilerOptions: {
      target: "ES2022",
      module,
      moduleResolution,
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      ...extra,
    },
    files: ["main.ts"],
  });
}

beforeAll(async () => {
  const app = await scratchApp("batchwise-consumer-");
  dir = app.dir;
  await writeFile(join(dir, "main.ts"), consumerTs);
  await writeFile(join(dir, "browser.js"), consumerJs);
  await writeFile(join(dir, "index.html"), '<!doctype html><script type="module" src="./browser.js"></script>');
  await writeFile(
    join(dir, "tsconfig.bundler.json"),
    tsconfig("ESNext", "Bundler", { lib: ["ES2022", "DOM"], types: [] }),
  );
  await writeFile(
    join(dir, "tsconfig.node16.json"),
    tsconfig("Node16", "Node16", { lib: ["ES2022"], types: ["node"] }),
  );
  await writeFile(
    join(dir, "tsconfig.nodenext.json"),
    tsconfig("NodeNext", "NodeNext", { lib: ["ES2022"], types: ["node"] }),
  );
}, 300_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the packed package in a fresh project", () => {
  it("installs without the native webgpu package and without @webgpu/types", async () => {
    const installed = await readdir(join(dir, "node_modules"));
    expect(installed).toContain("batchwise");
    expect(installed).not.toContain("webgpu");
    // The WebGPU types are the consumer's own (TypeScript 7's DOM lib, or @webgpu/types it adds):
    // a dependency on @webgpu/types clashed with TypeScript 7's DOM lib (runtime/webgpu/gpu-types.ts).
    expect(installed).not.toContain("@webgpu");
  });

  it.each(["bundler", "node16", "nodenext"])(
    "type-checks strictly with skipLibCheck off (%s)",
    async (mode) => {
      const r = await run(process.execPath, [tsc, "-p", `tsconfig.${mode}.json`], { cwd: dir }).catch(
        (e: { stdout: string }) => e,
      );
      expect(r.stdout).toBe("");
    },
    60_000,
  );

  it("bundles for the browser with esbuild: no flags, no warnings", async () => {
    const r = await esbuild({
      entryPoints: [join(dir, "browser.js")],
      absWorkingDir: dir,
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      logLevel: "silent",
    });
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([]);
    expect(r.outputFiles[0]!.text).not.toMatch(/from "node:|require\("node:/);
  }, 60_000);

  it("bundles for the browser with Vite: no warnings", async () => {
    const { build, createLogger } = await import("vite");
    const warnings: string[] = [];
    const logger = createLogger("warn");
    logger.warn = (msg) => warnings.push(msg);
    logger.warnOnce = (msg) => warnings.push(msg);
    await build({
      root: dir,
      logLevel: "warn",
      customLogger: logger,
      configFile: false,
      build: { outDir: "dist", write: true },
    });
    expect(warnings).toEqual([]);
  }, 120_000);

  it("keeps error class names in a minified bundle", async () => {
    const entry = join(dir, "errors.js");
    await writeFile(
      entry,
      'import { zeros } from "batchwise";\ntry { zeros([2], [3]).add(zeros([2], [4])); } catch (e) { console.log(e.name); }\n',
    );
    const out = join(dir, "errors.min.mjs");
    await esbuild({
      entryPoints: [entry],
      absWorkingDir: dir,
      bundle: true,
      minify: true,
      platform: "node",
      format: "esm",
      outfile: out,
      logLevel: "silent",
    });
    const r = await run(process.execPath, [out], { cwd: dir });
    expect(r.stdout.trim()).toBe("ShapeError");
  }, 60_000);

  it("runs in Node through import and require", async () => {
    const esm = await run(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'import { tensor } from "batchwise"; console.log(Array.from(tensor([1, 2]).mul(3).dataSync()).join(","));',
      ],
      { cwd: dir },
    );
    expect(esm.stdout.trim()).toBe("3,6");
    const cjs = await run(
      process.execPath,
      [
        "-e",
        'const { tensor } = require("batchwise"); console.log(Array.from(tensor([1, 2]).add(3).dataSync()).join(","));',
      ],
      { cwd: dir },
    );
    expect(cjs.stdout.trim()).toBe("4,5");
  }, 60_000);

  it("installs the batchwise command", async () => {
    const r = await run("npx", ["--no-install", "batchwise", "--help"], { cwd: dir });
    expect(r.stdout).toMatch(/bundle/);
    expect(r.stdout).toMatch(/inspect/);
  }, 60_000);

  it("says how to install webgpu when initWebGPU needs it and it is missing", async () => {
    const script =
      'import { initWebGPU, BackendError } from "batchwise"; initWebGPU().then(() => console.log("no error"), (e) => console.log(e instanceof BackendError, e.message));';
    const r = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: dir });
    expect(r.stdout).toMatch(/^true .*npm install webgpu/);
  }, 60_000);
});

describe("the installed package's README", () => {
  it("links only to files the tarball holds (the guides, bench/RESULTS.md, the CHANGELOG)", async () => {
    const pkg = join(dir, "node_modules/batchwise");
    const readme = await readFile(join(pkg, "README.md"), "utf8");
    const links = [...readme.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
      .map((m) => m[1]!)
      .filter((l) => !/^[a-z]+:/.test(l));
    expect(links.length).toBeGreaterThan(10);
    const missing = links.filter((l) => !existsSync(join(pkg, l)));
    expect(missing).toEqual([]);
  });
});
