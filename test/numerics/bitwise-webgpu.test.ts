/**
 * The integer bitwise ops on WebGPU: the grid of ./bitwise-cases.ts (shift counts of 32
 * and more and negative ones included, which WGSL would take modulo 32) against NumPy's
 * rules written with BigInt, with operands from buffers and as constants.
 */
import { expect, it } from "vitest";
import { fromTypedArray, type Tensor } from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";
import { APPLY, I32, pairMismatchesInOneJit, REF, U32 } from "./bitwise-cases.js";
import { selectWebGPU } from "../helpers/on-webgpu.js";

const probe = await probeWebGPUForFile();
const OPS = Object.keys(APPLY);

describeWebGPU(probe, "bitwise ops on WebGPU", (gpu) => {
  selectWebGPU(gpu);

  it("match NumPy's rules on every pair of the grid (operands from buffers, in jit)", async () => {
    const errors: string[] = [];
    for (const d of ["int32", "uint32"] as const) errors.push(...(await pairMismatchesInOneJit(d)));
    expect(errors.slice(0, 20)).toEqual([]);
  });

  it("match with constant shift counts and masks (eager)", async () => {
    const errors: string[] = [];
    for (const d of ["int32", "uint32"] as const) {
      const g = d === "int32" ? I32 : U32;
      const x = fromTypedArray((d === "int32" ? Int32Array : Uint32Array).from(g), [g.length]);
      const counts = [0, 1, 31, 32, 33, 64, ...(d === "int32" ? [-1, -32] : [0xffffffff])];
      for (const op of OPS) {
        for (const c of counts) {
          const got = await (x as unknown as Record<string, (v: number) => Tensor>)[op]!.call(x, c).data();
          g.forEach((v, i) => {
            const want = REF[op]!(v, c, d);
            if (got[i] !== want) errors.push(`${op}/${d}(${v}, const ${c}) = ${got[i]}, expected ${want}`);
          });
        }
      }
    }
    expect(errors.slice(0, 20)).toEqual([]);
  });
});
