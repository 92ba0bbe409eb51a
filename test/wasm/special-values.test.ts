/**
 * Special values on the WebAssembly backend: the grid of ../helpers/special-values.ts
 * (every elementwise op on NaN, ±Inf, ±0, ±1, ±tiny, ±huge and integer extremes)
 * eagerly and inside jit, operands from buffers and as constants, plus the algebraic
 * patterns (x*0, x-x, x+0, ...). NaN, ±Inf and the sign of zero must match exactly;
 * finite results of the float32 transcendental ops (and pow) within the vector math's
 * bound (2 ulp, codegen/wasm/math.ts), everything else exactly.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromTypedArray, getBackend, jit, setBackend, tensor, where, type Tensor } from "../../src/index.js";
import type { TypedArray } from "../../ir/dtype.js";
import {
  BINARY_CASES,
  GRIDS,
  PATTERNS,
  UNARY_CASES,
  expectedBinary,
  expectedUnary,
  expectedWithConstants,
  floatToInt,
  fmt,
  maxRef,
  minRef,
  mismatches,
  pairs,
  store,
  withConstants,
} from "../helpers/special-values.js";
import { initWasm } from "../../src/index.js";

const f32 = Math.fround;
type GridDType = keyof typeof GRIDS;
const DTYPES: readonly GridDType[] = ["float32", "int32", "uint32", "bool"];
const CTOR = { float32: Float32Array, int32: Int32Array, uint32: Uint32Array, bool: Uint8Array } as const;
const make = (v: readonly number[], d: GridDType): Tensor =>
  fromTypedArray(CTOR[d].from(v), [v.length], d === "bool" ? { dtype: "bool" } : {});
/** Relative tolerance for finite results of the ops marked "approx": 2 float32 ulps are at most 2.4e-7 relative. */
const RTOL = 2.5e-7;

function check(errors: string[]): void {
  expect(errors.slice(0, Number(process.env["SV_MAX"] ?? 25)), `${errors.length} mismatches`).toEqual([]);
}

type Fn<A extends Tensor[]> = (...a: A) => Tensor[];
const MODES = [
  {
    name: "eager",
    run: async <A extends Tensor[]>(f: Fn<A>, ...a: A): Promise<TypedArray[]> =>
      Promise.all(f(...a).map((t) => t.data())),
  },
  {
    name: "jit",
    run: async <A extends Tensor[]>(f: Fn<A>, ...a: A): Promise<TypedArray[]> =>
      Promise.all((await jit(f).callAsync(...a)).map((t) => t.data())),
  },
] as const;

describe("special values on WebAssembly", () => {
  beforeAll(async () => {
    await initWasm({ threads: 1 });
  });
  afterAll(() => setBackend("js"));
  it("runs on WebAssembly", () => expect(getBackend().name).toBe("wasm"));

  for (const { name, run } of MODES) {
    it(`unary ops on every grid (${name})`, async () => {
      const errors: string[] = [];
      for (const d of DTYPES) {
        const g = GRIDS[d];
        const outs = await run((x: Tensor) => UNARY_CASES.map((c) => c.apply(x)), make(g, d));
        UNARY_CASES.forEach((c, k) => {
          const got = outs[k]!;
          // Huge arguments of sin, cos and tan are reduced exactly (the host's float64 Math).
          const want = g.map((x) => expectedUnary(c, x, d));
          errors.push(...mismatches(`${c.name}/${d}`, got, want, (i) => `(${fmt(g[i]!)})`, c.gpu === "approx", RTOL));
        });
      }
      check(errors);
    });

    it(`binary ops on operands from buffers (${name})`, async () => {
      const errors: string[] = [];
      for (const d of DTYPES) {
        const { a, b } = pairs(GRIDS[d]);
        const outs = await run(
          (x: Tensor, y: Tensor) => BINARY_CASES.map((c) => c.apply(x, y)),
          make(a, d),
          make(b, d),
        );
        BINARY_CASES.forEach((c, k) => {
          errors.push(
            ...mismatches(
              `${c.name}/${d}`,
              outs[k]!,
              a.map((x, i) => expectedBinary(c, x, b[i]!, d)),
              (i) => `(${fmt(a[i]!)}, ${fmt(b[i]!)})`,
              c.gpu === "approx",
              c.rtol ?? RTOL,
            ),
          );
        });
      }
      check(errors);
    });

    it(`binary ops with every grid value as a constant (${name})`, async () => {
      const errors: string[] = [];
      const combos = [
        { d: "float32", left: false },
        { d: "float32", left: true },
        { d: "int32", left: false },
        { d: "uint32", left: false },
      ] as const;
      for (const { d, left } of combos) {
        const g = GRIDS[d];
        const outs = await run((x: Tensor) => BINARY_CASES.map((c) => withConstants(c, x, g, left)), make(g, d));
        BINARY_CASES.forEach((c, k) => {
          errors.push(
            ...mismatches(
              `${c.name}/${d}${left ? " (constant left)" : ""}`,
              outs[k]!,
              expectedWithConstants(c, g, d, left),
              (i) => {
                const [x, v] = [g[i % g.length]!, g[Math.floor(i / g.length)]!];
                return left ? `(${fmt(v)}, ${fmt(x)})` : `(${fmt(x)}, ${fmt(v)})`;
              },
              c.gpu === "approx",
              c.rtol ?? RTOL,
            ),
          );
        });
      }
      check(errors);
    });

    it(`where, clip and casts (${name})`, async () => {
      const g = GRIDS.float32;
      const { a, b } = pairs(g);
      const cond = a.map((_, i) => (i % 3 === 0 ? 1 : 0));
      const lo = [NaN, -Infinity, -1, -0, 0, 1].map(f32);
      const hi = [NaN, Infinity, 1, 0, -0, -1].map(f32);
      const h = a.map((_, i) => hi[i % hi.length]!);
      const outs = await run(
        (x: Tensor, y: Tensor, c: Tensor, gx: Tensor, ht: Tensor) => [
          where(c, x, y),
          x.clip(y, ht),
          gx.cast("int32"),
          gx.cast("uint32"),
          gx.cast("bool"),
          ...lo.map((lv, i) => gx.clip(lv, hi[i]!)),
        ],
        make(a, "float32"),
        make(b, "float32"),
        make(cond, "bool"),
        make(g, "float32"),
        make(h, "float32"),
      );
      const errors: string[] = [];
      errors.push(
        ...mismatches(
          "where",
          outs[0]!,
          a.map((x, i) => (cond[i] ? x : b[i]!)),
          (i) => `(${cond[i]}, ${fmt(a[i]!)}, ${fmt(b[i]!)})`,
        ),
      );
      errors.push(
        ...mismatches(
          "clip",
          outs[1]!,
          a.map((x, i) => minRef(maxRef(x, b[i]!), h[i]!)),
          (i) => `(${fmt(a[i]!)}, ${fmt(b[i]!)}, ${fmt(h[i]!)})`,
        ),
      );
      errors.push(
        ...mismatches(
          "cast int32",
          outs[2]!,
          g.map((x) => floatToInt(x, "int32")),
          (i) => fmt(g[i]!),
        ),
      );
      errors.push(
        ...mismatches(
          "cast uint32",
          outs[3]!,
          g.map((x) => floatToInt(x, "uint32")),
          (i) => fmt(g[i]!),
        ),
      );
      errors.push(
        ...mismatches(
          "cast bool",
          outs[4]!,
          g.map((x) => (x !== 0 ? 1 : 0)),
          (i) => fmt(g[i]!),
        ),
      );
      lo.forEach((lv, k) => {
        errors.push(
          ...mismatches(
            `clip(·, ${fmt(lv)}, ${fmt(hi[k]!)})`,
            outs[5 + k]!,
            g.map((x) => minRef(maxRef(x, lv), hi[k]!)),
            (i) => `(${fmt(g[i]!)})`,
          ),
        );
      });
      for (const d of ["int32", "uint32", "bool"] as const) {
        const gi = GRIDS[d];
        const targets = (["float32", "int32", "uint32", "bool"] as const).filter((t) => t !== d);
        const co = await run((x: Tensor) => targets.map((t) => x.cast(t)), make(gi, d));
        targets.forEach((t, k) =>
          errors.push(
            ...mismatches(
              `cast ${d} -> ${t}`,
              co[k]!,
              gi.map((x) => store(x, t)),
              (i) => fmt(gi[i]!),
            ),
          ),
        );
      }
      check(errors);
    });

    it(`algebraic patterns keep NaN, ±Inf and signed zeros (${name})`, async () => {
      const g = GRIDS.float32;
      const outs = await run((x: Tensor) => PATTERNS.map((p) => p.f(x)), make(g, "float32"));
      // WebAssembly computes float32 per op: every intermediate rounds.
      check(
        PATTERNS.flatMap((p, k) =>
          mismatches(
            p.name,
            outs[k]!,
            g.map((a) => f32(p.ref(a, f32))),
            (i) => `(${fmt(g[i]!)})`,
            p.approx === true,
            RTOL,
          ),
        ),
      );
    });
  }

  it("the issue's repros: div by a zero constant, mod by ±Inf, pow(-0, -1), int32 pow, x*0 and x-x", async () => {
    const arr = async (t: Tensor): Promise<number[]> => Array.from(await t.data());
    expect(await arr(tensor([1, -1, 0]).div(0))).toEqual([Infinity, -Infinity, NaN]);
    expect(await arr(tensor([1, -1, 1, -1]).mod(tensor([Infinity, Infinity, -Infinity, -Infinity])))).toEqual([
      1,
      Infinity,
      -Infinity,
      -1,
    ]);
    expect(await arr(tensor([1, -1]).mod(Infinity))).toEqual([1, Infinity]);
    expect(Object.is((await arr(tensor([-0]).pow(-1)))[0], -Infinity)).toBe(true);
    expect(await arr(tensor([7], { dtype: "int32" }).pow(31))).toEqual([265001655]);
    const x = tensor([NaN, Infinity, -1]);
    expect(await arr(x.mul(0))).toEqual([NaN, NaN, -0]);
    expect(await arr(x.sub(x))).toEqual([NaN, NaN, 0]);
    expect(Object.is((await arr(tensor([-0]).add(0)))[0], 0)).toBe(true);
  });
});
