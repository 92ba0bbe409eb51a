/**
 * Bundle sizes (scripts/size.ts, `npm run size`): a page that only loads and runs
 * bundles through batchwise/runtime contains no tracer, no passes, no code
 * generator and no eval, nor the code it only needs for some bundles or some
 * browsers (jagged tensors, TensorDicts, the zod schema that explains a malformed
 * module, the SHA-256 fallback), and the pages stay within the budgets:
 * 25 KB min+gzip for the runtime page, 74 KB for a jit page (raised from 60 and 70, see scripts/size.ts).
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
    // Loaded only by a page that uses them, or only when their code runs (dynamic imports: lazy chunks).
    expect(
      runtimeFiles.filter((f) => /^src\/(ragged|tensordict)\/|zod|@noble|bundle-schema|sha256-sync/.test(f)),
    ).toEqual([]);
    const lazy = s.runtime.lazy.flatMap((c) => c.inputs);
    expect(lazy).toEqual(expect.arrayContaining(["src/bundle-schema.ts", "src/sha256-sync.ts"]));
    expect(lazy.some((f) => f.includes("node_modules/zod/"))).toBe(true);
    expect(lazy.some((f) => f.includes("node_modules/@noble/hashes/"))).toBe(true);
    expect(s.jit.gzip).toBeLessThanOrEqual(BUDGET.jit);
    expect(s.runtime.gzip).toBeLessThanOrEqual(BUDGET.runtime);
    expect(BUDGET).toEqual({ jit: 74 * 1024, runtime: 27.5 * 1024 });
  });
});
