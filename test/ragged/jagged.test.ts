/** Jagged tensors from the public API: values against hand-computed rows, and jit over any lengths. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromPadded, fromTypedArray, jagged, JaggedTensor, jit, ShapeError, tensor, Tensor } from "../../src/index.js";
import { closeEnough, rng } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";

const rowsOf = (lengths: readonly number[], seed: number): number[][][] => {
  const r = rng(seed);
  return lengths.map((n) =>
    Array.from({ length: n }, () => [0, 1, 2].map(() => Math.round((r() * 4 - 2) * 100) / 100)),
  );
};
const toJagged = (rows: number[][][]): JaggedTensor =>
  jagged(rows.map((rw) => fromTypedArray(Float32Array.from(rw.flat()), [rw.length, 3], { batchDim: 1 })));

describe("jagged tensors", () => {
  const rows = [
    [
      [1, 2, 3],
      [3, 2, 1],
    ],
    [],
    [[0, 0, 4]],
  ];
  const j = toJagged(rows);

  it("stores packed values and int32 offsets", () => {
    expect(j.values.toString()).toBe("(3; 3)");
    expect(j.offsets.toArraySync()).toEqual([0, 2, 2, 3]);
    expect(j.lengths.toArraySync()).toEqual([2, 0, 1]);
    expect(j.toString()).toBe("(3,~N; 3)");
  });

  it("reduces each row over its ragged dim", () => {
    expect(j.sum().toArraySync()).toEqual([
      [4, 4, 4],
      [0, 0, 0],
      [0, 0, 4],
    ]);
    expect(j.mean().toArraySync()).toEqual([
      [2, 2, 2],
      [NaN, NaN, NaN],
      [0, 0, 4],
    ]);
    expect(j.max().toArraySync()).toEqual([
      [3, 2, 3],
      [-Infinity, -Infinity, -Infinity],
      [0, 0, 4],
    ]);
    expect(j.min().toArraySync()).toEqual([
      [1, 2, 1],
      [Infinity, Infinity, Infinity],
      [0, 0, 4],
    ]);
    expect(j.argmax().toArraySync()).toEqual([
      [1, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
    ]);
    expect(j.count().toArraySync()).toEqual([
      [2, 2, 2],
      [0, 0, 0],
      [1, 1, 1],
    ]);
  });

  it("takes Kaolin's maxShape spelling, -1 meaning the longest row", () => {
    expect(j.toPadded({ maxShape: [-1] }).padded.toString()).toBe("(3,2; 3)");
    expect(j.toPadded({ maxShape: [4] }).padded.toString()).toBe("(3,4; 3)");
    expect(() => j.toPadded({ maxShape: [4, 3] })).toThrow(/maxShape must be \[n\]/);
    expect(() => j.toPadded({ maxShape: [1] })).toThrow(/maxLength 1 is smaller than the longest row \(2\)/);
  });

  it("pads right and left with a mask, and comes back", () => {
    const r = j.toPadded({ paddingValue: -1 });
    expect(r.padded.toString()).toBe("(3,2; 3)");
    expect(r.padded.toArraySync()).toEqual([
      [
        [1, 2, 3],
        [3, 2, 1],
      ],
      [
        [-1, -1, -1],
        [-1, -1, -1],
      ],
      [
        [0, 0, 4],
        [-1, -1, -1],
      ],
    ]);
    expect(r.mask.toArraySync()).toEqual([
      [true, true],
      [false, false],
      [true, false],
    ]);
    const l = j.toPadded({ paddingSide: "left", maxLength: 3 });
    expect(l.padded.toArraySync()).toEqual([
      [
        [0, 0, 0],
        [1, 2, 3],
        [3, 2, 1],
      ],
      [
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
      ],
      [
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 4],
      ],
    ]);
    expect(l.mask.toArraySync()).toEqual([
      [false, true, true],
      [false, false, false],
      [false, false, true],
    ]);
    const back = fromPadded(r.padded, j.lengths);
    expect(back.values.toArraySync()).toEqual(j.values.toArraySync());
    expect(back.offsets.toArraySync()).toEqual([0, 2, 2, 3]);
    expect(j.toList().map((t) => t.toArraySync())).toEqual(rows);
    expect(j.unpad(r.padded).values.toArraySync()).toEqual(j.values.toArraySync());
    const roundTrip = jit((x: JaggedTensor) => x.unpad(x.mul(2).toPadded({ maxLength: 4 }).padded).values);
    expect(roundTrip(j).toArraySync()).toEqual(j.mul(2).values.toArraySync());
    expect(() => j.toPadded({ maxLength: 1 })).toThrow(
      "jagged.toPadded: maxLength 1 is smaller than the longest row (2)",
    );
  });

  it("combines with per-row tensors, jagged tensors of the same rows, and numbers", () => {
    const perRow = tensor(
      [
        [10, 10, 10],
        [20, 20, 20],
        [30, 30, 30],
      ],
      { batchDim: 1 },
    );
    expect(j.add(perRow).values.toArraySync()).toEqual([
      [11, 12, 13],
      [13, 12, 11],
      [30, 30, 34],
    ]);
    expect(j.mul(j).sub(1).values.toArraySync()).toEqual([
      [0, 3, 8],
      [8, 3, 0],
      [-1, -1, 15],
    ]);
    expect(j.sub(tensor([1, 1, 1])).values.toArraySync()).toEqual([
      [0, 1, 2],
      [2, 1, 0],
      [-1, -1, 3],
    ]);
    expect(() => j.add(toJagged(rows))).toThrow(ShapeError);
    expect(() => new JaggedTensor(j.values, tensor([0, 5], { batchDim: 1, dtype: "int32" }))).toThrow(
      "jagged: offsets (2;) end at 5, but there are 3 packed values (values (3; 3)); offsets must start at 0, never decrease and end at 3",
    );
  });
});

describe("jit over jagged inputs", () => {
  /** Centre each cloud on its mean, divide by its largest norm, and pad to 8 points. */
  const normalise = (x: JaggedTensor): [Tensor, Tensor, Tensor] => {
    const c = x.sub(x.mean());
    const r = c.mul(c).values.sum(-1).sqrt();
    const scale = new JaggedTensor(r, x.offsets).max();
    const { padded, mask } = c.div(scale.unsqueeze(-1)).toPadded({ maxLength: 8 });
    return [padded, mask, x.lengths];
  };

  it("traces once for 20 random length profiles and matches a host computation", () => {
    const f = jit(normalise);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 12 }),
        fc.integer(),
        (lengths, seed) => {
          const rows = rowsOf(lengths, seed);
          const [padded, mask, lens] = f(toJagged(rows));
          expect(lens.toArraySync()).toEqual(lengths);
          const want: number[] = [];
          const wantMask: boolean[] = [];
          for (const rw of rows) {
            const m = [0, 1, 2].map((k) => rw.reduce((s, p) => s + Math.fround(p[k]!), 0) / rw.length);
            const cent = rw.map((p) => p.map((v, k) => Math.fround(v) - m[k]!));
            const mx = Math.max(...cent.map((p) => Math.hypot(...p)));
            for (let i = 0; i < 8; i++) {
              wantMask.push(i < rw.length);
              want.push(...(i < rw.length ? cent[i]!.map((v) => v / mx) : [0, 0, 0]));
            }
          }
          expect(closeEnough(padded.dataSync(), want, 1e-5)).toBeUndefined();
          expect(Array.from(mask.dataSync(), (v) => v === 1)).toEqual(wantMask);
        },
      ),
      { numRuns: 20, seed: FC_SEED },
    );
    expect(f.stats.traces).toBe(1);
    expect(f.stats.cacheHits).toBe(19);
  });

  it("centres each packed cloud by its mean and pads it with no intermediate packed buffer", () => {
    const f = jit((x: JaggedTensor) => x.sub(x.mean()).toPadded({ maxLength: 4 }).padded);
    f(toJagged(rowsOf([3, 1, 4], 1)));
    const schedule = f.dump({ after: "fuse" });
    expect(schedule).toMatch(/: 2 kernels/);
    // Kernel outputs: the per-row means (rows; 3) and the padded result; nothing packed (T; 3).
    expect(schedule).not.toMatch(/-> %t\d+: f32\[t0; 3\]$/m);
    expect(schedule).toMatch(/segment reduce.*\n.*segment pad/);
  });

  it("pads to each call's longest row inside jit (no maxLength), tracing once", () => {
    // Left padding with -1, then an elementwise epilogue that also reads the mask.
    const f = jit((x: JaggedTensor) => {
      const { padded, mask } = x.toPadded({ paddingSide: "left", paddingValue: -1 });
      return [padded.mul(2).add(mask.cast("float32")), mask];
    });
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 6 }), { minLength: 1, maxLength: 5 }),
        fc.integer(),
        (lengths, seed) => {
          const rows = rowsOf(lengths, seed);
          const [out, mask] = f(toJagged(rows));
          const maxN = Math.max(...lengths);
          expect(out!.toString()).toBe(`(${lengths.length},${maxN}; 3)`);
          const want: number[] = [];
          const wantMask: boolean[] = [];
          for (const rw of rows) {
            for (let i = 0; i < maxN; i++) {
              const k = i - (maxN - rw.length);
              wantMask.push(k >= 0);
              want.push(...(k >= 0 ? rw[k]!.map((v) => Math.fround(v) * 2 + 1) : [-2, -2, -2]));
            }
          }
          expect(closeEnough(out!.dataSync(), want, 1e-6)).toBeUndefined();
          expect(Array.from(mask!.dataSync(), (v) => v === 1)).toEqual(wantMask);
        },
      ),
      { numRuns: 20, seed: FC_SEED },
    );
    expect(f.stats.traces).toBe(1);
    expect(f.stats.cacheHits).toBe(19);
    // The epilogue (mul, add, cast of the mask) runs inside the pad kernel: one kernel per output.
    expect(f.dump({ after: "fuse" })).toMatch(/: 2 kernels/);
    expect(f.dump({ after: "fuse" })).not.toMatch(/segment pad.*reads %t/);
  });

  it("fuses the elementwise consumers of a padded tensor into the pad kernel, per-row and unbatched operands included", () => {
    // Per-row operands of the pad kernel must be rows of the same jagged tensor (here its row
    // lengths): a separate per-row tensor could broadcast against a single row.
    const f = jit((x: JaggedTensor) => {
      const c = x.sub(x.mean());
      const scale = x.lengths.cast("float32").batchUnsqueeze(1);
      return c
        .toPadded({ maxLength: 5 })
        .padded.mul(scale)
        .add(tensor([1, 2, 3]));
    });
    const rows = rowsOf([3, 1, 4], 3);
    const out = f(toJagged(rows));
    const schedule = f.dump({ after: "fuse" });
    // Means, lengths, their cast (the source of the (B, 1) view), then one pad kernel that
    // reads the per-row view and the unbatched constant and writes the result.
    expect(schedule).toMatch(/: 4 kernels/);
    expect(schedule).toMatch(/= view %t\d+ : f32\[r0-1,1; \]\n.*segment pad.* -> %t\d+: f32\[r0-1,5; 3\]$/);
    expect(schedule.match(/f32\[r0-1,5; 3\]/g)).toHaveLength(1);
    const want: number[] = [];
    rows.forEach((rw, b) => {
      const m = [0, 1, 2].map((k) => rw.reduce((s, p) => s + Math.fround(p[k]!), 0) / rw.length);
      for (let i = 0; i < 5; i++)
        want.push(
          ...[0, 1, 2].map((k) => (i < rw.length ? Math.fround(rw[i]![k]!) - m[k]! : 0) * rows[b]!.length + k + 1),
        );
    });
    expect(closeEnough(out.dataSync(), want, 1e-6)).toBeUndefined();
  });

  it("a padded tensor that is also an output is read from its buffer by its consumers", () => {
    const f = jit((x: JaggedTensor) => {
      const { padded, mask } = x.toPadded({ maxLength: 3, paddingValue: 5 });
      return [padded, padded.mul(2).add(mask.cast("float32"))];
    });
    const [p, q] = f(
      toJagged([
        [[1, 2, 3]],
        [
          [1, 1, 1],
          [2, 2, 2],
        ],
      ]),
    );
    expect(p!.toArraySync()).toEqual([
      [
        [1, 2, 3],
        [5, 5, 5],
        [5, 5, 5],
      ],
      [
        [1, 1, 1],
        [2, 2, 2],
        [5, 5, 5],
      ],
    ]);
    expect(q!.toArraySync()).toEqual([
      [
        [3, 5, 7],
        [10, 10, 10],
        [10, 10, 10],
      ],
      [
        [3, 3, 3],
        [5, 5, 5],
        [10, 10, 10],
      ],
    ]);
  });

  it("gives a padded tensor read by a non-elementwise consumer its own buffer", () => {
    const f = jit((x: JaggedTensor) => x.toPadded({ maxLength: 3 }).padded.sum([0]));
    const out = f(
      toJagged([
        [[1, 2, 3]],
        [
          [1, 1, 1],
          [2, 2, 2],
        ],
      ]),
    );
    expect(out.toArraySync()).toEqual(
      [
        [
          [1, 2, 3],
          [0, 0, 0],
          [0, 0, 0],
        ],
        [
          [1, 1, 1],
          [2, 2, 2],
          [0, 0, 0],
        ],
      ].map((r) => r.map((p) => p[0]! + p[1]! + p[2]!)),
    );
  });
});
