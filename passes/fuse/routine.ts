/**
 * Routine kernels (looped matrix routines, the `routine` op): each gets a kernel of
 * its own over its batch, reading its inputs from buffers (placement gives them
 * one) and writing its output block per batch element (see `KernelRoutine` in
 * ir/kernel.ts).
 */
import { isFloat } from "../../ir/dtype.js";
import { UnsupportedOpError } from "../../ir/errors.js";
import type { Node, NodeOf } from "../../ir/graph.js";
import type { Kernel } from "../../ir/kernel.js";
import type { Step } from "../../ir/schedule.js";
import type { FuseOptions } from "./options.js";

/** Whether `n` runs as a routine kernel. */
export const isRoutine = (n: Node): n is NodeOf<"routine"> => n.op === "routine";

/** The kernel step of a routine node. */
export function buildRoutineKernel(n: NodeOf<"routine">, opts: FuseOptions): Step & { kind: "kernel" } {
  const dtype = n.type.dtype;
  if (dtype === "bool" || (n.attrs.name !== "sort" && !isFloat(dtype)))
    throw new UnsupportedOpError(`fuse: routine ${n.attrs.name} on ${dtype}`);
  const x = n.inputs[0]!;
  const kernel: Kernel = {
    batchRank: n.type.batch.length,
    baseShape: n.type.base,
    reduce: null,
    inputs: n.inputs.map((i) => ({ dtype: i.type.dtype, batchRank: i.type.batch.length, baseShape: i.type.base })),
    outputs: [{ dtype, value: 0, reduce: null }],
    exprs: [{ k: "load", input: 0, index: x.type.base.map(() => ({ k: "const", v: 0 })), dtype: x.type.dtype }],
    unroll: false,
    routine: { name: n.attrs.name, sweeps: n.attrs.arg, cols: n.attrs.arg },
    ...(opts.relaxedFloat32 ? { relaxedFloat32: true } : {}),
  };
  return { kind: "kernel", kernel, inputs: n.inputs, outputs: [n], space: n };
}
