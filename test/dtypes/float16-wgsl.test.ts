/**
 * The WGSL text of kernels over float16 and the narrow integers, without a GPU (Dawn
 * on llvmpipe has no "shader-f16", so float16 kernels are not executed here): `enable
 * f16;`, f16 registers over f32 storage, i32 storage for the narrow integers with the
 * wrap after each op; and the narrow pass that puts every computation in 32 bits.
 */
import { describe, expect, it } from "vitest";
import { kernelToWGSL } from "../../codegen/wgsl.js";
import { makeGraph, Node } from "../../ir/graph.js";
import { printGraph } from "../../ir/print.js";
import { runPipeline } from "../../passes/pipeline.js";

function wgslOf(dtype: "float16" | "uint8" | "int8", op: "add" | "mul"): { text: string; narrow: string } {
  const x = Node.make("input", [], { index: 0 }, { dtype, batch: ["b0"], base: [4] });
  const y = Node.make(op, [x, x]);
  const g = makeGraph("f", [x], [y]);
  const r = runPipeline(g, { maxKernelBuffers: 8, unrollLimit: 64, mixedBaseOutputs: true, relaxedFloat32: false });
  const kernels = r.schedule.steps.flatMap((s) => (s.kind === "kernel" ? [s.kernel] : []));
  expect(kernels.length).toBe(1);
  return { text: kernelToWGSL(kernels[0]!), narrow: printGraph(r.stages.get("narrow")!) };
}

describe("WGSL for the narrow dtypes", () => {
  it("float16: enable f16, f16 registers, f32 storage, arithmetic in f32 rounded back to f16", () => {
    const { text, narrow } = wgslOf("float16", "add");
    expect(narrow).toContain("cast %arg0 {dtype=float32} : f32[b0; 4]");
    expect(narrow).toMatch(/add %\d+, %\d+ : f32\[b0; 4\]/);
    expect(narrow).toMatch(/cast %\d+ \{dtype=float16\} : f16\[b0; 4\]/);
    expect(text.startsWith("enable f16;\n")).toBe(true);
    expect(text).toContain("var<storage, read> in0: array<f32>;");
    expect(text).toContain("var<storage, read_write> out0: array<f32>;");
    expect(text).toMatch(/: f16 = f16\(in0\[/);
    expect(text).toMatch(/: f16 = bw_f2h\(v\d+\);/);
    expect(text).toContain("fn bw_f2h(x: f32) -> f16");
    expect(text).toMatch(/out0\[[^\]]+\] = f32\(v\d+\);/);
  });

  it("uint8 and int8: i32 storage, no f16, the wrap after the op", () => {
    const u = wgslOf("uint8", "add").text;
    expect(u).not.toContain("enable f16");
    expect(u).toContain("var<storage, read> in0: array<i32>;");
    expect(u).toContain("& 255i)");
    const s = wgslOf("int8", "mul").text;
    expect(s).toContain("<< 24u) >> 24u)");
  });
});

describe("the narrow pass", () => {
  it("computes every op on a narrow integer in 32 bits and casts back after each; moves stay narrow", () => {
    const x = Node.make("input", [], { index: 0 }, { dtype: "uint8", batch: ["b0"], base: [4] });
    const t = Node.make("permute", [Node.make("reshape", [x], { shape: [2, 2] })], { perm: [1, 0] });
    const y = Node.make("sum", [Node.make("mul", [t, t])], { batchAxes: [], baseAxes: [1], keep: false });
    const r = runPipeline(makeGraph("f", [x], [y]));
    expect(printGraph(r.stages.get("narrow")!)).toMatchInlineSnapshot(`
      "func @f(%arg0: u8[b0; 4]) -> (u32[b0; 2]) {
        %0 = reshape %arg0 {shape=[2,2]} : u8[b0; 2,2]
        %1 = permute %0 {perm=[1,0]} : u8[b0; 2,2]
        %2 = cast %1 {dtype=uint32} : u32[b0; 2,2]
        %3 = mul %2, %2 : u32[b0; 2,2]
        %4 = cast %3 {dtype=uint8} : u8[b0; 2,2]
        %5 = cast %4 {dtype=uint32} : u32[b0; 2,2]
        %6 = sum %5 {baseAxes=[1], batchAxes=[], keep=false} : u32[b0; 2]
        return %6
      }"
    `);
  });
});
