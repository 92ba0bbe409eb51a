/**
 * The batchwise playground: a function typed into the page is traced once by
 * `jit`, run at several batch sizes on the JS or WebGPU backend, and the page
 * shows the IR after each pass, the generated kernels, the fused graph (DOT
 * rendered by Graphviz compiled to WASM), the jit counters and the results.
 *
 * The input is deterministic so that results can be checked by hand (the
 * browser test does): element i of the flat, row-major input is i % 7 - 3
 * (uint32: i % 7; bool: i % 7 - 3 != 0).
 *
 * The code in the function box sees the exports listed in `LIB` by name
 * (`(x) => linalg.det(x.reshape([2, 2]))`), and the browser console has them as
 * `batchwise` (`batchwise.tensor([3, 1, 2]).sort().toArraySync()`). They are
 * named imports, as an application's would be, so the built page is tree shaken
 * as one (test/browser/playground.test.ts checks that every method is there).
 */
import * as ERROR_CLASSES from "../ir/errors.ts";
import { PASS_NAMES } from "../passes/pipeline.ts";
import {
  BatchwiseError,
  DTypeError,
  ShapeError,
  arange,
  argsort,
  booleanMask,
  cat,
  counters,
  cumprod,
  cumsum,
  diag,
  einsum,
  eye,
  fromPadded,
  fromTypedArray,
  full,
  getBackend,
  grad,
  hessian,
  initWebGPU,
  jacfwd,
  jacrev,
  jagged,
  JaggedTensor,
  jit,
  jvp,
  linalg,
  linspace,
  logSoftmax,
  logspace,
  logsumexp,
  nonzero,
  ones,
  padSequence,
  Quaternion,
  R2,
  random,
  Rot,
  Scalar,
  setBackend,
  sl,
  softmax,
  sort,
  SR2,
  stack,
  std,
  Tensor,
  TensorDict,
  tensor,
  topk,
  unpadSequence,
  valueAndGrad,
  Vec,
  vjp,
  where,
  zeros,
  type DType,
  type JitArg,
  type JitFunction,
  type WebGPUBackend,
} from "../src/index.ts";

/** What the function box's code sees by name, and the console as `batchwise` (see the module comment). */
const LIB = {
  Tensor,
  tensor,
  fromTypedArray,
  zeros,
  ones,
  full,
  arange,
  linspace,
  logspace,
  eye,
  diag,
  where,
  einsum,
  softmax,
  logSoftmax,
  logsumexp,
  std,
  cumsum,
  cumprod,
  sort,
  argsort,
  topk,
  sl,
  booleanMask,
  nonzero,
  linalg,
  random,
  grad,
  valueAndGrad,
  vjp,
  jvp,
  jacfwd,
  jacrev,
  hessian,
  jit,
  jagged,
  fromPadded,
  JaggedTensor,
  padSequence,
  unpadSequence,
  TensorDict,
  stack,
  cat,
  Scalar,
  Vec,
  Rot,
  R2,
  SR2,
  Quaternion,
  getBackend,
  setBackend,
  counters,
  ShapeError,
  DTypeError,
};
(window as unknown as { batchwise: typeof LIB }).batchwise = LIB;

type Fn = JitFunction<[Tensor], JitArg | readonly JitArg[]>;
type BackendName = "js" | "webgpu";

const $ = <T extends HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`playground: no element #${id}`);
  return el as T;
};

const ui = {
  code: $<HTMLTextAreaElement>("code"),
  base: $<HTMLInputElement>("base"),
  dtype: $<HTMLSelectElement>("dtype"),
  batches: $<HTMLInputElement>("batches"),
  backend: $<HTMLSelectElement>("backend"),
  run: $<HTMLButtonElement>("run"),
  note: $<HTMLParagraphElement>("input-note"),
  status: $<HTMLDivElement>("status"),
  error: $<HTMLPreElement>("error"),
  counters: $<HTMLTableElement>("counters"),
  results: $<HTMLTableElement>("results"),
  pass: $<HTMLSelectElement>("pass"),
  ir: $<HTMLPreElement>("ir"),
  kernels: $<HTMLPreElement>("kernels"),
  kernelLang: $<HTMLSpanElement>("kernel-lang"),
  graph: $<HTMLDivElement>("graph"),
  dot: $<HTMLPreElement>("dot"),
};

/** How many values of each output the results table shows at the start and at the end. */
const FIRST = 8;
const LAST = 4;

/** The traced function of the last run, for the pass selector. */
let current: Fn | undefined;
let webgpu: Promise<WebGPUBackend> | undefined;

function setState(state: "ready" | "running" | "done" | "error"): void {
  document.body.dataset["state"] = state;
  ui.run.disabled = state === "running";
}

/**
 * The class name of a BatchwiseError, by the export names of ir/errors.ts (all the
 * error classes batchwise exports). Not `e.name`: the library sets it from
 * `new.target.name`, which a minifier renames (the built page would say "t").
 */
function errorName(e: BatchwiseError): string {
  for (const [name, cls] of Object.entries(ERROR_CLASSES)) if (cls !== BatchwiseError && e instanceof cls) return name;
  return "BatchwiseError";
}

function showError(e: unknown): void {
  let text: string;
  if (e instanceof BatchwiseError) text = `${errorName(e)}: ${e.message}`;
  else if (e instanceof SyntaxError) text = `SyntaxError in the function: ${e.message}`;
  else if (e instanceof Error) text = `${e.name}: ${e.message}`;
  else text = `Error: ${String(e)}`;
  ui.error.textContent = text;
  ui.error.hidden = false;
  setState("error");
}

/** The input values: element i is i % 7 - 3 (see the module comment). */
function inputValues(n: number, dtype: DType): Float64Array {
  const a = new Float64Array(n);
  for (let i = 0; i < n; i++) a[i] = dtype === "uint32" ? i % 7 : (i % 7) - 3;
  return a;
}

function describeInput(dtype: DType): string {
  const rule = dtype === "uint32" ? "i % 7" : dtype === "bool" ? "(i % 7 - 3) != 0" : "i % 7 - 3";
  return `Input x: shape (B; base), ${dtype}, element i of the flat row-major data is ${rule}.`;
}

function parseList(text: string, what: string, allowEmpty: boolean): number[] {
  const parts = text.split(/[\s,]+/).filter((s) => s !== "");
  if (parts.length === 0 && !allowEmpty) throw new Error(`${what}: give at least one size`);
  return parts.map((s) => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${what}: "${s}" is not a non-negative integer`);
    return n;
  });
}

/** Evaluates the typed code (an expression giving a function) in the page. */
function compileUserFunction(code: string): (x: Tensor) => JitArg | readonly JitArg[] {
  // A local playground runs what its user types, like a browser console; LIB's names are in scope.
  const fn: unknown = new Function(...Object.keys(LIB), `"use strict";\nreturn (${code}\n);`)(...Object.values(LIB));
  if (typeof fn !== "function")
    throw new Error(`the code must be a function such as (x) => x.tanh(), got ${typeof fn}`);
  return fn as (x: Tensor) => JitArg | readonly JitArg[];
}

async function selectBackend(name: BackendName): Promise<string> {
  if (name === "js") {
    setBackend("js");
    return "JS";
  }
  if (!("gpu" in navigator)) throw new Error("WebGPU: navigator.gpu is not available in this browser");
  webgpu ??= initWebGPU({ select: false });
  let backend: WebGPUBackend;
  try {
    backend = await webgpu;
  } catch (e) {
    webgpu = undefined; // try again on the next run
    throw e;
  }
  setBackend("webgpu");
  const a = backend.adapter;
  const adapter = [a.vendor, a.architecture, a.description].filter((s) => s).join(" ");
  return adapter === "" ? "WebGPU" : `WebGPU (${adapter})`;
}

function fmt(v: number, dtype: DType): string {
  if (dtype === "bool") return v ? "true" : "false";
  if (dtype === "float32" || dtype === "float64") return String(Number(v.toPrecision(6)));
  return String(v);
}

function cell(row: HTMLTableRowElement, text: string, cls?: string): HTMLTableCellElement {
  const td = row.insertCell();
  td.textContent = text;
  if (cls !== undefined) td.className = cls;
  return td;
}

function outputsOf(y: unknown): Tensor[] {
  const list = Array.isArray(y) ? (y as unknown[]) : [y];
  return list.map((t, i) => {
    if (t instanceof Tensor) return t;
    const kind = (t as { constructor?: { name?: string } } | null)?.constructor?.name ?? typeof t;
    throw new Error(`output ${i} is a ${kind}: the playground shows Tensor results (or an array of them)`);
  });
}

function showCounters(f: Fn, batchSizes: number): void {
  const body = ui.counters.tBodies[0]!;
  body.replaceChildren();
  const rows: [string, number][] = [["batch sizes", batchSizes], ...Object.entries(f.stats)];
  for (const [name, value] of rows) {
    const tr = body.insertRow();
    tr.dataset["counter"] = name;
    cell(tr, name);
    cell(tr, String(value));
  }
}

function showIr(): void {
  if (current === undefined) return;
  try {
    ui.ir.textContent = current.dump({ after: ui.pass.value });
  } catch (e) {
    showError(e);
  }
}

let vizReady: Promise<{ renderSVGElement(dot: string): SVGSVGElement }> | undefined;

async function showGraph(f: Fn): Promise<void> {
  const dot = f.dot({ after: "fuse" });
  ui.dot.textContent = dot;
  // Graphviz (WASM, about 1.5 MB) loads on first use.
  vizReady ??= import("@viz-js/viz").then((m) => m.instance());
  const viz = await vizReady;
  // Graphviz sizes boxes with the metrics of fonts it knows; "monospace" is not one
  // of them, so its boxes would not fit the browser's monospace text. Courier is.
  ui.graph.replaceChildren(viz.renderSVGElement(dot.replaceAll('fontname="monospace"', 'fontname="Courier"')));
}

async function run(): Promise<void> {
  setState("running");
  ui.error.hidden = true;
  ui.error.textContent = "";
  ui.status.textContent = "running…";
  ui.results.tBodies[0]!.replaceChildren();
  ui.counters.tBodies[0]!.replaceChildren();
  ui.ir.textContent = "";
  ui.kernels.textContent = "";
  ui.dot.textContent = "";
  ui.graph.replaceChildren();
  current = undefined;

  let f: Fn | undefined;
  let batches: number[] = [];
  try {
    const dtype = ui.dtype.value as DType;
    const base = parseList(ui.base.value, "base shape", true);
    batches = parseList(ui.batches.value, "batch sizes", false);
    const backendLabel = await selectBackend(ui.backend.value as BackendName);
    ui.kernelLang.textContent = ui.backend.value === "js" ? "(JS)" : "(WGSL)";
    f = jit(compileUserFunction(ui.code.value)) as Fn;
    const baseCount = base.reduce((a, b) => a * b, 1);
    for (const b of batches) {
      const x = fromTypedArray(inputValues(b * baseCount, dtype), [b, ...base], { batchDim: 1, dtype });
      const t0 = performance.now();
      const outs = outputsOf(await f.callAsync(x));
      const values = await Promise.all(outs.map((t) => t.data()));
      const ms = performance.now() - t0;
      outs.forEach((t, k) => {
        const v = values[k]!;
        const tr = ui.results.tBodies[0]!.insertRow();
        tr.dataset["batch"] = String(b);
        tr.dataset["output"] = String(k);
        cell(tr, String(b));
        cell(tr, `${x.toString()} ${x.dtype}`);
        cell(tr, `${outs.length > 1 ? `#${k} ` : ""}${t.toString()} ${t.dtype}`);
        cell(tr, Array.from(v.subarray(0, FIRST), (n) => fmt(Number(n), t.dtype)).join(", "), "values first");
        cell(
          tr,
          v.length > FIRST
            ? Array.from(v.subarray(Math.max(FIRST, v.length - LAST)), (n) => fmt(Number(n), t.dtype)).join(", ")
            : "",
          "values last",
        );
        cell(tr, k === 0 ? ms.toFixed(2) : "");
        cell(tr, String(f!.stats.traces));
      });
      for (const t of outs) t.dispose();
      x.dispose();
    }
    const s = f.stats;
    ui.status.textContent = `${backendLabel}: ${s.traces} trace${s.traces === 1 ? "" : "s"} and ${s.compiles} kernel compile${s.compiles === 1 ? "" : "s"} for ${batches.length} batch size${batches.length === 1 ? "" : "s"} (the first call's time includes tracing and compiling).`;
  } catch (e) {
    ui.status.textContent = "";
    showError(e);
  }
  // What was traced is worth showing even when a later call failed.
  if (f !== undefined && f.stats.traces > 0) {
    current = f;
    showCounters(f, batches.length);
    showIr();
    try {
      ui.kernels.textContent = f.dump({ kernels: true });
      await showGraph(f);
    } catch (e) {
      showError(e);
    }
  }
  if (ui.error.hidden) setState("done");
  else setState("error");
}

function init(): void {
  for (const p of PASS_NAMES) ui.pass.add(new Option(p, p));
  ui.pass.value = "input";
  ui.pass.addEventListener("change", showIr);
  if (!("gpu" in navigator)) {
    const opt = ui.backend.querySelector<HTMLOptionElement>('option[value="webgpu"]')!;
    opt.disabled = true;
    opt.textContent = "WebGPU (not available here)";
  }
  const note = () => (ui.note.textContent = describeInput(ui.dtype.value as DType));
  ui.dtype.addEventListener("change", note);
  note();
  ui.run.addEventListener("click", () => void run());
  ui.code.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      if (!ui.run.disabled) void run();
    }
  });
  // Nothing should escape run(), but if something does it belongs in the page too.
  window.addEventListener("error", (ev) => showError(ev.error ?? ev.message));
  window.addEventListener("unhandledrejection", (ev) => showError(ev.reason));
  setState("ready");
}

init();
