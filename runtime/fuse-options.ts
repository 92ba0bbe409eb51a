/**
 * The fusion options for a backend, built in one place from its capabilities (the jit and
 * eager paths and bundles all derive their schedules with these).
 */
import type { FuseOptions } from "../passes/fuse.js";
import type { BackendCapabilities } from "./backend.js";

/** Base loops are unrolled when the iteration space's base has at most this many elements. */
export const UNROLL_LIMIT = 64;

/** The user's choices that shape the fusion options (see `JitOptions`). */
export interface FuseChoices {
  /** false: op-by-op evaluation, one kernel per op (default true). */
  readonly fusion?: boolean;
  /** "exact": every float32 op rounds; "relaxed" (default): intermediates may stay wider. */
  readonly float32?: "exact" | "relaxed";
}

/** `fuseOptionsFor(backend, { fusion, float32 })`: every field explicit. */
export function fuseOptionsFor(
  backend: Pick<BackendCapabilities, "maxKernelBuffers" | "mixedBaseOutputs">,
  choices: FuseChoices = {},
): Required<FuseOptions> {
  return {
    maxKernelBuffers: backend.maxKernelBuffers,
    unrollLimit: UNROLL_LIMIT,
    fusion: choices.fusion ?? true,
    mixedBaseOutputs: backend.mixedBaseOutputs,
    relaxedFloat32: choices.float32 !== "exact",
  };
}
