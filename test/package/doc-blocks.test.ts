/**
 * The docs run as printed (issue 25, item 1; convention: docs/contributing/doc-blocks.md).
 * Every fenced `ts`/`js` block of README.md and docs/**\/*.md (not docs/api/) is a
 * test named `<file>:<line of the opening fence>`:
 *
 * - `ts` blocks are type-checked against the installed tarball's declarations
 *   (tsc --strict, skipLibCheck off, NodeNext, lib ES2022+DOM, types node): all of
 *   them in ONE tsc run over one project, one module per block, the errors mapped
 *   back to the doc's lines; a `fragment` block has docs/fragment-prelude.d.ts
 *   appended to its module;
 * - each block (not `fragment`, not `no-run`) then runs alone in a fresh empty
 *   folder whose node_modules is the packed tarball's install (`packedApp`, copied
 *   once per run: see `copyPacked`), types stripped by esbuild, as `node block.mjs`
 *   in that folder, for at most 60 s, in its own process group (killed at its end,
 *   leftovers included); it must exit 0 and print what its `// →` / `// ≈`
 *   comments say (`compareOutput`);
 * - `needs=webgpu` blocks get this repository's `webgpu` package in their project and
 *   EGL_PLATFORM=surfaceless, and are skipped (with the reason) when a probe in such
 *   a project finds no adapter, unless BATCHWISE_REQUIRE_WEBGPU=1; `needs=redis`
 *   blocks get `ioredis` and `bullmq`, a redis-server of their own on a free port
 *   and REDIS_URL, and are skipped without redis-server unless BATCHWISE_REQUIRE_REDIS=1.
 *
 * Two processes at a time: the type-check takes one slot first, blocks start in the
 * other. A last test prints the counts and times and checks that fragments (with
 * `no-run` blocks) are at most 10% of the blocks. With
 * BATCHWISE_DOC_BLOCK_REPORT=<file>, a summary (one line per failing block) and the
 * details are written there as Markdown. BATCHWISE_DOC_BLOCKS_ROOT=<folder> runs
 * that folder's README.md and docs/ instead (to try the runner on blocks that must
 * fail), BATCHWISE_DOC_BLOCK_TIMEOUT_MS changes the 60 s.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { transform } from "esbuild";
import { afterAll, beforeAll, describe, it, vi } from "vitest";
import {
  blockName,
  collectBlocks,
  compareOutput,
  parseExpectations,
  type DocBlock,
  type Need,
} from "../helpers/doc-blocks.js";
import { freePort } from "../helpers/free-port.js";
import { nodeNextTsconfig } from "../helpers/tsconfig.js";
import { ROOT, type PackedApp } from "../helpers/packed.js";

/** Per block (BATCHWISE_DOC_BLOCK_TIMEOUT_MS overrides it, to test the runner). */
const BLOCK_TIMEOUT_MS = Number(process.env["BATCHWISE_DOC_BLOCK_TIMEOUT_MS"] ?? 60_000);
const CONCURRENCY = 2;
const REQUIRE_WEBGPU = process.env["BATCHWISE_REQUIRE_WEBGPU"] === "1";
const REQUIRE_REDIS = process.env["BATCHWISE_REQUIRE_REDIS"] === "1";
const REPORT = process.env["BATCHWISE_DOC_BLOCK_REPORT"];
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
/** The optional peers each need adds to a block's project (from this repository's node_modules). */
const PEERS: Readonly<Record<Need, readonly string[]>> = { webgpu: ["webgpu"], redis: ["ioredis", "bullmq"] };

/** The folder whose README.md and docs/ are run: this repository, or (to test the runner itself) BATCHWISE_DOC_BLOCKS_ROOT. */
const DOCS_ROOT = process.env["BATCHWISE_DOC_BLOCKS_ROOT"] ?? ROOT;
const blocks = collectBlocks(DOCS_ROOT);
const hasRedis = spawnSync("sh", ["-c", "command -v redis-server"]).status === 0;

interface Outcome {
  /** Why the test fails (empty: it passes, or is skipped). */
  readonly failures: string[];
  /** Why it is skipped (only when nothing failed). */
  readonly skipped?: string;
  /** It was executed (not a fragment, not no-run, not skipped). */
  readonly ran: boolean;
  /** Wall time of its own process (0 when not run). */
  readonly runMs: number;
}

const temps: string[] = [];
let typeErrors: Promise<Map<DocBlock, string[]>>;
let outcomes: Map<DocBlock, Promise<Outcome>>;
const started = Date.now();
let tscMs = 0;
/** Getting the packed install and the projects ready (a build of the tarball, when the sources changed). */
let setupMs = 0;

/**
 * A copy of the packed project's node_modules, in a temporary folder of this run:
 * the shared install is replaced (and the old one removed) as soon as any test
 * worker sees changed sources, which in a checkout many people edit can happen
 * in the middle of this file's minutes of blocks.
 */
async function copyPacked(packed: PackedApp): Promise<string> {
  const base = await mkdtemp(join(os.tmpdir(), "batchwise-docblocks-nm-"));
  temps.push(base);
  const nm = join(base, "node_modules");
  await cp(join(packed.dir, "node_modules"), nm, { recursive: true, verbatimSymlinks: true });
  return nm;
}

/**
 * `base` plus the optional peers `extra` from this repository's node_modules: a
 * node_modules of symlinks to base's entries, except the package itself, which is
 * copied (Node resolves a package's imports from its real path, so a linked
 * batchwise would not find peers added here), and `.bin`, whose relative links are
 * remade to point at that copy.
 */
async function farm(base: string, extra: readonly string[]): Promise<string> {
  if (extra.length === 0) return base;
  const dir = await mkdtemp(join(os.tmpdir(), "batchwise-docblocks-nm-"));
  temps.push(dir);
  const nm = join(dir, "node_modules");
  await mkdir(join(nm, ".bin"), { recursive: true });
  for (const e of await readdir(base)) {
    if (e === ".bin") continue;
    if (e === "batchwise") await cp(join(base, e), join(nm, e), { recursive: true, verbatimSymlinks: true });
    else await symlink(join(base, e), join(nm, e));
  }
  for (const b of await readdir(join(base, ".bin")).catch(() => [] as string[]))
    await symlink(await readlink(join(base, ".bin", b)), join(nm, ".bin", b));
  for (const p of extra) await symlink(join(ROOT, "node_modules", p), join(nm, p));
  return nm;
}

/** A fresh project folder whose node_modules links to `nm`. */
async function project(prefix: string, nm: string): Promise<string> {
  const dir = await mkdtemp(join(os.tmpdir(), prefix));
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "doc-block", private: true, type: "module" }));
  await symlink(nm, join(dir, "node_modules"), "dir");
  return dir;
}

interface Proc {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly ms: number;
}

/** Runs a command in its own process group; at exit (or after `timeoutMs`) the whole group is killed, so leftovers die with it. */
function runProc(cmd: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number) {
  return new Promise<Proc>((resolve) => {
    const t0 = Date.now();
    const child = spawn(cmd, args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    const cap = 4 << 20;
    child.stdout.on("data", (d: Buffer) => {
      if (stdout.length < cap) stdout += d.toString("utf8");
    });
    child.stderr.on("data", (d: Buffer) => {
      if (stderr.length < cap) stderr += d.toString("utf8");
    });
    let timedOut = false;
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      clearTimeout(timer);
      killGroup();
      // Give the pipes a moment to drain (a leftover grandchild may hold them open: it was just killed).
      const done = (): void => resolve({ code, signal, stdout, stderr, timedOut, ms: Date.now() - t0 });
      if (child.stdout.readableEnded && child.stderr.readableEnded) done();
      else {
        const t = setTimeout(done, 2000);
        let open = 2;
        const end = (): void => {
          if (--open === 0) {
            clearTimeout(t);
            done();
          }
        };
        child.stdout.once("close", end);
        child.stderr.once("close", end);
      }
    };
    child.once("exit", finish);
    child.once("error", (e) => {
      stderr += String(e);
      finish(-1, null);
    });
  });
}

/** A redis-server of the block's own (no persistence), on a free loopback port, ready to accept connections. */
async function startRedis(dir: string): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir];
  const child = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  await new Promise<void>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`redis-server did not start in 10 s: ${out}`)), 10_000);
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (/Ready to accept connections/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}: ${out}`));
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** tsc's diagnostics (`file(line,col): error TSxxxx: …` plus their continuation lines), by file. */
function parseTsc(output: string): { byFile: Map<string, string[]>; other: string[] } {
  const byFile = new Map<string, string[]>();
  const other: string[] = [];
  let last: string[] | null = null;
  for (const line of output.split("\n")) {
    const m = /^(.+?)\((\d+),(\d+)\): (error|warning) (TS\d+): (.*)$/.exec(line);
    if (m) {
      const [, file, l, c, , code, msg] = m as unknown as string[];
      const list = byFile.get(file!) ?? [];
      byFile.set(file!, list);
      list.push(`${l}:${c} ${code}: ${msg}`);
      last = list;
    } else if (/^\s+\S/.test(line) && last !== null) {
      last[last.length - 1] += `\n    ${line.trim()}`;
    } else if (line.trim() !== "") {
      other.push(line);
      last = other;
    }
  }
  return { byFile, other };
}

/**
 * One tsc run over the ts blocks in `list`, one module per block (padded with blank
 * lines so that its lines are the doc's); a fragment has docs/fragment-prelude.d.ts
 * appended, as declarations local to its module (ambient declarations and imports
 * are visible in the whole module, wherever they are). The errors of each block, as
 * `<doc file>:<line>:<col> TSxxxx: …`; errors in the appended prelude name the
 * prelude's line; errors in other files (the package's declarations) are reported
 * on every block.
 */
async function typeCheck(nm: string, list: readonly DocBlock[]): Promise<Map<DocBlock, string[]>> {
  const out = new Map<DocBlock, string[]>();
  if (list.length === 0) return out;
  const dir = await project("batchwise-docblocks-tsc-", nm);
  temps.push(dir);
  await mkdir(join(dir, "blocks"));
  const preludePath = "docs/fragment-prelude.d.ts";
  const prelude = list.some((b) => b.fragment) ? await readFile(join(DOCS_ROOT, preludePath), "utf8") : "";
  const names = list.map((_, i) => `blocks/b${i}.ts`);
  const heads = list.map((b) => "\n".repeat(b.line) + b.code + (b.code.endsWith("\n") ? "" : "\n"));
  /** 1-based line of each file where the appended prelude starts (fragments only). */
  const preludeAt = heads.map((h) => h.split("\n").length);
  await Promise.all(list.map((b, i) => writeFile(join(dir, names[i]!), heads[i]! + (b.fragment ? prelude : ""))));
  await writeFile(
    join(dir, "tsconfig.json"),
    nodeNextTsconfig(
      {
        moduleDetection: "force",
        lib: ["ES2022", "DOM"],
        types: ["node"],
        strict: true,
        skipLibCheck: false,
        noEmit: true,
      },
      { files: names },
    ),
  );
  const r = await runProc(
    process.execPath,
    [TSC, "-p", "tsconfig.json", "--pretty", "false"],
    dir,
    process.env,
    600_000,
  );
  const { byFile, other } = parseTsc(r.stdout + r.stderr);
  const foreign: string[] = [...other];
  for (const [file, errs] of byFile) if (!names.includes(file)) foreign.push(...errs.map((e) => `${file}:${e}`));
  if (r.timedOut) foreign.push("tsc timed out");
  else if (r.code !== 0 && byFile.size === 0 && other.length === 0) foreign.push(`tsc exited with ${r.code}`);
  list.forEach((b, i) => {
    const own = (byFile.get(names[i]!) ?? []).map((e) => {
      const line = Number(e.slice(0, e.indexOf(":")));
      return b.fragment && line >= preludeAt[i]!
        ? `${preludePath}:${line - preludeAt[i]! + 1}${e.slice(e.indexOf(":"))} (the prelude, appended to this fragment)`
        : `${b.file}:${e}`;
    });
    out.set(b, [...own, ...foreign.map((e) => `(not in this block) ${e}`)]);
  });
  return out;
}

/** The last lines of a block's stderr, without Node's internal stack frames and version line. */
const tail = (s: string, lines = 30): string => {
  const l = s
    .trimEnd()
    .split("\n")
    .filter((x) => !/^\s+at .*\(node:internal\/|^\s+at node:internal\/|^Node\.js v\d/.test(x));
  return (l.length > lines ? ["…", ...l.slice(-lines)] : l).join("\n");
};

interface Env {
  /** node_modules by the sorted needs of a block ("" = none). */
  readonly nms: Map<string, string>;
  readonly webgpu?: Promise<string | null>;
}

/** Why WebGPU blocks cannot run here (no adapter), or null when they can: a probe in a project like theirs. */
async function probeWebGPU(nm: string): Promise<string | null> {
  const dir = await project("batchwise-docblocks-probe-", nm);
  temps.push(dir);
  await writeFile(
    join(dir, "probe.mjs"),
    `import { initWebGPU } from "batchwise";
try { const b = await initWebGPU(); b.destroy(); console.log("adapter"); process.exit(0); }
catch (e) { console.log(String(e && e.message)); process.exit(3); }
`,
  );
  const r = await runProc(
    process.execPath,
    ["probe.mjs"],
    dir,
    { ...process.env, EGL_PLATFORM: "surfaceless" },
    60_000,
  );
  if (r.code === 0) return null;
  return r.timedOut ? "the WebGPU probe timed out" : (r.stdout.trim() || r.stderr.trim()).split("\n")[0]!;
}

async function runBlock(env: Env, b: DocBlock, types: Promise<Map<DocBlock, string[]>>): Promise<Outcome> {
  let runMs = 0;
  const failures: string[] = [...b.problems];
  const finish = async (o: { skipped?: string; ran: boolean }): Promise<Outcome> => {
    if (b.lang === "ts") failures.push(...((await types).get(b) ?? []).map((e) => `type error: ${e}`));
    return { failures, ...(failures.length === 0 && o.skipped ? { skipped: o.skipped } : {}), ran: o.ran, runMs };
  };
  if (b.fragment || b.noRun) return finish({ ran: false });
  if (b.needs.includes("webgpu")) {
    const reason = await env.webgpu!;
    if (reason !== null) {
      if (!REQUIRE_WEBGPU) return finish({ skipped: `needs=webgpu: no WebGPU adapter (${reason})`, ran: false });
      failures.push(`needs=webgpu and BATCHWISE_REQUIRE_WEBGPU=1, but there is no WebGPU adapter: ${reason}`);
      return finish({ ran: false });
    }
  }
  if (b.needs.includes("redis") && !hasRedis) {
    if (!REQUIRE_REDIS) return finish({ skipped: "needs=redis: redis-server is not installed", ran: false });
    failures.push("needs=redis and BATCHWISE_REQUIRE_REDIS=1, but redis-server is not installed");
    return finish({ ran: false });
  }
  const dir = await project("batchwise-docblock-", env.nms.get([...b.needs].sort().join(","))!);
  let redis: Awaited<ReturnType<typeof startRedis>> | undefined;
  try {
    let js = "\n".repeat(b.line) + b.code;
    if (b.lang === "ts") {
      try {
        js = (
          await transform(js, {
            loader: "ts",
            format: "esm",
            target: "node20",
            sourcemap: "inline",
            sourcefile: b.file,
          })
        ).code;
      } catch (e) {
        failures.push(`esbuild could not strip the types: ${(e as Error).message}`);
        return await finish({ ran: false });
      }
    }
    await writeFile(join(dir, "block.mjs"), js);
    const extraEnv: Record<string, string> = {};
    if (b.needs.includes("webgpu")) extraEnv["EGL_PLATFORM"] = "surfaceless";
    if (b.needs.includes("redis")) {
      const redisDir = join(dir, ".redis");
      await mkdir(redisDir);
      redis = await startRedis(redisDir);
      extraEnv["REDIS_URL"] = redis.url;
    }
    const r = await runProc(
      process.execPath,
      ["--enable-source-maps", "block.mjs"],
      dir,
      { ...process.env, ...extraEnv },
      BLOCK_TIMEOUT_MS,
    );
    runMs = r.ms;
    const stderr = r.stderr.trim() === "" ? "" : `\n--- stderr (last lines) ---\n${tail(r.stderr)}`;
    if (r.timedOut) failures.push(`timed out after ${BLOCK_TIMEOUT_MS / 1000} s${stderr}`);
    else if (r.code !== 0)
      failures.push(`exit code ${r.code}${r.signal ? ` (signal ${r.signal})` : ""}${stderr || "\n(no stderr)"}`);
    else {
      const diff = compareOutput(r.stdout, parseExpectations(b.code));
      if (diff !== null) failures.push(`${diff}${stderr}`);
    }
    return await finish({ ran: true });
  } finally {
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs `tasks` at most `n` at a time, in order; the results as promises, one per task. */
function pool<T>(tasks: readonly (() => Promise<T>)[], n: number): Promise<T>[] {
  const out: { resolve: (v: T) => void; reject: (e: unknown) => void }[] = [];
  const promises = tasks.map((_, i) => new Promise<T>((resolve, reject) => (out[i] = { resolve, reject })));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const i = next++;
      await tasks[i]!().then(out[i]!.resolve, out[i]!.reject);
    }
  };
  for (let k = 0; k < Math.min(n, tasks.length); k++) void worker();
  return promises;
}

beforeAll(async () => {
  // Another worker with other sources may replace the shared install between its build and our copy
  // (in a checkout many people edit at once): then ask packed.ts again, with its per-process cache reset.
  let base = "";
  for (let attempt = 1; ; attempt++) {
    try {
      vi.resetModules();
      const { packedApp } = await import("../helpers/packed.js");
      base = await copyPacked(await packedApp());
      break;
    } catch (e) {
      if (attempt === 3) throw e;
    }
  }
  const variants = new Set(blocks.filter((b) => !b.fragment).map((b) => [...b.needs].sort().join(",")));
  variants.add("");
  const nms = new Map<string, string>();
  for (const v of variants) {
    const needs = v === "" ? [] : (v.split(",") as Need[]);
    nms.set(
      v,
      await farm(
        base,
        needs.flatMap((n) => PEERS[n]),
      ),
    );
  }
  // The type-check project sees every optional peer (a user of those features has them installed).
  const allPeers = await farm(base, Object.values(PEERS).flat());
  setupMs = Date.now() - started;
  const webgpuNm = [...nms].find(([k]) => k.split(",").includes("webgpu"))?.[1];
  const env: Env = { nms, ...(webgpuNm ? { webgpu: probeWebGPU(webgpuNm) } : {}) };
  env.webgpu?.catch(() => undefined);
  typeErrors = (async () => {
    const t0 = Date.now();
    const errors = await typeCheck(
      allPeers,
      blocks.filter((b) => b.lang === "ts"),
    );
    tscMs = Date.now() - t0;
    return errors;
  })();
  typeErrors.catch(() => undefined);
  // The type-check holds the first of the pool's slots; every ts block's outcome also waits for it.
  const slots = pool<unknown>(
    [() => typeErrors, ...blocks.map((b) => () => runBlock(env, b, typeErrors))],
    CONCURRENCY,
  );
  outcomes = new Map(blocks.map((b, i) => [b, slots[i + 1] as Promise<Outcome>]));
}, 600_000);

/** One line per failure of a block: the error's first line for a crash, the first line of a mismatch, each type error's first line. */
function shortReasons(failures: readonly string[]): string[] {
  const out: string[] = [];
  const types = failures.filter((f) => f.startsWith("type error: "));
  for (const f of failures) {
    if (f.startsWith("type error: ")) continue;
    const lines = f.split("\n");
    if (/^exit code/.test(lines[0]!)) {
      const err =
        lines.find((l) => /^\w*(Error|Exception)\b/.test(l.trim())) ?? lines.find((l) => /^\w+: /.test(l.trim()));
      out.push(`${lines[0]}${err !== undefined ? `: ${err.trim()}` : ""}`);
    } else out.push(lines[0]!);
  }
  if (types.length > 0) {
    const first = types.slice(0, 3).map((t) => t.slice("type error: ".length).split("\n")[0]);
    out.push(`${types.length} type error(s): ${first.join(" | ")}${types.length > 3 ? " | …" : ""}`);
  }
  return out;
}

afterAll(async () => {
  const settled = await Promise.allSettled(blocks.map((b) => outcomes?.get(b) ?? Promise.reject(new Error("not run"))));
  await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
  if (REPORT === undefined) return;
  const rows = blocks.map((b, i) => {
    const r = settled[i]!;
    const o: Outcome =
      r.status === "fulfilled"
        ? r.value
        : { failures: [`the runner failed: ${String(r.reason)}`], ran: false, runMs: 0 };
    return { name: blockName(b), o };
  });
  const failing = rows.filter((r) => r.o.failures.length > 0);
  const skipped = rows.filter((r) => r.o.skipped !== undefined);
  const ranMs = rows.reduce((t, r) => t + r.o.runMs, 0);
  const lines = [
    "# Doc blocks that fail",
    "",
    "Written by test/package/doc-blocks.test.ts (BATCHWISE_DOC_BLOCK_REPORT=<this file>); convention: docs/contributing/doc-blocks.md.",
    "",
    `Run ${new Date().toISOString()}: ${blocks.length} blocks, ${rows.length - failing.length - skipped.length} pass, ` +
      `${failing.length} fail, ${skipped.length} skipped. Wall time ${((Date.now() - started) / 1000).toFixed(0)} s ` +
      `(setup ${(setupMs / 1000).toFixed(0)} s; type-check ${(tscMs / 1000).toFixed(0)} s; the blocks' own processes ${(ranMs / 1000).toFixed(0)} s in total, ${CONCURRENCY} at a time).`,
    "",
    "## Summary",
    "",
    ...failing.map((r) => `- **${r.name}**: ${shortReasons(r.o.failures).join("; ")}`),
    ...(skipped.length > 0 ? ["", "Skipped:", "", ...skipped.map((r) => `- ${r.name}: ${r.o.skipped}`)] : []),
    "",
    "## Details",
    "",
    ...failing.flatMap((r) => [`### ${r.name}`, "", "```text", ...r.o.failures.map((f) => f.trimEnd()), "```", ""]),
  ];
  await writeFile(REPORT, lines.join("\n"));
});

describe("doc blocks run as printed", () => {
  for (const b of blocks) {
    it(
      blockName(b),
      async (ctx) => {
        const o = await outcomes.get(b)!;
        if (o.failures.length > 0) throw new Error(o.failures.join("\n\n"));
        if (o.skipped !== undefined) ctx.skip(o.skipped);
      },
      // Waiting for the type-check and the blocks before this one in the pool, then its own 60 s.
      600_000,
    );
  }

  it("counts: fragments and no-run blocks are at most 10% of the blocks", async () => {
    const done = await Promise.all(blocks.map((b) => outcomes.get(b)!));
    const fragments = blocks.filter((b) => b.fragment || b.noRun).length;
    const ran = done.filter((o) => o.ran).length;
    const skipped = done.filter((o) => o.skipped !== undefined).length;
    const failed = done.filter((o) => o.failures.length > 0).length;
    console.log(
      `doc blocks: ${blocks.length} total, ${ran} run, ${fragments} fragments (incl. no-run), ${skipped} skipped, ${failed} failing; ` +
        `${((Date.now() - started) / 1000).toFixed(0)} s since the start of the file (setup ${(setupMs / 1000).toFixed(0)} s, type-check ${(tscMs / 1000).toFixed(0)} s, ` +
        `blocks' own processes ${(done.reduce((t, o) => t + o.runMs, 0) / 1000).toFixed(0)} s in total, ${CONCURRENCY} at a time)`,
    );
    if (blocks.length === 0) throw new Error("no ts/js blocks found in README.md and docs/");
    if (fragments > 0.1 * blocks.length)
      throw new Error(`${fragments} of ${blocks.length} blocks are fragments or no-run: more than 10%`);
  }, 600_000);
});
