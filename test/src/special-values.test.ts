/**
 * Special values on the JS backend: every elementwise op on the grid {NaN, ±Inf,
 * ±0, ±1, ±tiny, ±huge, integer extremes} × the same grid, eagerly (operands from
 * buffers, constants on either side), inside jit (relaxed and exact float32), in
 * constant folding, and through the algebraic rules (x*0, x-x, x+0, ...), against
 * expected values written from the documented rules in ../helpers/special-values.ts.
 */
import { describe, expect, it } from "vitest";
import { makeGraph, Node } from "../../ir/graph.js";
import type { KBinaryOp, KUnaryOp } from "../../ir/kernel.js";
import { runPipeline } from "../../passes/pipeline.js";
import { fromTypedArray, jit, tensor, where, type Tensor } from "../../src/index.js";
import type { DType, TypedArray } from "../../ir/dtype.js";
import {
  BINARY_CASES,
  GRIDS,
  UNARY_CASES,
  expectedBinary,
  expectedUnary,
  expectedWithConstants,
  fmt,
  maxRef,
  minRef,
  mismatches,
  F64_GRID,
  PATTERNS,
  floatToInt,
  pairs,
  store,
  withConstants,
} from "../helpers/special-values.js";
import { check, DTYPES, make } from "../helpers/special-value-suite.js";

const f32 = Math.fround;
const read = (t: Tensor): TypedArray => t.dataSync();

const MODES = [
  { name: "eager", wrap: <A extends Tensor[]>(f: (...a: A) => Tensor[]) => f },
  { name: "jit", wrap: <A extends Tensor[]>(f: (...a: A) => Tensor[]) => jit(f) },
  { name: "jit exact", wrap: <A extends Tensor[]>(f: (...a: A) => Tensor[]) => jit(f, { float32: "exact" }) },
] as const;

describe.each(MODES)("special values on JS ($name)", ({ wrap }) => {
  it.each(DTYPES)("unary ops on the %s grid", (d) => {
    const g = GRIDS[d];
    const cases = UNARY_CASES.filter((c) => d === "float32" || c.name !== "never");
    const outs = wrap((x: Tensor) => cases.map((c) => c.apply(x)))(make(g, d));
    const errors = cases.flatMap((c, k) =>
      mismatches(
        `${c.name}/${d}`,
        read(outs[k]!),
        g.map((x) => expectedUnary(c, x, d)),
        (i) => `(${fmt(g[i]!)})`,
      ),
    );
    check(errors);
  });

  it("unary and binary ops on the float64 grid (subnormal and huge doubles)", () => {
    const g = F64_GRID;
    const x = fromTypedArray(Float64Array.from(g), [g.length]);
    const uo = wrap((t: Tensor) => UNARY_CASES.map((c) => c.apply(t)))(x);
    const { a, b } = pairs(g);
    const bo = wrap((s: Tensor, t: Tensor) => BINARY_CASES.map((c) => c.apply(s, t)))(
      fromTypedArray(Float64Array.from(a), [a.length]),
      fromTypedArray(Float64Array.from(b), [b.length]),
    );
    check([
      ...UNARY_CASES.flatMap((c, k) =>
        mismatches(
          `${c.name}/float64`,
          read(uo[k]!),
          g.map((v) => expectedUnary(c, v, "float64")),
          (i) => `(${fmt(g[i]!)})`,
        ),
      ),
      ...BINARY_CASES.flatMap((c, k) =>
        mismatches(
          `${c.name}/float64`,
          read(bo[k]!),
          a.map((v, i) => expectedBinary(c, v, b[i]!, "float64")),
          (i) => `(${fmt(a[i]!)}, ${fmt(b[i]!)})`,
        ),
      ),
    ]);
  });

  it.each(DTYPES)("binary ops on %s operands from buffers", (d) => {
    const { a, b } = pairs(GRIDS[d]);
    const outs = wrap((x: Tensor, y: Tensor) => BINARY_CASES.map((c) => c.apply(x, y)))(make(a, d), make(b, d));
    const errors = BINARY_CASES.flatMap((c, k) =>
      mismatches(
        `${c.name}/${d}`,
        read(outs[k]!),
        a.map((x, i) => expectedBinary(c, x, b[i]!, d)),
        (i) => `(${fmt(a[i]!)}, ${fmt(b[i]!)})`,
      ),
    );
    check(errors);
  });

  it.each(["float32", "int32", "uint32"] as const)(
    "binary ops on %s with every grid value as a constant, on the right and on the left",
    (d) => {
      const g = GRIDS[d];
      for (const left of [false, true]) {
        const outs = wrap((x: Tensor) => BINARY_CASES.map((c) => withConstants(c, x, g, left)))(make(g, d));
        const errors = BINARY_CASES.flatMap((c, k) =>
          mismatches(
            `${c.name}/${d}${left ? " (constant left)" : ""}`,
            read(outs[k]!),
            expectedWithConstants(c, g, d, left),
            (i) => {
              const [x, v] = [g[i % g.length]!, g[Math.floor(i / g.length)]!];
              return left ? `(${fmt(v)}, ${fmt(x)})` : `(${fmt(x)}, ${fmt(v)})`;
            },
          ),
        );
        check(errors);
      }
    },
  );

  it("where, clip and cast on the float32 grid", () => {
    const g = GRIDS.float32;
    const { a, b } = pairs(g);
    const cond = a.map((_, i) => (i % 3 === 0 ? 1 : 0));
    const lo = [NaN, -Infinity, -1, -0, 0, 1].map(f32);
    const hi = [NaN, Infinity, 1, 0, -0, -1].map(f32);
    const h = a.map((_, i) => hi[i % hi.length]!);
    const outs = wrap((x: Tensor, y: Tensor, c: Tensor, gx: Tensor, ht: Tensor) => [
      where(c, x, y),
      x.clip(y, ht),
      gx.cast("int32"),
      gx.cast("uint32"),
      gx.cast("bool"),
      ...lo.map((lv, i) => gx.clip(lv, hi[i]!)),
    ])(make(a, "float32"), make(b, "float32"), make(cond, "bool"), make(g, "float32"), make(h, "float32"));
    const errors: string[] = [];
    const pair = (i: number): string => `(${fmt(a[i]!)}, ${fmt(b[i]!)})`;
    errors.push(
      ...mismatches(
        "where",
        read(outs[0]!),
        a.map((x, i) => (cond[i] ? x : b[i]!)),
        (i) => `(${cond[i]}, ${fmt(a[i]!)}, ${fmt(b[i]!)})`,
      ),
    );
    errors.push(
      ...mismatches(
        "clip",
        read(outs[1]!),
        a.map((x, i) => minRef(maxRef(x, b[i]!), h[i]!)),
        (i) => `${pair(i)}, ${fmt(h[i]!)}`,
      ),
    );
    errors.push(
      ...mismatches(
        "cast int32",
        read(outs[2]!),
        g.map((x) => floatToInt(x, "int32")),
        (i) => fmt(g[i]!),
      ),
    );
    errors.push(
      ...mismatches(
        "cast uint32",
        read(outs[3]!),
        g.map((x) => floatToInt(x, "uint32")),
        (i) => fmt(g[i]!),
      ),
    );
    errors.push(
      ...mismatches(
        "cast bool",
        read(outs[4]!),
        g.map((x) => (x !== 0 ? 1 : 0)),
        (i) => fmt(g[i]!),
      ),
    );
    lo.forEach((lv, k) => {
      errors.push(
        ...mismatches(
          `clip(·, ${fmt(lv)}, ${fmt(hi[k]!)})`,
          read(outs[5 + k]!),
          g.map((x) => minRef(maxRef(x, lv), hi[k]!)),
          (i) => `(${fmt(g[i]!)})`,
        ),
      );
    });
    check(errors);
  });

  it.each(["int32", "uint32", "bool"] as const)("casts from the %s grid", (d) => {
    const g = GRIDS[d];
    const targets = (["float32", "int32", "uint32", "bool"] as const).filter((t) => t !== d);
    const outs = wrap((x: Tensor) => targets.map((t) => x.cast(t)))(make(g, d));
    // Integer values are exact numbers: each target stores them by its own rule (float32 rounds, ints wrap, bool is x != 0).
    const errors = targets.flatMap((t, k) =>
      mismatches(
        `cast ${d} -> ${t}`,
        read(outs[k]!),
        g.map((x) => store(x, t)),
        (i) => fmt(g[i]!),
      ),
    );
    check(errors);
  });
});

describe("algebraic rules keep NaN, ±Inf and signed zeros (JS)", () => {
  const g = GRIDS.float32;
  it.each(MODES)("$name", ({ name, wrap }) => {
    const r = name === "jit exact" ? f32 : (v: number) => v;
    const outs = wrap((x: Tensor) => PATTERNS.map((p) => p.f(x)))(make(g, "float32"));
    const errors = PATTERNS.flatMap((p, k) =>
      mismatches(
        p.name,
        read(outs[k]!),
        g.map((a) => f32(p.ref(a, r))),
        (i) => `(${fmt(g[i]!)})`,
      ),
    );
    check(errors);
  });

  it("integer identities (x*0, x+0, x-x) stay exact on int32 and uint32", () => {
    for (const d of ["int32", "uint32"] as const) {
      const gi = GRIDS[d];
      const [m0, a0, s] = [0, 1, 2].map((k) =>
        read([(x: Tensor) => x.mul(0), (x: Tensor) => x.add(0), (x: Tensor) => x.sub(x)][k]!(make(gi, d))),
      );
      check([
        ...mismatches(
          `x*0/${d}`,
          m0!,
          gi.map(() => 0),
          (i) => fmt(gi[i]!),
        ),
        ...mismatches(`x+0/${d}`, a0!, [...gi], (i) => fmt(gi[i]!)),
        ...mismatches(
          `x-x/${d}`,
          s!,
          gi.map(() => 0),
          (i) => fmt(gi[i]!),
        ),
      ]);
    }
  });
});

describe("constant folding uses the documented rules", () => {
  const IR_BINARY: Record<string, KBinaryOp> = {
    add: "add",
    sub: "sub",
    mul: "mul",
    div: "div",
    pow: "pow",
    maximum: "maximum",
    minimum: "minimum",
    mod: "mod",
    atan2: "atan2",
    eq: "eq",
    ne: "ne",
    lt: "lt",
    le: "le",
    gt: "gt",
    ge: "ge",
  };
  const IR_UNARY: Record<string, KUnaryOp> = {
    neg: "neg",
    abs: "abs",
    sqrt: "sqrt",
    rsqrt: "rsqrt",
    exp: "exp",
    log: "log",
    sin: "sin",
    cos: "cos",
    tan: "tan",
    tanh: "tanh",
    sigmoid: "sigmoid",
    asin: "asin",
    acos: "acos",
    atan: "atan",
    floor: "floor",
    ceil: "ceil",
    round: "round",
    trunc: "trunc",
    sign: "sign",
    isNan: "isnan",
    isInf: "isinf",
    isFinite: "isfinite",
  };
  /** Runs the pass pipeline on `out` and returns the value of the constant it folds to. */
  const folded = (out: Node): number => {
    const g = runPipeline(makeGraph("fold", [], [out], [])).stages.get("dce")!;
    const o = g.outputs[0]!;
    expect(o.op, `${out.op} did not fold`).toBe("const");
    return o.attrs.value as number;
  };
  const cst = (v: number, dtype: DType): Node => Node.make("const", [], { dtype, value: v });

  it.each(["float32", "int32", "uint32"] as const)("binary ops on %s constants", (d) => {
    const gr = GRIDS[d];
    const errors: string[] = [];
    for (const c of BINARY_CASES) {
      const op = IR_BINARY[c.name];
      if (op === undefined || (d !== "float32" && (op === "div" || op === "atan2"))) continue;
      for (const a of gr) {
        for (const b of gr) {
          errors.push(
            ...mismatches(
              c.name,
              [folded(Node.make(op, [cst(a, d), cst(b, d)]))],
              [expectedBinary(c, a, b, d)],
              () => `(${fmt(a)}, ${fmt(b)}) on ${d}`,
            ),
          );
        }
      }
    }
    check(errors);
  });

  it("unary ops on float32 constants", () => {
    const errors: string[] = [];
    for (const c of UNARY_CASES) {
      const op = IR_UNARY[c.name];
      if (op === undefined) continue;
      for (const a of GRIDS.float32)
        errors.push(
          ...mismatches(
            c.name,
            [folded(Node.make(op, [cst(a, "float32")]))],
            [expectedUnary(c, a, "float32")],
            () => `(${fmt(a)})`,
          ),
        );
    }
    check(errors);
  });
});

describe("the issue's repros (JS)", () => {
  it("div by a zero constant, mod by ±Inf, pow(-0, -1), int32 pow past 2^53", () => {
    expect(Array.from(tensor([1, -1, 0]).div(0).dataSync())).toEqual([Infinity, -Infinity, NaN]);
    expect(
      Array.from(
        tensor([1, -1, 1, -1])
          .mod(tensor([Infinity, Infinity, -Infinity, -Infinity]))
          .dataSync(),
      ),
    ).toEqual([1, Infinity, -Infinity, -1]);
    expect(Object.is(tensor([-0]).pow(-1).itemSync(), -Infinity)).toBe(true);
    expect(tensor([7], { dtype: "int32" }).pow(31).itemSync()).toBe(265001655);
    expect(tensor([3], { dtype: "uint32" }).pow(4294967295).itemSync()).toBe(2863311531);
    expect(Array.from(tensor([2, 1, -1, 0], { dtype: "int32" }).pow(-3).dataSync())).toEqual([0, 1, -1, 0]);
  });
});
