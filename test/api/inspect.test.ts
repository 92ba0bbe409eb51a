/**
 * How a tensor shows itself: `format()`, `print()` and Node's `util.inspect`
 * (`console.log(t)`). Every expected string is written out by hand from the rules
 * in src/format.ts's comment (NumPy's layout: nested brackets by shape, one width
 * for every element, `…` past the threshold with 3 items at each end; floats with
 * the fewest digits that give the value back, a trailing "." when integral; JS
 * spellings NaN, Infinity, -0), never printed by the code and pasted.
 */
import { inspect } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  DTypeError,
  ShapeError,
  Tensor,
  TensorDict,
  Vec,
  counterSnapshot,
  fromTypedArray,
  getBackend,
  initWasm,
  jagged,
  jit,
  tensor,
} from "../../src/index.js";
import type { Backend, DeviceBuffer } from "../../runtime/backend.js";

/** The current backend's name, as the header shows it (the suite runs on wasm too: .ci/run). */
const B = getBackend().name;

const m23 = () =>
  tensor(
    [
      [1, 2, 3],
      [4, 5, 6],
    ],
    { batchDim: 1 },
  );
const ints = (n: number) =>
  fromTypedArray(
    Int32Array.from({ length: n }, (_, i) => i),
    [n],
  );

/** format() and inspect() agree (inspect never computes, so on realised tensors). */
function shown(t: Tensor): string {
  const s = t.format();
  expect(inspect(t)).toBe(s);
  return s;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a realised tensor shows dtype, (batch; base) shape, backend and values", () => {
  it("2-D: nested brackets, one width, the shape split as NEML2 writes it", () => {
    const t = m23();
    expect(shown(t)).toBe(`Tensor float32 (2; 3) ${B}\n[[1., 2., 3.],\n [4., 5., 6.]]`);
    // toString stays the shape alone (error messages show tensors by it).
    expect(t.toString()).toBe("(2; 3)");
  });

  it("3-D: a blank line between the 2-D blocks", () => {
    const t = fromTypedArray(Int32Array.of(1, 2, 3, 4, 5, 6, 7, 8), [2, 2, 2], { batchDim: 1 });
    expect(shown(t)).toBe(`Tensor int32 (2; 2,2) ${B}\n[[[1, 2],\n  [3, 4]],\n\n [[5, 6],\n  [7, 8]]]`);
  });

  it("NaN, ±Infinity and -0 are spelled as JS does; widths include them", () => {
    const t = tensor([NaN, Infinity, -Infinity, -0, 0, 1.5]);
    // 9 characters each ("-Infinity"); 66 with the header is past 75, so the values go below it.
    expect(shown(t)).toBe(
      `Tensor float32 (;6) ${B}\n[      NaN,  Infinity, -Infinity,       -0.,        0.,       1.5]`,
    );
    expect(shown(tensor([-0]))).toBe(`Tensor float32 (;1) ${B} [-0.]`);
  });

  it("0-d tensors show the value alone", () => {
    expect(shown(tensor(2.5))).toBe(`Tensor float32 (;) ${B} 2.5`);
    // float32(pi) = 3.14159274…: 7 digits (3.141593) round to another float32, 8 do not.
    expect(shown(tensor(Math.PI))).toBe(`Tensor float32 (;) ${B} 3.1415927`);
    expect(shown(tensor(-7, { dtype: "int32" }))).toBe(`Tensor int32 (;) ${B} -7`);
  });

  it("empty dims show [] (the shape is in the header); size-1 dims keep their brackets", () => {
    expect(shown(tensor([]))).toBe(`Tensor float32 (;0) ${B} []`);
    expect(shown(fromTypedArray(new Float32Array(0), [2, 0], { batchDim: 1 }))).toBe(`Tensor float32 (2; 0) ${B} []`);
    expect(shown(fromTypedArray(new Float32Array(0), [0, 3], { batchDim: 1 }))).toBe(`Tensor float32 (0; 3) ${B} []`);
    expect(shown(tensor([[5]], { batchDim: 1 }))).toBe(`Tensor float32 (1; 1) ${B} [[5.]]`);
    expect(shown(tensor([[[1, 2]]], { batchDim: 1 }))).toBe(`Tensor float32 (1; 1,2) ${B} [[[1., 2.]]]`);
  });

  it("bool and integer dtypes", () => {
    expect(shown(tensor([true, false, true]))).toBe(`Tensor bool (;3) ${B} [ true, false,  true]`);
    expect(shown(tensor([-1, 10, 300], { dtype: "int32" }))).toBe(`Tensor int32 (;3) ${B} [ -1,  10, 300]`);
    expect(shown(tensor([0, 7, 255], { dtype: "uint8" }))).toBe(`Tensor uint8 (;3) ${B} [  0,   7, 255]`);
    expect(shown(fromTypedArray(Uint32Array.of(4294967295, 0), [2]))).toBe(
      `Tensor uint32 (;2) ${B} [4294967295,          0]`,
    );
  });

  it("floats: the fewest digits that give the value back in the tensor's dtype, at most 8", () => {
    // float32(0.1) is 0.100000001…; "0.1" gives it back.
    expect(shown(tensor([0.1, 0.25]))).toBe(`Tensor float32 (;2) ${B} [ 0.1, 0.25]`);
    expect(shown(tensor([0.1, 1 / 3, 2 / 3], { dtype: "float64" }))).toBe(
      `Tensor float64 (;3) ${B} [       0.1, 0.33333333, 0.66666667]`,
    );
    expect(tensor([Math.PI], { dtype: "float64" }).format({ precision: 3 })).toBe(`Tensor float64 (;1) ${B} [3.14]`);
  });

  it("scientific notation for the whole tensor when a value is >= 1e8 or < 1e-4 (NumPy's rule)", () => {
    // 1e10 = 2^10 * 9765625 is a float32.
    expect(shown(tensor([1e10, 1, -2]))).toBe(`Tensor float32 (;3) ${B} [1e+10,  1e+0, -2e+0]`);
    expect(shown(tensor([1e-5, 0.5], { dtype: "float64" }))).toBe(`Tensor float64 (;2) ${B} [1e-5, 5e-1]`);
  });

  it("past 1000 elements: 3 items at each end of every dim longer than 6, … between", () => {
    expect(shown(ints(1000))).toContain(" 999]"); // 1000 elements: all of them
    expect(shown(ints(1000)).split(",").length).toBe(1000);
    expect(shown(ints(2000))).toBe(`Tensor int32 (;2000) ${B} [   0,    1,    2, …, 1997, 1998, 1999]`);
    const rows = fromTypedArray(
      Float32Array.from({ length: 3000 }, (_, i) => i),
      [1000, 3],
      { batchDim: 1 },
    );
    expect(shown(rows)).toBe(
      [
        `Tensor float32 (1000; 3) ${B}`,
        "[[   0.,    1.,    2.],",
        " [   3.,    4.,    5.],",
        " [   6.,    7.,    8.],",
        " …,",
        " [2991., 2992., 2993.],",
        " [2994., 2995., 2996.],",
        " [2997., 2998., 2999.]]",
      ].join("\n"),
    );
    // The options: 6 elements past a threshold of 5, 2 at each end.
    const six = fromTypedArray(Int32Array.of(1, 2, 3, 4, 5, 6), [6]);
    expect(six.format({ threshold: 5, edgeitems: 2 })).toBe(`Tensor int32 (;6) ${B} [1, 2, …, 5, 6]`);
    // A dim of at most 2 * edgeitems is shown whole, as in NumPy.
    expect(six.format({ threshold: 5 })).toBe(`Tensor int32 (;6) ${B} [1, 2, 3, 4, 5, 6]`);
  });

  it("long rows wrap at linewidth, continuation lines under the first element", () => {
    const t = fromTypedArray(Int32Array.of(1, 2, 3, 4, 5, 6, 7, 8), [8]);
    expect(t.format({ linewidth: 20 })).toBe(`Tensor int32 (;8) ${B}\n[1, 2, 3, 4, 5, 6,\n 7, 8]`);
  });

  it("inside objects and arrays Node indents the display; past inspect's depth only the header", () => {
    const t = tensor([1, 2]);
    expect(inspect({ t })).toBe(`{ t: Tensor float32 (;2) ${B} [1., 2.] }`);
    expect(inspect({ a: { b: { c: t } } })).toBe("{ a: { b: { c: [Tensor float32 (;2)] } } }");
    expect(inspect([m23()])).toBe(`[\n  Tensor float32 (2; 3) ${B}\n  [[1., 2., 3.],\n   [4., 5., 6.]]\n]`);
  });

  it("no internals: Node's console shows none of the backend's or the compiler's fields", () => {
    const s = inspect(m23().add(1), { depth: 10 });
    for (const word of ["_src", "_type", "buffer", "compiler", "inputs", "attrs"]) expect(s).not.toContain(word);
  });

  it("on WebAssembly the backend says wasm", async () => {
    await initWasm({ select: false, threads: 1 });
    const w = await tensor([1, 2, 3]).to("wasm");
    expect(shown(w)).toBe("Tensor float32 (;3) wasm [1., 2., 3.]");
  });

  it("disposed tensors say so", () => {
    const t = tensor([1, 2, 3]);
    t.dispose();
    expect(shown(t)).toBe("Tensor float32 (;3) disposed");
  });
});

describe("a lazy tensor says it is lazy and computes nothing unless asked", () => {
  it("inspect, format(), toString and String compile and run nothing", () => {
    const a = m23();
    const y = a.add(1);
    const before = counterSnapshot();
    expect(inspect(y)).toBe("Tensor float32 (2; 3) lazy (add; print() computes it)");
    expect(y.format()).toBe("Tensor float32 (2; 3) lazy (add; print() computes it)");
    expect(y.toString()).toBe("(2; 3)");
    expect(String(y)).toBe("(2; 3)");
    expect(counterSnapshot()).toEqual(before);
  });

  it("format({ values: true }) computes it (the counters move) and shows its values", () => {
    const y = m23().add(1);
    const before = counterSnapshot();
    expect(y.format({ values: true })).toBe(`Tensor float32 (2; 3) ${B}\n[[2., 3., 4.],\n [5., 6., 7.]]`);
    expect(counterSnapshot().dispatches).toBeGreaterThan(before.dispatches);
    // Now realised: plain format() shows the values.
    expect(y.format()).toBe(`Tensor float32 (2; 3) ${B}\n[[2., 3., 4.],\n [5., 6., 7.]]`);
  });

  it("print() computes and logs before it returns on JS", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    const p = m23().mul(2).print();
    expect(log).toHaveBeenCalledTimes(1);
    expect(log).toHaveBeenCalledWith(`Tensor float32 (2; 3) ${B}\n[[ 2.,  4.,  6.],\n [ 8., 10., 12.]]`);
    await p;
  });

  it("a tensor on a backend that cannot read synchronously (WebGPU) shows where it is; print() reads it", async () => {
    // The JS backend behind a WebGPU-like face: no synchronous read-back.
    const js = getBackend();
    const gpuLike = Object.create(js, {
      name: { value: "webgpu" },
      readSync: { value: undefined },
      read: { value: (b: DeviceBuffer) => Promise.resolve(js.readSync!(b)) },
    }) as Backend;
    const buf: DeviceBuffer = gpuLike.alloc("float32", 3);
    gpuLike.write(buf, Float32Array.of(1, 2, 3));
    const t = Tensor._fromBuffer({ dtype: "float32", batch: [], base: [3] }, buf, gpuLike);
    expect(shown(t)).toBe("Tensor float32 (;3) webgpu (on the device: await print() reads it)");
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    await t.print();
    expect(log).toHaveBeenCalledWith("Tensor float32 (;3) webgpu [1., 2., 3.]");
  });

  it("inside jit a tensor is traced: symbolic batch dims, no values", () => {
    let seen = "";
    const f = jit((x: Tensor) => {
      seen = `${inspect(x)} | ${x.add(1).format({ values: true })}`;
      return x.add(1);
    });
    f(m23());
    expect(seen).toBe(
      "Tensor float32 (b0; 3) traced (no values inside jit) | Tensor float32 (b0; 3) traced (no values inside jit)",
    );
  });
});

describe("typed tensors, jagged tensors and TensorDicts show their kind", () => {
  it("Vec and R2 show the type's name", () => {
    const v = Vec.create([[1, 2, 3]]);
    expect(v.format()).toBe(`Vec float32 (1; 3) ${B} [[1., 2., 3.]]`);
    expect(inspect(v)).toBe(`Vec float32 (1; 3) ${B} [[1., 2., 3.]]`);
    expect(v.toString()).toBe("Vec(1; 3)");
    expect(inspect(v.add(1))).toBe("Vec float32 (1; 3) lazy (add; print() computes it)");
  });

  it("JaggedTensor: its (B,~N; base) shape, then its packed values and offsets", () => {
    const j = jagged([tensor([[1]], { batchDim: 1 }), tensor([[2], [3]], { batchDim: 1 })]);
    expect(inspect(j)).toBe(
      [
        "JaggedTensor float32 (2,~N; 1)",
        `  values: Tensor float32 (3; 1) ${B}`,
        "  [[1.],",
        "   [2.],",
        "   [3.]]",
        `  offsets: Tensor int32 (3;) ${B} [0, 1, 3]`,
      ].join("\n"),
    );
  });

  it("TensorDict: its toString, not its Map", () => {
    const td = new TensorDict({ a: m23() }, [2]);
    expect(inspect(td)).toBe("TensorDict(batchSize=[2]) { a: (2; 3) float32 }");
  });
});

describe("bad options are typed errors naming the method and the option", () => {
  it("format and print", async () => {
    const t = m23();
    expect(() => t.format({ threshold: -1 })).toThrow(ShapeError);
    expect(() => t.format({ threshold: -1 })).toThrow("format: options.threshold must be >= 0, got -1");
    expect(() => t.format({ edgeitems: 1.5 })).toThrow("format: options.edgeitems must be an integer, got 1.5");
    expect(() => t.format({ values: "yes" as never })).toThrow(DTypeError);
    expect(() => t.format({ values: "yes" as never })).toThrow("format: options.values must be true or false");
    expect(() => t.format(5 as never)).toThrow("format: options must be an object such as { values: true }, got 5");
    await expect(t.print({ linewidth: 0 })).rejects.toThrow("print: options.linewidth must be >= 1, got 0");
    expect(() => Vec.create([[1, 2, 3]]).format({ precision: 0 })).toThrow(
      "Vec.format: options.precision must be in [1, 17], got 0",
    );
  });
});
