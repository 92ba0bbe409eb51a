/**
 * Scheduling (docs/ARCHITECTURE.md, Fusion and the schedule): orders the kernel
 * roots, groups roots that share an iteration space and the buffers they read
 * into one kernel (under the backend's buffer limit), and when a kernel still
 * binds too many buffers, splits part of its inlined region into an earlier
 * kernel and schedules again.
 */
import { BackendError } from "../../ir/errors.js";
import type { Graph, Node } from "../../ir/graph.js";
import { numel } from "../../ir/kernel.js";
import { COPY_OPS, VIEW_OPS } from "../../ir/ops.js";
import type { Schedule, Step } from "../../ir/schedule.js";
import { fmtType } from "../../ir/types.js";
import { buildKernel, buildSegmentKernel } from "./lower.js";
import type { FuseOptions } from "./options.js";
import { isReduce, placeBuffers, region, regionReads } from "./placement.js";
import { buildRoutineKernel, isRoutine } from "./routine.js";
import { planRoot, type Plan } from "./segments.js";

/** Kernels that may share a launch: reductions of one value over the same axes, or elementwise results of the same buffers and shape. */
function groupKey(
  n: Node,
  materialized: ReadonlySet<Node>,
  memo: Map<Node, ReadonlySet<Node>>,
  opts: FuseOptions,
): string {
  if (isReduce(n)) return `reduce ${n.inputs[0]!.id} ${String(n.attrs.batchAxes)} ${String(n.attrs.baseAxes)}`;
  // A scatter kernel writes its one output in place: never shared with other roots.
  if (n.op === "scatter") return `scatter ${n.id}`;
  const reads = [...regionReads(n, materialized, memo)].map((r) => r.id).sort((a, b) => a - b);
  // Small bases unroll completely; with mixed-base outputs they may share a kernel whatever their shapes.
  const base = opts.mixedBaseOutputs && numel(n.type.base) <= opts.unrollLimit ? "small" : n.type.base.join(",");
  return `map ${reads.join(",")} ${n.type.batch.join(",")};${base}`;
}

/**
 * Decides which nodes get buffers and groups them into kernels, in order. A kernel
 * whose buffers (inputs + outputs) exceed the backend's limit gets part of its
 * inlined region materialized into an earlier kernel, and scheduling starts again.
 */
export function schedule(g: Graph, opts: FuseOptions): Schedule {
  const { order, materialized, softOutputs } = placeBuffers(g, opts);
  for (let attempt = 0; attempt <= order.length; attempt++) {
    const memo = new Map<Node, ReadonlySet<Node>>();
    const groups = new Map<string, Node[]>();
    const steps: (Step | Node[])[] = [];
    const plans = new Map<Node, Plan>();
    let replan = false;
    const isRoot = (n: Node): boolean => materialized.has(n) || softOutputs.has(n);
    for (const n of order) {
      if (!isRoot(n) || VIEW_OPS.has(n.op) || COPY_OPS.has(n.op)) continue;
      const { plan, materialize } = planRoot(n, materialized);
      for (const m of materialize) materialized.add(m);
      replan ||= materialize.length > 0;
      plans.set(n, plan);
    }
    if (replan) continue;
    for (const n of order) {
      if (!isRoot(n)) continue;
      if (VIEW_OPS.has(n.op)) {
        steps.push({ kind: "view", node: n, source: n.inputs[0]! });
        continue;
      }
      if (COPY_OPS.has(n.op)) {
        steps.push({ kind: "copy", node: n, sources: n.inputs });
        continue;
      }
      if (isRoutine(n)) {
        steps.push(buildRoutineKernel(n, opts));
        continue;
      }
      const plan = plans.get(n)!;
      if (plan.mode !== "plain") {
        steps.push(buildSegmentKernel(n, plan, materialized, opts));
        continue;
      }
      const key = groupKey(n, materialized, memo, opts);
      const group = opts.fusion === false ? undefined : groups.get(key);
      const buffers = group
        ? new Set([
            ...group,
            ...group.flatMap((m) => [...regionReads(m, materialized, memo)]),
            n,
            ...regionReads(n, materialized, memo),
          ]).size
        : Infinity;
      if (group && buffers <= opts.maxKernelBuffers) group.push(n);
      else {
        const fresh = [n];
        groups.set(key, fresh);
        steps.push(fresh);
      }
    }
    const built = steps.map((s) => (Array.isArray(s) ? buildKernel(s, materialized, opts) : s));
    const over = built.find(
      (s): s is Step & { kind: "kernel" } =>
        s.kind === "kernel" && s.inputs.length + s.outputs.length > opts.maxKernelBuffers,
    );
    if (over === undefined) return { graph: g, order, steps: built };
    const split = splitCandidate(over, materialized, opts, memo);
    if (split === undefined) {
      throw new BackendError(
        `fuse: a kernel writing ${fmtType(over.outputs[0]!.type)} reads ${over.inputs.length} buffers and no part of it can be split off; the backend allows ${opts.maxKernelBuffers} per kernel`,
      );
    }
    materialized.add(split);
  }
  throw new BackendError("fuse: could not fit the kernels into the backend's buffer limit");
}

/** The inlined node whose own kernel would take the most loads off an oversized kernel. */
function splitCandidate(
  step: Step & { kind: "kernel" },
  materialized: ReadonlySet<Node>,
  opts: FuseOptions,
  memo: Map<Node, ReadonlySet<Node>>,
): Node | undefined {
  let best: Node | undefined;
  let bestReads = 1;
  for (const root of step.outputs) {
    const candidates =
      isReduce(root) && !materialized.has(root.inputs[0]!) && root.inputs[0]!.op !== "input"
        ? [root.inputs[0]!, ...region(root.inputs[0]!, materialized)]
        : region(root, materialized);
    for (const n of candidates) {
      const reads = regionReads(n, materialized, memo).size;
      if (reads > bestReads && reads + 1 <= opts.maxKernelBuffers) {
        best = n;
        bestReads = reads;
      }
    }
  }
  return best;
}
