/**
 * .npy / .npz against files written by NumPy (test/fixtures/npy/make.py, which
 * holds the same values written out literally): reading every dtype, byte
 * order, C and Fortran order and shape; `saveNpy` giving NumPy's bytes exactly;
 * round trips on JS and WebGPU; errors.
 */
import { unzipSync } from "fflate";
import { describe, expect, it } from "vitest";
import {
  DTypeError,
  FileFormatError,
  KeyError,
  ShapeError,
  fromTypedArray,
  jit,
  loadNpy,
  loadNpz,
  saveNpy,
  saveNpySync,
  saveNpz,
  saveNpzSync,
  tensor,
  type Tensor,
} from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { onWebGPU } from "../helpers/on-webgpu.js";
import { npyFixture } from "../helpers/npy-fixtures.js";

const F32_MAX = 3.4028234663852886e38;
const F32_TINY = 1.401298464324817e-45; // 1e-45 rounded to float32: the smallest subnormal

/** Values and shape of a tensor (NaN and -0 kept, for Object.is comparisons). */
function read(t: Tensor): { shape: readonly number[]; batchDim: number; dtype: string; values: number[] } {
  return { shape: t.shape, batchDim: t.batchDim, dtype: t.dtype, values: Array.from(t.dataSync()) };
}

describe("loadNpy reads NumPy's files", () => {
  it("float32 with NaN, ±Inf, ±0, the largest float32 and a subnormal", () => {
    const r = read(loadNpy(npyFixture("f4.npy")));
    expect(r.dtype).toBe("float32");
    expect(r.shape).toEqual([3, 3]);
    expect(r.values).toEqual([1.5, -2, 0, -0, Infinity, -Infinity, NaN, F32_MAX, F32_TINY]);
    expect(Object.is(r.values[3], -0)).toBe(true);
    expect(Object.is(r.values[2], 0)).toBe(true);
  });

  it("float64, int32, uint32 and bool", () => {
    const f8 = read(loadNpy(npyFixture("f8.npy")));
    expect(f8.dtype).toBe("float64");
    expect(f8.values).toEqual([0.1, -1e300, 5e-324, -0]);
    expect(Object.is(f8.values[3], -0)).toBe(true);
    expect(read(loadNpy(npyFixture("i4.npy")))).toMatchObject({
      dtype: "int32",
      shape: [4],
      values: [-2147483648, -1, 0, 2147483647],
    });
    expect(read(loadNpy(npyFixture("u4.npy")))).toMatchObject({ dtype: "uint32", values: [0, 1, 4294967295] });
    const b = loadNpy(npyFixture("b1.npy"));
    expect(b.dtype).toBe("bool");
    expect(b.toArraySync()).toEqual([
      [true, false, true],
      [false, false, true],
    ]);
  });

  it("big-endian files give the same values", () => {
    expect(read(loadNpy(npyFixture("f4_be.npy"))).values).toEqual([1.5, -2, Infinity]);
    const f8 = read(loadNpy(npyFixture("f8_be.npy"))).values;
    expect(f8).toEqual([0.1, -1e300, 5e-324, -0]);
    expect(Object.is(f8[3], -0)).toBe(true);
    expect(read(loadNpy(npyFixture("i4_be.npy"))).values).toEqual([-2147483648, -1, 0, 2147483647]);
    expect(read(loadNpy(npyFixture("u4_be.npy"))).values).toEqual([0, 1, 4294967295]);
  });

  it("Fortran order is read into C order", () => {
    const f = read(loadNpy(npyFixture("f4_fortran.npy")));
    expect(f.shape).toEqual([2, 3, 4]);
    expect(f.values).toEqual(Array.from({ length: 24 }, (_, i) => i));
    expect(loadNpy(npyFixture("i4_fortran_2d.npy")).toArraySync()).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
  });

  it("0-d, empty and one-element shapes; a long first axis", () => {
    const s = loadNpy(npyFixture("scalar_f8.npy"));
    expect(s.shape).toEqual([]);
    expect(s.itemSync()).toBe(2.5);
    expect(loadNpy(npyFixture("empty_f4.npy")).toString()).toBe("(;0,3)");
    expect(loadNpy(npyFixture("empty_mid_i4.npy"), { batchDim: 2 }).toString()).toBe("(2,0; 4)");
    expect(read(loadNpy(npyFixture("vec_f4.npy"))).values).toEqual([7]);
    const l = loadNpy(npyFixture("long_u4.npy"), { batchDim: 1 });
    expect(l.toString()).toBe("(1000; 1)");
    expect(l.dataSync()[999]).toBe(999);
  });

  it("format versions 2.0 and 3.0 (4-byte header length)", () => {
    for (const v of ["v2.npy", "v3.npy"]) {
      expect(npyFixture(v)[6]).toBe(Number(v[1]));
      expect(loadNpy(npyFixture(v), { batchDim: 1 }).toArraySync()).toEqual([
        [1, 2],
        [3, 4],
      ]);
    }
  });

  it("batchDim splits the shape into (batch; base)", () => {
    expect(loadNpy(npyFixture("f4.npy"), { batchDim: 1 }).toString()).toBe("(3; 3)");
    expect(loadNpy(npyFixture("f4_fortran.npy"), { batchDim: 2 }).toString()).toBe("(2,3; 4)");
    expect(loadNpy(npyFixture("f4.npy"), { batchDim: 2 }).toString()).toBe("(3,3;)");
    expect(() => loadNpy(npyFixture("f4.npy"), { batchDim: 3 })).toThrow(ShapeError);
    expect(() => loadNpy(npyFixture("f4.npy"), { batchDim: 3 })).toThrow(
      /batchDim 3 does not fit the array's shape \(3,3\)/,
    );
    expect(() => loadNpy(npyFixture("f4.npy"), { batchDim: -1 })).toThrow(ShapeError);
  });

  it("NumPy dtypes batchwise cannot hold are DTypeErrors naming the dtype", () => {
    expect(() => loadNpy(npyFixture("i8.npy"))).toThrow(DTypeError);
    expect(() => loadNpy(npyFixture("i8.npy"))).toThrow(/NumPy dtype int64 \('<i8'\) is not supported/);
    // float16 reads, but the JS backend holds no float16 (it needs WebGPU's shader-f16).
    expect(() => loadNpy(npyFixture("f2.npy"))).toThrow(/is float16, which JS cannot hold/);
    expect(loadNpy(npyFixture("u1.npy")).dtype).toBe("uint8");
    expect(() => loadNpy(npyFixture("c8.npy"))).toThrow(/NumPy dtype complex64 \('<c8'\)/);
    expect(() => loadNpy(npyFixture("unicode.npy"))).toThrow(/NumPy dtype '<U2' \(unicode strings\)/);
    expect(() => loadNpy(npyFixture("record.npy"))).toThrow(/structured \(record\) NumPy dtype/);
    expect(() => loadNpy(npyFixture("record.npy"))).toThrow(DTypeError);
  });

  it("malformed files are FileFormatErrors", () => {
    const f4 = npyFixture("f4.npy");
    expect(() => loadNpy(new Uint8Array([1, 2, 3]))).toThrow(FileFormatError);
    expect(() => loadNpy(new Uint8Array([1, 2, 3]))).toThrow(/not a \.npy file/);
    expect(() => loadNpy(f4.slice(0, f4.length - 4))).toThrow(/needs 36 bytes of data, the file has 32 \(truncated\)/);
    const longer = new Uint8Array(f4.length + 1);
    longer.set(f4);
    expect(() => loadNpy(longer)).toThrow(/extra bytes after the data/);
    const v9 = f4.slice();
    v9[6] = 9;
    expect(() => loadNpy(v9)).toThrow(/version 9\.0 is not supported/);
    const badHeader = f4.slice();
    badHeader[10] = 0x28; // '{' -> '('
    expect(() => loadNpy(badHeader)).toThrow(FileFormatError);
    expect(() => loadNpy(f4.slice(0, 40))).toThrow(/the header says 118 bytes/);
    expect(() => loadNpy("abc" as unknown as Uint8Array)).toThrow(DTypeError);
    // An ArrayBuffer is taken too.
    expect(loadNpy(f4.slice().buffer).shape).toEqual([3, 3]);
  });
});

describe("saveNpy writes NumPy's bytes", () => {
  const f32 = () =>
    tensor(
      [
        [1.5, -2.0, 0.0],
        [-0, Infinity, -Infinity],
        [NaN, F32_MAX, F32_TINY],
      ],
      { batchDim: 1 },
    );

  it("byte for byte the files numpy.save wrote, for every dtype", () => {
    expect(saveNpySync(f32())).toEqual(npyFixture("f4.npy"));
    expect(
      saveNpySync(
        tensor(
          [
            [0.1, -1e300],
            [5e-324, -0],
          ],
          { dtype: "float64" },
        ),
      ),
    ).toEqual(npyFixture("f8.npy"));
    expect(saveNpySync(tensor([-2147483648, -1, 0, 2147483647], { dtype: "int32" }))).toEqual(npyFixture("i4.npy"));
    expect(saveNpySync(tensor([0, 1, 4294967295], { dtype: "uint32" }))).toEqual(npyFixture("u4.npy"));
    expect(
      saveNpySync(
        tensor([
          [true, false, true],
          [false, false, true],
        ]),
      ),
    ).toEqual(npyFixture("b1.npy"));
    expect(saveNpySync(tensor(2.5, { dtype: "float64" }))).toEqual(npyFixture("scalar_f8.npy"));
    expect(saveNpySync(fromTypedArray(new Float32Array(0), [0, 3]))).toEqual(npyFixture("empty_f4.npy"));
    expect(saveNpySync(fromTypedArray(new Int32Array(0), [2, 0, 4], { batchDim: 1 }))).toEqual(
      npyFixture("empty_mid_i4.npy"),
    );
    expect(saveNpySync(tensor([7]))).toEqual(npyFixture("vec_f4.npy"));
    const long = fromTypedArray(
      Uint32Array.from({ length: 1000 }, (_, i) => i),
      [1000, 1],
      { batchDim: 1 },
    );
    expect(saveNpySync(long)).toEqual(npyFixture("long_u4.npy"));
  });

  it("Fortran order, byte for byte", () => {
    const x = fromTypedArray(
      Float32Array.from({ length: 24 }, (_, i) => i),
      [2, 3, 4],
      { batchDim: 1 },
    );
    expect(saveNpySync(x, { fortranOrder: true })).toEqual(npyFixture("f4_fortran.npy"));
    expect(
      saveNpySync(
        tensor(
          [
            [1, 2, 3],
            [4, 5, 6],
          ],
          { dtype: "int32" },
        ),
        { fortranOrder: true },
      ),
    ).toEqual(npyFixture("i4_fortran_2d.npy"));
  });

  it("round trips lazy results and keeps NaN and -0 bits", () => {
    const x = f32().mul(-1);
    const back = loadNpy(saveNpySync(x), { batchDim: 1 });
    expect(back.toString()).toBe("(3; 3)");
    const v = Array.from(back.dataSync());
    expect(v).toEqual([-1.5, 2, -0, 0, -Infinity, Infinity, NaN, -F32_MAX, -F32_TINY]);
    expect(Object.is(v[2], -0)).toBe(true);
  });

  it("errors: not a tensor, bad options, a traced tensor", () => {
    expect(() => saveNpySync(new Float32Array(2) as unknown as Tensor)).toThrow(DTypeError);
    expect(() => saveNpySync(new Float32Array(2) as unknown as Tensor)).toThrow(/fromTypedArray/);
    expect(() => saveNpySync(tensor([1]), { fortranOrder: 1 as unknown as boolean })).toThrow(DTypeError);
    const f = jit((x: Tensor) => {
      saveNpySync(x);
      return x;
    });
    expect(() => f(tensor([1, 2], { batchDim: 1 }))).toThrow(/traced|jit|symbolic/i);
  });
});

describe("npz", () => {
  it("reads numpy.savez (stored) and numpy.savez_compressed (deflated) archives", () => {
    const a = loadNpz(npyFixture("arrays.npz"), { batchDim: { points: 1 } });
    expect(Object.keys(a)).toEqual(["points", "ids", "mask"]);
    expect(a["points"]!.toString()).toBe("(2; 3)");
    expect(a["points"]!.toArraySync()).toEqual([
      [0, 1, 2],
      [3, 4, 5],
    ]);
    expect(a["ids"]!.dtype).toBe("int32");
    expect(a["ids"]!.toArraySync()).toEqual([10, 20]);
    expect(a["mask"]!.toArraySync()).toEqual([true, false]);
    const c = loadNpz(npyFixture("compressed.npz"), { batchDim: 1 });
    expect(c["a"]!.toString()).toBe("(2; 2)");
    expect(c["a"]!.dtype).toBe("float64");
    expect(Array.from(c["a"]!.dataSync())).toEqual([1, 2, 3, 4]);
    expect(Array.from(c["b"]!.dataSync())).toEqual([NaN, -Infinity]);
  });

  it("saveNpz round trips, stored and deflated; members are numpy.save's bytes", async () => {
    const arrays = {
      points: tensor(
        [
          [0, 1, 2],
          [3, 4, 5],
        ],
        { batchDim: 1 },
      ),
      ids: tensor([10, 20], { dtype: "int32" }),
      mask: tensor([true, false]),
    };
    for (const compress of [false, true]) {
      const bytes = await saveNpz(arrays, { compress });
      expect(saveNpzSync(arrays, { compress })).toEqual(bytes); // deterministic: fixed timestamps
      const members = unzipSync(bytes);
      expect(Object.keys(members)).toEqual(["points.npy", "ids.npy", "mask.npy"]);
      const np = unzipSync(npyFixture("arrays.npz"));
      for (const k of Object.keys(members)) expect(members[k]).toEqual(np[k]);
      const back = loadNpz(bytes, { batchDim: { points: 1 } });
      expect(back["points"]!.toString()).toBe("(2; 3)");
      expect(back["ids"]!.toArraySync()).toEqual([10, 20]);
      expect(back["mask"]!.toArraySync()).toEqual([true, false]);
    }
    const m = loadNpz(saveNpzSync(new Map([["x", tensor([1, 2])]])));
    expect(m["x"]!.toArraySync()).toEqual([1, 2]);
  });

  it("errors name the member, the dtype and the array", () => {
    expect(() => loadNpz(npyFixture("bad_member.npz"))).toThrow(/member "big\.npy": NumPy dtype int64/);
    expect(() => loadNpz(npyFixture("not_a_zip.npz"))).toThrow(FileFormatError);
    expect(() => loadNpz(npyFixture("arrays.npz"), { batchDim: { nope: 1 } })).toThrow(KeyError);
    expect(() => loadNpz(npyFixture("arrays.npz"), { batchDim: { ids: 2 } })).toThrow(
      /batchDim 2 of array "ids" does not fit its shape \(2\)/,
    );
    expect(() => loadNpz(npyFixture("arrays.npz"), { batchDim: 2 })).toThrow(ShapeError);
    expect(() => saveNpzSync({ x: [1, 2] as unknown as Tensor })).toThrow(/array "x" must be a Tensor/);
    expect(() => saveNpzSync({ "": tensor([1]) })).toThrow(KeyError);
    expect(() => saveNpzSync([tensor([1])] as unknown as Record<string, Tensor>)).toThrow(DTypeError);
  });
});

const probe = await probeWebGPUForFile();
describeWebGPU(probe, "npy on WebGPU", (backend) => {
  it("loads onto the device and saves back NumPy's bytes", () =>
    onWebGPU(backend, async () => {
      const x = loadNpy(npyFixture("f4.npy"), { batchDim: 1 });
      expect(await saveNpy(x.mul(1))).toEqual(npyFixture("f4.npy"));
      const a = loadNpz(npyFixture("arrays.npz"));
      const bytes = await saveNpz(a);
      const np = unzipSync(npyFixture("arrays.npz"));
      const ours = unzipSync(bytes);
      for (const k of Object.keys(np)) expect(ours[k]).toEqual(np[k]);
      // float64 cannot live on WebGPU: loading it is the backend's DTypeError.
      expect(() => loadNpy(npyFixture("f8.npy"))).toThrow(DTypeError);
      expect(() => saveNpySync(x)).toThrow(/asynchronously/);
    }));
});
