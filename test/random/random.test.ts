/**
 * random (Threefry-2x32, JAX's construction) on the JS backend. Independent anchors:
 * Random123's known-answer vectors for threefry2x32_20 (kat_vectors), and values
 * published by JAX: its seed-to-key table and `fold_in(key(0), 4)` (tests/random_test.py,
 * `testPRNGValues`, `test_prng_seeds_and_keys`), the old (non-partitionable) `split(key(0), 4)`
 * and `random_bits(PRNGKey(1701), 32, (3,))`, which hash known counter pairs, and the
 * partitionable `split(key(0), 8)` as printed by JAX. Then statistical sanity checks,
 * batch-generic jit, and typed errors.
 */
import { describe, expect, it } from "vitest";
import { counters, DTypeError, jit, random, ShapeError, tensor, type Tensor } from "../../src/index.js";

const u32 = (v: number[]): Tensor => tensor(v, { dtype: "uint32" });
const hash = (k: number[], c0: number[], c1: number[]): [number[], number[]] => {
  const [y0, y1] = random.threefry2x32(u32(k), u32(c0), u32(c1));
  return [[...y0.dataSync()], [...y1.dataSync()]];
};

describe("random (JS)", () => {
  it("Threefry-2x32-20 matches Random123's known-answer vectors", () => {
    expect(hash([0, 0], [0], [0])).toEqual([[0x6b200159], [0x99ba4efe]]);
    expect(hash([0xffffffff, 0xffffffff], [0xffffffff], [0xffffffff])).toEqual([[0x1cb996fc], [0xbb002be7]]);
    expect(hash([0x13198a2e, 0x03707344], [0x243f6a88], [0x85a308d3])).toEqual([[0xc4923a9c], [0x483df7a0]]);
  });

  it("matches the values JAX publishes for its (older) counter layouts", () => {
    // split(PRNGKey(0), 4) before jax_threefry_partitionable: the hash of counters (i, 4 + i);
    // row-major [[y0(0), y0(1)], [y0(2), y0(3)], [y1(0), y1(1)], [y1(2), y1(3)]].
    expect(hash([0, 0], [0, 1, 2, 3], [4, 5, 6, 7])).toEqual([
      [2285895361, 1501764800, 1518642379, 4090693311],
      [433833334, 4221794875, 839183663, 3740430601],
    ]);
    // random_bits(PRNGKey(1701), 32, (3,)) before partitionable: counters (0, 2), (1, 0): [y0(0,2), y0(1,0), y1(0,2)].
    const [y0, y1] = hash([0, 1701], [0, 1], [2, 0]);
    expect([y0[0], y0[1], y1[0]]).toEqual([56197195, 4200222568, 961309823]);
  });

  it("key(seed) is JAX's (hi, lo) pair; negative seeds as JAX's default 32-bit mode", () => {
    const cases: [number, number[]][] = [
      [0, [0, 0]],
      [1, [0, 1]],
      [3, [0, 3]],
      [-1, [0, 4294967295]],
      [-2, [0, 4294967294]],
      [2147483647 + 100, [0, 2147483747]],
      [-2147483648 - 100, [0, 2147483548]],
      [2 ** 32 + 5, [1, 5]],
    ];
    for (const [seed, want] of cases) expect(random.key(seed).toArraySync(), `seed ${seed}`).toEqual(want);
    expect(random.key(0).dtype).toBe("uint32");
  });

  it("split and foldIn are JAX's (partitionable: key i hashes the counter (0, i))", () => {
    expect(random.foldIn(random.key(0), 4).toArraySync()).toEqual([2285895361, 433833334]);
    expect(random.split(random.key(0), 8).toArraySync()).toEqual([
      [1797259609, 2579123966],
      [928981903, 3453687069],
      [4146024105, 2718843009],
      [2467461003, 3840466878],
      [2285895361, 433833334],
      [1524306142, 1887795613],
      [3792494674, 2909014575],
      [2716826189, 292468403],
    ]);
    // JAX's test_threefry_split_fold_in_symmetry.
    const k = random.key(72);
    const s = random.split(k, 3).toArraySync() as number[][];
    for (let i = 0; i < 3; i++) expect(random.foldIn(k, i).toArraySync()).toEqual(s[i]);
    expect(random.foldIn(k, tensor([0, 1, 2], { dtype: "int32" })).toArraySync()).toEqual(s);
  });

  it("bits are the xor of the two words; uniform is (bits >> 9) · 2^-23, JAX's float32 construction", () => {
    const k = random.key(0);
    const [y0, y1] = hash([0, 0], [0, 0, 0, 0], [0, 1, 2, 3]);
    const bits = [...random.bits(k, [4]).dataSync()];
    expect(bits).toEqual(y0.map((v, i) => (v ^ y1[i]!) >>> 0));
    const u = [...random.uniform(k, [2, 2]).dataSync()];
    expect(u).toEqual(bits.map((b) => (b >>> 9) * 2 ** -23));
    // As a port checked against JAX prints them for uniform(key(0), (4,)).
    expect(u.map((v) => v.toFixed(10))).toEqual(["0.9476670027", "0.9785798788", "0.3322914839", "0.4686684608"]);
    // Bounds: u · (max - min) + min, at least min.
    const r = [...random.uniform(k, [4], { minval: -2, maxval: 2 }).dataSync()];
    expect(r).toEqual(u.map((v) => Math.fround(Math.fround(v * 4) - 2)));
    // float64: the top 52 bits of (y0 << 32) | y1.
    const d = [...random.uniform(k, [4], { dtype: "float64" }).dataSync()];
    expect(d).toEqual(y0.map((v, i) => (v * 2 ** 20 + (y1[i]! >>> 12)) * 2 ** -52));
  });

  it("uniform, normal and bernoulli have the right moments over 1e5 draws", () => {
    const n = 100_000;
    const moments = (a: ArrayLike<number>): [number, number] => {
      let s = 0;
      let s2 = 0;
      for (let i = 0; i < a.length; i++) s += a[i]!;
      const m = s / a.length;
      for (let i = 0; i < a.length; i++) s2 += (a[i]! - m) ** 2;
      return [m, s2 / a.length];
    };
    const u = random.uniform(random.key(1), [n]).dataSync();
    const [um, uv] = moments(u);
    expect(Math.abs(um - 0.5)).toBeLessThan(0.005); // sd of the mean: 0.29 / sqrt(1e5) = 0.0009
    expect(Math.abs(uv - 1 / 12)).toBeLessThan(0.002);
    expect(Math.min(...u)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...u)).toBeLessThan(1);
    const z = random.normal(random.key(2), [n]).dataSync();
    const [zm, zv] = moments(z);
    expect(Math.abs(zm)).toBeLessThan(0.015); // sd of the mean: 0.0032
    expect(Math.abs(zv - 1)).toBeLessThan(0.02);
    let below1 = 0;
    for (const v of z) if (v < 1) below1++;
    expect(Math.abs(below1 / n - 0.8413447)).toBeLessThan(0.006); // Φ(1)
    const b = random.bernoulli(random.key(3), 0.3, [n]).dataSync();
    let ones = 0;
    for (const v of b) ones += v;
    expect(Math.abs(ones / n - 0.3)).toBeLessThan(0.006);
    expect(random.bernoulli(random.key(3), tensor([0, 1, 0, 1])).toArraySync()).toEqual([false, true, false, true]);
  });

  it("permutation is the stable argsort of bits(split(key)[1], n) (JAX's one round)", () => {
    const k = random.key(5);
    const p = [...random.permutation(k, 50).dataSync()];
    expect([...p].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    const bits = [...random.bits(random.split(k, 2).select(0, 1), [50]).dataSync()];
    const order = Array.from({ length: 50 }, (_, i) => i).sort((a, b) => bits[a]! - bits[b]! || a - b);
    expect(p).toEqual(order);
    expect(random.permutation(k, 1).toArraySync()).toEqual([0]);
    expect(random.permutation(k, 0).toArraySync()).toEqual([]);
  });

  it("keys with batch dims draw one stream per batch element; jit traces once for every batch size", () => {
    const f = jit((key: Tensor) => [random.uniform(key, [3]), random.normal(key, [2]), random.split(key, 2)]);
    const before = counters.traces;
    const k3 = random.split(random.key(7), 3).rebatch(1);
    const k5 = random.split(random.key(8), 5).rebatch(1);
    const r3 = f(k3) as Tensor[];
    const r5 = f(k5) as Tensor[];
    expect(counters.traces - before).toBe(1);
    expect(r5[0]!.batchShape).toEqual([5]);
    for (let i = 0; i < 5; i++) {
      const ki = k5.batchIndex(0, i);
      expect(r5[0]!.batchIndex(0, i).toArraySync()).toEqual(random.uniform(ki, [3]).toArraySync());
      expect(r5[2]!.batchIndex(0, i).toArraySync()).toEqual(random.split(ki, 2).toArraySync());
    }
    expect(r3[1]!.batchShape).toEqual([3]);
    const empty = f(random.split(random.key(9), 0).rebatch(1)) as Tensor[];
    expect(empty[0]!.batchShape).toEqual([0]);
    expect(counters.traces - before).toBe(1);
  });

  it("typed errors for bad keys, seeds, shapes and options", () => {
    const k = random.key(0);
    expect(() => random.key(1.5)).toThrow(DTypeError);
    expect(() => random.key(2 ** 60)).toThrow(DTypeError);
    expect(() => random.uniform(tensor([0, 0]), [2])).toThrow(/random\.uniform: key \(;2\) must be uint32/);
    expect(() => random.uniform(tensor([0, 0, 0], { dtype: "uint32" }), [2])).toThrow(ShapeError);
    expect(() => random.uniform(k, [-1])).toThrow(ShapeError);
    expect(() => random.uniform(k, [2], { dtype: "int32" })).toThrow(DTypeError);
    expect(() => random.normal(k, [2], { dtype: "bool" })).toThrow(DTypeError);
    expect(() => random.split(k, 1.5)).toThrow(ShapeError);
    expect(() => random.foldIn(k, 0.5)).toThrow(DTypeError);
    expect(() => random.permutation(k, 1025)).toThrow(ShapeError);
    expect(() => random.bernoulli(k, "x" as unknown as number)).toThrow(DTypeError);
  });
});
