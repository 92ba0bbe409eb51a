/**
 * PrimitiveTensor: the base of NEML2's typed tensors, a Tensor whose base
 * shape is fixed by the type.
 *
 * Composition, not subclassing: a typed tensor holds its Tensor in `t`. A
 * subclass of Tensor would inherit ~60 methods whose signatures (`mul(y:
 * Tensor): Tensor`, `reshape`, `sum`, …) either break the static base shape or
 * clash with the typed overloads (`R2.mul(Vec): Vec`), and TypeScript requires
 * an override to stay assignable to the method it overrides. Wrapping keeps
 * the typed API closed (only the operations the type has) while `x.t` is the
 * escape hatch to the untyped Tensor, e.g. for `jit`:
 * ```ts
 * const f = jit((a: Tensor) => new R2(a).inverse().det().t);
 * ```
 */
import { isFloat, type DType } from "../../ir/dtype.js";
import { DTypeError, ShapeError } from "../../ir/errors.js";
import { fmtShape, prod } from "../../ir/types.js";
import { Tensor, type NestedArray } from "../tensor.js";
import { full as fullTensor, MAX_NESTING, tensor as tensorFrom } from "../creation.js";
import { article, checkDType, checkSizes, describe } from "../check.js";
import { batchIndexHost, batchSliceHost, type BatchIndex } from "./host.js";
import type { Scalar } from "./scalar.js";
import { negate } from "./components.js";
import {
  defineInspect,
  formatOptions,
  formatTensor,
  inspectTensor,
  printTensor,
  type FormatOptions,
} from "../format.js";

/** The static side of a typed tensor class: `new (t)` plus its name and base shape. */
export interface PrimitiveClass<T> {
  /** Wraps a tensor whose base shape is the type's. */
  new (t: Tensor): T;
  /** The type's name in messages and `toString`. */
  readonly NAME: string;
  /** The static base shape. */
  readonly BASE: readonly number[];
  /** The dtype of created values when none is given (MillerIndex: int32). */
  readonly DEFAULT_DTYPE: DType;
}

/** Options of the typed constructors (`zeros`, `ones`, `full`, `create`, …). */
export interface TypedOptions {
  /** The dtype (default: the type's `DEFAULT_DTYPE`). */
  readonly dtype?: DType;
}

/** The dtype of typed options (undefined when none is given), checked. */
export function optDType(op: string, opts: TypedOptions | undefined | null): DType | undefined {
  if (opts === undefined || opts === null) return undefined;
  if (typeof opts !== "object" || Array.isArray(opts))
    throw new DTypeError(`${op}: options must be an object, got ${describe(opts)}`);
  return opts.dtype === undefined ? undefined : checkDType(op, opts.dtype);
}

/** Anything a typed operation accepts as a scalar: a Scalar or a JS number. */
export type ScalarLike = Scalar | number;

/** The Tensor behind a typed value or a number (numbers stay numbers: they are weakly typed). */
export function raw(x: { readonly t: Tensor } | number, op = "typed op", name = "y"): Tensor | number {
  if (typeof x === "number") return x;
  const t = typeof x === "object" && x !== null ? (x as { t?: unknown }).t : undefined;
  if (!(t instanceof Tensor)) {
    const hint = x instanceof Tensor ? " (wrap a plain Tensor in its type, e.g. new Scalar(t))" : "";
    throw new DTypeError(`${op}: ${name} must be a typed tensor or a number, got ${describe(x)}${hint}`);
  }
  return t;
}

/**
 * The Tensor behind a scaling factor: a number or a Scalar. Any other typed value is a
 * DTypeError naming `op` (it would broadcast into an elementwise product, a silently wrong
 * answer where the user meant a typed product the type does not have, e.g. SR2·SR2).
 */
export function scalarArg(y: unknown, op: string, self: { readonly constructor: unknown }): Tensor | number {
  const t = raw(y as { readonly t: Tensor } | number, op);
  if (typeof t !== "number" && (y as { constructor: { NAME?: string } }).constructor.NAME !== "Scalar") {
    const name = (self.constructor as { NAME?: string }).NAME ?? "a typed tensor";
    throw new DTypeError(
      `${op}: y must be a Scalar or a number (${name} has no product with ${describe(y)}; for an elementwise product use the tensors, x.t.mul(y.t))`,
    );
  }
  return t;
}

/**
 * Checks a typed argument: `x` must be an instance of one of `types` (a DTypeError
 * naming the op and the argument otherwise). Typed methods read `x.t` right away,
 * so without this a wrong argument would surface as a TypeError deep inside.
 */
export function need(
  op: string,
  name: string,
  x: unknown,
  ...types: readonly (abstract new (...args: never[]) => unknown)[]
): void {
  for (const C of types) if (x instanceof C) return;
  const names = types.map((C) => (C as unknown as { NAME?: string }).NAME ?? C.name);
  throw new DTypeError(
    `${op}: ${name} must be ${names.length === 1 ? `${article(names[0]!)} ${names[0]}` : `one of ${names.join(", ")}`}, got ${describe(x)}`,
  );
}

/** A plain Tensor argument of the component-level helpers. */
export function needTensor(op: string, name: string, x: unknown): void {
  if (!(x instanceof Tensor)) throw new DTypeError(`${op}: ${name} must be a Tensor, got ${describe(x)}`);
}

/**
 * The base of the typed tensors (NEML2's primitive types): a tensor whose base
 * shape is fixed by its type, with the creation, arithmetic and batch operations
 * every type shares. It wraps its Tensor rather than extending it, so only the
 * type's own operations are offered; `x.t` is the untyped Tensor, e.g. to return
 * from `jit`.
 *
 * @example
 * ```ts
 * const f = jit((a: Tensor) => new R2(a).inverse().det().t);
 * ```
 */
export abstract class PrimitiveTensor<Self, Kind extends string = string> {
  /** The dtype of values made without a `dtype` option: float32 unless the type says otherwise (MillerIndex: int32). */
  static readonly DEFAULT_DTYPE: DType = "float32";

  /** The underlying `(batch; base)` tensor. */
  readonly t: Tensor;
  /** A literal tag naming the type (its `NAME`), for narrowing unions of typed tensors. */
  readonly kind: Kind;

  /**
   * Wraps `t`, checked against the type's facts: its base shape must be the type's `BASE`, its
   * dtype a float one (an integer one for a type whose `DEFAULT_DTYPE` is an integer dtype).
   */
  constructor(t: Tensor) {
    const { NAME: name, BASE: base, DEFAULT_DTYPE } = this.cls;
    const integer = !isFloat(DEFAULT_DTYPE);
    if (!(t instanceof Tensor)) throw new DTypeError(`${name}: expected a Tensor, got ${describe(t)}`);
    if (t.baseShape.length !== base.length || t.baseShape.some((d, i) => d !== base[i])) {
      throw new ShapeError(`${name}: expected base (${base.join(",")}), got x ${t.toString()}`);
    }
    if (integer ? isFloat(t.dtype) || t.dtype === "bool" : !isFloat(t.dtype)) {
      throw new DTypeError(
        `${name}: expected ${integer ? "an integer" : "a float"} dtype, got ${t.dtype} for x ${t.toString()}`,
      );
    }
    this.t = t;
    this.kind = name as Kind;
  }

  /** The class of this value: its `NAME`, `BASE` and `DEFAULT_DTYPE`, and `new`. */
  private get cls(): PrimitiveClass<Self> {
    return this.constructor as PrimitiveClass<Self>;
  }

  /** A value of the same type over another tensor. */
  protected make(t: Tensor): Self {
    return new this.cls(t);
  }

  // ---- creation (static, inherited by every type) ----

  /** `R2.zeros([5, 2])` is `(5,2; 3,3)` zeros. */
  static zeros<T>(this: PrimitiveClass<T>, batchShape: readonly number[] = [], opts: TypedOptions = {}): T {
    checkSizes(`${this.NAME}.zeros`, "batchShape", batchShape);
    return new this(
      fullTensor(batchShape, this.BASE, 0, { dtype: optDType(`${this.NAME}.zeros`, opts) ?? this.DEFAULT_DTYPE }),
    );
  }

  /** `R2.ones([5])` is `(5; 3,3)` ones. */
  static ones<T>(this: PrimitiveClass<T>, batchShape: readonly number[] = [], opts: TypedOptions = {}): T {
    checkSizes(`${this.NAME}.ones`, "batchShape", batchShape);
    return new this(
      fullTensor(batchShape, this.BASE, 1, { dtype: optDType(`${this.NAME}.ones`, opts) ?? this.DEFAULT_DTYPE }),
    );
  }

  /** Every component equal to `value`. */
  static full<T>(this: PrimitiveClass<T>, batchShape: readonly number[], value: number, opts: TypedOptions = {}): T {
    checkSizes(`${this.NAME}.full`, "batchShape", batchShape);
    if (typeof value !== "number")
      throw new DTypeError(`${this.NAME}.full: value must be a number, got ${describe(value)}`);
    return new this(
      fullTensor(batchShape, this.BASE, value, { dtype: optDType(`${this.NAME}.full`, opts) ?? this.DEFAULT_DTYPE }),
    );
  }

  /**
   * From nested arrays; the batch dim is inferred as NEML2's `create` does
   * (rank minus the base rank): `Vec.create([[1, 2, 3], [4, 5, 6]])` is `(2; 3)`.
   */
  static create<T>(this: PrimitiveClass<T>, data: NestedArray, opts: TypedOptions = {}): T {
    let rank = 0;
    // Bounded: a cyclic or absurdly deep list is reported by tensor() below.
    for (let p: NestedArray = data; Array.isArray(p) && rank <= MAX_NESTING; p = p[0] as NestedArray) rank++;
    const batchDim = rank - this.BASE.length;
    if (batchDim < 0)
      throw new ShapeError(
        `${this.NAME}.create: data of rank ${rank} is smaller than the base (${this.BASE.join(",")})`,
      );
    return new this(tensorFrom(data, { batchDim, dtype: optDType(`${this.NAME}.create`, opts) ?? this.DEFAULT_DTYPE }));
  }

  // ---- shape ----

  /** The element type. */
  get dtype(): DType {
    return this.t.dtype;
  }
  /** Batch sizes. */
  get batchShape(): readonly number[] {
    return this.t.batchShape;
  }
  /** Number of batch dims. */
  get batchDim(): number {
    return this.t.batchDim;
  }
  /** The static base shape (the type's `BASE`). */
  get baseShape(): readonly number[] {
    return this.t.baseShape;
  }
  /** Product of the base shape (NEML2's `base_storage`). */
  get baseStorage(): number {
    return prod(this.t.baseShape);
  }
  /** `R2(5; 3,3)`. */
  toString(): string {
    return `${this.cls.NAME}${fmtShape(this.t.symbolicBatchShape, this.t.baseShape)}`;
  }

  /** As `Tensor.format`, with the type's name: `R2 float32 (5; 3,3) js` and the values. */
  format(opts?: FormatOptions): string {
    const name = this.cls.NAME;
    return formatTensor(this.t, formatOptions(`${name}.format`, opts), name);
  }

  /** As `Tensor.print`: logs `format({ values: true })`. */
  print(opts?: FormatOptions): Promise<void> {
    return printTensor(this.t, opts, this.cls.NAME);
  }

  // ---- read-back ----

  /** The values as a typed array (row-major, batch dims first). */
  data() {
    return this.t.data();
  }
  /** Synchronous `data`; JS backend only. */
  dataSync() {
    return this.t.dataSync();
  }
  /** The values as nested arrays; JS backend only. */
  toArraySync(): NestedArray {
    return this.t.toArraySync();
  }

  // ---- arithmetic shared by every type (NEML2: prim ⊕ prim, prim ⊕ Scalar, prim ⊕ real) ----

  /** `x + y` with the same type, a Scalar (broadcast over the base) or a number. */
  add(y: Self | ScalarLike): Self {
    return this.make(this.t.add(this.sameOrScalar("add", y)));
  }
  /** `x - y` with the same type, a Scalar (broadcast over the base) or a number. */
  sub(y: Self | ScalarLike): Self {
    return this.make(this.t.sub(this.sameOrScalar("sub", y)));
  }

  /** The operand of `add`/`sub`: a value of this type, a Scalar or a number. */
  private sameOrScalar(op: string, y: unknown): Tensor | number {
    const t = raw(y as { readonly t: Tensor } | number, op);
    if (typeof t !== "number" && t.baseDim !== 0 && (y as object).constructor !== this.constructor) {
      const name = this.cls.NAME;
      throw new DTypeError(
        `${name}.${op}: y must be ${article(name)} ${name}, a Scalar or a number, got ${describe(y)}`,
      );
    }
    return t;
  }
  /** Scaling by a Scalar or a number; typed products are overloads on each type. */
  mul(y: ScalarLike): Self {
    return this.make(this.t.mul(scalarArg(y, `${this.cls.NAME}.mul`, this)));
  }
  /** Division by a Scalar or a number. */
  div(y: ScalarLike): Self {
    return this.make(this.t.div(scalarArg(y, `${this.cls.NAME}.div`, this)));
  }
  /** `-x`. */
  neg(): Self {
    return this.make(negate(this.t));
  }

  // ---- batch shape ops (each sees only the batch block) ----

  /** Broadcasts the batch to `shape` (-1 keeps a dim); the base is untouched. */
  batchExpand(shape: readonly number[]): Self {
    return this.make(this.t.batchExpand(shape));
  }
  /** Reshapes the batch dims (one -1 is inferred); the base is untouched. */
  batchReshape(shape: readonly number[]): Self {
    return this.make(this.t.batchReshape(shape));
  }
  /** Inserts a size-1 batch dim; negative `d` counts from the end of the batch block. */
  batchUnsqueeze(d: number): Self {
    return this.make(this.t.batchUnsqueeze(d));
  }
  /** Sum over batch axes (all by default); the type is kept. */
  batchSum(axes?: number | readonly number[]): Self {
    return this.make(this.t.batchSum(axes));
  }
  /** Mean over batch axes (all by default); the type is kept. */
  batchMean(axes?: number | readonly number[]): Self {
    return this.make(this.t.batchMean(axes));
  }
  /**
   * NumPy-style indexing of the batch block only (ints, `{start,stop,step}`,
   * `null` for a new axis, `"..."`): `(5,3,1,3; 1,7,8)` indexed `[0, "..."]`
   * is `(3,1,3; 1,7,8)`. Runs on the host: eager only.
   */
  batchIndex(indices: readonly BatchIndex[]): Self {
    return this.make(batchIndexHost(this.t, indices));
  }
  /** `start:stop:step` on one batch dim (step must be positive). Eager only, as batchIndex. */
  batchSlice(dim: number, start = 0, stop?: number, step = 1): Self {
    return this.make(batchSliceHost(this.t, dim, start, stop, step));
  }

  // ---- base access ----

  /**
   * Picks base components; the result is an untyped Tensor with the same batch
   * shape (NEML2's `base_index`): `r2.baseIndex(0)` is row 0 `(B; 3)`.
   */
  baseIndex(...idx: number[]): Tensor {
    let x = this.t;
    for (const i of idx) x = x.select(0, i);
    return x;
  }
}

// Node's util.inspect (console.log(x)): format() with the type's name, which computes nothing.
defineInspect<PrimitiveTensor<unknown>>(PrimitiveTensor, (x, depth) =>
  inspectTensor(x.t, depth, (x.constructor as PrimitiveClass<unknown>).NAME),
);
