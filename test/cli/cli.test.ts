/**
 * The `batchwise` CLI run as a user runs it: a child process (`tsx src/cli.ts`,
 * so no build is needed) on an example module in a temp dir. The bundle it writes
 * is imported and run on values computed by hand; dump prints the IR as written
 * out by hand below; inspect prints the signature and the hash bundleSha256 gives;
 * errors exit with 1 (input) or 2 (usage) and a message, with a stack trace only
 * under BATCHWISE_DEBUG.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { bundleSha256, fromTypedArray, loadBundle, type BundleModule, type Tensor } from "../../src/index.js";

const root = resolve(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "batchwise-cli-"));

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Loads a bundle of the pair example (det and a scaled vector) and checks it on values worked by hand. */
async function expectPairBundle(file: string): Promise<void> {
  const g = await loadBundle(await importModule(file));
  const m = fromTypedArray(Float32Array.from([2, 0, 0, 0, 3, 0, 0, 0, 4, 1, 2, 3, 0, 1, 4, 5, 6, 0]), [2, 3, 3], {
    batchDim: 1,
  });
  const v = fromTypedArray(Float32Array.from([1, 1, 1, 2, 0, -1]), [2, 3], { batchDim: 1 });
  const [det, scaled] = g(m, v) as Tensor[];
  // det diag(2,3,4) = 24; det [[1,2,3],[0,1,4],[5,6,0]] = 1(0-24) - 2(0-20) + 3(0-5) = 1
  expect(Array.from(det!.dataSync())).toEqual([24, 1]);
  expect(Array.from(scaled!.dataSync())).toEqual([1, 2, 3, 2, 0, -3]);
}

/** `batchwise ...args` in `dir`, as a child process. */
function cli(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  const childEnv: Record<string, string | undefined> = { ...process.env, ...env };
  if (!("BATCHWISE_DEBUG" in env)) delete childEnv["BATCHWISE_DEBUG"];
  return new Promise((done) => {
    execFile(
      process.execPath,
      [join(root, "node_modules/tsx/dist/cli.mjs"), join(root, "src/cli.ts"), ...args],
      { cwd: dir, env: childEnv },
      (err, stdout, stderr) => {
        done({ code: err === null ? 0 : typeof err.code === "number" ? err.code : -1, stdout, stderr });
      },
    );
  });
}

async function importModule(file: string): Promise<BundleModule> {
  return (await import(/* @vite-ignore */ pathToFileURL(file).href)) as BundleModule;
}

// The user's module imports batchwise by the path the CLI itself runs from (one instance of the library).
const MODEL = `import { R2, tensor } from ${JSON.stringify(pathToFileURL(join(root, "src/index.ts")).href)};
const w = tensor([1, 2, 3]);
export function scale(v) { return v.mul(w).add(1); }
export function pair(m, v) { return [new R2(m).det().t, v.mul(w)]; }
export const answer = 42;
`;

/** The arguments that bundle the pair example into `out` (`extra` options before `-o`). */
const bundlePair = (out: string, extra: readonly string[] = []): string[] => [
  "bundle",
  "model.mjs",
  "--export",
  "pair",
  "--spec",
  "f32[B; 3,3]",
  "--spec",
  "float32[B; 3]",
  ...extra,
  "-o",
  out,
];

// Child processes, started together (each pays for tsx's start-up); the tests check their results.
let runs: Record<string, Run>;
beforeAll(async () => {
  writeFileSync(join(dir, "model.mjs"), MODEL);
  const todo: Record<string, [string[], Record<string, string>?]> = {
    bundle: [bundlePair("pair.bundle.mjs")],
    dump: [["dump", "model.mjs", "--export", "scale", "--spec", "f32[B; 3]"]],
    dumpFuse: [["dump", "model.mjs", "-e", "scale", "-s", "f32[B; 3]", "--after", "fuse"]],
    badSpec: [["bundle", "model.mjs", "--export", "scale", "--spec", "f32[B; x]"]],
    noExport: [["dump", "model.mjs", "--export", "scal", "--spec", "f32[B; 3]"], { BATCHWISE_DEBUG: "1" }],
    badOption: [["dump", "model.mjs", "--export", "scale", "--spec", "f32[B; 3]", "--aftr", "fuse"]],
    help: [["--help"]],
    version: [["--version"]],
    bundleHelp: [["bundle", "--help"]],
    dumpWasm: [["dump", "model.mjs", "-e", "scale", "-s", "f32[B; 3]", "--backend", "wasm", "--kernels"]],
    bundleWasm: [bundlePair("pair-wasm.bundle.mjs", ["--backend", "wasm"])],
    badBackend: [["dump", "model.mjs", "-e", "scale", "-s", "f32[B; 3]", "--backend", "cuda"]],
  };
  const names = Object.keys(todo);
  const results = await Promise.all(names.map((n) => cli(...todo[n]!)));
  runs = Object.fromEntries(names.map((n, i) => [n, results[i]!]));
  // inspect reads what bundle wrote.
  runs["inspect"] = await cli(["inspect", "pair.bundle.mjs"]);
}, 120_000);

describe("batchwise CLI", () => {
  it("bundle: writes a bundle that loads and computes det and v * (1, 2, 3), and its .d.mts", async () => {
    const r = runs["bundle"]!;
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^wrote pair\.bundle\.mjs \(2 kernel\(s\), sha256 [0-9a-f]{64}\)\nwrote pair\.bundle\.d\.mts: \(x0: Tensor, x1: Tensor\) => \[Tensor, Tensor\]\n$/,
    );
    const decl = readFileSync(join(dir, "pair.bundle.d.mts"), "utf8");
    expect(decl).toContain("export declare const args: BundleArgs<[x0: Tensor, x1: Tensor]>;");
    expect(decl).toContain("export declare const results: BundleResults<[Tensor, Tensor]>;");
    await expectPairBundle(join(dir, "pair.bundle.mjs"));
  });

  it("dump: the IR as traced (the captured (1,2,3) an input) and the schedule after fuse", () => {
    expect(runs["dump"]!.code).toBe(0);
    expect(runs["dump"]!.stdout).toBe(
      [
        "func @scale(%x0: f32[b0; 3], %c0: f32[; 3]) -> (f32[b0; 3]) {",
        "  %0 = mul %x0, %c0 : f32[b0; 3]",
        "  %1 = const {dtype=float32, value=1} : f32[; ]",
        "  %2 = add %0, %1 : f32[b0; 3]",
        "  return %2",
        "}",
        "",
      ].join("\n"),
    );
    expect(runs["dumpFuse"]!.code).toBe(0);
    expect(runs["dumpFuse"]!.stdout).toBe(
      "schedule @scale: 1 kernels\n  kernel 0 (5 exprs, unrolled) reads %x0, %c0 -> %t0: f32[b0; 3]\n",
    );
  });

  it("inspect: the signature, the kernels and the SHA-256 bundleSha256 gives", async () => {
    const r = runs["inspect"]!;
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const sha = await bundleSha256(await importModule(join(dir, "pair.bundle.mjs")));
    expect(r.stdout).toContain("bundle pair.bundle.mjs: valid");
    expect(r.stdout).toContain(
      "function @pair\narguments (2):\n  x0: f32[b0; 3,3]\n  x1: f32[b0; 3]\nresults (2, returned as an array):\n  0: f32[b0; ]\n  1: f32[b0; 3]\n",
    );
    expect(r.stdout).toContain("captured constants: 1 (f32[; 3])\nkernels: 2 (and 0 view(s), 0 copy step(s))\n");
    expect(r.stdout).toMatch(
      / {2}kernel 0 \(step 0\): elementwise, .*; ships js\+wgsl\n {2}kernel 1 \(step 1\): elementwise, .*; ships js\+wgsl\n/,
    );
    expect(r.stdout).toContain(`sha256: ${sha}\n`);
  });

  it("inspect: a bundle that fails loadBundle's checks, or another pinned hash, exits 1 with the check's message", async () => {
    const text = readFileSync(join(dir, "pair.bundle.mjs"), "utf8");
    const edited = text.replace(/data: new Float32Array\(\[1, 2, 3\]\)/, "data: new Float32Array([1, 2, 4])");
    expect(edited).not.toBe(text);
    writeFileSync(join(dir, "edited.bundle.mjs"), edited);
    const [bad, pinned] = await Promise.all([
      cli(["inspect", "edited.bundle.mjs"]),
      cli(["inspect", "pair.bundle.mjs", "--sha256", "0".repeat(64)]),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toMatch(
      /^batchwise inspect: BundleError: loadBundle: the bundle's content does not match its recorded SHA-256 \(it was edited after it was written\)/,
    );
    expect(pinned.code).toBe(1);
    expect(pinned.stderr).toContain(`not the ${"0".repeat(64)} the caller pinned`);
  });

  it("errors: a bad spec and a missing export exit 1 with the message (a stack only under BATCHWISE_DEBUG), bad usage exits 2", () => {
    expect(runs["badSpec"]!.code).toBe(1);
    expect(runs["badSpec"]!.stderr).toBe(
      `batchwise bundle: TraceError: spec "f32[B; x]": base size "x" is not a non-negative integer (base shapes are static; batch dims go before the ';')\n`,
    );
    expect(existsSync(join(dir, "scale.bundle.mjs"))).toBe(false);
    expect(runs["noExport"]!.code).toBe(1);
    expect(runs["noExport"]!.stderr).toMatch(
      /^batchwise dump: model\.mjs has no export "scal" \(its function exports: pair, scale\)\n.*\n {4}at /,
    );
    expect(runs["badOption"]!.code).toBe(2);
    expect(runs["badOption"]!.stderr).toBe(`batchwise dump: Unknown option '--aftr'\nSee "batchwise dump --help".\n`);
    expect(runs["help"]!.code).toBe(0);
    expect(runs["help"]!.stdout).toMatch(/^Usage: batchwise <command> \[options\]\n/);
    expect(runs["help"]!.stdout).toContain('"batchwise --version" for the version');
  });

  it("--version prints the version in package.json", () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
    expect(runs["version"]).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
  });

  it("--help lists every dtype of the dtype table, and the IR's short names", () => {
    const r = runs["bundleHelp"]!;
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      "dtypes: float32 float64 int32 uint32 bool uint8 int8 uint16 int16 float16,\n" +
        "  or as the IR prints them: f32 f64 i32 u32 u8 i8 u16 i16 f16\n" +
        "  (float16 needs WebGPU with shader-f16).\n",
    );
    expect(r.stdout).toContain("--backend <js|webgpu|wasm>");
  });

  it("--backend wasm: dump prints WebAssembly kernels; bundle writes a bundle that computes det and v * (1, 2, 3)", async () => {
    const d = runs["dumpWasm"]!;
    expect(d.stderr).toBe("");
    expect(d.code).toBe(0);
    expect(d.stdout).toMatch(/^\/\/ WebAssembly kernel: \d+ bytes/);
    const b = runs["bundleWasm"]!;
    expect(b.stderr).toBe("");
    expect(b.code).toBe(0);
    expect(b.stdout).toMatch(/^wrote pair-wasm\.bundle\.mjs \(2 kernel\(s\), sha256 [0-9a-f]{64}\)\n/);
    const text = readFileSync(join(dir, "pair-wasm.bundle.mjs"), "utf8");
    expect(text).toContain(`export const traced = "wasm";`);
    await expectPairBundle(join(dir, "pair-wasm.bundle.mjs"));
    expect(runs["badBackend"]).toEqual({
      code: 2,
      stdout: "",
      stderr: `batchwise dump: --backend must be js, webgpu or wasm, got "cuda"\nSee "batchwise dump --help".\n`,
    });
  });
});

describe("dump --help", () => {
  it("lists every pass --after takes, from the pipeline's own table", async () => {
    const { PASS_NAMES } = await import("../../passes/pipeline.js");
    const r = await cli(["dump", "--help"]);
    for (const p of PASS_NAMES) expect(r.stdout).toContain(p);
    expect(r.stdout).toMatch(/narrow/);
  });
});
