/** Random jagged data for the ragged-op tests (JS and WebGPU). */
import { Node } from "../../ir/graph.js";
import type { Value } from "../../ir/interpret.js";
import { rng } from "./random-graph.js";

export interface RaggedCase {
  readonly lengths: number[];
  readonly S: number;
  readonly values: Value;
  readonly offsets: Value;
  readonly rows: Value;
}

export function raggedCase(seed: number): RaggedCase {
  const r = rng(seed);
  const B = 1 + Math.floor(r() * 6);
  const lengths = Array.from({ length: B }, () => (r() < 0.15 ? 0 : 1 + Math.floor(r() * 7)));
  const S = 1 + Math.floor(r() * 3);
  const T = lengths.reduce((a, b) => a + b, 0);
  const offsets = new Int32Array(B + 1);
  lengths.forEach((l, i) => (offsets[i + 1] = offsets[i]! + l));
  return {
    lengths,
    S,
    values: {
      type: { dtype: "float32", batch: [T], base: [S] },
      data: Float32Array.from({ length: T * S }, () => Math.round((r() * 4 - 2) * 100) / 100),
    },
    offsets: { type: { dtype: "int32", batch: [B + 1], base: [] }, data: offsets },
    rows: {
      type: { dtype: "float32", batch: [B], base: [S] },
      data: Float32Array.from({ length: B * S }, () => Math.round((r() * 4 - 2) * 100) / 100),
    },
  };
}

/** values (T; S), offsets (B+1;), rows (B; S) as graph inputs. */
export function raggedInputs(S: number): [Node, Node, Node] {
  return [
    Node.make("input", [], { index: 0 }, { dtype: "float32", batch: ["t"], base: [S] }),
    Node.make("input", [], { index: 1 }, { dtype: "int32", batch: ["r"], base: [] }),
    Node.make("input", [], { index: 2 }, { dtype: "float32", batch: ["r-1"], base: [S] }),
  ];
}

/** A ragged graph's outputs, built over `raggedInputs`' values, offsets and rows. */
export type RaggedBuild = (v: Node, o: Node, rows: Node) => Node[];

/** Ragged graphs the segmented-kernel tests (loop-form interpreter, workgroup kernels) both check. */
export const segmentGraphs = {
  /** segment_reduce `op` of |values - their row| (the row read per element by segment_expand). */
  reduceCentred:
    (op: "sum" | "mean" | "max" | "min" | "argmax" | "count"): RaggedBuild =>
    (v, o, rows) => {
      const centred = Node.make("sub", [v, Node.make("segment_expand", [rows, o, v])]);
      return [Node.make("segment_reduce", [Node.make("abs", [centred]), o], { op })];
    },
  /** values * exp(their row). */
  expandMap: ((v, o, rows) => [
    Node.make("mul", [v, Node.make("exp", [Node.make("segment_expand", [rows, o, v])])]),
  ]) satisfies RaggedBuild,
  /** exp(values) padded on the right to max(0, maxN) with -7 and unpadded again, plus their row. */
  unpadPadded:
    (maxN: number): RaggedBuild =>
    (v, o, rows) => {
      const padded = Node.make("segment_pad", [Node.make("exp", [v]), o], {
        maxN: Math.max(0, maxN),
        value: -7,
        left: false,
      });
      return [
        Node.make("add", [Node.make("segment_unpad", [padded, o, v]), Node.make("segment_expand", [rows, o, v])]),
      ];
    },
  /** values padded to maxN with -7 (on the left if `left`), and the matching mask. */
  padAndMask:
    (maxN: number, left: boolean): RaggedBuild =>
    (v, o) => [
      Node.make("segment_pad", [v, o], { maxN, value: -7, left }),
      Node.make("segment_mask", [o], { maxN, left }),
    ],
};
