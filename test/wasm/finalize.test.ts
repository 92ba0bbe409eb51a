/**
 * Tensors on the wasm backend give their block of WebAssembly memory back when they are
 * disposed or, if never disposed, when the garbage collector finalizes them; a disposed
 * tensor's later collection must not free the block again (by then another tensor may
 * own it).
 */
import { describe, expect, it } from "vitest";
import { fromTypedArray, initWasm, setBackend, type Tensor } from "../../src/index.js";
import { collect } from "../helpers/memory.js";

/** Collects until the heap's bytes in use reach `want` (finalizers run in tasks after a collection), at most 20 times. */
async function collectUntil(inUse: () => number, want: number): Promise<void> {
  for (let i = 0; i < 20 && inUse() !== want; i++) await collect();
}

describe("wasm tensors and the garbage collector", () => {
  it("undisposed tensors are freed when collected; a disposed tensor's collection frees nothing twice", async () => {
    const be = await initWasm({ threads: 1 });
    try {
      const heap = be.heap;
      await collect();
      const base = heap.inUse;
      // Dropped without dispose: 20 blocks of 4 KiB.
      (() => {
        for (let i = 0; i < 20; i++) fromTypedArray(new Float32Array(1024).fill(i), [1024]);
      })();
      expect(heap.inUse).toBeGreaterThanOrEqual(base + 20 * 4096);
      await collectUntil(() => heap.inUse, base);
      expect(heap.inUse).toBe(base);

      // Disposed, then its block reused by a live tensor; collecting the disposed one must leave it alone.
      let a: Tensor | undefined = fromTypedArray(new Float32Array(1024).fill(1), [1024]);
      a.dispose();
      a = undefined;
      const live = fromTypedArray(new Float32Array(1024).fill(7), [1024]);
      await collect();
      expect(heap.inUse).toBe(base + 4096);
      // A new tensor of the same size must not get the live one's block.
      const other = fromTypedArray(new Float32Array(1024).fill(9), [1024]);
      expect([...live.dataSync()].every((v) => v === 7)).toBe(true);
      expect([...other.dataSync()].every((v) => v === 9)).toBe(true);
      live.dispose();
      other.dispose();
      live.dispose(); // a second dispose is a no-op
      expect(heap.inUse).toBe(base);
    } finally {
      setBackend("js");
    }
  });
});

describe("wasm: fromTypedArray of a view of the memory", () => {
  it("copies it, so disposing the viewed tensor and reusing its block does not change the new tensor", async () => {
    await initWasm({ threads: 1 });
    try {
      const a = fromTypedArray(new Float32Array(256).fill(3), [256]);
      const view = a.dataSync({ copy: false });
      const b = fromTypedArray(view, [256], { copy: false });
      a.dispose();
      // Same size class: this tensor gets a's block back from the pool.
      const c = fromTypedArray(new Float32Array(256).fill(-1), [256]);
      expect([...b.dataSync()].every((v) => v === 3)).toBe(true);
      expect([...c.dataSync()].every((v) => v === -1)).toBe(true);
      b.dispose();
      c.dispose();
    } finally {
      setBackend("js");
    }
  });
});
