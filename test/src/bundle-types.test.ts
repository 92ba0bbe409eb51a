/**
 * Typed bundles: `f.bundleTypes()` declares the bundle module's exports, with the
 * traced signature in the types of `args` and `results`, so that `loadBundle(mod)`
 * is typed like the traced function; `f.bundleAsync()` writes the same module as
 * `f.bundle()`. The declarations are checked the way a consumer sees them: the
 * TypeScript compiler (strict) on a consumer file that imports a generated bundle.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  BundleError,
  dictSpec,
  fromTypedArray,
  JaggedTensor,
  jaggedSpec,
  jit,
  loadBundle,
  spec,
  tensor,
  trace,
  type BundleArgs,
  type BundleFunction,
  type BundleModule,
  type BundleResults,
  type Tensor,
  type TensorDict,
} from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";

const root = resolve(import.meta.dirname, "../..");

/** A module typed as its generated declarations type it. */
type TypedModule<A extends readonly unknown[], R> = Omit<BundleModule, "args" | "results"> & {
  readonly args: BundleArgs<A>;
  readonly results: BundleResults<R>;
};

const weights = tensor([1, 2, 3]);
const traced = () =>
  trace(
    (m: Tensor, x: JaggedTensor) => [m.mul(weights), x.mul(2), x.sum()] as [Tensor, JaggedTensor, Tensor],
    [spec("float32", ["B"], [3]), jaggedSpec("float32", [2])],
    { name: "mixed" },
  );

describe("typed bundles", () => {
  it("declare every export, the traced signature in args and results, and the IR types in comments", () => {
    const d = traced().bundleTypes();
    expect(d).toContain(
      `import type { BundleArgs, BundleModule, BundleResults, Tensor, JaggedTensor } from "batchwise";`,
    );
    expect(d).toContain("export declare const args: BundleArgs<[x0: Tensor, x1: JaggedTensor]>;");
    expect(d).toContain("export declare const results: BundleResults<[Tensor, JaggedTensor, Tensor]>;");
    expect(d).toContain("export declare const multi: true;");
    expect(d).toContain(`export declare const format: "batchwise-bundle";`);
    expect(d).toContain(" * - x0: f32[b0; 3]\n * - x1: jagged f32[t0; 2] (offsets i32[r0; ])\n");
    for (const name of [
      "format",
      "version",
      "traced",
      "fuse",
      "graph",
      "args",
      "results",
      "multi",
      "steps",
      "kernels",
      "captured",
      "sha256",
    ]) {
      expect(d).toMatch(new RegExp(`^export declare const ${name}: `, "m"));
    }
    const one = trace((td: TensorDict) => td.get("a") as Tensor, [dictSpec(["B"], { a: spec("int32", ["B"], [2]) })]);
    const d1 = one.bundleTypes({ from: "../lib/index.js" });
    expect(d1).toContain(
      `import type { BundleArgs, BundleModule, BundleResults, Tensor, TensorDict } from "../lib/index.js";`,
    );
    expect(d1).toContain("export declare const args: BundleArgs<[x0: TensorDict]>;");
    expect(d1).toContain("export declare const results: BundleResults<Tensor>;");
    expect(d1).toContain(" * - x0: TensorDict (1 tensor: i32[b0; 2])\n");
    expect(() => one.bundleTypes({ from: "" })).toThrow(BundleError);
  });

  it("bundleAsync writes the module bundle() writes, captured constants included", async () => {
    const f = traced();
    const text = f.bundle();
    expect(text).toContain("data: new Float32Array([1, 2, 3])");
    expect(await f.bundleAsync()).toBe(text);
    expect(() => jit((x: Tensor) => x).bundleTypes()).toThrow(
      "jit @jit: not traced yet; call it once first (or use trace)",
    );
  });

  it("type loadBundle from the module's declarations, or from the function with loadBundle<typeof f>", async () => {
    const f = traced();
    const mod = await importBundle(f.bundle());
    const typed = await loadBundle(mod as TypedModule<[x0: Tensor, x1: JaggedTensor], [Tensor, JaggedTensor, Tensor]>);
    expectTypeOf(typed).toEqualTypeOf<BundleFunction<[x0: Tensor, x1: JaggedTensor], [Tensor, JaggedTensor, Tensor]>>();
    expectTypeOf(typed.callAsync).returns.toEqualTypeOf<Promise<[Tensor, JaggedTensor, Tensor]>>();
    const fromFn = await loadBundle<typeof f>(mod);
    expectTypeOf(fromFn).parameters.toEqualTypeOf<[m: Tensor, x: JaggedTensor]>();
    expectTypeOf(fromFn).returns.toEqualTypeOf<[Tensor, JaggedTensor, Tensor]>();
    // A module with no declarations (a plain BundleModule, or any): the untyped function.
    expectTypeOf(await loadBundle(mod)).toEqualTypeOf<BundleFunction>();
    expectTypeOf(await loadBundle(mod as any)).toEqualTypeOf<BundleFunction>(); // eslint-disable-line @typescript-eslint/no-explicit-any
    // And the typed function computes: m * (1, 2, 3); the jagged rows doubled and summed.
    const m = fromTypedArray(Float32Array.from([1, 1, 1, 2, 2, 2]), [2, 3], { batchDim: 1 });
    const x = new JaggedTensor(
      fromTypedArray(Float32Array.from([1, 2, 3, 4, 5, 6]), [3, 2], { batchDim: 1 }),
      fromTypedArray(Int32Array.from([0, 1, 3]), [3], { batchDim: 1 }),
    );
    const [a, b, c] = typed(m, x);
    expect(Array.from(a.dataSync())).toEqual([1, 2, 3, 2, 4, 6]);
    expect(Array.from(b.values.dataSync())).toEqual([2, 4, 6, 8, 10, 12]);
    expect(Array.from(c.dataSync())).toEqual([1, 2, 8, 10]);
  });

  it("type-check a consumer of a generated bundle and its .d.mts with the TypeScript compiler (strict)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "batchwise-types-"));
    const f = traced();
    writeFileSync(join(dir, "mixed.bundle.mjs"), f.bundle());
    writeFileSync(join(dir, "mixed.bundle.d.mts"), f.bundleTypes());
    writeFileSync(
      join(dir, "consumer.mts"),
      `import { loadBundle, type BundleFunction, type JaggedTensor, type Tensor } from "batchwise";
import * as mod from "./mixed.bundle.mjs";
declare const m: Tensor;
declare const x: JaggedTensor;
const f = await loadBundle(mod);
export const out: [Tensor, JaggedTensor, Tensor] = f(m, x);
export const later: Promise<[Tensor, JaggedTensor, Tensor]> = f.callAsync(m, x);
export const g: BundleFunction<[x0: Tensor, x1: JaggedTensor], [Tensor, JaggedTensor, Tensor]> = await loadBundle(mod, { sha256: mod.sha256 });
// @ts-expect-error the second argument is a JaggedTensor
f(m, m);
// @ts-expect-error two arguments
f(m);
// @ts-expect-error the first result is a Tensor
export const wrong: JaggedTensor = f(m, x)[0];
// @ts-expect-error the module says what it is
export const version: 1 = mod.version;
`,
    );
    // The compiler API, checking the consumer and the declarations (with the library's
    // types as they need them): the same diagnostics as tsc on these files, in a few seconds.
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      allowImportingTsExtensions: true,
      lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
      types: [join(root, "node_modules/@types/node"), join(root, "node_modules/@webgpu/types")],
      // "batchwise" is this repository's source (as the package's declarations would be).
      paths: { batchwise: [join(root, "src/index.ts")] },
    };
    const program = ts.createProgram({ rootNames: [join(dir, "consumer.mts")], options });
    const files = ["consumer.mts", "mixed.bundle.d.mts"].map((f) => program.getSourceFile(join(dir, f)));
    expect(files.every((f) => f !== undefined)).toBe(true);
    const diagnostics = [
      ...program.getOptionsDiagnostics(),
      ...program.getGlobalDiagnostics(),
      ...files.flatMap((f) => [...program.getSyntacticDiagnostics(f), ...program.getSemanticDiagnostics(f)]),
    ];
    expect(
      ts.formatDiagnostics(diagnostics, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => dir,
        getNewLine: () => "\n",
      }),
    ).toBe("");
    // The check can fail: a call the declarations forbid is reported.
    writeFileSync(
      join(dir, "wrong.mts"),
      `import { loadBundle, type Tensor } from "batchwise";\nimport * as mod from "./mixed.bundle.mjs";\ndeclare const m: Tensor;\nexport const y: Tensor = (await loadBundle(mod))(m, m)[1];\n`,
    );
    const wrong = ts.createProgram({ rootNames: [join(dir, "wrong.mts")], options, oldProgram: program });
    const messages = wrong
      .getSemanticDiagnostics(wrong.getSourceFile(join(dir, "wrong.mts")))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    expect(messages).toHaveLength(2);
    expect(messages.join("\n")).toContain("Type 'JaggedTensor' is missing the following properties from type 'Tensor'"); // the result [1] is a JaggedTensor
    expect(messages.join("\n")).toContain(
      "Argument of type 'Tensor' is not assignable to parameter of type 'JaggedTensor'.",
    ); // x1 is a JaggedTensor
  }, 60_000);
});
