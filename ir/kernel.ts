/**
 * Kernel IR: what the fusion pass produces and what every code generator reads.
 *
 * A kernel is a loop nest over an iteration space `batch × base`:
 *  - the batch part has `batchRank` dims whose sizes are known only at run time;
 *  - the base part has the static shape `baseShape`.
 * Each output element evaluates a scalar expression DAG (`exprs`, in SSA order).
 * A reduction kernel additionally names the space axes it reduces (`reduce`): those
 * axes become inner loops and each output combines the values of its expression
 * over them. Outputs are written contiguously over the non-reduced axes (batch
 * axes first, then base axes, row-major), so `keepdim` is only a logical reshape.
 *
 * Inputs are contiguous row-major buffers. An input's batch dims align with the
 * space's batch dims from the right; its batch strides are run-time launch
 * arguments (0 for a size-1 dim that is broadcast). Its base dims are static and
 * its base index is given per load as index expressions over the space's base
 * axis variables. Nothing in a kernel depends on a batch size, so one compiled
 * kernel serves every batch size (docs/ARCHITECTURE.md, Kernels).
 */
import { intRange, isFloat, isUnsigned, type DType } from "./dtype.js";
import { canonicalKey } from "./key.js";
import type { RoutineName } from "./routines.js";

/** An integer index expression over the base axis variables of the iteration space. */
export type IndexExpr =
  | { readonly k: "var"; readonly axis: number }
  | { readonly k: "const"; readonly v: number }
  | { readonly k: "add" | "mul" | "div" | "mod"; readonly a: IndexExpr; readonly b: IndexExpr };

// The elementwise op unions are derived from the op-facts table.
export type { KBinaryOp, KUnaryOp } from "./elementwise.js";
import type { KBinaryOp, KUnaryOp } from "./elementwise.js";

// The reduction union is derived from the reduction-facts table.
export type { KReduceOp } from "./reductions.js";
import type { KReduceOp } from "./reductions.js";

/**
 * One SSA value of a kernel body. Operand fields (`x`, `a`, `b`, `c`) are indices
 * into `Kernel.exprs` and always point backwards. `dtype` is the result dtype.
 * Binary operands share one dtype (the graph inserts casts); comparisons and
 * logical ops give `bool`, whose values are 0 or 1.
 */
export type KExpr =
  | { readonly k: "load"; readonly input: number; readonly index: readonly IndexExpr[]; readonly dtype: DType }
  | { readonly k: "const"; readonly value: number; readonly dtype: DType }
  | { readonly k: "unary"; readonly op: KUnaryOp; readonly x: number; readonly dtype: DType }
  | { readonly k: "binary"; readonly op: KBinaryOp; readonly a: number; readonly b: number; readonly dtype: DType }
  | { readonly k: "where"; readonly c: number; readonly a: number; readonly b: number; readonly dtype: DType }
  | { readonly k: "cast"; readonly x: number; readonly dtype: DType }
  /**
   * A small reduction inlined into an element's expression: combines `xs` in order
   * exactly as a reduction would (sum and mean accumulate in float64 from 0, then
   * round once to `dtype`; mean divides by the count). argmin/argmax never appear here.
   */
  | { readonly k: "combine"; readonly op: KReduceOp; readonly xs: readonly number[]; readonly dtype: DType }
  /** `index < bound ? a : b`: picks a concatenated piece; the branch not taken may index out of range. */
  | {
      readonly k: "select";
      readonly index: IndexExpr;
      readonly bound: number;
      readonly a: number;
      readonly b: number;
      readonly dtype: DType;
    }
  /**
   * A data-dependent load (the `take` op): input `input` at `index`, except on base
   * axis `axis` (whose entry in `index` is ignored), read at the int32 value `pos`
   * (an expr): p = pos < 0 ? pos + n : pos, n the axis size. When p is outside
   * [0, n) the result is `takeFill(dtype)` and nothing is read: no target may
   * read out of range, whatever the index data.
   */
  | {
      readonly k: "gather";
      readonly input: number;
      readonly index: readonly IndexExpr[];
      readonly axis: number;
      readonly pos: number;
      readonly dtype: DType;
    }
  /** Pad kernels only: whether the current padded position holds an entry of the row (bool). */
  | { readonly k: "inside"; readonly dtype: "bool" };

export interface KernelInput {
  /**
   * Segmented kernels only: the buffer is packed (its one batch dim is indexed by
   * the position t inside the current row's segment, not by the row).
   */
  readonly packed?: boolean;
  /**
   * Segmented kernels only: the buffer is right-padded (B, M; base), read at row b,
   * position t - offsets[b]; positions >= M read 0. Its launch strides are the plain
   * row-major ones (never 0 for a size-1 dim), so M = stride0 / stride1.
   */
  readonly padded?: boolean;
  readonly dtype: DType;
  /** Batch rank of the buffer; its dims align with the space's last `batchRank` batch dims. */
  readonly batchRank: number;
  /** Static base shape of the buffer (contiguous, row-major). */
  readonly baseShape: readonly number[];
}

export interface KernelOutput {
  readonly dtype: DType;
  /** Index into `exprs` of the value this output stores (or reduces). */
  readonly value: number;
  /** The combining op when the kernel reduces; null for elementwise kernels. */
  readonly reduce: KReduceOp | null;
  /**
   * Elementwise, fully unrolled kernels only: this output's own base shape when it
   * differs from the kernel's (its value is indexed by its own base axes).
   */
  readonly baseShape?: readonly number[];
}

/**
 * A segmented kernel runs over the rows of a jagged tensor. Its space has one
 * batch dim, the rows b; the launch's batch size is the offsets' length B+1.
 * Row b's segment is t in [offsets[b], offsets[b+1]); packed inputs are read at t.
 * - reduce: each output (per row and base point) combines the segment's values
 *   (argmax gives the position inside the segment; count is a sum of ones);
 * - map: one output element per packed position t, written in order of t;
 * - pad: output (B, maxN; base): one element per row b and padded position n in
 *   [0, maxN). Positions [start, start+len) hold the row's entries, start = left ?
 *   maxN-len : 0, len = min(segment length, maxN); there the `inside` expr is true
 *   and packed inputs are read at t = offsets[b] + n - start (elsewhere at
 *   offsets[b], so in range for a non-empty row). The output expression decides what
 *   padding positions hold (a `where` on `inside`), so elementwise consumers of a
 *   padded tensor and its mask fuse into the pad kernel. `maxN: -1` pads to the
 *   longest row, passed at launch as a second batch size.
 */
export interface Segment {
  readonly offsets: number;
  readonly mode: "reduce" | "map" | "pad";
  readonly maxN?: number;
  readonly left?: boolean;
}

// --- scatter kernels ---

/**
 * A scatter kernel (the `scatter` op, a functional update). Its inputs are exactly
 * [x, idx, upd], three buffers; its space is the output's `batch × x's base` and
 * its one output has x's dtype. Its one expr loads x at the space's base index
 * (the copy), which output 0 stores. Per batch element, the kernel copies x's base
 * block to the output, then walks the update shape (x's base with base axis `axis`
 * replaced by idx's base) in row-major order: each element's int32 index i gives
 * the position p = i < 0 ? i + n : i on the axis (n its size); an index outside
 * [0, n) after that wrap is dropped; otherwise output (…, p, …) := old `mode` upd
 * (set: upd; add, mul; min and max propagate NaN), reading the output back as this
 * launch last stored it. upd's base dims broadcast to the update shape (size-1 dims
 * read index 0). Sequential targets run batch elements one after another; the
 * workgroup target copies in one pass (an invocation per element) and updates in
 * passes of a chunk of update positions (an invocation per batch element, in
 * order), so duplicate positions combine in update order on every target.
 */
export interface ScatterSpec {
  readonly axis: number;
  readonly mode: "set" | "add" | "mul" | "min" | "max";
}
// --- looped matrix routines ---
/**
 * A routine kernel (the `routine` op, ir/routines.ts): one run of the routine per
 * batch element of the space, reading its inputs' base matrices and writing its
 * output's base block, which it also reads back as scratch (`oload`). Its `exprs`
 * hold one load of input 0 (the output's nominal value; the routine, not the
 * expressions, says what is stored), `reduce` is null and `unroll` false.
 */
export interface KernelRoutine {
  readonly name: RoutineName;
  /** Jacobi sweeps (eigh, svd); 0 for the others. */
  readonly sweeps: number;
  /** qr: Q's columns; sort: 1 for descending order; 0 for the others (lu_solve reads its right-hand-side columns from input 1). */
  readonly cols: number;
}
// --- end looped matrix routines ---

export interface Kernel {
  /** Present on scatter kernels (the `scatter` op); see `ScatterSpec`. */
  readonly scatter?: ScatterSpec;
  /** Present on segmented kernels (ragged ops), which have batchRank 1. */
  readonly segment?: Segment;
  /** Present on routine kernels (looped matrix routines; see `KernelRoutine`). */
  readonly routine?: KernelRoutine;
  readonly batchRank: number;
  readonly baseShape: readonly number[];
  /** Space axes reduced by every output of this kernel; null for an elementwise kernel. */
  readonly reduce: { readonly batchAxes: readonly number[]; readonly baseAxes: readonly number[] } | null;
  readonly inputs: readonly KernelInput[];
  readonly outputs: readonly KernelOutput[];
  readonly exprs: readonly KExpr[];
  /**
   * float32 intermediates may be kept at higher precision and rounded only when
   * stored (faster on the JS backend; not bit-identical to op-by-op evaluation).
   */
  readonly relaxedFloat32?: boolean;
  /** Scheduler's decision: emit the base loops fully unrolled (straight-line code per batch element). */
  readonly unroll: boolean;
  /** When not fully unrolled: base axes a backend may still unroll (small ones). */
  readonly unrollAxes?: readonly number[];
}

/** Number of batch sizes a launch passes: the space's, plus the run-time padded length of a `maxN: -1` pad/mask kernel. */
export function launchRank(kernel: Kernel): number {
  return kernel.batchRank + (kernel.segment?.maxN === -1 ? 1 : 0);
}

/**
 * Run-time arguments of one launch: the space's batch sizes, and for each input its
 * batch strides in elements (one per input batch dim, 0 where it broadcasts).
 */
export interface Launch {
  readonly batchSizes: readonly number[];
  readonly inputBatchStrides: readonly (readonly number[])[];
  /**
   * The values of the kernel's `const` exprs, in expr order (see `kernelConsts`).
   * A compiled kernel serves every kernel that differs only in these values, so the
   * program executor always passes them; when absent (a direct backend call), the
   * values in the IR of the kernel that was compiled are used.
   */
  readonly consts?: Float64Array;
}

/**
 * The value `take` gives for an index outside [-n, n): JAX's default fill
 * (`mode="fill"`): NaN for floats, the most negative value of a signed integer
 * dtype, the largest of an unsigned one, true for bool.
 */
export function takeFill(dtype: DType): number {
  if (dtype === "bool") return 1;
  if (isFloat(dtype)) return NaN;
  const [lo, hi] = intRange(dtype);
  return isUnsigned(dtype) ? hi : lo;
}

// ---- index expression constructors (fold constants as they build) ----

export const ix = {
  v(axis: number): IndexExpr {
    return { k: "var", axis };
  },
  c(v: number): IndexExpr {
    return { k: "const", v };
  },
  add(a: IndexExpr, b: IndexExpr): IndexExpr {
    if (a.k === "const" && b.k === "const") return ix.c(a.v + b.v);
    if (a.k === "const" && a.v === 0) return b;
    if (b.k === "const" && b.v === 0) return a;
    return { k: "add", a, b };
  },
  mul(a: IndexExpr, b: IndexExpr): IndexExpr {
    if (a.k === "const" && b.k === "const") return ix.c(a.v * b.v);
    if ((a.k === "const" && a.v === 0) || (b.k === "const" && b.v === 0)) return ix.c(0);
    if (a.k === "const" && a.v === 1) return b;
    if (b.k === "const" && b.v === 1) return a;
    return { k: "mul", a, b };
  },
  /** Floor division of a non-negative index by a positive constant. */
  div(a: IndexExpr, b: IndexExpr): IndexExpr {
    if (a.k === "const" && b.k === "const") return ix.c(Math.floor(a.v / b.v));
    if (b.k === "const" && b.v === 1) return a;
    return { k: "div", a, b };
  },
  mod(a: IndexExpr, b: IndexExpr): IndexExpr {
    if (a.k === "const" && b.k === "const") return ix.c(a.v % b.v);
    if (b.k === "const" && b.v === 1) return ix.c(0);
    return { k: "mod", a, b };
  },
};

/** Substitutes constants for axis variables (used when a scheduler unrolls base loops). */
export function evalIndex(e: IndexExpr, vars: readonly number[]): number {
  switch (e.k) {
    case "var":
      return vars[e.axis]!;
    case "const":
      return e.v;
    case "add":
      return evalIndex(e.a, vars) + evalIndex(e.b, vars);
    case "mul":
      return evalIndex(e.a, vars) * evalIndex(e.b, vars);
    case "div":
      return Math.floor(evalIndex(e.a, vars) / evalIndex(e.b, vars));
    case "mod":
      return evalIndex(e.a, vars) % evalIndex(e.b, vars);
  }
}

/** Row-major strides of a static shape. */
export function contiguousStrides(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length);
  let acc = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    s[i] = acc;
    acc *= shape[i]!;
  }
  return s;
}

export function numel(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/**
 * A structural key: equal kernels (structure, base shapes, dtypes) give equal keys,
 * and different ones different keys (canonical encoding, see ir/key.ts). The values
 * of `const` exprs are left out: code generators read them as launch arguments
 * (`Launch.consts`), so kernels that differ only in constant values share one
 * compiled kernel. Index constants, bounds and every other field stay in the key.
 */
export function kernelKey(k: Kernel): string {
  const exprs = k.exprs.map((e) => (e.k === "const" ? { k: "const", dtype: e.dtype } : e));
  return canonicalKey({ ...k, exprs });
}

/**
 * The values of a kernel's `const` exprs in expr order: slot `i` holds the i-th
 * const expr (see `constSlots`). Passed at every launch, bit-exact.
 */
export function kernelConsts(k: Kernel): Float64Array {
  const out: number[] = [];
  for (const e of k.exprs) if (e.k === "const") out.push(e.value);
  return Float64Array.from(out);
}

/** Per expr index: its slot among the const launch arguments, or -1 for other exprs. */
export function constSlots(k: Kernel): number[] {
  let n = 0;
  return k.exprs.map((e) => (e.k === "const" ? n++ : -1));
}
