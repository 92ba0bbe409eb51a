/**
 * Bundles (DESIGN.md §8): a traced program with its kernels as an ES module,
 * loaded with no tracer, no pass pipeline, no code generator and no `eval`.
 *
 * `f.bundle()` writes the module text for a `jit` function's latest trace: the
 * fused graph as IR text, the schedule (kernel IR, views, copies) with nodes
 * named by their position in the graph's topological order, each kernel as a
 * JS function and as WGSL source, the captured constants, and how arguments and
 * results map to tensors and jagged tensors. `loadBundle(module)` checks the
 * module, rebuilds the schedule from the IR text and hands the shipped kernels
 * to the backend (`Backend.load`): functions on JS, WGSL for the driver on WebGPU.
 */
import { ARRAY_CTOR, type DType, type TypedArray } from "../ir/dtype.js";
import { BundleError, ShapeError } from "../ir/errors.js";
import { topoOrder, type Node } from "../ir/graph.js";
import { parseGraph } from "../ir/parse.js";
import { printGraph } from "../ir/print.js";
import { mapStep, type Schedule, type Step, type StepOf } from "../ir/schedule.js";
import { fmtShape } from "../ir/types.js";
import { kernelToJS } from "../codegen/js.js";
import { kernelToWGSL } from "../codegen/wgsl.js";
import type { Backend, ShippedKernel } from "../runtime/backend.js";
import { Program, type BoundValue } from "../runtime/program.js";
import { flatten, leafKinds, unflatten, type JitArg } from "./args.js";
import { getBackend } from "./backend.js";
import { fromTypedArray } from "./creation.js";
import { concreteType, realize, realizeSync } from "./realize.js";
import { Tensor } from "./tensor.js";

export const BUNDLE_FORMAT = "batchwise-bundle";
export const BUNDLE_VERSION = 1;

/** A schedule step with nodes named by their index in the graph's topological order. */
type BundleStep = StepOf<number>;

/** What a bundle module exports (`import * as mod from "./f.bundle.js"`). */
export interface BundleModule {
  readonly format: string;
  readonly version: number;
  /** The backend the trace was fused for (its buffer limit and output grouping). */
  readonly traced: string;
  /** The fused graph, as IR text. */
  readonly graph: string;
  readonly steps: readonly BundleStep[];
  /** Per step: the shipped kernel, or null for views and copies. */
  readonly kernels: readonly (ShippedKernel | null)[];
  /** Realized tensors the traced function closed over (the graph inputs after the arguments). */
  readonly captured: readonly { readonly dtype: DType; readonly batch: readonly number[]; readonly base: readonly number[]; readonly data: ArrayLike<number> }[];
  /** Per argument and per result: "t" a tensor, "j" a jagged tensor (values and offsets). */
  readonly args: string;
  readonly results: string;
  /** The function returned an array (else one value). */
  readonly multi: boolean;
}

/** What a bundle export needs from a jit trace. */
export interface Traced {
  readonly backend: string;
  readonly schedule: Schedule;
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

const ARRAY_NAME: { readonly [D in DType]: string } = { float32: "Float32Array", float64: "Float64Array", int32: "Int32Array", uint32: "Uint32Array", bool: "Uint8Array" };

/** The ES module text of a bundle (see the file comment). */
export function bundleSource(t: Traced): string {
  const s = t.schedule;
  const text = printGraph(s.graph);
  const index = new Map<Node, number>(s.order.map((n, i) => [n, i]));
  const at = (n: Node): number => index.get(n)!;
  const steps: BundleStep[] = s.steps.map((st) => mapStep(st, at));
  const kernels = s.steps.map((st) => {
    if (st.kind !== "kernel") return "null";
    let wgsl: string | undefined;
    try {
      wgsl = kernelToWGSL(st.kernel);
    } catch {
      wgsl = undefined; // float64 and other kernels WGSL cannot hold: the bundle runs on JS only
    }
    const js = `function (ins, outs, sizes, strides) {\n${kernelToJS(st.kernel).body}\n}`;
    return `{ js: ${js}, wgsl: ${wgsl === undefined ? "undefined" : JSON.stringify(wgsl)} }`;
  });
  const captured = t.captured.map((c) => {
    const type = concreteType(c);
    const data = Array.from(c.dataSync({ copy: false }), (v) => literal(v)).join(", ");
    return `{ dtype: ${literal(type.dtype)}, batch: ${literal([...type.batch])}, base: ${literal([...type.base])}, data: new ${ARRAY_NAME[type.dtype]}([${data}]) }`;
  });
  return [
    `// batchwise bundle of @${s.graph.name}: ${kernels.filter((k) => k !== "null").length} kernel(s). Load with loadBundle(module).`,
    `export const format = ${literal(BUNDLE_FORMAT)};`,
    `export const version = ${BUNDLE_VERSION};`,
    `export const traced = ${literal(t.backend)};`,
    `export const graph = ${JSON.stringify(text)};`,
    `export const args = ${literal(t.args)};`,
    `export const results = ${literal(t.results)};`,
    `export const multi = ${t.multi};`,
    `export const steps = ${literal(steps)};`,
    `export const kernels = [\n${kernels.join(",\n")}\n];`,
    `export const captured = [${captured.join(",\n")}];`,
    "",
  ].join("\n");
}

/** A loaded bundle: call it like the jit function it came from. */
export interface BundleFunction {
  (...args: JitArg[]): JitArg | JitArg[];
  /** Async variant, needed on WebGPU. */
  callAsync(...args: JitArg[]): Promise<JitArg | JitArg[]>;
  /** The fused graph's IR text. */
  dump(): string;
  readonly backend: Backend;
}

function check(ok: boolean, why: string): asserts ok {
  if (!ok) throw new BundleError(`loadBundle: ${why}`);
}

/**
 * Loads a bundle module on the current backend (or `opts.backend`): parses its
 * graph, checks every reference, and loads the shipped kernels without generating
 * any. Asynchronous because WebGPU builds its pipelines asynchronously.
 */
export async function loadBundle(mod: BundleModule, opts: { readonly backend?: Backend } = {}): Promise<BundleFunction> {
  check(mod !== null && typeof mod === "object" && mod.format === BUNDLE_FORMAT, `not a batchwise bundle (format ${String((mod as { format?: unknown } | null)?.format)})`);
  check(mod.version === BUNDLE_VERSION, `bundle version ${String(mod.version)}, this batchwise reads version ${BUNDLE_VERSION}`);
  check(typeof mod.graph === "string" && Array.isArray(mod.steps) && Array.isArray(mod.kernels) && mod.kernels.length === mod.steps.length, "the bundle's steps and kernels do not match");
  let graph;
  try {
    graph = parseGraph(mod.graph);
  } catch (e) {
    throw new BundleError(`loadBundle: the bundle's graph does not parse (${(e as Error).message})`);
  }
  check(printGraph(graph) === mod.graph, "the bundle's graph does not print back to its own text");
  const order = topoOrder(graph);
  const node = (i: unknown): Node => {
    check(typeof i === "number" && Number.isInteger(i) && i >= 0 && i < order.length, `a step names node ${String(i)}, the graph has ${order.length}`);
    return order[i]!;
  };
  const steps: Step[] = mod.steps.map((st) => mapStep(st, node));
  const nArgs = [...leafKinds(mod.args)].reduce((n, c) => n + (c === "j" ? 2 : 1), 0);
  check(nArgs + mod.captured.length === graph.inputs.length, `${nArgs} arguments and ${mod.captured.length} captured tensors for a graph of ${graph.inputs.length} inputs`);
  const backend = opts.backend ?? getBackend();
  mod.kernels.forEach((k, i) => {
    if (mod.steps[i]!.kind !== "kernel") return;
    const has = backend.name === "js" ? typeof k?.js === "function" : typeof k?.wgsl === "string";
    check(has, `step ${i} ships no ${backend.name === "js" ? "JS function" : "WGSL"} kernel (the bundle was traced on ${String(mod.traced)}; kernels WGSL cannot hold, such as float64 or, from a JS trace, outputs of mixed base shapes, ship JS only: trace with jit(fn, { backend }) on the backend you will load on)`);
  });
  const program = await Program.fromShipped({ graph, order, steps }, backend, mod.kernels.map((k) => k ?? undefined));
  const captured = mod.captured.map((c) => {
    const data = c.data instanceof ARRAY_CTOR[c.dtype] ? (c.data as TypedArray) : new ARRAY_CTOR[c.dtype](c.data);
    return fromTypedArray(data, [...c.batch, ...c.base], { batchDim: c.batch.length, dtype: c.dtype });
  });

  const bind = (args: readonly JitArg[]): BoundValue[] => {
    const { tensors, kinds } = flatten(args, "bundle");
    if (kinds !== mod.args) throw new BundleError(`bundle @${graph.name}: takes arguments "${mod.args}" (t tensor, j jagged, d TensorDict), got "${kinds}"`);
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
    const results = /^t*$/.test(mod.results) ? flat : unflatten(flat, mod.results);
    return mod.multi ? results : results[0]!;
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
  f.dump = () => mod.graph;
  Object.defineProperty(f, "backend", { value: backend });
  return f;
}
