/**
 * asin, acos, atan and atan2 on the JS backend: hand-known values, the NumPy
 * domain (NaN outside [-1, 1]), NaN propagation, Math.atan2's signed zeros and
 * infinities, eagerly, inside jit (fused kernels, exact and relaxed float32), in
 * the reference interpreter and after constant folding.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeGraph, Node } from "../../ir/graph.js";
import { interpret } from "../../ir/interpret.js";
import { parseGraph } from "../../ir/parse.js";
import { printGraph } from "../../ir/print.js";
import { acos, asin, DTypeError, jit, Quaternion, Rot, Scalar, tensor, type Tensor } from "../../src/index.js";
import { FC_SEED } from "../helpers/run.js";

const PI = Math.PI;
const f32 = Math.fround;

/** NaN to NaN, else |a - e| <= tol·max(1, |e|); with tol = 0, equal bits (a zero carries the expected sign). */
function expectValues(actual: ArrayLike<number>, expected: readonly number[], tol = 0): void {
  expect(actual.length).toBe(expected.length);
  expected.forEach((e, i) => {
    const a = actual[i]!;
    const ok = Number.isNaN(e)
      ? Number.isNaN(a)
      : tol === 0
        ? Object.is(a, e)
        : a === e || Math.abs(a - e) <= tol * Math.max(1, Math.abs(e));
    expect(ok, `element ${i}: got ${a}, expected ${e}`).toBe(true);
  });
}

const unaryX = [1, -1, 0, -0, 0.5, -0.5, 1.5, -1.5, NaN, Infinity, -Infinity, 1e-30];
// Quadrants, axes, signed zeros and infinities: (y, x) pairs.
const pairs: [number, number][] = [
  [1, 1],
  [1, -1],
  [-1, -1],
  [-1, 1],
  [0, 0],
  [-0, 0],
  [0, -0],
  [-0, -0],
  [0, -1],
  [-0, -1],
  [0, 1],
  [-0, 1],
  [1, 0],
  [-1, 0],
  [1, -0],
  [-1, -0],
  [Infinity, Infinity],
  [Infinity, -Infinity],
  [-Infinity, Infinity],
  [-Infinity, -Infinity],
  [1, Infinity],
  [-1, Infinity],
  [1, -Infinity],
  [-1, -Infinity],
  [Infinity, 3],
  [-Infinity, -3],
  [NaN, 1],
  [1, NaN],
  [NaN, NaN],
  [3, 4],
];
const ys = pairs.map(([y]) => y);
const xs = pairs.map(([, x]) => x);

describe("inverse trigonometric ops", () => {
  it("give the hand-known values eagerly", () => {
    expect(tensor([1]).asin().itemSync()).toBe(f32(PI / 2));
    expect(tensor([-1]).acos().itemSync()).toBe(f32(PI));
    expect(tensor([1]).atan().itemSync()).toBe(f32(PI / 4));
    expect(
      tensor([-0])
        .atan2(tensor([-1]))
        .itemSync(),
    ).toBe(f32(-PI));
    expect(
      Object.is(
        tensor([0])
          .atan2(tensor([0]))
          .itemSync(),
        0,
      ),
    ).toBe(true);
    expect(tensor([1.5]).asin().itemSync()).toBeNaN();
    expect(tensor([-1.5]).acos().itemSync()).toBeNaN();
    expect(tensor([NaN]).atan().itemSync()).toBeNaN();
    expectValues(
      tensor(unaryX).asin().dataSync(),
      unaryX.map((v) => f32(Math.asin(v))),
    );
    expectValues(
      tensor(unaryX).acos().dataSync(),
      unaryX.map((v) => f32(Math.acos(v))),
    );
    expectValues(
      tensor(unaryX).atan().dataSync(),
      unaryX.map((v) => f32(Math.atan(v))),
    );
    expectValues(
      tensor(ys).atan2(tensor(xs)).dataSync(),
      pairs.map(([y, x]) => f32(Math.atan2(y, x))),
    );
  });

  it("promote integers to float32, take numbers, and broadcast", () => {
    const i = tensor([0, 1, -1], { dtype: "int32" });
    expect(i.asin().dtype).toBe("float32");
    expectValues(i.acos().dataSync(), [f32(PI / 2), 0, f32(PI)]);
    expect(i.atan2(tensor([1, 1, 1], { dtype: "int32" })).dtype).toBe("float32");
    expectValues(i.atan2(-1).dataSync(), [f32(PI), f32((3 * PI) / 4), f32((-3 * PI) / 4)]);
    expect(tensor([1, 2], { dtype: "float64" }).atan2(1).dtype).toBe("float64");
    expect(tensor([1], { dtype: "float64" }).asin().itemSync()).toBe(PI / 2);
    // (2;) against (;3): batch and base broadcast separately.
    const y = tensor([1, -1], { batchDim: 1 });
    const x = tensor([1, 0, -1]);
    expect(y.atan2(x).toString()).toBe("(2; 3)");
    expectValues(
      y.atan2(x).dataSync(),
      [1, -1].flatMap((a) => [1, 0, -1].map((b) => f32(Math.atan2(a, b)))),
    );
  });

  it("refuse integer and bool operands in the IR", () => {
    const a = Node.make("input", [], { index: 0 }, { dtype: "int32", batch: [], base: [3] });
    expect(() => Node.make("asin", [a])).toThrow(DTypeError);
    expect(() => Node.make("atan2", [a, a])).toThrow("atan2: x (;3) of dtype int32: needs a float dtype");
    const b = Node.make("input", [], { index: 0 }, { dtype: "bool", batch: [], base: [3] });
    expect(() => Node.make("atan2", [b, b])).toThrow(DTypeError);
  });

  it("run in fused jit kernels, exact and relaxed float32, as Math rounded per op", () => {
    const fn = (y: Tensor, x: Tensor): Tensor[] => [
      y.atan2(x),
      y.asin().add(x.acos()),
      y.mul(x).atan().neg(),
      y.tanh().asin().atan2(x.sin()),
    ];
    const ref = (y: number, x: number): number[] => [
      f32(Math.atan2(y, x)),
      f32(f32(Math.asin(y)) + f32(Math.acos(x))),
      -f32(Math.atan(f32(y * x))),
      f32(Math.atan2(f32(Math.asin(f32(Math.tanh(y)))), f32(Math.sin(x)))),
    ];
    const exact = jit(fn, { float32: "exact" });
    const relaxed = jit(fn);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.float({ min: -2, max: 2 }), fc.float({ min: -2, max: 2 })), {
          minLength: 1,
          maxLength: 20,
        }),
        (vals) => {
          const y = tensor(
            vals.map(([a]) => a),
            { batchDim: 1 },
          );
          const x = tensor(
            vals.map(([, b]) => b),
            { batchDim: 1 },
          );
          const want = vals.map(([a, b]) => ref(a, b));
          exact(y, x).forEach((t, i) =>
            expectValues(
              t.dataSync(),
              want.map((w) => w[i]!),
            ),
          );
          relaxed(y, x).forEach((t, i) =>
            expectValues(
              t.dataSync(),
              want.map((w) => w[i]!),
              1e-6,
            ),
          );
        },
      ),
      { numRuns: 60, seed: FC_SEED },
    );
    expect(exact.stats.traces).toBe(1);
    expect(exact.dump({ after: "fuse" })).toMatch(/: 1 kernels/);
  });

  it("are defined by the reference interpreter, print, parse and fold", () => {
    const y = Node.make("input", [], { index: 0 }, { dtype: "float32", batch: ["b0"], base: [] });
    const x = Node.make("input", [], { index: 1 }, { dtype: "float32", batch: ["b0"], base: [] });
    const g = makeGraph(
      "trig",
      [y, x],
      [Node.make("atan2", [y, x]), Node.make("asin", [y]), Node.make("acos", [x]), Node.make("atan", [x])],
    );
    const text = printGraph(g);
    expect(text).toMatch(/= atan2 %arg0, %arg1 : f32\[b0; \]/);
    expect(printGraph(parseGraph(text))).toBe(text);
    const type = { dtype: "float32" as const, batch: [ys.length], base: [] };
    const [t2, ts, tc, tt] = interpret(g, [
      { type, data: Float32Array.from(ys) },
      { type, data: Float32Array.from(xs) },
    ]);
    expectValues(
      t2!.data,
      pairs.map(([a, b]) => f32(Math.atan2(a, b))),
    );
    expectValues(
      ts!.data,
      ys.map((v) => f32(Math.asin(v))),
    );
    expectValues(
      tc!.data,
      xs.map((v) => f32(Math.acos(v))),
    );
    expectValues(
      tt!.data,
      xs.map((v) => f32(Math.atan(v))),
    );
    // Constants fold through the same definition.
    const k = jit((t: Tensor) => t.add(Scalar.fill(-0.5).asin().t.mul(Scalar.fill(1).atan2(-1).t)));
    expect(k(tensor([0])).itemSync()).toBe(f32(f32(Math.asin(-0.5)) * f32((3 * PI) / 4)));
    expect(k.dump()).toMatch(/asin/);
    expect(k.dump({ after: "fold" })).not.toMatch(/asin|atan2/);
  });

  it("back Scalar and the typed helpers (no polynomial error left)", () => {
    const s = new Scalar(tensor([-1, 0, 0.5, 1], { batchDim: 1 }));
    expectValues(
      s.asin().t.dataSync(),
      [-1, 0, 0.5, 1].map((v) => f32(Math.asin(v))),
    );
    expectValues(
      s.acos().t.dataSync(),
      [-1, 0, 0.5, 1].map((v) => f32(Math.acos(v))),
    );
    expectValues(
      s.atan().t.dataSync(),
      [-1, 0, 0.5, 1].map((v) => f32(Math.atan(v))),
    );
    expectValues(
      s.atan2(-1).t.dataSync(),
      [-1, 0, 0.5, 1].map((v) => f32(Math.atan2(v, -1))),
    );
    expectValues(asin(tensor([0.5])).dataSync(), [f32(Math.asin(0.5))]);
    expectValues(acos(tensor([0.5])).dataSync(), [f32(Math.acos(0.5))]);
    // asin(0) is exactly 0 (π/2 - acos(0) from the polynomial was not).
    expect(
      Rot.fill(0.1, 0.2, 0.3)
        .gdist(Rot.fill(0.1, 0.2, 0.3))
        .itemSync(),
    ).toBe(0);
    const q = Quaternion.fill(1, 0, 0, 0);
    expect(q.dist(Quaternion.fill(Math.cos(0.1), Math.sin(0.1), 0, 0)).itemSync()).toBeCloseTo(0.2, 6);
  });
});
