/**
 * What every bundle loader shares (the full `loadBundle` of `batchwise`, which
 * also re-derives the schedule and the kernels' sources, and the lean one of
 * `batchwise/runtime`, which relies on a pinned hash instead): the module's
 * format and types, its canonical content and SHA-256, the schema every field
 * is validated against, the argument/result layout checks, and the function a
 * loaded bundle becomes. Nothing here imports the tracer, the passes or the
 * code generators. See src/bundle.ts for what the checks promise.
 */
import { ARRAY_CTOR, DTYPES, type DType, type TypedArray } from "../ir/dtype.js";
import { BatchwiseError, BundleError, ShapeError } from "../ir/errors.js";
import { topoOrder, type Graph, type Node } from "../ir/graph.js";
import { parseGraph } from "../ir/parse.js";
import { printGraph } from "../ir/print.js";
import type { Step, StepOf } from "../ir/schedule.js";
import { fmtShape } from "../ir/types.js";
import { KERNEL_TARGETS, type Backend, type KernelTarget, type ShippedKernel } from "../runtime/backend.js";
import { Program, type BoundValue } from "../runtime/program.js";
import { flatten, leafKinds, unflatten, unregisteredArgKinds, type JitArg } from "./args.js";
import { checkBatchesAgree } from "./trace-flags.js";
import { getBackend } from "./backend.js";
import { fromTypedArray } from "./creation.js";
import { concreteType, realize, realizeSync } from "./realize.js";
import { sha256Hex } from "./sha256.js";
import { Tensor } from "./tensor.js";
import type { JaggedTensor } from "./ragged/jagged.js";
import type { TensorDict } from "./tensordict/tensordict.js";

/** The `format` every bundle module exports. */
export const BUNDLE_FORMAT = "batchwise-bundle";
/**
 * The version bundles are written in. 3: each kernel that ships WGSL says whether it
 * reads its chunk count (`chunked`, from the code generator). 2: the fusion options
 * and the SHA-256 of the content are recorded (version 1 had neither).
 */
export const BUNDLE_VERSION = 3;
/**
 * The versions this batchwise loads: 3, and 2 (whose kernels' chunking is told from
 * their WGSL text, see `shippedFor`), with the hashes they were written with.
 */
export const BUNDLE_VERSIONS_READ = [2, 3] as const;

/** A schedule step with nodes named by their index in the graph's topological order. */
export type BundleStep = StepOf<number>;

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
  /** Always `BUNDLE_FORMAT`. */
  readonly format: string;
  /** The bundle format version (`BUNDLE_VERSION`). */
  readonly version: number;
  /** The backend the trace was fused for (its buffer limit and output grouping). */
  readonly traced: string;
  /** The options the schedule was fused with, so that the loader can re-derive it. */
  readonly fuse: BundleFuseOptions;
  /** The fused graph, as IR text. */
  readonly graph: string;
  /** The fused schedule: kernel launches, views and copies, in order. */
  readonly steps: readonly BundleStep[];
  /** Per step: the shipped kernel, or null for views and copies. */
  readonly kernels: readonly (ShippedKernel | null)[];
  /** Realized tensors the traced function closed over (the graph inputs after the arguments). */
  readonly captured: readonly BundleConstant[];
  /** Per argument and per result: "t" a tensor, "j" a jagged tensor (values and offsets), "d…" a TensorDict. */
  readonly args: string;
  /** The results' layout, coded as `args`. */
  readonly results: string;
  /** The function returned an array (else one value). */
  readonly multi: boolean;
  /**
   * Present (true) when the trace took reverse-mode derivatives: calls whose plain
   * arguments broadcast batch dims against each other are refused (src/trace-flags.ts).
   */
  readonly batchesAgree?: boolean;
  /** SHA-256 (64 lowercase hex digits) of `bundleContent` of the other fields. */
  readonly sha256: string;
}

/**
 * The canonical text of plain data: keys sorted, undefined fields dropped,
 * numbers written so that NaN, ±Infinity and -0 stay distinct, typed arrays as
 * arrays. Injective on the data a (validated) bundle holds.
 */
export function canonical(v: unknown): string {
  if (typeof v === "number") return Object.is(v, -0) ? "-0" : String(v);
  if (typeof v === "string" || typeof v === "boolean" || v === null) return JSON.stringify(v);
  if (v === undefined) return "undefined";
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (ArrayBuffer.isView(v)) return `[${Array.from(v as unknown as ArrayLike<number>, canonical).join(",")}]`;
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(",")}}`;
  }
  throw new BundleError(`bundle: cannot encode a ${typeof v}`);
}

/**
 * A JS kernel's text as compared and hashed: with whitespace and semicolons
 * removed, so that tools that only reformat a module keep it valid (Vite's module
 * transform, for one, inserts semicolons after blocks).
 */
export function jsText(fnOrSource: unknown): string {
  const text = typeof fnOrSource === "function" ? Function.prototype.toString.call(fnOrSource) : String(fnOrSource);
  return text.replace(/[\s;]+/g, "");
}

/** A shipped kernel's content for hashing: its code per target as text, and its `chunked` flag (format 3). */
export type KernelText = { readonly [T in KernelTarget]?: string } & { readonly chunked?: boolean };

/** A shipped kernel (or its text) as hashed: every target's code as its text (`TARGET[t].text`). */
export function kernelContent(k: ShippedKernel | KernelText): KernelText {
  const text: { [T in KernelTarget]?: string } = {};
  for (const t of KERNEL_TARGETS) if (k[t] !== undefined) text[t] = TARGET[t].text(k[t]);
  return { ...text, chunked: k.chunked };
}

/** The fields the SHA-256 covers (everything but `sha256`), kernels as their source text. */
export type Content = Omit<BundleModule, "sha256" | "kernels"> & { readonly kernels: readonly (KernelText | null)[] };

/** The canonical encoding of a bundle's content, whose SHA-256 the bundle records. */
export function bundleContent(c: Content): string {
  const fields: Record<string, unknown> = {
    format: c.format,
    version: c.version,
    traced: c.traced,
    fuse: c.fuse,
    graph: c.graph,
    steps: c.steps,
    kernels: c.kernels,
    captured: c.captured,
    args: c.args,
    results: c.results,
    multi: c.multi,
    batchesAgree: c.batchesAgree,
  };
  return canonical(fields);
}

/** The content of a (validated) bundle module: kernels' JS functions as their source text. */
export function moduleContent(mod: BundleModule): Content {
  // A format-2 kernel has no `chunked` (undefined fields are not encoded): its hash is the one it was written with.
  const kernels = mod.kernels.map((k) => (k === null ? null : kernelContent(k)));
  return {
    format: mod.format,
    version: mod.version,
    traced: mod.traced,
    fuse: mod.fuse,
    graph: mod.graph,
    steps: mod.steps,
    kernels,
    captured: mod.captured,
    args: mod.args,
    results: mod.results,
    multi: mod.multi,
    batchesAgree: mod.batchesAgree,
  };
}

/** The typed array type holding each dtype's values, by name (Float32Array for float32, Uint8Array for bool, …). */
export const ARRAY_NAME: { readonly [D in DType]: string } = Object.fromEntries(
  DTYPES.map((d) => [d, ARRAY_CTOR[d].name]),
) as { readonly [D in DType]: string };

/** A loaded bundle: call it like the jit function it came from (typed `(...args: A) => R` from its declarations). */
export interface BundleFunction<A extends readonly unknown[] = JitArg[], R = JitArg | JitArg[]> {
  (...args: A): R;
  /** Async variant, needed on WebGPU. */
  callAsync(...args: A): Promise<R>;
  /** The fused graph's IR text. */
  dump(): string;
  /** The backend the function runs on. */
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
      M extends {
        /** The argument layout (`BundleArgs`). */
        readonly args: {
          /** The traced function's parameter types. */
          readonly "~args"?: infer A;
        };
      }
        ? A extends readonly unknown[]
          ? A
          : JitArg[]
        : JitArg[],
      M extends {
        /** The result layout (`BundleResults`). */
        readonly results: {
          /** The traced function's result type. */
          readonly "~results"?: infer R;
        };
      }
        ? unknown extends R
          ? JitArg | JitArg[]
          : R
        : JitArg | JitArg[]
    >;

export function check(ok: boolean, why: string): asserts ok {
  if (!ok) throw new BundleError(`loadBundle: ${why}`);
}

/** Plain data a kernel IR may hold: numbers (any), strings, booleans, null, arrays, plain objects; bounded depth and size. */
export function isPlainData(v: unknown): boolean {
  return plainCopy(v) !== NOT_PLAIN;
}

/**
 * The leaf codes ("t", "j") of an argument/result layout string (see args.ts), or
 * an explanation of why it is not one. Each `d<n>:<json>` item must hold valid JSON
 * `{"b": batch rank, "s"?: sizes, "k": [[key, one item], ...]}`.
 */
export function layoutLeaves(kinds: string, depth = 0): { leaves: string; items: number } | string {
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
    if (!isDictShape(shape)) return `a TensorDict at ${pos - 1} has a malformed shape`;
    for (const [, sub] of shape.k) {
      const inner = layoutLeaves(sub, depth + 1);
      if (typeof inner === "string") return inner;
      if (inner.items !== 1) return `a TensorDict entry at ${pos - 1} holds ${inner.items} items, not one`;
      leaves += inner.leaves;
    }
    pos += m[0].length + len;
  }
  return { leaves, items };
}

const SIZE_MAX = 2 ** 31 - 1;
/** A size or a node number: an integer in [0, 2^31 - 1]. */
export const isSize = (v: unknown): v is number =>
  Number.isInteger(v) && (v as number) >= 0 && (v as number) <= SIZE_MAX;

/** A TensorDict's shape in a layout: `{"b": batch rank, "s"?: sizes, "k": [[key, one item], ...]}`, nothing else. */
function isDictShape(v: unknown): v is { readonly k: readonly (readonly [string, string])[] } {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return (
    Object.keys(o).every((k) => k === "b" || k === "s" || k === "k") &&
    isSize(o.b) &&
    (o.s === undefined || (Array.isArray(o.s) && o.s.every(isSize))) &&
    Array.isArray(o.k) &&
    o.k.every((e) => Array.isArray(e) && e.length === 2 && typeof e[0] === "string" && typeof e[1] === "string")
  );
}

const NOT_PLAIN = Symbol("not plain data");

/**
 * A deep copy of plain data (numbers, strings, booleans, null, arrays, plain
 * objects; object fields that are undefined are dropped), or NOT_PLAIN for
 * anything else, or past a million values or 64 levels. Reading each value once
 * into a copy means that what is checked and hashed is what runs.
 */
function plainCopy(v: unknown, budget = { nodes: 1_000_000 }, depth = 0): unknown {
  if (--budget.nodes < 0 || depth > 64) return NOT_PLAIN;
  if (v === null || typeof v === "number" || typeof v === "string" || typeof v === "boolean") return v;
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (let i = 0; i < v.length; i++) {
      const x = plainCopy(v[i], budget, depth + 1);
      if (x === NOT_PLAIN) return NOT_PLAIN;
      out.push(x);
    }
    return out;
  }
  if (typeof v !== "object" || Object.getPrototypeOf(v) !== Object.prototype) return NOT_PLAIN;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k];
    if (x === undefined) continue;
    const c = plainCopy(x, budget, depth + 1);
    if (c === NOT_PLAIN) return NOT_PLAIN;
    out[k] = c;
  }
  return out;
}

/**
 * Per shipped-kernel target: what its code must be (checked before hashing: the
 * canonical encoding hashes a function and its source text alike) and what messages
 * call it. A new `KernelTarget` fails tsc here until it has an entry.
 */
export const TARGET: {
  readonly [T in KernelTarget]: {
    readonly valid: (v: unknown) => boolean;
    readonly must: string;
    readonly what: string;
    /** The code as the hash covers it (a JS function: its source, `jsText`). */
    readonly text: (v: unknown) => string;
  };
} = {
  js: { valid: (v) => typeof v === "function", must: "must be a function", what: "JS function", text: jsText },
  wgsl: { valid: (v) => typeof v === "string", must: "must be a string", what: "WGSL", text: String },
};

/** The fields of a shipped kernel: one per target, and `chunked`. */
const KERNEL_KEYS: readonly string[] = [...KERNEL_TARGETS, "chunked"];

const MODULE_KEYS = [
  "format",
  "version",
  "traced",
  "fuse",
  "graph",
  "steps",
  "kernels",
  "captured",
  "args",
  "results",
  "multi",
  "batchesAgree",
  "sha256",
] as const;

/**
 * A copy of a bundle module (`checkFormat` passed) as the loaders check, hash and
 * run it, or why none can be taken. Besides its outline, it checks what the
 * canonical encoding (and so the SHA-256) cannot tell apart: a captured
 * constant's values must be a typed array of its dtype's own type and length (an
 * array or another typed array of the same numbers hashes the same), a JS kernel
 * a function (its source text hashes the same), and everything else plain data
 * (an array and a typed array of the same numbers hash the same). The rest of
 * the content is vouched for by the hash (batchwise/runtime) or re-derived from
 * the graph (the full loader, which also runs the schema of bundle-schema.ts).
 */
export function snapshotOf(mod: BundleModule): BundleModule | string {
  const m = mod as unknown as Record<string, unknown>;
  const extra = Object.keys(m).filter((k) => !(MODULE_KEYS as readonly string[]).includes(k));
  if (extra.length > 0) return `unknown export ${JSON.stringify(extra[0])}`;
  for (const k of ["traced", "graph", "args", "results"] as const)
    if (typeof m[k] !== "string") return `${k} must be a string`;
  if (typeof m.multi !== "boolean") return "multi must be a boolean";
  if (m.batchesAgree !== undefined && m.batchesAgree !== true) return "batchesAgree must be true when present";
  if (typeof m.sha256 !== "string" || !/^[0-9a-f]{64}$/.test(m.sha256)) return "sha256 must be 64 lowercase hex digits";
  for (const k of ["args", "results"] as const) {
    const r = layoutLeaves(m[k] as string);
    if (typeof r === "string") return `${k}: not an argument layout: ${r}`;
  }
  const fuse = plainCopy(m.fuse);
  if (fuse === NOT_PLAIN || fuse === null || typeof fuse !== "object" || Array.isArray(fuse))
    return "fuse must be an object of plain data";
  const steps = plainCopy(m.steps);
  if (!Array.isArray(steps)) return "steps must be an array of plain data";
  if (!Array.isArray(m.kernels)) return "kernels must be an array";
  const kernels: (ShippedKernel | null)[] = [];
  for (const [i, k] of (m.kernels as unknown[]).entries()) {
    if (k === null) {
      kernels.push(null);
      continue;
    }
    if (k === undefined || typeof k !== "object" || Object.keys(k).some((key) => !KERNEL_KEYS.includes(key)))
      return `kernels[${i}] must be null or { ${KERNEL_KEYS.map((key) => `${key}?`).join(", ")} }`;
    const shipped = k as ShippedKernel;
    for (const t of KERNEL_TARGETS)
      if (shipped[t] !== undefined && !TARGET[t].valid(shipped[t])) return `kernels[${i}].${t} ${TARGET[t].must}`;
    const { wgsl, chunked } = shipped;
    if (chunked !== undefined && typeof chunked !== "boolean") return `kernels[${i}].chunked must be a boolean`;
    if (m.version === 2 && chunked !== undefined)
      return `kernels[${i}].chunked is a field of bundle version 3, this bundle says version 2`;
    if (m.version !== 2 && (wgsl === undefined) !== (chunked === undefined))
      return `kernels[${i}]: ${wgsl === undefined ? "chunked without wgsl" : "wgsl without chunked (true when the WGSL reads its chunk count)"}`;
    // Every target's code, read once: what is checked and hashed is what runs.
    kernels.push(Object.assign({ chunked }, ...KERNEL_TARGETS.map((t) => ({ [t]: shipped[t] }))) as ShippedKernel);
  }
  if (!Array.isArray(m.captured)) return "captured must be an array";
  const captured: BundleConstant[] = [];
  for (const [i, c] of (m.captured as unknown[]).entries()) {
    if (c === null || typeof c !== "object") return `captured[${i}] must be an object`;
    const { dtype, data } = c as BundleConstant;
    const batch = plainCopy((c as BundleConstant).batch);
    const base = plainCopy((c as BundleConstant).base);
    if (!(typeof dtype === "string" && Object.prototype.hasOwnProperty.call(ARRAY_CTOR, dtype)))
      return `captured[${i}].dtype must be a dtype`;
    if (!Array.isArray(batch) || !batch.every(isSize) || !Array.isArray(base) || !base.every(isSize))
      return `captured[${i}]: batch and base must be arrays of sizes`;
    if (!(data instanceof ARRAY_CTOR[dtype])) return `captured[${i}].data must be a ${ARRAY_NAME[dtype]} for ${dtype}`;
    const n = [...batch, ...base].reduce((p: number, d: number) => p * d, 1);
    if (data.length !== n)
      return `captured[${i}].data holds ${data.length} values, its shape ${fmtShape(batch, base)} has ${n}`;
    // A copy in an array of the dtype's own type: `slice` would not copy a Node Buffer (a uint8 or
    // bool constant may be one), and what is checked and hashed must be what runs.
    captured.push({ dtype, batch, base, data: new ARRAY_CTOR[dtype](data) });
  }
  return {
    format: m.format as string,
    version: m.version as number,
    traced: m.traced as string,
    fuse: fuse as BundleFuseOptions,
    graph: m.graph as string,
    steps: steps as BundleStep[],
    kernels,
    captured,
    args: m.args as string,
    results: m.results as string,
    multi: m.multi,
    batchesAgree: m.batchesAgree === true ? true : undefined,
    sha256: m.sha256,
  };
}

/** Checks the module's format and version (before anything else is read), with their own messages. */
export function checkFormat(mod: unknown): void {
  let format: unknown;
  let version: unknown;
  try {
    format = (mod as { format?: unknown } | null)?.format;
    version = (mod as { version?: unknown } | null)?.version;
  } catch {
    format = undefined;
  }
  check(
    mod !== null && typeof mod === "object" && format === BUNDLE_FORMAT,
    `not a batchwise bundle (format ${typeof format === "string" ? JSON.stringify(format) : String(typeof format === "object" ? typeof format : format)})`,
  );
  check(
    (BUNDLE_VERSIONS_READ as readonly unknown[]).includes(version),
    `bundle version ${typeof version === "number" ? version : JSON.stringify(String(version))}, this batchwise reads versions ${BUNDLE_VERSIONS_READ.join(" and ")}${version === 1 ? " (write it again with f.bundle())" : ""}`,
  );
}

/** An error's message; for one that is not a BatchwiseError, its class too (a RangeError from a too-deep graph, say). */
export function describeError(e: unknown): string {
  if (e instanceof BatchwiseError) return e.message;
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

/** Arguments, results and captured constants against the graph's inputs and outputs. */
export function checkLayout(mod: BundleModule, graph: Graph): void {
  const args = layoutLeaves(mod.args) as { leaves: string; items: number };
  const results = layoutLeaves(mod.results) as { leaves: string; items: number };
  const count = (leaves: string) => [...leaves].reduce((n, c) => n + (c === "j" ? 2 : 1), 0);
  const nArgs = count(args.leaves);
  check(
    nArgs + mod.captured.length === graph.inputs.length,
    `${nArgs} argument tensors and ${mod.captured.length} captured tensors for a graph of ${graph.inputs.length} inputs`,
  );
  check(
    count(results.leaves) === graph.outputs.length,
    `the results "${mod.results}" are ${count(results.leaves)} tensors, the graph has ${graph.outputs.length} outputs`,
  );
  check(
    mod.multi || results.items === 1,
    `a bundle returning one value (multi: false) has ${results.items} results "${mod.results}"`,
  );
  mod.captured.forEach((c, i) => {
    const want = graph.inputs[nArgs + i]!.type;
    const ok =
      c.dtype === want.dtype &&
      c.batch.length === want.batch.length &&
      c.base.join() === want.base.join() &&
      want.batch.every((d, j) => typeof d !== "number" || d === c.batch[j]);
    check(
      ok,
      `captured constant ${i} ${fmtShape(c.batch, c.base)} ${c.dtype} is not the graph's input ${nArgs + i} ${fmtShape(want.batch, want.base)} ${want.dtype}`,
    );
  });
  // A jagged argument or result is (values, int32 offsets of one batch dim).
  let k = 0;
  for (const c of args.leaves) {
    if (c === "j") {
      const off = graph.inputs[k + 1]!.type;
      check(
        off.dtype === "int32" && off.batch.length === 1 && off.base.length === 0,
        `argument tensor ${k + 1} holds a jagged tensor's offsets but the graph's input is ${fmtShape(off.batch, off.base)} ${off.dtype}`,
      );
      k += 2;
    } else k++;
  }
}

/**
 * A shipped kernel as the backend loads it. Format 2 has no `chunked` flag: the only
 * way to tell whether its WGSL reads the chunk count is its text (the WGSL printer names
 * that value `chunks`, codegen/wgsl.ts); WGSL written before chunking existed does not,
 * and WebGPU refuses such a kernel where the launch needs chunks.
 */
export function shippedFor(version: number, k: ShippedKernel): ShippedKernel {
  if (version !== 2 || k.wgsl === undefined) return k;
  return { ...k, chunked: k.wgsl.includes("let chunks = ") };
}

/** Options of `loadBundle`. */
export interface LoadBundleOptions {
  /** The backend to load on (default: the current one). */
  readonly backend?: Backend;
  /**
   * The SHA-256 the caller expects (the `sha256` export of the bundle it trusts):
   * any other content is refused. Without it, the bundle's own recorded hash only
   * detects accidental or inconsistent edits. `batchwise/runtime` requires it.
   */
  readonly sha256?: string;
  /**
   * The classes beyond `Tensor` that the bundle takes or returns (`JaggedTensor`,
   * `TensorDict`), for `batchwise/runtime`: it loads their code only where a page
   * uses them, and naming them here is such a use, so a bundler keeps them. A bundle
   * whose layout needs a class the page has not loaded is refused with a
   * BundleError that names it. The full `batchwise` entry always has both.
   */
  readonly kinds?: readonly (typeof JaggedTensor | typeof TensorDict)[];
}

/** A module that passed the schema, snapshotted, with its graph parsed. */
export interface ReadBundle {
  /** A copy of what will run (the kernels' functions, the constants' values): what is checked is what runs. */
  readonly snapshot: BundleModule;
  readonly shipped: readonly (ShippedKernel | null)[];
  readonly constants: readonly BundleConstant[];
  readonly graph: Graph;
  /** The graph's nodes in topological order: a step's node `i` is `order[i]`. */
  readonly order: readonly Node[];
  /** The caller's `opts.sha256`, if given (checked to be 64 hex digits). */
  readonly pinned: string | undefined;
}

/** The caller's `opts.sha256`, if given (checked to be 64 hex digits), once `opts` is checked. */
export function checkOptions(opts: LoadBundleOptions): string | undefined {
  if (opts === null || typeof opts !== "object")
    throw new BundleError(`loadBundle: options must be an object, got ${opts === null ? "null" : typeof opts}`);
  const pinned = opts.sha256;
  if (pinned !== undefined && (typeof pinned !== "string" || !/^[0-9a-fA-F]{64}$/.test(pinned))) {
    throw new BundleError(
      `loadBundle: opts.sha256 must be 64 hex digits, got ${typeof pinned === "string" ? JSON.stringify(pinned.length > 80 ? `${pinned.slice(0, 80)}…` : pinned) : typeof pinned}`,
    );
  }
  if (opts.kinds !== undefined && !(Array.isArray(opts.kinds) && opts.kinds.every((k) => typeof k === "function")))
    throw new BundleError("loadBundle: opts.kinds must be an array of classes (JaggedTensor, TensorDict)");
  return pinned;
}

/** The last of the first checks of every loader: the snapshot's graph must parse and print back to its own text. */
export function parseBundle(snapshot: BundleModule, pinned: string | undefined): ReadBundle {
  let graph: Graph;
  try {
    graph = parseGraph(snapshot.graph);
  } catch (e) {
    throw new BundleError(`loadBundle: the bundle's graph does not parse (${describeError(e)})`);
  }
  check(printGraph(graph) === snapshot.graph, "the bundle's graph does not print back to its own text");
  return {
    snapshot,
    shipped: snapshot.kernels,
    constants: snapshot.captured,
    graph,
    order: topoOrder(graph),
    pinned,
  };
}

/** The snapshot's SHA-256 (WebCrypto) against its recorded hash and the caller's pin. */
export async function checkHash(b: ReadBundle): Promise<void> {
  const { snapshot, pinned } = b;
  const digest = await sha256Hex(bundleContent(moduleContent(snapshot)));
  check(
    digest === snapshot.sha256,
    `the bundle's content does not match its recorded SHA-256 (it was edited after it was written): recorded ${snapshot.sha256}, content ${digest}`,
  );
  check(
    pinned === undefined || digest === pinned.toLowerCase(),
    `the bundle's SHA-256 is ${digest}, not the ${pinned} the caller pinned`,
  );
}

/**
 * The last step of every loader, once the bundle passed its checks: loads the
 * shipped kernels of `steps` on the backend (no compiling) and returns the
 * function that binds arguments, runs the program and shapes the results.
 */
export async function bundleFunction(
  b: ReadBundle,
  steps: readonly Step[],
  backend: Backend = getBackend(),
): Promise<BundleFunction> {
  const { snapshot, shipped, constants, graph, order } = b;
  const missing = unregisteredArgKinds(snapshot.args + snapshot.results);
  check(
    missing.length === 0,
    `the bundle takes or returns ${missing.map((c) => `${c}s`).join(" and ")} (arguments "${snapshot.args}", results "${snapshot.results}"), which this page has not loaded: import { ${missing.join(", ")} } from "batchwise/runtime" and name ${missing.length > 1 ? "them" : "it"} in the options, loadBundle(mod, { sha256, kinds: [${missing.join(", ")}] })`,
  );
  shipped.forEach((k, i) => {
    if (steps[i]!.kind !== "kernel") return;
    check(
      k?.[backend.shippedKernel] !== undefined,
      `step ${i} ships no ${TARGET[backend.shippedKernel].what} kernel (the bundle was traced on ${snapshot.traced}; kernels WGSL cannot hold, such as float64 or, from a JS trace, outputs of mixed base shapes, ship JS only: trace with jit(fn, { backend }) on the backend you will load on)`,
    );
  });
  const program = await Program.fromShipped(
    { graph, order, steps: steps as Step[] },
    backend,
    shipped.map((k) => (k === null ? undefined : shippedFor(snapshot.version, k))),
  );
  const captured = constants.map((c) =>
    fromTypedArray(c.data as TypedArray, [...c.batch, ...c.base], { batchDim: c.batch.length, dtype: c.dtype }),
  );
  const layout = { args: snapshot.args, results: snapshot.results, multi: snapshot.multi, graph: snapshot.graph };

  const leaves = snapshot.batchesAgree === true ? leafKinds(layout.args) : undefined;
  const bind = (args: readonly JitArg[]): BoundValue[] => {
    const { tensors, kinds } = flatten(args, "bundle");
    if (kinds !== layout.args)
      throw new BundleError(
        `bundle @${graph.name}: takes arguments "${layout.args}" (t tensor, j jagged, d TensorDict), got "${kinds}"`,
      );
    if (leaves !== undefined) checkBatchesAgree(`bundle @${graph.name}`, leaves, tensors);
    return [...tensors, ...captured].map((t, i) => {
      const want = graph.inputs[i]!.type;
      const s = t._src;
      if (s.kind !== "buffer") throw new BundleError("bundle: internal: argument not realized");
      const got = concreteType(t);
      if (got.dtype !== want.dtype || got.batch.length !== want.batch.length || got.base.join() !== want.base.join()) {
        throw new ShapeError(
          `bundle @${graph.name}: argument ${i} ${fmtShape(got.batch, got.base)} ${got.dtype} does not match the traced ${fmtShape(want.batch, want.base)} ${want.dtype}`,
        );
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
