/** Functions over several typed tensors: batch stacking/concatenation and linspace/logspace. */
import { DTypeError, ShapeError } from "../../ir/errors.js";
import { checkElementCount } from "../../ir/shapes.js";
import { checkInt, describe } from "../check.js";
import { fromTypedArray } from "../creation.js";
import { Tensor, where } from "../tensor.js";
import type { PrimitiveTensor } from "./base.js";
import { batchCatHost } from "./host.js";

type Typed<T> = PrimitiveTensor<T> & { readonly t: Tensor };

/** A typed tensor argument (an object holding a Tensor in `t`), or a DTypeError naming it. */
function checkTyped(op: string, name: string, x: unknown): void {
  const t = typeof x === "object" && x !== null ? (x as { t?: unknown }).t : undefined;
  if (!(t instanceof Tensor)) throw new DTypeError(`${op}: ${name} must be a typed tensor, got ${describe(x)}`);
}

/** A non-empty array of typed tensors of one type. */
function checkTypedList(op: string, xs: unknown): void {
  if (!Array.isArray(xs)) throw new DTypeError(`${op}: xs must be an array of typed tensors, got ${describe(xs)}`);
  if (xs.length === 0) throw new ShapeError(`${op}: needs at least one tensor`);
  xs.forEach((x: unknown, i) => {
    checkTyped(op, `xs[${i}]`, x);
    if ((x as object).constructor !== (xs[0] as object).constructor) {
      throw new DTypeError(
        `${op}: xs[${i}] is ${describe(x)} but xs[0] is ${describe(xs[0])}; the tensors must be of one type`,
      );
    }
  });
}

function rewrap<T>(like: Typed<T>, t: Tensor): T {
  return new (like.constructor as new (t: Tensor) => T)(t);
}

/** Pads the batch with leading size-1 dims up to `rank` (broadcasting is unchanged). */
function toRank(t: Tensor, rank: number): Tensor {
  let x = t;
  while (x.batchDim < rank) x = x.batchUnsqueeze(0);
  return x;
}

/**
 * Stacks typed tensors along a new batch dim `d` (batch shapes broadcast;
 * negative `d` counts from the end of the result's batch block). Traceable:
 * there is no batch-concat op, so the result is `where(onehotᵢ, xᵢ, …)` over a
 * constant one-hot mask with batch shape `(n, 1, …)`, which broadcasts each
 * `xᵢ` (unsqueezed at `d`) into its slot; nothing is multiplied, so inf/NaN
 * do not leak between slots.
 */
export function batchStack<T>(xs: readonly Typed<T>[], d = 0): T {
  checkTypedList("batchStack", xs);
  checkInt("batchStack", "d", d);
  const rank = Math.max(...xs.map((x) => x.t.batchDim)) + 1;
  const dim = d < 0 ? d + rank : d;
  if (!Number.isInteger(dim) || dim < 0 || dim >= rank)
    throw new ShapeError(`batchStack: batch dim ${d} is out of range for rank ${rank}`);
  const n = xs.length;
  const parts = xs.map((x) => toRank(x.t, rank - 1).batchUnsqueeze(dim));
  const maskShape = [n, ...Array<number>(rank - 1 - dim).fill(1)];
  let acc = parts[n - 1]!;
  for (let i = n - 2; i >= 0; i--) {
    const mask = new Uint8Array(n);
    mask[i] = 1;
    acc = where(fromTypedArray(mask, maskShape, { batchDim: maskShape.length, dtype: "bool" }), parts[i]!, acc);
  }
  if (n === 1) acc = parts[0]!;
  return rewrap(xs[0]!, acc);
}

/** Concatenates along an existing batch dim (same shapes elsewhere). Host-side, eager only. */
export function batchCat<T>(xs: readonly Typed<T>[], d = 0): T {
  checkTypedList("batchCat", xs);
  return rewrap(
    xs[0]!,
    batchCatHost(
      xs.map((x) => x.t),
      d,
    ),
  );
}

/**
 * `start + (end - start)·k/(nstep-1)` for k = 0…nstep-1, in a new batch dim
 * `dim` of the broadcast batch (NEML2's `linspace`): start `(5,3,1,2; 6)` with
 * nstep 101 and dim 2 gives `(5,3,101,1,2; 6)`. Traceable.
 */
export function linspace<T>(start: Typed<T>, end: Typed<T>, nstep: number, dim = 0): T {
  checkTyped("linspace", "start", start);
  checkInt("linspace", "dim", dim);
  checkTyped("linspace", "end", end);
  if (!Number.isInteger(nstep) || nstep < 1)
    throw new ShapeError(`linspace: nstep ${describe(nstep)} must be a positive integer`);
  checkElementCount("linspace", { batch: [nstep], base: [] }, "the steps");
  const rank = Math.max(start.t.batchDim, end.t.batchDim);
  const d = dim < 0 ? dim + rank + 1 : dim;
  if (!Number.isInteger(d) || d < 0 || d > rank)
    throw new ShapeError(`linspace: batch dim ${dim} is out of range for batch rank ${rank}`);
  const s = toRank(start.t, rank).batchUnsqueeze(d);
  const e = toRank(end.t, rank).batchUnsqueeze(d);
  const steps = new Float64Array(nstep).map((_, k) => (nstep === 1 ? 0 : k / (nstep - 1)));
  const shape = [nstep, ...Array<number>(rank - d).fill(1)];
  const f = fromTypedArray(steps, shape, { batchDim: shape.length, dtype: s.dtype });
  return rewrap(start, s.add(e.sub(s).mul(f)));
}

/** `base ** linspace(start, end, nstep, dim)`. */
export function logspace<T>(start: Typed<T>, end: Typed<T>, nstep: number, dim = 0, base = 10): T {
  if (typeof base !== "number" || !(base > 0) || base === Infinity)
    throw new DTypeError(`logspace: base must be a positive finite number, got ${describe(base)}`);
  const l = linspace(start, end, nstep, dim) as unknown as Typed<T>;
  return rewrap(start, l.t.mul(Math.log(base)).exp());
}
