/**
 * The pass pipeline: one flat, named list (STYLE.md §4), the verifier at both
 * ends, and the graph after every pass available for dumps.
 */
import type { Graph } from "../ir/graph.js";
import { printGraph } from "../ir/print.js";
import type { Schedule } from "../ir/schedule.js";
import { verifyGraph } from "../ir/verify.js";
import { DEFAULT_FUSE_OPTIONS, fuse, type FuseOptions } from "./fuse.js";
import { lowerOps } from "./lower.js";

export interface Pass {
  readonly name: string;
  readonly run: (g: Graph) => Graph;
}

export const GRAPH_PASSES: readonly Pass[] = [{ name: "lower", run: lowerOps }];

export const PASS_NAMES: readonly string[] = ["input", ...GRAPH_PASSES.map((p) => p.name), "fuse"];

export interface PipelineResult {
  readonly schedule: Schedule;
  /** The graph after each graph pass, by pass name ("input" is the traced graph). */
  readonly stages: ReadonlyMap<string, Graph>;
}

export function runPipeline(g: Graph, opts: FuseOptions = DEFAULT_FUSE_OPTIONS, log?: (pass: string, text: string) => void): PipelineResult {
  verifyGraph(g, "before passes");
  const stages = new Map<string, Graph>([["input", g]]);
  let cur = g;
  for (const p of GRAPH_PASSES) {
    cur = p.run(cur);
    stages.set(p.name, cur);
    log?.(p.name, printGraph(cur));
  }
  verifyGraph(cur, "after passes");
  return { schedule: fuse(cur, opts), stages };
}
