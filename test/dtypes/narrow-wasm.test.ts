/**
 * The narrow dtypes on WebAssembly (stored narrow in the wasm memory: 8- and 16-bit
 * loads and stores): the NumPy cases of ./cases.ts, eager and in jit, one trace for two
 * batch sizes, empty dims, and float16's DTypeError.
 */
import { describe, expect, it } from "vitest";
import { counters, DTypeError, fromTypedArray, jit, tensor, zeros, type Tensor } from "../../src/index.js";
import { useWasmForBlock } from "../helpers/js-and-wasm.js";
import { ALL_CASES, runCases } from "./cases.js";

describe("narrow dtypes on WebAssembly", () => {
  useWasmForBlock();

  it("wrap, promote and cast as NumPy (eager and in jit)", async () => {
    expect(await runCases(ALL_CASES)).toEqual([]);
  });

  it("one trace serves two batch sizes; empty dims", async () => {
    const f = jit((x: Tensor) => x.mul(x).add(x.cast("int16")));
    const mk = (n: number): Tensor =>
      fromTypedArray(
        Int8Array.from({ length: n * 3 }, (_, i) => ((i * 53) << 24) >> 24),
        [n, 3],
        { batchDim: 1 },
      );
    const before = counters.traces;
    const r4 = await ((await f.callAsync(mk(4))) as Tensor).data();
    const r7 = await ((await f.callAsync(mk(7))) as Tensor).data();
    const r0 = await ((await f.callAsync(mk(0))) as Tensor).data();
    expect(counters.traces - before).toBe(1);
    // int8 x*x wraps in int8, then promotes to int16 for the add.
    const want = (n: number): number[] =>
      Array.from({ length: n * 3 }, (_, i) => {
        const v = ((i * 53) << 24) >> 24;
        return (((v * v) << 24) >> 24) + v;
      });
    expect(r4).toBeInstanceOf(Int16Array);
    expect([...r4]).toEqual(want(4));
    expect([...r7]).toEqual(want(7));
    expect(r0.length).toBe(0);
    const e = await zeros([0], [2], { dtype: "uint16" }).add(1).data();
    expect(e).toBeInstanceOf(Uint16Array);
    expect(e.length).toBe(0);
  });

  it("float16 is a DTypeError", async () => {
    expect(() => tensor([1], { dtype: "float16" })).toThrow(/is float16, which .* cannot hold \(float16 needs/);
    await expect(tensor([1.5]).cast("float16").data()).rejects.toThrow(DTypeError);
  });
});
