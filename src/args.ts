/**
 * The arguments and results of compiled functions (jit, bundles): tensors,
 * jagged tensors and TensorDicts, flattened to tensors.
 *
 * `kinds` describes the items, one code each, and is part of the trace key:
 * - `t`: a tensor;
 * - `j`: a jagged tensor (two tensors: values, offsets);
 * - `d<n>:<json>`: a TensorDict, `<json>` (n characters) being
 *   `{"b": batch rank, "k": [[key, kinds], ...]}` (its entries' tensors follow
 *   in key order, nested dicts inline). The batch size is read off the first
 *   tensor, so no size enters the trace key; only a dict with no tensors under
 *   it records its size (`"s"`).
 */
import { isDType } from "../ir/dtype.js";
import { DTypeError, TraceError } from "../ir/errors.js";
import { describe } from "./check.js";
import type { JaggedTensor } from "./ragged/jagged.js";
import { Tensor } from "./tensor.js";
import type { TensorDict } from "./tensordict/tensordict.js";

/** What a compiled function takes and returns. */
export type JitArg = Tensor | JaggedTensor | TensorDict;

interface DictShape {
  readonly b: number;
  /** The batch size, recorded only for a dict with no tensors under it. */
  readonly s?: readonly number[];
  readonly k: readonly (readonly [string, string])[];
}

/**
 * How jagged tensors flatten to tensors and back. Registered by src/ragged/jagged.ts
 * when it loads (not imported from here), so that a page that only runs bundles of
 * plain tensors through `batchwise/runtime` does not carry the ragged code.
 */
export interface JaggedArgKind {
  readonly is: (a: unknown) => a is JaggedTensor;
  readonly make: (values: Tensor, offsets: Tensor) => JaggedTensor;
}

/** How TensorDicts flatten and unflatten; registered by src/tensordict/tensordict.ts (see `JaggedArgKind`). */
export interface DictArgKind {
  readonly is: (a: unknown) => a is TensorDict;
  /** A dict of `size` holding `entries` in this order. */
  readonly make: (size: readonly number[], entries: readonly (readonly [string, JitArg])[]) => TensorDict;
  /** The batch sizes an entry shows a dict (a jagged entry's ragged dim is NaN). */
  readonly entryBatch: (v: JitArg) => readonly number[];
}

const registered: { jagged?: JaggedArgKind; dict?: DictArgKind } = {};

/** Registers the flattening of jagged tensors (src/ragged/jagged.ts does, when it loads). */
export function registerJaggedArgKind(k: JaggedArgKind): void {
  registered.jagged = k;
}

/** Registers the flattening of TensorDicts (src/tensordict/tensordict.ts does, when it loads). */
export function registerDictArgKind(k: DictArgKind): void {
  registered.dict = k;
}

/** Each item code of a `kinds` string (`t`, `j`, `d`), TensorDicts' entries included. */
function itemCodes(kinds: string, out = new Set<string>()): Set<string> {
  for (let pos = 0; pos < kinds.length;) {
    const c = kinds[pos++]!;
    out.add(c);
    if (c !== "d") continue;
    const colon = kinds.indexOf(":", pos);
    const len = Number(kinds.slice(pos, colon));
    const shape = JSON.parse(kinds.slice(colon + 1, colon + 1 + len)) as DictShape;
    for (const [, sub] of shape.k) itemCodes(sub, out);
    pos = colon + 1 + len;
  }
  return out;
}

/**
 * The classes a `kinds` string needs whose flattening is not registered on this
 * page (`JaggedTensor`, `TensorDict`): empty with the full `batchwise` entry, which
 * loads both. `kinds` must be well formed (checked by the bundle loaders first).
 */
export function unregisteredArgKinds(kinds: string): string[] {
  const codes = itemCodes(kinds);
  const out: string[] = [];
  if (codes.has("j") && registered.jagged === undefined) out.push("JaggedTensor");
  if (codes.has("d") && registered.dict === undefined) out.push("TensorDict");
  return out;
}

function flattenOne(a: unknown, tensors: Tensor[], who: string, where = "an argument"): string {
  const { jagged, dict } = registered;
  if (jagged?.is(a) === true) {
    tensors.push(a.values, a.offsets);
    return "j";
  }
  if (a instanceof Tensor) {
    tensors.push(a);
    return "t";
  }
  if (dict?.is(a) === true) {
    const k = a.entries().map(([key, v]) => [key, flattenOne(v, tensors, who)] as const);
    // Sizes stay out of the trace key: a dict's batch size is read off its first entry.
    const shape: DictShape = k.length > 0 ? { b: a.batchDim, k } : { b: a.batchDim, s: a.batchSize, k };
    const json = JSON.stringify(shape);
    return `d${json.length}:${json}`;
  }
  throw new TraceError(
    `${who}: ${where} is ${describe(a)}; arguments and results must be Tensors, JaggedTensors or TensorDicts`,
  );
}

/** The tensors of `items`, and their `kinds` (see the file comment). */
export function flatten(items: readonly unknown[], who = "jit"): { tensors: Tensor[]; kinds: string } {
  const tensors: Tensor[] = [];
  let kinds = "";
  for (let i = 0; i < items.length; i++) kinds += flattenOne(items[i], tensors, who, `argument ${i}`);
  return { tensors, kinds };
}

/** The registered kind of code `c`, or a TraceError naming the class to import. */
function kindOf<K extends keyof typeof registered>(c: string, key: K): NonNullable<(typeof registered)[K]> {
  const k = registered[key];
  if (k === undefined) {
    const name = key === "jagged" ? "JaggedTensor" : "TensorDict";
    throw new TraceError(
      `internal: argument kinds "${c}" need ${name}, which this page has not loaded (import it from batchwise/runtime)`,
    );
  }
  return k;
}

/**
 * The registered flattening of jagged tensors or TensorDicts, for code that must
 * build one without importing its class (so a page that never uses them does not
 * carry them); a TraceError naming the class to import when the page has not loaded it.
 */
export function argKind<K extends keyof typeof registered>(key: K, who: string): NonNullable<(typeof registered)[K]> {
  const k = registered[key];
  if (k === undefined) {
    const name = key === "jagged" ? "JaggedTensor" : "TensorDict";
    throw new TraceError(`${who} needs ${name}, which this page has not loaded: import { ${name} } from "batchwise"`);
  }
  return k;
}

/** Whether `a` is a Tensor, a JaggedTensor or a TensorDict (what compiled functions take and return). */
export function isJitArg(a: unknown): a is JitArg {
  return a instanceof Tensor || registered.jagged?.is(a) === true || registered.dict?.is(a) === true;
}

/** Reads one item of `kinds` from `at`, taking its tensors from `tensors[k.i]` on. */
function unflattenOne(tensors: readonly Tensor[], kinds: string, at: { pos: number; i: number }): JitArg {
  const c = kinds[at.pos++];
  if (c === "t") return tensors[at.i++]!;
  if (c === "j") {
    const values = tensors[at.i++]!;
    return kindOf(kinds, "jagged").make(values, tensors[at.i++]!);
  }
  if (c !== "d") throw new TraceError(`internal: bad argument kinds "${kinds}" at ${at.pos - 1}`);
  const dict = kindOf(kinds, "dict");
  const colon = kinds.indexOf(":", at.pos);
  const n = Number(kinds.slice(at.pos, colon));
  const shape = JSON.parse(kinds.slice(colon + 1, colon + 1 + n)) as DictShape;
  at.pos = colon + 1 + n;
  const entries = shape.k.map(([key, sub]) => {
    const inner = { pos: 0, i: at.i };
    const v = unflattenOne(tensors, sub, inner);
    at.i = inner.i;
    return [key, v] as const;
  });
  // The batch size is the first entry's leading dims (symbolic inside a trace); a dict without entries recorded it.
  const first = entries[0]?.[1];
  const size = first === undefined ? (shape.s ?? []) : dict.entryBatch(first).slice(0, shape.b);
  return dict.make(size, entries);
}

/** `kinds` with every TensorDict replaced by its entries' codes, in tensor order: only `t` and `j` remain. */
export function leafKinds(kinds: string): string {
  let out = "";
  for (let pos = 0; pos < kinds.length;) {
    const c = kinds[pos++]!;
    if (c === "t" || c === "j") out += c;
    else {
      const colon = kinds.indexOf(":", pos);
      const len = Number(kinds.slice(pos, colon));
      const shape = JSON.parse(kinds.slice(colon + 1, colon + 1 + len)) as DictShape;
      for (const [, sub] of shape.k) out += leafKinds(sub);
      pos = colon + 1 + len;
    }
  }
  return out;
}

/** The inverse of `flatten`. */
export function unflatten(tensors: readonly Tensor[], kinds: string): JitArg[] {
  const out: JitArg[] = [];
  const at = { pos: 0, i: 0 };
  while (at.pos < kinds.length) out.push(unflattenOne(tensors, kinds, at));
  return out;
}

// ---- validation of what jit and trace are given (cheap: runs once per jit/trace, not per call) ----

/** The function `jit`/`trace` compiles. */
export function checkFunction(who: string, fn: unknown): void {
  if (typeof fn !== "function") throw new TraceError(`${who}: fn must be a function, got ${describe(fn)}`);
}

/** `jit` options: an object whose known fields have the right kinds. */
export function checkJitOptions(who: string, opts: unknown): void {
  if (opts === undefined) return;
  if (typeof opts !== "object" || opts === null || Array.isArray(opts))
    throw new TraceError(`${who}: options must be an object, got ${describe(opts)}`);
  const o = opts as Record<string, unknown>;
  if (o.name !== undefined && (typeof o.name !== "string" || !/^[\w.-]+$/.test(o.name))) {
    throw new TraceError(
      `${who}: options.name must be a name of letters, digits, '_', '.' or '-', got ${describe(o.name)}`,
    );
  }
  if (o.fusion !== undefined && typeof o.fusion !== "boolean")
    throw new TraceError(`${who}: options.fusion must be true or false, got ${describe(o.fusion)}`);
  if (o.float32 !== undefined && o.float32 !== "exact" && o.float32 !== "relaxed") {
    throw new TraceError(`${who}: options.float32 must be "exact" or "relaxed", got ${describe(o.float32)}`);
  }
  if (
    o.backend !== undefined &&
    (typeof o.backend !== "object" || o.backend === null || typeof (o.backend as { name?: unknown }).name !== "string")
  ) {
    throw new TraceError(`${who}: options.backend must be a backend, got ${describe(o.backend)}`);
  }
}

function checkLabels(where: string, batch: unknown, who: string): void {
  if (!Array.isArray(batch) || !batch.every((b) => typeof b === "string")) {
    throw new TraceError(`${who}: ${where}.batch must be an array of batch labels (strings), got ${describe(batch)}`);
  }
}

/** The parts given to `spec`, `jaggedSpec` or `dictSpec`, checked as the spec they make. */
export function checkSpecParts(who: string, parts: { batch?: unknown; base?: unknown; entries?: unknown }): void {
  // The dtype is checked where the spec is used (trace names the spec's position).
  if ("batch" in parts && (!Array.isArray(parts.batch) || !parts.batch.every((b) => typeof b === "string"))) {
    throw new TraceError(`${who}: batch must be an array of batch labels (strings), got ${describe(parts.batch)}`);
  }
  if (
    "base" in parts &&
    (!Array.isArray(parts.base) || !parts.base.every((d) => typeof d === "number" && Number.isInteger(d) && d >= 0))
  ) {
    throw new TraceError(
      `${who}: base must be an array of static non-negative sizes, got ${Array.isArray(parts.base) ? `(${parts.base.map(describe).join(",")})` : describe(parts.base)}`,
    );
  }
  if (
    "entries" in parts &&
    (typeof parts.entries !== "object" || parts.entries === null || Array.isArray(parts.entries))
  ) {
    throw new TraceError(`${who}: entries must be an object of specs, got ${describe(parts.entries)}`);
  }
}

/** One argument spec of `trace` (see `spec`, `jaggedSpec`, `dictSpec`). */
function checkSpec(s: unknown, where: string, depth: number, who = "trace"): void {
  if (typeof s !== "object" || s === null || Array.isArray(s)) {
    throw new TraceError(`${who}: ${where} must be a spec (spec(), jaggedSpec() or dictSpec()), got ${describe(s)}`);
  }
  if (depth > 32) throw new TraceError(`${who}: ${where} nests dict specs more than 32 deep`);
  const o = s as Record<string, unknown>;
  checkLabels(where, o.batch, who);
  if ("entries" in o) {
    const e = o.entries;
    if (typeof e !== "object" || e === null || Array.isArray(e))
      throw new TraceError(`${who}: ${where}.entries must be an object of specs, got ${describe(e)}`);
    for (const [k, v] of Object.entries(e)) checkSpec(v, `${where}.${k}`, depth + 1, who);
    return;
  }
  if (!isDType(o.dtype))
    throw new DTypeError(
      `${who}: ${where} has an unknown dtype ${typeof o.dtype === "string" ? o.dtype : describe(o.dtype)}`,
    );
  const base = o.base;
  if (!Array.isArray(base) || !base.every((d) => typeof d === "number" && Number.isInteger(d) && d >= 0)) {
    const shown = Array.isArray(base)
      ? `(${base.map((d: unknown) => (typeof d === "number" ? String(d) : describe(d))).join(",")})`
      : describe(base);
    throw new TraceError(`${who}: ${where}.base must be static non-negative sizes, got ${shown}`);
  }
  if (o.jagged !== undefined && typeof o.jagged !== "boolean")
    throw new TraceError(`${who}: ${where}.jagged must be true or false, got ${describe(o.jagged)}`);
}

/** The specs `trace` takes: an array, one spec per argument. */
export function checkSpecs(specs: unknown): void {
  if (!Array.isArray(specs))
    throw new TraceError(`trace: specs must be an array with one spec per argument, got ${describe(specs)}`);
  specs.forEach((s, i) => checkSpec(s, `spec ${i}`, 0));
}
