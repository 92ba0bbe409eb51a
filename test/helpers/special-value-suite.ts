/**
 * The special-value suite every non-JS backend runs (WebGPU, WebAssembly): the grid
 * of ./special-values.ts (every elementwise op on NaN, ±Inf, ±0, ±1, ±tiny, ±huge and
 * integer extremes) eagerly and inside jit, operands from buffers and as constants,
 * where/clip/casts, the algebraic patterns (x*0, x-x, x+0, ...) and the repros of the
 * special-values issue. NaN, ±Inf and the sign of zero must match exactly; finite
 * results of the ops marked "approx" within `rtol`. Call it inside a `describe` whose
 * `beforeAll` makes the backend current.
 */
import { expect, it } from "vitest";
import { fromTypedArray, jit, tensor, where, type Tensor } from "../../src/index.js";
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
} from "./special-values.js";

const f32 = Math.fround;
/** The grids' dtypes (float64 has its own grid and tests on JS). */
export type GridDType = keyof typeof GRIDS;
export const DTYPES: readonly GridDType[] = ["float32", "int32", "uint32", "bool"];
const CTOR = { float32: Float32Array, int32: Int32Array, uint32: Uint32Array, bool: Uint8Array } as const;
/** A `(n;)` tensor of a grid's values in dtype `d`. */
export const make = (v: readonly number[], d: GridDType): Tensor =>
  fromTypedArray(CTOR[d].from(v), [v.length], d === "bool" ? { dtype: "bool" } : {});

/** Fails with the first mismatches (`SV_MAX`, default 25) and their count. */
export function check(errors: string[]): void {
  expect(errors.slice(0, Number(process.env["SV_MAX"] ?? 25)), `${errors.length} mismatches`).toEqual([]);
}

/** One (dtype, side) of the "constants" test: the grid's values as constants on the left or right. */
export interface ConstantCombo {
  readonly d: "float32" | "int32" | "uint32";
  readonly left: boolean;
}
const ALL_COMBOS: readonly ConstantCombo[] = [
  { d: "float32", left: false },
  { d: "float32", left: true },
  { d: "int32", left: false },
  { d: "uint32", left: false },
];

export interface SpecialValueSuiteOptions {
  /** Relative tolerance for finite results of the ops marked "approx". */
  readonly rtol: number;
  /** Past an op's `gpuBound`, check only the range of sin, cos and tan (a device without exact reduction). */
  readonly rangeOnlyPastBound: boolean;
  /** The (dtype, side) combinations of the constants test per mode (default: all four). */
  readonly constantCombos?: (mode: "eager" | "jit") => readonly ConstantCombo[] | undefined;
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

/**
 * where, clip and the float32 -> int32/uint32/bool casts on the float32 grid: the inputs,
 * the function of them, and the mismatches of its outputs (read as arrays) against the
 * rules of special-values.ts. The JS test and every backend's suite run this one grid.
 */
export function whereClipCastGrid(): {
  readonly inputs: [Tensor, Tensor, Tensor, Tensor, Tensor];
  readonly fn: (x: Tensor, y: Tensor, c: Tensor, gx: Tensor, ht: Tensor) => Tensor[];
  readonly errors: (outs: readonly ArrayLike<number>[]) => string[];
} {
  const g = GRIDS.float32;
  const { a, b } = pairs(g);
  const cond = a.map((_, i) => (i % 3 === 0 ? 1 : 0));
  const lo = [NaN, -Infinity, -1, -0, 0, 1].map(f32);
  const hi = [NaN, Infinity, 1, 0, -0, -1].map(f32);
  const h = a.map((_, i) => hi[i % hi.length]!);
  const at = (i: number): string => fmt(g[i]!);
  return {
    inputs: [make(a, "float32"), make(b, "float32"), make(cond, "bool"), make(g, "float32"), make(h, "float32")],
    fn: (x, y, c, gx, ht) => [
      where(c, x, y),
      x.clip(y, ht),
      gx.cast("int32"),
      gx.cast("uint32"),
      gx.cast("bool"),
      ...lo.map((lv, i) => gx.clip(lv, hi[i]!)),
    ],
    errors: (outs) => [
      ...mismatches(
        "where",
        outs[0]!,
        a.map((x, i) => (cond[i] ? x : b[i]!)),
        (i) => `(${cond[i]}, ${fmt(a[i]!)}, ${fmt(b[i]!)})`,
      ),
      ...mismatches(
        "clip",
        outs[1]!,
        a.map((x, i) => minRef(maxRef(x, b[i]!), h[i]!)),
        (i) => `(${fmt(a[i]!)}, ${fmt(b[i]!)}, ${fmt(h[i]!)})`,
      ),
      ...mismatches(
        "cast int32",
        outs[2]!,
        g.map((x) => floatToInt(x, "int32")),
        at,
      ),
      ...mismatches(
        "cast uint32",
        outs[3]!,
        g.map((x) => floatToInt(x, "uint32")),
        at,
      ),
      ...mismatches(
        "cast bool",
        outs[4]!,
        g.map((x) => (x !== 0 ? 1 : 0)),
        at,
      ),
      ...lo.flatMap((lv, k) =>
        mismatches(
          `clip(·, ${fmt(lv)}, ${fmt(hi[k]!)})`,
          outs[5 + k]!,
          g.map((x) => minRef(maxRef(x, lv), hi[k]!)),
          (i) => `(${at(i)})`,
        ),
      ),
    ],
  };
}

/** Registers the suite's tests (inside a describe whose backend is current). */
export function specialValueSuite(opts: SpecialValueSuiteOptions): void {
  for (const { name, run } of MODES) {
    it(`unary ops on every grid (${name})`, async () => {
      const errors: string[] = [];
      for (const d of DTYPES) {
        const g = GRIDS[d];
        const outs = await run((x: Tensor) => UNARY_CASES.map((c) => c.apply(x)), make(g, d));
        UNARY_CASES.forEach((c, k) => {
          const got = outs[k]!;
          // With `rangeOnlyPastBound` (WGSL's sin, cos, tan of huge arguments), past `gpuBound`
          // only the range is checked: a finite result, within [-1, 1] for sin and cos.
          const bounded = (i: number): boolean =>
            opts.rangeOnlyPastBound &&
            c.gpuBound !== undefined &&
            Number.isFinite(f32(g[i]!)) &&
            Math.abs(f32(g[i]!)) > c.gpuBound;
          const inRange = (v: number): boolean => Number.isFinite(v) && (c.name === "tan" || Math.abs(v) <= 1);
          const want = g.map((x, i) => (bounded(i) && inRange(got[i]!) ? got[i]! : expectedUnary(c, x, d)));
          errors.push(
            ...mismatches(`${c.name}/${d}`, got, want, (i) => `(${fmt(g[i]!)})`, c.gpu === "approx", opts.rtol),
          );
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
              c.rtol ?? opts.rtol,
            ),
          );
        });
      }
      check(errors);
    });

    it(`binary ops with every grid value as a constant (${name})`, async () => {
      const errors: string[] = [];
      const combos = opts.constantCombos?.(name) ?? ALL_COMBOS;
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
              c.rtol ?? opts.rtol,
            ),
          );
        });
      }
      check(errors);
    });

    it(`where, clip and casts (${name})`, async () => {
      const grid = whereClipCastGrid();
      const errors = grid.errors(await run(grid.fn, ...grid.inputs));
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
      // The backends under test compute float32 per op: every intermediate rounds.
      check(
        PATTERNS.flatMap((p, k) =>
          mismatches(
            p.name,
            outs[k]!,
            g.map((a) => f32(p.ref(a, f32))),
            (i) => `(${fmt(g[i]!)})`,
            p.approx === true,
            opts.rtol,
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
}
