/**
 * Partial results on the workgroup target: what a tree or a combine pass keeps per
 * output, the shared-memory tree that folds a workgroup's accumulators, and how a
 * partial is written to and folded from a buffer (argmin/argmax as (value bits,
 * position) pairs of int32). Used by the tree reduction, the segmented reduce and the
 * combine passes.
 */
import type { DType } from "../../ir/dtype.js";
import type { KReduceOp, Kernel } from "../../ir/kernel.js";
import { isPositional } from "../../ir/reductions.js";
import { accType, pairBetter, reduceStep, type Accumulator, type LoopTarget } from "../lower-loops.js";
import type { LoopBuilder } from "../loop-builder.js";
import { WGSL_WORKGROUP_SIZE } from "../wgsl-launch.js";

/** The GPU target: float32 accumulation. */
export const WORKGROUP_TARGET: LoopTarget = { accumulation: "float32" };

const W = WGSL_WORKGROUP_SIZE;
/** A positional reduction (argmin/argmax, ir/reductions.ts): its partials are (value, position) pairs. */
export const isArg = isPositional;

/** What a tree or a combine pass keeps per output: its op and accumulator dtype (argmin/argmax: the compared values'). */
export interface PartialOut {
  readonly op: KReduceOp;
  readonly type: DType;
}

/** The partial description of each output of a reducing kernel. */
export function partialOuts(k: Kernel): PartialOut[] {
  return k.outputs.map((out) => ({
    op: out.reduce!,
    type: accType(out.reduce!, k.exprs[out.value]!.dtype, out.dtype, WORKGROUP_TARGET),
  }));
}

/** Dtype of an output's partials: pairs of int32 (value bits, position) for argmin/argmax, else the accumulator's. */
export function partialDType(o: PartialOut): DType {
  return isArg(o.op) ? "int32" : o.type;
}

/** The shared arrays of a workgroup tree: per output its accumulators (and argmin/argmax best values). */
export interface Tree {
  readonly acc: number[];
  readonly best: number[];
}

export function sharedTree(b: LoopBuilder, outs: readonly PartialOut[]): Tree {
  return {
    acc: outs.map((o) => b.sharedArray(isArg(o.op) ? "int32" : o.type, W)),
    best: outs.map((o) => (isArg(o.op) ? b.sharedArray(o.type, W) : -1)),
  };
}

/**
 * Folds the invocations' accumulators of the workgroup in shared memory: afterwards
 * element 0 of each shared array holds the workgroup's result. Every invocation runs it.
 */
export function foldTree(b: LoopBuilder, outs: readonly PartialOut[], accs: readonly Accumulator[], tree: Tree): void {
  const lane = b.let("index", { k: "builtin", name: "lane" });
  outs.forEach((o, j) => {
    const a = accs[j]!;
    if (isArg(o.op)) {
      b.stmt({ k: "sstore", buf: tree.best[j]!, at: lane, value: b.get(a.acc) });
      b.stmt({ k: "sstore", buf: tree.acc[j]!, at: lane, value: b.get(a.arg) });
    } else b.stmt({ k: "sstore", buf: tree.acc[j]!, at: lane, value: b.get(a.acc) });
  });
  b.stmt({ k: "barrier" });
  for (let s = W >> 1; s > 0; s >>= 1) {
    b.when(b.icmp("lt", lane, b.index(s)));
    const other = b.idx("add", lane, b.index(s));
    outs.forEach((o, j) => {
      const sload = (buf: number, at: number, d: DType): number => b.let(d, { k: "sload", buf, at });
      if (isArg(o.op)) {
        const pb = sload(tree.best[j]!, lane, o.type);
        const pi = sload(tree.acc[j]!, lane, "int32");
        const qb = sload(tree.best[j]!, other, o.type);
        const qi = sload(tree.acc[j]!, other, "int32");
        // The upper half's candidate when it is better, or as good and earlier.
        b.when(pairBetter(b, o.op, o.type, qb, qi, pb, pi));
        b.stmt({ k: "sstore", buf: tree.best[j]!, at: lane, value: qb });
        b.stmt({ k: "sstore", buf: tree.acc[j]!, at: lane, value: qi });
        b.end();
      } else {
        const p = sload(tree.acc[j]!, lane, o.type);
        const q = sload(tree.acc[j]!, other, o.type);
        b.stmt({ k: "sstore", buf: tree.acc[j]!, at: lane, value: reduceStep(b, o.op, o.type, p, q) });
      }
    });
    b.end();
    b.stmt({ k: "barrier" });
  }
}

/** Writes a result held in (`best`, `acc`) values as partial `pk` of output j (pairs for argmin/argmax). */
export function storePartial(b: LoopBuilder, o: PartialOut, j: number, pk: number, value: number, arg: number): void {
  if (isArg(o.op)) {
    const two = b.idx("mul", pk, b.index(2));
    b.store(j, two, b.let("int32", { k: "bits", x: value }));
    b.store(j, b.idx("add", two, b.index(1)), arg);
  } else b.store(j, pk, value);
}

/** Folds partial `k` of output j (read from input `buf`) into its accumulator. */
export function foldPartial(b: LoopBuilder, o: PartialOut, a: Accumulator, buf: number, k: number): void {
  if (isArg(o.op)) {
    const two = b.idx("mul", k, b.index(2));
    const qb = b.let(o.type, { k: "bits", x: b.let("int32", { k: "load", buf, at: two }) });
    const qi = b.let("int32", { k: "load", buf, at: b.idx("add", two, b.index(1)) });
    b.when(pairBetter(b, o.op, o.type, qb, qi, b.get(a.acc), b.get(a.arg)));
    b.set(a.acc, qb);
    b.set(a.arg, qi);
    b.end();
  } else b.set(a.acc, reduceStep(b, o.op, o.type, b.get(a.acc), b.let(o.type, { k: "load", buf, at: k })));
}
