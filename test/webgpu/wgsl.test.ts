/**
 * WGSL text from kernel IR, without a GPU: what goes into the source (and what
 * must not), helper emission, and the kernels codegen refuses.
 */
import { describe, expect, it } from "vitest";
import { DTypeError, UnsupportedOpError } from "../../ir/errors.js";
import { ix, type Kernel } from "../../ir/kernel.js";
import {
  kernelToWGSL,
  outputCount,
  wgslLaunchPlan,
  wgslLoopTrips,
  wgslWorkgroups,
  wgslParamLayout,
} from "../../codegen/wgsl.js";

const add3: Kernel = {
  batchRank: 2,
  baseShape: [3],
  reduce: null,
  unroll: false,
  inputs: [
    { dtype: "float32", batchRank: 2, baseShape: [3] },
    { dtype: "float32", batchRank: 1, baseShape: [] },
  ],
  exprs: [
    { k: "load", input: 0, index: [ix.v(0)], dtype: "float32" },
    { k: "load", input: 1, index: [], dtype: "float32" },
    { k: "binary", op: "add", a: 0, b: 1, dtype: "float32" },
  ],
  outputs: [{ dtype: "float32", value: 2, reduce: null }],
};

describe("kernelToWGSL", () => {
  it("emits batch sizes and strides as uniform reads, base sizes as constants", () => {
    expect(kernelToWGSL(add3)).toMatchInlineSnapshot(`
      "struct Params { v: array<vec4<u32>, 2> }
      @group(0) @binding(0) var<uniform> P: Params;
      @group(0) @binding(1) var<storage, read> in0: array<f32>;
      @group(0) @binding(2) var<storage, read> in1: array<f32>;
      @group(0) @binding(3) var<storage, read_write> out0: array<f32>;
      var<workgroup> bw_wz: u32;
      fn bw_k(bits: u32) -> f32 { return bitcast<f32>(bits | bw_wz); }
      fn bw_id(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) | bw_wz); }
      @compute @workgroup_size(64)
      fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
        let v3: u32 = ((wid.y * nwg.x + wid.x) * 64u);
        let v4: u32 = (v3 + lid);
        let v7: u32 = P.v[0].x;
        let v8: bool = (v4 >= v7);
        if (v8) {
          return;
        }
        let v10: u32 = (v4 % 3u);
        let v11: u32 = (v4 / 3u);
        let v12: u32 = P.v[0].z;
        let v13: u32 = (v11 % v12);
        let v14: u32 = (v11 / v12);
        let v15: u32 = P.v[0].w;
        let v16: u32 = (v14 * v15);
        let v17: u32 = P.v[1].x;
        let v18: u32 = (v13 * v17);
        let v19: u32 = (v16 + v18);
        let v20: u32 = (v19 + v10);
        let v21: f32 = in0[v20];
        let v22: u32 = P.v[1].y;
        let v23: u32 = (v13 * v22);
        let v24: f32 = in1[v23];
        let v25: f32 = (v21 + bw_id(v24));
        out0[v4] = v25;
      }
      "
    `);
    expect(wgslParamLayout(add3)).toEqual({
      count: 0,
      batchSizes: 1,
      inputStrides: [3, 5],
      consts: 6,
      chunks: 6,
      length: 7,
    });
  });

  it("gives one source for kernels that differ only in object identity", () => {
    expect(kernelToWGSL(structuredClone(add3))).toBe(kernelToWGSL(add3));
  });

  it("emits helpers only when used, dependencies first", () => {
    // A float add needs only the opaque-value helpers (its right operand goes through bw_id).
    expect(kernelToWGSL(add3).match(/fn bw_\w+/g)).toEqual(["fn bw_k", "fn bw_id"]);
    const withMax: Kernel = {
      ...add3,
      exprs: [...add3.exprs.slice(0, 2), { k: "binary", op: "maximum", a: 0, b: 1, dtype: "float32" }],
    };
    const src = kernelToWGSL(withMax);
    expect(src.indexOf("fn bw_isnan")).toBeGreaterThan(0);
    expect(src.indexOf("fn bw_isnan")).toBeLessThan(src.indexOf("fn bw_fmax"));
    expect(src).not.toContain("fn bw_fmod");
  });

  it("reduces batch axes with a workgroup tree over run-time sizes (and reduced base axes as constants)", () => {
    const k: Kernel = {
      batchRank: 2,
      baseShape: [4, 5],
      reduce: { batchAxes: [0], baseAxes: [1] },
      unroll: false,
      inputs: [{ dtype: "float32", batchRank: 2, baseShape: [4, 5] }],
      exprs: [{ k: "load", input: 0, index: [ix.v(0), ix.v(1)], dtype: "float32" }],
      outputs: [{ dtype: "float32", value: 0, reduce: "mean" }],
    };
    const src = kernelToWGSL(k);
    // Threads of one workgroup share the reduced elements (batch size from the uniform × 5 base).
    expect(src).toMatch(/let (v\d+): u32 = P\.v\[0\]\.y;[\s\S]*let (v\d+): u32 = \(\1 \* 5u\);/);
    expect(src).toContain("var<workgroup> w0");
    expect(src).toContain("workgroupBarrier();");
    // mean divides once, by the whole reduced count (the batch size × 5, read from the uniform).
    const rn = /let (v\d+): u32 = \(v\d+ \* 5u\);/.exec(src)![1]!;
    const countF = new RegExp(`let (v\\d+): f32 = f32\\(${rn}\\);`).exec(src)![1]!;
    expect(src).toMatch(new RegExp(`= w0\\[0u\\];\\n\\s*let v\\d+: f32 = \\(v\\d+ / ${countF}\\);`));
    expect(outputCount(k, [7, 3])).toBe(3 * 4);
    expect(wgslWorkgroups(k, [7, 3])).toBe(3 * 4);
    // Per thread: ceil(7 * 5 / 64) iterations, then log2(64) = 6 steps of the shared-memory tree.
    expect(wgslLoopTrips(k, [7, 3], 0)).toBe(1 + 6);
    // 3.5M reduced elements: chunks of 64 × 256 per workgroup, so 256 + 6 iterations per thread, not 54,688.
    expect(wgslLaunchPlan(k, [700_000, 3])).toEqual({
      count: 12,
      chunks: Math.ceil((700_000 * 5) / 16384),
      workgroups: 12 * 214,
      partial: true,
      windows: 0,
      rowChunks: 0,
    });
    expect(wgslLoopTrips(k, [700_000, 3], 0)).toBe(256 + 6);
  });

  it("reads constants from the uniform (their bits), so the source does not depend on their values", () => {
    const withConsts = (values: readonly number[]): Kernel => ({
      ...add3,
      exprs: [
        { k: "const", value: values[0]!, dtype: "float32" },
        { k: "const", value: values[1]!, dtype: "float32" },
        { k: "const", value: values[2]!, dtype: "int32" },
        { k: "const", value: values[3]!, dtype: "float32" },
        { k: "const", value: values[4]!, dtype: "uint32" },
        { k: "const", value: values[5]!, dtype: "bool" },
      ],
      outputs: [{ dtype: "float32", value: 0, reduce: null }],
    });
    const src = kernelToWGSL(withConsts([Infinity, NaN, -2147483648, 1e-3, 4294967295, 1]));
    // Slots after the strides (6 = P.v[1].z): f32 and i32 by bitcast, u32 as is, bool as != 0.
    expect(wgslParamLayout(withConsts([0, 0, 0, 0, 0, 0]))).toMatchObject({ consts: 6, chunks: 12, length: 13 });
    expect(src).toContain("f32 = bitcast<f32>(P.v[1].z);");
    expect(src).toContain("f32 = bitcast<f32>(P.v[1].w);");
    expect(src).toContain("i32 = bitcast<i32>(P.v[2].x);");
    expect(src).toContain("u32 = P.v[2].z;");
    expect(src).toContain("bool = (P.v[2].w != 0u);");
    expect(src).not.toMatch(/bw_inf|bw_nan|2147483648|0\.001|4294967295/);
    expect(kernelToWGSL(withConsts([-Infinity, -0, 7, 0.5, 0, 0]))).toBe(src);
  });

  it("rejects float64 with DTypeError naming what is float64", () => {
    const k: Kernel = { ...add3, inputs: [add3.inputs[0]!, { dtype: "float64", batchRank: 1, baseShape: [] }] };
    expect(() => kernelToWGSL(k)).toThrow(DTypeError);
    expect(() => kernelToWGSL(k)).toThrow(/input 1 is float64/);
  });

  it("rejects malformed kernels instead of emitting wrong code", () => {
    const argmax2: Kernel = {
      ...add3,
      reduce: { batchAxes: [0], baseAxes: [0] },
      outputs: [{ dtype: "int32", value: 2, reduce: "argmax" }],
    };
    expect(() => kernelToWGSL(argmax2)).toThrow(/exactly one axis/);
    const forward: Kernel = { ...add3, exprs: [{ k: "unary", op: "neg", x: 0, dtype: "float32" }] };
    expect(() => kernelToWGSL(forward)).toThrow(UnsupportedOpError);
    const mixed: Kernel = { ...add3, outputs: [{ dtype: "float32", value: 2, reduce: "sum" }] };
    expect(() => kernelToWGSL(mixed)).toThrow(/reduce op/);
  });
});
