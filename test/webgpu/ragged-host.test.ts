/**
 * The ragged helpers (Kaolin's layouts, stack/cat/padSequence/unpadSequence,
 * jagged/fromPadded) on WebGPU, where the host cannot read tensors
 * synchronously: each runs the same code on the JS backend (host copies) and on
 * WebGPU (IR ops on the device), and the results must be equal exactly (they
 * are pure copies). The device path is proven by the backend's own calls: no
 * read-back during the helper, and block copies or kernel dispatches after it.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { DType, TypedArray } from "../../ir/dtype.js";
import { registerBackend } from "../../src/backend.js";
import {
  BackendError,
  counters,
  fromPadded,
  fromTypedArray,
  getBackend,
  jagged,
  setBackend,
  ShapeError,
  tensor,
  type Tensor,
} from "../../src/index.js";
import {
  cat,
  getFirstIdx,
  listToPacked,
  listToPadded,
  packedToList,
  packedToPadded,
  paddedToList,
  paddedToPacked,
  padSequence,
  stack,
  tileToPacked,
  unpadSequence,
} from "../../src/ragged/index.js";
import { rng } from "../helpers/random-graph.js";
import { describeWebGPU, probeWebGPUForFile } from "../helpers/webgpu.js";

const probe = await probeWebGPUForFile();

const CTOR = { float32: Float32Array, int32: Int32Array, uint32: Uint32Array, bool: Uint8Array } as const;
type GpuDType = keyof typeof CTOR;
const prod = (s: readonly number[]) => s.reduce((a, b) => a * b, 1);

/** Distinct values per tensor (tag) and position, exact in every dtype here. */
function values(dtype: GpuDType, n: number, tag: number): TypedArray {
  const r = rng(tag * 7919 + n);
  const out = new CTOR[dtype](n);
  for (let i = 0; i < n; i++)
    out[i] = dtype === "bool" ? (r() < 0.5 ? 1 : 0) : dtype === "float32" ? tag * 1000 + i + 0.25 : tag * 1000 + i;
  return out;
}

/** A tensor of `shape` split at `batchDim`, on the current backend. */
function make(dtype: GpuDType, shape: readonly number[], batchDim: number, tag: number): Tensor {
  return fromTypedArray(values(dtype, prod(shape), tag), shape, { batchDim, dtype: dtype as DType });
}

interface Result {
  readonly shape: readonly number[];
  readonly batchDim: number;
  readonly dtype: DType;
  readonly data: number[];
}

async function read(t: Tensor): Promise<Result> {
  return { shape: t.shape, batchDim: t.batchDim, dtype: t.dtype, data: Array.from(await t.data()) };
}

/** Runs `f` with the JS backend current (host data while WebGPU is selected). */
function onJs<T>(f: () => T): T {
  const prev = getBackend().name;
  setBackend("js");
  try {
    return f();
  } finally {
    setBackend(prev);
  }
}

/** Object.is equality, so -0/NaN would count (none are expected: these are copies). */
function expectSame(got: readonly Result[], want: readonly Result[], what: string): void {
  expect(got.length, what).toBe(want.length);
  got.forEach((g, i) => {
    const w = want[i]!;
    expect([what, i, g.shape, g.batchDim, g.dtype]).toEqual([what, i, w.shape, w.batchDim, w.dtype]);
    const bad = g.data.findIndex((v, k) => !Object.is(v, w.data[k]));
    expect([what, i, g.data.length, bad]).toEqual([what, i, w.data.length, -1]);
  });
}

describeWebGPU(probe, "ragged helpers on WebGPU against the JS host path", (gpu) => {
  // Every backend call the device path could make, counted; reads must not happen inside a helper.
  const calls = { copies: 0, reads: 0 };
  const copy = gpu.copy.bind(gpu);
  const readBack = gpu.read.bind(gpu);
  beforeAll(() => {
    registerBackend(gpu);
    gpu.copy = (dst, sources) => {
      calls.copies++;
      copy(dst, sources);
    };
    gpu.read = (buf) => {
      calls.reads++;
      return readBack(buf);
    };
  });
  afterAll(() => {
    gpu.copy = copy;
    gpu.read = readBack;
    setBackend("js");
  });

  /**
   * Runs `helper` on the JS backend, then on WebGPU (inputs built by the same
   * code, so uploaded there), and compares every output. `device` says what the
   * WebGPU run must show: block copies, kernel dispatches, either, or nothing
   * in particular (`free`: empty results and views of the inputs need no work).
   */
  async function check(
    what: string,
    helper: () => Tensor[],
    device: "copies" | "dispatches" | "any" | "free" = "copies",
  ): Promise<void> {
    setBackend("js");
    const want = await Promise.all(helper().map(read));
    setBackend("webgpu");
    try {
      const before = { ...calls, dispatches: counters.dispatches };
      const outs = helper();
      expect([what, "reads during the helper", calls.reads - before.reads]).toEqual([
        what,
        "reads during the helper",
        0,
      ]);
      const got = await Promise.all(outs.map(read));
      for (const t of outs)
        expect(t._src.kind === "buffer" && t._src.backend === gpu, `${what}: ${t.toString()} lives on WebGPU`).toBe(
          true,
        );
      const copies = calls.copies - before.copies;
      const dispatches = counters.dispatches - before.dispatches;
      if (device === "copies") expect(copies, `${what}: block copies on the device`).toBeGreaterThan(0);
      else if (device === "dispatches") expect(dispatches, `${what}: kernels on the device`).toBeGreaterThan(0);
      else if (device === "any") expect(copies + dispatches, `${what}: work on the device`).toBeGreaterThan(0);
      expectSame(got, want, what);
    } finally {
      setBackend("js");
    }
  }

  /** Point clouds (N_i, C) with empty ones and every batch/base split Kaolin may be handed. */
  const CLOUDS: readonly { sizes: number[]; c: number }[] = [
    { sizes: [3, 0, 5, 1], c: 2 },
    { sizes: [7, 2], c: 3 },
    { sizes: [2, 4, 4, 0, 6], c: 1 },
  ];
  const clouds = (dtype: GpuDType, sizes: readonly number[], c: number): Tensor[] =>
    sizes.map((n, i) => make(dtype, [n, c], i % 3, i + 1));

  for (const dtype of ["float32", "int32"] as const) {
    for (const { sizes, c } of CLOUDS) {
      const label = `${dtype} clouds ${sizes.join(",")} x ${c}`;
      const numel = sizes;
      // shapePerTensor as host data (a JS-backend tensor) whichever backend is current.
      const spt = () =>
        onJs(() =>
          tensor(
            sizes.map((n) => [n]),
            { dtype: "int32" },
          ),
        );

      it(`${label}: list <-> packed`, async () => {
        await check(`${label} listToPacked`, () => listToPacked(clouds(dtype, sizes, c)));
        await check(`${label} packedToList`, () => {
          const [packed, s] = listToPacked(clouds(dtype, sizes, c));
          return packedToList(packed, s, getFirstIdx(numel));
        });
      });

      it(`${label}: list <-> padded, padding values and a larger maxShape`, async () => {
        for (const pad of [-1, 0, 2.5]) {
          await check(`${label} listToPadded ${pad}`, () => listToPadded(clouds(dtype, sizes, c), pad));
        }
        await check(`${label} listToPadded maxShape`, () =>
          listToPadded(clouds(dtype, sizes, c), 9, [Math.max(...sizes) + 2]),
        );
        await check(`${label} paddedToList`, () => {
          const [padded, s] = listToPadded(clouds(dtype, sizes, c), -1, [Math.max(...sizes) + 1]);
          return paddedToList(padded, s);
        });
      });

      it(`${label}: packed <-> padded, tileToPacked`, async () => {
        // Inputs made directly (not by another helper), in Kaolin's (; N, C) and (B; maxN, C) splits.
        const total = sizes.reduce((a, b) => a + b, 0);
        const maxN = Math.max(...sizes);
        await check(`${label} packedToPadded`, () => [
          packedToPadded(make(dtype, [total, c], 0, 1), spt(), getFirstIdx(numel), -3),
        ]);
        await check(`${label} paddedToPacked`, () => [
          paddedToPacked(make(dtype, [sizes.length, maxN, c], 1, 2), spt()),
        ]);
        await check(`${label} tileToPacked`, () => [tileToPacked(make(dtype, [sizes.length], 0, 3), numel)]);
      });
    }
  }

  it("bool and uint32 data, and items of rank 1 and 3 (shapePerTensor of width 0 and 2)", async () => {
    for (const dtype of ["bool", "uint32"] as const) {
      const list = () => [make(dtype, [2, 3, 2], 0, 1), make(dtype, [1, 4, 2], 1, 2), make(dtype, [0, 2, 2], 2, 3)];
      await check(`${dtype} rank 3 listToPadded`, () => listToPadded(list(), dtype === "bool" ? true : -1));
      await check(`${dtype} rank 3 listToPacked`, () => listToPacked(list()));
      await check(`${dtype} rank 3 padded round trip`, () => {
        const [padded, s] = listToPadded(list(), 1, [3, 5]);
        return [paddedToPacked(padded, s), ...paddedToList(padded, s)];
      });
      await check(`${dtype} rank 3 packed round trip`, () => {
        const [packed, s] = listToPacked(list());
        return [
          packedToPadded(packed, s, getFirstIdx(s.prod(1)), 0),
          ...packedToList(packed, s, getFirstIdx([6, 4, 0])),
        ];
      });
    }
    const vectors = () => [make("float32", [3], 0, 1), make("float32", [3], 1, 2)];
    await check("rank 1 listToPadded", () => listToPadded(vectors(), 0), "any");
    await check("rank 1 listToPacked", () => listToPacked(vectors()));
    await check("rank 1 padded round trip", () => {
      const [padded, s] = listToPadded(vectors(), 0);
      return [paddedToPacked(padded, s), ...paddedToList(padded, s)];
    });
  });

  it("a single item that only changes its batch/base split is a view of the input buffer (no copy)", async () => {
    setBackend("webgpu");
    try {
      const cloud = make("float32", [5, 3], 1, 1);
      const before = calls.copies;
      const [packed] = listToPacked([cloud]);
      expect(packed.toString()).toBe("(;5,3)");
      // A lazy `rebatch` view: realized, it is the input's buffer.
      expect(Array.from(await packed.data())).toEqual(Array.from(values("float32", 15, 1)));
      expect(
        packed._src.kind === "buffer" && cloud._src.kind === "buffer" && packed._src.buffer === cloud._src.buffer,
      ).toBe(true);
      expect(calls.copies).toBe(before);
    } finally {
      setBackend("js");
    }
  });

  it("a copy step with many sources is one submit", async () => {
    setBackend("webgpu");
    try {
      const parts = Array.from({ length: 40 }, (_, i) => make("float32", [i % 3, 2], 1, i + 1));
      const joined = cat(parts);
      const before = gpu.stats.copies;
      const got = Array.from(await joined.data());
      expect(gpu.stats.copies - before).toBe(1);
      expect(got).toEqual(parts.flatMap((_, i) => Array.from(values("float32", (i % 3) * 2, i + 1))));
    } finally {
      setBackend("js");
    }
  });

  it("stack and cat record batch_concat", async () => {
    for (const dtype of ["float32", "int32"] as const) {
      await check(`${dtype} stack`, () => [stack([make(dtype, [2, 3], 1, 1), make(dtype, [2, 3], 1, 2)], 1)]);
      await check(`${dtype} cat`, () => [
        cat([make(dtype, [2, 3], 1, 1), make(dtype, [4, 3], 1, 2), make(dtype, [0, 3], 1, 3)]),
      ]);
    }
    await check("mixed dtypes", () => [stack([make("int32", [2], 1, 1), make("float32", [2], 1, 2)])], "any");
  });

  it("padSequence: right and left, padding values, masks, every padDim; unpadSequence inverts it", async () => {
    const cases: { shapes: number[][]; base: number[]; padDim: number }[] = [
      { shapes: [[3], [1], [0], [4]], base: [2], padDim: 0 }, // segment_pad over packed rows
      {
        shapes: [
          [2, 3],
          [2, 1],
          [2, 4],
        ],
        base: [],
        padDim: 1,
      }, // the same with an outer dim
      {
        shapes: [
          [3, 2],
          [1, 2],
          [4, 2],
        ],
        base: [3],
        padDim: 0,
      }, // constant blocks along a leading dim
    ];
    for (const dtype of ["float32", "int32"] as const) {
      for (const { shapes, base, padDim } of cases) {
        for (const paddingSide of ["right", "left"] as const) {
          for (const paddingValue of [0, -7.5]) {
            const list = () => shapes.map((s, i) => make(dtype, [...s, ...base], s.length, i + 1));
            const label = `${dtype} ${shapes.map((s) => s.join("x")).join(",")} padDim ${padDim} ${paddingSide} ${paddingValue}`;
            await check(
              label,
              () => {
                const { padded, mask } = padSequence(list(), { paddingValue, paddingSide, padDim, returnMask: true });
                return [padded, mask];
              },
              "any",
            );
            // The mask of padSequence is host data on WebGPU too, so the round trip works there.
            await check(
              `${label} unpad`,
              () => {
                const { padded, mask } = padSequence(list(), { paddingValue, paddingSide, padDim, returnMask: true });
                return unpadSequence(padded, mask, { padDim });
              },
              "any",
            );
          }
        }
      }
    }
  });

  it("jagged(list) and fromPadded build their values on the device", async () => {
    for (const dtype of ["float32", "int32"] as const) {
      await check(`${dtype} jagged`, () => {
        const j = jagged([make(dtype, [3, 2], 0, 1), make(dtype, [0, 2], 1, 2), make(dtype, [4, 2], 2, 3)]);
        return [j.values, j.offsets];
      });
      await check(
        `${dtype} fromPadded`,
        () => {
          const j = fromPadded(make(dtype, [3, 4, 2], 2, 1), [4, 0, 2]);
          return [j.values, j.offsets];
        },
        "dispatches",
      );
    }
  });

  it("edge cases: empty items, empty results, C = 0, one item, one row", async () => {
    const f = (shape: number[], batchDim: number, tag = 1) => make("float32", shape, batchDim, tag);
    const cases: [string, () => Tensor[]][] = [
      ["padSequence, all empty", () => [padSequence([f([0, 2], 1), f([0, 2], 1)])]],
      ["padSequence, all empty, leading padDim", () => [padSequence([f([0, 2], 2), f([0, 2], 2)])]],
      ["padSequence, one tensor", () => [padSequence([f([3, 2], 1)], { paddingValue: 5 })]],
      ["listToPadded, all empty", () => listToPadded([f([0, 2], 0), f([0, 2], 1)], 3)],
      ["listToPadded, all empty, larger maxShape", () => listToPadded([f([0, 2], 0), f([0, 2], 1)], 3, [2])],
      ["listToPacked, all empty", () => listToPacked([f([0, 2], 0), f([0, 2], 1)])],
      ["listToPacked, C = 0", () => listToPacked([f([2, 0], 0), f([3, 0], 1)])],
      ["listToPadded, C = 0", () => listToPadded([f([2, 0], 0), f([3, 0], 1)], 1)],
      ["tileToPacked, no rows", () => [tileToPacked(f([3], 0), [0, 0, 0])]],
      ["tileToPacked, long rows", () => [tileToPacked(f([4], 1), [1, 9, 16, 17])]],
      ["cat, one tensor", () => [cat([f([2, 2], 1)])]],
      [
        "jagged, all empty",
        () => {
          const j = jagged([f([0, 2], 0), f([0, 2], 1)]);
          return [j.values, j.offsets];
        },
      ],
      [
        "fromPadded, no base, empty rows",
        () => {
          const j = fromPadded(f([3, 3], 2), [1, 0, 3]);
          return [j.values, j.offsets];
        },
      ],
      [
        "unpadSequence, empty rows, left",
        () => {
          const { padded, mask } = padSequence([f([0, 2], 1), f([2, 2], 1)], { returnMask: true, paddingSide: "left" });
          return unpadSequence(padded, mask);
        },
      ],
      [
        "packedToList, one-row items",
        () => {
          const [packed, s] = listToPacked([f([1, 3], 0), f([1, 3], 1, 2)]);
          return packedToList(packed, s, getFirstIdx([1, 1]));
        },
      ],
    ];
    for (const [what, helper] of cases) await check(what, helper, "free");
  });

  it("metadata must be host data: clear errors for device tensors; lazy inputs stay lazy", async () => {
    setBackend("webgpu");
    try {
      const padded = make("float32", [2, 3, 2], 2, 1);
      const deviceLengths = tensor([1, 2], { dtype: "int32" });
      expect(() => fromPadded(padded, deviceLengths)).toThrow(BackendError);
      expect(() => fromPadded(padded, deviceLengths)).toThrow(
        "fromPadded: lengths (;2) lives on the webgpu backend, which the host cannot read synchronously; lengths must be host data",
      );
      const [packed, s] = listToPacked([make("float32", [2, 3], 0, 1), make("float32", [1, 3], 0, 2)]);
      expect(() => packedToList(packed, s, tensor([0, 2, 3], { dtype: "int32" }))).toThrow(
        "packedToList: firstIdx (;3) lives on the webgpu backend",
      );
      // Kaolin's error texts hold on WebGPU too.
      expect(() => listToPacked([make("float32", [2, 3], 0, 1), make("float32", [2, 2], 0, 2)])).toThrow(
        new ShapeError("listToPacked: Expected all tensor to have last dimension 3 but got 2 at index 1"),
      );
      // A lazy input whose dims move between batch and base (rebatch views) stays lazy:
      // its kernels compile when the result is read.
      const lazyInput = (tag: number) => make("float32", [4, 3], 0, tag).mul(2).exp().log().add(0.5);
      const want = Array.from(await lazyInput(2).data());
      const [packedLazy] = listToPacked([lazyInput(2), lazyInput(2)]);
      expect(packedLazy._src.kind).toBe("lazy");
      expect(Array.from(await packedLazy.data())).toEqual([...want, ...want]);
    } finally {
      setBackend("js");
    }
  });
});
