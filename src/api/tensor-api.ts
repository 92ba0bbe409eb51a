/**
 * Comparisons and small ops on plain tensors (NumPy/PyTorch/NEML2 semantics):
 * `isClose`, `allClose`, `allEqual`, `cross`, `heaviside`, `macaulay`,
 * `baseStorage`, `batchPermute`, `batchTranspose`.
 *
 * They are Tensor methods, installed on `Tensor.prototype` by the full entry
 * (`src/index.ts` calls `installTensorApi()`, as it installs the compiler), so
 * that the lean `batchwise/runtime` entry, which only runs bundles, does not
 * carry them. Each is a composition of existing ops, so it works inside `jit`
 * (except the batch permutations: the IR has no op that moves symbolic batch dims).
 */
import { isFloat, promote } from "../../ir/dtype.js";
import { DTypeError, ShapeError, TraceError } from "../../ir/errors.js";
import { prod } from "../../ir/types.js";
import { asCalled, describe } from "../check.js";
import { tensor } from "../creation.js";
import { baseIndex, batchIndexList, indexList, resolveBaseIndex, type IndexList } from "../select/index-list.js";
import { booleanMask } from "../select/mask.js";
import { baseStack, Tensor, weakConst, where, type NestedArray } from "../tensor.js";
import { installTensorOps } from "./tensor-ops.js";

/** Options of `isClose` and `allClose` (NumPy's and PyTorch's defaults). */
export interface CloseOptions {
  /** Relative tolerance (default 1e-5). */
  readonly rtol?: number;
  /** Absolute tolerance (default 1e-8). */
  readonly atol?: number;
  /** NaN is close to NaN (default false). */
  readonly equalNan?: boolean;
}

declare module "../tensor.js" {
  interface Tensor {
    /**
     * Elementwise `|x - y| <= atol + rtol·|y|` (NumPy's and PyTorch's `isclose`,
     * defaults `rtol = 1e-5`, `atol = 1e-8`), broadcast; a bool tensor. Equal
     * infinities are close, an infinity and a finite value are not, and NaN is
     * close to nothing unless `equalNan` (then NaN is close to NaN). Computed in the
     * promoted float dtype (integers and bool in float32), as NumPy computes float32
     * inputs in float32.
     */
    isClose(y: Tensor | number, opts?: CloseOptions): Tensor;
    /**
     * Whether every element of `isClose(y, opts)` holds (NumPy's `allclose`): a bool
     * `(;)` tensor, true for empty tensors, so it works inside `jit`; read it with
     * `itemSync() === 1` or `await t.data()`.
     */
    allClose(y: Tensor | number, opts?: CloseOptions): Tensor;
    /**
     * Whether the two tensors have the same `(batch; base)` shape and equal values
     * (NumPy's `array_equal`, PyTorch's `equal`): a bool `(;)` tensor. Different
     * shapes give false (no broadcasting); values compare after dtype promotion
     * (`1 == 1.0`); NaN equals nothing unless `equalNan`. Inside `jit`, batch dims
     * must be the same symbols or both concrete.
     */
    allEqual(y: Tensor, opts?: { readonly equalNan?: boolean }): Tensor;
    /**
     * The cross product along base axis `dim` (default -1, the last), which must
     * have size 3 in both operands (NumPy's `cross`, PyTorch's `linalg.cross`);
     * the other dims broadcast, batch and base, and `dim` counts in the broadcast
     * base. Components are `a₁b₂ - a₂b₁`, `a₂b₀ - a₀b₂`, `a₀b₁ - a₁b₀` (so ±Inf and
     * NaN spread as in that formula). Bool computes in int32.
     */
    cross(y: Tensor, dim?: number): Tensor;
    /**
     * NumPy's `heaviside(x, values)`: 0 where x < 0, `values` where x == 0 (±0),
     * 1 where x > 0, NaN where x is NaN. `values` (a tensor or a number)
     * broadcasts. Integers and bool compute in float32.
     */
    heaviside(values: Tensor | number): Tensor;
    /**
     * The Macaulay bracket `⟨x⟩ = max(x, 0)` (NEML2's `macaulay`, as `Scalar.macaulay`):
     * x where x > 0, else 0; NaN stays NaN, -Inf gives 0, -0 gives +0.
     */
    macaulay(): Tensor;
    /** Product of the base shape (NEML2's `base_storage`): the elements of one batch entry. */
    readonly baseStorage: number;
    /**
     * Reorders the batch dims only (NEML2's `batch_permute`, PyTorch's `permute` on
     * the batch block); the base is untouched: `(2,3; 4).batchPermute(1, 0)` is
     * `(3,2; 4)`. Needs concrete batch sizes (eager tensors): the IR has no op that
     * moves symbolic batch dims, so inside `jit` it is a TraceError.
     */
    batchPermute(...perm: number[]): Tensor;
    /** Swaps two batch dims (NEML2's `batch_transpose`); eager only, as `batchPermute`. */
    batchTranspose(a: number, b: number): Tensor;
    // --- indexing (take) ---
    /**
     * Integer-array indexing on one base axis (NumPy's `np.take(x, idx, axis)`,
     * Open3D's `IndexGet` on one axis): base axis `axis` (default 0, negative
     * counts from the end) is replaced by the base dims of `idx`, an int32 tensor
     * (or nested numbers, or one number, which removes the axis); batch dims
     * broadcast, so each batch element may have its own indices. `x (B; 4, 3)` with
     * `idx (B; 5)` and `axis 0` gives `(B; 5, 3)`. A negative index counts from the
     * end once (-1 is the last); an index outside [-n, n) gives JAX's default fill
     * (`mode="fill"`): NaN for floats, -2147483648 for int32, 4294967295 for
     * uint32, true for bool. It never reads out of range, and works inside `jit`.
     *
     * @example
     * ```ts
     * tensor([4, 3, 5, 7, 6, 8]).take([0, 1, 4]).toArraySync(); // [4, 3, 6]
     * ```
     */
    take(idx: Tensor | NestedArray | number, axis?: number): Tensor;
    // --- indexing (index lists) ---
    /**
     * NumPy-style indexing of the base dims (NEML2's `base_index`, NumPy's `x[..., list]`
     * on the base): one item per base dim, plus `"..."` and `null` (see `IndexItem`).
     * Integers remove a dim (negative counts from the end, out of range is a
     * ShapeError); slices (`sl(start, stop, step)`, `{ start, stop, step }`, `"1::2"`,
     * negative steps included) keep it; integer or boolean arrays and int Tensors are
     * advanced indices with NumPy's rules (they broadcast together; their dims go where
     * the first one was when they are adjacent, else in front of the base). The batch
     * dims are untouched, and an int Tensor index's batch dims broadcast against them
     * (each batch element may use its own indices; out of range gives `take`'s fill).
     * Works inside `jit` (except boolean Tensors, whose values set the shape).
     *
     * @example
     * ```ts
     * const x = tensor([[0, 1, 2], [3, 4, 5]]); // (;2,3)
     * x.baseIndex([sl(), [2, 0]]).toArraySync(); // [[2, 0], [5, 3]]
     * x.baseIndex([-1, "::-1"]).toArraySync(); // [5, 4, 3]
     * ```
     */
    baseIndex(list: IndexList): Tensor;
    /**
     * NumPy-style indexing of the batch dims (NEML2's `batch_index`): `list` as in
     * `baseIndex`, over the batch dims; the base is untouched. Inside `jit` (symbolic
     * sizes) integers (negative too), slices with a positive step and non-negative bounds,
     * negative-step slices that start at the end (`"::-1"`, `"-2::-2"`), `"..."`, `null`
     * and one 1-D array of integers (as block copies, where NumPy leaves its dim in place)
     * work; a slice's stop past the size is a ShapeError at the call there (it cannot be
     * clamped while tracing). Other advanced indices need concrete batch sizes (a
     * TraceError inside `jit`). An int Tensor index is read by its whole shape.
     * `batchIndex(axis, i)` (two numbers) still picks one index.
     */
    batchIndex(list: IndexList): Tensor;
    /**
     * NumPy's `x[list]` over the whole shape (`x.shape`: batch dims, then base dims).
     * The result's batch dims are the dims that the items on batch dims give (an
     * item after the last batch dim, `null` included, is on the base); the advanced
     * block (see `baseIndex`) is part of the base when every array index is on a base
     * dim and the block lands after the batch dims, else part of the batch. Inside
     * `jit` the batch part takes what `batchIndex` takes there, and the block must be
     * part of the base; otherwise a TraceError (use `batchIndex` and `baseIndex`).
     *
     * @example
     * ```ts
     * const x = tensor([[0, 1, 2], [3, 4, 5]], { batchDim: 1 }); // (2; 3)
     * x.index(["::-1", [0, 2]]).toArraySync(); // [[3, 5], [0, 2]], shape (2; 2)
     * ```
     */
    index(list: IndexList): Tensor;
    // --- updates (scatter) ---
    /**
     * Functional updates, as JAX's `x.at[idx]`: `x.at(idx, axis).set(v)`, `.add(v)`,
     * `.mul(v)`, `.min(v)`, `.max(v)` return a new tensor (x is unchanged), `.get()`
     * reads (`take`). `idx` selects positions on base axis `axis` (default 0,
     * negative counts from the end): an int32 tensor, nested integers or one
     * integer, as `take`; or `{ flat: idx }`, positions in x's base taken as one
     * flat row-major vector; or a bool mask (a tensor or nested booleans) that
     * broadcasts to x, for masked assignment (`where`; its `get` is `booleanMask`).
     * `v` (a tensor or a number, cast to x's dtype) broadcasts to what
     * `x.at(idx, axis).get()` gives. Rules: a negative index counts from the end
     * once; an index outside [-n, n) is dropped (JAX's `mode="drop"`); duplicate
     * indices combine in row-major order of the index tensor, deterministically on
     * every backend (add, mul, min and max accumulate; for set the last write wins;
     * min and max propagate NaN); batch dims of x, idx and v broadcast. Works
     * inside `jit` (the `scatter` IR op).
     *
     * @example
     * ```ts
     * zeros([], [4]).at([0, 2, 0]).add(1).toArraySync(); // [2, 0, 1, 0]
     * ```
     */
    at(idx: AtIndex, axis?: number): TensorAt;
    /**
     * Functional updates at the positions a base index list selects (the update
     * form of `x.baseIndex(list)`, as JAX's `x.at[1, 0:2, [1, 2]]` on the base):
     * `.set(v)`, `.add(v)`, `.mul(v)`, `.min(v)`, `.max(v)`, `.get()` with the rules
     * of `x.at` (v broadcasts to what `x.baseIndex(list)` gives; duplicates combine
     * in order; int Tensor entries out of range are dropped). The list is resolved to
     * flat base positions once (`resolveBaseIndex`), so it works inside `jit` wherever
     * `baseIndex` does.
     *
     * @example
     * ```ts
     * zeros([], [2, 3]).atIndex([1, sl(0, 2)]).set(7).toArraySync(); // [[0, 0, 0], [7, 7, 0]]
     * ```
     */
    atIndex(list: IndexList): TensorAt;
  }
}

/**
 * What `x.at(idx)` takes: positions on one base axis (an int32 tensor, nested
 * integers, one integer), flat row-major positions over the whole base
 * (`{ flat }`), or a bool mask that broadcasts to x.
 */
export type AtIndex =
  | Tensor
  | NestedArray
  | number
  | {
      /** Positions in x's base read as one flat row-major vector (int32, as a base-axis index). */
      readonly flat: Tensor | NestedArray | number;
    };

/** The updates of `x.at(idx, axis)` (JAX's `x.at[idx]`); each returns a new tensor of x's shape and dtype. */
export interface TensorAt {
  /** The selected values (`take`; with a mask, `booleanMask`, eager only). */
  get(): Tensor;
  /** x with the selected positions replaced by `v` (duplicates: the last write wins). */
  set(v: Tensor | number): Tensor;
  /** x with `v` added at the selected positions (duplicates accumulate). */
  add(v: Tensor | number): Tensor;
  /** x with the selected positions multiplied by `v` (duplicates accumulate). */
  mul(v: Tensor | number): Tensor;
  /** x with the selected positions replaced by their minimum with `v` (NaN propagates). */
  min(v: Tensor | number): Tensor;
  /** x with the selected positions replaced by their maximum with `v` (NaN propagates). */
  max(v: Tensor | number): Tensor;
}

function normAxis(op: string, axis: unknown, rank: number, what: "batch" | "base", t: Tensor): number {
  if (typeof axis !== "number" || !Number.isInteger(axis))
    throw new ShapeError(`${op}: ${what} axis must be an integer, got ${describe(axis)} for x ${t.toString()}`);
  const a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) throw new ShapeError(`${op}: ${what} axis ${axis} is out of range for x ${t.toString()}`);
  return a;
}

function checkOperand(op: string, name: string, v: unknown, x: Tensor): void {
  if (typeof v !== "number" && !(v instanceof Tensor))
    throw new DTypeError(`${op}: ${name} must be a Tensor or a number, got ${describe(v)} (x ${x.toString()})`);
}

function boolOption(op: string, name: string, opts: unknown, dflt: boolean): boolean {
  if (opts === undefined || opts === null) return dflt;
  if (typeof opts !== "object" || Array.isArray(opts))
    throw new DTypeError(`${op}: options must be an object, got ${describe(opts)}`);
  const v: unknown = (opts as Record<string, unknown>)[name];
  if (v === undefined) return dflt;
  if (typeof v !== "boolean") throw new DTypeError(`${op}: ${name} must be true or false, got ${describe(v)}`);
  return v;
}

function closeArgs(
  op: string,
  x: Tensor,
  y: unknown,
  opts: CloseOptions | undefined,
): { a: Tensor; b: Tensor; rtol: number; atol: number; equalNan: boolean } {
  checkOperand(op, "y", y, x);
  const equalNan = boolOption(op, "equalNan", opts, false);
  const tol = (name: "rtol" | "atol", dflt: number): number => {
    const v: unknown = opts?.[name];
    if (v === undefined) return dflt;
    if (typeof v !== "number" || Number.isNaN(v) || v < 0)
      throw new DTypeError(`${op}: ${name} must be a number >= 0, got ${describe(v)} (x ${x.toString()})`);
    return v;
  };
  const rtol = tol("rtol", 1e-5);
  const atol = tol("atol", 1e-8);
  let dt = y instanceof Tensor ? promote(x.dtype, y.dtype) : x.dtype;
  if (!isFloat(dt)) dt = "float32";
  const b = y instanceof Tensor ? y.cast(dt) : Tensor._const(y as number, dt);
  return { a: x.cast(dt), b, rtol, atol, equalNan };
}

/** `all` over every batch and base axis at once: a bool `(;)`, true when empty. */
function allOf(t: Tensor): Tensor {
  if (t.rank === 0) return t;
  return Tensor._op("all", [t], {
    batchAxes: [...Array(t.batchDim).keys()],
    baseAxes: [...Array(t.baseDim).keys()],
    keep: false,
  });
}

function isClose(this: Tensor, y: Tensor | number, opts?: CloseOptions): Tensor {
  const { a, b, rtol, atol, equalNan } = closeArgs("isClose", this, y, opts);
  // |a - b| <= atol + rtol·|b| needs a finite b; a == b covers equal infinities.
  let close = a.sub(b).abs().le(b.abs().mul(rtol).add(atol)).logicalAnd(b.isFinite()).logicalOr(a.eq(b));
  if (equalNan) close = close.logicalOr(a.isNan().logicalAnd(b.isNan()));
  return close;
}

function allEqual(this: Tensor, y: Tensor, opts?: { readonly equalNan?: boolean }): Tensor {
  if (!(y instanceof Tensor))
    throw new DTypeError(`allEqual: y must be a Tensor, got ${describe(y)} (x ${this.toString()})`);
  const equalNan = boolOption("allEqual", "equalNan", opts, false);
  const xb = this.symbolicBatchShape;
  const yb = y.symbolicBatchShape;
  if (this.batchDim !== y.batchDim || this.baseDim !== y.baseDim || this.baseShape.some((d, i) => d !== y.baseShape[i]))
    return Tensor._const(0, "bool");
  for (let i = 0; i < xb.length; i++) {
    if (xb[i] === yb[i]) continue;
    if (typeof xb[i] === "number" && typeof yb[i] === "number") return Tensor._const(0, "bool");
    throw new TraceError(
      `allEqual: x ${this.toString()} and y ${y.toString()} have batch dim ${i} of sizes known only at run time, so whether the shapes match is data; compare them outside jit or give both the same batch size`,
    );
  }
  let eq = this.eq(y);
  if (equalNan) eq = eq.logicalOr(this.isNan().logicalAnd(y.isNan()));
  return allOf(eq);
}

function cross(this: Tensor, y: Tensor, dim = -1): Tensor {
  if (!(y instanceof Tensor))
    throw new DTypeError(`cross: y must be a Tensor, got ${describe(y)} (x ${this.toString()})`);
  const rank = Math.max(this.baseDim, y.baseDim);
  const d = normAxis("cross", dim, rank, "base", this.baseDim >= y.baseDim ? this : y);
  const axisOf = (t: Tensor, name: string): number => {
    const a = d - (rank - t.baseDim);
    if (a < 0 || t.baseShape[a] !== 3)
      throw new ShapeError(
        `cross: base dim ${dim} must have size 3 in x and y, got x ${this.toString()} and y ${y.toString()} (${name} has ${a < 0 ? "no such dim" : `size ${t.baseShape[a]}`})`,
      );
    return a;
  };
  const ax = axisOf(this, "x");
  const ay = axisOf(y, "y");
  let dt = promote(this.dtype, y.dtype);
  if (dt === "bool") dt = "int32";
  const a = [0, 1, 2].map((i) => this.cast(dt).select(ax, i));
  const b = [0, 1, 2].map((i) => y.cast(dt).select(ay, i));
  const c = [
    a[1]!.mul(b[2]!).sub(a[2]!.mul(b[1]!)),
    a[2]!.mul(b[0]!).sub(a[0]!.mul(b[2]!)),
    a[0]!.mul(b[1]!).sub(a[1]!.mul(b[0]!)),
  ];
  return baseStack(c, d);
}

function heaviside(this: Tensor, values: Tensor | number): Tensor {
  checkOperand("heaviside", "values", values, this);
  let dt = typeof values === "number" ? this.dtype : promote(this.dtype, values.dtype);
  if (!isFloat(dt)) dt = "float32";
  const x = this.cast(dt);
  const v = typeof values === "number" ? Tensor._const(values, dt) : values.cast(dt);
  return where(x.isNan(), x, where(x.lt(0), 0, where(x.gt(0), 1, v)));
}

function batchPermute(this: Tensor, ...perm: number[]): Tensor {
  const n = this.batchDim;
  const p = perm.map((a) => normAxis("batchPermute", a, n, "batch", this));
  if (p.length !== n || new Set(p).size !== n)
    throw new ShapeError(
      `batchPermute: (${perm.join(",")}) is not a permutation of the ${n} batch dims of x ${this.toString()}`,
    );
  if (p.every((a, i) => a === i)) return this;
  if (this.symbolicBatchShape.some((d) => typeof d !== "number"))
    throw new TraceError(
      `batchPermute: x ${this.toString()} is traced; reordering symbolic batch dims needs a batch permute op, which the IR does not have yet (permute before jit)`,
    );
  // Every dim is static here: move the batch into the base, permute there, and split again.
  const all = this.rebatch(0);
  return all.permute(...p, ...Array.from({ length: this.baseDim }, (_, i) => n + i)).rebatch(n);
}

function batchTranspose(this: Tensor, a: number, b: number): Tensor {
  const n = this.batchDim;
  const i = normAxis("batchTranspose", a, n, "batch", this);
  const j = normAxis("batchTranspose", b, n, "batch", this);
  const perm = [...Array(n).keys()];
  perm[i] = j;
  perm[j] = i;
  return this.batchPermute(...perm);
}

/** `x.take(idx, axis)`: see its declaration above. */
function take(this: Tensor, idx: Tensor | NestedArray | number, axis: number = 0): Tensor {
  const a = normAxis("take", axis, this.baseDim, "base", this);
  let ind: Tensor;
  if (idx instanceof Tensor) ind = idx;
  else if (typeof idx === "number" || Array.isArray(idx)) ind = tensor(idx as NestedArray, { dtype: "int32" });
  else
    throw new DTypeError(
      `take: idx must be a Tensor, nested numbers or a number, got ${describe(idx)} (x ${this.toString()})`,
    );
  return Tensor._op("take", [this, ind], { axis: a });
}

// --- updates (scatter) ---

type UpdateMode = "set" | "add" | "mul" | "min" | "max";

/** An index argument as an int32 tensor, or a bool mask; anything else is a typed error. */
function indexTensor(op: string, idx: unknown, x: Tensor): Tensor {
  if (idx instanceof Tensor) {
    if (idx.dtype === "int32" || idx.dtype === "bool") return idx;
    // Other integer dtypes are exact in int32; uint32 above 2^31 - 1 would wrap, floats are not indices.
    if (isFloat(idx.dtype) || idx.dtype === "uint32")
      throw new DTypeError(
        `${op}: idx ${idx.toString()} of dtype ${idx.dtype} must be int32 (or a bool mask) for x ${x.toString()}`,
      );
    return idx.cast("int32");
  }
  if (typeof idx === "number" || typeof idx === "boolean" || Array.isArray(idx)) {
    const flat = [idx].flat(Infinity) as unknown[];
    if (flat.length > 0 && flat.every((v) => typeof v === "boolean")) return tensor(idx as NestedArray);
    for (const v of flat)
      if (typeof v !== "number" || !Number.isInteger(v))
        throw new DTypeError(
          `${op}: idx must hold integers (or booleans, a mask), got ${describe(v)} for x ${x.toString()}`,
        );
    return tensor(idx as NestedArray, { dtype: "int32" });
  }
  throw new DTypeError(
    `${op}: idx must be a Tensor, nested numbers, a number or { flat }, got ${describe(idx)} (x ${x.toString()})`,
  );
}

/** The updates of `x.at(...)`: `idx` int32 on base `axis`, or a bool `mask`. */
class At implements TensorAt {
  constructor(
    private readonly x: Tensor,
    private readonly idx: Tensor,
    private readonly axis: number,
    private readonly flat: boolean,
  ) {}

  private get what(): string {
    return this.flat ? "at({ flat })" : this.idx.dtype === "bool" ? "at(mask)" : "at(idx)";
  }

  get(): Tensor {
    const { x, idx } = this;
    if (idx.dtype === "bool") return booleanMask(x, idx);
    if (this.flat) return x.reshape([x.baseStorage]).take(idx, 0);
    return x.take(idx, this.axis);
  }
  set(v: Tensor | number): Tensor {
    return this.update("set", v);
  }
  add(v: Tensor | number): Tensor {
    return this.update("add", v);
  }
  mul(v: Tensor | number): Tensor {
    return this.update("mul", v);
  }
  min(v: Tensor | number): Tensor {
    return this.update("min", v);
  }
  max(v: Tensor | number): Tensor {
    return this.update("max", v);
  }

  private update(mode: UpdateMode, v: Tensor | number): Tensor {
    const { x, idx } = this;
    const op = `${this.what}.${mode}`;
    if (typeof v !== "number" && !(v instanceof Tensor))
      throw new DTypeError(`${op}: v must be a Tensor or a number, got ${describe(v)} (x ${x.toString()})`);
    if (mode !== "set" && x.dtype === "bool")
      throw new DTypeError(`${op}: x ${x.toString()} is bool; only set is defined on bool`);
    const u = typeof v === "number" ? weakConst(op, "v", v, x.dtype, x) : v.cast(x.dtype);
    if (idx.dtype === "bool") {
      // Masked assignment: where(mask, x <mode> v, x), of x's shape; errors name at(mask).<mode>.
      const r = asCalled(op, () => {
        const next =
          mode === "set"
            ? u
            : mode === "add"
              ? x.add(u)
              : mode === "mul"
                ? x.mul(u)
                : mode === "min"
                  ? x.minimum(u)
                  : x.maximum(u);
        return where(idx, next, x);
      });
      if (r.toString() !== x.toString())
        throw new ShapeError(
          `${op}: the mask ${idx.toString()} and v ${u.toString()} must broadcast to x ${x.toString()}, got ${r.toString()}`,
        );
      return r;
    }
    // Errors of the scatter op name at(idx).<mode> / at({ flat }).<mode>.
    if (this.flat) {
      const flatX = x.reshape([x.baseStorage]);
      return asCalled(op, () => Tensor._op("scatter", [flatX, idx, u], { axis: 0, mode })).reshape([...x.baseShape]);
    }
    return asCalled(op, () => Tensor._op("scatter", [x, idx, u], { axis: this.axis, mode }));
  }
}

/** `x.at(idx, axis)`: see its declaration above. */
function at(this: Tensor, idx: AtIndex, axis?: number): TensorAt {
  if (idx !== null && typeof idx === "object" && !(idx instanceof Tensor) && !Array.isArray(idx)) {
    if (!("flat" in idx))
      throw new DTypeError(
        `at: idx must be a Tensor, nested numbers, a number or { flat }, got ${describe(idx)} (x ${this.toString()})`,
      );
    if (axis !== undefined)
      throw new ShapeError(`at({ flat }): positions are over the whole base of x ${this.toString()}; no axis`);
    const f = indexTensor("at({ flat })", idx.flat, this);
    if (f.dtype === "bool")
      throw new DTypeError(`at({ flat }): flat positions must be int32, not a bool mask (x ${this.toString()})`);
    return new At(this, f, 0, true);
  }
  const ind = indexTensor("at", idx, this);
  if (ind.dtype === "bool") {
    if (axis !== undefined) throw new ShapeError(`at(mask): a mask covers the whole of x ${this.toString()}; no axis`);
    return new At(this, ind, 0, false);
  }
  return new At(this, ind, normAxis("at", axis ?? 0, this.baseDim, "base", this), false);
}

/** Installs the methods above on `Tensor.prototype` (the full entry calls it once; repeated calls do nothing more). */
export function installTensorApi(): void {
  // batchIndex(axis, i), wrapped below, and the methods these call.
  installTensorOps();
  const P = Tensor.prototype;
  if (Object.hasOwn(P, "isClose")) return;
  const methods = {
    isClose,
    allClose(this: Tensor, y: Tensor | number, opts?: CloseOptions): Tensor {
      return allOf(this.isClose(y, opts));
    },
    allEqual,
    cross,
    heaviside,
    macaulay(this: Tensor): Tensor {
      return this.maximum(0);
    },
    batchPermute,
    batchTranspose,
    take,
    at,
  };
  for (const [name, fn] of Object.entries(methods))
    Object.defineProperty(P, name, { value: fn, writable: true, configurable: true, enumerable: false });
  // --- indexing (index lists) ---
  const batchIndexAt: (this: Tensor, axis: number, i: number) => Tensor = P.batchIndex;
  const lists = {
    baseIndex(this: Tensor, list: IndexList): Tensor {
      return baseIndex(this, list);
    },
    batchIndex(this: Tensor, a: IndexList | number, i?: number): Tensor {
      return Array.isArray(a) ? batchIndexList(this, a) : batchIndexAt.call(this, a as number, i as number);
    },
    index(this: Tensor, list: IndexList): Tensor {
      return indexList(this, list);
    },
    atIndex(this: Tensor, list: IndexList): TensorAt {
      return this.at({ flat: resolveBaseIndex(this, list).flat });
    },
  };
  for (const [name, fn] of Object.entries(lists))
    Object.defineProperty(P, name, { value: fn, writable: true, configurable: true, enumerable: false });
  Object.defineProperty(P, "baseStorage", {
    get(this: Tensor): number {
      return prod(this.baseShape);
    },
    configurable: true,
    enumerable: false,
  });
}
