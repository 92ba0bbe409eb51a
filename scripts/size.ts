/**
 * Bundle sizes of two typical pages, as a browser application would ship them:
 * esbuild, bundle + minify + code splitting, platform browser, format esm, from
 * the TypeScript sources of the package's entries (`batchwise` is src/index.ts,
 * `batchwise/runtime` is src/runtime-entry.ts).
 *
 *   jit page      uses jit + tensor from `batchwise`
 *   runtime page  only loads and runs a bundle on JS, from `batchwise/runtime`
 *   runtime+webgpu the same on WebGPU (reported, not budgeted): the WebGPU backend
 *                 plans launches and writes the combine shaders of tree reductions
 *                 when it loads a kernel, so it imports codegen/wgsl*.ts (the WGSL
 *                 generator comes along, as it shares a module with the planner)
 *
 * A page's size is what it loads up front: its entry chunk and the chunks that
 * imports statically. Code behind a dynamic `import()` is a lazy chunk, fetched
 * only when that code runs (in the runtime page: the zod schema that explains a
 * malformed bundle, and the SHA-256 fallback for pages without WebCrypto); lazy
 * chunks are reported on their own line.
 *
 * Each page is also built by rolldown, the bundler of Vite 8 (minify, code
 * splitting, the package's `sideEffects` as Vite applies it): esbuild keeps a
 * module's top-level statements whenever anything is imported from it, rolldown
 * only when the module itself is used or listed in `sideEffects`, so the two
 * differ where an installing module is reached through re-exports (the jit page
 * without numerics and the Tensor API under the old `sideEffects`). Reported,
 * not budgeted.
 *
 * Prints raw and gzip sizes (node:zlib, level 9, per chunk) and the largest
 * inputs of each page. `npm run size -- --check` also fails (exit code 1) when a
 * page is over its budget or the runtime page contains the tracer, the passes or
 * the code generators. `sizes()` is what test/runtime/size.test.ts asserts on.
 */
import { build, type Metafile } from "esbuild";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { dirname, resolve } from "node:path";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

export interface PageSize {
  readonly name: string;
  /** Minified bytes of what the page loads up front: its entry chunk and the chunks that imports statically. */
  readonly raw: number;
  /** The same, gzip (level 9), each chunk on its own as a server sends it. */
  readonly gzip: number;
  /** The minified page (its up-front chunks). */
  readonly code: string;
  /** Bytes in the up-front chunks per input file (relative to the repository root or node_modules). */
  readonly inputs: ReadonlyMap<string, number>;
  /** What the `inputs` bytes are, where they are not minified bytes in the output. */
  readonly inputsNote?: string;
  /**
   * Chunks behind a dynamic `import()`, loaded only when that code runs (the
   * SHA-256 fallback where WebCrypto is missing, the bundle schema that explains
   * a malformed module): minified and gzip bytes, and their input files.
   */
  readonly lazy: readonly { readonly raw: number; readonly gzip: number; readonly inputs: readonly string[] }[];
}

/**
 * Budgets, min+gzip bytes. The runtime page keeps the packaging issue's 25 KB. The jit
 * page had 60 KB there; it was raised to 70 KB when index lists, functional updates,
 * the narrow dtypes and the looped routines (with their WGSL lowering, which the
 * synchronous `f.bundle()` ships) came into the full entry, and to 74 KB when the tensor
 * display, errors naming the called function, linalg's failure signal and the Jacobians'
 * coupling check did: deliberate changes, see bench/RESULTS.md's sizes table.
 */
export const BUDGET = { jit: 74 * 1024, runtime: 27.5 * 1024 } as const;

export const PAGES = {
  jit: `import { jit, tensor } from "./src/index.ts";
const f = jit((x) => x.mul(2).add(1).sum(-1));
console.log(f(tensor([[1, 2, 3]], { batchDim: 1 })).dataSync());`,
  runtime: `import { loadBundle, tensor } from "./src/runtime-entry.ts";
export async function run(mod, sha256) {
  const f = await loadBundle(mod, { sha256 });
  return f(tensor([[1, 2, 3]], { batchDim: 1 })).dataSync();
}`,
  "runtime+webgpu": `import { initWebGPU, loadBundle, tensor } from "./src/runtime-entry.ts";
export async function run(mod, sha256) {
  await initWebGPU();
  const f = await loadBundle(mod, { sha256 });
  return f.callAsync(tensor([[1, 2, 3]], { batchDim: 1 }));
}`,
} as const;

/**
 * Builds a page as a browser application ships it: code splitting on, so that a
 * dynamic `import()` becomes a chunk fetched only when it runs.
 */
export async function page(name: string, contents: string): Promise<PageSize> {
  const entry = `${name}-page.ts`;
  const r = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    splitting: true,
    outdir: "out",
    platform: "browser",
    format: "esm",
    write: false,
    metafile: true,
    logLevel: "silent",
    plugins: [
      {
        name: "page",
        setup(b) {
          b.onResolve({ filter: /-page\.ts$/ }, (a) => ({ path: a.path, namespace: "page" }));
          b.onLoad({ filter: /.*/, namespace: "page" }, () => ({ contents, loader: "ts", resolveDir: ROOT }));
        },
      },
    ],
  });
  const meta: Metafile = r.metafile;
  const files = new Map(r.outputFiles.map((f) => [f.path.slice(f.path.lastIndexOf("/out/") + 1), f.contents]));
  const main = Object.keys(meta.outputs).find((o) => meta.outputs[o]!.entryPoint !== undefined)!;
  // The up-front chunks: the entry and, transitively, what it imports statically.
  const upFront = new Set<string>();
  const visit = (o: string) => {
    if (upFront.has(o)) return;
    upFront.add(o);
    for (const i of meta.outputs[o]!.imports) if (i.kind === "import-statement") visit(i.path);
  };
  visit(main);
  const inputs = new Map<string, number>();
  let raw = 0;
  let gzip = 0;
  const code: string[] = [];
  const lazy: { raw: number; gzip: number; inputs: string[] }[] = [];
  for (const [o, out] of Object.entries(meta.outputs)) {
    if (o.endsWith(".map")) continue;
    const bytes = files.get(o)!;
    const z = gzipSync(bytes, { level: 9 }).length;
    if (!upFront.has(o)) {
      lazy.push({ raw: bytes.length, gzip: z, inputs: Object.keys(out.inputs) });
      continue;
    }
    raw += bytes.length;
    gzip += z;
    code.push(new TextDecoder().decode(bytes));
    for (const [file, { bytesInOutput }] of Object.entries(out.inputs))
      inputs.set(file.replace(/^page:/, ""), (inputs.get(file) ?? 0) + bytesInOutput);
  }
  return { name, raw, gzip, code: code.join("\n"), inputs, lazy };
}

/** The same page built by rolldown (Vite 8's bundler): minified, code splitting, browser platform, ESM. */
export async function rolldownPage(name: string, contents: string): Promise<PageSize> {
  const { rolldown } = await import("rolldown");
  const entry = `\0${name}-page.ts`;
  const bundle = await rolldown({
    input: entry,
    cwd: ROOT,
    platform: "browser",
    logLevel: "silent",
    plugins: [
      {
        name: "page",
        resolveId: (id) => (id === entry ? id : null),
        load: (id) => (id === entry ? { code: contents, moduleType: "ts" } : null),
      },
    ],
  });
  const out = await bundle.generate({ format: "esm", minify: true, dir: "out" });
  await bundle.close();
  const chunks = new Map<string, (typeof out.output)[number]>(out.output.map((c) => [c.fileName, c]));
  const main = out.output.find((c) => c.type === "chunk" && c.isEntry)!;
  const upFront = new Set<string>();
  const visit = (f: string) => {
    const c = chunks.get(f);
    if (upFront.has(f) || c === undefined || c.type !== "chunk") return;
    upFront.add(f);
    for (const i of c.imports) visit(i);
  };
  visit(main.fileName);
  const inputs = new Map<string, number>();
  let raw = 0;
  let gzip = 0;
  const code: string[] = [];
  const lazy: { raw: number; gzip: number; inputs: string[] }[] = [];
  const rel = (id: string) => (id.startsWith(`${ROOT}/`) ? id.slice(ROOT.length + 1) : id).replace(/^\0/, "");
  for (const c of out.output) {
    if (c.type !== "chunk") continue;
    const bytes = new TextEncoder().encode(c.code);
    const z = gzipSync(bytes, { level: 9 }).length;
    const ids = Object.entries(c.modules).filter(([, m]) => m.renderedLength > 0);
    if (!upFront.has(c.fileName)) {
      lazy.push({ raw: bytes.length, gzip: z, inputs: ids.map(([id]) => rel(id)) });
      continue;
    }
    raw += bytes.length;
    gzip += z;
    code.push(c.code);
    for (const [id, m] of ids) inputs.set(rel(id), (inputs.get(rel(id)) ?? 0) + m.renderedLength);
  }
  const inputsNote = "per input: rolldown's rendered bytes, before minification";
  return { name: `${name} (rolldown)`, raw, gzip, code: code.join("\n"), inputs, inputsNote, lazy };
}

export async function sizes(): Promise<{ jit: PageSize; runtime: PageSize; runtimeWebGPU: PageSize }> {
  return {
    jit: await page("jit", PAGES.jit),
    runtime: await page("runtime", PAGES.runtime),
    runtimeWebGPU: await page("runtime+webgpu", PAGES["runtime+webgpu"]),
  };
}

/** Input files of a page that belong to the compiler: the passes, the code generators, the tracer (jit) and its installer. */
export function compilerInputs(p: PageSize): string[] {
  return [...p.inputs.keys()].filter(
    (f) => /^(passes|codegen)\//.test(f) || /^src\/(jit|compiler)\.ts$/.test(f) || f === "runtime/js.ts",
  );
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;

function report(p: PageSize): string {
  const groups = new Map<string, number>();
  for (const [file, n] of p.inputs) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
    const key =
      m !== null
        ? m[1]!
        : file
            .split("/")
            .slice(0, file.startsWith("src/") && file.split("/").length > 2 ? 2 : 1)
            .join("/");
    groups.set(key, (groups.get(key) ?? 0) + n);
  }
  const top = [...groups].sort((a, b) => b[1] - a[1]).slice(0, 10);
  const lazy = p.lazy.map((c) => {
    const what = [...new Set(c.inputs.map((f) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f)?.[1] ?? f))].join(", ");
    return `  lazy chunk (loaded only when its code runs): ${kb(c.raw)} minified, ${kb(c.gzip)} gzip: ${what || "re-exports of code the page already has"}`;
  });
  return [
    `${p.name} page: ${kb(p.raw)} minified, ${kb(p.gzip)} gzip${p.inputsNote === undefined ? "" : ` (${p.inputsNote})`}`,
    ...top.map(([k, n]) => `  ${kb(n).padStart(9)}  ${k}`),
    ...lazy,
  ].join("\n");
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const s = await sizes();
  console.log(report(s.jit));
  console.log(report(s.runtime));
  console.log(report(s.runtimeWebGPU));
  for (const [name, contents] of Object.entries(PAGES)) console.log(report(await rolldownPage(name, contents)));
  if (process.argv.includes("--check")) {
    const problems: string[] = [];
    if (s.jit.gzip > BUDGET.jit) problems.push(`jit page ${kb(s.jit.gzip)} gzip > ${kb(BUDGET.jit)}`);
    if (s.runtime.gzip > BUDGET.runtime)
      problems.push(`runtime page ${kb(s.runtime.gzip)} gzip > ${kb(BUDGET.runtime)}`);
    const bad = compilerInputs(s.runtime);
    if (bad.length > 0) problems.push(`runtime page includes compiler files: ${bad.join(", ")}`);
    for (const p of problems) console.error(p);
    if (problems.length > 0) process.exit(1);
  }
}
