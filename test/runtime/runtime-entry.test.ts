/**
 * batchwise/runtime (src/runtime-entry.ts): a bundle written by the full library
 * (in a child process, test/runtime/write-bundle.ts: this file's process never
 * loads the compiler) loads and runs through the lean loader when its SHA-256
 * is pinned, and is refused without a pin or with another hash. Values are
 * worked out by hand.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
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

  it("exports no tracer, and without the full entry eager arithmetic is a BackendError", () => {
    expect(Object.keys(runtime)).not.toContain("jit");
    expect(Object.keys(runtime)).not.toContain("trace");
    const x = tensor([1, 2]);
    expect(Array.from(x.dataSync())).toEqual([1, 2]);
    expect(() => x.add(1).dataSync()).toThrow(BackendError);
    expect(() => x.add(1).dataSync()).toThrow(/needs the compiler of the full batchwise entry/);
  });
});
