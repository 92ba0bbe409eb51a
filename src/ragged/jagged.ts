/**
 * Jagged tensors: a batch `(B, ~N)` whose second dim is ragged (row b has N_b
 * entries), any base shape. Stored packed: `values (T; base)` with the rows one
 * after the other, and `offsets (B+1;)` int32, row b being
 * `values[offsets[b] .. offsets[b+1])` (Kaolin's packed form plus first_idx).
 *
 * Ops are lazy IR nodes like every tensor op, so `jit` traces a function of
 * jagged inputs once and runs it on any number of rows and any row lengths.
 */
import { castScalar, type DType } from "../../ir/dtype.js";
import { BackendError, DTypeError, ShapeError } from "../../ir/errors.js";
import { longestRow } from "../../ir/shapes.js";
import { checkElements, describeValue, optionsArg, paddingArg, sideArg, tensorArg } from "./check.js";
import { knownHostValues, onHost } from "./device.js";
import type { SegmentReduceOp } from "../../ir/ops.js";
import type { Backend, BackendName } from "../../runtime/backend.js";
import { fmtShape } from "../../ir/types.js";
import { offsetsProblem } from "../../runtime/program.js";
import { registerJaggedArgKind } from "../args.js";
import { fromTypedArray } from "../creation.js";
import { Tensor } from "../tensor.js";
import { defineInspect, formatJagged } from "../format.js";

/** Options of `JaggedTensor.toPadded`. */
export interface ToPaddedOptions {
  /** Value written outside each row (default 0). */
  readonly paddingValue?: number;
  /**
   * Padded length; default: the longest row, read from the offsets on the host (eagerly
   * now; inside `jit` at every call, so a traced function pads each call to its own longest row).
   */
  readonly maxLength?: number;
  /** Kaolin's spelling of the same: `[maxLength]`, where `-1` means the longest row. */
  readonly maxShape?: readonly number[];
  /** Which end of each row the padding goes to (default `"right"`). */
  readonly paddingSide?: "right" | "left";
}

/** Offsets already checked, with the packed lengths they were checked against (tensors are immutable). */
const checkedOffsets = new WeakMap<Tensor, Set<number>>();

/**
 * A batch `(B, ~N; base)` whose second batch dim is ragged: row b has N_b entries.
 * Stored packed, as `values (T; base)` (the rows one after the other) and int32
 * `offsets (B+1;)`, row b being `values[offsets[b] .. offsets[b+1])`. Its ops are
 * lazy like every tensor op, so `jit` traces a function of jagged inputs once for
 * any number of rows and any row lengths.
 *
 * @example
 * ```ts
 * const x = jagged([tensor([1, 2, 3]), tensor([4, 5])]); // (2, ~N;)
 * x.sum().toArraySync(); // [6, 9]
 * x.toPadded().padded.toArraySync(); // [[1, 2, 3], [4, 5, 0]]
 * ```
 */
export class JaggedTensor {
  /**
   * From packed values `(T; base)` and int32 offsets `(B+1;)`. Offsets must start
   * at 0, never decrease and end at T. Offsets the host can read now (the JS
   * backend, or offsets made from host data by `jagged`, `fromPadded` or the
   * ragged helpers on WebGPU) are checked here; any others (computed lazily, on
   * the device, inside jit) are checked by the program that runs them, on the
   * host, before a segmented kernel reads them (a `ShapeError` when reading the result).
   */
  constructor(
    /** The packed rows `(T; base)`. */
    readonly values: Tensor,
    /** Where each row starts, and T at the end: int32 `(B+1;)`. */
    readonly offsets: Tensor,
  ) {
    tensorArg("jagged", values, "values");
    tensorArg("jagged", offsets, "offsets");
    if (values.batchDim !== 1)
      throw new ShapeError(`jagged: values must be packed (T; base), got values ${values.toString()}`);
    if (offsets.dtype !== "int32")
      throw new DTypeError(
        `jagged: offsets must be int32 (B+1;), got offsets ${offsets.toString()} of dtype ${offsets.dtype}`,
      );
    if (offsets.batchDim !== 1 || offsets.baseDim !== 0)
      throw new ShapeError(
        `jagged: offsets must be int32 (B+1;), got offsets ${offsets.toString()} of dtype ${offsets.dtype}`,
      );
    if (offsets.batchShape[0] === 0)
      throw new ShapeError(`jagged: offsets ${offsets.toString()} have no entries (B rows need B+1)`);
    const o =
      values.batchShape[0]! >= 0 && !checkedOffsets.get(offsets)?.has(values.batchShape[0]!)
        ? knownHostValues(offsets)
        : undefined;
    if (o !== undefined) {
      const T = values.batchShape[0]!;
      const problem = offsetsProblem(o, T);
      if (problem !== undefined)
        throw new ShapeError(
          `jagged: offsets ${offsets.toString()} ${problem} (values ${values.toString()}); offsets must start at 0, never decrease and end at ${T}`,
        );
      const seen = checkedOffsets.get(offsets) ?? new Set<number>();
      seen.add(T);
      checkedOffsets.set(offsets, seen);
    }
  }

  /** The element type (of the values). */
  get dtype(): DType {
    return this.values.dtype;
  }
  /** The base shape (of the values). */
  get baseShape(): readonly number[] {
    return this.values.baseShape;
  }
  /** Number of rows B (-1 inside `jit`). */
  get rows(): number {
    const r = this.offsets.batchShape[0]!;
    return r < 0 ? -1 : r - 1;
  }

  /** `(B, ~N; base)`. */
  toString(): string {
    return fmtShape([this.rows < 0 ? "B" : this.rows, "~N"], this.baseShape);
  }

  /** Row lengths, int32 `(B;)`. */
  get lengths(): Tensor {
    // A count reads no values: any packed (T;) view of them will do.
    const per = this.baseShape.reduce((a, b) => a * b, 1);
    const packed = per === 0 ? this.values.sum() : this.values.reshape([per]).select(0, 0);
    return Tensor._op("segment_reduce", [packed, this.offsets], { op: "count" });
  }

  private reduceRows(op: SegmentReduceOp): Tensor {
    return Tensor._op("segment_reduce", [this.values, this.offsets], { op });
  }

  /** Per-row sum over the ragged dim: `(B; base)`. */
  sum(): Tensor {
    return this.reduceRows("sum");
  }
  /** Per-row mean (NaN for an empty row). */
  mean(): Tensor {
    return this.reduceRows("mean");
  }
  /** Per-row maximum: `(B; base)`. */
  max(): Tensor {
    return this.reduceRows("max");
  }
  /** Per-row minimum: `(B; base)`. */
  min(): Tensor {
    return this.reduceRows("min");
  }
  /** Position of each row's largest value inside the row (0 for an empty row), int32. */
  argmax(): Tensor {
    return this.reduceRows("argmax");
  }
  /** The row length at every base point, int32 `(B; base)` (see `lengths` for `(B;)`). */
  count(): Tensor {
    return this.reduceRows("count");
  }

  /**
   * A copy on another backend (`Tensor.to` on the values and the offsets): the same
   * jagged tensor when both already live there.
   */
  async to(backend: Backend | BackendName): Promise<JaggedTensor> {
    const values = await this.values.to(backend);
    const offsets = await this.offsets.to(backend);
    return values === this.values && offsets === this.offsets ? this : new JaggedTensor(values, offsets);
  }

  /** Applies an elementwise function to the values; the rows stay as they are. */
  map(fn: (values: Tensor) => Tensor): JaggedTensor {
    if (typeof fn !== "function")
      throw new DTypeError(`jagged.map: fn must be a function, got ${describeValue(fn)} (x ${this.toString()})`);
    const v = fn(this.values);
    if (!(v instanceof Tensor))
      throw new DTypeError(
        `jagged.map: the function must return a Tensor, got ${describeValue(v)} from ${this.values.toString()}`,
      );
    if (v.batchDim !== 1)
      throw new ShapeError(
        `jagged.map: the function must keep the packed batch dim, got ${v.toString()} from ${this.values.toString()}`,
      );
    return new JaggedTensor(v, this.offsets);
  }

  /**
   * The other operand, lined up with the packed values: a jagged tensor with the same
   * offsets, a per-row tensor `(B; …)` (broadcast over each row, as tileToPacked does),
   * an unbatched tensor `(; …)`, or a number.
   */
  private operand(op: string, y: JaggedTensor | Tensor | number): Tensor | number {
    if (typeof y === "number") return y;
    if (!(y instanceof JaggedTensor) && !(y instanceof Tensor))
      throw new DTypeError(
        `jagged ${op}: y must be a JaggedTensor, a Tensor or a number, got ${describeValue(y)} (x ${this.toString()})`,
      );
    if (y instanceof JaggedTensor) {
      if (y.offsets !== this.offsets)
        throw new ShapeError(
          `jagged ${op}: both operands must share one offsets tensor; x ${this.toString()}, y ${y.toString()}`,
        );
      return y.values;
    }
    if (y.batchDim === 0) return y;
    if (y.batchDim !== 1) throw new ShapeError(`jagged ${op}: y ${y.toString()} must be per-row (B; …) or unbatched`);
    return Tensor._op("segment_expand", [y, this.offsets, this.values]);
  }

  /**
   * `x + y` on the values, keeping the rows: `y` is a jagged tensor with the same
   * offsets, a per-row tensor `(B; …)` (broadcast over each row), an unbatched
   * tensor or a number.
   */
  add(y: JaggedTensor | Tensor | number): JaggedTensor {
    return new JaggedTensor(this.values.add(this.operand("add", y)), this.offsets);
  }
  /** `x - y`, with `y` as in `add`. */
  sub(y: JaggedTensor | Tensor | number): JaggedTensor {
    return new JaggedTensor(this.values.sub(this.operand("sub", y)), this.offsets);
  }
  /** `x * y`, with `y` as in `add`. */
  mul(y: JaggedTensor | Tensor | number): JaggedTensor {
    return new JaggedTensor(this.values.mul(this.operand("mul", y)), this.offsets);
  }
  /** `x / y`, with `y` as in `add`. */
  div(y: JaggedTensor | Tensor | number): JaggedTensor {
    return new JaggedTensor(this.values.div(this.operand("div", y)), this.offsets);
  }
  /** The larger of `x` and `y`, with `y` as in `add`. */
  maximum(y: JaggedTensor | Tensor | number): JaggedTensor {
    return new JaggedTensor(this.values.maximum(this.operand("maximum", y)), this.offsets);
  }
  /** The smaller of `x` and `y`, with `y` as in `add`. */
  minimum(y: JaggedTensor | Tensor | number): JaggedTensor {
    return new JaggedTensor(this.values.minimum(this.operand("minimum", y)), this.offsets);
  }

  /**
   * Pads every row to `maxLength` (default: the longest row): `padded (B, maxN; base)`
   * and a bool `mask (B, maxN)` true on real entries. Rows longer than maxLength are
   * cut (eagerly that is an error, as Kaolin's fill_max_shape).
   */
  toPadded(options?: ToPaddedOptions): {
    /** The rows padded to one length: `(B, maxN; base)`. */
    padded: Tensor;
    /** True on real entries, false on padding: bool `(B, maxN)`. */
    mask: Tensor;
  } {
    const opts: ToPaddedOptions = optionsArg("jagged.toPadded", options);
    const left = sideArg("jagged.toPadded", opts.paddingSide) === "left";
    let maxN = opts.maxLength;
    if (opts.maxShape !== undefined) {
      const ms = opts.maxShape;
      if (!Array.isArray(ms) || ms.length !== 1 || !Number.isInteger(ms[0]) || ms[0]! < -1) {
        throw new ShapeError(
          `jagged.toPadded: maxShape must be [n] (n >= 0, or -1 for the longest row) for the one ragged dim of ${this.toString()}, got ${Array.isArray(ms) ? `[${ms.join(",")}]` : describeValue(ms)}`,
        );
      }
      if (maxN !== undefined && ms[0] !== -1 && ms[0] !== maxN)
        throw new ShapeError(`jagged.toPadded: maxShape [${ms[0]}] and maxLength ${maxN} disagree`);
      if (ms[0] !== -1) maxN = ms[0]!;
    }
    const known = knownHostValues(this.offsets);
    if (maxN === undefined) {
      if (this.offsets._src.kind === "param") {
        // Inside jit: -1 pads to the longest row, read from the offsets at each call.
        maxN = -1;
      } else if (known !== undefined) {
        maxN = longestRow(known);
      } else {
        throw new BackendError(
          `jagged.toPadded: the longest row of ${this.toString()} is read from its offsets on the host, which the ${this.offsets._src.kind === "buffer" ? this.offsets._src.backend.name : "lazy"} offsets cannot give synchronously; give maxLength, or call toPadded inside jit`,
        );
      }
    } else if (typeof maxN !== "number" || !Number.isInteger(maxN) || maxN < 0) {
      throw new ShapeError(
        `jagged.toPadded: maxLength must be a non-negative integer, got ${describeValue(maxN)} for ${this.toString()}`,
      );
    } else if (known !== undefined) {
      const m = longestRow(known);
      if (maxN < m) throw new ShapeError(`jagged.toPadded: maxLength ${maxN} is smaller than the longest row (${m})`);
    }
    if (maxN >= 0 && this.rows >= 0)
      checkElements(
        "jagged.toPadded",
        this.rows * maxN * this.baseShape.reduce((x, y) => x * y, 1),
        `padded ${fmtShape([this.rows, maxN], this.baseShape)}`,
      );
    const value = castScalar(paddingArg("jagged.toPadded", opts.paddingValue), this.dtype);
    return {
      padded: Tensor._op("segment_pad", [this.values, this.offsets], { maxN, value, left }),
      mask: Tensor._op("segment_mask", [this.offsets], { maxN, left }),
    };
  }

  /**
   * The rows of a right-padded `(B, M; base)` tensor, cut to this tensor's row
   * lengths: the inverse of `toPadded()` (positions past M read 0). Works inside `jit`.
   */
  unpad(padded: Tensor): JaggedTensor {
    tensorArg("jagged.unpad", padded, "padded");
    return new JaggedTensor(Tensor._op("segment_unpad", [padded, this.offsets, this.values]), this.offsets);
  }

  /**
   * The rows as separate tensors `(N_b; base)`: host copies on the JS backend; on
   * WebGPU lazy batch slices of the values (the offsets must be host-known, see the
   * constructor).
   */
  toList(): Tensor[] {
    const known = knownHostValues(this.offsets);
    if (known !== undefined && !onHost(this.values)) {
      return Array.from({ length: known.length - 1 }, (_, b) => this.values.batchSlice(0, known[b]!, known[b + 1]!));
    }
    const v = this.values.dataSync();
    const o = this.offsets.dataSync();
    // Offsets read here feed no segmented kernel, so no program has checked them.
    const problem = offsetsProblem(o, this.values.batchShape[0]!);
    if (problem !== undefined)
      throw new ShapeError(
        `jagged.toList: offsets ${this.offsets.toString()} ${problem} (values ${this.values.toString()}); offsets must start at 0, never decrease and end at the number of packed values`,
      );
    const per = this.baseShape.reduce((a, b) => a * b, 1);
    const out: Tensor[] = [];
    for (let b = 0; b + 1 < o.length; b++) {
      out.push(
        fromTypedArray(v.slice(o[b]! * per, o[b + 1]! * per), [o[b + 1]! - o[b]!, ...this.baseShape], {
          batchDim: 1,
          dtype: this.values.dtype,
        }),
      );
    }
    return out;
  }
}

// Node's util.inspect (console.log(j)): the shape, then values and offsets as Tensor.format shows them.
defineInspect(JaggedTensor, (j) => formatJagged(j, undefined));

// Compiled functions and bundles take and return jagged tensors once this module is loaded (src/args.ts).
registerJaggedArgKind({
  is: (a): a is JaggedTensor => a instanceof JaggedTensor,
  make: (values, offsets) => new JaggedTensor(values, offsets),
});
