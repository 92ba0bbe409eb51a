/**
 * The bundle format version and the per-kernel `chunked` flag (format 3): written by
 * the code generator, checked by the full loader against the kernel IR, and handed to
 * the backend's `load` (where WebGPU refuses a chunked launch of unchunked WGSL); format-2
 * bundles (test/fixtures/bundle-v2, written by the format-2 batchwise) still load, and
 * other versions are BundleErrors naming the version. Values are hand-computed.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { BundleError, bundleSha256, jit, loadBundle, tensor, type BundleModule, type Tensor } from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";
import { recordingBackend, V2_BUNDLE_TEXT } from "../helpers/bundle-fixtures.js";

const x = () =>
  tensor(
    [
      [1, 2, 3],
      [4, 5, 6],
    ],
    { batchDim: 1 },
  );
/** f(x) = [2x + 1, batchSum(x)] at x = [[1,2,3],[4,5,6]], by hand. */
const WANT = [
  [3, 5, 7, 9, 11, 13],
  [5, 7, 9],
];

const values = async (out: unknown) => Promise.all((out as Tensor[]).map(async (t) => Array.from(await t.data())));

let text = "";
let mod: BundleModule;
beforeAll(async () => {
  const f = jit((t: Tensor) => [t.mul(2).add(1), t.batchSum()], { name: "v3fixture" });
  f(x());
  text = f.bundle();
  mod = await importBundle(text);
});

describe("bundle format 3", () => {
  it("is version 3; each WGSL kernel says whether it reads its chunk count, and load is handed that flag", async () => {
    expect(mod.version).toBe(3);
    // Kernel 0 is elementwise; kernel 1 reduces a batch dim (a tree reduction: chunks).
    expect(mod.kernels.map((k) => k?.chunked)).toEqual([false, true]);
    const { backend, seen } = recordingBackend();
    const g = await loadBundle(mod, { backend });
    expect(await values(g(x()))).toEqual(WANT);
    expect(seen.map((s) => s.chunked)).toEqual([false, true]);
  });

  it("an edited chunked flag is refused by the kernel IR, with or without a recomputed hash", async () => {
    const edited = await importBundle(text.replace(/chunked: true/, "chunked: false"));
    const rehashed = { ...edited, sha256: await bundleSha256(edited) };
    expect(rehashed.sha256).not.toBe(mod.sha256); // the flag is hashed
    for (const m of [edited, rehashed])
      await expect(loadBundle(m)).rejects.toThrow(
        "loadBundle: step 1's WGSL kernel says chunked: false, its kernel IR gives chunked: true (an edited kernel)",
      );
  });

  it("a WGSL kernel without its flag, or a flag in a format-2 bundle, is malformed", async () => {
    const k = mod.kernels[1]!;
    const noFlag = { ...mod, kernels: [mod.kernels[0], { js: k.js, wgsl: k.wgsl }] };
    await expect(loadBundle(noFlag)).rejects.toThrow(
      "loadBundle: malformed bundle: kernels[1]: wgsl without chunked (true when the WGSL reads its chunk count)",
    );
    const v2 = await importBundle(V2_BUNDLE_TEXT);
    const flagged = { ...v2, kernels: [v2.kernels[0], { ...v2.kernels[1]!, chunked: true }] };
    await expect(loadBundle(flagged)).rejects.toThrow(
      "loadBundle: malformed bundle: kernels[1].chunked is a field of bundle version 3, this bundle says version 2",
    );
  });

  it("other versions are BundleErrors naming the version and the ones read", async () => {
    for (const version of [1, 4]) {
      const p = loadBundle({ ...mod, version });
      await expect(p).rejects.toThrow(BundleError);
      await expect(loadBundle({ ...mod, version })).rejects.toThrow(
        `loadBundle: bundle version ${version}, this batchwise reads versions 2 and 3`,
      );
    }
  });
});

describe("bundle format 2", () => {
  it("loads with the full loader (its recorded hash) and computes the same; chunking is told from its WGSL", async () => {
    const v2 = await importBundle(V2_BUNDLE_TEXT);
    expect(v2.version).toBe(2);
    const { backend, seen } = recordingBackend();
    const g = await loadBundle(v2, {
      backend,
      sha256: "5827f9c148a8e88b3885ed643512eaef5e00b8cb9a3e0ba360008d80e67259a2",
    });
    expect(await values(g(x()))).toEqual(WANT);
    expect(seen.map((s) => s.chunked)).toEqual([false, true]);
  });
});
