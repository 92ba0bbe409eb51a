/**
 * The API reference: TypeDoc, run as `npm run docs` runs it (typedoc.json, both
 * entry points, `validation.notDocumented` and warnings as errors), finds no
 * warning, so every public export has its doc comment. The same settings fail on a
 * small project with an undocumented export, naming it: the check can fail.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { nodeNextTsconfig } from "../helpers/tsconfig.js";

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const typedoc = join(root, "node_modules/typedoc/bin/typedoc");
const dirs: string[] = [];

interface Outcome {
  readonly code: number;
  readonly output: string;
}

/** TypeDoc's exit code and its output (colours off), with no site written. */
async function typedocRun(args: readonly string[], cwd: string): Promise<Outcome> {
  const env = { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" };
  try {
    const r = await run(process.execPath, [typedoc, ...args, "--emit", "none"], {
      cwd,
      env,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, output: r.stdout + r.stderr };
  } catch (e) {
    const err = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof err.code === "number" ? err.code : -1, output: `${err.stdout ?? ""}${err.stderr ?? ""}` };
  }
}

afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe("API reference (TypeDoc)", () => {
  it("typedoc.json documents both entries, requires doc comments and fails on any warning", async () => {
    const config = JSON.parse(await readFile(join(root, "typedoc.json"), "utf8")) as Record<string, unknown>;
    expect(config.entryPoints).toEqual(["src/index.ts", "src/runtime-entry.ts", "src/distributed/index.ts"]);
    expect((config.validation as Record<string, unknown>).notDocumented).toBe(true);
    expect(config.treatWarningsAsErrors).toBe(true);
    expect(config.out).toBe("docs/api");
    const pkg = JSON.parse(await readFile(join(root, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.docs).toBe("typedoc");
  });

  it("every public export of batchwise and batchwise/runtime has a doc comment (no TypeDoc warning)", async () => {
    const r = await typedocRun([], root);
    expect(r.output).not.toMatch(/\[warning\]|\[error\]/);
    expect(r.code).toBe(0);
    // TypeDoc over the whole API: 18 s on a quiet 2-core machine, 47 s when other jobs shared it.
  }, 120_000);

  it("the same settings fail on an undocumented export and name it", async () => {
    const dir = await mkdtemp(join(os.tmpdir(), "batchwise-docs-"));
    dirs.push(dir);
    const config = JSON.parse(await readFile(join(root, "typedoc.json"), "utf8")) as Record<string, unknown>;
    await writeFile(
      join(dir, "api.ts"),
      "/** Has its comment. */\nexport function documented(): number {\n  return 1;\n}\n\nexport function forgotten(): number {\n  return 2;\n}\n",
    );
    await writeFile(join(dir, "tsconfig.json"), nodeNextTsconfig({ strict: true, types: [] }, { include: ["api.ts"] }));
    await writeFile(
      join(dir, "typedoc.json"),
      JSON.stringify({ ...config, entryPoints: ["api.ts"], tsconfig: "tsconfig.json", intentionallyNotExported: [] }),
    );
    const r = await typedocRun(["--options", "typedoc.json"], dir);
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(/forgotten \((Function|CallSignature)\)[^\n]*does not have any documentation/);
    expect(r.output).not.toMatch(/\bdocumented \(/);
  }, 60_000);
});
