/**
 * Kernels with looped (not unrolled) base axes on the WebAssembly backend: random
 * elementwise chains over (B; N, 3) with N >= 22 (past the unroll limit, so the point
 * loop is a real inner loop that gets four-lane versions), operands broadcast along the
 * batch, the points or the coordinates, against the reference interpreter run on the
 * traced graph (`f.dump()` parsed back).
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConcreteType } from "../../ir/shapes.js";
import { interpret } from "../../ir/interpret.js";
import { parseGraph } from "../../ir/parse.js";
import { fromTypedArray, initWasm, jit, setBackend, type Tensor, type WasmBackend } from "../../src/index.js";
import { closeEnough } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";

let be: WasmBackend;
beforeAll(async () => {
  be = await initWasm({ threads: 1 });
});
afterAll(() => setBackend("js"));

// No exp: a chain of exps multiplies a 1-ulp difference by its argument at every step.
const UNARY = ["sin", "tanh", "sigmoid", "abs", "neg", "sqrt"] as const;
const BINARY = ["add", "sub", "mul", "maximum", "minimum", "div"] as const;

describe("looped base axes on wasm", () => {
  it("random chains over (B; N, 3) with broadcast operands equal the interpreter", () => {
    let simdInner = 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 22, max: 70 }),
        fc.constantFrom<[number, number]>([1, 3], [0, 3], [1, 1], [0, 1]),
        fc.array(fc.tuple(fc.constantFrom(...UNARY, ...BINARY), fc.boolean()), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 0, max: 2 ** 30 }),
        (B, N, [pts, xyz], ops, seed) => {
          // y is (B; 1 or N, 1 or 3) when pts/xyz say so (pts 0: the point axis has size 1).
          const yBase = [pts === 0 ? 1 : N, xyz];
          const f = jit((x: Tensor, y: Tensor) => {
            let v = x;
            for (const [op, swap] of ops) {
              if ((UNARY as readonly string[]).includes(op))
                v = (v as unknown as Record<string, () => Tensor>)[op]!.call(v);
              else {
                const m = (a: Tensor, b: Tensor): Tensor =>
                  (a as unknown as Record<string, (b: Tensor) => Tensor>)[op]!.call(a, b);
                v = swap ? m(y.add(v.mul(0)), v) : m(v, y);
              }
            }
            return v;
          });
          let s = seed;
          const rnd = (): number => ((s = (s * 1103515245 + 12345) >>> 0), ((s >>> 8) / 2 ** 24) * 4 - 2);
          const xd = Float32Array.from({ length: B * N * 3 }, rnd);
          const yd = Float32Array.from({ length: B * yBase[0]! * yBase[1]! }, rnd);
          const got = f(
            fromTypedArray(xd, [B, N, 3], { batchDim: 1 }),
            fromTypedArray(yd, [B, ...yBase], { batchDim: 1 }),
          ).dataSync();
          const xt: ConcreteType = { dtype: "float32", batch: [B], base: [N, 3] };
          const yt: ConcreteType = { dtype: "float32", batch: [B], base: yBase };
          const [want] = interpret(parseGraph(f.dump()), [
            { type: xt, data: xd },
            { type: yt, data: yd },
          ]);
          simdInner += /inner loop\(s\) in SIMD/.test(f.dump({ kernels: true })) ? 1 : 0;
          const err = closeEnough(got, want!.data, 1e-5);
          if (err !== undefined) throw new Error(`${err} (B ${B}, N ${N}, y ${yBase}, ops ${JSON.stringify(ops)})`);
        },
      ),
      { numRuns: 60, seed: FC_SEED },
    );
    expect(be.stats.launches).toBeGreaterThan(60);
    expect(simdInner, "kernels whose point loop got four-lane versions").toBeGreaterThan(30);
  });
});
