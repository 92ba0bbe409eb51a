/**
 * The `batchwise` command line (see `usage` below and the README):
 * - `batchwise bundle <file> --export <name> --spec <spec>... [-o <out.mjs>]`
 *   traces an export of an ES module from specs and writes its bundle and the
 *   bundle's TypeScript declarations;
 * - `batchwise dump <file> --export <name> --spec <spec>... [--after <pass>] [--kernels] [--dot]`
 *   prints the IR after a pass, the generated kernels, or Graphviz DOT;
 * - `batchwise inspect <bundle.mjs> [--sha256 <hex>]` validates a bundle with
 *   loadBundle's checks and prints its signature, kernels and SHA-256.
 * - `batchwise worker --redis <url> [--queue q] [--concurrency n] [--backend js|wasm] [--threads n]` runs a
 *   batchwise/distributed worker until SIGINT or SIGTERM;
 * - `batchwise --version` prints the installed package's version.
 *
 * Exit codes: 0 success; 1 a user error (a bad spec, a missing export, a trace
 * that fails, a bundle that fails its checks: the error's message, with its stack
 * only when BATCHWISE_DEBUG is set); 2 bad usage (unknown command or option,
 * missing argument).
 *
 * A `.ts` module is imported only when the CLI runs under a TypeScript loader
 * (`npx tsx node_modules/batchwise/dist/src/cli.js bundle f.ts ...`); plain
 * Node imports `.js`/`.mjs`.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs, type ParseArgsConfig } from "node:util";
import { DTYPES, DTYPE_SHORT } from "../../ir/dtype.js";
import { BatchwiseError } from "../../ir/errors.js";
import { parseGraph } from "../../ir/parse.js";
import { PASS_NAMES } from "../../passes/pipeline.js";
import type { Kernel } from "../../ir/kernel.js";
import { fmtType } from "../../ir/types.js";
import { KERNEL_TARGETS, type Backend } from "../../runtime/backend.js";
import {
  BACKEND_NAMES,
  CPU_BACKENDS,
  isBackendName,
  listBackendNames,
  type BackendName,
} from "../../runtime/backend-name.js";
import { bundleSha256, describeLayout, loadBundle, type BundleModule } from "../bundle.js";
import { getJsBackend } from "../backend.js";
import { trace, type JitFunction, type JitOptions } from "../jit.js";
import type { JitArg } from "../args.js";
import { parseSpec } from "./spec.js";

/** Where the CLI writes (the process's streams, or a test's buffers). */
export interface CliIO {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Bad usage: exit code 2, with a pointer to the command's help. */
class UsageError extends Error {}
/** A user error outside the library's own errors (a missing file or export): exit code 1. */
class CliError extends Error {}

/** The dtypes as specs take them: the dtype table's names, and the IR's short names that differ. */
const DTYPE_HELP = `dtypes: ${DTYPES.join(" ")},
  or as the IR prints them: ${DTYPES.filter((d) => DTYPE_SHORT[d] !== d)
    .map((d) => DTYPE_SHORT[d])
    .join(" ")}${DTYPES.includes("float16") ? "\n  (float16 needs WebGPU with shader-f16)" : ""}.`;

const SPEC_HELP = `Specs: <dtype>[<batch labels>; <base shape>], one --spec per argument, in order:
  "float32[B; 3,3]"   a (B; 3,3) float32 tensor
  "f32[B,N; 3]"       two batch dims (only their number matters; sizes stay run-time)
  "int32[; 4]"        no batch dims
  "f32[B, ~N; 3]"     a jagged tensor: values (T; 3) and int32 offsets
${DTYPE_HELP}`;

/**
 * How bundle and dump bring up each backend `--backend` takes (every `BackendName`: a new
 * backend fails tsc here until it has an entry), and release it afterwards.
 */
const TRACE_BACKENDS: {
  readonly [K in BackendName]: () => Promise<{ readonly backend: Backend; readonly release: () => void }>;
} = {
  js: async () => ({ backend: getJsBackend(), release: () => undefined }),
  webgpu: async () => {
    const { initWebGPU } = await import("../webgpu.js");
    const gpu = await initWebGPU({ select: false });
    return { backend: gpu, release: () => gpu.destroy() };
  },
  // One thread: tracing and bundling run no large kernels; no worker threads to stop afterwards.
  wasm: async () => {
    const { initWasm } = await import("../wasm.js");
    return { backend: await initWasm({ select: false, threads: 1 }), release: () => undefined };
  },
};

/** The backends `worker --backend` takes: those whose kernels run in a Node process without a GPU. */
const WORKER_BACKENDS = CPU_BACKENDS;

const TRACE_OPTIONS_HELP = `  --export, -e <name>   the export to trace (a function of tensors; "default" for the default export)
  --spec, -s <spec>     an argument's spec (repeat, one per argument)
  --backend <${BACKEND_NAMES.join("|")}>  the backend to trace and fuse for (default js; webgpu needs the webgpu package)
  --float32 <relaxed|exact>  float32 rounding of fused JS kernels (default relaxed)`;

const USAGE: Record<string, string> = {
  main: `Usage: batchwise <command> [options]

Commands:
  bundle <file>      trace an export from specs and write its bundle (.mjs) and types (.d.mts)
  dump <file>        print the IR after a pass, the kernels, or Graphviz DOT of a traced export
  inspect <bundle>   validate a bundle and print its signature, kernels and SHA-256
  worker             run shards of sharded calls from Redis (batchwise/distributed)

Run "batchwise <command> --help" for a command's options, "batchwise --version" for the version.
<file> is an ES module (.js, .mjs); a .ts file needs a TypeScript loader:
  npx tsx node_modules/batchwise/dist/src/cli.js bundle model.ts ...
Exit codes: 0 success, 1 an error in the input (spec, module, trace, bundle), 2 bad usage.
Set BATCHWISE_DEBUG=1 for stack traces.`,
  bundle: `Usage: batchwise bundle <file> --export <name> --spec <spec>... [-o <out.mjs>]

Traces the export from the specs (with no data) and writes the bundle, an ES
module to load with loadBundle, and its TypeScript declarations next to it
(out.d.mts for out.mjs, out.d.ts for out.js), with which
"await loadBundle(mod)" is typed like the traced function.

Options:
${TRACE_OPTIONS_HELP}
  --out, -o <out.mjs>   the bundle to write (default <export>.bundle.mjs next to <file>)
  --help, -h            this help

${SPEC_HELP}

Example:
  batchwise bundle model.mjs --export det --spec "f32[B; 3,3]" -o det.bundle.mjs`,
  dump: `Usage: batchwise dump <file> --export <name> --spec <spec>... [--after <pass>] [--kernels] [--dot]

Traces the export from the specs and prints its IR as traced, or after a pass.

Options:
${TRACE_OPTIONS_HELP}
  --after, -a <pass>    the IR after this pass (default input):
                        ${PASS_NAMES.slice(0, -1).join(", ")},
                        or ${PASS_NAMES[PASS_NAMES.length - 1]} (the schedule, one line per kernel)
  --kernels, -k         the generated kernels' source (JS; WGSL with --backend webgpu;
                        with --backend wasm, each WebAssembly kernel's loop form spelled as JS)
  --dot                 Graphviz DOT of the graph after --after (fuse: a cluster per kernel)
  --help, -h            this help

${SPEC_HELP}

Example:
  batchwise dump model.mjs --export det --spec "f32[B; 3,3]" --after fuse`,
  inspect: `Usage: batchwise inspect <bundle.mjs> [--sha256 <hex>]

Imports the bundle, validates it with loadBundle's checks (schema, graph, schedule,
kernel sources, layout, SHA-256) on the JS backend, and prints its signature
(arguments and results as IR types, f32[batch; base]), its kernels and its SHA-256
(the value to pin with loadBundle(mod, { sha256 })).
Importing a module runs its code: inspect only files you trust.

Options:
  --sha256 <hex>        also require this SHA-256 (exit code 1 if the bundle's differs)
  --help, -h            this help`,
  worker: `Usage: batchwise worker --redis <url> [--queue <name>] [--concurrency <n>] [--backend ${WORKER_BACKENDS.join("|")}] [--threads <n>]

Runs a batchwise/distributed worker: takes shard jobs from the BullMQ queue,
loads their bundles from Redis by SHA-256 (verified), runs them on the JS
backend (or WebAssembly with --backend wasm) and writes the results back, until
SIGINT or SIGTERM. Needs the optional packages bullmq and ioredis
(npm install bullmq@6 ioredis@6).

Options:
  --redis <url>             the Redis server (redis://host:port[/db])
  --queue <name>            the queue (default batchwise)
  --concurrency <n>         shards run at once (default 1)
  --backend <${WORKER_BACKENDS.join("|")}>       where shards run (default js); wasm: SIMD kernels on worker threads
  --threads <n>             wasm threads, the calling one included (default: the available cores)
  --lock-duration <ms>      a job whose lock is not renewed for this long is stalled (default 30000)
  --stalled-interval <ms>   how often stalled jobs are looked for (default 30000)
  --help, -h                this help`,
};

const TRACE_OPTIONS = {
  export: { type: "string", short: "e" },
  spec: { type: "string", short: "s", multiple: true },
  backend: { type: "string" },
  float32: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];

const OPTIONS = {
  bundle: { ...TRACE_OPTIONS, out: { type: "string", short: "o" } },
  dump: {
    ...TRACE_OPTIONS,
    after: { type: "string", short: "a" },
    kernels: { type: "boolean", short: "k" },
    dot: { type: "boolean" },
  },
  inspect: { sha256: { type: "string" }, help: { type: "boolean", short: "h" } },
  worker: {
    redis: { type: "string" },
    queue: { type: "string" },
    concurrency: { type: "string" },
    backend: { type: "string" },
    threads: { type: "string" },
    "lock-duration": { type: "string" },
    "stalled-interval": { type: "string" },
    help: { type: "boolean", short: "h" },
  },
} as const satisfies Record<string, ParseArgsConfig["options"]>;

type Command = keyof typeof OPTIONS;

function parse<C extends Command>(command: C, argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS[command], allowPositionals: true, strict: true });
  } catch (e) {
    // node:util's errors (unknown option, missing value) carry an ERR_PARSE_ARGS_* code.
    throw new UsageError(
      e instanceof Error ? e.message.replace(/\. To specify a positional argument.*$/s, "") : String(e),
    );
  }
}

/** The one positional argument of a command. */
function onePositional(positionals: readonly string[], what: string): string {
  if (positionals.length === 0) throw new UsageError(`missing ${what}`);
  if (positionals.length > 1)
    throw new UsageError(
      `one ${what} expected, got ${positionals.length} arguments (${positionals.map((p) => JSON.stringify(p)).join(" ")}); quote each --spec`,
    );
  return positionals[0]!;
}

async function importFile(file: string, what: string): Promise<Record<string, unknown>> {
  const path = resolve(file);
  if (!existsSync(path)) throw new CliError(`cannot find ${what} ${file}`);
  try {
    return (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const tsHint =
      /\.[cm]?tsx?$/.test(path) && /Unknown file extension/.test(msg)
        ? " (a .ts file needs a TypeScript loader: run the CLI under tsx, e.g. npx tsx node_modules/batchwise/dist/src/cli.js ...)"
        : "";
    if (e instanceof BatchwiseError) throw e;
    throw new CliError(`cannot import ${file}: ${msg}${tsHint}`);
  }
}

interface TraceValues {
  readonly export?: string;
  readonly spec?: readonly string[];
  readonly backend?: string;
  readonly float32?: string;
}

/** Imports the file, finds the export, traces it from the specs. Returns the traced function and the backend to release. */
async function traceExport(
  file: string,
  v: TraceValues,
): Promise<{ f: JitFunction<JitArg[], JitArg | JitArg[]>; backend: Backend; name: string; release: () => void }> {
  if (v.export === undefined) throw new UsageError("missing --export <name>");
  if (v.spec === undefined || v.spec.length === 0)
    throw new UsageError('missing --spec (one per argument of the function, e.g. --spec "f32[B; 3,3]")');
  if (v.backend !== undefined && !isBackendName(v.backend))
    throw new UsageError(
      `--backend must be ${listBackendNames(BACKEND_NAMES, false)}, got ${JSON.stringify(v.backend)}`,
    );
  if (v.float32 !== undefined && v.float32 !== "exact" && v.float32 !== "relaxed")
    throw new UsageError(`--float32 must be exact or relaxed, got ${JSON.stringify(v.float32)}`);
  // Specs first: a bad spec is reported before the module runs.
  const specs = v.spec.map(parseSpec);
  const mod = await importFile(file, "module");
  const name = v.export;
  if (!(name in mod)) {
    const names = Object.keys(mod).filter((k) => typeof mod[k] === "function");
    throw new CliError(
      `${file} has no export "${name}" (${names.length > 0 ? `its function exports: ${names.join(", ")}` : "it exports no functions"})`,
    );
  }
  const fn = mod[name];
  if (typeof fn !== "function")
    throw new CliError(
      `export "${name}" of ${file} is ${fn === null ? "null" : `a ${typeof fn}`}, not a function of tensors`,
    );
  if (
    typeof (fn as { bundle?: unknown }).bundle === "function" &&
    typeof (fn as { dump?: unknown }).dump === "function"
  ) {
    throw new CliError(
      `export "${name}" of ${file} is already a jit function; export the plain function of tensors (the CLI traces it)`,
    );
  }
  const arity = (fn as (...a: unknown[]) => unknown).length;
  if (specs.length < arity)
    throw new CliError(
      `export "${name}" of ${file} takes ${arity} arguments, got ${specs.length} --spec (one per argument, in order)`,
    );
  const { backend, release } = await TRACE_BACKENDS[isBackendName(v.backend) ? v.backend : "js"]();
  const opts: JitOptions = {
    name: name.replace(/[^\w.-]/g, "_") || "f",
    backend,
    ...(v.float32 !== undefined ? { float32: v.float32 as "exact" | "relaxed" } : {}),
  };
  try {
    const f = trace(fn as (...args: JitArg[]) => JitArg | JitArg[], specs, opts);
    return { f, backend, name, release };
  } catch (e) {
    release();
    throw e;
  }
}

/** The declarations' path for a bundle's path: .d.mts for .mjs, .d.ts for .js. */
export function typesPath(out: string): string {
  if (out.endsWith(".mjs")) return `${out.slice(0, -4)}.d.mts`;
  if (out.endsWith(".js")) return `${out.slice(0, -3)}.d.ts`;
  throw new UsageError(`the bundle's file name must end in .mjs or .js (an ES module), got ${JSON.stringify(out)}`);
}

async function bundleCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parse("bundle", argv);
  if (values.help) return help(io, "bundle");
  const file = onePositional(positionals, "<file> (the module to trace)");
  const out = values.out ?? join(dirname(file), `${(values.export ?? "f").replace(/[^\w.-]/g, "_")}.bundle.mjs`);
  const types = typesPath(out);
  const { f, release } = await traceExport(file, values);
  try {
    const text = await f.bundleAsync();
    const decl = f.bundleTypes();
    writeFileSync(out, text);
    writeFileSync(types, decl);
    const sha = /export const sha256 = "([0-9a-f]{64})"/.exec(text)?.[1] ?? "?";
    const kernels = /(\d+) kernel\(s\)/.exec(text)?.[1] ?? "?";
    const sig = /: (\(.*\) => .*)\. Written with the bundle/.exec(decl)?.[1] ?? "";
    io.out(`wrote ${out} (${kernels} kernel(s), sha256 ${sha})\nwrote ${types}: ${sig}\n`);
    return 0;
  } finally {
    release();
  }
}

async function dumpCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parse("dump", argv);
  if (values.help) return help(io, "dump");
  const file = onePositional(positionals, "<file> (the module to trace)");
  if (values.kernels && values.dot) throw new UsageError("--kernels and --dot exclude each other");
  if (values.kernels && values.after !== undefined)
    throw new UsageError("--kernels prints the fused kernels; --after does not apply");
  const { f, release } = await traceExport(file, values);
  try {
    const text = values.kernels
      ? f.dump({ kernels: true })
      : values.dot
        ? f.dot({ after: values.after ?? "input" })
        : f.dump({ after: values.after ?? "input" });
    io.out(text.endsWith("\n") ? text : `${text}\n`);
    return 0;
  } finally {
    release();
  }
}

/** One line per kernel step: its kind and size. */
function kernelLine(
  i: number,
  step: number,
  k: Kernel,
  shipped: { js?: unknown; wgsl?: unknown } | null | undefined,
): string {
  const kind =
    k.segment !== undefined
      ? `segment ${k.segment.mode}`
      : k.reduce !== null
        ? `reduce (batch axes [${k.reduce.batchAxes.join(",")}], base axes [${k.reduce.baseAxes.join(",")}])`
        : "elementwise";
  const ships = KERNEL_TARGETS.filter((t) => shipped?.[t] !== undefined).join("+");
  return `  kernel ${i} (step ${step}): ${kind}, base (${k.baseShape.join(",")}), ${k.inputs.length} in, ${k.outputs.length} out, ${k.exprs.length} exprs${k.unroll ? ", unrolled" : ""}; ships ${ships}`;
}

async function inspectCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parse("inspect", argv);
  if (values.help) return help(io, "inspect");
  const file = onePositional(positionals, "<bundle.mjs> (the bundle to inspect)");
  const mod = (await importFile(file, "bundle")) as unknown as BundleModule;
  const { getJsBackend } = await import("../backend.js");
  // loadBundle's checks, all of them: a bundle that fails one is exit code 1.
  await loadBundle(mod, { backend: getJsBackend(), ...(values.sha256 !== undefined ? { sha256: values.sha256 } : {}) });
  const sha = await bundleSha256(mod);
  const graph = parseGraph(mod.graph);
  const args = describeLayout(
    mod.args,
    graph.inputs.map((n) => n.type),
  );
  const results = describeLayout(
    mod.results,
    graph.outputs.map((n) => n.type),
  );
  const nArgs = graph.inputs.length - mod.captured.length;
  const kernelSteps = mod.steps.map((s, i) => [s, i] as const).filter(([s]) => s.kind === "kernel");
  const count = (kind: string) => mod.steps.filter((s) => s.kind === kind).length;
  const lines = [
    `bundle ${basename(file)}: valid (batchwise bundle format ${mod.format} version ${mod.version}, traced on ${mod.traced})`,
    `function @${graph.name}`,
    `arguments (${args.length}):`,
    ...args.map((a, i) => `  x${i}: ${a}`),
    `results (${results.length}${mod.multi ? ", returned as an array" : ""}):`,
    ...results.map((r, i) => `  ${i}: ${r}`),
    `captured constants: ${mod.captured.length}${
      mod.captured.length > 0
        ? ` (${graph.inputs
            .slice(nArgs)
            .map((n) => fmtType(n.type))
            .join(", ")})`
        : ""
    }`,
    `kernels: ${kernelSteps.length} (and ${count("view")} view(s), ${count("copy")} copy step(s))`,
    ...kernelSteps.map(([s, step], i) => kernelLine(i, step, (s as { kernel: Kernel }).kernel, mod.kernels[step])),
    `sha256: ${sha}`,
  ];
  io.out(`${lines.join("\n")}\n`);
  return 0;
}

/** A positive integer option's value. */
function intOption(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[1-9]\d*$/.test(v)) throw new UsageError(`--${name} must be a positive integer, got ${JSON.stringify(v)}`);
  return Number(v);
}

async function workerCommand(argv: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parse("worker", argv);
  if (values.help) return help(io, "worker");
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
  if (values.redis === undefined) throw new UsageError("missing --redis <url> (e.g. redis://127.0.0.1:6379)");
  const concurrency = intOption("concurrency", values.concurrency);
  const lockDuration = intOption("lock-duration", values["lock-duration"]);
  const stalledInterval = intOption("stalled-interval", values["stalled-interval"]);
  const given = values.backend ?? "js";
  const backend = WORKER_BACKENDS.find((b) => b === given);
  if (backend === undefined)
    throw new UsageError(`--backend must be ${listBackendNames(WORKER_BACKENDS, false)}, got ${JSON.stringify(given)}`);
  const threads = intOption("threads", values.threads);
  if (threads !== undefined && backend !== "wasm") throw new UsageError("--threads needs --backend wasm");
  if (backend === "wasm") {
    const { initWasm } = await import("../wasm.js");
    await initWasm(threads !== undefined ? { threads } : {});
  }
  const { startWorker } = await import("../distributed/index.js");
  const queue = values.queue ?? "batchwise";
  const worker = await startWorker(values.redis, {
    queue,
    backend,
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(lockDuration !== undefined ? { lockDuration } : {}),
    ...(stalledInterval !== undefined ? { stalledInterval } : {}),
  });
  await worker.ready;
  io.out(`batchwise worker: ready on queue ${queue} (pid ${process.pid}, backend ${backend})\n`);
  await new Promise<void>((res) => {
    process.once("SIGINT", () => res());
    process.once("SIGTERM", () => res());
  });
  await worker.close();
  io.out("batchwise worker: closed\n");
  return 0;
}

function help(io: CliIO, command: string): number {
  io.out(`${USAGE[command]!}\n`);
  return 0;
}

const COMMANDS: Record<Command, (argv: readonly string[], io: CliIO) => Promise<number>> = {
  bundle: bundleCommand,
  dump: dumpCommand,
  inspect: inspectCommand,
  worker: workerCommand,
};

/**
 * The version in the package.json of the batchwise package this file is part of
 * (src/cli/ in the repository, dist/src/cli/ in the installed package): the first
 * package.json named "batchwise" up from here.
 */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: unknown; version?: unknown };
      if (pkg.name === "batchwise" && typeof pkg.version === "string") return pkg.version;
    }
    const up = dirname(dir);
    if (up === dir) throw new CliError("cannot find the batchwise package.json above the CLI's own file");
    dir = up;
  }
}

/** Runs the CLI on `argv` (the arguments after `batchwise`); resolves to the exit code. */
export async function main(argv: readonly string[], io: CliIO): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "--version" || command === "-v") {
    if (rest.length > 0) {
      io.err(`batchwise: --version takes no arguments, got ${rest.map((a) => JSON.stringify(a)).join(" ")}\n`);
      return 2;
    }
    try {
      io.out(`${packageVersion()}\n`);
      return 0;
    } catch (e) {
      io.err(`batchwise: ${e instanceof Error ? e.message : String(e)}\n`);
      return 1;
    }
  }
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    if (command === undefined) {
      io.err(`${USAGE["main"]!}\n`);
      return 2;
    }
    return help(io, "main");
  }
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command as Command] : undefined;
  if (run === undefined) {
    io.err(
      `batchwise: unknown command ${JSON.stringify(command)} (commands: bundle, dump, inspect, worker; see batchwise --help)\n`,
    );
    return 2;
  }
  const debug =
    io.env["BATCHWISE_DEBUG"] !== undefined && io.env["BATCHWISE_DEBUG"] !== "" && io.env["BATCHWISE_DEBUG"] !== "0";
  try {
    return await run(rest, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`batchwise ${command}: ${e.message}\nSee "batchwise ${command} --help".\n`);
      return 2;
    }
    const known = e instanceof BatchwiseError || e instanceof CliError;
    const what =
      e instanceof BatchwiseError
        ? `${e.name}: ${e.message}`
        : e instanceof Error
          ? known
            ? e.message
            : `${e.name}: ${e.message}`
          : String(e);
    io.err(`batchwise ${command}: ${what}\n`);
    if (debug && e instanceof Error && e.stack !== undefined) io.err(`${e.stack}\n`);
    return 1;
  }
}
