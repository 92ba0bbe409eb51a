/**
 * The arguments and results of compiled functions (jit, bundles): tensors,
 * jagged tensors and TensorDicts, flattened to tensors.
 *
 * They flatten as trees (src/tree.ts). `kinds` describes the items, one code
 * each, and is part of the trace key:
 * - `t`: a tensor;
 * - `j`: a jagged tensor (two tensors: values, offsets);
 * - `d<n>:<json>`: a TensorDict, `<json>` (n characters) being
 *   `{"b": batch rank, "k": [[key, kinds], ...]}` (its entries' tensors follow
 *   in key order, nested dicts inline). The batch size is read off the first
 *   tensor, so no size enters the trace key; only a dict with no entries records
 *   its size (`"s"`).
 */
import { isDType } from "../ir/dtype.js";
import { DTypeError, TraceError } from "../ir/errors.js";
import { describe } from "./check.js";
import type { JaggedTensor } from "./ragged/jagged.js";
import { Tensor } from "./tensor.js";
import type { TensorDict } from "./tensordict/tensordict.js";
import {
  flattenInto,
  LEAF,
  leafCount,
  unflatten as unflattenTree,
  type DictKind,
  type JaggedKind,
  type TreeBuild,
  type TreeDef,
  type TreeView,
} from "./tree.js";

/** What a compiled function takes and returns. */
export type JitArg = Tensor | JaggedTensor | TensorDict;

interface DictShape {
  readonly b: number;
  /** The batch size, recorded only for a dict with no entries. */
  readonly s?: readonly number[];
  readonly k: readonly (readonly [string, string])[];
}

/**
 * How jagged tensors flatten to tensors and back. Registered by src/ragged/jagged.ts
 * when it loads (not imported from here), so that a page that only runs bundles of
 * plain tensors through `batchwise/runtime` does not carry the ragged code.
 */
export type JaggedArgKind = JaggedKind;

/** How TensorDicts flatten and unflatten; registered by src/tensordict/tensordict.ts (see `JaggedArgKind`). */
export type DictArgKind = DictKind;

const registered: { jagged?: JaggedArgKind; dict?: DictArgKind } = {};

/** Registers the flattening of jagged tensors (src/ragged/jagged.ts does, when it loads). */
export function registerJaggedArgKind(k: JaggedArgKind): void {
  registered.jagged = k;
}

/** Registers the flattening of TensorDicts (src/tensordict/tensordict.ts does, when it loads). */
export function registerDictArgKind(k: DictArgKind): void {
  registered.dict = k;
}

/** The structures of the items of a `kinds` string, parsed once per string (`kinds` must be well formed). */
interface ParsedKinds {
  readonly defs: readonly TreeDef[];
  /** Whether a jagged tensor or a TensorDict is among the items or their entries. */
  readonly jagged: boolean;
  readonly dict: boolean;
}

const parsedKinds = new Map<string, ParsedKinds>();

/** `kinds` as the structures of its items (see the file comment). */
function parseKinds(kinds: string): ParsedKinds {
  let p = parsedKinds.get(kinds);
  if (p !== undefined) return p;
  const has = { jagged: false, dict: false };
  const defs = parseItems(kinds, has);
  p = { defs, ...has };
  if (parsedKinds.size >= 256) parsedKinds.clear();
  parsedKinds.set(kinds, p);
  return p;
}

const JAGGED_PAIR: TreeDef = { kind: "jagged", children: [LEAF, LEAF] };

function parseItems(kinds: string, has: { jagged: boolean; dict: boolean }): TreeDef[] {
  const out: TreeDef[] = [];
  for (let pos = 0; pos < kinds.length;) {
    const c = kinds[pos++];
    if (c === "t") out.push(LEAF);
    else if (c === "j") {
      has.jagged = true;
      out.push(JAGGED_PAIR);
    } else if (c === "d") {
      has.dict = true;
      const colon = kinds.indexOf(":", pos);
      const n = Number(kinds.slice(pos, colon));
      const shape = JSON.parse(kinds.slice(colon + 1, colon + 1 + n)) as DictShape;
      pos = colon + 1 + n;
      out.push({
        kind: "dict",
        batchDim: shape.b,
        ...(shape.s !== undefined ? { batchSize: shape.s } : {}),
        keys: shape.k.map(([key]) => key),
        children: shape.k.map(([, sub]) => parseItems(sub, has)[0]!),
      });
    } else throw new TraceError(`internal: bad argument kinds "${kinds}" at ${pos - 1}`);
  }
  return out;
}

/** The `kinds` code of one item's structure. */
function kindsOf(def: TreeDef): string {
  if (def.kind === "leaf") return "t";
  if (def.kind === "jagged") return "j";
  if (def.kind !== "dict") throw new TraceError(`internal: argument structure ${def.kind}`);
  const k = def.keys.map((key, e) => [key, kindsOf(def.children[e]!)] as const);
  // Sizes stay out of the trace key: a dict's batch size is read off its first entry.
  const shape: DictShape = k.length > 0 ? { b: def.batchDim, k } : { b: def.batchDim, s: def.batchSize ?? [], k };
  const json = JSON.stringify(shape);
  return `d${json.length}:${json}`;
}

/**
 * The classes a `kinds` string needs whose flattening is not registered on this
 * page (`JaggedTensor`, `TensorDict`): empty with the full `batchwise` entry, which
 * loads both. `kinds` must be well formed (checked by the bundle loaders first).
 */
export function unregisteredArgKinds(kinds: string): string[] {
  const p = parseKinds(kinds);
  const out: string[] = [];
  if (p.jagged && registered.jagged === undefined) out.push("JaggedTensor");
  if (p.dict && registered.dict === undefined) out.push("TensorDict");
  return out;
}

/** The tree view of compiled functions' arguments and results: tensors, jagged tensors (values, offsets), TensorDicts. */
function argView(who: string, where: string): TreeView<Tensor> {
  const { jagged, dict } = registered;
  return {
    isLeaf: (a): a is Tensor => a instanceof Tensor,
    ...(jagged !== undefined ? { jagged: { kind: jagged, split: "pair" } } : {}),
    ...(dict !== undefined ? { dict } : {}),
    // A dict's entries are named as "an argument" (the path is not in the message).
    reject: (a, path) =>
      new TraceError(
        `${who}: ${path.length === 0 ? where : "an argument"} is ${describe(a)}; arguments and results must be Tensors, JaggedTensors or TensorDicts`,
      ),
  };
}

/** The tensors of `items`, and their `kinds` (see the file comment). */
export function flatten(items: readonly unknown[], who = "jit"): { tensors: Tensor[]; kinds: string } {
  const tensors: Tensor[] = [];
  let kinds = "";
  for (let i = 0; i < items.length; i++) {
    const a = items[i];
    // The common case first: a tensor is one leaf, code "t".
    if (a instanceof Tensor) {
      tensors.push(a);
      kinds += "t";
    } else kinds += kindsOf(flattenInto(a, argView(who, `argument ${i}`), tensors, []));
  }
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

/** `kinds` with every TensorDict replaced by its entries' codes, in tensor order: only `t` and `j` remain. */
export function leafKinds(kinds: string): string {
  let out = "";
  const walk = (d: TreeDef): void => {
    if (d.kind === "leaf") out += "t";
    else if (d.kind === "jagged") out += "j";
    else for (const c of d.children) walk(c);
  };
  for (const d of parseKinds(kinds).defs) walk(d);
  return out;
}

/** The inverse of `flatten`. */
export function unflatten(tensors: readonly Tensor[], kinds: string): JitArg[] {
  const p = parseKinds(kinds);
  const build: TreeBuild = {
    ...(p.jagged ? { jagged: kindOf(kinds, "jagged") } : {}),
    ...(p.dict ? { dict: kindOf(kinds, "dict") } : {}),
  };
  const out: JitArg[] = [];
  let i = 0;
  for (const d of p.defs) {
    if (d.kind === "leaf") out.push(tensors[i++]!);
    else {
      const n = leafCount(d);
      out.push(unflattenTree(d, tensors.slice(i, i + n), build) as JitArg);
      i += n;
    }
  }
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
