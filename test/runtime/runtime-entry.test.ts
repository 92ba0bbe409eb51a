/**
 * batchwise/runtime (src/runtime-entry.ts): a bundle written by the full library
 * (in a child process, test/runtime/write-bundle.ts: this file's process never
 * loads the compiler) loads and runs through the lean loader when its SHA-256
 * is pinned, and is refused without a pin or with another hash. Values are
 * worked out by hand.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import * as runtime from "../../src/runtime-entry.js";
import {
  BackendError,
  BundleError,
  loadBundle,
  tensor,
  type BundleModule,
  type Tensor,
} from "../../src/runtime-entry.js";
import { bundleContent, moduleContent } from "../../src/bundle-load.js";
import { sha256HexSync } from "../../src/sha256-sync.js";
import { importBundle } from "../helpers/bundle.js";
import { refuses } from "../helpers/refuses.js";

// f(x) = [sum over the base of 2x + c, max over the base of x], c = [1, 2, 3] captured.
const text = execFileSync(
  process.execPath,
  ["--import", "tsx", fileURLToPath(new URL("./write-bundle.ts", import.meta.url))],
  { encoding: "utf8" },
);
const writeBundle = (): Promise<BundleModule> => importBundle(text);

describe("batchwise/runtime loadBundle", () => {
  it("runs a pinned bundle on JS with hand-checked values, at two batch sizes", async () => {
    const mod = await writeBundle();
    const g = await loadBundle(mod, { sha256: mod.sha256 });
    // row 0: (2+1)+(4+2)+(6+3) = 18, max 3; row 1: (0+1)+(-2+2)+(1+3) = 5, max 0.5
    const [s, m] = g(
      tensor(
        [
          [1, 2, 3],
          [0, -1, 0.5],
        ],
        { batchDim: 1 },
      ),
    ) as Tensor[];
    expect(s!.shape).toEqual([2]);
    expect(Array.from(s!.dataSync())).toEqual([18, 5]);
    expect(Array.from(m!.dataSync())).toEqual([3, 0.5]);
    // one row: (-2+1)+(0+2)+(2+3) = 6, max 1; the same loaded function, a new batch size
    const [s1, m1] = (await g.callAsync(tensor([[-1, 0, 1]], { batchDim: 1 }))) as Tensor[];
    expect(Array.from(await s1!.data())).toEqual([6]);
    expect(Array.from(await m1!.data())).toEqual([1]);
  });

  it("accepts the pin in upper case", async () => {
    const mod = await writeBundle();
    const g = await loadBundle(mod, { sha256: mod.sha256.toUpperCase() });
    expect(Array.from((g(tensor([[1, 1, 1]], { batchDim: 1 })) as Tensor[])[0]!.dataSync())).toEqual([12]);
  });

  it("refuses a bundle whose hash is not pinned", async () => {
    const mod = await writeBundle();
    await refuses(
      () => loadBundle(mod),
      BundleError,
      /^loadBundle \(batchwise\/runtime\): the bundle's SHA-256 is not pinned; pass the hash you trust .* or load it with the full batchwise entry/,
    );
    await refuses(() => loadBundle(mod, {}), BundleError, /is not pinned/);
  });

  it("refuses a wrong pin, and an edited constant even when its recorded hash was recomputed", async () => {
    const mod = await writeBundle();
    const other = "0".repeat(64);
    await refuses(
      () => loadBundle(mod, { sha256: other }),
      BundleError,
      `loadBundle: the bundle's SHA-256 is ${mod.sha256}, not the ${other} the caller pinned`,
    );
    // A deliberate edit: c = [1, 2, 4], with the recorded hash made to match the new content.
    const captured = [{ ...mod.captured[0]!, data: new Float32Array([1, 2, 4]) }];
    const edited = { ...mod, captured };
    const forged = { ...edited, sha256: sha256HexSync(bundleContent(moduleContent(edited as BundleModule))) };
    await refuses(() => loadBundle(forged as BundleModule, { sha256: mod.sha256 }), BundleError, /the caller pinned/);
    // Without recomputing it, the recorded hash alone already refuses the edit.
    await refuses(
      () => loadBundle(edited as BundleModule, { sha256: mod.sha256 }),
      BundleError,
      /does not match its recorded SHA-256/,
    );
  });

  it("refuses a malformed module with the same schema messages as the full loader", async () => {
    const mod = await writeBundle();
    await refuses(
      () => loadBundle({ ...mod, steps: 5 } as never, { sha256: mod.sha256 }),
      BundleError,
      /^loadBundle: malformed bundle: steps: Invalid input: expected array, received number/,
    );
    await refuses(
      () => loadBundle({ format: "x" } as never, { sha256: mod.sha256 }),
      BundleError,
      /not a batchwise bundle/,
    );
  });

  it("refuses edits the content hash cannot see: an array for a typed array, a kernel's source for its function", async () => {
    const mod = await writeBundle();
    const c = mod.captured[0]!;
    const k = mod.kernels.findIndex((x) => x !== null);
    const step = mod.steps.findIndex((s) => s.kind === "kernel");
    const edits: [string, Record<string, unknown>, RegExp][] = [
      ["captured values as a plain array", { captured: [{ ...c, data: Array.from(c.data) }] }, /captured\[0\]\.data/],
      [
        "captured float32 values as a Float64Array",
        { captured: [{ ...c, data: new Float64Array(Array.from(c.data)) }] },
        /captured\[0\]\.data: must be a Float32Array for float32/,
      ],
      [
        "a JS kernel as its source text",
        { kernels: mod.kernels.map((x, i) => (i === k ? { ...x, js: String(x!.js) } : x)) },
        /kernels\[\d+\]\.js: must be a function/,
      ],
      [
        "a step's inputs as an Int32Array",
        {
          steps: mod.steps.map((s, i) =>
            i === step && s.kind === "kernel" ? { ...s, inputs: new Int32Array(s.inputs) } : s,
          ),
        },
        /steps\[\d+\]\.inputs/,
      ],
    ];
    for (const [what, edit, message] of edits) {
      const edited = { ...mod, ...edit } as BundleModule;
      // The canonical content, and so the SHA-256, is the pinned one: only the loader's own checks can refuse it.
      expect(sha256HexSync(bundleContent(moduleContent(edited))), what).toBe(mod.sha256);
      await refuses(() => loadBundle(edited, { sha256: mod.sha256 }), BundleError, message);
    }
  });

  it("exports no tracer, and without the full entry eager arithmetic is a BackendError", () => {
    expect(Object.keys(runtime)).not.toContain("jit");
    expect(Object.keys(runtime)).not.toContain("trace");
    const x = tensor([1, 2]);
    expect(Array.from(x.dataSync())).toEqual([1, 2]);
    expect(() => x.add(1).dataSync()).toThrow(BackendError);
    expect(() => x.add(1).dataSync()).toThrow(/needs the compiler of the full batchwise entry/);
  });
});

/** A page bundled by esbuild from `contents` (sources of this repository, tree-shaken as an application's bundler does), imported. */
const pages = mkdtempSync(join(tmpdir(), "batchwise-page-"));
let pageCount = 0;
async function bundledPage<T>(contents: string): Promise<T> {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const r = await build({
    stdin: { contents, resolveDir: root, sourcefile: "page.ts", loader: "ts" },
    bundle: true,
    platform: "browser",
    format: "esm",
    write: false,
    logLevel: "silent",
  });
  const file = join(pages, `page${pageCount++}.mjs`);
  writeFileSync(file, r.outputFiles[0]!.contents);
  return (await import(/* @vite-ignore */ pathToFileURL(file).href)) as T;
}

describe("batchwise/runtime: jagged tensors and TensorDicts only where a page uses them", () => {
  // jagged(v, o) = JaggedTensor(2v, o); dict(x) = TensorDict { a: x + 1 }: plain tensors in, a compound result out.
  const compound = JSON.parse(
    execFileSync(
      process.execPath,
      ["--import", "tsx", fileURLToPath(new URL("./write-compound-bundles.ts", import.meta.url))],
      { encoding: "utf8" },
    ),
  ) as { jagged: string; dict: string };

  it("a page that does not load JaggedTensor or TensorDict refuses such results by name; naming them in kinds runs them", async () => {
    const jmod = await importBundle(compound.jagged);
    const dmod = await importBundle(compound.dict);
    type Load = { load(mod: BundleModule, sha256: string): Promise<unknown> };
    const lean = await bundledPage<Load>(`import { loadBundle } from "./src/runtime-entry.ts";
export const load = (mod, sha256) => loadBundle(mod, { sha256 });`);
    for (const [mod, name] of [
      [jmod, "JaggedTensor"],
      [dmod, "TensorDict"],
    ] as const) {
      const err = await lean.load(mod, mod.sha256).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      // The page's own copy of the error classes: checked by name.
      expect(err?.name).toBe("BundleError");
      expect(err?.message).toContain(
        `which this page has not loaded: import { ${name} } from "batchwise/runtime" and name it in the options, loadBundle(mod, { sha256, kinds: [${name}] })`,
      );
    }
    const withKinds = await bundledPage<{
      run(j: BundleModule, d: BundleModule): Promise<Record<string, unknown>>;
    }>(`import { JaggedTensor, TensorDict, fromTypedArray, loadBundle, tensor } from "./src/runtime-entry.ts";
export async function run(jmod, dmod) {
  const j = await loadBundle(jmod, { sha256: jmod.sha256, kinds: [JaggedTensor] });
  const r = j(tensor([1, 2, 3], { batchDim: 1 }), fromTypedArray(new Int32Array([0, 1, 3]), [3], { batchDim: 1 }));
  const d = await loadBundle(dmod, { sha256: dmod.sha256, kinds: [TensorDict] });
  const t = d(tensor([[1, 2], [3, 4]], { batchDim: 1 }));
  return {
    jagged: r instanceof JaggedTensor,
    values: Array.from(r.values.dataSync()),
    offsets: Array.from(r.offsets.dataSync()),
    dict: t instanceof TensorDict,
    a: Array.from(t.get("a").dataSync()),
    shape: t.get("a").shape,
  };
}`);
    // 2 * [1, 2, 3] in rows [0, 1) and [1, 3); [[1, 2], [3, 4]] + 1.
    expect(await withKinds.run(jmod, dmod)).toEqual({
      jagged: true,
      values: [2, 4, 6],
      offsets: [0, 1, 3],
      dict: true,
      a: [2, 3, 4, 5],
      shape: [2, 2],
    });
  });
});
