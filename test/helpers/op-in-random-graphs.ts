/**
 * The checks the per-op random-graph test files (take, scatter, routine) share
 * beyond ./differential.ts: the op's IR text round trip with edited texts refused,
 * and the WebGPU describe block over the 32-bit families.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Graph } from "../../ir/graph.js";
import { parseGraph } from "../../ir/parse.js";
import { printGraph } from "../../ir/print.js";
import type { Schedule } from "../../ir/schedule.js";
import { checkOnWebGPU } from "./differential.js";
import { seedArb, type Family, type RandomCase } from "./random-graph.js";
import { FC_SEED } from "./run.js";
import { describeWebGPU, type WebGPUProbe } from "./webgpu.js";

/** Whether the printed text of a graph holds `op` (for `describeRandomJsAndWasm`'s `has`). */
export const graphHas =
  (op: string) =>
  (g: Graph): boolean =>
    printGraph(g).includes(op);

/** An edit of a graph's text that the parser must refuse: `pattern` replaced by `replacement`, then the error. */
export interface RefusedEdit {
  readonly pattern: RegExp;
  readonly replacement: string;
  readonly error: RegExp;
}

/**
 * `describe("<op> in IR text")` holding the one test `name`: on 30 seeds the printed
 * text of `graphOf(seed)` parses back to a graph that prints the same text; then each
 * edit of the text of `sample` changes it and is refused by the parser.
 */
export function describeIrText(
  op: string,
  name: string,
  graphOf: (seed: number) => Graph,
  sample: () => Graph,
  edits: readonly RefusedEdit[],
): void {
  describe(`${op} in IR text`, () => {
    it(name, () => {
      fc.assert(
        fc.property(seedArb, (seed) => {
          const text = printGraph(graphOf(seed));
          expect(printGraph(parseGraph(text))).toBe(text);
        }),
        { numRuns: 30, seed: FC_SEED },
      );
      const text = printGraph(sample());
      for (const { pattern, replacement, error } of edits) {
        const bad = text.replace(pattern, replacement);
        expect(bad).not.toBe(text);
        expect(() => parseGraph(bad)).toThrow(error);
      }
    });
  });
}

/**
 * "`op` in random graphs on WebGPU equals the reference interpreter": one test per
 * 32-bit family, `runs` smooth cases of two steps each (with and without special
 * values) against the interpreter, float32 within 2e-4. `dispatchesOf` as in `checkOnWebGPU`.
 */
export function describeRandomOnWebGPU(
  probe: WebGPUProbe,
  op: string,
  make: (seed: number, family: Family, opts: { specials: boolean; smooth: boolean; steps: number }) => RandomCase,
  runs: number,
  dispatchesOf?: (s: Schedule) => number,
): void {
  describeWebGPU(probe, `${op} in random graphs on WebGPU equals the reference interpreter`, (gpu) => {
    for (const family of ["float32", "int32", "uint32"] as const) {
      it(
        family,
        async () => {
          await fc.assert(
            fc.asyncProperty(seedArb, fc.boolean(), async (seed, specials) =>
              // Smooth float graphs: the GPU rounds transcendentals differently (see test/webgpu/graphs.test.ts).
              checkOnWebGPU(
                gpu,
                make(seed, family, { specials, smooth: true, steps: 2 }),
                family,
                family === "float32" ? 2e-4 : 0,
                dispatchesOf,
              ),
            ),
            { numRuns: runs, seed: FC_SEED },
          );
        },
        120_000,
      );
    }
  });
}
