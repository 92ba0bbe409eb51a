/**
 * Bundles: a traced program with its kernels as an ES module, loaded with no
 * tracer, no graph passes and no `eval`.
 *
 * `f.bundle()` writes the module text for a `jit` function's latest trace: the
 * fused graph as IR text, the fusion options, the schedule (kernel IR, views,
 * copies) with nodes named by their position in the graph's topological order,
 * each kernel as a JS function and as WGSL source, the captured constants, how
 * arguments and results map to tensors and jagged tensors, and the SHA-256 of
 * all of that (its canonical encoding, `bundleContent`). `f.bundleAsync()` writes
 * the same text on any backend (it reads the captured constants asynchronously:
 * on WebGPU they live on the device, where `f.bundle()` cannot read them).
 * `f.bundleTypes()` writes the module's TypeScript declarations, whose `args` and
 * `results` types carry the traced signature (`BundleArgs`, `BundleResults`), so
 * that `await loadBundle(mod)` is typed like the traced function.
 *
 * `loadBundle(module)` treats the module as untrusted input. In order, it
 * 1. validates every field against a schema (types, ranges, sizes: a malformed
 *    field is a BundleError naming it, never a TypeError from deep inside);
 * 2. parses the graph, which must print back to its own text;
 * 3. re-derives the schedule from the graph with the recorded fusion options and
 *    requires the shipped steps to be exactly that schedule (an edited graph, a
 *    reordered step input or an edited kernel IR is caught here, whatever the hash);
 * 4. requires each shipped kernel's source (JS function text, WGSL) to be what
 *    the code generators give for that step's kernel: text only, nothing is
 *    compiled or evaluated;
 * 5. checks arguments, results and captured constants against the graph's inputs
 *    and outputs;
 * 6. recomputes the SHA-256 of the content (WebCrypto) and requires it to equal
 *    the recorded one, and the caller's `opts.sha256` when given.
 * Only then are the kernels handed to the backend (`Backend.load`): the shipped
 * functions on JS, the shipped WGSL for the driver on WebGPU.
 *
 * What this promises: a bundle whose content was edited (by hand, by a tool, by
 * a transfer that damaged it) or that is internally inconsistent is refused. The
 * captured constants, the argument and result layout and the graph text are
 * covered by the hash only: anyone who edits them can also recompute the
 * recorded hash, so only a hash the caller pins (`loadBundle(mod, { sha256 })`,
 * the `sha256` export of a bundle the caller trusts) detects a deliberate edit.
 * What it does not promise: a bundle's JS kernels are code that runs with the
 * page's privileges, and importing the module has already run its top-level
 * code before loadBundle sees it. The checks cover what the module exports, not
 * what else the file does. Import bundles only from sources you trust, or check
 * the file's bytes before importing it (Subresource Integrity, or a hash of the
 * text); pinning `sha256` then guarantees the exact program you expect. Tools that
 * rewrite the module (minifiers, bundlers that reprint code) change the kernels'
 * text and make the bundle fail its checks: ship the file as written.
 */
import { BundleError } from "../ir/errors.js";
import type { Graph, Node } from "../ir/graph.js";
import type { Kernel } from "../ir/kernel.js";
import { printGraph } from "../ir/print.js";
import { mapStep, type Schedule, type Step } from "../ir/schedule.js";
import { fmtShape, fmtType, type TensorType } from "../ir/types.js";
import { kernelToJS } from "../codegen/js.js";
import { kernelToWGSLShipped } from "../codegen/wgsl.js";
import { fuse, type FuseOptions } from "../passes/fuse.js";
import {
  ARRAY_NAME,
  BUNDLE_FORMAT,
  BUNDLE_VERSION,
  bundleContent,
  bundleFunction,
  canonical,
  check,
  checkHash,
  checkLayout,
  describeError,
  jsText,
  kernelContent,
  moduleContent,
  type BundleConstant,
  type BundleFunction,
  type BundleFunctionOf,
  type BundleFuseOptions,
  type BundleModule,
  type BundleStep,
  type Content,
  type KernelText,
  type LoadBundleOptions,
} from "./bundle-load.js";
import { readBundle, validateModule } from "./bundle-schema.js";
import { concreteType } from "./realize.js";
import { sha256Hex } from "./sha256.js";
import { sha256HexSync } from "./sha256-sync.js";
import type { Tensor } from "./tensor.js";

// The format, the module's types and the content encoding live in bundle-load.ts (shared with batchwise/runtime;
// the entries export them through src/entry-shared.ts). The types of loadBundle's module and result, for its callers:
export type { BundleFunction, BundleModule };

/** What a bundle export needs from a jit trace. */
export interface Traced {
  readonly backend: string;
  readonly schedule: Schedule;
  /** The options `schedule` was fused with. */
  readonly fuse: FuseOptions;
  readonly captured: readonly Tensor[];
  readonly args: string;
  readonly results: string;
  readonly multi: boolean;
  /** The trace took reverse-mode derivatives: calls must not broadcast batch dims (src/trace-flags.ts). */
  readonly batchesAgree?: boolean;
}

/** A JS literal for plain data: NaN, ±Infinity and -0 survive (JSON would lose them). */
function literal(v: unknown): string {
  if (typeof v === "number") return Object.is(v, -0) ? "-0" : String(v);
  if (typeof v === "string" || typeof v === "boolean" || v === null) return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(literal).join(", ")}]`;
  if (typeof v === "object" && v !== undefined) {
    return `{ ${Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .map(([k, x]) => `${JSON.stringify(k)}: ${literal(x)}`)
      .join(", ")} }`;
  }
  throw new BundleError(`bundle: cannot write a ${typeof v} as a literal`);
}

/**
 * The SHA-256 of a bundle module's content, as `loadBundle` computes it (WebCrypto):
 * what to pin with `loadBundle(mod, { sha256 })`. The module must be well-formed
 * (a BundleError says why not); its consistency is not checked here.
 */
export async function bundleSha256(mod: BundleModule): Promise<string> {
  validateModule(mod);
  return sha256Hex(bundleContent(moduleContent(mod)));
}

/**
 * A kernel's shipped sources and what the code generator knows of them (`chunked`: the
 * WGSL reads its chunk count): what the writer ships and what the loader requires.
 */
function kernelText(k: Kernel): KernelText {
  let wgsl: { readonly wgsl: string; readonly chunked: boolean } | undefined;
  try {
    wgsl = kernelToWGSLShipped(k);
  } catch {
    wgsl = undefined; // float64 and other kernels WGSL cannot hold: the bundle runs on JS only
  }
  return { js: `function (ins, outs, sizes, strides, consts) {\n${kernelToJS(k).body}\n}`, ...wgsl };
}

/** Fusion options with every field explicit (the defaults `fuse` applies). */
function fuseOptionsOf(o: FuseOptions): BundleFuseOptions {
  return {
    maxKernelBuffers: o.maxKernelBuffers,
    unrollLimit: o.unrollLimit,
    fusion: o.fusion !== false,
    mixedBaseOutputs: o.mixedBaseOutputs === true,
    relaxedFloat32: o.relaxedFloat32 === true,
  };
}

/**
 * The values of a trace's captured constants, read synchronously: on a backend
 * that reads only asynchronously (WebGPU) this is a BundleError pointing to
 * `bundleSourceAsync` (`await f.bundleAsync()`).
 */
function capturedValuesSync(t: Traced): ArrayLike<number>[] {
  return t.captured.map((c, i) => {
    const s = c._src;
    if (s.kind === "buffer" && s.backend.readSync === undefined) {
      const type = concreteType(c);
      throw new BundleError(
        `f.bundle(): captured constant ${i} ${fmtShape(type.batch, type.base)} ${type.dtype} lives on the ${s.backend.name} backend, which reads only asynchronously; use await f.bundleAsync()`,
      );
    }
    return c.dataSync({ copy: false });
  });
}

/**
 * The ES module text of a bundle (see the file comment). The captured constants'
 * values are `values` when given (one per `t.captured`), else read synchronously
 * (JS backend; see `bundleSourceAsync` for the others).
 */
export function bundleSource(t: Traced, values?: readonly ArrayLike<number>[]): string {
  const s = t.schedule;
  const text = printGraph(s.graph);
  const index = new Map<Node, number>(s.order.map((n, i) => [n, i]));
  const at = (n: Node): number => index.get(n)!;
  const steps: BundleStep[] = s.steps.map((st) => mapStep(st, at));
  const kernels = s.steps.map((st) => (st.kind === "kernel" ? kernelText(st.kernel) : null));
  const data = values ?? capturedValuesSync(t);
  if (data.length !== t.captured.length)
    throw new BundleError(`bundle: internal: ${data.length} values for ${t.captured.length} captured constants`);
  const captured = t.captured.map((c, i): BundleConstant => {
    const type = concreteType(c);
    return { dtype: type.dtype, batch: [...type.batch], base: [...type.base], data: data[i]! };
  });
  const fuseOpts = fuseOptionsOf(t.fuse);
  const content: Content = {
    format: BUNDLE_FORMAT,
    version: BUNDLE_VERSION,
    traced: t.backend,
    fuse: fuseOpts,
    graph: text,
    steps,
    kernels,
    captured,
    args: t.args,
    results: t.results,
    multi: t.multi,
    batchesAgree: t.batchesAgree === true ? true : undefined,
  };
  const sha256 = sha256HexSync(
    bundleContent({
      ...content,
      kernels: kernels.map((k) => (k === null ? null : kernelContent(k))),
    }),
  );
  const kernelsText = kernels.map((k) =>
    k === null
      ? "null"
      : `{ js: ${k.js!}, wgsl: ${k.wgsl === undefined ? "undefined" : `${JSON.stringify(k.wgsl)}, chunked: ${k.chunked!}`} }`,
  );
  const capturedText = captured.map((c) => {
    const data = Array.from(c.data, (v) => literal(v)).join(", ");
    return `{ dtype: ${literal(c.dtype)}, batch: ${literal(c.batch)}, base: ${literal(c.base)}, data: new ${ARRAY_NAME[c.dtype]}([${data}]) }`;
  });
  return [
    `// batchwise bundle of @${s.graph.name}: ${kernels.filter((k) => k !== null).length} kernel(s). Load with loadBundle(module); edits make it fail its checks.`,
    `export const format = ${literal(BUNDLE_FORMAT)};`,
    `export const version = ${BUNDLE_VERSION};`,
    `export const traced = ${literal(t.backend)};`,
    `export const fuse = ${literal(fuseOpts)};`,
    `export const graph = ${JSON.stringify(text)};`,
    `export const args = ${literal(t.args)};`,
    `export const results = ${literal(t.results)};`,
    `export const multi = ${t.multi};`,
    ...(t.batchesAgree === true ? ["export const batchesAgree = true;"] : []),
    `export const steps = ${literal(steps)};`,
    `export const kernels = [\n${kernelsText.join(",\n")}\n];`,
    `export const captured = [${capturedText.join(",\n")}];`,
    `export const sha256 = ${literal(sha256)};`,
    "",
  ].join("\n");
}

/**
 * `bundleSource` on any backend: the captured constants are read with
 * `await t.data()` (on WebGPU they live on the device and read asynchronously).
 */
export async function bundleSourceAsync(t: Traced): Promise<string> {
  const values = await Promise.all(t.captured.map((c) => c.data()));
  return bundleSource(t, values);
}

/** The items of an argument/result layout (see args.ts) as TypeScript types: Tensor, JaggedTensor, TensorDict. */
function layoutTypes(kinds: string): string[] {
  const out: string[] = [];
  for (let pos = 0; pos < kinds.length;) {
    const c = kinds[pos++]!;
    if (c === "t") out.push("Tensor");
    else if (c === "j") out.push("JaggedTensor");
    else {
      const m = /^(\d+):/.exec(kinds.slice(pos));
      if (c !== "d" || m === null) throw new BundleError(`bundle: internal: bad layout "${kinds}" at ${pos - 1}`);
      out.push("TensorDict");
      pos += m[0].length + Number(m[1]);
    }
  }
  return out;
}

/**
 * How many graph inputs a layout written by this library takes (a jagged tensor
 * takes two). Trusted text, so no validation (and no zod in a jit page): loading
 * checks layouts with `layoutLeaves`.
 */
function graphInputsOf(kinds: string): number {
  let n = 0;
  for (let pos = 0; pos < kinds.length;) {
    const c = kinds[pos++]!;
    if (c === "t") n += 1;
    else if (c === "j") n += 2;
    else {
      const m = /^(\d+):/.exec(kinds.slice(pos))!;
      const dict = JSON.parse(kinds.slice(pos + m[0].length, pos + m[0].length + Number(m[1]))) as {
        k: [string, string][];
      };
      for (const [, sub] of dict.k) n += graphInputsOf(sub);
      pos += m[0].length + Number(m[1]);
    }
  }
  return n;
}

/** How the items of a layout map to graph inputs, for comments: `f32[b0; 3,3]`, `jagged f32[t0; 3] (offsets i32[r0; ])`, `TensorDict (2 tensors)`. */
export function describeLayout(kinds: string, types: readonly TensorType[]): string[] {
  const out: string[] = [];
  let k = 0;
  for (let pos = 0; pos < kinds.length;) {
    const c = kinds[pos++]!;
    if (c === "t") out.push(fmtType(types[k++]!));
    else if (c === "j") {
      out.push(`jagged ${fmtType(types[k]!)} (offsets ${fmtType(types[k + 1]!)})`);
      k += 2;
    } else {
      const m = /^(\d+):/.exec(kinds.slice(pos))!;
      const item = kinds.slice(pos - 1, pos + m[0].length + Number(m[1]));
      const n = graphInputsOf(item);
      out.push(
        `TensorDict (${n} tensor${n === 1 ? "" : "s"}: ${types
          .slice(k, k + n)
          .map(fmtType)
          .join(", ")})`,
      );
      k += n;
      pos += m[0].length + Number(m[1]);
    }
  }
  return out;
}

/** Options of `f.bundleTypes()`. */
export interface BundleTypesOptions {
  /**
   * The module the declarations import batchwise's types from (default "batchwise"): "batchwise/runtime"
   * for a program that loads the bundle with the lean runtime's `loadBundle`.
   */
  readonly from?: string;
}

/**
 * The TypeScript declarations of a bundle module (`f.bundleTypes()`): save them
 * next to the bundle as `name.d.mts` for `name.mjs` (`name.d.ts` for `name.js`).
 * They declare every export, and the traced function's signature in the types of
 * `args` and `results` (`BundleArgs`, `BundleResults`, types only), so that
 * `await loadBundle(mod)` is typed like the traced function:
 * `(x0: Tensor) => Tensor`, `callAsync` returning a `Promise` of the same.
 */
export function bundleTypes(t: Traced, opts: BundleTypesOptions = {}): string {
  const from = opts.from ?? "batchwise";
  if (typeof from !== "string" || from === "")
    throw new BundleError(
      `bundleTypes: opts.from must be a module specifier, got ${typeof from === "string" ? "an empty string" : typeof from}`,
    );
  const g = t.schedule.graph;
  const argTypes = layoutTypes(t.args);
  const argComments = describeLayout(
    t.args,
    g.inputs.map((n) => n.type),
  );
  const resTypes = layoutTypes(t.results);
  const resComments = describeLayout(
    t.results,
    g.outputs.map((n) => n.type),
  );
  const params = `[${argTypes.map((ty, i) => `x${i}: ${ty}`).join(", ")}]`;
  const result = t.multi ? `[${resTypes.join(", ")}]` : resTypes[0]!;
  const used = ["Tensor", "JaggedTensor", "TensorDict"].filter((n) => argTypes.includes(n) || resTypes.includes(n));
  const signature = `(${argTypes.map((ty, i) => `x${i}: ${ty}`).join(", ")}) => ${result}`;
  return [
    `// Types of the batchwise bundle of @${g.name}: ${signature}. Written with the bundle; do not edit.`,
    `import type { BundleArgs, BundleModule, BundleResults${used.map((n) => `, ${n}`).join("")} } from ${JSON.stringify(from)};`,
    `export declare const format: ${literal(BUNDLE_FORMAT)};`,
    `export declare const version: ${BUNDLE_VERSION};`,
    `export declare const traced: ${literal(t.backend)};`,
    `export declare const fuse: BundleModule["fuse"];`,
    `export declare const graph: string;`,
    `/**`,
    ` * The arguments (IR types, batch dims symbolic):`,
    ...argComments.map((c, i) => ` * - x${i}: ${c}`),
    ` */`,
    `export declare const args: BundleArgs<${params}>;`,
    `/**`,
    ` * The results (IR types):`,
    ...resComments.map((c, i) => ` * - ${i}: ${c}`),
    ` */`,
    `export declare const results: BundleResults<${result}>;`,
    `export declare const multi: ${t.multi};`,
    ...(t.batchesAgree === true ? ["export declare const batchesAgree: true;"] : []),
    `export declare const steps: BundleModule["steps"];`,
    `export declare const kernels: BundleModule["kernels"];`,
    `export declare const captured: BundleModule["captured"];`,
    `export declare const sha256: string;`,
    "",
  ].join("\n");
}

/** Where two canonical encodings first differ, for error messages. */
function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - 30);
  return `at character ${i}: expected …${a.slice(from, i + 30)}…, found …${b.slice(from, i + 30)}…`;
}

/**
 * Checks that the steps are the schedule the graph gives with the recorded fusion
 * options, and that the shipped kernels are the sources the code generators write
 * for them. Returns the re-derived steps (equal to the shipped ones).
 */
function checkSchedule(mod: BundleModule, graph: Graph, order: readonly Node[]): Step[] {
  let derived: Schedule;
  try {
    derived = fuse(graph, mod.fuse);
  } catch (e) {
    // Untrusted input: whatever fails here is the bundle's error, never a raw TypeError.
    throw new BundleError(
      `loadBundle: the bundle's graph cannot be scheduled with its fusion options (${describeError(e)})`,
    );
  }
  const index = new Map<Node, number>(order.map((n, i) => [n, i]));
  const mine = derived.steps.map((st) => mapStep(st, (n) => index.get(n)!));
  check(
    mine.length === mod.steps.length,
    `the bundle has ${mod.steps.length} steps, its graph schedules ${mine.length} (an edited graph or schedule)`,
  );
  check(
    mod.kernels.length === mod.steps.length,
    `the bundle's ${mod.steps.length} steps and ${mod.kernels.length} kernels do not match`,
  );
  mine.forEach((st, i) => {
    const want = canonical(st);
    const got = canonical(mod.steps[i]);
    check(
      want === got,
      `step ${i} (${mod.steps[i]!.kind}) is not the step its graph schedules (an edited graph, step or kernel IR, or reordered inputs): ${firstDifference(want, got)}`,
    );
    const shipped = mod.kernels[i];
    if (st.kind !== "kernel") {
      check(shipped === null, `step ${i} is a ${st.kind} and ships a kernel`);
      return;
    }
    check(shipped !== null, `step ${i} is a kernel and ships none`);
    const text = kernelText(st.kernel);
    if (shipped.js !== undefined) {
      const js = jsText(shipped.js);
      check(
        js === jsText(text.js),
        `step ${i}'s JS kernel is not the code its kernel IR gives (an edited kernel, or a tool such as a minifier rewrote the module): ${firstDifference(jsText(text.js), js)}`,
      );
    }
    if (shipped.wgsl !== undefined) {
      check(text.wgsl !== undefined, `step ${i} ships WGSL for a kernel WGSL cannot hold`);
      check(
        shipped.wgsl === text.wgsl,
        `step ${i}'s WGSL kernel is not the code its kernel IR gives (an edited kernel): ${firstDifference(text.wgsl, shipped.wgsl)}`,
      );
      // Format 3 records the code generator's flag; format 2's is told from the WGSL (equal, checked above).
      check(
        mod.version === 2 || shipped.chunked === text.chunked,
        `step ${i}'s WGSL kernel says chunked: ${String(shipped.chunked)}, its kernel IR gives chunked: ${String(text.chunked)} (an edited kernel)`,
      );
    }
  });
  return derived.steps as Step[];
}

/**
 * Loads a bundle (the module text `f.bundle()` returns, saved and imported) on
 * the current backend (or `opts.backend`), treating it as untrusted input: checks
 * its fields, re-derives its schedule from its graph, checks its kernels' sources
 * and its SHA-256 (and the caller's `opts.sha256`), then loads the shipped kernels
 * without compiling any. With the module's declarations (`f.bundleTypes()`, saved
 * next to it) the result is typed like the traced function. Asynchronous because
 * WebCrypto and WebGPU pipeline creation are.
 *
 * @example
 * ```ts
 * // Earlier: writeFileSync("det.bundle.mjs", f.bundle()); writeFileSync("det.bundle.d.mts", f.bundleTypes());
 * import * as mod from "./det.bundle.mjs";
 * const det = await loadBundle(mod); // (x0: Tensor) => Tensor
 * det(m); // m (B; 3,3) gives (B;)
 * ```
 */
export function loadBundle<M extends BundleModule>(mod: M, opts?: LoadBundleOptions): Promise<BundleFunctionOf<M>>;
/**
 * `loadBundle<typeof f>(mod)`: typed like the function `F` (a jit function, or the
 * traced function itself) for a module without declarations.
 *
 * @typeParam F - The function whose parameters and result type the loaded bundle takes.
 */
export function loadBundle<F extends (...args: never) => unknown>(
  mod: BundleModule,
  opts?: LoadBundleOptions,
): Promise<BundleFunction<Parameters<F>, ReturnType<F>>>;
export async function loadBundle(mod: BundleModule, opts: LoadBundleOptions = {}): Promise<BundleFunction> {
  const b = readBundle(mod, opts);
  const steps = checkSchedule(b.snapshot, b.graph, b.order);
  checkLayout(b.snapshot, b.graph);
  await checkHash(b);
  return bundleFunction(b, steps, opts.backend);
}
