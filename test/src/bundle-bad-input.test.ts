/**
 * Bad input for bundles, jit and trace: malformed and tampered bundle modules and
 * fields, and misuses of jit/trace. Each gets a typed BatchwiseError (BundleError
 * for bundles) with a message naming what is wrong, in well under a second.
 *
 * Tampering cases edit the module text as a user's file would be edited, and show
 * that the edit matters: loaded without the checks (`runUnchecked`, what the loader
 * did before them), the tampered bundle gives other numbers than the hand-computed
 * ones, or its graph and its kernels disagree.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { interpret } from "../../ir/interpret.js";
import { topoOrder } from "../../ir/graph.js";
import { parseGraph } from "../../ir/parse.js";
import { mapStep } from "../../ir/schedule.js";
import { Program } from "../../runtime/program.js";
import {
  BundleError,
  DTypeError,
  bundleSha256,
  fromTypedArray,
  JaggedTensor,
  jit,
  loadBundle,
  ShapeError,
  spec,
  tensor,
  trace,
  TraceError,
  type BundleModule,
  type Tensor,
} from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";
import { refuses } from "../helpers/refuses.js";
import { rng } from "../helpers/random-graph.js";
import { js } from "../helpers/run.js";

// The fixture: two tensor arguments, a captured constant, two kernels.
//   out0 = exp(x - y) + k,  out1 = sum(x * y)
const K = [0.5, -1, 2];
const X = [0, 1, 2];
const Y = [1, 1, 1];
const f32 = (v: number) => Math.fround(v);
/** Hand-computed from the formulas above (float32 results of float64 exp, as the JS backend stores them). */
const WANT0 = [f32(Math.exp(-1) + 0.5), f32(Math.exp(0) - 1), f32(Math.exp(1) + 2)];
const WANT1 = [0 * 1 + 1 * 1 + 2 * 1];

const row = (v: number[]) => fromTypedArray(Float32Array.from(v), [1, v.length], { batchDim: 1 });

let text = "";
let mod: BundleModule;

beforeAll(async () => {
  const k = tensor(K);
  const f = jit((x: Tensor, y: Tensor) => [x.sub(y).exp().add(k), x.mul(y).sum()], { name: "fx" });
  f(row(X), row(Y));
  text = f.bundle();
  mod = await importBundle(text);
});

/**
 * Runs a bundle module the way loadBundle did before it checked anything: parse the
 * graph, take the steps and kernels as shipped, run on the JS backend.
 */
async function runUnchecked(m: BundleModule, x: number[], y: number[]): Promise<number[][]> {
  const graph = parseGraph(m.graph);
  const order = topoOrder(graph);
  const steps = m.steps.map((st) => mapStep(st, (i) => order[i]!));
  const program = await Program.fromShipped(
    { graph, order, steps },
    js,
    m.kernels.map((k) => k ?? undefined),
  );
  const args = [x, y].map((v) => ({
    buffer: js.wrap("float32", Float32Array.from(v)),
    type: { dtype: "float32" as const, batch: [1], base: [v.length] },
  }));
  const consts = m.captured.map((c) => ({
    buffer: js.wrap(c.dtype, Float32Array.from(c.data)),
    type: { dtype: c.dtype, batch: [...c.batch], base: [...c.base] },
  }));
  return program.run([...args, ...consts]).map((o) => Array.from(js.readSync(o.buffer)));
}

/** The module text with one edit; the edit must change it. With `rehash`, the recorded SHA-256 is recomputed for the edited content (as a tool, or an attacker, could). */
async function tamper(edit: (t: string) => string, rehash: boolean): Promise<BundleModule> {
  const edited = edit(text);
  expect(edited).not.toBe(text);
  const m = await importBundle(edited);
  if (!rehash) return m;
  const h = await bundleSha256(m);
  return importBundle(edited.replace(/export const sha256 = "[0-9a-f]{64}";/, `export const sha256 = "${h}";`));
}

/**
 * `edit`ed, with the recorded hash kept and with it recomputed (or as `rehashes` says),
 * loadBundle refuses the module with a BundleError saying `message`.
 */
async function refusesTampered(
  edit: (t: string) => string,
  message: string | RegExp,
  rehashes: readonly boolean[] = [false, true],
): Promise<void> {
  for (const rehash of rehashes)
    await refuses(async () => loadBundle(await tamper(edit, rehash)), BundleError, message);
}

const close = (got: number[], want: number[]) => {
  expect(got.length).toBe(want.length);
  got.forEach((v, i) => expect(v).toBeCloseTo(want[i]!, 5));
};

describe("the fixture bundle", () => {
  it("loads, computes the hand-computed values, and so does the unchecked runner", async () => {
    const g = await loadBundle(mod, { sha256: mod.sha256 });
    const [a, b] = g(row(X), row(Y)) as Tensor[];
    close(Array.from(a!.dataSync()), WANT0);
    close(Array.from(b!.dataSync()), WANT1);
    const [u0, u1] = await runUnchecked(mod, X, Y);
    close(u0!, WANT0);
    close(u1!, WANT1);
    expect(mod.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(await bundleSha256(mod)).toBe(mod.sha256);
  });
});

describe("tampered bundles are refused", () => {
  const reorder = (t: string) =>
    t.replace('"inputs": [0, 1, 2], "outputs": [5]', '"inputs": [1, 0, 2], "outputs": [5]');
  const expToSin = (t: string) => t.replace("%1 = exp %0", "%1 = sin %0");
  const jsKernel = (t: string) => t.replace(/(const t\d+ = )Math\.exp\(/, "$1Math.sin(");
  const wgslKernel = (t: string) => t.replace(/(let v\d+: f32 = )bw_fexp\((v\d+)\);/, "$1sin($2);");
  const constant = (t: string) => t.replace("new Float32Array([0.5, -1, 2])", "new Float32Array([0.5, -1, 3])");
  const kernelBase = (t: string) =>
    t.replace('"batchRank": 1, "baseShape": [3], "reduce": null', '"batchRank": 1, "baseShape": [2], "reduce": null');
  const kernelOp = (t: string) => t.replace('"op": "exp"', '"op": "sin"');
  const graphBase = (t: string) => t.replaceAll("f32[b0; 3]", "f32[b0; 4]").replaceAll("f32[; 3]", "f32[; 4]");
  const fuseOpts = (t: string) => t.replace('"unrollLimit": 64', '"unrollLimit": 1');

  it("reordered step inputs (exp(y - x) instead of exp(x - y)): refused, with or without a recomputed hash", async () => {
    const [u0] = await runUnchecked(await tamper(reorder, false), X, Y);
    close(u0!, [f32(Math.exp(1) + 0.5), f32(Math.exp(0) - 1), f32(Math.exp(-1) + 2)]);
    await refusesTampered(
      reorder,
      /loadBundle: step 0 \(kernel\) is not the step its graph schedules \(an edited graph, step or kernel IR, or reordered inputs\)/,
    );
  });

  it("an edited graph (exp -> sin): its graph and its kernels disagree; refused", async () => {
    const m = await tamper(expToSin, true);
    const [u0] = await runUnchecked(m, X, Y);
    const claimed = interpret(
      parseGraph(m.graph),
      [X, Y]
        .map((v) => ({ type: { dtype: "float32" as const, batch: [1], base: [3] }, data: Float32Array.from(v) }))
        .concat([{ type: { dtype: "float32", batch: [], base: [3] }, data: Float32Array.from(K) }]),
    );
    close(u0!, WANT0); // the kernels still compute exp
    close(Array.from(claimed[0]!.data), [f32(Math.sin(-1) + 0.5), f32(Math.sin(0) - 1), f32(Math.sin(1) + 2)]); // the graph says sin
    await refusesTampered(expToSin, /step 0 \(kernel\) is not the step its graph schedules/);
  });

  it("an edited JS kernel (Math.exp -> Math.sin): refused, with or without a recomputed hash", async () => {
    const [u0] = await runUnchecked(await tamper(jsKernel, false), X, Y);
    expect(u0![0]).toBeCloseTo(f32(Math.sin(-1) + 0.5), 5);
    expect(u0![0]).not.toBeCloseTo(WANT0[0]!, 2);
    await refusesTampered(
      jsKernel,
      /loadBundle: step 0's JS kernel is not the code its kernel IR gives \(an edited kernel, or a tool such as a minifier rewrote the module\): at character \d+: expected ….*Math\.exp/s,
    );
  });

  it("an edited WGSL kernel (exp -> sin): refused on any backend, with or without a recomputed hash", async () => {
    const m = await tamper(wgslKernel, false);
    expect(m.kernels[0]!.wgsl).toMatch(/= sin\(v\d+\);/);
    expect(mod.kernels[0]!.wgsl).toMatch(/= bw_fexp\(v\d+\);/);
    await refusesTampered(
      wgslKernel,
      /loadBundle: step 0's WGSL kernel is not the code its kernel IR gives \(an edited kernel\)/,
    );
  });

  it("an edited kernel IR (a step's base shape, an op): refused", async () => {
    const m = await tamper(kernelBase, false);
    expect((m.steps[0] as unknown as { kernel: { baseShape: number[] } }).kernel.baseShape).toEqual([2]);
    for (const edit of [kernelBase, kernelOp])
      await refusesTampered(edit, /step 0 \(kernel\) is not the step its graph schedules/);
  });

  it("a changed baseShape in the graph (3 -> 4, consistently): refused", async () => {
    expect(parseGraph((await tamper(graphBase, false)).graph).inputs[0]!.type.base).toEqual([4]);
    await refusesTampered(graphBase, /loadBundle: step 0 \(kernel\) is not the step its graph schedules/);
  });

  it("edited fusion options: the steps are not the schedule they give; refused", async () => {
    await refusesTampered(
      fuseOpts,
      /loadBundle: (step \d+ \(kernel\) is not the step its graph schedules|the bundle has \d+ steps, its graph schedules \d+)/,
    );
  });

  it("an edited constant: refused by the recorded hash; with a recomputed hash only a pinned hash refuses it (the documented limit)", async () => {
    const [u0] = await runUnchecked(await tamper(constant, false), X, Y);
    expect(u0![2]).toBeCloseTo(f32(Math.exp(1) + 3), 5);
    await refuses(
      async () => loadBundle(await tamper(constant, false)),
      BundleError,
      `loadBundle: the bundle's content does not match its recorded SHA-256 (it was edited after it was written): recorded ${mod.sha256}, content `,
    );
    const rehashed = await tamper(constant, true);
    await refuses(
      () => loadBundle(rehashed, { sha256: mod.sha256 }),
      BundleError,
      `loadBundle: the bundle's SHA-256 is ${rehashed.sha256}, not the ${mod.sha256} the caller pinned`,
    );
    // Not pinned: the edited constant is internally consistent and loads (pinning is the defence).
    const g = await loadBundle(rehashed);
    expect((g(row(X), row(Y)) as Tensor[])[0]!.dataSync()[2]).toBeCloseTo(f32(Math.exp(1) + 3), 5);
  });

  it("edited layout fields (args, results, multi) and a mismatched recorded hash: refused", async () => {
    // Each edit with the hash recomputed: [the line, its edit, the refusal].
    const layoutEdits: [string, string, string][] = [
      [
        'export const args = "tt";',
        'export const args = "tj";',
        "loadBundle: 3 argument tensors and 1 captured tensors for a graph of 3 inputs",
      ],
      [
        'export const results = "tt";',
        'export const results = "t";',
        'loadBundle: the results "t" are 1 tensors, the graph has 2 outputs',
      ],
      [
        "export const multi = true;",
        "export const multi = false;",
        'loadBundle: a bundle returning one value (multi: false) has 2 results "tt"',
      ],
      [
        'export const results = "tt";',
        'export const results = "jt";',
        'loadBundle: the results "jt" are 3 tensors, the graph has 2 outputs',
      ],
    ];
    for (const [line, edited, message] of layoutEdits)
      await refusesTampered((t) => t.replace(line, edited), message, [true]);
    await refuses(
      () => loadBundle({ ...mod, sha256: "0".repeat(64) }),
      BundleError,
      /loadBundle: the bundle's content does not match its recorded SHA-256 \(it was edited after it was written\): recorded 0{64}, content [0-9a-f]{64}/,
    );
  });
});

describe("random edits", () => {
  it("any digit changed anywhere in the module's exports is refused (40 random edits)", async () => {
    const r = rng(20261201);
    const body = text.indexOf("\nexport const format"); // the first line is a comment
    const digits = [...text.matchAll(/\d/g)].map((m) => m.index!).filter((i) => i > body);
    for (let n = 0; n < 40; n++) {
      const at = digits[Math.floor(r() * digits.length)]!;
      const d = text[at]!;
      const edited = text.slice(0, at) + String((Number(d) + 1 + Math.floor(r() * 9)) % 10) + text.slice(at + 1);
      expect(edited).not.toBe(text);
      let m: BundleModule;
      try {
        m = await importBundle(edited);
      } catch (e) {
        expect(e, `edit at ${at}`).toBeInstanceOf(SyntaxError); // no longer a module: it never reaches loadBundle
        continue;
      }
      await refuses(() => loadBundle(m), BundleError, /^loadBundle: /);
    }
  });
});

describe("malformed bundles and options are BundleErrors naming the field", () => {
  const cases: [string, () => unknown, string | RegExp][] = [
    ["null", () => null, "loadBundle: not a batchwise bundle (format undefined)"],
    ["a number", () => 42, "loadBundle: not a batchwise bundle (format undefined)"],
    ["a string", () => "export const format = 1", "loadBundle: not a batchwise bundle (format undefined)"],
    ["another format", () => ({ ...mod, format: "onnx" }), 'loadBundle: not a batchwise bundle (format "onnx")'],
    [
      "a version as a string",
      () => ({ ...mod, version: "2" }),
      'loadBundle: bundle version "2", this batchwise reads versions 2 and 3',
    ],
    [
      "version 1 (before hashes)",
      () => ({ ...mod, version: 1 }),
      "loadBundle: bundle version 1, this batchwise reads versions 2 and 3 (write it again with f.bundle())",
    ],
    [
      "a missing field",
      () => {
        const { steps: _s, ...rest } = mod;
        return rest;
      },
      /loadBundle: malformed bundle: steps: /,
    ],
    ["an unknown field", () => ({ ...mod, extra: 1 }), /loadBundle: malformed bundle: .*extra/],
    ["steps not an array", () => ({ ...mod, steps: {} }), /loadBundle: malformed bundle: steps: /],
    [
      "a step of an unknown kind",
      () => ({ ...mod, steps: [{ ...mod.steps[0]!, kind: "loop" }, mod.steps[1]] }),
      /loadBundle: malformed bundle: steps\[0\]\.kind: /,
    ],
    [
      "a negative node index",
      () => ({ ...mod, steps: [{ ...mod.steps[0]!, inputs: [-1, 1, 2] }, mod.steps[1]] }),
      /loadBundle: malformed bundle: steps\[0\]\.inputs\[0\]: /,
    ],
    [
      "a fractional node index",
      () => ({ ...mod, steps: [{ ...mod.steps[0]!, space: 1.5 }, mod.steps[1]] }),
      /loadBundle: malformed bundle: steps\[0\]\.space: /,
    ],
    [
      "a node index out of range",
      () => ({ ...mod, steps: [{ ...mod.steps[0]!, inputs: [999, 1, 2] }, mod.steps[1]] }),
      /loadBundle: step 0 \(kernel\) is not the step its graph schedules/,
    ],
    [
      "kernel exprs not an array",
      () => ({
        ...mod,
        steps: [
          { ...mod.steps[0]!, kernel: { ...(mod.steps[0] as { kernel: object }).kernel, exprs: "abc" } },
          mod.steps[1],
        ],
      }),
      /loadBundle: malformed bundle: steps\[0\]\.kernel\.exprs: /,
    ],
    [
      "a cyclic kernel IR",
      () => {
        const kernel: Record<string, unknown> = { ...(mod.steps[0] as { kernel: object }).kernel };
        kernel.self = kernel;
        return { ...mod, steps: [{ ...mod.steps[0]!, kernel }, mod.steps[1]] };
      },
      /loadBundle: malformed bundle: steps\[0\]\.kernel: a kernel must be plain data/,
    ],
    [
      "a kernel that is a number",
      () => ({ ...mod, kernels: [5, mod.kernels[1]] }),
      /loadBundle: malformed bundle: kernels\[0\]: Invalid input: expected object, received number/,
    ],
    [
      "a JS kernel given as a string",
      () => ({ ...mod, kernels: [{ ...mod.kernels[0]!, js: "function () {}" }, mod.kernels[1]] }),
      /loadBundle: malformed bundle: kernels\[0\]\.js: must be a function/,
    ],
    [
      "a JS kernel with other code",
      () => ({ ...mod, kernels: [{ ...mod.kernels[0]!, js: () => undefined }, mod.kernels[1]] }),
      /loadBundle: step 0's JS kernel is not the code its kernel IR gives/,
    ],
    [
      "fewer kernels than steps",
      () => ({ ...mod, kernels: [mod.kernels[0]] }),
      "loadBundle: the bundle's 2 steps and 1 kernels do not match",
    ],
    [
      "a kernel for a view",
      () => ({
        ...mod,
        kernels: [mod.kernels[0], mod.kernels[1], mod.kernels[0]],
        steps: [...mod.steps, { kind: "view", node: 5, source: 2 }],
      }),
      "loadBundle: the bundle has 3 steps, its graph schedules 2",
    ],
    [
      "constant data as a plain array",
      () => ({ ...mod, captured: [{ ...mod.captured[0]!, data: [0.5, -1, 2] }] }),
      /loadBundle: malformed bundle: captured\[0\]\.data: must be a typed array/,
    ],
    [
      "constant data of another type",
      () => ({ ...mod, captured: [{ ...mod.captured[0]!, data: new Int32Array(3) }] }),
      /loadBundle: malformed bundle: captured\[0\]\.data: must be a Float32Array for float32/,
    ],
    [
      "constant data of the wrong length",
      () => ({ ...mod, captured: [{ ...mod.captured[0]!, data: new Float32Array(4) }] }),
      "loadBundle: malformed bundle: captured[0].data: holds 4 values, its shape (;3) has 3",
    ],
    [
      "a constant of an unknown dtype",
      () => ({ ...mod, captured: [{ ...mod.captured[0]!, dtype: "int64" }] }),
      /loadBundle: malformed bundle: captured\[0\]\.dtype: /,
    ],
    [
      "a constant of another shape",
      () => ({ ...mod, captured: [{ ...mod.captured[0]!, base: [1, 3] }] }),
      "loadBundle: captured constant 0 (;1,3) float32 is not the graph's input 2 (;3) float32",
    ],
    [
      "a missing constant",
      () => ({ ...mod, captured: [] }),
      "loadBundle: 2 argument tensors and 0 captured tensors for a graph of 3 inputs",
    ],
    [
      "an unknown argument code",
      () => ({ ...mod, args: "tx" }),
      /loadBundle: malformed bundle: args: not an argument layout: unknown code "x" at 1/,
    ],
    [
      "a TensorDict layout that is not JSON",
      () => ({ ...mod, args: "d5:{b:0}" }),
      /loadBundle: malformed bundle: args: not an argument layout: a TensorDict at 0 is not JSON/,
    ],
    [
      "a TensorDict layout cut short",
      () => ({ ...mod, results: 'd99:{"b":0}' }),
      /loadBundle: malformed bundle: results: not an argument layout: a TensorDict at 0 is cut short/,
    ],
    ["a graph that is not a string", () => ({ ...mod, graph: 5 }), /loadBundle: malformed bundle: graph: /],
    [
      "a graph that does not parse",
      () => ({ ...mod, graph: "func @x(" }),
      /loadBundle: the bundle's graph does not parse/,
    ],
    [
      "a graph reformatted",
      () => ({ ...mod, graph: mod.graph.replace("  %0", "   %0") }),
      /loadBundle: (the bundle's graph does not print back to its own text|the bundle's graph does not parse)/,
    ],
    ["an unknown traced backend", () => ({ ...mod, traced: "cuda" }), /loadBundle: malformed bundle: traced: /],
    [
      "fusion options missing a field",
      () => ({ ...mod, fuse: { maxKernelBuffers: Infinity, unrollLimit: 64 } }),
      /loadBundle: malformed bundle: fuse\.fusion: /,
    ],
    [
      "a negative buffer limit",
      () => ({ ...mod, fuse: { ...mod.fuse, maxKernelBuffers: -1 } }),
      /loadBundle: malformed bundle: fuse\.maxKernelBuffers: /,
    ],
    [
      "a recorded hash that is not hex",
      () => ({ ...mod, sha256: "xyz" }),
      "loadBundle: malformed bundle: sha256: must be 64 lowercase hex digits",
    ],
    [
      "a field whose getter throws",
      () =>
        Object.defineProperty({ ...mod }, "steps", {
          enumerable: true,
          get: () => {
            throw new RangeError("boom");
          },
        }),
      "loadBundle: malformed bundle: reading it threw (RangeError: boom)",
    ],
  ];
  for (const [name, make, message] of cases) {
    it(name, async () => {
      await refuses(() => loadBundle(make() as BundleModule), BundleError, message);
    });
  }

  it("bad options: not an object, a malformed or a wrong pinned hash", async () => {
    await refuses(() => loadBundle(mod, null as never), BundleError, "loadBundle: options must be an object, got null");
    await refuses(
      () => loadBundle(mod, { sha256: "abc" }),
      BundleError,
      'loadBundle: opts.sha256 must be 64 hex digits, got "abc"',
    );
    await refuses(
      () => loadBundle(mod, { sha256: 5 as never }),
      BundleError,
      "loadBundle: opts.sha256 must be 64 hex digits, got number",
    );
    await refuses(
      () => bundleSha256({ ...mod, steps: 5 } as never),
      BundleError,
      /loadBundle: malformed bundle: steps: /,
    );
    await refuses(
      () => loadBundle(mod, { sha256: "f".repeat(64) }),
      BundleError,
      `loadBundle: the bundle's SHA-256 is ${mod.sha256}, not the ${"f".repeat(64)} the caller pinned`,
    );
    // The pinned hash may be given in upper case.
    await loadBundle(mod, { sha256: mod.sha256.toUpperCase() });
  });

  it("a loaded bundle refuses arguments that do not match its trace", async () => {
    const g = await loadBundle(mod);
    await refuses(
      () => g(row([1, 2]), row(Y)),
      ShapeError,
      "bundle @fx: argument 0 (1; 2) float32 does not match the traced (b0; 3) float32",
    );
    const jag = new JaggedTensor(
      fromTypedArray(new Float32Array(3), [3], { batchDim: 1 }),
      fromTypedArray(Int32Array.from([0, 3]), [2], { batchDim: 1 }),
    );
    await refuses(
      () => g(jag, row(Y)),
      BundleError,
      'bundle @fx: takes arguments "tt" (t tensor, j jagged, d TensorDict), got "jt"',
    );
  });
});

describe("bad jit and trace uses are TraceErrors", () => {
  const ones3 = () => row([1, 1, 1]);
  /** A fresh jit of x => -x, traced once. */
  const tracedNeg = () => {
    const f = jit((x: Tensor) => x.neg());
    f(ones3());
    return f;
  };
  const cases: [string, () => unknown, string | RegExp][] = [
    [
      "a function returning a number",
      () => jit((_x: Tensor) => 3 as unknown as Tensor, { name: "n" })(ones3()),
      "jit @n: the function must return Tensors, JaggedTensors or TensorDicts (or an array of them); it returned a number (3)",
    ],
    [
      "a function returning undefined",
      () => jit((() => undefined) as unknown as (x: Tensor) => Tensor, { name: "u" })(ones3()),
      "jit @u: the function must return Tensors, JaggedTensors or TensorDicts (or an array of them); it returned undefined",
    ],
    [
      "an async function",
      () => jit((async (x: Tensor) => x) as unknown as (x: Tensor) => Tensor, { name: "a" })(ones3()),
      /jit @a: .*it returned a Promise \(an async function cannot be traced/,
    ],
    [
      "an array holding a string",
      () => jit((x: Tensor) => [x, "s"] as unknown as Tensor[], { name: "s" })(ones3()),
      'jit @s: the function must return Tensors, JaggedTensors or TensorDicts (or an array of them); element 1 of the returned array is a string ("s")',
    ],
    [
      "trace returning an object",
      () => trace(() => ({}) as Tensor, [spec("float32", ["B"], [3])], { name: "o" }),
      /jit @o: .*it returned a plain object/,
    ],
    [
      "trace with a negative base size",
      () => trace((x: Tensor) => x, [spec("float32", ["B"], [-1])]),
      "spec: base must be an array of static non-negative sizes, got (-1)",
    ],
    [
      "trace with a fractional base size",
      () => trace((x: Tensor) => x, [spec("float32", ["B"], [1.5])]),
      "spec: base must be an array of static non-negative sizes, got (1.5)",
    ],
    [
      "dump before any trace",
      () => jit((x: Tensor) => x, { name: "d" }).dump(),
      "jit @d: not traced yet; call it once first",
    ],
    [
      "bundle before any trace",
      () => jit((x: Tensor) => x, { name: "b" }).bundle(),
      "jit @b: not traced yet; call it once first (or use trace)",
    ],
    [
      "dump after an unknown pass",
      () => tracedNeg().dump({ after: "nope" }),
      /dump: unknown pass "nope"; passes are input, narrow, lower/,
    ],
    [
      "dot after an unknown pass",
      () => tracedNeg().dot({ after: "nope" }),
      /dot: unknown pass "nope"; passes are input, narrow, lower/,
    ],
    [
      "a number as an argument",
      () => jit((x: Tensor) => x)(5 as unknown as Tensor),
      /arguments and results must be Tensors, JaggedTensors or TensorDicts/,
    ],
    [
      "a traced value used after its trace",
      () => {
        let leaked: Tensor | undefined;
        const f = jit((x: Tensor) => (leaked = x).mul(2));
        f(ones3());
        return jit((y: Tensor) => y.add(leaked!))(ones3());
      },
      "a traced value escaped its jit function and was used outside it",
    ],
  ];
  for (const [name, run, message] of cases) {
    it(name, async () => {
      await refuses(run, TraceError, message);
    });
  }
  it("trace with an unknown dtype is a DTypeError", async () => {
    await refuses(
      () => trace((x: Tensor) => x, [spec("int64" as never, ["B"], [3])]),
      DTypeError,
      "trace: spec 0 has an unknown dtype int64",
    );
  });
});
