/**
 * The pass pipeline: one flat, named list (docs/ARCHITECTURE.md, Passes), the verifier at both
 * ends, and the graph after every pass available for dumps
 * (`f.dump({ after })`, `BATCHWISE_DEBUG=passes`).
 *
 *   narrow -> lower -> canonicalize -> fold -> simplify -> cse -> dce -> fuse (kernels, schedule, buffers)
 *
 * `narrow` rebuilds computations on the narrow dtypes (uint8, int8, uint16, int16, float16)
 * in 32 bits, with a cast back (the wrap) after each. Lowering runs next so that the ops it
 * introduces meet the same rules.
 */
import { makeGraph, topoOrder, type Graph } from "../ir/graph.js";
import { printGraph } from "../ir/print.js";
import type { Schedule } from "../ir/schedule.js";
import { verifyGraph } from "../ir/verify.js";
import { CANONICALIZE_RULES } from "./canonicalize.js";
import { runRules } from "./driver.js";
import { FOLD_RULES } from "./fold.js";
import { DEFAULT_FUSE_OPTIONS, fuse, type FuseOptions } from "./fuse.js";
import { lowerOps } from "./lower.js";
import { widenNarrow } from "./narrow.js";
import { rewriteGraph } from "./rewrite.js";
import { SIMPLIFY_RULES } from "./simplify.js";

export interface Pass {
  readonly name: string;
  readonly run: (g: Graph) => Graph;
}

export const GRAPH_PASSES: readonly Pass[] = [
  { name: "narrow", run: widenNarrow },
  { name: "lower", run: lowerOps },
  { name: "canonicalize", run: (g) => runRules(g, CANONICALIZE_RULES, "canonicalize") },
  { name: "fold", run: (g) => runRules(g, FOLD_RULES, "fold") },
  { name: "simplify", run: (g) => runRules(g, [...SIMPLIFY_RULES, ...FOLD_RULES, ...CANONICALIZE_RULES], "simplify") },
  // Nodes are hash-consed, so rebuilding the graph merges every pair of equal nodes.
  { name: "cse", run: (g) => rewriteGraph(g, () => undefined) },
  // Only nodes reachable from the outputs are part of a graph; rebuilding drops the rest.
  { name: "dce", run: (g) => makeGraph(g.name, g.inputs, g.outputs, g.inputNames) },
];

export const PASS_NAMES: readonly string[] = ["input", ...GRAPH_PASSES.map((p) => p.name), "fuse"];

export interface PipelineResult {
  readonly schedule: Schedule;
  /** The graph after each graph pass, by pass name ("input" is the traced graph). */
  readonly stages: ReadonlyMap<string, Graph>;
}

export function runPipeline(
  g: Graph,
  opts: FuseOptions = DEFAULT_FUSE_OPTIONS,
  log?: (pass: string, text: string) => void,
): PipelineResult {
  verifyGraph(g, "before passes");
  const stages = new Map<string, Graph>([["input", g]]);
  let cur = g;
  for (const p of GRAPH_PASSES) {
    cur = p.run(cur);
    stages.set(p.name, cur);
    if (log) log(p.name, printGraph(cur));
  }
  verifyGraph(cur, "after passes");
  topoOrder(cur);
  return { schedule: fuse(cur, opts), stages };
}
