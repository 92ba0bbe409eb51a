import { describe, expect, it } from "vitest";
import { Bytes, F32, F64, I32, ModuleBuilder, Op, Simd, V128 } from "../../codegen/wasm/encoder.js";

const hex = (b: Bytes): string => [...b.view()].map((x) => x.toString(16).padStart(2, "0")).join(" ");

describe("wasm encoder", () => {
  it("LEB128: the specification's examples and edges", () => {
    expect(hex(new Bytes().u32(0))).toBe("00");
    expect(hex(new Bytes().u32(127))).toBe("7f");
    expect(hex(new Bytes().u32(128))).toBe("80 01");
    expect(hex(new Bytes().u32(624485))).toBe("e5 8e 26");
    expect(hex(new Bytes().u32(2 ** 32 - 1))).toBe("ff ff ff ff 0f");
    expect(hex(new Bytes().s32(0))).toBe("00");
    expect(hex(new Bytes().s32(-1))).toBe("7f");
    expect(hex(new Bytes().s32(63))).toBe("3f");
    expect(hex(new Bytes().s32(64))).toBe("c0 00");
    expect(hex(new Bytes().s32(-64))).toBe("40");
    expect(hex(new Bytes().s32(-65))).toBe("bf 7f");
    expect(hex(new Bytes().s32(-123456))).toBe("c0 bb 78");
    expect(hex(new Bytes().s32(-(2 ** 31)))).toBe("80 80 80 80 78");
    expect(hex(new Bytes().s64(-(2n ** 63n)))).toBe("80 80 80 80 80 80 80 80 80 7f");
    expect(() => new Bytes().u32(-1)).toThrow(RangeError);
  });

  it("a scalar module validates and runs", () => {
    const m = new ModuleBuilder();
    m.func([I32, I32], [I32], (c) => c.get(0).get(1).op(Op.i32_add), "add");
    m.func([F64], [F64], (c) => c.get(0).f64c(-0.5).op(Op.f64_mul), "half");
    const bytes = m.encode();
    expect(WebAssembly.validate(bytes as BufferSource)).toBe(true);
    const e = new WebAssembly.Instance(new WebAssembly.Module(bytes as BufferSource)).exports as Record<
      string,
      (...a: number[]) => number
    >;
    expect(e["add"]!(2 ** 31 - 1, 1)).toBe(-(2 ** 31));
    expect(e["half"]!(3)).toBe(-1.5);
  });

  it("a SIMD module with an imported memory and an imported function validates and runs", () => {
    const m = new ModuleBuilder();
    m.importMemory({ module: "env", name: "memory", initial: 1, maximum: 4 });
    const twice = m.importFunc("env", "twice", [F32], [F32]);
    // out[0..4] = a[0..4] * b[0..4] + 1, then lane 2 replaced by twice(lane 2).
    m.func(
      [I32, I32, I32],
      [],
      (c) => {
        const v = c.local(V128);
        c.get(0).simd(Simd.v128_load).memarg(4).get(1).simd(Simd.v128_load).memarg(4).simd(Simd.f32x4_mul);
        c.f32x4c(1).simd(Simd.f32x4_add).set(v);
        c.get(v).get(v).lane(Simd.f32x4_extract_lane, 2).op(Op.call).u32(twice).lane(Simd.f32x4_replace_lane, 2).set(v);
        c.get(2).get(v).simd(Simd.v128_store).memarg(4);
      },
      "run",
    );
    const bytes = m.encode();
    expect(WebAssembly.validate(bytes as BufferSource)).toBe(true);
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 4 });
    const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes as BufferSource), {
      env: { memory, twice: (x: number) => 2 * x },
    });
    const f = new Float32Array(memory.buffer);
    f.set([1, 2, 3, -4], 0);
    f.set([0.5, 0.5, 0.5, 0.5], 4);
    (inst.exports["run"] as (a: number, b: number, o: number) => void)(0, 16, 32);
    expect([...f.subarray(8, 12)]).toEqual([1.5, 2, 5, -1]);
  });

  it("a shared memory import encodes its flags", () => {
    const m = new ModuleBuilder();
    m.importMemory({ module: "env", name: "memory", initial: 1, maximum: 2, shared: true });
    m.func([], [I32], (c) => c.op(Op.memory_size).byte(0), "pages");
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 2, shared: true });
    const inst = new WebAssembly.Instance(new WebAssembly.Module(m.encode() as BufferSource), { env: { memory } });
    expect((inst.exports["pages"] as () => number)()).toBe(1);
  });

  it("a wrongly typed body fails validation", () => {
    const m = new ModuleBuilder();
    // Returns an f32 where an i32 is declared.
    m.func([], [I32], (c) => c.f32c(1), "bad");
    expect(WebAssembly.validate(m.encode() as BufferSource)).toBe(false);
  });
});
