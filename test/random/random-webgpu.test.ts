/**
 * random on WebGPU: Random123's known-answer vectors and JAX's split values on the
 * device, and the same bits, uniforms, keys and permutations as the JS backend (the
 * stream is a pure function of key and position); normals within float32 accuracy
 * (WGSL's log and sqrt are not correctly rounded).
 */
import { beforeAll, expect, it } from "vitest";
import { registerBackend } from "../../src/backend.js";
import { counters, jit, random, setBackend, tensor, type Tensor } from "../../src/index.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";

const probe = await probeWebGPUForFile();

/** The draws compared between backends, from one key with two batch elements. */
const draws = (k: Tensor): Tensor[] => [
  random.bits(k, [5]),
  random.uniform(k, [2, 3], { minval: -1, maxval: 3 }),
  random.split(k, 3),
  random.permutation(k, 17),
  random.bernoulli(k, 0.5, [6]),
  random.normal(k, [64]),
];

describeWebGPU(probe, "random on WebGPU", (gpu) => {
  let expected: number[][] = [];
  let many: number[] = [];
  const manyKeys = (): Tensor => random.split(random.key(3), 100).rebatch(1);
  beforeAll(() => {
    setBackend("js");
    expected = draws(random.split(random.key(11), 2).rebatch(1)).map((t) => [...t.dataSync()]);
    many = [...random.uniform(manyKeys(), [1000]).dataSync()];
    registerBackend(gpu);
    setBackend("webgpu");
  });

  it("Threefry known-answer vectors and JAX's split(key(0), 3) on the device", async () => {
    // The three vectors at once: keys and counters with one batch dim.
    const keys = tensor(
      [
        [0, 0],
        [0xffffffff, 0xffffffff],
        [0x13198a2e, 0x03707344],
      ],
      { dtype: "uint32", batchDim: 1 },
    );
    const c0 = tensor([0, 0xffffffff, 0x243f6a88], { dtype: "uint32", batchDim: 1 });
    const c1 = tensor([0, 0xffffffff, 0x85a308d3], { dtype: "uint32", batchDim: 1 });
    const [y0, y1] = random.threefry2x32(keys, c0, c1);
    expect([...(await y0.data())]).toEqual([0x6b200159, 0x1cb996fc, 0xc4923a9c]);
    expect([...(await y1.data())]).toEqual([0x99ba4efe, 0xbb002be7, 0x483df7a0]);
    expect(await random.split(random.key(0), 3).toArray()).toEqual([
      [1797259609, 2579123966],
      [928981903, 3453687069],
      [4146024105, 2718843009],
    ]);
  });

  it("gives the JS backend's bits, uniforms, keys and permutations exactly, in jit, one trace for two batch sizes", async () => {
    const f = jit((k: Tensor) => draws(k));
    const before = counters.traces;
    const outs = (await f.callAsync(random.split(random.key(11), 2).rebatch(1))) as Tensor[];
    await f.callAsync(random.split(random.key(12), 4).rebatch(1));
    expect(counters.traces - before).toBe(1);
    for (let i = 0; i < 5; i++) expect([...(await outs[i]!.data())], `draw ${i}`).toEqual(expected[i]);
    const z = [...(await outs[5]!.data())];
    z.forEach((v, i) => expect(Math.abs(v - expected[5]![i]!)).toBeLessThan(1e-5 * Math.max(1, Math.abs(v))));
  });

  it("1e5 uniforms (a large base) are the JS backend's, bit for bit", async () => {
    expect([...(await random.uniform(manyKeys(), [1000]).data())]).toEqual(many);
  });
});
