/**
 * Derivatives as graph transformations, with JAX's names and semantics:
 * `grad`, `valueAndGrad`, `vjp`, `jvp`, `jacfwd`, `jacrev`, `jacobian`,
 * `hessian`.
 *
 * The function is called on the arguments once; the ops it records (lazy
 * tensors) are then differentiated by the rules of `ir/derivatives.ts`, which
 * record more lazy ops. So a derivative is an ordinary pending graph: eager
 * reads compile it, `jit` traces it once for every batch size, bundles ship it,
 * and the passes simplify and fuse it like any other graph. Nothing is taped at
 * run time.
 *
 * Batch elements are independent samples (NEML2's convention): for `f` mapping
 * `(B; n)` to `(B; m)`, `jacobian(f)(x)` is the per-sample Jacobian `(B; m, n)`,
 * and `grad` of an `(…;)` result is the gradient of each sample's value (for a
 * `(;)` loss, the usual gradient) shaped like its argument, batch dims included.
 */
import { jvpValues, vjpValues as vjpSweep, type Source } from "../ir/derivative-transforms.js";
import { Diff, type Builder, type Lin } from "../ir/diff.js";
import { noteReverseSweep } from "./trace-flags.js";
import { DTypeError, ShapeError, TraceError } from "../ir/errors.js";
import { isFloat } from "../ir/dtype.js";
import { SEGMENT_OPS, type Attrs, type Op } from "../ir/ops.js";
import { isReduceOp } from "../ir/reductions.js";
import { fmtTypeShape, prod, type TensorType } from "../ir/types.js";
import { describe } from "./check.js";
import { Tensor } from "./tensor.js";
import { argKind } from "./args.js";
import { flatten as flattenTree, unflatten, type TreeBuild, type TreePath, type TypedKind } from "./tree.js";
import type { JaggedTensor } from "./ragged/jagged.js";
import type { TensorDict } from "./tensordict/tensordict.js";
// Loaded for their registered kinds (argKind): the derivatives take jagged tensors and TensorDicts.
import "./ragged/jagged.js";
import "./tensordict/tensordict.js";
import { PrimitiveTensor, type PrimitiveClass } from "./typed/base.js";
import { R2 } from "./typed/r2.js";
import { SSR4 } from "./typed/ssr4.js";
import { R3, R4, SFR3, SWR4, WSR4, WWR4, SSSSR8 } from "./typed/higher.js";

/** Every reverse-mode sweep, counted so that `jit` knows its trace holds one (src/trace-flags.ts). */
const vjpValues: typeof vjpSweep = (...a) => {
  noteReverseSweep();
  return vjpSweep(...a);
};

/** What the transforms differentiate: a tensor, a typed tensor, a jagged tensor (its values), a TensorDict (each entry), or an array of these. */
export type Differentiable = Tensor | PrimitiveTensor<unknown> | JaggedTensor | TensorDict | readonly Differentiable[];

/** The gradient's type: the type of the argument `N` (an array of them for an array of argnums). */
export type GradOf<A extends unknown[], N> = N extends number
  ? A[N]
  : { -readonly [K in keyof N]: N[K] extends number ? A[N[K]] : never };

/**
 * What the Jacobian transforms return: a tensor or typed tensor (SR2 by SR2 is
 * an SSR4, …) for one result and one argument, else the result's structure of
 * the arguments' structures. Cast to the type you expect (`as SSR4`).
 */
export type Jacobian = Tensor | PrimitiveTensor<unknown> | JaggedTensor | TensorDict | readonly Jacobian[];

/** Options of `grad`, `valueAndGrad`, `jacfwd`, `jacrev`, `jacobian` and `hessian`. */
export interface GradOptions {
  /** Which positional argument(s) to differentiate with respect to (default 0); an array gives an array of results. */
  readonly argnums?: number | readonly number[];
}

// ---------------------------------------------------------------------------
// The rules on lazy tensors.

const BUILDER: Builder<Tensor> = {
  make: (op: Op, inputs: readonly Tensor[], attrs?: Attrs) => Tensor._op(op, inputs, attrs ?? {}),
  typeOf: (t) => t._type,
};

/**
 * The ops behind `outputs` as recorded when `f` returned: reading a value later
 * turns a lazy tensor into a buffer, which must not cut the derivative's path
 * (`vjp`'s pullback runs after the caller may have read the result).
 */
function snapshot(outputs: readonly Tensor[]): Source<Tensor> {
  const defs = new Map<Tensor, { op: Op; inputs: readonly Tensor[]; attrs: Attrs }>();
  const stack = [...outputs];
  while (stack.length > 0) {
    const t = stack.pop()!;
    if (defs.has(t) || t._src.kind !== "lazy") continue;
    defs.set(t, t._src);
    for (const i of t._src.inputs) if (!defs.has(i)) stack.push(i);
  }
  return { def: (t) => defs.get(t) };
}

/** A fresh leaf standing for `x` (a no-op reshape, removed by the passes), so uses of `x` captured by `f` stay constant. */
function leafOf(x: Tensor): Tensor {
  return Tensor._op("reshape", [x], { shape: x._type.base });
}

// ---------------------------------------------------------------------------
// Structures (JAX's pytrees, src/tree.ts): flatten to tensors and rebuild.

interface Flat {
  readonly leaves: Tensor[];
  /**
   * Rebuilds the structure from one value per leaf (tensors, or anything for nested results).
   * `jacobian`: typed leaves keep the value as it is (a Jacobian block is not of the leaf's type;
   * `typedJacobian` gives it its own class).
   */
  readonly build: (vals: readonly unknown[], jacobian?: boolean) => unknown;
  /** The typed class of a single typed leaf (undefined: a plain tensor or a structure). */
  readonly typed?: PrimitiveClass<PrimitiveTensor<unknown>>;
}

/** `what`, then the path into it: `[i]` for an array element, `["a.b"]` for a TensorDict entry (its keys joined). */
function whereOf(what: string, path: TreePath): string {
  let out = what;
  for (let i = 0; i < path.length;) {
    const p = path[i]!;
    if (typeof p === "number") {
      out += `[${p}]`;
      i++;
      continue;
    }
    const keys: string[] = [];
    while (i < path.length && typeof path[i] === "string") keys.push(path[i++] as string);
    out += `[${JSON.stringify(keys.join("."))}]`;
  }
  return out;
}

const TYPED: TypedKind = {
  is: (a): a is PrimitiveTensor<unknown> => a instanceof PrimitiveTensor,
  classOf: (a) => a.constructor as PrimitiveClass<PrimitiveTensor<unknown>>,
};

function flatten(op: string, what: string, x: unknown): Flat {
  // Jagged tensors vary by their values; their offsets stay. TensorDicts by every entry.
  const { leaves, def } = flattenTree(x, {
    isLeaf: (a): a is Tensor => a instanceof Tensor,
    arrays: true,
    typed: TYPED,
    jagged: { kind: argKind("jagged", op), split: "values" },
    dict: argKind("dict", op),
    reject: (a, path) =>
      new DTypeError(
        `${op}: ${whereOf(what, path)} must be a Tensor, a typed tensor, a JaggedTensor, a TensorDict or an array of these, got ${describe(a)}`,
      ),
  });
  const build: TreeBuild = { jagged: argKind("jagged", op), dict: argKind("dict", op) };
  const buildJac: TreeBuild = { ...build, keepTyped: true };
  return {
    leaves,
    build: (v, jac) => unflatten(def, v, jac === true ? buildJac : build),
    ...(def.kind === "typed" ? { typed: def.cls } : {}),
  };
}

function argnumsOf(op: string, opts: GradOptions | undefined, nargs: number): { nums: number[]; many: boolean } {
  const a: unknown = opts?.argnums ?? 0;
  const many = Array.isArray(a);
  const nums = (many ? a : [a]) as unknown[];
  for (const n of nums) {
    if (typeof n !== "number" || !Number.isInteger(n) || n < -nargs || n >= nargs)
      throw new ShapeError(`${op}: argnums ${describe(n)} is not the index of one of the ${nargs} arguments`);
  }
  return { nums: nums.map((n) => ((n as number) < 0 ? (n as number) + nargs : (n as number))), many };
}

function checkFn(op: string, f: unknown): void {
  if (typeof f !== "function") throw new DTypeError(`${op}: f must be a function, got ${describe(f)}`);
}

/** Calls `f` with the differentiated arguments replaced by fresh leaves. */
interface Traced {
  readonly ins: Flat[];
  /** The leaves of each differentiated argument, in order. */
  readonly leaves: Tensor[][];
  readonly out: Flat;
  readonly outValue: unknown;
  /** The recorded ops behind the result. */
  readonly src: Source<Tensor>;
}

function call(op: string, f: (...a: never[]) => unknown, args: readonly unknown[], nums: readonly number[]): Traced {
  const ins: Flat[] = [];
  const leaves: Tensor[][] = [];
  const callArgs = [...args];
  for (const n of nums) {
    const fl = flatten(op, `argument ${n}`, args[n]);
    const ls = fl.leaves.map(leafOf);
    ins.push(fl);
    leaves.push(ls);
    callArgs[n] = fl.build(ls);
  }
  const outValue = f(...(callArgs as never[]));
  const out = flatten(op, "the result of f", outValue);
  return { ins, leaves, out, outValue, src: snapshot(out.leaves) };
}

/** A derivative value as a tensor of `like`'s type (zeros for the symbolic zero), full batch. */
function materialize(d: Diff<Tensor>, v: Lin<Tensor>, like: Tensor): Tensor {
  const t = like._type;
  return d.full(d.fit(v, t) ?? d.zeros(t), t, like);
}

/** The one-hot constant `e_j` of base `shape` (batch `()`: the same direction for every sample). */
function oneHot(d: Diff<Tensor>, t: TensorType, j: number): Tensor {
  const n = prod(t.base);
  const data = new Array<number>(n).fill(0);
  data[j] = 1;
  return d.constant(t.base, data, t.dtype);
}

// ---------------------------------------------------------------------------
// The API.

/**
 * Forward mode (JAX's `jax.jvp`): `[f(...primals), J·tangents]`, the
 * directional derivative of `f` at `primals` along `tangents` (structured like
 * the primals; a tangent's batch shape may be smaller than its primal's and
 * broadcasts).
 *
 * @example
 * ```ts
 * const [y, dy] = jvp((x: Tensor) => x.sin(), [x], [ones([4], [], { dtype: "float64" })]);
 * ```
 */
export function jvp<R extends Differentiable>(
  f: (...args: never[]) => R,
  primals: readonly Differentiable[],
  tangents: readonly Differentiable[],
): [R, R] {
  checkFn("jvp", f);
  if (!Array.isArray(primals) || !Array.isArray(tangents) || primals.length !== tangents.length)
    throw new ShapeError(`jvp: primals and tangents must be arrays of the same length`);
  const nums = primals.map((_, i) => i);
  const tr = call("jvp", f, primals, nums);
  const d = new Diff(BUILDER);
  const seeds = new Map<Tensor, Lin<Tensor>>();
  tr.leaves.forEach((ls, i) => {
    const tf = flatten("jvp", `tangent ${i}`, tangents[i]);
    if (tf.leaves.length !== ls.length)
      throw new ShapeError(`jvp: tangent ${i} does not have the structure of primal ${i}`);
    ls.forEach((l, k) => {
      const t = tf.leaves[k]!;
      if (t._type.base.join(",") !== l._type.base.join(",") || t.dtype !== l.dtype)
        throw new ShapeError(
          `jvp: tangent ${i} ${fmtTypeShape(t._type)} ${t.dtype} does not match primal ${i} ${fmtTypeShape(l._type)} ${l.dtype}`,
        );
      seeds.set(l, t);
    });
  });
  const outs = jvpValues(d, tr.src, tr.out.leaves, seeds);
  const touts = outs.map((t, i) => materialize(d, t, tr.out.leaves[i]!));
  return [tr.outValue as R, tr.out.build(touts) as R];
}

/**
 * Reverse mode (JAX's `jax.vjp`): `[f(...primals), vjpFn]`, where
 * `vjpFn(cotangent)` (structured like the result) returns the cotangents of all
 * primals, `uᵀ·J`, in an array.
 */
export function vjp<R extends Differentiable>(
  f: (...args: never[]) => R,
  ...primals: Differentiable[]
): [R, (cotangent: R) => Differentiable[]] {
  checkFn("vjp", f);
  const nums = primals.map((_, i) => i);
  const tr = call("vjp", f, primals, nums);
  const d = new Diff(BUILDER);
  const all = tr.leaves.flat();
  const back = (ct: R): Differentiable[] => {
    const cf = flatten("vjp", "the cotangent", ct);
    if (cf.leaves.length !== tr.out.leaves.length)
      throw new ShapeError(`vjp: the cotangent does not have the structure of the result`);
    cf.leaves.forEach((c, i) => {
      const o = tr.out.leaves[i]!;
      if (c._type.base.join(",") !== o._type.base.join(","))
        throw new ShapeError(
          `vjp: cotangent ${fmtTypeShape(c._type)} does not match the result ${fmtTypeShape(o._type)}`,
        );
    });
    const gs = vjpValues(d, tr.src, tr.out.leaves, cf.leaves, all);
    let k = 0;
    return tr.leaves.map((ls, i) => {
      const vals = ls.map((l) => materialize(d, gs[k++]!, l));
      return tr.ins[i]!.build(vals) as Differentiable;
    });
  };
  return [tr.outValue as R, back];
}

function gradImpl(op: string, f: (...a: never[]) => unknown, args: readonly unknown[], opts: GradOptions | undefined) {
  const { nums, many } = argnumsOf(op, opts, args.length);
  const tr = call(op, f, args, nums);
  if (tr.out.leaves.length !== 1 || tr.out.leaves[0]!._type.base.length !== 0) {
    const o = tr.out.leaves[0];
    throw new ShapeError(
      `${op}: f must return one tensor with an empty base (a (;) loss, or (B;) per-sample values), got ${o === undefined || tr.out.leaves.length !== 1 ? `${tr.out.leaves.length} tensors` : fmtTypeShape(o._type)}`,
    );
  }
  const y = tr.out.leaves[0]!;
  if (!isFloat(y.dtype))
    throw new DTypeError(`${op}: f must return a float tensor, got ${y.dtype} ${fmtTypeShape(y._type)}`);
  const d = new Diff(BUILDER);
  const all = tr.leaves.flat();
  const gs = vjpValues(d, tr.src, [y], [d.scalar(1, y.dtype)], all);
  let k = 0;
  const res = tr.leaves.map((ls, i) => tr.ins[i]!.build(ls.map((l) => materialize(d, gs[k++]!, l))));
  return { value: tr.outValue, grad: many ? res : res[0] };
}

/**
 * The gradient of `f` (JAX's `jax.grad`): `f` returns a float tensor with an
 * empty base, a `(;)` loss or `(B;)` per-sample values; the gradient is shaped
 * (and typed) like the argument, batch dims included. Integer and bool inputs get
 * zero gradients.
 *
 * @example
 * ```ts
 * const g = grad((x: Tensor) => x.mul(x).sum())(tensor([1, 2, 3], { dtype: "float64" })); // [2, 4, 6]
 * ```
 */
export function grad<A extends unknown[], const N extends number | readonly number[] = 0>(
  f: (...args: A) => unknown,
  opts?: GradOptions & { readonly argnums?: N },
): (...args: A) => GradOf<A, N> {
  checkFn("grad", f);
  return (...args: A) => gradImpl("grad", f as never, args, opts).grad as GradOf<A, N>;
}

/** `[f(...args), grad(f)(...args)]` from one trace of `f` (JAX's `jax.value_and_grad`). */
export function valueAndGrad<A extends unknown[], R, const N extends number | readonly number[] = 0>(
  f: (...args: A) => R,
  opts?: GradOptions & { readonly argnums?: N },
): (...args: A) => [R, GradOf<A, N>] {
  checkFn("valueAndGrad", f);
  return (...args: A) => {
    const r = gradImpl("valueAndGrad", f as never, args, opts);
    return [r.value as R, r.grad as GradOf<A, N>];
  };
}

/** The typed class of `d out / d in` where NEML2 has one (Mandel in and out: an SSR4 for SR2 by SR2). */
const JACOBIAN_TYPES: Readonly<Record<string, PrimitiveClass<PrimitiveTensor<unknown>>>> = {
  "SR2/SR2": SSR4 as never,
  "R2/R2": R4 as never,
  "Vec/Vec": R2 as never,
  "R2/Vec": R3 as never,
  "SR2/Vec": SFR3 as never,
  "SR2/WR2": SWR4 as never,
  "WR2/SR2": WSR4 as never,
  "WR2/WR2": WWR4 as never,
  "SSR4/SSR4": SSSSR8 as never,
  "Vec/WR2": R2 as never,
  "WR2/Vec": R2 as never,
};

function typedJacobian(
  J: Tensor,
  o: PrimitiveClass<PrimitiveTensor<unknown>> | undefined,
  i: PrimitiveClass<PrimitiveTensor<unknown>> | undefined,
): unknown {
  if (o === undefined || i === undefined) return J;
  if (o.NAME === "Scalar") return new i(J);
  if (i.NAME === "Scalar") return new o(J);
  const C = JACOBIAN_TYPES[`${o.NAME}/${i.NAME}`];
  return C === undefined ? J : new C(J);
}

/** Assembles per-output, per-input Jacobian blocks into the structure of the result of structures of inputs. */
function assembleJac(tr: Traced, blocks: Tensor[][][], many: boolean): unknown {
  // blocks[o][a][l]: output leaf o, argument a, leaf l of that argument.
  const perOut = blocks.map((byArg) => {
    const args = byArg.map((ls, a) => {
      const fin = tr.ins[a]!;
      if (ls.length === 1 && tr.out.leaves.length === 1) return typedJacobian(ls[0]!, tr.out.typed, fin.typed);
      return fin.build(ls, true);
    });
    return many ? args : args[0];
  });
  return tr.out.build(perOut, true);
}

/** Stacks flat-indexed pieces along new base axes: `(B; ...lead)` pieces → `(B; ...lead, ...shape)` or `(B; ...shape, ...lead)`. */
function stackPieces(
  pieces: readonly Tensor[],
  lead: readonly number[],
  shape: readonly number[],
  after: boolean,
): Tensor {
  const n = pieces.length;
  if (shape.length === 0) return pieces[0]!;
  const axis = after ? lead.length : 0;
  const parts = pieces.map((p) => {
    const s = after ? [...lead, 1] : [1, ...lead];
    return Tensor._op("reshape", [p], { shape: s });
  });
  const cat = n === 1 ? parts[0]! : Tensor._op("concat", parts, { axis });
  return Tensor._op("reshape", [cat], { shape: after ? [...lead, ...shape] : [...shape, ...lead] });
}

/** The per-sample Jacobian's batch: the result's and the argument's broadcast (a value standing for it). */
function batchLike(y: Tensor, x: Tensor): Tensor {
  // A single result sample (batch of ones, as after batchMean(0, { keepdim: true })) broadcasts to x's batch.
  const ones = y._type.batch.every((d) => d === 1) && !x._type.batch.every((d) => d === 1);
  return !ones && y._type.batch.length >= x._type.batch.length ? y : x;
}

/**
 * How an op couples the samples of a batch, in the user's terms; undefined when each
 * output sample depends on the same input sample only (elementwise, base ops, size-1
 * batch dims added or removed, broadcasting a batch of one).
 */
function couplingOf(op: Op, attrs: Attrs): string | undefined {
  if (isReduceOp(op)) {
    const axes = attrs.batchAxes;
    return Array.isArray(axes) && axes.length > 0
      ? `a reduction over batch axes (${op} over batch axes ${JSON.stringify(axes)}: batchSum, batchMean, …)`
      : undefined;
  }
  switch (op) {
    case "batch_reshape":
      return "a reshape of the batch (batchReshape)";
    case "rebatch":
      return "a move of dims between batch and base (rebatch)";
    case "batch_concat":
      return "a concatenation along a batch axis (batchCat, cat, stack)";
    case "batch_slice":
      return "a slice of the batch (batchSlice)";
    default:
      return SEGMENT_OPS.has(op) ? `a ragged segment op (${op}: segment sums, means, padding …)` : undefined;
  }
}

/**
 * Per-sample Jacobians seed every sample with the same basis vector at once, which is
 * right only when output sample b depends on input sample b alone. This finds an op on
 * a path from a differentiated leaf to the result that couples samples and throws a
 * TraceError naming it, instead of returning a silently wrong Jacobian.
 */
function checkIndependent(op: string, mode: "fwd" | "rev", tr: Traced): void {
  // One sample on the seeded side makes the sweep exact whatever f does: reverse mode with a
  // single result sample is the full gradient of that sample; forward mode with a single argument
  // sample, the full derivative along it.
  const single = (t: Tensor) => t._type.batch.every((d) => d === 1);
  if (mode === "rev" ? tr.out.leaves.every(single) : tr.leaves.flat().every(single)) return;
  const leaves = new Set(tr.leaves.flat());
  const dep = new Map<Tensor, boolean>();
  for (const out of tr.out.leaves) {
    // Iterative post-order: graphs of autodiff and material models are deep.
    const stack: { t: Tensor; i: number }[] = [{ t: out, i: 0 }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (dep.has(top.t)) {
        stack.pop();
        continue;
      }
      const def = leaves.has(top.t) ? undefined : tr.src.def(top.t);
      if (def === undefined) {
        dep.set(top.t, leaves.has(top.t));
        stack.pop();
        continue;
      }
      if (top.i < def.inputs.length) {
        const next = def.inputs[top.i++]!;
        if (!dep.has(next)) stack.push({ t: next, i: 0 });
        continue;
      }
      const dependent = def.inputs.some((i) => dep.get(i) === true);
      if (dependent) {
        const how = couplingOf(def.op, def.attrs);
        if (how !== undefined) {
          const x = def.inputs.find((i) => dep.get(i) === true)!;
          throw new TraceError(
            `${op}: f couples the samples of the batch through ${how}, applied to ${fmtTypeShape(x._type)} giving ${fmtTypeShape(top.t._type)}; ` +
              `per-sample Jacobians need each result sample to depend on its own argument sample only. ` +
              `For the derivative of a function of the whole batch use grad, vjp or jvp, which differentiate it as it is`,
          );
        }
      }
      dep.set(top.t, dependent);
      stack.pop();
    }
  }
}

function jacImpl(
  op: string,
  mode: "fwd" | "rev",
  f: (...a: never[]) => unknown,
  args: readonly unknown[],
  opts: GradOptions | undefined,
) {
  const { nums, many } = argnumsOf(op, opts, args.length);
  const tr = call(op, f, args, nums);
  checkIndependent(op, mode, tr);
  const d = new Diff(BUILDER);
  const outs = tr.out.leaves;
  const blocks: Tensor[][][] = outs.map(() => tr.leaves.map(() => []));
  if (mode === "fwd") {
    tr.leaves.forEach((ls, a) =>
      ls.forEach((x) => {
        const n = prod(x._type.base);
        const cols: Lin<Tensor>[][] = outs.map(() => []);
        for (let j = 0; j < n; j++) {
          const ts = jvpValues(d, tr.src, outs, new Map([[x, oneHot(d, x._type, j)]]));
          ts.forEach((t, o) => cols[o]!.push(t));
        }
        outs.forEach((y, o) => {
          const pieces = cols[o]!.map((t) => d.fit(t, y._type) ?? d.zeros(y._type));
          const J = n === 0 ? zerosJac(d, y, x) : stackPieces(pieces, y._type.base, x._type.base, true);
          blocks[o]![a]!.push(fullJac(d, J, y, x));
        });
      }),
    );
  } else {
    const all = tr.leaves.flat();
    outs.forEach((y, o) => {
      const m = prod(y._type.base);
      const rows: Lin<Tensor>[][] = all.map(() => []);
      for (let i = 0; i < m; i++) {
        const cts = outs.map((_, k) => (k === o ? oneHot(d, y._type, i) : null));
        const gs = vjpValues(d, tr.src, outs, cts, all);
        gs.forEach((g, l) => rows[l]!.push(g));
      }
      let l = 0;
      tr.leaves.forEach((ls, a) =>
        ls.forEach((x) => {
          const pieces = rows[l++]!.map((g) => d.fit(g, x._type) ?? d.zeros(x._type));
          const J = m === 0 ? zerosJac(d, y, x) : stackPieces(pieces, x._type.base, y._type.base, false);
          blocks[o]![a]!.push(fullJac(d, J, y, x));
        }),
      );
    });
  }
  return assembleJac(tr, blocks, many);
}

function zerosJac(d: Diff<Tensor>, y: Tensor, x: Tensor): Tensor {
  const base = [...y._type.base, ...x._type.base];
  return d.zeros({ dtype: y.dtype, batch: [], base });
}

function fullJac(d: Diff<Tensor>, J: Tensor, y: Tensor, x: Tensor): Tensor {
  const like = batchLike(y, x);
  const t: TensorType = { dtype: J.dtype, batch: like._type.batch, base: J._type.base };
  return d.full(J, t, like);
}

/**
 * The per-sample Jacobian by forward mode (JAX's `jax.jacfwd`): for `f` mapping
 * `(B; n…)` to `(B; m…)`, a `(B; m…, n…)` tensor. Typed tensors keep their types
 * where NEML2 does: SR2 by SR2 is an SSR4 (Mandel in and out), Scalar by X is an X.
 */
export function jacfwd<A extends unknown[]>(f: (...args: A) => unknown, opts?: GradOptions): (...args: A) => Jacobian {
  checkFn("jacfwd", f);
  return (...args: A) => jacImpl("jacfwd", "fwd", f as never, args, opts) as Jacobian;
}

/** The per-sample Jacobian by reverse mode (JAX's `jax.jacrev`); see `jacfwd`. */
export function jacrev<A extends unknown[]>(f: (...args: A) => unknown, opts?: GradOptions): (...args: A) => Jacobian {
  checkFn("jacrev", f);
  return (...args: A) => jacImpl("jacrev", "rev", f as never, args, opts) as Jacobian;
}

/**
 * The per-sample Jacobian (JAX's `jax.jacobian`, reverse mode): for `f` mapping
 * `(B; n)` to `(B; m)`, `(B; m, n)`, never a `(B·m)×(B·n)` matrix.
 *
 * @example
 * ```ts
 * const J = jacobian((e: SR2) => C.mul(e))(strain); // an SSR4 equal to C at every point
 * ```
 */
export function jacobian<A extends unknown[]>(
  f: (...args: A) => unknown,
  opts?: GradOptions,
): (...args: A) => Jacobian {
  checkFn("jacobian", f);
  return (...args: A) => jacImpl("jacobian", "rev", f as never, args, opts) as Jacobian;
}

/** The per-sample Hessian of a function with an empty-base result: `jacfwd(jacrev(f))`, `(B; n…, n…)`. */
export function hessian<A extends unknown[]>(f: (...args: A) => unknown, opts?: GradOptions): (...args: A) => Jacobian {
  checkFn("hessian", f);
  return jacfwd(jacrev(f, opts), opts);
}
