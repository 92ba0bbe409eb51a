/**
 * Op attributes are checked by a plain spec check (no schema library on node
 * creation): the IR text parser, Node.make and the verifier refuse every value
 * of the wrong kind, including the ones the type rules alone would let through
 * (fractional sizes whose product fits, negative dims, unknown keys).
 */
import { describe, expect, it } from "vitest";
import { IRError } from "../../ir/errors.js";
import { attrsOf, hasOp, isReduceNode, Node } from "../../ir/graph.js";
import type { AttrsOf } from "../../ir/ops.js";
import { Tensor } from "../../src/index.js";
import { parseGraph } from "../../ir/parse.js";
import { refusesSync } from "../helpers/refuses.js";

const one = (op: string, attrs: string, x = "f32[; 3]", out = "f32[; 3]") =>
  `func @f(%x: ${x}) -> (${out}) {\n  %0 = ${op} %x ${attrs} : ${out}\n  return %0\n}`;

describe("attribute kinds", () => {
  const cases: [string, string, RegExp][] = [
    // reshape (3) to (1.5, 2): the element counts agree, only the integer check refuses it.
    [
      "a fractional reshape size",
      one("reshape", "{shape=[1.5,2]}", "f32[; 3]", "f32[; 3]"),
      /^line 2: reshape: bad attributes .*shape must be a list of integers/,
    ],
    [
      "a negative batch_unsqueeze dim",
      one("batch_unsqueeze", "{dim=-1}", "f32[b0; 3]", "f32[1,b0; 3]"),
      /^line 2: batch_unsqueeze: bad attributes .*dim must be an integer >= 0/,
    ],
    [
      "a fractional slice step",
      one("slice", "{axis=0, start=0, step=0.5, stop=3}"),
      /^line 2: slice: bad attributes .*step must be an integer/,
    ],
    ["an unknown attribute", one("neg", "{foo=1}"), /^line 2: neg: bad attributes .*unknown attribute "foo"/],
    [
      "a missing attribute",
      one("sum", "{baseAxes=[0], batchAxes=[]}", "f32[; 3]", "f32[; ]"),
      /^line 2: sum: bad attributes .*keep is missing/,
    ],
    [
      "a cast to an unknown dtype",
      one("cast", "{dtype=int64}"),
      /^line 2: cast: bad attributes .*dtype must be a dtype/,
    ],
    [
      "a keep flag that is a number",
      one("sum", "{baseAxes=[0], batchAxes=[], keep=1}", "f32[; 3]", "f32[; ]"),
      /^line 2: sum: bad attributes .*keep must be a boolean/,
    ],
  ];
  for (const [name, text, msg] of cases) {
    it(`parseGraph refuses ${name}`, () => refusesSync(() => parseGraph(text), IRError, msg));
  }

  it("Node.make refuses them too (internal callers get the same check)", () => {
    const x = Node.make("input", [], { index: 0 }, { dtype: "float32", batch: [], base: [3] });
    refusesSync(
      () => Node.make("reshape", [x], { shape: [1.5, 2] }),
      IRError,
      /^reshape: bad attributes .*shape must be a list of integers/,
    );
    refusesSync(
      () => Node.make("input", [], { index: -1 }, { dtype: "float32", batch: [], base: [3] }),
      IRError,
      /^input: bad attributes .*index must be an integer >= 0/,
    );
    refusesSync(
      () => Node.make("segment_mask", [x], { maxN: -2, left: false }),
      IRError,
      /^segment_mask: bad attributes .*maxN must be an integer >= -1/,
    );
  });
});

// The `@ts-expect-error` lines are checked by `tsc --noEmit` (the test folder is in the project): each must be a
// compile error, or tsc fails on the unused directive. They run inside closures that are never called.
describe("typed attributes", () => {
  const x = Node.make("input", [], { index: 0 }, { dtype: "float32", batch: [], base: [3] });

  it("AttrsOf maps each spec kind to its TypeScript type", () => {
    const sum: AttrsOf<"sum"> = { batchAxes: [], baseAxes: [0], keep: false };
    const seg: AttrsOf<"segment_reduce"> = { op: "argmax" };
    const cast: AttrsOf<"cast"> = { dtype: "int32" };
    expect([sum.keep, seg.op, cast.dtype]).toEqual([false, "argmax", "int32"]);
    const never = (): unknown[] => [
      // @ts-expect-error keep is a boolean
      ((): AttrsOf<"sum"> => ({ batchAxes: [], baseAxes: [0], keep: 1 }))(),
      // @ts-expect-error median is not a segment reduction
      ((): AttrsOf<"segment_reduce"> => ({ op: "median" }))(),
      // @ts-expect-error int64 is not a dtype
      ((): AttrsOf<"cast"> => ({ dtype: "int64" }))(),
    ];
    expect(typeof never).toBe("function");
  });

  it("Node.make and Tensor._op check attributes against the op at compile time", () => {
    const never = (): unknown[] => [
      // @ts-expect-error sum needs keep
      Node.make("sum", [x], { batchAxes: [], baseAxes: [0] }),
      // @ts-expect-error reshape has no perm
      Node.make("reshape", [x], { perm: [0] }),
      // @ts-expect-error add has no attributes
      Node.make("add", [x, x], { axis: 0 }),
      // @ts-expect-error slice needs its attributes
      Node.make("slice", [x]),
      // @ts-expect-error the axis of concat is a number
      Tensor._op("concat", [], { axis: "0" }),
    ];
    expect(typeof never).toBe("function");
  });

  it("hasOp, isReduceNode and attrsOf narrow a node to its op's attributes", () => {
    const s: Node = Node.make("slice", [x], { axis: 0, start: 1, stop: 3, step: 1 });
    const r: Node = Node.make("max", [x], { batchAxes: [], baseAxes: [0], keep: true });
    expect(hasOp(s, "slice") && s.attrs.start + s.attrs.step).toBe(2);
    expect(hasOp(s, "reshape", "permute")).toBe(false);
    expect(isReduceNode(r) && r.attrs.keep).toBe(true);
    expect(isReduceNode(s)).toBe(false);
    expect(attrsOf(s, "slice", "batch_slice").stop).toBe(3);
    refusesSync(() => attrsOf(s, "const"), IRError, /^expected a const node, got slice$/);
    refusesSync(() => attrsOf(r, "sum", "mean"), IRError, /^expected a sum or mean node, got max$/);
  });
});
