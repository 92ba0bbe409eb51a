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
import { z } from "zod";
import { ARRAY_CTOR, type DType, type TypedArray } from "../ir/dtype.js";
import { BatchwiseError, BundleError, ShapeError } from "../ir/errors.js";
import { topoOrder, type Graph, type Node } from "../ir/graph.js";
import type { Kernel } from "../ir/kernel.js";
import { parseGraph } from "../ir/parse.js";
import { printGraph } from "../ir/print.js";
import { mapStep, type Schedule, type Step, type StepOf } from "../ir/schedule.js";
import { fmtShape, fmtType, type TensorType } from "../ir/types.js";
import { kernelToJS } from "../codegen/js.js";
import { kernelToWGSL } from "../codegen/wgsl.js";
import { fuse, type FuseOptions } from "../passes/fuse.js";
import type { Backend, ShippedKernel } from "../runtime/backend.js";
import { Program, type BoundValue } from "../runtime/program.js";
import { flatten, unflatten, type JitArg } from "./args.js";
import { getBackend } from "./backend.js";
import { fromTypedArray } from "./creation.js";
import { concreteType, realize, realizeSync } from "./realize.js";
import { sha256Hex, sha256HexSync } from "./sha256.js";
import { Tensor } from "./tensor.js";

export const BUNDLE_FORMAT = "batchwise-bundle";
/** 2: the fusion options and the SHA-256 of the content are recorded (version 1 had neither). */
export const BUNDLE_VERSION = 2;

/** A schedule step with nodes named by their index in the graph's topological order. */
type BundleStep = StepOf<number>;

/** The fusion options a bundle's schedule was derived with (every field explicit). */
export interface BundleFuseOptions {
  readonly maxKernelBuffers: number;
  readonly unrollLimit: number;
  readonly fusion: boolean;
  readonly mixedBaseOutputs: boolean;
  readonly relaxedFloat32: boolean;
}

/** One captured constant: a realized tensor the traced function closed over. */
export interface BundleConstant {
  readonly dtype: DType;
  readonly batch: readonly number[];
  readonly base: readonly number[];
  /** The values, a typed array of the dtype's own type (Uint8Array for bool). */
  readonly data: ArrayLike<number>;
}

/** What a bundle module exports (`import * as mod from "./f.bundle.js"`). */
export interface BundleModule {
  readonly format: string;
  readonly version: number;
  /** The backend the trace was fused for (its buffer limit and output grouping). */
  readonly traced: string;
  /** The options the schedule was fused with, so that the loader can re-derive it. */
  readonly fuse: BundleFuseOptions;
  /** The fused graph, as IR text. */
  readonly graph: string;
  readonly steps: readonly BundleStep[];
  /** Per step: the shipped kernel, or null for views and copies. */
  readonly kernels: readonly (ShippedKernel | null)[];
  /** Realized tensors the traced function closed over (the graph inputs after the arguments). */
  readonly captured: readonly BundleConstant[];
  /** Per argument and per result: "t" a tensor, "j" a jagged tensor (values and offsets), "d…" a TensorDict. */
  readonly args: string;
  readonly results: string;
  /** The function returned an array (else one value). */
  readonly multi: boolean;
  /** SHA-256 (64 lowercase hex digits) of `bundleContent` of the other fields. */
  readonly sha256: string;
}

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
}

/** A JS literal for plain data: NaN, ±Infinity and -0 survive (JSON would lose them). */
function literal(v: unknown): string {
  if (typeof v === "number") return Object.is(v, -0) ? "-0" : String(v);
  if (typeof v === "string" || typeof v === "boolean" || v === null) return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(literal).join(", ")}]`;
  if (typeof v === "object" && v !== undefined) {
    return `{ ${Object.entries(v as Record<string, unknown>).filter(([, x]) => x !== undefined).map(([k, x]) => `${JSON.stringify(k)}: ${literal(x)}`).join(", ")} }`;
  }
  throw new BundleError(`bundle: cannot write a ${typeof v} as a literal`);
}

/**
 * The canonical text of plain data: keys sorted, undefined fields dropped,
 * numbers written so that NaN, ±Infinity and -0 stay distinct, typed arrays as
 * arrays. Injective on the data a (validated) bundle holds.
 */
function canonical(v: unknown): string {
  if (typeof v === "number") return Object.is(v, -0) ? "-0" : String(v);
  if (typeof v === "string" || typeof v === "boolean" || v === null) return JSON.stringify(v);
  if (v === undefined) return "undefined";
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (ArrayBuffer.isView(v)) return `[${Array.from(v as unknown as ArrayLike<number>, canonical).join(",")}]`;
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(",")}}`;
  }
  throw new BundleError(`bundle: cannot encode a ${typeof v}`);
}

/**
 * A JS kernel's text as compared and hashed: with whitespace and semicolons
 * removed, so that tools that only reformat a module keep it valid (Vite's module
 * transform, for one, inserts semicolons after blocks).
 */
function jsText(fnOrSource: unknown): string {
  const text = typeof fnOrSource === "function" ? Function.prototype.toString.call(fnOrSource) : String(fnOrSource);
  return text.replace(/[\s;]+/g, "");
}

/** A shipped kernel's content for hashing: its sources as text. */
interface KernelText {
  readonly js?: string;
  readonly wgsl?: string;
}

/** The fields the SHA-256 covers (everything but `sha256`), kernels as their source text. */
type Content = Omit<BundleModule, "sha256" | "kernels"> & { readonly kernels: readonly (KernelText | null)[] };

/** The canonical encoding of a bundle's content, whose SHA-256 the bundle records. */
export function bundleContent(c: Content): string {
  const fields: Record<string, unknown> = { format: c.format, version: c.version, traced: c.traced, fuse: c.fuse, graph: c.graph, steps: c.steps, kernels: c.kernels, captured: c.captured, args: c.args, results: c.results, multi: c.multi };
  return canonical(fields);
}

/** The content of a (validated) bundle module: kernels' JS functions as their source text. */
export function moduleContent(mod: BundleModule): Content {
  const kernels = mod.kernels.map((k) => (k === null ? null : { js: k.js === undefined ? undefined : jsText(k.js), wgsl: k.wgsl }));
  return { format: mod.format, version: mod.version, traced: mod.traced, fuse: mod.fuse, graph: mod.graph, steps: mod.steps, kernels, captured: mod.captured, args: mod.args, results: mod.results, multi: mod.multi };
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

/** A kernel's shipped sources: what the writer ships and what the loader requires. */
function kernelText(k: Kernel): KernelText {
  let wgsl: string | undefined;
  try {
    wgsl = kernelToWGSL(k);
  } catch {
    wgsl = undefined; // float64 and other kernels WGSL cannot hold: the bundle runs on JS only
  }
  return { js: `function (ins, outs, sizes, strides, consts) {\n${kernelToJS(k).body}\n}`, wgsl };
}

/** Fusion options with every field explicit (the defaults `fuse` applies). */
function fuseOptionsOf(o: FuseOptions): BundleFuseOptions {
  return { maxKernelBuffers: o.maxKernelBuffers, unrollLimit: o.unrollLimit, fusion: o.fusion !== false, mixedBaseOutputs: o.mixedBaseOutputs === true, relaxedFloat32: o.relaxedFloat32 === true };
}

const ARRAY_NAME: { readonly [D in DType]: string } = { float32: "Float32Array", float64: "Float64Array", int32: "Int32Array", uint32: "Uint32Array", bool: "Uint8Array" };

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
      throw new BundleError(`f.bundle(): captured constant ${i} ${fmtShape(type.batch, type.base)} ${type.dtype} lives on the ${s.backend.name} backend, which reads only asynchronously; use await f.bundleAsync()`);
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
  if (data.length !== t.captured.length) throw new BundleError(`bundle: internal: ${data.length} values for ${t.captured.length} captured constants`);
  const captured = t.captured.map((c, i): BundleConstant => {
    const type = concreteType(c);
    return { dtype: type.dtype, batch: [...type.batch], base: [...type.base], data: data[i]! };
  });
  const fuseOpts = fuseOptionsOf(t.fuse);
  const content: Content = { format: BUNDLE_FORMAT, version: BUNDLE_VERSION, traced: t.backend, fuse: fuseOpts, graph: text, steps, kernels, captured, args: t.args, results: t.results, multi: t.multi };
  const sha256 = sha256HexSync(bundleContent({ ...content, kernels: kernels.map((k) => (k === null ? null : { js: jsText(k.js), wgsl: k.wgsl })) }));
  const kernelsText = kernels.map((k) => (k === null ? "null" : `{ js: ${k.js!}, wgsl: ${k.wgsl === undefined ? "undefined" : JSON.stringify(k.wgsl)} }`));
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
  for (let pos = 0; pos < kinds.length; ) {
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

/** How the items of a layout map to graph inputs, for comments: `f32[b0; 3,3]`, `jagged f32[t0; 3] (offsets i32[r0; ])`, `TensorDict (2 tensors)`. */
export function describeLayout(kinds: string, types: readonly TensorType[]): string[] {
  const out: string[] = [];
  let k = 0;
  for (let pos = 0; pos < kinds.length; ) {
    const c = kinds[pos++]!;
    if (c === "t") out.push(fmtType(types[k++]!));
    else if (c === "j") {
      out.push(`jagged ${fmtType(types[k]!)} (offsets ${fmtType(types[k + 1]!)})`);
      k += 2;
    } else {
      const m = /^(\d+):/.exec(kinds.slice(pos))!;
      const item = kinds.slice(pos - 1, pos + m[0].length + Number(m[1]));
      const n = [...(layoutLeaves(item) as { leaves: string }).leaves].reduce((p, l) => p + (l === "j" ? 2 : 1), 0);
      out.push(`TensorDict (${n} tensor${n === 1 ? "" : "s"}: ${types.slice(k, k + n).map(fmtType).join(", ")})`);
      k += n;
      pos += m[0].length + Number(m[1]);
    }
  }
  return out;
}

export interface BundleTypesOptions {
  /** The module the declarations import batchwise's types from (default "batchwise"). */
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
  if (typeof from !== "string" || from === "") throw new BundleError(`bundleTypes: opts.from must be a module specifier, got ${typeof from === "string" ? "an empty string" : typeof from}`);
  const g = t.schedule.graph;
  const argTypes = layoutTypes(t.args);
  const argComments = describeLayout(t.args, g.inputs.map((n) => n.type));
  const resTypes = layoutTypes(t.results);
  const resComments = describeLayout(t.results, g.outputs.map((n) => n.type));
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
    `export declare const steps: BundleModule["steps"];`,
    `export declare const kernels: BundleModule["kernels"];`,
    `export declare const captured: BundleModule["captured"];`,
    `export declare const sha256: string;`,
    "",
  ].join("\n");
}

/**
 * A bundle's argument layout, carrying the traced function's parameter types for
 * TypeScript in a property that exists only in the types (the value is the layout string).
 */
export type BundleArgs<A extends readonly unknown[]> = string & { readonly "~args"?: A };
/** A bundle's result layout, carrying the traced function's result type (types only). */
export type BundleResults<R> = string & { readonly "~results"?: R };

/** A loaded bundle: call it like the jit function it came from (typed `(...args: A) => R` from its declarations). */
export interface BundleFunction<A extends readonly unknown[] = JitArg[], R = JitArg | JitArg[]> {
  (...args: A): R;
  /** Async variant, needed on WebGPU. */
  callAsync(...args: A): Promise<R>;
  /** The fused graph's IR text. */
  dump(): string;
  readonly backend: Backend;
}

/**
 * The function `loadBundle` gives for a module type: typed from the module's
 * declarations (`bundleTypes`) when it has them, else `BundleFunction` (any
 * tensors in, a value or an array out).
 */
export type BundleFunctionOf<M> = 0 extends 1 & M
  ? BundleFunction
  : BundleFunction<
      M extends { readonly args: { readonly "~args"?: infer A } } ? (A extends readonly unknown[] ? A : JitArg[]) : JitArg[],
      M extends { readonly results: { readonly "~results"?: infer R } } ? (unknown extends R ? JitArg | JitArg[] : R) : JitArg | JitArg[]
    >;

function check(ok: boolean, why: string): asserts ok {
  if (!ok) throw new BundleError(`loadBundle: ${why}`);
}

/** Plain data a kernel IR may hold: numbers (any), strings, booleans, null, arrays, plain objects; bounded depth and size. */
function isPlainData(v: unknown, budget = { nodes: 1_000_000 }, depth = 0): boolean {
  if (--budget.nodes < 0 || depth > 64) return false;
  if (v === null || typeof v === "number" || typeof v === "string" || typeof v === "boolean") return true;
  if (Array.isArray(v)) return v.every((x) => isPlainData(x, budget, depth + 1));
  if (typeof v !== "object" || Object.getPrototypeOf(v) !== Object.prototype) return false;
  return Object.values(v as Record<string, unknown>).every((x) => x === undefined || isPlainData(x, budget, depth + 1));
}

/**
 * The leaf codes ("t", "j") of an argument/result layout string (see args.ts), or
 * an explanation of why it is not one. Each `d<n>:<json>` item must hold valid JSON
 * `{"b": batch rank, "s"?: sizes, "k": [[key, one item], ...]}`.
 */
function layoutLeaves(kinds: string, depth = 0): { leaves: string; items: number } | string {
  if (depth > 32) return "TensorDicts nested more than 32 deep";
  let leaves = "";
  let items = 0;
  for (let pos = 0; pos < kinds.length; items++) {
    const c = kinds[pos++]!;
    if (c === "t" || c === "j") {
      leaves += c;
      continue;
    }
    if (c !== "d") return `unknown code ${JSON.stringify(c)} at ${pos - 1}`;
    const m = /^(\d{1,9}):/.exec(kinds.slice(pos, pos + 11));
    if (m === null) return `a TensorDict at ${pos - 1} has no length`;
    const len = Number(m[1]);
    const json = kinds.slice(pos + m[0].length, pos + m[0].length + len);
    if (json.length !== len) return `a TensorDict at ${pos - 1} is cut short`;
    let shape: unknown;
    try {
      shape = JSON.parse(json);
    } catch {
      return `a TensorDict at ${pos - 1} is not JSON`;
    }
    const parsed = DICT_SHAPE.safeParse(shape);
    if (!parsed.success) return `a TensorDict at ${pos - 1} has a malformed shape`;
    for (const [, sub] of parsed.data.k) {
      const inner = layoutLeaves(sub, depth + 1);
      if (typeof inner === "string") return inner;
      if (inner.items !== 1) return `a TensorDict entry at ${pos - 1} holds ${inner.items} items, not one`;
      leaves += inner.leaves;
    }
    pos += m[0].length + len;
  }
  return { leaves, items };
}

const size = z.number().int().min(0).max(2 ** 31 - 1);
const DICT_SHAPE = z.strictObject({ b: size, s: z.array(size).optional(), k: z.array(z.tuple([z.string(), z.string()])) });
const DTYPE = z.enum(["float32", "float64", "int32", "uint32", "bool"]);
const node = size.describe("a node index");
const shape = z.array(size).max(64);
/**
 * A kernel's IR. Only its outline is spelled out here: the loader requires the
 * whole kernel to equal the one it re-derives from the graph, so the rest only
 * has to be plain data that can be compared.
 */
const KERNEL = z
  .looseObject({
    batchRank: size,
    baseShape: shape,
    inputs: z.array(z.looseObject({ dtype: DTYPE, batchRank: size, baseShape: shape })),
    outputs: z.array(z.looseObject({ dtype: DTYPE, value: size })),
    exprs: z.array(z.looseObject({ k: z.string() })),
    unroll: z.boolean(),
  })
  .refine((k) => isPlainData(k), "a kernel must be plain data (numbers, strings, booleans, null, arrays, plain objects), at most 64 deep");
const STEP = z.discriminatedUnion("kind", [
  z.strictObject({ kind: z.literal("kernel"), kernel: KERNEL, inputs: z.array(node), outputs: z.array(node).min(1), space: node }),
  z.strictObject({ kind: z.literal("view"), node, source: node }),
  z.strictObject({ kind: z.literal("copy"), node, sources: z.array(node) }),
]);
const SHIPPED = z.strictObject({
  js: z.custom<NonNullable<ShippedKernel["js"]>>((v) => typeof v === "function", "must be a function").optional(),
  wgsl: z.string().optional(),
});
const CONSTANT = z
  .strictObject({ dtype: DTYPE, batch: shape, base: shape, data: z.custom<TypedArray>((v) => ArrayBuffer.isView(v) && !(v instanceof DataView), "must be a typed array") })
  .superRefine((c, ctx) => {
    if (!(c.data instanceof ARRAY_CTOR[c.dtype])) ctx.addIssue({ code: "custom", path: ["data"], message: `must be a ${ARRAY_NAME[c.dtype]} for ${c.dtype}` });
    const n = [...c.batch, ...c.base].reduce((p, d) => p * d, 1);
    if (c.data.length !== n) ctx.addIssue({ code: "custom", path: ["data"], message: `holds ${c.data.length} values, its shape ${fmtShape(c.batch, c.base)} has ${n}` });
  });
const LAYOUT = z
  .string()
  .max(1 << 20)
  .superRefine((s, ctx) => {
    const r = layoutLeaves(s);
    if (typeof r === "string") ctx.addIssue({ code: "custom", message: `not an argument layout: ${r}` });
  });
/** The whole module (format and version are checked first, with their own messages). */
const MODULE = z.strictObject({
  format: z.literal(BUNDLE_FORMAT),
  version: z.literal(BUNDLE_VERSION),
  traced: z.enum(["js", "webgpu"]),
  fuse: z.strictObject({
    maxKernelBuffers: z.union([z.number().int().min(1), z.literal(Infinity)]),
    unrollLimit: size,
    fusion: z.boolean(),
    mixedBaseOutputs: z.boolean(),
    relaxedFloat32: z.boolean(),
  }),
  graph: z.string(),
  steps: z.array(STEP).max(1 << 20),
  kernels: z.array(SHIPPED.nullable()).max(1 << 20),
  captured: z.array(CONSTANT).max(1 << 20),
  args: LAYOUT,
  results: LAYOUT,
  multi: z.boolean(),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex digits"),
});

/** `steps[0].inputs[1]` from a schema issue's path. */
function fieldPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("") || "the module";
}

/** Validates the module's shape; the first issues name their fields. */
function validateModule(mod: unknown): BundleModule {
  let format: unknown;
  let version: unknown;
  try {
    format = (mod as { format?: unknown } | null)?.format;
    version = (mod as { version?: unknown } | null)?.version;
  } catch {
    format = undefined;
  }
  check(mod !== null && typeof mod === "object" && format === BUNDLE_FORMAT, `not a batchwise bundle (format ${typeof format === "string" ? JSON.stringify(format) : String(typeof format === "object" ? typeof format : format)})`);
  check(version === BUNDLE_VERSION, `bundle version ${typeof version === "number" ? version : JSON.stringify(String(version))}, this batchwise reads version ${BUNDLE_VERSION}${version === 1 ? " (write it again with f.bundle())" : ""}`);
  let r: ReturnType<typeof MODULE.safeParse>;
  try {
    r = MODULE.safeParse(mod);
  } catch (e) {
    throw new BundleError(`loadBundle: malformed bundle: reading it threw (${describeError(e)})`);
  }
  if (!r.success) {
    const issues = r.error.issues.slice(0, 3).map((i) => `${fieldPath(i.path)}: ${i.message}`);
    throw new BundleError(`loadBundle: malformed bundle: ${issues.join("; ")}${r.error.issues.length > 3 ? ` (and ${r.error.issues.length - 3} more)` : ""}`);
  }
  // The module itself (not zod's copy): the hash covers the kernels' functions as shipped.
  return mod as BundleModule;
}

/** The scalar fields of a validated module (the arrays are snapshotted separately). */
function pick(mod: BundleModule): Omit<BundleModule, "kernels" | "captured"> & { readonly steps: readonly BundleStep[] } {
  return { format: mod.format, version: mod.version, traced: mod.traced, fuse: { ...mod.fuse }, graph: mod.graph, steps: mod.steps, args: mod.args, results: mod.results, multi: mod.multi, sha256: mod.sha256 };
}

/** An error's message; for one that is not a BatchwiseError, its class too (a RangeError from a too-deep graph, say). */
function describeError(e: unknown): string {
  if (e instanceof BatchwiseError) return e.message;
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
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
    throw new BundleError(`loadBundle: the bundle's graph cannot be scheduled with its fusion options (${describeError(e)})`);
  }
  const index = new Map<Node, number>(order.map((n, i) => [n, i]));
  const mine = derived.steps.map((st) => mapStep(st, (n) => index.get(n)!));
  check(mine.length === mod.steps.length, `the bundle has ${mod.steps.length} steps, its graph schedules ${mine.length} (an edited graph or schedule)`);
  check(mod.kernels.length === mod.steps.length, `the bundle's ${mod.steps.length} steps and ${mod.kernels.length} kernels do not match`);
  mine.forEach((st, i) => {
    const want = canonical(st);
    const got = canonical(mod.steps[i]);
    check(want === got, `step ${i} (${mod.steps[i]!.kind}) is not the step its graph schedules (an edited graph, step or kernel IR, or reordered inputs): ${firstDifference(want, got)}`);
    const shipped = mod.kernels[i];
    if (st.kind !== "kernel") {
      check(shipped === null, `step ${i} is a ${st.kind} and ships a kernel`);
      return;
    }
    check(shipped !== null, `step ${i} is a kernel and ships none`);
    const text = kernelText(st.kernel);
    if (shipped.js !== undefined) {
      const js = jsText(shipped.js);
      check(js === jsText(text.js), `step ${i}'s JS kernel is not the code its kernel IR gives (an edited kernel, or a tool such as a minifier rewrote the module): ${firstDifference(jsText(text.js), js)}`);
    }
    if (shipped.wgsl !== undefined) {
      check(text.wgsl !== undefined, `step ${i} ships WGSL for a kernel WGSL cannot hold`);
      check(shipped.wgsl === text.wgsl, `step ${i}'s WGSL kernel is not the code its kernel IR gives (an edited kernel): ${firstDifference(text.wgsl, shipped.wgsl)}`);
    }
  });
  return derived.steps as Step[];
}

/** Arguments, results and captured constants against the graph's inputs and outputs. */
function checkLayout(mod: BundleModule, graph: Graph): void {
  const args = layoutLeaves(mod.args) as { leaves: string; items: number };
  const results = layoutLeaves(mod.results) as { leaves: string; items: number };
  const count = (leaves: string) => [...leaves].reduce((n, c) => n + (c === "j" ? 2 : 1), 0);
  const nArgs = count(args.leaves);
  check(nArgs + mod.captured.length === graph.inputs.length, `${nArgs} argument tensors and ${mod.captured.length} captured tensors for a graph of ${graph.inputs.length} inputs`);
  check(count(results.leaves) === graph.outputs.length, `the results "${mod.results}" are ${count(results.leaves)} tensors, the graph has ${graph.outputs.length} outputs`);
  check(mod.multi || results.items === 1, `a bundle returning one value (multi: false) has ${results.items} results "${mod.results}"`);
  mod.captured.forEach((c, i) => {
    const want = graph.inputs[nArgs + i]!.type;
    const ok = c.dtype === want.dtype && c.batch.length === want.batch.length && c.base.join() === want.base.join() && want.batch.every((d, j) => typeof d !== "number" || d === c.batch[j]);
    check(ok, `captured constant ${i} ${fmtShape(c.batch, c.base)} ${c.dtype} is not the graph's input ${nArgs + i} ${fmtShape(want.batch, want.base)} ${want.dtype}`);
  });
  // A jagged argument or result is (values, int32 offsets of one batch dim).
  let k = 0;
  for (const c of args.leaves) {
    if (c === "j") {
      const off = graph.inputs[k + 1]!.type;
      check(off.dtype === "int32" && off.batch.length === 1 && off.base.length === 0, `argument tensor ${k + 1} holds a jagged tensor's offsets but the graph's input is ${fmtShape(off.batch, off.base)} ${off.dtype}`);
      k += 2;
    } else k++;
  }
}

export interface LoadBundleOptions {
  /** The backend to load on (default: the current one). */
  readonly backend?: Backend;
  /**
   * The SHA-256 the caller expects (the `sha256` export of the bundle it trusts):
   * any other content is refused. Without it, the bundle's own recorded hash only
   * detects accidental or inconsistent edits (see the file comment).
   */
  readonly sha256?: string;
}

/**
 * Loads a bundle module on the current backend (or `opts.backend`) after
 * validating it (see the file comment): checks its fields, re-derives its
 * schedule from its graph, checks its kernels' sources and its SHA-256 (and the
 * caller's `opts.sha256`), then loads the shipped kernels without compiling any.
 * Asynchronous because WebCrypto and WebGPU pipeline creation are.
 */
export function loadBundle<M extends BundleModule>(mod: M, opts?: LoadBundleOptions): Promise<BundleFunctionOf<M>>;
/**
 * `loadBundle<typeof f>(mod)`: typed like the function `F` (a jit function, or the
 * traced function itself) for a module without declarations.
 */
export function loadBundle<F extends (...args: never) => unknown>(mod: BundleModule, opts?: LoadBundleOptions): Promise<BundleFunction<Parameters<F>, ReturnType<F>>>;
export async function loadBundle(mod: BundleModule, opts: LoadBundleOptions = {}): Promise<BundleFunction> {
  if (opts === null || typeof opts !== "object") throw new BundleError(`loadBundle: options must be an object, got ${opts === null ? "null" : typeof opts}`);
  const pinned = opts.sha256;
  if (pinned !== undefined && (typeof pinned !== "string" || !/^[0-9a-fA-F]{64}$/.test(pinned))) {
    throw new BundleError(`loadBundle: opts.sha256 must be 64 hex digits, got ${typeof pinned === "string" ? JSON.stringify(pinned.length > 80 ? `${pinned.slice(0, 80)}…` : pinned) : typeof pinned}`);
  }
  validateModule(mod);
  // Everything below up to the digest runs synchronously, on a snapshot of what will
  // run (the kernels' functions, the constants' values): what is checked is what runs.
  const shipped: (ShippedKernel | null)[] = mod.kernels.map((k) => (k === null ? null : { js: k.js, wgsl: k.wgsl }));
  const constants: BundleConstant[] = mod.captured.map((c) => ({ dtype: c.dtype, batch: [...c.batch], base: [...c.base], data: (c.data as TypedArray).slice() }));
  const snapshot: BundleModule = { ...pick(mod), kernels: shipped, captured: constants };
  let graph: Graph;
  try {
    graph = parseGraph(snapshot.graph);
  } catch (e) {
    throw new BundleError(`loadBundle: the bundle's graph does not parse (${describeError(e)})`);
  }
  check(printGraph(graph) === snapshot.graph, "the bundle's graph does not print back to its own text");
  const order = topoOrder(graph);
  const steps = checkSchedule(snapshot, graph, order);
  checkLayout(snapshot, graph);
  const content = bundleContent(moduleContent(snapshot));
  const digest = await sha256Hex(content);
  check(digest === snapshot.sha256, `the bundle's content does not match its recorded SHA-256 (it was edited after it was written): recorded ${snapshot.sha256}, content ${digest}`);
  check(pinned === undefined || digest === pinned.toLowerCase(), `the bundle's SHA-256 is ${digest}, not the ${pinned} the caller pinned`);
  const backend = opts.backend ?? getBackend();
  shipped.forEach((k, i) => {
    if (steps[i]!.kind !== "kernel") return;
    const has = backend.shippedKernel === "js" ? typeof k?.js === "function" : typeof k?.wgsl === "string";
    check(has, `step ${i} ships no ${backend.shippedKernel === "js" ? "JS function" : "WGSL"} kernel (the bundle was traced on ${snapshot.traced}; kernels WGSL cannot hold, such as float64 or, from a JS trace, outputs of mixed base shapes, ship JS only: trace with jit(fn, { backend }) on the backend you will load on)`);
  });
  const program = await Program.fromShipped({ graph, order, steps }, backend, shipped.map((k) => k ?? undefined));
  const captured = constants.map((c) => fromTypedArray(c.data as TypedArray, [...c.batch, ...c.base], { batchDim: c.batch.length, dtype: c.dtype }));
  const layout = { args: snapshot.args, results: snapshot.results, multi: snapshot.multi, graph: snapshot.graph };

  const bind = (args: readonly JitArg[]): BoundValue[] => {
    const { tensors, kinds } = flatten(args, "bundle");
    if (kinds !== layout.args) throw new BundleError(`bundle @${graph.name}: takes arguments "${layout.args}" (t tensor, j jagged, d TensorDict), got "${kinds}"`);
    return [...tensors, ...captured].map((t, i) => {
      const want = graph.inputs[i]!.type;
      const s = t._src;
      if (s.kind !== "buffer") throw new BundleError("bundle: internal: argument not realized");
      const got = concreteType(t);
      if (got.dtype !== want.dtype || got.batch.length !== want.batch.length || got.base.join() !== want.base.join()) {
        throw new ShapeError(`bundle @${graph.name}: argument ${i} ${fmtShape(got.batch, got.base)} ${got.dtype} does not match the traced ${fmtShape(want.batch, want.base)} ${want.dtype}`);
      }
      return { buffer: s.buffer, type: got };
    });
  };
  const finish = (out: readonly BoundValue[]) => {
    const flat = out.map((o) => Tensor._fromBuffer(o.type, o.buffer, backend));
    const results = /^t*$/.test(layout.results) ? flat : unflatten(flat, layout.results);
    return layout.multi ? results : results[0]!;
  };
  const f = ((...args: JitArg[]) => {
    for (const t of flatten(args, "bundle").tensors) realizeSync(t);
    return finish(program.run(bind(args)));
  }) as BundleFunction;
  f.callAsync = async (...args) => {
    for (const t of flatten(args, "bundle").tensors) await realize(t);
    const bound = bind(args);
    const hostValues = new Map<number, ArrayLike<number>>();
    for (const i of program.hostInputs) hostValues.set(i, await backend.read(bound[i]!.buffer));
    // runAsync: jagged offsets computed on the device are read back and checked before a segmented kernel reads them.
    return finish(await program.runAsync(bound, hostValues));
  };
  f.dump = () => layout.graph;
  Object.defineProperty(f, "backend", { value: backend });
  return f;
}
