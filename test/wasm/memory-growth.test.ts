/**
 * Host helpers on a WebAssembly backend whose memory is not shared (a page without
 * cross-origin isolation): growing such a memory detaches every view of it, so a helper
 * that reads a tensor through a zero-copy view must not allocate on the backend (make an
 * output tensor, compute a lazy input) while it still reads through that view. Each test
 * starts a backend at one page of memory, so that every output it makes grows the memory;
 * the values are written out by hand.
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { BackendError } from "../../ir/errors.js";
import { WasmBackend } from "../../runtime/wasm/backend.js";
import { getBackend, registerBackend } from "../../src/backend.js";
import {
  booleanMask,
  loadNpz,
  saveNpzSync,
  fromTypedArray,
  packedToList,
  paddedToList,
  setBackend,
  tensor,
  unpadSequence,
  type Tensor,
} from "../../src/index.js";

let backend: WasmBackend;
const before = getBackend();

beforeEach(() => {
  // A fresh memory of one page (the launch-argument block): the first buffers already grow it.
  backend = new WasmBackend({ initialMemoryBytes: 0 }, false);
  expect(backend.heap.shared).toBe(false);
  registerBackend(backend);
  setBackend("wasm");
});
afterAll(() => {
  if (before.name !== "wasm") setBackend(before.name as "js" | "webgpu");
});

/** n float32 values i + 0.5 (large enough that each output of the helpers below needs new pages). */
const ramp = (n: number): Float32Array => Float32Array.from({ length: n }, (_, i) => i + 0.5);
/** The memory's size in bytes now. */
const size = (): number => backend.heap.memory.buffer.byteLength;
const onWasm = (t: Tensor): void => {
  expect(t._src.kind === "buffer" && t._src.backend).toBe(backend);
};

describe("host helpers on a non-shared WebAssembly memory that grows", () => {
  it("paddedToList: every row is read before the memory grows", () => {
    const N = 20_000; // 80 KB per row
    // (3, N, 1): rows of N, N-1 and N-2 values; shapePerTensor on wasm too.
    const padded = fromTypedArray(ramp(3 * N), [3, N, 1]);
    const spt = tensor([[N], [N - 1], [N - 2]], { dtype: "int32" });
    onWasm(padded);
    const bytes = size();
    const list = paddedToList(padded, spt);
    expect(size()).toBeGreaterThan(bytes);
    expect(list.map((t) => t.shape)).toEqual([
      [N, 1],
      [N - 1, 1],
      [N - 2, 1],
    ]);
    list.forEach((t, r) => {
      onWasm(t);
      const v = t.dataSync();
      // Row r starts at r·N in the padded layout.
      expect([v[0], v[1], v[v.length - 1]]).toEqual([r * N + 0.5, r * N + 1.5, r * N + (N - r) - 0.5]);
    });
  });

  it("packedToList: every part is read before the memory grows", () => {
    const N = 20_000;
    const packed = fromTypedArray(ramp(3 * N), [3 * N, 1]);
    const spt = tensor([[N], [N], [N]], { dtype: "int32" });
    const bytes = size();
    const list = packedToList(packed, spt, [0, N, 2 * N, 3 * N]);
    expect(size()).toBeGreaterThan(bytes);
    expect(list.map((t) => t.shape[0])).toEqual([N, N, N]);
    list.forEach((t, r) => {
      const v = t.dataSync();
      expect([v[0], v[N - 1]]).toEqual([r * N + 0.5, r * N + N - 0.5]);
    });
  });

  it("unpadSequence: rows shorter than a copy run are read before the memory grows", () => {
    // Row b keeps its first 8 - b of 40,000 positions (value b·40000 + pos + 0.5).
    const L = 40_000;
    const B = 4;
    const padded = fromTypedArray(ramp(B * L), [B, L], { batchDim: 2 });
    const maskData = new Uint8Array(B * L);
    for (let b = 0; b < B; b++) maskData.fill(1, b * L, b * L + 8 - b);
    const mask = fromTypedArray(maskData, [B, L], { batchDim: 2, dtype: "bool" });
    const bytes = size();
    const rows = unpadSequence(padded, mask);
    expect(size()).toBeGreaterThan(bytes);
    expect(rows.map((t) => t.shape)).toEqual([[8], [7], [6], [5]]);
    rows.forEach((t, b) => {
      expect(Array.from(t.dataSync())).toEqual(Array.from({ length: 8 - b }, (_, k) => b * L + k + 0.5));
    });
  });

  it("booleanMask: a lazy mask computed after x's values were taken does not detach them", () => {
    const N = 30_000;
    // x lazy: i + 0.5 doubled; mask lazy (non-bool, compared with 0): every third element.
    const x = fromTypedArray(ramp(N), [N], { batchDim: 1 }).mul(2);
    const m = fromTypedArray(
      Float32Array.from({ length: N }, (_, i) => (i % 3 === 0 ? 1 : 0)),
      [N],
      { batchDim: 1 },
    ).mul(1);
    const bytes = size();
    const y = booleanMask(x, m);
    expect(size()).toBeGreaterThan(bytes);
    expect(y.shape).toEqual([N / 3]);
    const v = y.dataSync();
    expect([v[0], v[1], v[N / 3 - 1]]).toEqual([1, 7, 2 * (N - 3) + 1]);
  });

  it("saveNpzSync: lazy members computed after an earlier member's values were taken keep them", () => {
    const N = 20_000;
    const a = fromTypedArray(ramp(N), [N]).mul(2); // lazy: 2i + 1
    const b = fromTypedArray(ramp(N), [N]).add(1); // lazy: i + 1.5
    const bytes = size();
    const file = saveNpzSync({ a, b });
    expect(size()).toBeGreaterThan(bytes);
    const back = loadNpz(file);
    const va = back["a"]!.dataSync();
    const vb = back["b"]!.dataSync();
    expect([va.length, va[0], va[N - 1]]).toEqual([N, 1, 2 * N - 1]);
    expect([vb.length, vb[0], vb[N - 1]]).toEqual([N, 1.5, N + 0.5]);
  });
});

describe("initialMemoryBytes", () => {
  it("sets the memory's first size, at least one page (the launch arguments); bad values are BackendErrors", () => {
    expect(new WasmBackend({ initialMemoryBytes: 0 }).heap.memory.buffer.byteLength).toBe(65536);
    expect(new WasmBackend({ initialMemoryBytes: 3 * 65536 + 1 }).heap.memory.buffer.byteLength).toBe(4 * 65536);
    expect(new WasmBackend().heap.memory.buffer.byteLength).toBe(16 * 2 ** 20);
    for (const bad of [-1, 1.5, NaN, Infinity])
      expect(() => new WasmBackend({ initialMemoryBytes: bad })).toThrow(
        new BackendError(`initWasm: initialMemoryBytes must be an integer >= 0, got ${String(bad)}`),
      );
  });
});
