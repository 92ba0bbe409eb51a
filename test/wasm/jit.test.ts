/**
 * The public API on the WebAssembly backend: jit (one trace and one compile serve two
 * batch sizes), eager ops, t.to between backends keeping bits, bundles traced and loaded
 * on wasm, typed tensors and a reduction, against values computed on the JS backend or
 * by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  counters,
  fromTypedArray,
  getBackend,
  initWasm,
  jit,
  loadBundle,
  R2,
  setBackend,
  tensor,
  type Tensor,
  type WasmBackend,
} from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";

let be: WasmBackend;
beforeAll(async () => {
  be = await initWasm({ threads: 1 });
});
afterAll(() => setBackend("js"));

const bits = (a: ArrayLike<number>): string[] => Array.from(a, (v) => (Object.is(v, -0) ? "-0" : String(v)));

describe("wasm through the public API", () => {
  it("initWasm makes wasm current; jit traces once and compiles once for two batch sizes", () => {
    expect(getBackend().name).toBe("wasm");
    const f = jit((x: Tensor) => x.mul(x).neg().exp().mul(x.mul(3).sin()).add(x.mul(0.5)).sub(x.tanh()));
    const before = be.stats.launches;
    for (const n of [7, 1001]) {
      const xs = Float32Array.from({ length: n }, (_, i) => -3 + (6 * i) / n);
      const y = f(fromTypedArray(xs, [n], { batchDim: 1 })).dataSync() as Float32Array;
      for (let i = 0; i < n; i++) {
        const v = xs[i]!;
        const want = Math.exp(-v * v) * Math.sin(3 * v) + 0.5 * v - Math.tanh(v);
        expect(Math.abs(y[i]! - want)).toBeLessThan(1e-6);
      }
    }
    expect(f.stats.traces).toBe(1);
    expect(f.stats.compiles).toBe(1);
    expect(be.stats.launches - before, "the kernels ran on the wasm backend").toBe(2);
  });

  it("t.to moves values between JS and wasm keeping NaN, ±Inf, -0, subnormals and int32 extremes", async () => {
    setBackend("js");
    const f = tensor([NaN, Infinity, -Infinity, -0, 1.4e-45, 3.4028234663852886e38]);
    const i = tensor([2147483647, -2147483648, 0], { dtype: "int32" });
    setBackend("wasm");
    const fw = await f.to("wasm");
    const iw = await i.to("wasm");
    expect(bits(fw.dataSync())).toEqual(bits(f.dataSync()));
    expect(bits(iw.dataSync())).toEqual(["2147483647", "-2147483648", "0"]);
    const back = await fw.neg().to("js");
    expect(bits(back.dataSync())).toEqual([
      "NaN",
      "-Infinity",
      "Infinity",
      "0",
      "-1.401298464324817e-45",
      "-3.4028234663852886e+38",
    ]);
  });

  it("a bundle traced on wasm loads and runs on wasm (printed again from the shipped kernel IR)", async () => {
    const f = jit((m: Tensor) => {
      const a = new R2(m);
      return [a.inverse().t, a.det().t];
    });
    const mats = (B: number): Tensor => {
      const d = new Float32Array(B * 9);
      for (let k = 0; k < B; k++)
        for (let j = 0; j < 3; j++) for (let l = 0; l < 3; l++) d[k * 9 + j * 3 + l] = j === l ? 2 + k : 0.25 * (j - l);
      return fromTypedArray(d, [B, 3, 3], { batchDim: 1 });
    };
    f(mats(2));
    const g = await loadBundle(await importBundle(f.bundle()));
    expect(g.backend.name).toBe("wasm");
    const compiles = counters.compiles;
    for (const B of [1, 6]) {
      const want = f(mats(B)) as Tensor[];
      const got = g(mats(B)) as Tensor[];
      want.forEach((w, k) => expect(bits(got[k]!.dataSync())).toEqual(bits(w.dataSync())));
    }
    expect(counters.compiles).toBe(compiles);
  });

  it("reductions and broadcasting: (B; 4, 3) mean over points, max norm, divide (B3's normalisation), by hand", () => {
    const x = fromTypedArray(
      Float32Array.from([0, 0, 0, 2, 0, 0, 0, 2, 0, 2, 2, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 5]),
      [2, 4, 3],
      {
        batchDim: 1,
      },
    );
    const f = jit((t: Tensor) => {
      const c = t.sub(t.mean([0], { keepdim: true }));
      return c.div(c.mul(c).sum([1], { keepdim: true }).sqrt().max([0], { keepdim: true }));
    });
    const y = Array.from(f(x).dataSync());
    // Cloud 0: mean (1, 1, 0), all four points at distance sqrt(2). Cloud 1: mean (1, 1, 2), max distance 3.
    const s = Math.SQRT1_2;
    const want = [-s, -s, 0, s, -s, 0, -s, s, 0, s, s, 0, 0, 0, -1 / 3, 0, 0, -1 / 3, 0, 0, -1 / 3, 0, 0, 1];
    y.forEach((v, k) => expect(v).toBeCloseTo(want[k]!, 6));
  });
});
