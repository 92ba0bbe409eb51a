/**
 * Types as published: the `.d.ts` files of the packed tarball, as a consumer's
 * TypeScript sees them (`skipLibCheck` off, `strict`), type-check a consumer file
 * that calls every public function and method of each entry, under TypeScript 5.9
 * (this repository's) and TypeScript 7 (npm's `latest`), in `moduleResolution`
 * bundler, node16 and nodenext, with and without the DOM lib: zero errors.
 *
 * The list of what to call is not kept by hand. It is what runs: each entry
 * (`batchwise`, `batchwise/runtime`, `batchwise/distributed`) is imported from
 * the installed tarball in a fresh Node process, and every export is listed, with
 * every method, accessor and static of every exported class (up the prototype
 * chain, methods installed at load time included; the lean runtime's "needs the
 * compiler" stubs left out). The sources' own declarations (the TypeScript
 * compiler API on src/, this repository's TypeScript) say which of those are
 * `private`, `protected` or `@internal`, and which exports are types only. A
 * method that runs but is missing from the published declarations is then a
 * TS2339 error in the consumer file (as `x.sort()` was when the numerics
 * methods' declarations did not reach `dist/src/index.d.ts`).
 *
 * Each call passes arguments of the declared parameter types
 * (`f(...args(f))` with `args: (f: F) => Parameters<F>`): the member must exist,
 * be callable with its own signature and return a type the consumer's program can
 * name, which is what a consumer needs of the declarations; the values each call
 * computes are the other tests' business.
 *
 * Also here: every `declare module` augmentation that an entry's JS loads reaches
 * that entry's `.d.ts`; and bundles typed on the lean runtime —
 * `bundleTypes({ from: "batchwise/runtime" })` writes declarations that resolve
 * there, and the runtime's `loadBundle` is typed from them like the full one.
 *
 * TypeScript 7 is installed once per version into
 * node_modules/.cache/batchwise-ts7/<version> (as test/helpers/packed.ts caches
 * the tarball; not a devDependency, whose `tsc` bin would clash with
 * TypeScript 5.9's). Needs the npm registry the first time, as `npm ci` does.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, readFile, realpath, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onceUnderLock, ROOT, scratchApp } from "../helpers/packed.js";

const run = promisify(execFile);

/** The TypeScript 7 release tested (npm's `latest` when this was written). */
const TS7_VERSION = "7.0.2";
const TS59 = join(ROOT, "node_modules/typescript/bin/tsc");

/** The package's entries: specifier, the source file that is it, and whether it needs Node's types. */
const ENTRIES = [
  { spec: "batchwise", file: "main.ts", src: "src/index.ts", node: false },
  { spec: "batchwise/runtime", file: "runtime.ts", src: "src/runtime-entry.ts", node: false },
  // Distributed runs in Node (BullMQ, Redis): its declarations may use Node's globals (AbortSignal).
  { spec: "batchwise/distributed", file: "distributed.ts", src: "src/distributed/index.ts", node: true },
] as const;

/** TypeScript 7's `tsc` (a JS launcher of the native compiler), installed once into the cache. */
async function typescript7(): Promise<string> {
  const base = join(ROOT, "node_modules/.cache/batchwise-ts7");
  const target = join(base, TS7_VERSION);
  const tsc = join(target, "node_modules/typescript/bin/tsc");
  await mkdir(base, { recursive: true });
  await onceUnderLock(`${target}.lock`, tsc, async () => {
    const work = `${target}.partial-${process.pid}`;
    await rm(work, { recursive: true, force: true });
    await mkdir(work, { recursive: true });
    await writeFile(join(work, "package.json"), JSON.stringify({ name: "ts7", private: true }));
    await run(
      "npm",
      ["install", "--no-audit", "--no-fund", "--prefer-offline", "--no-save", `typescript@${TS7_VERSION}`],
      { cwd: work, maxBuffer: 16 * 1024 * 1024 },
    );
    await rename(work, target);
  });
  return tsc;
}

/** What an entry exports at run time, as the inventory script reports it. */
type Kind = "function" | "class" | "namespace" | "value";
interface RuntimeExport {
  readonly kind: Kind;
  /** A class's prototype members (own and inherited, up to the built-in prototypes) and statics. */
  readonly proto?: Record<string, "method" | "accessor" | "value" | "stub">;
  readonly statics?: Record<string, "method" | "accessor" | "value" | "stub">;
}

/** Run in the consumer project by Node: imports the entry and lists its exports and their members. */
const INVENTORY = `
const m = await import(process.argv[1]);
// The walk stops at the built-in classes (their prototypes for methods, themselves for statics): lib.es5 types them.
const classes = [Object, Function, Error, Array, Map, Set, Promise];
const builtins = new Set([...classes, ...classes.map((c) => c.prototype)]);
const isClass = (v) => typeof v === "function" && /^class[\\s{]/.test(Function.prototype.toString.call(v));
function members(obj) {
  const res = {};
  for (let o = obj; o && !builtins.has(o); o = Object.getPrototypeOf(o)) {
    for (const k of Object.getOwnPropertyNames(o)) {
      if (k === "constructor" || k in res) continue;
      const d = Object.getOwnPropertyDescriptor(o, k);
      res[k] = d.get || d.set ? "accessor" : typeof d.value === "function" ? (d.value.stub ? "stub" : "method") : "value";
    }
  }
  return res;
}
const out = {};
function walk(ns, prefix) {
  for (const k of Object.keys(ns).sort()) {
    const v = ns[k];
    const name = prefix + k;
    if (Object.prototype.toString.call(v) === "[object Module]") {
      out[name] = { kind: "namespace" };
      walk(v, name + ".");
    } else if (isClass(v)) {
      const statics = members(v);
      for (const s of ["length", "name", "prototype"]) delete statics[s];
      out[name] = { kind: "class", proto: members(v.prototype), statics };
    } else out[name] = { kind: typeof v === "function" ? "function" : "value" };
  }
}
walk(m, "");
console.log(JSON.stringify(out));
`;

async function inventory(dir: string, spec: string): Promise<Record<string, RuntimeExport>> {
  const r = await run(process.execPath, ["--input-type=module", "-e", INVENTORY, spec], {
    cwd: dir,
    maxBuffer: 16 * 1024 * 1024,
  });
  return JSON.parse(r.stdout) as Record<string, RuntimeExport>;
}

/** The sources' declarations: this repository's TypeScript on the entries' source files. */
class SourceApi {
  readonly program: ts.Program;
  readonly checker: ts.TypeChecker;

  constructor() {
    const parsed = ts.getParsedCommandLineOfConfigFile(
      join(ROOT, "tsconfig.json"),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => console.error(d.messageText) },
    );
    if (!parsed) throw new Error("types.test: cannot read tsconfig.json");
    this.program = ts.createProgram({
      rootNames: ENTRIES.map((e) => join(ROOT, e.src)),
      options: { ...parsed.options, noEmit: true },
    });
    this.checker = this.program.getTypeChecker();
  }

  private resolved(sym: ts.Symbol): ts.Symbol {
    return sym.flags & ts.SymbolFlags.Alias ? this.checker.getAliasedSymbol(sym) : sym;
  }

  /** The exports of an entry's source module. */
  exportsOf(src: string): ts.Symbol[] {
    const file = this.program.getSourceFile(join(ROOT, src));
    const mod = file && this.checker.getSymbolAtLocation(file);
    if (!mod) throw new Error(`types.test: no module symbol for ${src}`);
    return this.checker.getExportsOfModule(mod);
  }

  /** The names an entry exports as types only (interfaces, type aliases; no value). */
  typeOnlyExports(src: string): string[] {
    return this.exportsOf(src)
      .filter((s) => (this.resolved(s).flags & ts.SymbolFlags.Value) === 0)
      .map((s) => s.name)
      .sort();
  }

  /** The symbol at a dotted export path of an entry (`linalg.det`). */
  symbolAt(src: string, path: string): ts.Symbol | undefined {
    let syms = this.exportsOf(src);
    let found: ts.Symbol | undefined;
    for (const part of path.split(".")) {
      found = syms.find((s) => s.name === part);
      if (!found) return undefined;
      found = this.resolved(found);
      syms = found.flags & ts.SymbolFlags.Module ? this.checker.getExportsOfModule(found) : [];
    }
    return found;
  }

  private static hidden(decl: ts.Declaration): boolean {
    if (ts.getCombinedModifierFlags(decl) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) return true;
    if (ts.getJSDocTags(decl).some((t) => t.tagName.text === "internal")) return true;
    const name = ts.getNameOfDeclaration(decl);
    return name !== undefined && ts.isPrivateIdentifier(name);
  }

  /**
   * Whether a class member (by name) is declared public in the sources, hidden, or not declared at all;
   * "subclasses" for a static method that declares a `this` parameter (`static zeros<T>(this: PrimitiveClass<T>)`
   * of an abstract base, called on its concrete subclasses, whose statics list it too).
   */
  member(cls: ts.Symbol, name: string, isStatic: boolean): "public" | "hidden" | "undeclared" | "subclasses" {
    const type = isStatic ? this.checker.getTypeOfSymbol(cls) : this.checker.getDeclaredTypeOfSymbol(cls);
    const prop = this.checker.getPropertyOfType(type, name);
    if (!prop) return "undeclared";
    const decls = prop.declarations ?? [];
    if (decls.some((d) => SourceApi.hidden(d))) return "hidden";
    const thisParam = (d: ts.Declaration) =>
      ts.isMethodDeclaration(d) && d.parameters[0] !== undefined && d.parameters[0].name.getText() === "this";
    if (isStatic && !this.constructible(cls) && decls.some(thisParam)) return "subclasses";
    return "public";
  }

  /** Whether a consumer may call `new C(...)`: not abstract, no private or protected constructor. */
  constructible(cls: ts.Symbol): boolean {
    const decl = cls.valueDeclaration;
    if (!decl || !ts.isClassDeclaration(decl)) return false;
    if (ts.getCombinedModifierFlags(decl) & ts.ModifierFlags.Abstract) return false;
    const ctors = this.checker.getSignaturesOfType(this.checker.getTypeOfSymbol(cls), ts.SignatureKind.Construct);
    return ctors.length > 0 && ctors.every((s) => !s.declaration || !SourceApi.hidden(s.declaration as ts.Declaration));
  }
}

const IDENT = /^[A-Za-z_$][\w$]*$/;
const access = (obj: string, name: string) => (IDENT.test(name) ? `${obj}.${name}` : `${obj}[${JSON.stringify(name)}]`);

/** One generated consumer file and what it references. */
interface Consumer {
  readonly text: string;
  /** Every member the file references, as `Class#method`, `Class.static`, `new Class`, `fn`, `type Name`. */
  readonly members: string[];
  /** Members that run but that the sources declare nowhere (should be none). */
  readonly undeclared: string[];
}

/**
 * A consumer file calling every public function, constructor, method and accessor of
 * an entry that runs, and naming every type it exports.
 */
function consumerFile(spec: string, src: string, runtime: Record<string, RuntimeExport>, api: SourceApi): Consumer {
  const members: string[] = [];
  const undeclared: string[] = [];
  const lines = [
    `// Generated by test/package/types.test.ts: every public function and method of "${spec}" that runs.`,
    `import * as api from ${JSON.stringify(spec)};`,
    `declare function args<F extends (...a: any) => any>(f: F): Parameters<F>;`,
    `declare function ctorArgs<C extends abstract new (...a: any) => any>(c: C): ConstructorParameters<C>;`,
    `declare function instance<C extends { prototype: unknown }>(c: C): C["prototype"];`,
  ];
  const typeNames = api.typeOnlyExports(src);
  if (typeNames.length > 0) lines.push(`export type { ${typeNames.join(", ")} } from ${JSON.stringify(spec)};`);
  members.push(...typeNames.map((n) => `type ${n}`));
  let n = 0;
  for (const [path, e] of Object.entries(runtime)) {
    const ref = `api.${path}`;
    if (e.kind === "namespace") continue;
    if (e.kind === "function") {
      lines.push(`${ref}(...args(${ref}));`);
      members.push(path);
    } else if (e.kind === "value") {
      lines.push(`void ${ref};`);
      members.push(path);
    } else {
      const cls = api.symbolAt(src, path);
      if (!cls) throw new Error(`types.test: ${spec} exports class ${path} at run time; the sources do not`);
      const v = `i${n++}`;
      lines.push(`const ${v} = instance(${ref});`);
      if (api.constructible(cls)) {
        lines.push(`new ${ref}(...ctorArgs(${ref}));`);
        members.push(`new ${path}`);
      }
      const each = (table: RuntimeExport["proto"], isStatic: boolean) => {
        for (const [name, kind] of Object.entries(table ?? {})) {
          if (kind === "stub") continue;
          const label = `${path}${isStatic ? "." : "#"}${name}`;
          const visibility = api.member(cls, name, isStatic);
          if (visibility === "hidden" || visibility === "subclasses") continue;
          if (visibility === "undeclared") undeclared.push(label);
          const target = access(isStatic ? ref : v, name);
          lines.push(kind === "method" ? `${target}(...args(${target}));` : `void ${target};`);
          members.push(label);
        }
      };
      each(e.proto, false);
      each(e.statics, true);
    }
  }
  return { text: `${lines.join("\n")}\n`, members, undeclared };
}

/** Bundles written by the packed full entry, their declarations for either entry, and a consumer of each. */
const WRITE_BUNDLES = `
import { writeFileSync } from "node:fs";
import { dictSpec, jaggedSpec, spec, tensor, trace } from "batchwise";
const w = tensor([1, 2, 3]);
const mixed = trace((m, x) => [m.mul(w), x.mul(2), x.sum()], [spec("float32", ["B"], [3]), jaggedSpec("float32", [2])], { name: "mixed" });
const dict = trace((td) => td.get("a"), [dictSpec(["B"], { a: spec("int32", ["B"], [2]) })], { name: "dict" });
writeFileSync("mixed.bundle.mjs", mixed.bundle());
writeFileSync("mixed.bundle.d.mts", mixed.bundleTypes({ from: "batchwise/runtime" }));
writeFileSync("dict.bundle.mjs", dict.bundle());
writeFileSync("dict.bundle.d.mts", dict.bundleTypes({ from: "batchwise/runtime" }));
writeFileSync("full.bundle.mjs", mixed.bundle());
writeFileSync("full.bundle.d.mts", mixed.bundleTypes());
`;

const BUNDLES_TS = `// Typed bundles on the lean runtime (declarations from bundleTypes({ from: "batchwise/runtime" })) and on the full entry.
import { loadBundle, type BundleFunction, type JaggedTensor, type Tensor, type TensorDict } from "batchwise/runtime";
import { loadBundle as loadFull } from "batchwise";
import * as mixed from "./mixed.bundle.mjs";
import * as dict from "./dict.bundle.mjs";
import * as full from "./full.bundle.mjs";
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
declare const m: Tensor;
declare const x: JaggedTensor;
declare const td: TensorDict;
declare const untyped: import("batchwise/runtime").BundleModule;
const f = await loadBundle(mixed, { sha256: mixed.sha256 });
export const exact: Equal<typeof f, BundleFunction<[x0: Tensor, x1: JaggedTensor], [Tensor, JaggedTensor, Tensor]>> = true;
export const out: [Tensor, JaggedTensor, Tensor] = f(m, x);
export const later: Promise<[Tensor, JaggedTensor, Tensor]> = f.callAsync(m, x);
// @ts-expect-error the second argument is a JaggedTensor
f(m, m);
// @ts-expect-error the first result is a Tensor
export const wrong: JaggedTensor = f(m, x)[0];
const g = await loadBundle(dict, { sha256: dict.sha256 });
export const one: Equal<typeof g, BundleFunction<[x0: TensorDict], Tensor>> = true;
export const y: Tensor = g(td);
const h = await loadBundle<(a: Tensor) => Tensor>(untyped, { sha256: "" });
export const fromFn: Equal<typeof h, BundleFunction<[a: Tensor], Tensor>> = true;
const p = await loadBundle(untyped, { sha256: "" });
export const plain: Equal<typeof p, BundleFunction> = true;
const k = await loadFull(full);
export const sameOnFull: Equal<typeof k, BundleFunction<[x0: Tensor, x1: JaggedTensor], [Tensor, JaggedTensor, Tensor]>> = true;
`;

/**
 * The WebGPU types as the consumer's program declares them (TypeScript 7's DOM and WebWorker libs;
 * `@webgpu/types` where the consumer adds it): the backend's device is that program's `GPUDevice`,
 * and its `GPU` is what `initWebGPU` takes.
 */
const WEBGPU_DECLARED_TS = `import { initWebGPU, type WebGPUBackend } from "batchwise";
declare const backend: WebGPUBackend;
declare const gpu: GPU;
export const buffer: GPUBuffer = backend.device.createBuffer({ size: 16, usage: 128 | 8 });
export const device: GPUDevice = backend.device;
export const later: Promise<WebGPUBackend> = initWebGPU({ gpu, powerPreference: "low-power" });
`;

/** Where the program declares no WebGPU: the small structural types of batchwise's own declarations. */
const WEBGPU_UNDECLARED_TS = `import { initWebGPU, type MinimalGPU, type MinimalGPUDevice, type WebGPUBackend } from "batchwise";
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
declare const backend: WebGPUBackend;
export const device: Equal<typeof backend.device, MinimalGPUDevice> = true;
export const label: string = backend.device.label;
declare const gpu: MinimalGPU;
export const later: Promise<WebGPUBackend> = initWebGPU({ gpu, powerPreference: "high-performance" });
`;

/** A type-check configuration of the consumer project. */
interface Config {
  readonly ts: "5.9" | "7";
  readonly resolution: "bundler" | "node16" | "nodenext";
  readonly lib: "DOM" | "none" | "WebWorker";
  /** The consumer adds `@webgpu/types` to its `types`. */
  readonly webgpuTypes?: boolean;
}

const MATRIX: Config[] = [
  ...(["5.9", "7"] as const).flatMap((tsv) => [
    ...(["bundler", "node16", "nodenext"] as const).flatMap((resolution) =>
      (["DOM", "none"] as const).map((lib) => ({ ts: tsv, resolution, lib })),
    ),
    // A web worker: TypeScript 7's WebWorker lib declares WebGPU as its DOM lib does.
    { ts: tsv, resolution: "bundler" as const, lib: "WebWorker" as const },
  ]),
  // TypeScript 5.9's DOM lib has no WebGPU; a browser program adds @webgpu/types itself.
  { ts: "5.9", resolution: "bundler", lib: "DOM", webgpuTypes: true },
];

/** The program declares WebGPU's globals. */
const declaresWebGPU = (c: Config) => c.webgpuTypes === true || (c.ts === "7" && c.lib !== "none");

const label = (c: Config) =>
  `TS ${c.ts}, ${c.resolution}, ${c.lib === "none" ? "no DOM lib" : `${c.lib} lib`}${c.webgpuTypes ? " + @webgpu/types" : ""}`;
const configName = (c: Config) =>
  `tsconfig.ts${c.ts.replace(".", "")}-${c.resolution}-${c.lib}${c.webgpuTypes ? "-webgpu" : ""}.json`;

function tsconfig(c: Config): string {
  const module = c.resolution === "bundler" ? "ESNext" : c.resolution === "node16" ? "Node16" : "NodeNext";
  // bundler: a browser or worker program (no Node types; without DOM, nothing but ES2022);
  // node16/nodenext: a Node program (Node's types; the DOM lib as SSR or Electron code has it).
  const node = c.resolution !== "bundler";
  const lib = c.lib === "none" ? ["ES2022"] : ["ES2022", c.lib];
  return JSON.stringify({
    compilerOptions: {
      target: "ES2022",
      module,
      moduleResolution: c.resolution === "bundler" ? "Bundler" : module,
      lib,
      types: [...(node ? ["node"] : []), ...(c.webgpuTypes ? ["@webgpu/types"] : [])],
      strict: true,
      skipLibCheck: false,
      noEmit: true,
    },
    files: [
      ...ENTRIES.filter((e) => node || !e.node).map((e) => e.file),
      "bundles.ts",
      declaresWebGPU(c) ? "webgpu-declared.ts" : "webgpu-undeclared.ts",
    ],
  });
}

/** tsc's output for a configuration ("" when it finds no error). */
async function check(dir: string, tsc: string, c: Config): Promise<string> {
  try {
    await run(process.execPath, [tsc, "-p", configName(c), "--pretty", "false"], {
      cwd: dir,
      maxBuffer: 64 * 1024 * 1024,
    });
    return "";
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    return `${err.stdout ?? ""}${err.stderr ?? ""}` || err.message;
  }
}

/** Relative import specifiers of a JS or .d.ts file, static imports and re-exports only (not `import()`). */
function staticImports(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, false);
  const out: string[] = [];
  for (const st of sf.statements) {
    const spec =
      (ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) &&
      st.moduleSpecifier &&
      ts.isStringLiteral(st.moduleSpecifier)
        ? st.moduleSpecifier.text
        : undefined;
    if (spec?.startsWith(".")) out.push(resolve(dirname(file), spec));
  }
  return out;
}

/** The files reachable from `entry` through static relative imports (`.js` specifiers read as `ext` files). */
async function reachable(entry: string, ext: ".js" | ".d.ts"): Promise<Set<string>> {
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length > 0) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    const text = await readFile(f, "utf8");
    for (const spec of staticImports(f, text)) todo.push(spec.replace(/\.js$/, ext));
  }
  return seen;
}

/** The `.d.ts` files of the package that augment a module (`declare module "./x.js" { … }`). */
function augments(text: string): boolean {
  const sf = ts.createSourceFile("x.d.ts", text, ts.ScriptTarget.ES2022, false);
  return sf.statements.some((st) => ts.isModuleDeclaration(st) && ts.isStringLiteral(st.name));
}

let dir = "";
let pkg = "";
let ts7 = "";
const consumers = new Map<string, Consumer>();

beforeAll(async () => {
  const [app, tsc7] = await Promise.all([scratchApp("batchwise-types-"), typescript7()]);
  dir = app.dir;
  ts7 = tsc7;
  // A copy of the installed packages instead of the link: the shared install is replaced (and the old one
  // removed) as soon as a test run elsewhere in this checkout packs changed sources, which may be mid-run.
  const shared = await realpath(join(dir, "node_modules"));
  await rm(join(dir, "node_modules"));
  await cp(shared, join(dir, "node_modules"), { recursive: true, verbatimSymlinks: true });
  pkg = join(dir, "node_modules/batchwise");
  const api = new SourceApi();
  for (const e of ENTRIES) {
    const c = consumerFile(e.spec, e.src, await inventory(dir, e.spec), api);
    consumers.set(e.spec, c);
    await writeFile(join(dir, e.file), c.text);
  }
  await writeFile(join(dir, "write-bundles.mjs"), WRITE_BUNDLES);
  await run(process.execPath, ["write-bundles.mjs"], { cwd: dir });
  await writeFile(join(dir, "bundles.ts"), BUNDLES_TS);
  await writeFile(join(dir, "webgpu-declared.ts"), WEBGPU_DECLARED_TS);
  await writeFile(join(dir, "webgpu-undeclared.ts"), WEBGPU_UNDECLARED_TS);
  // For the configuration that adds @webgpu/types (this repository's pinned version; not a dependency of the package).
  await cp(join(ROOT, "node_modules/@webgpu/types"), join(dir, "node_modules/@webgpu/types"), { recursive: true });
  for (const c of MATRIX) await writeFile(join(dir, configName(c)), tsconfig(c));
}, 600_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the published declarations, as consumers type-check them", () => {
  it("the consumer files call every function and method that runs, each declared in the sources", () => {
    const counts = Object.fromEntries([...consumers].map(([spec, c]) => [spec, c.members.length]));
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    console.log(`types.test: members type-checked per entry ${JSON.stringify(counts)}, ${total} in all`);
    const main = consumers.get("batchwise")!;
    // The list is what runs: methods installed at load time are in it (numerics, comparisons, TensorDict's).
    for (const m of ["Tensor#sort", "Tensor#topk", "Tensor#bitwiseAnd", "Tensor#allClose", "TensorDict#setAt"]) {
      expect(main.members).toContain(m);
    }
    expect(main.members).toContain("linalg.det");
    expect(main.members).toContain("type TensorOptions");
    // The lean runtime's Tensor has no compiler methods (stubs that throw) and no numerics methods.
    const lean = consumers.get("batchwise/runtime")!;
    expect(lean.members).not.toContain("Tensor#add");
    expect(lean.members).not.toContain("Tensor#sort");
    expect(lean.members).toContain("loadBundle");
    expect(lean.members).toContain("type BundleArgs");
    for (const c of consumers.values()) {
      expect(c.undeclared).toEqual([]);
      // Every member listed appears in the file it type-checks.
      for (const m of c.members) {
        const name = m
          .replace(/^(type |new )/, "")
          .split(/[#.]/)
          .pop()!;
        expect(c.text).toContain(name);
      }
    }
    expect(total).toBeGreaterThan(1000);
  });

  it("every declaration augmentation an entry's JS loads reaches that entry's .d.ts", async () => {
    const exportsMap = (
      JSON.parse(await readFile(join(pkg, "package.json"), "utf8")) as {
        exports: Record<string, { types?: string; default?: string } | string>;
      }
    ).exports;
    const missing: string[] = [];
    let checked = 0;
    for (const e of ENTRIES) {
      const key = e.spec === "batchwise" ? "." : `./${e.spec.slice("batchwise/".length)}`;
      const target = exportsMap[key] as { types: string; default: string };
      const js = await reachable(join(pkg, target.default), ".js");
      const dts = await reachable(join(pkg, target.types), ".d.ts");
      for (const f of js) {
        const d = f.replace(/\.js$/, ".d.ts");
        if (!existsSync(d) || !augments(await readFile(d, "utf8"))) continue;
        checked++;
        if (!dts.has(d)) missing.push(`${e.spec}: ${relative(pkg, d)}`);
      }
    }
    expect(missing).toEqual([]);
    expect(checked).toBeGreaterThanOrEqual(4); // tensor-ops, tensor-api, numerics/methods, tensordict/api (full entry)
  });

  it("bundleTypes({ from: 'batchwise/runtime' }) imports only what batchwise/runtime exports", async () => {
    const d = await readFile(join(dir, "mixed.bundle.d.mts"), "utf8");
    expect(d).toContain(
      `import type { BundleArgs, BundleModule, BundleResults, Tensor, JaggedTensor } from "batchwise/runtime";`,
    );
  });

  it.each(MATRIX.map((c) => [label(c), c] as const))(
    "%s: zero errors with skipLibCheck off",
    async (_, c) => {
      const out = await check(dir, c.ts === "7" ? ts7 : TS59, c);
      expect(out, label(c)).toBe("");
    },
    300_000,
  );
});
