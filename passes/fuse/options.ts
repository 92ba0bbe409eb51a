/** The options of fusion (docs/ARCHITECTURE.md, Fusion and the schedule), shared by its parts. */

export interface FuseOptions {
  /** Most storage buffers one kernel may bind (inputs + outputs). */
  readonly maxKernelBuffers: number;
  /** Unroll base loops when the iteration space's base has at most this many elements. */
  readonly unrollLimit: number;
  /** false: every op gets its own kernel and buffer (op-by-op evaluation, for comparison). */
  readonly fusion?: boolean;
  /**
   * The backend can write outputs of different small base shapes from one unrolled
   * kernel (JS). Then a small output that other kernels read is recomputed by them
   * instead of loaded, and written by the same kernel (a determinant and the inverse
   * that divides by it: one kernel, two outputs).
   */
  readonly mixedBaseOutputs?: boolean;
  /** Let kernels keep float32 intermediates at higher precision (see `Kernel.relaxedFloat32`). */
  readonly relaxedFloat32?: boolean;
}

export const DEFAULT_FUSE_OPTIONS: FuseOptions = { maxKernelBuffers: Infinity, unrollLimit: 64 };
