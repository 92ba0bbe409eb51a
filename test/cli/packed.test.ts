/**
 * The `batchwise` command as a user gets it: the packed tarball installed in a
 * fresh project (test/helpers/packed.ts), run through `npx --no-install batchwise`
 * (the package.json `bin` that npm links into node_modules/.bin). `--version`
 * prints the tarball's own package.json version; `--backend wasm` traces on the
 * WebAssembly backend of the built package; `--help` lists the dtypes.
 *
 * Needs the npm registry for the tarball's own dependencies (as `npm ci` does).
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { scratchApp, type PackedApp } from "../helpers/packed.js";

const root = resolve(import.meta.dirname, "../..");
let app: PackedApp;

function npx(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile("npx", ["--no-install", "batchwise", ...args], { cwd: app.dir }, (err, stdout, stderr) =>
      done({ code: err === null ? 0 : typeof err.code === "number" ? err.code : -1, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  app = await scratchApp("batchwise-cli-packed-");
  await writeFile(
    join(app.dir, "model.mjs"),
    `import { tensor } from "batchwise";\nconst w = tensor([1, 2, 3]);\nexport function scale(v) { return v.mul(w).add(1); }\n`,
  );
}, 600_000);

afterAll(async () => {
  if (app !== undefined) await rm(app.dir, { recursive: true, force: true });
});

it("npx --no-install batchwise --version prints the installed package's version", async () => {
  const installed = JSON.parse(readFileSync(join(app.pkg, "package.json"), "utf8")) as { version: string };
  const source = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
  expect(installed.version).toBe(source.version);
  expect(await npx(["--version"])).toEqual({ code: 0, stdout: `${source.version}\n`, stderr: "" });
}, 120_000);

it("the installed CLI takes --backend wasm and lists the dtypes in --help", async () => {
  const [dump, help] = await Promise.all([
    npx(["dump", "model.mjs", "-e", "scale", "-s", "f32[B; 3]", "--backend", "wasm", "--after", "fuse"]),
    npx(["dump", "--help"]),
  ]);
  expect(dump).toEqual({
    code: 0,
    stdout: "schedule @scale: 1 kernels\n  kernel 0 (5 exprs, unrolled) reads %x0, %c0 -> %t0: f32[b0; 3]\n",
    stderr: "",
  });
  expect(help.code).toBe(0);
  expect(help.stdout).toContain("dtypes: float32 float64 int32 uint32 bool uint8 int8 uint16 int16 float16,\n");
}, 120_000);
