/**
 * The package as a user gets it, shared by every test that consumes it: `npm pack`
 * of this checkout (which runs `prepare`, so `dist/` is built from the sources
 * first), then `npm install` of the tarball into a fresh project.
 *
 * Packing and installing take about 40 s, so one install serves every test file
 * of a run: the project lives in `<system temp>/batchwise-packed/<key>` (outside
 * this repository, so that Node and TypeScript resolution cannot climb into the
 * repository's own node_modules and find what a user would not have),
 * where the key hashes everything that goes into the tarball (the sources, the
 * build config, package.json, the README, CHANGELOG and guides). Test files run in
 * separate workers; a lock directory makes the second worker wait for the first
 * one's install instead of starting its own. A change to any source gives a new
 * key, so a stale build is never tested.
 *
 * `packedApp()` gives a project with the tarball and `@types/node` (the version
 * this repository pins) installed and nothing else; tests that need more (another
 * TypeScript, Vite) copy or extend it in their own temporary folder.
 *
 * Needs the npm registry for the tarball's own dependencies, as `npm ci` does.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, readdir, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The repository's root folder. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** What goes into the tarball: folders compiled into dist/, and the files packed beside it. */
const INPUT_DIRS = ["src", "ir", "passes", "codegen", "runtime"];
const INPUT_FILES = [
  "package.json",
  "tsconfig.build.json",
  "tsconfig.json",
  "README.md",
  "CHANGELOG.md",
  "LICENSE",
  "bench/RESULTS.md",
];

/** A packed and installed project. */
export interface PackedApp {
  /** The project folder: `node_modules/batchwise` is the installed tarball. */
  readonly dir: string;
  /** The tarball's path. */
  readonly tarball: string;
  /** The installed package's folder (`<dir>/node_modules/batchwise`). */
  readonly pkg: string;
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(p)));
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

/** The folders whose guides (`*.md`) ship in the tarball (package.json "files"). */
const GUIDE_DIRS = ["docs", "docs/contributing"];

/** A hash of every input of the tarball: paths and contents. */
export async function packKey(): Promise<string> {
  const h = createHash("sha256");
  const files = [
    ...(await Promise.all(INPUT_DIRS.map((d) => filesUnder(join(ROOT, d))))).flat(),
    // The guides ship in the tarball (the README links them).
    ...(
      await Promise.all(
        GUIDE_DIRS.map(async (d) =>
          (await readdir(join(ROOT, d))).filter((f) => f.endsWith(".md")).map((f) => join(ROOT, d, f)),
        ),
      )
    ).flat(),
    ...INPUT_FILES.map((f) => join(ROOT, f)).filter((f) => existsSync(f)),
  ].sort();
  for (const f of files) {
    h.update(relative(ROOT, f));
    h.update("\0");
    h.update(await readFile(f));
    h.update("\0");
  }
  const typesNode = JSON.parse(await readFile(join(ROOT, "node_modules/@types/node/package.json"), "utf8")) as {
    version: string;
  };
  h.update(`@types/node@${typesNode.version}`);
  return h.digest("hex").slice(0, 16);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function build(target: string): Promise<void> {
  const work = `${target}.partial-${process.pid}`;
  await rm(work, { recursive: true, force: true });
  const packDir = join(work, "pack");
  const app = join(work, "app");
  await mkdir(packDir, { recursive: true });
  await mkdir(app, { recursive: true });
  await run("npm", ["pack", "--pack-destination", packDir, "--silent"], {
    cwd: ROOT,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((e: { stdout?: string; stderr?: string; message: string }) => {
    // Most often the build (`prepare`: tsc) failed; say what it said.
    throw new Error(`packed: npm pack failed\n${e.stdout ?? ""}${e.stderr ?? ""}`.slice(0, 8000), { cause: e });
  });
  const [tarball] = (await readdir(packDir)).filter((f) => f.endsWith(".tgz"));
  if (tarball === undefined) throw new Error("packed: npm pack wrote no tarball");
  await writeFile(join(app, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  const typesNode = JSON.parse(await readFile(join(ROOT, "node_modules/@types/node/package.json"), "utf8")) as {
    version: string;
  };
  await run(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      join("..", "pack", tarball),
      `@types/node@${typesNode.version}`,
    ],
    { cwd: app, maxBuffer: 64 * 1024 * 1024 },
  );
  await rename(work, target);
}

/**
 * Runs `make` once across every worker and process until the file `done` exists: the
 * first caller takes the lock directory `lock` (mkdir is atomic) and makes it, the
 * others wait; a lock older than 5 minutes is a dead maker's and is taken over.
 */
export async function onceUnderLock(lock: string, done: string, make: () => Promise<void>): Promise<void> {
  for (;;) {
    if (existsSync(done)) return;
    try {
      await mkdir(lock);
    } catch {
      const age = Date.now() - (await stat(lock).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      if (age > 300_000) await rm(lock, { recursive: true, force: true });
      await sleep(500);
      continue;
    }
    try {
      if (!existsSync(done)) await make();
    } finally {
      await rm(lock, { recursive: true, force: true });
    }
  }
}

let cached: Promise<PackedApp> | undefined;

/**
 * The packed package installed in a fresh project (built once per change of the
 * sources, shared by all test files and workers). Do not write into it: copy what
 * you need to a temporary folder of your own, or write only new files of your own
 * (names no other test uses).
 */
export function packedApp(): Promise<PackedApp> {
  cached ??= (async () => {
    const key = await packKey();
    const base = join(os.tmpdir(), "batchwise-packed");
    const target = join(base, key);
    const lock = join(base, `${key}.lock`);
    await mkdir(base, { recursive: true });
    await onceUnderLock(lock, join(target, "app/node_modules/batchwise/package.json"), async () => {
      // Old keys: builds more than an hour old go (a younger one may still be in use by another run).
      for (const old of await readdir(base)) {
        if (old === key || old.endsWith(".lock")) continue;
        const age = Date.now() - (await stat(join(base, old)).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
        if (age > 3_600_000) await rm(join(base, old), { recursive: true, force: true });
      }
      await build(target);
    });
    const [tarball] = (await readdir(join(target, "pack"))).filter((f) => f.endsWith(".tgz"));
    return {
      dir: join(target, "app"),
      tarball: join(target, "pack", tarball!),
      pkg: join(target, "app/node_modules/batchwise"),
    };
  })();
  return cached;
}

/**
 * A fresh project folder of the caller's own (in the system's temporary folder)
 * whose `node_modules` is a link to the packed project's: it sees exactly the
 * installed tarball and its dependencies, and the caller may write any file in it.
 * Remove it with `rm(dir, { recursive: true })` when done (the link, not the
 * shared install, is removed).
 */
export async function scratchApp(prefix = "batchwise-app-"): Promise<PackedApp> {
  const packed = await packedApp();
  const dir = await mkdtemp(join(os.tmpdir(), prefix));
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  await symlink(join(packed.dir, "node_modules"), join(dir, "node_modules"), "dir");
  return { dir, tarball: packed.tarball, pkg: packed.pkg };
}
