/**
 * Bundles of format version 2 (no `chunked` flag) still load on batchwise/runtime:
 * test/fixtures/bundle-v2/affine-batchsum.bundle.mjs.txt was written by batchwise at
 * 0e330cf (format 2) for f(x) = [2x + 1, batchSum(x)], x (B; 3), and is pinned by the
 * SHA-256 that version recorded. The loader tells the chunking of its WGSL kernels
 * from their text (the only way for format 2) and hands the backend the flag WebGPU
 * checks; the values are hand-computed.
 */
import { describe, expect, it } from "vitest";
import { fromTypedArray, loadBundle, type Tensor } from "../../src/runtime-entry.js";
import { importBundle } from "../helpers/bundle.js";
import { recordingBackend, V2_BUNDLE_TEXT } from "../helpers/bundle-fixtures.js";

/** The hash batchwise at format 2 recorded (and a user would have pinned). */
const PINNED = "5827f9c148a8e88b3885ed643512eaef5e00b8cb9a3e0ba360008d80e67259a2";

describe("a format-2 bundle on batchwise/runtime", () => {
  it("loads with its pinned hash and computes [2x + 1, batchSum(x)]; its kernels' chunking is told from their WGSL", async () => {
    const mod = await importBundle(V2_BUNDLE_TEXT);
    expect([mod.version, mod.sha256]).toEqual([2, PINNED]);
    const { backend, seen } = recordingBackend();
    const f = await loadBundle(mod, { sha256: PINNED, backend });
    const x = fromTypedArray(Float32Array.from([1, 2, 3, 4, 5, 6]), [2, 3], { batchDim: 1 });
    const [a, b] = f(x) as Tensor[];
    expect(Array.from(await a!.data())).toEqual([3, 5, 7, 9, 11, 13]);
    expect(Array.from(await b!.data())).toEqual([5, 7, 9]);
    // Kernel 0 is elementwise (no chunk count); kernel 1 reduces a batch dim, a tree reduction (chunked).
    expect(seen.map((s) => s.chunked)).toEqual([false, true]);
  });
});
