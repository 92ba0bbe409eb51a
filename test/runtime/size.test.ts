/**
 * Bundle sizes (scripts/size.ts, `npm run size`): a page that only loads and runs
 * bundles through batchwise/runtime contains no tracer, no passes and no code
 * generator and no eval, and a jit page stays within the 60 KB min+gzip budget.
 */
import { describe, expect, it } from "vitest";
import { BUDGET, compilerInputs, sizes } from "../../scripts/size.js";

describe("bundle sizes", () => {
  it("the runtime page has no compiler files, and both pages stay within their bounds", async () => {
    const s = await sizes();
    const runtimeFiles = [...s.runtime.inputs.keys()];
    // Positive control: the same check finds the compiler in the jit page.
    expect(compilerInputs(s.jit)).toEqual(expect.arrayContaining(["passes/fuse.ts", "codegen/js.ts", "src/jit.ts"]));
    expect(compilerInputs(s.runtime)).toEqual([]);
    expect(runtimeFiles).toContain("src/bundle-load.ts");
    // No eval: the JS kernels arrive as functions; only the compiler (runtime/js.ts) uses new Function.
    expect(s.jit.code).toMatch(/new Function\(/);
    expect(s.runtime.code).not.toMatch(/new Function\(|\beval\(/);
    expect(runtimeFiles.filter((f) => /zod\/v4\/classic\//.test(f))).toEqual([]);
    expect(s.jit.gzip).toBeLessThanOrEqual(BUDGET.jit);
    // The target for the runtime page is 25 KB; it is at about 40 KB (see scripts/size.ts): this bound stops it growing.
    expect(s.runtime.gzip).toBeLessThanOrEqual(42 * 1024);
  });
});
