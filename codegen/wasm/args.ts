/** The launch arguments of a kernel module: where each sits in the args block. */
import type { LoopProgram } from "../loop.js";

/** Byte offsets of the launch arguments inside the args block. */
export interface ArgsLayout {
  readonly inPtr: (i: number) => number;
  readonly inLen: (i: number) => number;
  readonly outPtr: (i: number) => number;
  readonly size: (i: number) => number;
  readonly stride: (i: number) => number;
  readonly constAt: (slot: number) => number;
  /** Total bytes. */
  readonly bytes: number;
}

/**
 * Launch arguments at the bottom of the memory: int32 words in this order (the backend's
 * dispatch writes them one after another), then the float64 constants, 8-byte aligned.
 */
export function argsLayout(p: Pick<LoopProgram, "inputs" | "outputs" | "sizes" | "strides" | "consts">): ArgsLayout {
  const nIn = p.inputs.length;
  const nOut = p.outputs.length;
  const ints = 2 * nIn + nOut + p.sizes + p.strides;
  const constBase = Math.ceil((ints * 4) / 8) * 8;
  return {
    inPtr: (i) => 8 * i,
    inLen: (i) => 8 * i + 4,
    outPtr: (i) => 8 * nIn + 4 * i,
    size: (i) => 4 * (2 * nIn + nOut + i),
    stride: (i) => 4 * (2 * nIn + nOut + p.sizes + i),
    constAt: (s) => constBase + 8 * s,
    bytes: constBase + 8 * p.consts.length,
  };
}
