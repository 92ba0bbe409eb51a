/**
 * Bytes in every form a caller holds them, on the JS and WebAssembly backends:
 * Node Buffers from `readFileSync`, `Buffer.from` and `Buffer.allocUnsafe`
 * (views into Node's shared pool, so their byteOffset is not 0: asserted, so that
 * a test cannot pass on a buffer that happens to start at byte 0), `Buffer.alloc`,
 * `subarray` views at odd offsets (not aligned to any element size), `DataView`s,
 * other typed arrays over the bytes, `SharedArrayBuffer`s and views of them, and
 * plain `ArrayBuffer`s. Each form goes through `loadNpy`, `readNpy`, `loadNpz`,
 * `fromTypedArray` and the bundle loaders, and every value is compared bit for
 * bit with literals (the values test/fixtures/npy/make.py had NumPy write, or a
 * file built here by hand), never with what batchwise wrote.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import {
  DTypeError,
  fromTypedArray,
  getBackend,
  initWasm,
  jit,
  loadBundle,
  loadNpy,
  loadNpz,
  readNpy,
  setBackend,
  type Tensor,
} from "../../src/index.js";
import { registerBackend } from "../../src/backend.js";
import { loadBundle as loadBundleRuntime } from "../../src/runtime-entry.js";
import type { BundleModule } from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";
import { npyFixture } from "../helpers/npy-fixtures.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";

const tmp = mkdtempSync(join(tmpdir(), "batchwise-bytes-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The bytes of a typed array (its own elements only). */
const bitsOf = (a: ArrayBufferView): number[] => Array.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));

/**
 * A `.npy` file built by hand, as the format's spec lays it out (not with writeNpy):
 * magic, version 1.0, a 2-byte header length, the header dict padded with spaces and
 * a newline to a multiple of 64 bytes, then the little-endian values.
 */
function handNpy(descr: string, shape: readonly number[], values: ArrayBufferView): Uint8Array {
  const dict = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(", ")}${shape.length === 1 ? "," : ""}), }`;
  const unpadded = 10 + dict.length + 1;
  const header = dict + " ".repeat((64 - (unpadded % 64)) % 64) + "\n";
  const out = new Uint8Array(10 + header.length + values.byteLength);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length % 256, header.length >> 8]);
  for (let i = 0; i < header.length; i++) out[10 + i] = header.charCodeAt(i);
  out.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), 10 + header.length);
  return out;
}

/** A Buffer from Node's pool (byteOffset > 0): `make` is tried again while it lands at the start of a fresh pool. */
function pooled(make: () => Buffer): Buffer {
  for (let i = 0; i < 4; i++) {
    const b = make();
    if (b.byteOffset > 0) return b;
  }
  throw new Error("four pooled Buffers in a row started at byte 0");
}

let files = 0;

/** A form of bytes: how it is made from the file's bytes, and what makes it this form (checked before use). */
interface Form {
  readonly name: string;
  make(bytes: Uint8Array): ArrayBufferLike | ArrayBufferView;
  /** What the made value must be for the test to test this form. */
  check(v: ArrayBufferLike | ArrayBufferView, bytes: Uint8Array): void;
}

/** `n` bytes of junk around a copy of `bytes` in `buf`, from `at`: a reader that strays outside the view reads 0xAB. */
function around<B extends ArrayBufferLike>(buf: B, at: number, bytes: Uint8Array): B {
  const all = new Uint8Array(buf);
  all.fill(0xab);
  all.set(bytes, at);
  return buf;
}

const isView = (v: unknown): v is ArrayBufferView => ArrayBuffer.isView(v);
const viewAt = (offset: number, sharedBytes: boolean) => (v: ArrayBufferLike | ArrayBufferView, b: Uint8Array) => {
  expect(isView(v)).toBe(true);
  const w = v as ArrayBufferView;
  expect(w.byteOffset).toBe(offset);
  expect(w.byteLength).toBe(b.length);
  expect(w.buffer.byteLength).toBeGreaterThan(b.length);
  expect(Object.prototype.toString.call(w.buffer)).toBe(
    sharedBytes ? "[object SharedArrayBuffer]" : "[object ArrayBuffer]",
  );
};
const pooledBuffer = (v: ArrayBufferLike | ArrayBufferView, b: Uint8Array) => {
  expect(Buffer.isBuffer(v)).toBe(true);
  const w = v as Buffer;
  expect(w.byteOffset).toBeGreaterThan(0);
  expect(w.byteLength).toBe(b.length);
  expect(w.buffer.byteLength).toBeGreaterThan(b.length);
};

/** Every form of bytes the loaders take. */
const FORMS: readonly Form[] = [
  {
    name: "a Uint8Array of its own",
    make: (b) => b.slice(),
    check: (v, b) => expect((v as Uint8Array).byteOffset === 0 && (v as Uint8Array).buffer.byteLength === b.length),
  },
  {
    name: "an ArrayBuffer",
    make: (b) => b.slice().buffer,
    check: (v) => expect(Object.prototype.toString.call(v)).toBe("[object ArrayBuffer]"),
  },
  {
    name: "a SharedArrayBuffer",
    make: (b) => around(new SharedArrayBuffer(b.length), 0, b),
    check: (v) => expect(Object.prototype.toString.call(v)).toBe("[object SharedArrayBuffer]"),
  },
  {
    name: "a Buffer from readFileSync (pooled)",
    make: (b) => {
      const file = join(tmp, `f${files++}.bin`);
      writeFileSync(file, b);
      return pooled(() => readFileSync(file));
    },
    check: pooledBuffer,
  },
  { name: "a Buffer.from copy (pooled)", make: (b) => pooled(() => Buffer.from(b)), check: pooledBuffer },
  {
    name: "a Buffer.allocUnsafe buffer (pooled)",
    make: (b) =>
      pooled(() => {
        const out = Buffer.allocUnsafe(b.length);
        out.set(b);
        return out;
      }),
    check: pooledBuffer,
  },
  {
    name: "a Buffer.alloc buffer (not pooled: a Buffer at byte 0)",
    make: (b) => {
      const out = Buffer.alloc(b.length);
      out.set(b);
      return out;
    },
    check: (v) => expect(Buffer.isBuffer(v) && (v as Buffer).byteOffset === 0).toBe(true),
  },
  {
    name: "a subarray at byte 3 of a larger Uint8Array",
    make: (b) => new Uint8Array(around(new ArrayBuffer(b.length + 8), 3, b)).subarray(3, 3 + b.length),
    check: viewAt(3, false),
  },
  {
    name: "a subarray at byte 5 of a larger Buffer",
    make: (b) => Buffer.from(around(new ArrayBuffer(b.length + 11), 5, b)).subarray(5, 5 + b.length),
    check: (v, b) => {
      expect(Buffer.isBuffer(v)).toBe(true);
      viewAt(5, false)(v, b);
    },
  },
  {
    name: "a DataView at byte 7",
    make: (b) => new DataView(around(new ArrayBuffer(b.length + 9), 7, b), 7, b.length),
    check: (v, b) => {
      expect(v).toBeInstanceOf(DataView);
      viewAt(7, false)(v, b);
    },
  },
  {
    name: "an Int8Array at byte 1",
    make: (b) => new Int8Array(around(new ArrayBuffer(b.length + 2), 1, b), 1, b.length),
    check: viewAt(1, false),
  },
  {
    name: "a Uint16Array at byte 2 (the length is even)",
    make: (b) => new Uint16Array(around(new ArrayBuffer(b.length + 6), 2, b), 2, b.length / 2),
    check: viewAt(2, false),
  },
  {
    name: "a Uint8Array at byte 3 of a SharedArrayBuffer",
    make: (b) => new Uint8Array(around(new SharedArrayBuffer(b.length + 4), 3, b), 3, b.length),
    check: viewAt(3, true),
  },
  {
    name: "a DataView at byte 1 of a SharedArrayBuffer",
    make: (b) => new DataView(around(new SharedArrayBuffer(b.length + 1), 1, b), 1, b.length),
    check: viewAt(1, true),
  },
];

/** Every form of `bytes` (the Uint16Array one only for an even length), each checked to be what it says. */
function formsOf(bytes: Uint8Array): { name: string; value: ArrayBufferLike | ArrayBufferView }[] {
  return FORMS.filter((f) => !f.name.includes("Uint16Array") || bytes.length % 2 === 0).map((f) => {
    const value = f.make(bytes);
    f.check(value, bytes);
    return { name: f.name, value };
  });
}

/** The bytes a form holds for the caller (to check that loading left them as they were). */
const heldBytes = (v: ArrayBufferLike | ArrayBufferView): number[] =>
  isView(v) ? bitsOf(v) : Array.from(new Uint8Array(v));

interface NpyCase {
  readonly name: string;
  readonly bytes: () => Uint8Array;
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly values: ArrayBufferView;
}

/** The case of test/fixtures/npy/`file`, named "`file` (`what`)". */
const fixtureCase = (
  file: string,
  what: string,
  dtype: string,
  shape: readonly number[],
  values: ArrayBufferView,
): NpyCase => ({ name: `${file} (${what})`, bytes: () => npyFixture(file), dtype, shape, values });

/** The files loaded in every form, with the values NumPy was given (make.py) or the hand-built file holds. */
const NPY_CASES: readonly NpyCase[] = [
  {
    // The README's case: loadNpy(readFileSync("a.npy")) of [0, 1, 2, 3, 4, 5].
    name: "a float32 (2, 3) file of 0..5, built by hand",
    bytes: () => handNpy("<f4", [2, 3], Float32Array.of(0, 1, 2, 3, 4, 5)),
    dtype: "float32",
    shape: [2, 3],
    values: Float32Array.of(0, 1, 2, 3, 4, 5),
  },
  fixtureCase(
    "f8.npy",
    "float64: 0.1, -1e300, the smallest subnormal, -0",
    "float64",
    [2, 2],
    Float64Array.of(0.1, -1e300, 5e-324, -0),
  ),
  fixtureCase(
    "f4.npy",
    "float32: NaN, ±Infinity, ±0, the largest float32, a subnormal",
    "float32",
    [3, 3],
    Float32Array.of(1.5, -2, 0, -0, Infinity, -Infinity, NaN, 3.4028234663852886e38, 1e-45),
  ),
  fixtureCase(
    "f8_be.npy",
    "big-endian float64: swapped into a copy, the caller's bytes untouched",
    "float64",
    [2, 2],
    Float64Array.of(0.1, -1e300, 5e-324, -0),
  ),
  fixtureCase("i4_fortran_2d.npy", "int32, Fortran order", "int32", [2, 3], Int32Array.of(1, 2, 3, 4, 5, 6)),
  fixtureCase("b1.npy", "bool", "bool", [2, 3], Uint8Array.of(1, 0, 1, 0, 0, 1)),
  {
    name: "an int16 (10, 100) file of -500..499, built by hand (2,128 bytes: still from Node's pool)",
    bytes: () =>
      handNpy(
        "<i2",
        [10, 100],
        Int16Array.from({ length: 1000 }, (_, i) => i - 500),
      ),
    dtype: "int16",
    shape: [10, 100],
    values: Int16Array.from({ length: 1000 }, (_, i) => i - 500),
  },
];

const BACKENDS = ["js", "wasm"] as const;

async function use(backend: (typeof BACKENDS)[number]): Promise<void> {
  if (backend === "wasm") await initWasm({ threads: 1 });
  else setBackend("js");
  expect(getBackend().name).toBe(backend);
}

/** The name of the backend a realized tensor lives on. */
function backendOf(t: Tensor): string {
  const s = t._src;
  if (s.kind !== "buffer") throw new Error(`the tensor is ${s.kind}, not realized`);
  return s.backend.name;
}

/** The tensor's dtype, shape and the bytes of its values. */
function got(t: Tensor): { dtype: string; shape: readonly number[]; bits: number[] } {
  return { dtype: t.dtype, shape: t.shape, bits: bitsOf(t.dataSync()) };
}

describe.each(BACKENDS)("on the %s backend", (backend) => {
  beforeEach(() => use(backend));

  it.each(NPY_CASES)("loadNpy and readNpy of $name, in every form of bytes", (c) => {
    const bytes = c.bytes();
    const forms = formsOf(bytes);
    expect(forms.length).toBeGreaterThanOrEqual(13);
    for (const { name, value } of forms) {
      const before = heldBytes(value);
      const t = loadNpy(value);
      expect(backendOf(t), name).toBe(backend);
      expect(got(t), `loadNpy of ${name}`).toEqual({ dtype: c.dtype, shape: c.shape, bits: bitsOf(c.values) });
      const a = readNpy(value);
      expect({ dtype: a.dtype, shape: a.shape, bits: bitsOf(a.data) }, `readNpy of ${name}`).toEqual({
        dtype: c.dtype,
        shape: c.shape,
        bits: bitsOf(c.values),
      });
      // The values are a copy of their own (aligned, not a view of the caller's memory)...
      expect(a.data.byteOffset, name).toBe(0);
      expect(a.data.buffer.byteLength, name).toBe(a.data.byteLength);
      // ... and the caller's bytes are as they were (a big-endian file is swapped in the copy).
      expect(heldBytes(value), `the bytes of ${name} after loading`).toEqual(before);
      t.dispose();
    }
  });

  it("readNpy of f2.npy (float16 [1.0]) in every form of bytes", () => {
    for (const { name, value } of formsOf(npyFixture("f2.npy"))) {
      const a = readNpy(value);
      expect([a.dtype, a.shape, Array.from(a.data)], name).toEqual(["float16", [1], [1]]);
    }
  });

  it("loadNpz of a stored and a deflated archive (numpy.savez, savez_compressed), in every form of bytes", () => {
    for (const { name, value } of formsOf(npyFixture("arrays.npz"))) {
      const { points, ids, mask } = loadNpz(value, { batchDim: { points: 1 } });
      expect(got(points!), `points of ${name}`).toEqual({
        dtype: "float32",
        shape: [2, 3],
        bits: bitsOf(Float32Array.of(0, 1, 2, 3, 4, 5)),
      });
      expect(points!.batchDim).toBe(1);
      expect(got(ids!), `ids of ${name}`).toEqual({ dtype: "int32", shape: [2], bits: bitsOf(Int32Array.of(10, 20)) });
      expect(got(mask!), `mask of ${name}`).toEqual({ dtype: "bool", shape: [2], bits: [1, 0] });
    }
    for (const { name, value } of formsOf(npyFixture("compressed.npz"))) {
      const { a, b } = loadNpz(value);
      expect(got(a!), `a of ${name}`).toEqual({
        dtype: "float64",
        shape: [2, 2],
        bits: bitsOf(Float64Array.of(1, 2, 3, 4)),
      });
      expect(got(b!), `b of ${name}`).toEqual({
        dtype: "float32",
        shape: [2],
        bits: bitsOf(Float32Array.of(NaN, -Infinity)),
      });
    }
  });

  it("fromTypedArray of views (subarrays, part of a SharedArrayBuffer, a pooled Buffer, an Int16Array over a Buffer's memory), copied or not", () => {
    const big = Float32Array.of(9, 9, 9, 1.5, -0, NaN, 3e38, 9);
    const f64 = new Float64Array(new SharedArrayBuffer(48), 8, 4);
    f64.set([0.1, -1e300, 5e-324, -0]);
    const buf = pooled(() => Buffer.from([7, 0, 255, 1]));
    const i16mem = pooled(() => Buffer.from(new Uint8Array(Int16Array.of(-32768, 5, 32767).buffer)));
    const i16 = new Int16Array(i16mem.buffer, i16mem.byteOffset, 3);
    const shared8 = new Uint8Array(new SharedArrayBuffer(9), 5, 4);
    shared8.set([1, 0, 0, 1]);
    const cases: [string, (copy: boolean) => Tensor, string, ArrayBufferView][] = [
      [
        "a subarray at element 3",
        (copy) => fromTypedArray(big.subarray(3, 7), [2, 2], { copy }),
        "float32",
        Float32Array.of(1.5, -0, NaN, 3e38),
      ],
      [
        "float64 at byte 8 of a SharedArrayBuffer",
        (copy) => fromTypedArray(f64, [4], { copy }),
        "float64",
        Float64Array.of(0.1, -1e300, 5e-324, -0),
      ],
      ["a pooled Buffer (uint8)", (copy) => fromTypedArray(buf, [4], { copy }), "uint8", Uint8Array.of(7, 0, 255, 1)],
      [
        "an Int16Array over a pooled Buffer's memory",
        (copy) => fromTypedArray(i16, [3], { copy }),
        "int16",
        Int16Array.of(-32768, 5, 32767),
      ],
      [
        "bool from part of a SharedArrayBuffer",
        (copy) => fromTypedArray(shared8, [4], { dtype: "bool", copy }),
        "bool",
        Uint8Array.of(1, 0, 0, 1),
      ],
    ];
    expect(i16.byteOffset).toBeGreaterThan(0);
    for (const copy of [true, false]) {
      for (const [name, make, dtype, want] of cases) {
        const what = `${name}, copy: ${copy}`;
        const t = make(copy);
        expect(backendOf(t), what).toBe(backend);
        expect(got(t), what).toEqual({ dtype, shape: t.shape, bits: bitsOf(want) });
        // dataSync is a copy of the tensor's own elements, in a plain array of its own.
        const d = t.dataSync();
        expect(Buffer.isBuffer(d), what).toBe(false);
        expect([d.byteOffset, d.buffer.byteLength], what).toEqual([0, d.byteLength]);
        d.fill(0);
        expect(bitsOf(t.dataSync()), `${what}: the tensor after its dataSync() copy was changed`).toEqual(bitsOf(want));
        t.dispose();
      }
    }
    // The sources are untouched.
    expect(bitsOf(big)).toEqual(bitsOf(Float32Array.of(9, 9, 9, 1.5, -0, NaN, 3e38, 9)));
    expect(Array.from(buf)).toEqual([7, 0, 255, 1]);
  });

  it("fromTypedArray(buffer, ..., { copy: false }) of a pooled Buffer: the tensor's reads are copies, not views of Node's pool", () => {
    const buf = pooled(() => Buffer.from([1, 2, 3, 4]));
    const t = fromTypedArray(buf, [4], { copy: false });
    const d = t.dataSync();
    expect(Buffer.isBuffer(d)).toBe(false);
    expect([d.byteOffset, d.buffer.byteLength]).toEqual([0, 4]);
    d[0] = 99;
    expect(Array.from(t.dataSync())).toEqual([1, 2, 3, 4]);
    t.dispose();
  });

  it("fromTypedArray refuses bytes without an element type (DataView, ArrayBuffer, SharedArrayBuffer), naming the fix", () => {
    for (const v of [new DataView(new ArrayBuffer(8)), new ArrayBuffer(8), new SharedArrayBuffer(8)]) {
      const call = () => fromTypedArray(v as unknown as Float32Array, [2]);
      expect(call).toThrow(DTypeError);
      expect(call).toThrow(
        /^fromTypedArray: data is an? (DataView|ArrayBuffer|SharedArrayBuffer); accepted are .*: raw bytes have no element type: view them as the one they hold, e\.g\. new Float32Array\(buffer, byteOffset, length\)/,
      );
    }
  });

  it("loadBundle: a captured uint8 constant held in a pooled Buffer is snapshotted (changing it during the load changes nothing), on both loaders", async () => {
    const c = fromTypedArray(Uint8Array.of(1, 2, 3), [3]);
    const f = jit((x: Tensor) => x.add(c.cast("float32")));
    const x = fromTypedArray(Float32Array.of(10, 20, 30), [3]);
    f(x);
    const mod = await importBundle(f.bundle());
    for (const load of ["full", "runtime"] as const) {
      const buf = pooled(() => Buffer.from(mod.captured[0]!.data as Uint8Array));
      const edited = { ...mod, captured: [{ ...mod.captured[0]!, data: buf }] } as BundleModule;
      const p = load === "full" ? loadBundle(edited) : loadBundleRuntime(edited, { sha256: mod.sha256 });
      buf[0] = 100; // after the loader took its snapshot (synchronously), before it hashed it
      const g = await p;
      expect(Array.from((g(x) as Tensor).dataSync()), load).toEqual([11, 22, 33]);
    }
    c.dispose();
    x.dispose();
  });

  it("loadBundle: captured constants that are views (a subarray, part of a SharedArrayBuffer) load with their own values", async () => {
    const w = fromTypedArray(Float32Array.of(0.5, -2, 4), [3]);
    const f = jit((x: Tensor) => x.mul(w));
    const x = fromTypedArray(Float32Array.of(2, 3, 0.25), [3]);
    f(x);
    const mod = await importBundle(f.bundle());
    const big = Float32Array.of(7, 7, 0.5, -2, 4, 7);
    const shared = new Float32Array(new SharedArrayBuffer(32), 12, 3);
    new Float32Array(shared.buffer).fill(7);
    shared.set([0.5, -2, 4]);
    for (const data of [big.subarray(2, 5), shared]) {
      const edited = { ...mod, captured: [{ ...mod.captured[0]!, data }] } as BundleModule;
      for (const g of [await loadBundle(edited), await loadBundleRuntime(edited, { sha256: mod.sha256 })])
        expect(bitsOf((g(x) as Tensor).dataSync())).toEqual(bitsOf(Float32Array.of(1, -6, 1)));
    }
    w.dispose();
    x.dispose();
  });
});

describe("what the byte-taking functions accept", () => {
  it("bad input is a DTypeError naming the function and the argument", () => {
    for (const [fn, call] of [
      ["loadNpy", (v: unknown) => loadNpy(v as Uint8Array)],
      ["readNpy", (v: unknown) => readNpy(v as Uint8Array)],
      ["loadNpz", (v: unknown) => loadNpz(v as Uint8Array)],
    ] as const) {
      for (const [v, what] of [
        ["abc", 'a string \\("abc"\\)'],
        [[0x93, 0x4e], "an array"],
        [null, "null"],
        [42, "42"],
      ] as const) {
        expect(() => call(v), fn).toThrow(DTypeError);
        expect(() => call(v), fn).toThrow(
          new RegExp(
            `^${fn}: bytes must be a Uint8Array, a Node Buffer, another typed array, a DataView, an ArrayBuffer or a SharedArrayBuffer, got ${what}$`,
          ),
        );
      }
    }
  });

  it("a detached ArrayBuffer, or a view of one, is a DTypeError saying so", () => {
    for (const make of [(ab: ArrayBuffer) => ab, (ab: ArrayBuffer) => new Uint8Array(ab, 2, 4)]) {
      const ab = npyFixture("f8.npy").slice().buffer;
      const v = make(ab);
      structuredClone(ab, { transfer: [ab] });
      for (const call of [() => loadNpy(v), () => readNpy(v), () => loadNpz(v)]) {
        expect(call).toThrow(DTypeError);
        expect(call).toThrow(
          /^(loadNpy|readNpy|loadNpz): bytes is (a view of )?a detached ArrayBuffer \(transferred to a worker, or the memory of a WebAssembly instance that grew\)/,
        );
      }
    }
  });

  it("the declared parameter types are every form of bytes (ArrayBufferLike | ArrayBufferView)", () => {
    expectTypeOf(loadNpy).parameter(0).toEqualTypeOf<ArrayBufferLike | ArrayBufferView>();
    expectTypeOf(readNpy).parameter(0).toEqualTypeOf<ArrayBufferLike | ArrayBufferView>();
    expectTypeOf(loadNpz).parameter(0).toEqualTypeOf<ArrayBufferLike | ArrayBufferView>();
    // Each form type-checks as an argument without a cast (tsc checks this file).
    const b = npyFixture("f8.npy");
    const sab = new SharedArrayBuffer(b.length);
    new Uint8Array(sab).set(b);
    for (const t of [
      loadNpy(new DataView(b.buffer, b.byteOffset, b.byteLength)),
      loadNpy(sab),
      loadNpy(new Uint8Array(sab)),
      loadNpy(Buffer.from(b)),
      loadNpy(b.slice().buffer),
    ])
      expect(t.shape).toEqual([2, 2]);
  });
});

const probe = await probeWebGPUForFile();
describeWebGPU(probe, "on the WebGPU backend", (gpu) => {
  beforeEach(() => {
    registerBackend(gpu);
    setBackend("webgpu");
  });

  /** dtype, shape and the bytes of the values, read back from the device. */
  async function gotAsync(t: Tensor): Promise<{ dtype: string; shape: readonly number[]; bits: number[] }> {
    return { dtype: t.dtype, shape: t.shape, bits: bitsOf(await t.data()) };
  }

  it("loadNpy of every file whose dtype the device holds, in every form of bytes", async () => {
    const cases = NPY_CASES.filter((c) => gpu.dtypes.includes(c.dtype as never));
    expect(cases.length).toBeGreaterThanOrEqual(5);
    for (const c of cases) {
      for (const { name, value } of formsOf(c.bytes())) {
        const t = loadNpy(value);
        expect(backendOf(t), name).toBe("webgpu");
        expect(await gotAsync(t), `${c.name}: loadNpy of ${name}`).toEqual({
          dtype: c.dtype,
          shape: c.shape,
          bits: bitsOf(c.values),
        });
        t.dispose();
      }
    }
  });

  it("fromTypedArray of views (a subarray, part of a SharedArrayBuffer, an Int32Array over a pooled Buffer's memory)", async () => {
    const big = Float32Array.of(9, 9, 9, 1.5, -0, NaN, 3e38, 9);
    const shared = new Float32Array(new SharedArrayBuffer(24), 8, 3);
    shared.set([0.25, -7, 1e-40]);
    const mem = pooled(() => Buffer.from(new Uint8Array(Int32Array.of(-2147483648, 5, 2147483647).buffer)));
    const i32 = new Int32Array(mem.buffer, mem.byteOffset, 3);
    const cases: [string, Tensor, string, ArrayBufferView][] = [
      [
        "a subarray at element 3",
        fromTypedArray(big.subarray(3, 7), [4]),
        "float32",
        Float32Array.of(1.5, -0, NaN, 3e38),
      ],
      [
        "float32 at byte 8 of a SharedArrayBuffer",
        fromTypedArray(shared, [3]),
        "float32",
        Float32Array.of(0.25, -7, 1e-40),
      ],
      [
        "an Int32Array over a pooled Buffer's memory",
        fromTypedArray(i32, [3]),
        "int32",
        Int32Array.of(-2147483648, 5, 2147483647),
      ],
    ];
    for (const [name, t, dtype, want] of cases) {
      expect(backendOf(t), name).toBe("webgpu");
      expect(await gotAsync(t), name).toEqual({ dtype, shape: t.shape, bits: bitsOf(want) });
      t.dispose();
    }
  });
});
