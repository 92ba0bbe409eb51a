/**
 * Op attributes are checked by a plain spec check (no schema library on node
 * creation): the IR text parser, Node.make and the verifier refuse every value
 * of the wrong kind, including the ones the type rules alone would let through
 * (fractional sizes whose product fits, negative dims, unknown keys).
 */
import { describe, it } from "vitest";
import { IRError } from "../../ir/errors.js";
import { Node } from "../../ir/graph.js";
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
      one("cast", "{dtype=float16}"),
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
