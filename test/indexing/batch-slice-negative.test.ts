/**
 * `batch_slice` with a negative step (start counted from the end, stop -1): the
 * type rule, the IR text, the reference interpreter, the run-time copies on JS
 * (eager and inside jit) and the derivatives, against values written by hand.
 * WebGPU runs the same copies through test/indexing/index-list.test.ts.
 */
import { describe, expect, it } from "vitest";
import { IRError } from "../../ir/errors.js";
import { interpret } from "../../ir/interpret.js";
import { parseGraph } from "../../ir/parse.js";
import { printGraph } from "../../ir/print.js";
import { jit, jvp, tensor, vjp, type Tensor } from "../../src/index.js";

const TEXT = `func @f(%x0: f32[b0; 2]) -> (f32[(b0-1)/2; 2]) {
  %0 = batch_slice %x0 {axis=0, start=1, step=-2, stop=-1} : f32[(b0-1)/2; 2]
  return %0
}`;

describe("batch_slice with a negative step", () => {
  it("reads positions n-1-start, n-1-start+step, … down to 0 (the interpreter, by hand)", () => {
    const g = parseGraph(TEXT);
    expect(printGraph(parseGraph(printGraph(g)))).toBe(printGraph(g));
    // 5 rows [r, 10r]: start 1 from the end is row 3; step -2 then reads row 1.
    const data = Float32Array.from([0, 0, 1, 10, 2, 20, 3, 30, 4, 40]);
    const [out] = interpret(g, [{ type: { dtype: "float32", batch: [5], base: [2] }, data }]);
    expect(out!.type.batch).toEqual([2]);
    expect(Array.from(out!.data)).toEqual([3, 30, 1, 10]);
    // An empty batch: nothing to read.
    const [empty] = interpret(g, [{ type: { dtype: "float32", batch: [1], base: [2] }, data: new Float32Array(2) }]);
    expect(empty!.type.batch).toEqual([0]);
  });

  it("the type rule (through the IR parser, an IRError) refuses a stop other than -1 and a negative start; a start past the size is an empty slice (NumPy)", () => {
    expect(() => parseGraph(TEXT.replaceAll("stop=-1", "stop=0"))).toThrow(IRError);
    expect(() => parseGraph(TEXT.replaceAll("stop=-1", "stop=0"))).toThrow(/a negative step needs start >= 0/);
    expect(() => parseGraph(TEXT.replaceAll("start=1", "start=-1"))).toThrow(/is not a valid slice/);
    const fixed = `func @f(%x0: f32[3; 2]) -> (f32[1; 2]) {
  %0 = batch_slice %x0 {axis=0, start=4, step=-2, stop=-1} : f32[1; 2]
  return %0
}`;
    // Declared (1; 2), but NumPy's x[3-1-4::-2] of three rows is empty: the rule says (0; 2).
    expect(() => parseGraph(fixed)).toThrow(/declared type f32\[1; 2\] but the op gives f32\[0; 2\]/);
    const [empty] = interpret(parseGraph(fixed.replaceAll("f32[1; 2]", "f32[0; 2]")), [
      { type: { dtype: "float32", batch: [3], base: [2] }, data: new Float32Array(6) },
    ]);
    expect(empty!.type.batch).toEqual([0]);
  });

  it("runs as copies on JS, eagerly and inside jit for two batch sizes", () => {
    const rows = (n: number): Tensor =>
      tensor(
        Array.from({ length: n }, (_, r) => [r, -r]),
        { batchDim: 1 },
      );
    expect(rows(4).batchIndex(["::-1"]).toArraySync()).toEqual([
      [3, -3],
      [2, -2],
      [1, -1],
      [0, -0],
    ]);
    const f = jit((x: Tensor) => x.batchIndex(["-2::-2"]).mul(10));
    expect(f(rows(4)).toArraySync()).toEqual([
      [20, -20],
      [0, -0],
    ]);
    expect(f(rows(5)).toArraySync()).toEqual([
      [30, -30],
      [10, -10],
    ]);
    expect(f.stats.traces).toBe(1);
  });

  it("forward mode slices the tangent the same way; reverse mode scatters the cotangent back", () => {
    const x = tensor([1, 2, 3, 4, 5], { batchDim: 1, dtype: "float64" });
    const t = tensor([10, 20, 30, 40, 50], { batchDim: 1, dtype: "float64" });
    const [y, dy] = jvp((a: Tensor) => a.batchIndex(["::-2"]).mul(2), [x], [t]);
    expect(Array.from(y.dataSync())).toEqual([10, 6, 2]);
    expect(Array.from(dy.dataSync())).toEqual([100, 60, 20]);
    const [, back] = vjp((a: Tensor) => a.batchIndex(["::-2"]), x);
    const [g] = back(tensor([7, 8, 9], { batchDim: 1, dtype: "float64" })) as Tensor[];
    expect(Array.from(g!.dataSync())).toEqual([9, 0, 8, 0, 7]);
  });
});
