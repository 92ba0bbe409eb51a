/**
 * The fuzz harness shared by the JS and WebGPU fuzz tests: runs one random graph
 * (test/helpers/random-graph.ts, drawn with special values) through a compiled
 * configuration, compares against the reference interpreter with the rules below,
 * and sorts a failure into a known open bug (`KNOWN_OPEN`) or a new one.
 *
 * Comparison rules (element by element):
 * - "exact" (integer and bool outputs, float64 outputs, float32 outputs of a
 *   configuration that rounds every op): bit-exact (`Object.is`, so NaN matches
 *   NaN and -0 does not match +0);
 * - "relaxed" (JS kernels that keep float32 intermediates in float64): an element
 *   must equal the interpreter's float32 result or the same graph evaluated in
 *   float64 and rounded once (its "float64 twin"): NaN and ±Inf exactly, finite
 *   values within |got - want| <= 1e-4·max(1, |want|) (a zero is never met by the
 *   zero of the other sign, only by itself or a rounding-size value); where the
 *   two references themselves disagree (a float32 overflow or underflow on the
 *   way) the element is counted, not judged (`rangeDependent`);
 * - "gpu" (WebGPU float32): against the float32 result only, NaN and ±Inf exactly,
 *   zeros as above, finite values within 2e-4·max(1, |want|) (WGSL's transcendentals
 *   and float32 sums are that loose); integers computed from float32 values (the
 *   mean of integers) get the same tolerance.
 * A configuration may throw only a `BatchwiseError`, and only where the rules ask
 * for one: min/max/argmin/argmax over an empty axis must throw one.
 */
import { castScalar, isFloat, type DType } from "../../ir/dtype.js";
import { BatchwiseError } from "../../ir/errors.js";
import { makeGraph, Node, topoOrder, type Graph } from "../../ir/graph.js";
import { interpret, type Accumulation, type Value } from "../../ir/interpret.js";
import { printGraph } from "../../ir/print.js";
import type { ConcreteType } from "../../ir/shapes.js";
import { inferConcrete } from "../../ir/shapes.js";
import { CANONICALIZE_RULES } from "../../passes/canonicalize.js";
import { runRules } from "../../passes/driver.js";
import { fuse } from "../../passes/fuse.js";
import { lowerOps } from "../../passes/lower.js";
import { rewriteGraph } from "../../passes/rewrite.js";
import type { Schedule } from "../../ir/schedule.js";
import { randomInputs, type Family, type RandomCase } from "./random-graph.js";

/** The family of a fuzz seed: float32 half the time, then float64, int32, uint32. */
export function familyOf(seed: number): Family {
  const k = seed % 10;
  return k < 5 ? "float32" : k < 7 ? "float64" : k < 9 ? "int32" : "uint32";
}

export type Rule = "exact" | "relaxed" | "gpu";

/** Tolerance on finite float32 values, relative to max(1, |want|). */
export const TOLERANCE: Record<Exclude<Rule, "exact">, number> = { relaxed: 1e-4, gpu: 2e-4 };

/** What a configuration produced: outputs, or the error it threw. */
export type Outcome = { readonly values: readonly Value[] } | { readonly error: unknown };

/** The float64 twin of a graph: same ops, every float32 dtype widened, means of integers too (for the relaxed rule). */
export function widen(g: Graph): Graph {
  const map = new Map<Node, Node>();
  const f = (d: unknown): unknown => (d === "float32" ? "float64" : d);
  const inputs = g.inputs.map((n) => {
    const m = Node.make("input", [], n.attrs as never, { ...n.type, dtype: f(n.type.dtype) as DType });
    map.set(n, m);
    return m;
  });
  for (const n of topoOrder(g)) {
    if (n.op === "input") continue;
    const attrs = "dtype" in n.attrs ? { ...n.attrs, dtype: f(n.attrs.dtype) } : n.attrs;
    let ins = n.inputs.map((i) => map.get(i)!);
    // The mean of integers is float32: widen it too.
    if (n.op === "mean" && !isFloat(ins[0]!.type.dtype)) ins = [Node.make("cast", ins, { dtype: "float64" })];
    map.set(n, Node.make(n.op, ins, attrs as never));
  }
  return makeGraph(
    g.name,
    inputs,
    g.outputs.map((o) => map.get(o)!),
    g.inputNames,
  );
}

/** The same graph with every reduction's axes sorted (same meaning: a reduction takes a set of axes). */
export function sortAxes(g: Graph): Graph {
  return rewriteGraph(g, (n, ins) => {
    if (!("batchAxes" in n.attrs)) return undefined;
    const s = (a: unknown): number[] => [...(a as number[])].sort((x, y) => x - y);
    return Node.make(n.op, ins, {
      ...n.attrs,
      batchAxes: s(n.attrs.batchAxes),
      baseAxes: s(n.attrs.baseAxes),
    } as never);
  });
}

/**
 * The passes without fold and simplify (lower, canonicalize, cse, dce), then fuse:
 * if a failing case passes this way, the culprit is an algebraic rule.
 */
export function unsimplifiedSchedule(g: Graph, opts: Parameters<typeof fuse>[1]) {
  let cur = lowerOps(g);
  cur = runRules(cur, CANONICALIZE_RULES, "canonicalize");
  cur = rewriteGraph(cur, () => undefined);
  cur = makeGraph(cur.name, cur.inputs, cur.outputs, cur.inputNames);
  return fuse(cur, opts);
}

/**
 * Min/max/argmin/argmax over an empty axis: the rules ask for a typed error (as NumPy's
 * "zero-size array to reduction operation ... which has no identity"). With `withOutput`,
 * only where the result has elements (an empty result may also just be returned).
 */
export function emptyExtremum(c: RandomCase, withOutput = true): boolean {
  const order = topoOrder(c.graph);
  const bound = new Map<Node, ConcreteType>();
  c.graph.inputs.forEach((n, i) => bound.set(n, c.inputTypes[i]!));
  const types = inferConcrete(order, bound, new Map());
  const numel = (t: ConcreteType): number => [...t.batch, ...t.base].reduce((p, d) => p * d, 1);
  return order.some((n) => {
    if (!["min", "max", "argmin", "argmax"].includes(n.op)) return false;
    const x = types.get(n.inputs[0]!)!;
    const reduced = [
      ...(n.attrs.batchAxes as number[]).map((a) => x.batch[a]!),
      ...(n.attrs.baseAxes as number[]).map((a) => x.base[a]!),
    ];
    return reduced.some((d) => d === 0) && (!withOutput || numel(types.get(n)!) > 0);
  });
}

/** A constant JSON cannot tell apart from another (NaN, ±Infinity become null; -0 becomes 0). */
function hasJsonUnsafeConst(g: Graph): boolean {
  return topoOrder(g).some(
    (n) => n.op === "const" && !Object.is(JSON.parse(JSON.stringify(n.attrs.value)), n.attrs.value),
  );
}

/** The graph with each JSON-unsafe constant swapped (NaN -> Inf -> -Inf -> NaN, -0 -> 0); undefined if it has none. */
export function jsonTwin(g: Graph): Graph | undefined {
  if (!hasJsonUnsafeConst(g)) return undefined;
  const swap = (v: number): number =>
    Number.isNaN(v) ? Infinity : v === Infinity ? -Infinity : v === -Infinity ? NaN : Object.is(v, -0) ? 0 : v;
  return rewriteGraph(g, (n) =>
    n.op === "const"
      ? Node.make("const", [], { ...n.attrs, value: swap(n.attrs.value as number) } as never)
      : undefined,
  );
}

/** Whether some input element or graph constant satisfies `p`. */
function someValue(c: RandomCase, p: (x: number) => boolean): boolean {
  return (
    topoOrder(c.graph).some((n) => n.op === "const" && p(n.attrs.value as number)) ||
    randomInputs(c).some((v) => Array.from(v.data).some(p))
  );
}

/** Whether some value an op of `ops` takes (an intermediate value, as the interpreter computes it) satisfies `p`. */
function someArgument(c: RandomCase, ops: readonly string[], p: (x: number) => boolean): boolean {
  const args = [
    ...new Set(
      topoOrder(c.graph)
        .filter((n) => ops.includes(n.op))
        .flatMap((n) => n.inputs),
    ),
  ];
  if (args.length === 0) return false;
  try {
    const values = interpret(makeGraph(c.graph.name, c.graph.inputs, args, c.graph.inputNames), randomInputs(c));
    return values.some((v) => Array.from(v.data).some(p));
  } catch {
    return false;
  }
}

/** The mismatch of a comparison message involves a special value (NaN, ±Inf, ±0) on either side. */
export function specialMismatch(message: string): boolean {
  const m = /got (\S+), expected (\S+)/.exec(message);
  if (m === null) return false;
  const special = (s: string): boolean => ["NaN", "Infinity", "-Infinity", "0", "-0"].includes(s);
  return special(m[1]!) || special(m[2]!);
}

function elementOk(g: number, w: number, rule: Rule): boolean {
  if (Object.is(g, w)) return true;
  if (rule === "exact" || Number.isNaN(w) || !Number.isFinite(w) || Number.isNaN(g) || !Number.isFinite(g))
    return false;
  // Two zeros of opposite sign are a wrong sign; a tiny nonzero next to a zero is rounding.
  if (g === 0 && w === 0) return false;
  return Math.abs(g - w) <= TOLERANCE[rule] * Math.max(1, Math.abs(w));
}

/** Elements accepted under the relaxed rule because float32 and float64 evaluation disagree there. */
export const rangeDependent = { count: 0 };

/** Compares outputs; `alt` is a second acceptable reference (relaxed rule). Undefined when they agree. */
export function compareValues(
  got: readonly Value[],
  want: readonly Value[],
  rule: Rule,
  alt?: readonly Value[],
): string | undefined {
  if (got.length !== want.length) return `${got.length} outputs, expected ${want.length}`;
  for (let o = 0; o < want.length; o++) {
    const g = got[o]!;
    const w = want[o]!;
    const shape = (t: ConcreteType): string => `${t.dtype}[${t.batch.join(",")}; ${t.base.join(",")}]`;
    if (shape(g.type) !== shape(w.type)) return `output ${o}: type ${shape(g.type)}, expected ${shape(w.type)}`;
    if (g.data.length !== w.data.length) return `output ${o}: ${g.data.length} elements, expected ${w.data.length}`;
    const d = w.type.dtype;
    // On WebGPU an integer computed from float32 intermediates (the mean of integers) inherits their tolerance.
    const r: Rule = d === "float32" || (rule === "gpu" && !isFloat(d)) ? rule : "exact";
    for (let i = 0; i < w.data.length; i++) {
      const gv = g.data[i]!;
      if (elementOk(gv, w.data[i]!, r)) continue;
      // Relaxed: the float64 twin's value is right too (also for an integer computed from float32 intermediates).
      const av = alt === undefined ? undefined : castScalar(alt[o]!.data[i]!, d);
      if (av !== undefined && elementOk(gv, av, r)) continue;
      // Where the float32 and float64 evaluations themselves disagree (a float32 overflow or underflow on the
      // way), a relaxed kernel may give either or a mix: counted, not judged.
      if (av !== undefined && rule === "relaxed" && !elementOk(av, w.data[i]!, r)) {
        rangeDependent.count++;
        continue;
      }
      return `output ${o} element ${i}: got ${fmt(gv)}, expected ${fmt(w.data[i]!)}${av !== undefined ? ` (float64 twin ${fmt(av)})` : ""}`;
    }
  }
  return undefined;
}

const fmt = (v: number): string => (Object.is(v, -0) ? "-0" : String(v));

/** The reference: the interpreter's outputs (and, for the relaxed rule on float32, its float64 twin's). */
export interface Reference {
  readonly want: Outcome;
  readonly alt?: readonly Value[];
}

export function reference(
  c: RandomCase,
  inputs: readonly Value[],
  withTwin: boolean,
  accumulation: Accumulation = "float64",
): Reference {
  let want: Outcome;
  try {
    want = { values: interpret(c.graph, inputs, { accumulation }) };
  } catch (error) {
    return { want: { error } };
  }
  if (!withTwin || !topoOrder(c.graph).some((n) => n.type.dtype === "float32")) return { want };
  const wide = inputs.map((v) => ({
    type: { ...v.type, dtype: (v.type.dtype === "float32" ? "float64" : v.type.dtype) as DType },
    data: v.type.dtype === "float32" ? Float64Array.from(v.data) : v.data,
  }));
  return { want, alt: interpret(widen(c.graph), wide) };
}

/** Judges one outcome against the reference. Undefined when it is right. */
export function judge(c: RandomCase, ref: Reference, got: Outcome, rule: Rule): string | undefined {
  const typedError = "error" in got && got.error instanceof BatchwiseError;
  if ("error" in ref.want) {
    return typedError
      ? undefined
      : `the interpreter threw ${String(ref.want.error)} but the configuration ${"error" in got ? `threw ${String(got.error)}` : "returned values"}`;
  }
  if ("error" in got) {
    if (typedError && emptyExtremum(c, false)) return undefined;
    const e = got.error as Error;
    return `threw ${e?.constructor?.name ?? typeof e}: ${e?.message ?? String(e)}`;
  }
  if (emptyExtremum(c)) return "returned values for a min/max/argmin/argmax over an empty axis, expected a typed error";
  return compareValues(got.values, ref.want.values, rule, ref.alt);
}

/**
 * Watches the kernels compiled in a run for JSON key collisions: a kernel whose
 * JSON text equals an earlier kernel's while the two differ in a constant JSON
 * cannot write (NaN, ±Inf, -0). A cache keyed on JSON hands it the earlier kernel.
 */
export class KeyCollisions {
  private readonly seen = new Map<string, string>();

  /** Records the schedule's kernels; true if one of them collides with an earlier, different kernel. */
  observe(schedule: Schedule): boolean {
    let hit = false;
    for (const step of schedule.steps) {
      if (step.kind !== "kernel") continue;
      const json = JSON.stringify(step.kernel);
      const exact = JSON.stringify(step.kernel, (_k, v: unknown) =>
        typeof v === "number" && (!Number.isFinite(v) || Object.is(v, -0))
          ? `#${Object.is(v, -0) ? "-0" : String(v)}`
          : v,
      );
      const prev = this.seen.get(json);
      if (prev === undefined) this.seen.set(json, exact);
      else if (prev !== exact) hit = true;
    }
    return hit;
  }
}

/**
 * A failing case: matched against the documented limitations (`KNOWN_OPEN`); the
 * re-runs give the hints printed with a new failure (`hints`).
 */
export interface FailureContext {
  readonly c: RandomCase;
  readonly backend: "js" | "webgpu";
  readonly config: string;
  readonly message: string;
  /**
   * Re-runs the very same configuration with fresh kernel/program caches (undefined:
   * not possible, e.g. the eager path, whose caches are the process's). Another
   * configuration would not do: a failure of its own path would pass there and look
   * like a cache collision.
   */
  readonly freshRun?: () => string | undefined;
  /** Without a fresh re-run: whether a kernel of the case collided with an earlier one's JSON key (`KeyCollisions`). */
  readonly keyCollision?: boolean;
  /** Re-runs on the graph with sorted reduction axes. */
  readonly sortedRun?: () => string | undefined;
  /** Re-runs without the fold and simplify rules. */
  readonly unsimplifiedRun?: () => string | undefined;
  /** Judges the same outcome against the reference with float32 sums and products accumulated in float32. */
  readonly float32Accumulation?: () => string | undefined;
}

/** What the re-runs of a failing case say about it (printed with a new failure to point at the culprit). */
export function hints(f: FailureContext): string[] {
  const out: string[] = [];
  if (f.freshRun !== undefined && f.freshRun() === undefined)
    out.push("passes with fresh caches: a cache entry of an earlier graph was reused");
  if (f.keyCollision === true) out.push("a kernel's JSON key equals an earlier, different kernel's");
  if (f.sortedRun !== undefined && f.sortedRun() === undefined) out.push("passes with each reduction's axes sorted");
  if (f.unsimplifiedRun !== undefined && f.unsimplifiedRun() === undefined)
    out.push("passes without the fold and simplify rules: an algebraic rule is unsound here");
  return out;
}

export interface KnownOpen {
  readonly id: string;
  /** A documented limitation that stays (not a bug awaiting a fix). */
  readonly permanent?: boolean;
  readonly description: string;
  readonly matches: (f: FailureContext) => boolean;
}

/**
 * Documented limitations of a backend (all `permanent`): a failing case that matches
 * an entry is counted and printed once per entry as LIMITATION but does not fail the
 * run. Every other failure is a bug to fix in the library, not to list here (the
 * entries that stood for the bugs of issue 12 are gone with their fixes; a bug
 * awaiting a fix elsewhere may be listed without `permanent` and is printed as
 * KNOWN_OPEN until its fix lands).
 */
export const KNOWN_OPEN: readonly KnownOpen[] = [
  {
    id: "wgsl-trig-range",
    permanent: true,
    description:
      "LIMITATION, not a bug: WGSL's sin/cos/tan are accurate only near [-π, π] (llvmpipe is off by O(1) past ~1e4), so the WebGPU fuzz accepts a trig of a huge input as unspecified",
    matches: (f) => f.backend === "webgpu" && someArgument(f.c, ["sin", "cos", "tan"], (x) => Math.abs(x) > 1e4),
  },
  {
    id: "wgsl-float32-accumulation",
    permanent: true,
    description:
      "LIMITATION, not a bug: WGSL has no float64, so float32 sums, products and means (and matmul's K-sum) accumulate in float32, as NumPy's float32 reductions do, where JS and the interpreter accumulate in float64 and round once; a running value that overflows or underflows float32 (3.4e38 · 1.4 · 1e-30) gives ±Inf or 0 there. Accepted when the result is right against the float32-accumulation reference",
    matches: (f) =>
      f.backend === "webgpu" &&
      /^output \d+ element/.test(f.message) &&
      f.float32Accumulation?.() === undefined &&
      f.float32Accumulation !== undefined,
  },
  {
    id: "wgsl-subnormals",
    permanent: true,
    description:
      "LIMITATION, not a bug: WGSL lets a GPU flush float32 subnormals to zero (llvmpipe: log(1e-45) gives -88.03, the log of the smallest normal), so the WebGPU fuzz accepts a case with a subnormal input or constant",
    matches: (f) =>
      f.backend === "webgpu" &&
      /^output \d+ element/.test(f.message) &&
      someValue(f.c, (x) => x !== 0 && Math.abs(x) < 2 ** -126),
  },
];

/** Counts per configuration and per known-open entry, and the failures that are not known. */
export class Tally {
  readonly runs = new Map<string, number>();
  readonly known = new Map<string, { count: number; first: string }>();
  readonly unknown: string[] = [];
  /** Milliseconds spent per configuration (and in the reference). */
  readonly ms = new Map<string, number>();
  graphs = 0;

  time(what: string, ms: number): void {
    this.ms.set(what, (this.ms.get(what) ?? 0) + ms);
  }

  record(f: FailureContext | undefined, config: string): void {
    this.runs.set(config, (this.runs.get(config) ?? 0) + 1);
    if (f === undefined) return;
    const k = KNOWN_OPEN.find((e) => e.matches(f));
    const text = `seed ${f.c.seed} (${f.c.inputTypes[0]?.dtype ?? "?"}, ${f.backend} ${f.config}): ${f.message}\ninputs ${f.c.inputTypes.map((t) => `${t.dtype}[${t.batch.join(",")}; ${t.base.join(",")}]`).join(", ")}\n${printGraph(f.c.graph)}`;
    if (k === undefined) {
      const h = hints(f);
      this.unknown.push(h.length > 0 ? `${text}\nhints: ${h.join("; ")}` : text);
      return;
    }
    const e = this.known.get(k.id);
    if (e) e.count++;
    else this.known.set(k.id, { count: 1, first: text });
  }

  summary(title: string): string {
    const lines = [
      `${title}: ${this.graphs} random graphs, ${[...this.runs.values()].reduce((a, b) => a + b, 0)} runs (${[...this.runs].map(([k, v]) => `${k} ${v}`).join(", ")})`,
    ];
    if (this.ms.size > 0)
      lines.push(`  time per part: ${[...this.ms].map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`).join(", ")}`);
    for (const [id, e] of this.known) {
      const kind = KNOWN_OPEN.find((k) => k.id === id)?.permanent ? "LIMITATION" : "KNOWN_OPEN";
      lines.push(`  ${kind} ${id}: ${e.count} failing runs; first:\n    ${e.first.replace(/\n/g, "\n    ")}`);
    }
    lines.push(`  new failures: ${this.unknown.length}`);
    return lines.join("\n");
  }
}

/** Number of graphs to run: `base` scaled by BATCHWISE_FUZZ_RUNS (a factor, default 1). */
export function fuzzCount(base: number): number {
  const k = Number(process.env["BATCHWISE_FUZZ_RUNS"] ?? 1);
  return Math.max(1, Math.round(base * (Number.isFinite(k) && k > 0 ? k : 1)));
}
