/**
 * The numerics compositions, the integer bitwise ops and linalg's special values on
 * the WebAssembly backend: the same hand-written cases as on JS and WebGPU
 * (../numerics/numerics-cases.ts, ../numerics/bitwise-cases.ts, ../linalg/helpers.ts:
 * NaN, ±Inf, -0, empty axes and batches, shift counts past 31), eagerly and in jit;
 * and Kaolin's listToPadded/listToPacked, which write their outputs in place there.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fromTypedArray,
  getBackend,
  initWasm,
  jit,
  listToPacked,
  listToPadded,
  setBackend,
  type Tensor,
} from "../../src/index.js";
import { _poisonUninitialized } from "../../src/ragged/device.js";
import { checkSpecialValues } from "../linalg/helpers.js";
import { APPLY, I32, mismatches as bitMismatches, pairTensors, REF, U32 } from "../numerics/bitwise-cases.js";
import { CASES, mismatches } from "../numerics/numerics-cases.js";

const OPS = Object.keys(APPLY);

describe("compositions and bitwise ops on WebAssembly", () => {
  beforeAll(async () => {
    await initWasm({ threads: 1 });
  });
  afterAll(() => setBackend("js"));

  it("runs on WebAssembly", () => expect(getBackend().name).toBe("wasm"));

  it("numerics: every hand-written case, in one jit", async () => {
    const outs = (await jit(() => CASES.map((c) => c.run())).callAsync()) as Tensor[];
    const errors: string[] = [];
    for (const [k, c] of CASES.entries()) {
      // wasm's float32 exp/log are within 1 ulp: finite results get at least 1e-6 relative.
      const loose = { ...c, tol: c.tol === undefined ? 0 : Math.max(c.tol, 1e-6) };
      errors.push(...mismatches(loose, await outs[k]!.data(), outs[k]!.dtype));
    }
    expect(errors).toEqual([]);
  });

  it("bitwise ops match NumPy's rules on every pair of the grid (buffers in jit, constants eagerly)", async () => {
    const errors: string[] = [];
    for (const d of ["int32", "uint32"] as const) {
      const { a, b, x, y } = pairTensors(d);
      const outs = (await jit((p: Tensor, q: Tensor) => OPS.map((op) => APPLY[op]!(p, q))).callAsync(x, y)) as Tensor[];
      for (const [k, op] of OPS.entries()) errors.push(...bitMismatches(op, d, a, b, await outs[k]!.data()));
      const g = d === "int32" ? I32 : U32;
      const t = fromTypedArray((d === "int32" ? Int32Array : Uint32Array).from(g), [g.length]);
      for (const op of OPS) {
        for (const c of [0, 31, 32, 33, ...(d === "int32" ? [-1] : [0xffffffff])]) {
          const got = await (t as unknown as Record<string, (v: number) => Tensor>)[op]!.call(t, c).data();
          g.forEach((v, i) => {
            const want = REF[op]!(v, c, d);
            if (got[i] !== want) errors.push(`${op}/${d}(${v}, const ${c}) = ${got[i]}, expected ${want}`);
          });
        }
      }
    }
    expect(errors.slice(0, 20)).toEqual([]);
  });

  it("linalg: singular, NaN/Inf, non-positive-definite and empty inputs", () => checkSpecialValues());
});

describe("Kaolin's layout helpers on WebAssembly", () => {
  beforeAll(async () => {
    await initWasm({ threads: 1 });
    _poisonUninitialized(0xa5);
  });
  afterAll(() => {
    _poisonUninitialized(undefined);
    setBackend("js");
  });

  it("listToPadded and listToPacked write their outputs in the WebAssembly memory; lazy entries, padding and empty clouds", () => {
    const a = fromTypedArray(Float32Array.from([1, 2, 3, 4, 5, 6]), [2, 3], { batchDim: 0 });
    const lazy = fromTypedArray(Float32Array.from([1, 1, 1]), [1, 3], { batchDim: 0 }).mul(-2); // not computed yet
    const empty = fromTypedArray(new Float32Array(0), [0, 3], { batchDim: 0 });
    const [padded, spt] = listToPadded([a, lazy, empty], -1) as [Tensor, Tensor];
    expect(padded.shape).toEqual([3, 2, 3]);
    expect(padded._src.kind === "buffer" && padded._src.backend.name).toBe("wasm");
    expect([...padded.dataSync()]).toEqual([1, 2, 3, 4, 5, 6, -2, -2, -2, -1, -1, -1, -1, -1, -1, -1, -1, -1]);
    expect([...spt.dataSync()]).toEqual([2, 1, 0]);
    const [packed] = listToPacked([lazy, empty, a]) as [Tensor, Tensor];
    expect(packed.shape).toEqual([3, 3]);
    expect([...packed.dataSync()]).toEqual([-2, -2, -2, 1, 2, 3, 4, 5, 6]);
    for (const t of [padded, spt, packed, a, empty]) t.dispose();
  });
});
