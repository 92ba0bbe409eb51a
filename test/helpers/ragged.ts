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
