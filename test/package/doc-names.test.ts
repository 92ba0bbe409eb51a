/**
 * The docs name only what exists ("Names" in docs/contributing/doc-blocks.md): every
 * repository path README.md and docs/**\/*.md mention in backticks (`src/jit.ts`,
 * `passes/fuse/`, `./package.json`) exists, every `path:identifier` names an
 * identifier declared in that file, and every relative Markdown link points to a
 * file or folder. One test per doc file, listing every stale name at once. The
 * same check fails on a doc naming a missing file, a missing identifier, a line
 * number and a broken link.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CODE_FILE, declaredNames, docFiles, docNames, type DocName } from "../helpers/doc-blocks.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The paths among `paths` (no trailing `/`) that git ignores (built outputs such
 * as playground/dist/, docs/api/); none without git. Each is asked as a file and
 * as a folder, since a folder pattern does not match a path that does not exist yet.
 */
function ignored(base: string, paths: readonly string[]): Set<string> {
  if (paths.length === 0) return new Set();
  let out = "";
  try {
    out = execFileSync("git", ["check-ignore", "--no-index", "--stdin"], {
      cwd: base,
      input: paths.flatMap((p) => [p, `${p}/`]).join("\n") + "\n",
      encoding: "utf8",
      stdio: ["pipe", "pipe", "ignore"],
    });
  } catch (e) {
    // Exit code 1: none of them is ignored. Anything else (no git, not a repository): check them all.
    out = (e as { status?: number; stdout?: string }).stdout ?? "";
  }
  return new Set(
    out
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => l.replace(/\/$/, "")),
  );
}

/** What is wrong with the names one doc mentions, as `file:line: message` lines (empty when all exist). */
function staleNames(base: string, names: readonly DocName[]): string[] {
  const skip = ignored(
    base,
    names.map((n) => n.path.replace(/\/$/, "")),
  );
  const declared = new Map<string, Set<string>>();
  const out: string[] = [];
  for (const n of names) {
    const where = `${n.file}:${n.line}: \`${n.span}\``;
    const path = n.path.replace(/\/$/, "");
    if (skip.has(path)) continue;
    const full = join(base, path);
    if (!existsSync(full)) {
      out.push(`${where}: ${n.link ? "link target" : "path"} ${n.path} does not exist`);
      continue;
    }
    const isDir = statSync(full).isDirectory();
    if (n.path.endsWith("/") && !isDir) out.push(`${where}: ${path} is a file, not a folder`);
    if (n.lineRef !== undefined) {
      out.push(`${where}: a line number rots unnoticed; name an identifier (\`${path}:name\`) instead`);
      continue;
    }
    if (n.identifier === undefined) continue;
    if (isDir || !CODE_FILE.test(path)) {
      out.push(`${where}: identifiers can be checked only in a .ts/.js file, not ${path}`);
      continue;
    }
    let names = declared.get(path);
    if (names === undefined) {
      names = declaredNames(readFileSync(full, "utf8"), path);
      declared.set(path, names);
    }
    if (!names.has(n.identifier)) out.push(`${where}: ${path} declares no \`${n.identifier}\``);
  }
  return out;
}

describe("names in the docs exist", () => {
  const files = docFiles(root);

  it("finds the docs (README.md and docs/**/*.md) and names in them", () => {
    expect(files).toContain("README.md");
    expect(files).toContain("docs/ARCHITECTURE.md");
    expect(files.some((f) => f.startsWith("docs/api/"))).toBe(false);
    const total = files.reduce((s, f) => s + docNames(readFileSync(join(root, f), "utf8"), f).length, 0);
    console.log(`doc-names: ${files.length} doc files, ${total} names checked`);
    expect(total).toBeGreaterThan(0);
  });

  for (const f of files) {
    it(`${f}: every repo path, path:identifier and relative link it names exists`, () => {
      const stale = staleNames(root, docNames(readFileSync(join(root, f), "utf8"), f));
      expect(stale, stale.join("\n")).toEqual([]);
    });
  }
});

describe("the check fails on stale names", () => {
  const doc = [
    "Stages: `src/jit.ts:jit`, `src/jit.ts:noSuchFunction`, `src/no-such-file.ts`, `src/no-such-file.ts:jit`.",
    "Also `src/jit.ts:42`, `./package.json:name`, `./package.json`, `src/jit.ts/` and `src/`.",
    "Links: [ok](ARCHITECTURE.md), [gone](gone.md#x), [up](../src/jit.ts), [built](../playground/dist/index.html).",
  ].join("\n");

  it("reports each missing file, missing identifier, line number and broken link, and passes the rest", () => {
    expect(staleNames(root, docNames(doc, "docs/check.md"))).toEqual([
      "docs/check.md:1: `src/jit.ts:noSuchFunction`: src/jit.ts declares no `noSuchFunction`",
      "docs/check.md:1: `src/no-such-file.ts`: path src/no-such-file.ts does not exist",
      "docs/check.md:1: `src/no-such-file.ts:jit`: path src/no-such-file.ts does not exist",
      "docs/check.md:2: `src/jit.ts:42`: a line number rots unnoticed; name an identifier (`src/jit.ts:name`) instead",
      "docs/check.md:2: `./package.json:name`: identifiers can be checked only in a .ts/.js file, not package.json",
      "docs/check.md:2: `src/jit.ts/`: src/jit.ts is a file, not a folder",
      "docs/check.md:3: `gone.md#x`: link target docs/gone.md does not exist",
    ]);
  });
});
