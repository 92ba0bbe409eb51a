/**
 * Special values on the JS backend: every elementwise op on the grid {NaN, ±Inf,
 * ±0, ±1, ±tiny, ±huge, integer extremes} × the same grid, eagerly (operands from
 * buffers, constants on either side), inside jit (relaxed and exact float32), in
 * constant folding, and through the algebraic rules (x*0, x-x, x+0, ...), against
 * expected values written from the documented rules in ../helpers/special-values.ts.
 */
import { describe, expect, it } from "vitest";
import { makeGraph, Node } from "../../ir/graph.js";
import { ELEMENTWISE, factsOf, isBinaryOp, isUnaryOp, type KBinaryOp, type KUnaryOp } from "../../ir/elementwise.js";
import { METHOD_OF } from "../../src/api/tensor-op-names.js";
import { runPipeline } from "../../passes/pipeline.js";
import { fromTypedArray, jit, tensor, type Tensor } from "../../src/index.js";
import type { DType, TypedArray } from "../../ir/dtype.js";
import {
  BINARY_CASES,
  GRIDS,
  UNARY_CASES,
  expectedBinary,
  expectedUnary,
  expectedWithConstants,
  fmt,
  mismatches,
  F64_GRID,
  PATTERNS,
  pairs,
  store,
  withConstants,
} from "../helpers/special-values.js";
import { check, DTYPES, make, whereClipCastGrid } from "../helpers/special-value-suite.js";
import { I32 as BITWISE_I32, REF as BITWISE_REF, U32 as BITWISE_U32 } from "../numerics/bitwise-cases.js";

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
    const grid = whereClipCastGrid();
    check(grid.errors(wrap(grid.fn)(...grid.inputs).map(read)));
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
  /** The special-value case of each elementwise op (by its Tensor method, METHOD_OF); the bitwise ops' are bitwise-cases.ts's. */
  const UNARY_BY_METHOD = new Map(UNARY_CASES.map((c) => [c.name, c]));
  const BINARY_BY_METHOD = new Map(BINARY_CASES.map((c) => [c.name, c]));
  const UNARY = Object.keys(ELEMENTWISE).filter(isUnaryOp);
  const BINARY = Object.keys(ELEMENTWISE).filter(isBinaryOp);
  /** Runs the pass pipeline on `out` and returns the value of the constant it folds to. */
  const folded = (out: Node): number => {
    const g = runPipeline(makeGraph("fold", [], [out], [])).stages.get("dce")!;
    const o = g.outputs[0]!;
    expect(o.op, `${out.op} did not fold`).toBe("const");
    return o.attrs.value as number;
  };
  const cst = (v: number, dtype: DType): Node => Node.make("const", [], { dtype, value: v });
  /**
   * A constant operand of `op` as the Tensor method builds it (its dtype rule, ir/elementwise.ts):
   * float-only ops and true division take ints as float32, logical ops take bool.
   */
  const operand = (op: KUnaryOp | KBinaryOp, v: number, d: DType): Node => {
    const f = factsOf(op);
    const c = cst(v, d);
    if ((f.dtype === "float" || f.trueDivision === true) && d !== "float32")
      return Node.make("cast", [c], { dtype: "float32" });
    if (f.dtype === "logical") return Node.make("cast", [c], { dtype: "bool" });
    return c;
  };

  it("every elementwise op has a special-value case (int-only ops: the bitwise grid's)", () => {
    const missing = [
      ...UNARY.filter((op) => !UNARY_BY_METHOD.has(METHOD_OF[op])),
      ...BINARY.filter((op) =>
        factsOf(op).dtype === "int" ? BITWISE_REF[METHOD_OF[op]] === undefined : !BINARY_BY_METHOD.has(METHOD_OF[op]),
      ),
    ];
    expect(missing).toEqual([]);
  });

  it.each(["float32", "int32", "uint32"] as const)("binary ops on %s constants", (d) => {
    const gr = GRIDS[d];
    const errors: string[] = [];
    for (const op of BINARY) {
      if (factsOf(op).dtype === "int") continue; // on the bitwise grid below
      const c = BINARY_BY_METHOD.get(METHOD_OF[op]);
      if (c === undefined) throw new Error(`no special-value case for ${op} (${METHOD_OF[op]})`);
      for (const a of gr) {
        for (const b of gr) {
          errors.push(
            ...mismatches(
              op,
              [folded(Node.make(op, [operand(op, a, d), operand(op, b, d)]))],
              [expectedBinary(c, a, b, d)],
              () => `(${fmt(a)}, ${fmt(b)}) on ${d}`,
            ),
          );
        }
      }
    }
    check(errors);
  });

  it.each(["int32", "uint32"] as const)("integer-only (bitwise) ops on %s constants of the bitwise grid", (d) => {
    const gr = d === "int32" ? BITWISE_I32 : BITWISE_U32;
    const errors: string[] = [];
    for (const op of BINARY) {
      if (factsOf(op).dtype !== "int") continue;
      const ref = BITWISE_REF[METHOD_OF[op]];
      if (ref === undefined) throw new Error(`no bitwise reference for ${op} (${METHOD_OF[op]})`);
      for (const a of gr)
        for (const b of gr)
          errors.push(
            ...mismatches(
              op,
              [folded(Node.make(op, [cst(a, d), cst(b, d)]))],
              [ref(a, b, d)],
              () => `(${fmt(a)}, ${fmt(b)}) on ${d}`,
            ),
          );
    }
    check(errors);
  });

  it.each(["float32", "int32", "uint32"] as const)("unary ops on %s constants", (d) => {
    const errors: string[] = [];
    for (const op of UNARY) {
      const c = UNARY_BY_METHOD.get(METHOD_OF[op]);
      if (c === undefined) throw new Error(`no special-value case for ${op} (${METHOD_OF[op]})`);
      for (const a of GRIDS[d])
        errors.push(
          ...mismatches(
            op,
            [folded(Node.make(op, [operand(op, a, d)]))],
            [expectedUnary(c, a, d)],
            () => `(${fmt(a)}) on ${d}`,
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
