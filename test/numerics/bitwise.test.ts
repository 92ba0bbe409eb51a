/**
 * The integer bitwise ops (bitwise_and/or/xor, left_shift, right_shift, and bitwiseNot
 * as xor with all ones) on the JS backend: every pair of a grid of special int32/uint32
 * values and shift counts against NumPy's rules written with BigInt, eagerly, inside
 * jit (one trace for two batch sizes), with constants on either side, and against the
 * reference interpreter through the constant folder; typed errors for floats and bool.
 */
import { describe, expect, it } from "vitest";
import { counters, DTypeError, fromTypedArray, jit, Tensor, tensor } from "../../src/index.js";
import { binaryRef } from "../../ir/interpret.js";
import { APPLY, I32, mismatches, pairTensors, REF, U32 } from "./bitwise-cases.js";

const OPS = Object.keys(APPLY);

describe("bitwise ops (JS)", () => {
  it("match NumPy's rules on every pair of the grid, eagerly and in jit", () => {
    const errors: string[] = [];
    for (const d of ["int32", "uint32"] as const) {
      const { a, b, x, y } = pairTensors(d);
      for (const op of OPS) errors.push(...mismatches(op, d, a, b, APPLY[op]!(x, y).dataSync()));
      const f = jit((p: Tensor, q: Tensor) => OPS.map((op) => APPLY[op]!(p, q)));
      const outs = f(x, y) as Tensor[];
      OPS.forEach((op, k) => errors.push(...mismatches(op, d, a, b, outs[k]!.dataSync())));
    }
    expect(errors.slice(0, 20)).toEqual([]);
  });

  it("constant operands (shift counts, masks) on either side match, and so does the interpreter", () => {
    const errors: string[] = [];
    for (const d of ["int32", "uint32"] as const) {
      const g = d === "int32" ? I32 : U32;
      const x = fromTypedArray((d === "int32" ? Int32Array : Uint32Array).from(g), [g.length]);
      for (const op of OPS) {
        for (const c of g) {
          const got = (x as unknown as Record<string, (v: number) => Tensor>)[op]!.call(x, c).dataSync();
          g.forEach((v, i) => {
            const want = REF[op]!(v, c, d);
            if (got[i] !== want) errors.push(`${op}/${d}(${v}, const ${c}) = ${got[i]}, expected ${want}`);
            const irOp = {
              bitwiseAnd: "bitwise_and",
              bitwiseOr: "bitwise_or",
              bitwiseXor: "bitwise_xor",
              leftShift: "left_shift",
              rightShift: "right_shift",
            }[op] as "bitwise_and";
            const ref = binaryRef(irOp, v, c, d);
            const stored = d === "uint32" ? ref >>> 0 : ref | 0;
            if (stored !== want) errors.push(`interpreter ${op}/${d}(${v}, ${c}) = ${ref}, expected ${want}`);
          });
        }
      }
    }
    expect(errors.slice(0, 20)).toEqual([]);
  });

  it("bitwiseNot is NumPy's invert: ~x (-x - 1 on int32, 2^32 - 1 - x on uint32)", () => {
    expect(tensor([0, -1, 5, 2147483647, -2147483648], { dtype: "int32" }).bitwiseNot().toArraySync()).toEqual([
      -1, 0, -6, -2147483648, 2147483647,
    ]);
    expect(tensor([0, 1, 0xffffffff, 0x80000000], { dtype: "uint32" }).bitwiseNot().toArraySync()).toEqual([
      0xffffffff, 0xfffffffe, 0, 0x7fffffff,
    ]);
  });

  it("one trace serves two batch sizes, including an empty batch", () => {
    const f = jit((x: Tensor) => x.leftShift(3).bitwiseXor(x.rightShift(29)));
    const mk = (n: number): Tensor =>
      fromTypedArray(
        Uint32Array.from({ length: n * 2 }, (_, i) => (i * 2654435761) >>> 0),
        [n, 2],
        { batchDim: 1 },
      );
    const before = counters.traces;
    const r3 = (f(mk(3)) as Tensor).dataSync();
    (f(mk(0)) as Tensor).dataSync();
    const r5 = (f(mk(5)) as Tensor).dataSync();
    expect(counters.traces - before).toBe(1);
    const want = (v: number): number => ((v << 3) ^ (v >>> 29)) >>> 0;
    expect([...r3]).toEqual([...mk(3).dataSync()].map(want));
    expect([...r5]).toEqual([...mk(5).dataSync()].map(want));
    expect(f(mk(0)).dataSync().length).toBe(0);
  });

  it("promote int32 with uint32 to int32, and refuse floats, bool and constants that do not fit", () => {
    const i = tensor([-1], { dtype: "int32" });
    const u = tensor([3], { dtype: "uint32" });
    expect(u.bitwiseAnd(i).dtype).toBe("int32");
    expect(u.bitwiseAnd(i).toArraySync()).toEqual([3]);
    const f = tensor([1.5]);
    const b = tensor([true]);
    for (const bad of [
      () => f.bitwiseAnd(1),
      () => b.bitwiseOr(b),
      () => i.leftShift(f),
      () => f.bitwiseNot(),
      () => b.bitwiseNot(),
      () => i.rightShift(0.5),
    ]) {
      expect(bad).toThrow(DTypeError);
    }
    expect(() => f.bitwiseXor(1)).toThrow(
      /bitwiseXor: needs integer operands \(int32, uint32, int16, uint16, int8 or uint8\), got x \(;1\) of dtype float32/,
    );
    // A constant must fit the dtype (as every op with a plain number).
    expect(() => u.bitwiseAnd(-1)).toThrow(DTypeError);
    expect(() => i.bitwiseAnd(0xffffffff)).toThrow(DTypeError);
    // The IR type rule refuses a float operand too (IR text, bundles).
    expect(() => Tensor._op("left_shift", [f, f])).toThrow(
      /left_shift: x \(;1\) of dtype float32: needs an integer dtype/,
    );
  });
});
