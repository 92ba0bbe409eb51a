/**
 * What the bundle tests share: the format-2 fixture, a backend that records what its
 * `load` is handed, and the batched 3x3 matrices and jagged rows fed to traced functions.
 * Imports only what batchwise/runtime also carries (no compiler), so runtime tests can use it.
 */
import { readFileSync } from "node:fs";
import type { Backend, ShippedKernel } from "../../runtime/backend.js";
import { getBackend } from "../../src/backend.js";
import { fromTypedArray, JaggedTensor, type Tensor } from "../../src/runtime-entry.js";

/**
 * test/fixtures/bundle-v2/affine-batchsum.bundle.mjs.txt: the text batchwise at 0e330cf
 * (format 2) wrote for f(x) = [2x + 1, batchSum(x)], x (B; 3).
 */
export const V2_BUNDLE_TEXT = readFileSync(
  new URL("../fixtures/bundle-v2/affine-batchsum.bundle.mjs.txt", import.meta.url),
  "utf8",
);

/** The current backend, recording what its `load` is handed. */
export function recordingBackend(): { backend: Backend; seen: ShippedKernel[] } {
  const base = getBackend();
  const seen: ShippedKernel[] = [];
  const backend = Object.create(base, {
    load: { value: (k: Parameters<Backend["load"]>[0], s: ShippedKernel) => (seen.push(s), base.load(k, s)) },
  }) as Backend;
  return { backend, seen };
}

/** B float32 3x3 matrices (B; 3, 3), flat element i being `entry(i)`. */
export const batchOfMats = (B: number, entry: (i: number) => number): Tensor =>
  fromTypedArray(
    Float32Array.from({ length: B * 9 }, (_, i) => entry(i)),
    [B, 3, 3],
    { batchDim: 1 },
  );

/** Jagged rows of 3 float32 values, `lengths` rows per batch entry, flat value i being `entry(i)`. */
export function jaggedRows(lengths: readonly number[], entry: (i: number) => number): JaggedTensor {
  const off = [0];
  for (const l of lengths) off.push(off[off.length - 1]! + l);
  const T = off[off.length - 1]!;
  return new JaggedTensor(
    fromTypedArray(
      Float32Array.from({ length: T * 3 }, (_, i) => entry(i)),
      [T, 3],
      { batchDim: 1 },
    ),
    fromTypedArray(Int32Array.from(off), [off.length], { batchDim: 1 }),
  );
}
