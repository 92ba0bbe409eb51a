/**
 * Jagged offsets are checked before any segmented kernel reads them, wherever
 * they come from: host data, offsets computed lazily in the same graph, inside
 * jit, passed to jit after being computed, in a loaded bundle. Bad offsets (not
 * starting at 0, decreasing, not ending at the number of packed values) are a
 * ShapeError naming the op and the offsets' shape; good ones give the values a
 * hand computation gives.
 */
import { describe, expect, it } from "vitest";
import { counters, fromTypedArray, JaggedTensor, jit, loadBundle, ShapeError, type Tensor } from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";

/** Packed values 1..5, one per row position: (5;). */
const values = (): Tensor => fromTypedArray(Float32Array.from([1, 2, 3, 4, 5]), [5], { batchDim: 1 });
const ints = (o: readonly number[]): Tensor => fromTypedArray(Int32Array.from(o), [o.length], { batchDim: 1 });
/** Offsets the constructor cannot read on the host yet: computed lazily from `o`. */
const lazy = (o: readonly number[]): Tensor => ints(o).add(0);

/** Bad offsets for 5 packed values, and the words the error must contain. */
const BAD: readonly (readonly [string, readonly number[], RegExp])[] = [
  ["decreasing (the issue's repro)", [0, 3, 2, 5], /decrease at entry 2 \(3 then 2\)/],
  ["not starting at 0", [1, 3, 5], /start at 1, not 0/],
  ["ending before the last value", [0, 2, 4], /end at 4, but there are 5 packed values/],
  ["ending past the buffer", [0, 3, 1000000], /end at 1000000, but there are 5 packed values/],
  ["negative", [0, -4, 5], /decrease at entry 1/],
];

describe("jagged offsets computed lazily (eager)", () => {
  for (const [what, o, words] of BAD) {
    it(`${what}: every segmented op throws a ShapeError naming op and offsets`, () => {
      const j = new JaggedTensor(values(), lazy(o));
      const ops: [string, () => Tensor][] = [
        ["segment_reduce(sum)", () => j.sum()],
        ["segment_reduce(max)", () => j.max()],
        ["segment_reduce(argmax)", () => j.argmax()],
        ["segment_reduce(count)", () => j.lengths],
        ["segment_pad", () => j.toPadded({ maxLength: 4 }).padded],
        [
          "segment_expand",
          () => j.add(fromTypedArray(Float32Array.from(o.slice(1)), [o.length - 1], { batchDim: 1 })).values,
        ],
      ];
      for (const [op, run] of ops) {
        let err: unknown;
        try {
          run().dataSync();
        } catch (e) {
          err = e;
        }
        expect(err, op).toBeInstanceOf(ShapeError);
        const msg = (err as Error).message;
        expect(msg.startsWith(`${op}:`), msg).toBe(true);
        expect(msg).toContain(`jagged offsets (${o.length};)`);
        expect(msg).toMatch(words);
      }
    });
  }

  it("the mask alone (no packed values) still needs offsets that start at 0 and never decrease", () => {
    const mask = (o: readonly number[]) => new JaggedTensor(values(), lazy(o)).toPadded({ maxLength: 3 }).mask;
    expect(() => mask([0, 3, 2, 5]).dataSync()).toThrow(/segment_mask: jagged offsets \(4;\) decrease at entry 2/);
    expect(() => mask([2, 3, 5]).dataSync()).toThrow(/start at 2, not 0/);
    // Good offsets: rows of 3, 0 and 2 entries.
    expect(Array.from(mask([0, 3, 3, 5]).dataSync())).toEqual([1, 1, 1, 0, 0, 0, 1, 1, 0]);
  });

  it("good lazily computed offsets give the hand-computed sums, means and padding", () => {
    const j = new JaggedTensor(values(), lazy([0, 3, 3, 5]));
    expect(Array.from(j.sum().dataSync())).toEqual([6, 0, 9]);
    expect(Array.from(j.mean().dataSync())).toEqual([2, NaN, 4.5]);
    expect(Array.from(j.lengths.dataSync())).toEqual([3, 0, 2]);
    expect(Array.from(j.toPadded({ maxLength: 3, paddingValue: -1 }).padded.dataSync())).toEqual([
      1, 2, 3, -1, -1, -1, 4, 5, -1,
    ]);
  });

  it("offsets computed from host data (ints(o).mul(2)) are checked against the values they meet", () => {
    // [0, 1, 2] * 2 = [0, 2, 4]: right for 4 values, wrong for 5.
    const four = fromTypedArray(Float32Array.from([1, 2, 3, 4]), [4], { batchDim: 1 });
    expect(Array.from(new JaggedTensor(four, ints([0, 1, 2]).mul(2)).sum().dataSync())).toEqual([3, 7]);
    expect(() => new JaggedTensor(values(), ints([0, 1, 2]).mul(2)).sum().dataSync()).toThrow(
      /end at 4, but there are 5 packed values \(packed values \(5;\)\)/,
    );
  });

  it("toList reads lazily computed offsets on the host and checks them there", () => {
    expect(() => new JaggedTensor(values(), lazy([0, 3, 2, 5])).toList()).toThrow(
      /^jagged\.toList: offsets \(4;\) decrease at entry 2 \(3 then 2\)/,
    );
    expect(() => new JaggedTensor(values(), lazy([0, 3, 9])).toList()).toThrow(
      /end at 9, but there are 5 packed values/,
    );
    expect(new JaggedTensor(values(), lazy([0, 3, 3, 5])).toList().map((t) => Array.from(t.dataSync()))).toEqual([
      [1, 2, 3],
      [],
      [4, 5],
    ]);
  });

  it("host offsets are still refused at construction", () => {
    expect(() => new JaggedTensor(values(), ints([0, 3, 2, 5]))).toThrow(ShapeError);
  });
});

describe("jagged offsets inside jit and bundles", () => {
  it("offsets computed inside a traced function are checked at every call; a failed call leaves the next one right", () => {
    const f = jit((v: Tensor, o: Tensor) => new JaggedTensor(v, o.mul(2)).sum());
    // [0,1,2]*2 = [0,2,4] for 4 values: rows [1,2] and [3,4].
    const four = fromTypedArray(Float32Array.from([1, 2, 3, 4]), [4], { batchDim: 1 });
    expect(Array.from(f(four, ints([0, 1, 2])).dataSync())).toEqual([3, 7]);
    expect(() => f(values(), ints([0, 1, 2]))).toThrow(
      /segment_reduce\(sum\): jagged offsets \(3;\) end at 4, but there are 5 packed values/,
    );
    expect(() => f(four, ints([0, 1, 0]))).toThrow(/decrease at entry 2 \(2 then 0\)/);
    expect(Array.from(f(four, ints([0, 0, 2])).dataSync())).toEqual([0, 10]);
    expect(f.stats.traces).toBe(1);
  });

  it("bad offsets reaching a jit function as an argument are refused before any kernel is launched", () => {
    const f = jit((x: JaggedTensor) => x.mul(2).sum());
    const good = new JaggedTensor(values(), ints([0, 3, 3, 5]));
    expect(Array.from(f(good).dataSync())).toEqual([12, 0, 18]);
    for (const [, o, words] of BAD) {
      const bad = new JaggedTensor(values(), lazy(o));
      // jit realizes its arguments first (offsets computed by `add`), then the program checks them.
      bad.offsets.dataSync();
      const before = counters.dispatches;
      expect(() => f(bad)).toThrow(words);
      expect(counters.dispatches).toBe(before);
    }
    expect(Array.from(f(good).dataSync())).toEqual([12, 0, 18]);
  });

  it("zero-copy host offsets changed by the caller after a good call are checked again", () => {
    const data = Int32Array.from([0, 3, 3, 5]);
    const o = fromTypedArray(data, [4], { batchDim: 1, copy: false });
    const f = jit((x: JaggedTensor) => x.sum());
    const j = new JaggedTensor(values(), o);
    expect(Array.from(f(j).dataSync())).toEqual([6, 0, 9]);
    data[2] = 9;
    expect(() => f(j)).toThrow(/segment_reduce\(sum\): jagged offsets \(4;\) decrease at entry 3 \(9 then 5\)/);
  });

  it("a loaded bundle checks the offsets it is given", async () => {
    const f = jit((x: JaggedTensor) => x.sum());
    f(new JaggedTensor(values(), ints([0, 3, 3, 5])));
    const g = await loadBundle(await importBundle(f.bundle()));
    expect(Array.from((g(new JaggedTensor(values(), ints([0, 1, 5]))) as Tensor).dataSync())).toEqual([1, 14]);
    const bad = new JaggedTensor(values(), lazy([0, 4, 3, 5]));
    expect(() => g(bad)).toThrow(/segment_reduce\(sum\): jagged offsets \(4;\) decrease at entry 2 \(4 then 3\)/);
    await expect(g.callAsync(bad)).rejects.toThrow(ShapeError);
  });
});
