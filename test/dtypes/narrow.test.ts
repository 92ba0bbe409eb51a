/**
 * The narrow integer dtypes (uint8, int8, uint16, int16) on the JS backend: NumPy's
 * wrap-around arithmetic, promotion and casts (./cases.ts, values written out from
 * NumPy), typed arrays in and out, empty dims, one trace for two batch sizes, `.npy`
 * files written by NumPy, and the typed errors (float16 included).
 */
import { describe, expect, it } from "vitest";
import { promote, type DType } from "../../ir/dtype.js";
import {
  counters,
  DTypeError,
  fromTypedArray,
  jit,
  loadBundle,
  loadNpy,
  readNpy,
  saveNpySync,
  tensor,
  writeNpy,
  zeros,
  type Tensor,
} from "../../src/index.js";
import { jagged } from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";
import { ALL_CASES, runCases } from "./cases.js";

describe("narrow dtypes on JS", () => {
  it("wrap, promote and cast as NumPy (eager and in jit)", async () => {
    expect(await runCases(ALL_CASES)).toEqual([]);
  });

  it("promote as NumPy's lattice, with int32 standing for NumPy's int64", () => {
    const order: DType[] = ["bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "float64"];
    // Rows and columns in `order`; NumPy 2's np.result_type, except int64 -> int32 (uint32 with a
    // signed integer, batchwise's existing rule) and float64 -> float32 for a 32-bit integer with
    // float32 (batchwise's existing rule).
    const table = [
      ["bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "float64"],
      ["uint8", "uint8", "int16", "uint16", "int16", "uint32", "int32", "float32", "float64"],
      ["int8", "int16", "int8", "int32", "int16", "int32", "int32", "float32", "float64"],
      ["uint16", "uint16", "int32", "uint16", "int32", "uint32", "int32", "float32", "float64"],
      ["int16", "int16", "int16", "int32", "int16", "int32", "int32", "float32", "float64"],
      ["uint32", "uint32", "int32", "uint32", "int32", "uint32", "int32", "float32", "float64"],
      ["int32", "int32", "int32", "int32", "int32", "int32", "int32", "float32", "float64"],
      ["float32", "float32", "float32", "float32", "float32", "float32", "float32", "float32", "float64"],
      ["float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64", "float64"],
    ];
    const got = order.map((a) => order.map((b) => promote(a, b)));
    expect(got).toEqual(table);
  });

  it("typed arrays map to their own dtypes, and read back as the same typed arrays", () => {
    const cases: [ArrayLike<number> & { constructor: unknown }, DType][] = [
      [new Uint8Array([1, 255]), "uint8"],
      [new Int8Array([-128, 127]), "int8"],
      [new Uint16Array([0, 65535]), "uint16"],
      [new Int16Array([-32768, 32767]), "int16"],
    ];
    for (const [a, d] of cases) {
      const x = tensor(a as Uint8Array);
      expect(x.dtype).toBe(d);
      const back = x.dataSync();
      expect(back.constructor).toBe(a.constructor);
      expect([...back]).toEqual(Array.from(a));
      expect(fromTypedArray(a as Uint8Array, [2]).dtype).toBe(d);
    }
    // A bool tensor's storage (a Uint8Array of 0/1) reads back as bool when asked for.
    const b = tensor([true, false]);
    expect(fromTypedArray(b.dataSync(), [2], { dtype: "bool" }).dtype).toBe("bool");
    expect([...fromTypedArray(new Uint8Array([0, 7]), [2], { dtype: "bool" }).dataSync()]).toEqual([0, 1]);
    // Converting into a narrow dtype wraps (as cast does).
    expect([...fromTypedArray(new Int32Array([300, -1]), [2], { dtype: "uint8" }).dataSync()]).toEqual([44, 255]);
  });

  it("empty batch and base dims", () => {
    const e = zeros([0], [3], { dtype: "int8" });
    const r = e.add(tensor([1, 2, 3], { dtype: "int8" }));
    expect(r.shape).toEqual([0, 3]);
    expect(r.dataSync()).toBeInstanceOf(Int8Array);
    expect(r.dataSync().length).toBe(0);
    const s = e.sum([], { batchAxes: [0] } as never);
    expect(s.dtype).toBe("int32");
    const z = zeros([2], [0], { dtype: "uint16" }).mul(3);
    expect(z.shape).toEqual([2, 0]);
    expect(z.dataSync()).toBeInstanceOf(Uint16Array);
  });

  it("one trace serves two batch sizes (and an empty batch)", () => {
    const f = jit((x: Tensor, y: Tensor) => x.add(y).mul(x).maximum(y));
    const mk = (n: number, d: "int8" | "uint8"): Tensor =>
      fromTypedArray(
        (d === "int8" ? Int8Array : Uint8Array).from(Array.from({ length: n * 2 }, (_, i) => (i * 37 + 100) & 0xff)),
        [n, 2],
        { batchDim: 1 },
      );
    const before = counters.traces;
    const r3 = (f(mk(3, "int8"), mk(3, "uint8")) as Tensor).dataSync();
    const r5 = (f(mk(5, "int8"), mk(5, "uint8")) as Tensor).dataSync();
    (f(mk(0, "int8"), mk(0, "uint8")) as Tensor).dataSync();
    expect(counters.traces - before).toBe(1);
    // int8 + uint8 computes in int16 (NumPy): x = int8(v), y = uint8(v), max((x + y) * x, y), wrapped.
    const want = (n: number): number[] =>
      Array.from({ length: n * 2 }, (_, i) => {
        const v = (i * 37 + 100) & 0xff;
        const x = (v << 24) >> 24;
        return Math.max((((x + v) * x) << 16) >> 16, v);
      });
    expect(r3).toBeInstanceOf(Int16Array);
    expect([...r3]).toEqual(want(3));
    expect([...r5]).toEqual(want(5));
  });

  it("refuses what the narrow dtypes cannot hold, with typed errors", () => {
    const u8 = tensor(new Uint8Array([1, 2]));
    expect(() => u8.add(300)).toThrow(DTypeError);
    expect(() => u8.add(300)).toThrow(/add: y = 300 does not fit uint8/);
    expect(() => u8.add(-1)).toThrow(/does not fit uint8/);
    expect(() => tensor([128], { dtype: "int8" })).toThrow(/data\[0\] is 128, which int8 cannot hold/);
    expect(() =>
      zeros([1], [2], { dtype: "int16" })
        .add(tensor([0.5]))
        .bitwiseAnd(u8),
    ).toThrow(DTypeError);
    expect(() => tensor([1], { dtype: "int64" as DType })).toThrow(/unknown dtype int64 \(dtypes are .*uint8.*\)/);
  });

  it("float16 is a DTypeError on JS that says why", () => {
    expect(() => tensor([1], { dtype: "float16" })).toThrow(DTypeError);
    expect(() => tensor([1], { dtype: "float16" })).toThrow(
      /tensor \(;1\) is float16, which JS cannot hold \(float16 needs a WebGPU device with "shader-f16"\)/,
    );
    expect(() => tensor([1.5]).cast("float16").dataSync()).toThrow(/float16 is not available on the js backend/);
    expect(() => jit((x: Tensor) => x.cast("float16").cast("float32"))(tensor([1]))).toThrow(DTypeError);
  });
});

describe("narrow dtypes through bundles and jagged rows", () => {
  it("a bundle with uint8 arguments and a captured int16 constant loads and runs at any batch size", async () => {
    const c = tensor(new Int16Array([1000, -1000, 7]));
    const f = jit((x: Tensor) => x.mul(x).add(c));
    const mk = (n: number): Tensor =>
      fromTypedArray(Uint8Array.from(Array.from({ length: n * 3 }, (_, i) => (i * 97) & 0xff)), [n, 3], {
        batchDim: 1,
      });
    f(mk(2));
    const g = await loadBundle(await importBundle(f.bundle()));
    for (const n of [1, 4]) {
      const got = (g(mk(n)) as Tensor).dataSync();
      expect(got).toBeInstanceOf(Int16Array);
      // uint8 x*x wraps in uint8, then uint8 + int16 is int16.
      const want = Array.from({ length: n * 3 }, (_, i) => {
        const v = (i * 97) & 0xff;
        return ((((v * v) & 0xff) + [1000, -1000, 7][i % 3]!) << 16) >> 16;
      });
      expect([...got]).toEqual(want);
    }
  });

  it("jagged rows of int8: sums per row (int32) and padding with an int8 fill", () => {
    const j = jagged([tensor(new Int8Array([100, 100, -128])), tensor(new Int8Array([-1]))]);
    expect([...j.sum().dataSync()]).toEqual([72, -1]);
    const p = j.toPadded({ paddingValue: -7 }).padded;
    expect(p.dtype).toBe("int8");
    expect([...p.dataSync()]).toEqual([100, 100, -128, -1, -7, -7]);
  });
});

// Files written by NumPy 2.4 (`np.save` to a BytesIO, base64 of the bytes).
const NPY = {
  // np.array([[250, 3], [128, 0]], np.uint8)
  u1: "k05VTVBZAQB2AHsnZGVzY3InOiAnfHUxJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDIpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAr6A4AA",
  // np.array([-128, 127, -1], np.int8)
  i1: "k05VTVBZAQB2AHsnZGVzY3InOiAnfGkxJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDMsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAqAf/8=",
  // np.array([65535, 1], np.uint16)
  u2: "k05VTVBZAQB2AHsnZGVzY3InOiAnPHUyJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAr//wEA",
  // np.array([[-32768], [300]], np.int16)
  i2: "k05VTVBZAQB2AHsnZGVzY3InOiAnPGkyJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsIDEpLCB9ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAgCwB",
  // np.asfortranarray(np.array([[1, 2, 3], [4, 5, 6]], np.int16))
  i2F: "k05VTVBZAQB2AHsnZGVzY3InOiAnPGkyJywgJ2ZvcnRyYW5fb3JkZXInOiBUcnVlLCAnc2hhcGUnOiAoMiwgMyksIH0gICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoBAAQAAgAFAAMABgA=",
  // np.array([1, -2], '>i2')
  i2BE: "k05VTVBZAQB2AHsnZGVzY3InOiAnPmkyJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDIsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAAf/+",
  // np.array([1.5, -0.0, 65504, np.inf, np.nan, 6e-8], np.float16)
  f2: "k05VTVBZAQB2AHsnZGVzY3InOiAnPGYyJywgJ2ZvcnRyYW5fb3JkZXInOiBGYWxzZSwgJ3NoYXBlJzogKDYsKSwgfSAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgIAoAPgCA/3sAfAB+AQA=",
};
const bytesOf = (b64: string): Uint8Array => new Uint8Array(Buffer.from(b64, "base64"));

describe(".npy with the narrow dtypes", () => {
  it("loads NumPy's files (C and Fortran order, big-endian) and saves the same bytes", () => {
    const cases: [keyof typeof NPY, DType, number[], number[], boolean][] = [
      ["u1", "uint8", [2, 2], [250, 3, 128, 0], true],
      ["i1", "int8", [3], [-128, 127, -1], true],
      ["u2", "uint16", [2], [65535, 1], true],
      ["i2", "int16", [2, 1], [-32768, 300], true],
      ["i2F", "int16", [2, 3], [1, 2, 3, 4, 5, 6], false],
      ["i2BE", "int16", [2], [1, -2], false],
    ];
    for (const [key, d, shape, values, sameBytes] of cases) {
      const x = loadNpy(bytesOf(NPY[key]), { batchDim: 1 });
      expect(x.dtype, key).toBe(d);
      expect(x.shape, key).toEqual(shape);
      expect([...x.dataSync()], key).toEqual(values);
      if (sameBytes) expect(saveNpySync(x), key).toEqual(bytesOf(NPY[key]));
    }
    const f = loadNpy(bytesOf(NPY.i2F));
    expect(saveNpySync(f, { fortranOrder: true })).toEqual(bytesOf(NPY.i2F));
  });

  it("reads and writes float16 files; loading one on JS is a DTypeError", () => {
    const a = readNpy(bytesOf(NPY.f2));
    expect(a.dtype).toBe("float16");
    expect([...a.data]).toEqual([1.5, -0, 65504, Infinity, NaN, 5.960464477539063e-8]);
    expect(writeNpy("float16", [6], a.data)).toEqual(bytesOf(NPY.f2));
    expect(() => loadNpy(bytesOf(NPY.f2))).toThrow(/is float16, which JS cannot hold/);
  });
});
