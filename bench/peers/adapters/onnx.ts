// onnxruntime-node on its CPU execution provider, one InferenceSession per
// benchmark from a graph built in code with a symbolic batch dim.
// B4 is left out: ONNX graphs take dense tensors of fixed rank, so a ragged
// list of 1,000 clouds has no sensible form (one graph input per cloud would
// be a different graph for every batch).

import * as ort from "onnxruntime-node";
import type { B2Out, LibAdapter } from "../../cases.js";
import { GraphBuilder } from "./onnx-graph.js";
import { inverse3 } from "./inv3.js";

// Its thread pool spin-waits between runs by default, which on 2 cores steals
// time from the baseline runs alternating with it; spinning off keeps ratios honest.
async function session(model: Uint8Array): Promise<ort.InferenceSession> {
  return ort.InferenceSession.create(model, {
    executionProviders: ["cpu"],
    graphOptimizationLevel: "all",
    extra: { session: { intra_op: { allow_spinning: "0" }, inter_op: { allow_spinning: "0" } } },
  });
}

function f32(t: ort.Tensor | undefined): Float32Array {
  if (!t) throw new Error("onnxruntime returned no such output");
  return t.data as Float32Array;
}

/** y = exp(-x*x) * sin(3x) + 0.5x - tanh(x) on x: (N) */
function b1Model(): Uint8Array {
  const g = new GraphBuilder();
  const x = g.input("x", ["N"]);
  const sq = g.op1("Mul", [x, x]);
  const e = g.op1("Exp", [g.op1("Neg", [sq])]);
  const s = g.op1("Sin", [g.op1("Mul", [x, g.f32([3])])]);
  const lin = g.op1("Mul", [x, g.f32([0.5])]);
  const sum = g.op1("Add", [g.op1("Mul", [e, s]), lin]);
  g.op1("Sub", [sum, g.op1("Tanh", [x])], {}, "y");
  g.output("y", ["N"]);
  return g.build("b1");
}

/** m: (B, 3, 3) -> inv: (B, 9), det: (B, 1), by cofactors on the 9 split columns. */
function b2Model(): Uint8Array {
  const g = new GraphBuilder();
  const m = g.input("m", ["B", 3, 3]);
  const flat = g.op1("Reshape", [m, g.i64([-1, 9])]);
  const entries = g.op("Split", [flat], { axis: { int: 1 } }, 9);
  const r = inverse3<string>(
    {
      mul: (a, b) => g.op1("Mul", [a, b]),
      sub: (a, b) => g.op1("Sub", [a, b]),
      add: (a, b) => g.op1("Add", [a, b]),
      div: (a, b) => g.op1("Div", [a, b]),
    },
    entries,
  );
  g.op1("Concat", r.inv, { axis: { int: 1 } }, "inv");
  g.op1("Identity", [r.det], {}, "det");
  g.output("inv", ["B", 9]);
  g.output("det", ["B", 1]);
  return g.build("b2");
}

/** x: (B, P, 3) -> (x - mean_p x) / max_p |x - mean_p x| */
function b3Model(): Uint8Array {
  const g = new GraphBuilder();
  const x = g.input("x", ["B", "P", 3]);
  const centred = g.op1("Sub", [x, g.op1("ReduceMean", [x], { axes: { ints: [1] }, keepdims: { int: 1 } })]);
  const norms = g.op1("ReduceL2", [centred], { axes: { ints: [2] }, keepdims: { int: 1 } });
  const scale = g.op1("ReduceMax", [norms], { axes: { ints: [1] }, keepdims: { int: 1 } });
  g.op1("Div", [centred, scale], {}, "y");
  g.output("y", ["B", "P", 3]);
  return g.build("b3");
}

export default async function load(backend: string): Promise<LibAdapter> {
  if (backend !== "cpu")
    throw new Error(`onnxruntime-node: only the cpu execution provider is benchmarked, not ${backend}`);
  return {
    library: "onnxruntime-node",
    backend,
    notes: [`onnxruntime ${ort.env.versions.node}, cpu EP, default intra-op threads (all cores), thread spinning off`],
    kernels: {
      B1: async () => {
        const s = await session(b1Model());
        return {
          run: async ({ x }) => f32((await s.run({ x: new ort.Tensor("float32", x, [x.length]) })).y),
          dispose: () => void s.release(),
        };
      },
      B2: async () => {
        const s = await session(b2Model());
        return {
          run: async ({ m, count }): Promise<B2Out> => {
            const out = await s.run({ m: new ort.Tensor("float32", m, [count, 3, 3]) });
            return { inv: f32(out.inv), det: f32(out.det) };
          },
          dispose: () => void s.release(),
        };
      },
      B3: async () => {
        const s = await session(b3Model());
        return {
          run: async ({ x, clouds, points }) =>
            f32((await s.run({ x: new ort.Tensor("float32", x, [clouds, points, 3]) })).y),
          dispose: () => void s.release(),
        };
      },
    },
    skipped: {
      B4: "no sensible ONNX form: graphs take dense fixed-rank tensors, and a ragged list of 1,000 clouds would need a different graph (one input per cloud) for every batch",
      // --- B8: batched linear algebra ---
      B8solve: "ONNX has no linear-solve operator (Det is its only linear-algebra op)",
      B8eigh: "ONNX has no eigendecomposition operator",
    },
  };
}
