/**
 * The bundle schema (zod/mini): every field of a bundle module, its kind, and
 * messages that name the field. The full `loadBundle` validates every module with
 * it; `batchwise/runtime`, whose own gate is the caller's pinned SHA-256, loads
 * this file (a dynamic import, so not part of its page) only to explain a module
 * that failed its checks.
 */
import * as z from "zod/mini";
import { ARRAY_CTOR, DTYPES, type DType, type TypedArray } from "../ir/dtype.js";
import { BundleError } from "../ir/errors.js";
import { fmtShape } from "../ir/types.js";
import type { KernelTarget, ShippedKernel } from "../runtime/backend.js";
import { BACKEND_NAMES } from "../runtime/backend-name.js";
import {
  ARRAY_NAME,
  BUNDLE_FORMAT,
  BUNDLE_VERSIONS_READ,
  checkFormat,
  checkOptions,
  describeError,
  isPlainData,
  layoutLeaves,
  parseBundle,
  snapshotOf,
  TARGET,
  type BundleModule,
  type LoadBundleOptions,
  type ReadBundle,
} from "./bundle-load.js";

/**
 * The schemas (zod/mini), built on first use so that a page that only writes
 * bundles does not carry them.
 */
function buildSchemas() {
  const size = z.int().check(z.minimum(0), z.maximum(2 ** 31 - 1));
  const dtype = z.enum(DTYPES as [DType, ...DType[]]);
  const node = size;
  const shape = z.array(size).check(z.maxLength(64));
  /*
   * A kernel's IR. Only its outline is spelled out here: the full loader requires
   * the whole kernel to equal the one it re-derives from the graph (the lean one,
   * that its hash is the pinned one), so the rest only has to be plain data.
   */
  const kernel = z
    .looseObject({
      batchRank: size,
      baseShape: shape,
      inputs: z.array(z.looseObject({ dtype, batchRank: size, baseShape: shape })),
      outputs: z.array(z.looseObject({ dtype, value: size })),
      exprs: z.array(z.looseObject({ k: z.string() })),
      unroll: z.boolean(),
    })
    .check(
      z.refine(
        (k) => isPlainData(k),
        "a kernel must be plain data (numbers, strings, booleans, null, arrays, plain objects), at most 64 deep",
      ),
    );
  const step = z.discriminatedUnion("kind", [
    z.strictObject({
      kind: z.literal("kernel"),
      kernel,
      inputs: z.array(node),
      outputs: z.array(node).check(z.minLength(1)),
      space: node,
    }),
    z.strictObject({ kind: z.literal("view"), node, source: node }),
    z.strictObject({ kind: z.literal("copy"), node, sources: z.array(node) }),
  ]);
  // One field per shipped code target (KERNEL_TARGETS), validated by its TARGET entry: a new
  // target fails tsc here until it has its field.
  const code = <T extends KernelTarget>(t: T) =>
    z.optional(z.custom<NonNullable<ShippedKernel[T]>>((v) => TARGET[t].valid(v), TARGET[t].must));
  const codeFields = { js: code("js"), wgsl: code("wgsl") } satisfies { readonly [T in KernelTarget]: unknown };
  const shipped = z.strictObject({ ...codeFields, chunked: z.optional(z.boolean()) });
  const constant = z
    .strictObject({
      dtype,
      batch: shape,
      base: shape,
      data: z.custom<TypedArray>((v) => ArrayBuffer.isView(v) && !(v instanceof DataView), "must be a typed array"),
    })
    .check(
      z.superRefine((c, ctx) => {
        if (!(c.data instanceof ARRAY_CTOR[c.dtype]))
          ctx.addIssue({
            code: "custom",
            path: ["data"],
            message: `must be a ${ARRAY_NAME[c.dtype]} for ${c.dtype}`,
            input: c.data,
          });
        const n = [...c.batch, ...c.base].reduce((p, d) => p * d, 1);
        if (c.data.length !== n)
          ctx.addIssue({
            code: "custom",
            path: ["data"],
            message: `holds ${c.data.length} values, its shape ${fmtShape(c.batch, c.base)} has ${n}`,
            input: c.data,
          });
      }),
    );
  const layout = z.string().check(
    z.maxLength(1 << 20),
    z.superRefine((s, ctx) => {
      const r = layoutLeaves(s);
      if (typeof r === "string") ctx.addIssue({ code: "custom", message: `not an argument layout: ${r}`, input: s });
    }),
  );
  /** The whole module (format and version are checked first, with their own messages). */
  const module = z.strictObject({
    format: z.literal(BUNDLE_FORMAT),
    version: z.literal(BUNDLE_VERSIONS_READ),
    traced: z.enum(BACKEND_NAMES),
    fuse: z.strictObject({
      maxKernelBuffers: z.union([z.int().check(z.minimum(1)), z.literal(Infinity)]),
      unrollLimit: size,
      fusion: z.boolean(),
      mixedBaseOutputs: z.boolean(),
      relaxedFloat32: z.boolean(),
    }),
    graph: z.string(),
    steps: z.array(step).check(z.maxLength(1 << 20)),
    kernels: z.array(z.nullable(shipped)).check(z.maxLength(1 << 20)),
    captured: z.array(constant).check(z.maxLength(1 << 20)),
    args: layout,
    results: layout,
    multi: z.boolean(),
    batchesAgree: z.optional(z.literal(true)),
    sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex digits")),
  });
  return { module };
}
type Schemas = ReturnType<typeof buildSchemas>;
let built: Schemas | undefined;
function schemas(): Schemas {
  return (built ??= buildSchemas());
}

/** What a value is, for messages: "null", "array", else its typeof. */
function kindOf(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

/**
 * A schema issue as a sentence. zod/mini ships no message locale (its issues
 * say "Invalid input"), so the common codes are spelled out here; custom
 * checks carry their own message.
 */
function issueMessage(i: z.core.$ZodIssue, mod: unknown): string {
  if (i.message !== "Invalid input" && i.message !== "") return i.message;
  switch (i.code) {
    case "invalid_type": {
      let v: unknown = mod;
      try {
        for (const k of i.path) v = (v as Record<PropertyKey, unknown> | undefined)?.[k];
      } catch {
        v = undefined;
      }
      return `Invalid input: expected ${i.expected}, received ${kindOf(v)}`;
    }
    case "too_small":
      return `too small: expected ${i.origin === "array" || i.origin === "string" ? "length " : ""}>= ${String(i.minimum)}`;
    case "too_big":
      return `too big: expected ${i.origin === "array" || i.origin === "string" ? "length " : ""}<= ${String(i.maximum)}`;
    case "invalid_value":
      return `must be ${i.values.map((v) => (typeof v === "string" ? JSON.stringify(v) : String(v))).join(" or ")}`;
    case "unrecognized_keys":
      return `unknown key${i.keys.length > 1 ? "s" : ""} ${i.keys.map((k) => JSON.stringify(k)).join(", ")}`;
    case "invalid_union":
      return "matches none of the allowed forms";
    default:
      return i.message;
  }
}

/** `steps[0].inputs[1]` from a schema issue's path. */
function fieldPath(path: readonly PropertyKey[]): string {
  return (
    path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("") ||
    "the module"
  );
}

/**
 * Validates the module against the bundle schema (after `checkFormat`); the
 * first issues name their fields. The full loader runs it on every module;
 * batchwise/runtime imports this file only when a module fails its own checks,
 * to say which fields are wrong in the same words.
 */
export function validateModule(mod: unknown): BundleModule {
  checkFormat(mod);
  let r: ReturnType<Schemas["module"]["safeParse"]>;
  try {
    r = schemas().module.safeParse(mod);
  } catch (e) {
    throw new BundleError(`loadBundle: malformed bundle: reading it threw (${describeError(e)})`);
  }
  if (!r.success) {
    const issues = r.error.issues.slice(0, 3).map((i) => `${fieldPath(i.path)}: ${issueMessage(i, mod)}`);
    throw new BundleError(
      `loadBundle: malformed bundle: ${issues.join("; ")}${r.error.issues.length > 3 ? ` (and ${r.error.issues.length - 3} more)` : ""}`,
    );
  }
  // The module itself (not zod's copy): the hash covers the kernels' functions as shipped.
  return mod as BundleModule;
}

/**
 * The first checks of the full loader: the options, the module's schema, a
 * snapshot of it (`snapshotOf`), and its graph, which must parse and print back
 * to its own text.
 */
export function readBundle(mod: BundleModule, opts: LoadBundleOptions): ReadBundle {
  const pinned = checkOptions(opts);
  validateModule(mod);
  const snapshot = snapshotOf(mod);
  if (typeof snapshot === "string") throw new BundleError(`loadBundle: malformed bundle: ${snapshot}`);
  return parseBundle(snapshot, pinned);
}
