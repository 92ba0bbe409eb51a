/**
 * Trees of tensors (JAX's pytrees): the one flattening of structured values to
 * tensors and back that compiled functions (src/args.ts), the derivatives
 * (src/grad.ts) and sharded runs (src/distributed/) share.
 *
 * A tree is a leaf or a node over subtrees. `flatten` lists the leaves depth first
 * and returns a `TreeDef`, the structure without them; `unflatten` puts values
 * (the leaves, or anything standing for them) back into that structure. What a
 * caller takes as a leaf and which containers are nodes is its `TreeView`:
 * - arrays: a node over their elements (the derivatives' structures);
 * - typed tensors (`SR2`, …): a node over their tensor, rebuilt in their class;
 * - jagged tensors: a node over their values and offsets (`split: "pair"`), or
 *   over their values alone with the offsets kept in the `TreeDef`
 *   (`split: "values"`: what a derivative varies); a caller may also take them
 *   as leaves (`isLeaf`);
 * - TensorDicts: a node over their entries, in order, nested dicts as nodes.
 * Anything else is refused by the view's `reject`, given the path to it.
 *
 * This module imports none of the container classes: their kinds are passed in
 * (src/args.ts keeps the registered ones), so that a page that uses neither
 * jagged tensors nor TensorDicts carries neither.
 */
import { TraceError } from "../ir/errors.js";
import type { JaggedTensor } from "./ragged/jagged.js";
import { Tensor } from "./tensor.js";
import type { TensorDict } from "./tensordict/tensordict.js";
import type { PrimitiveClass, PrimitiveTensor } from "./typed/base.js";

/** How jagged tensors are told apart and built (registered by src/ragged/jagged.ts). */
export interface JaggedKind {
  is(a: unknown): a is JaggedTensor;
  make(values: Tensor, offsets: Tensor): JaggedTensor;
}

/** How TensorDicts are told apart and built (registered by src/tensordict/tensordict.ts). */
export interface DictKind {
  is(a: unknown): a is TensorDict;
  /** A dict of batch size `size` holding `entries` in this order. */
  make(size: readonly number[], entries: readonly (readonly [string, unknown])[]): TensorDict;
  /** The batch sizes an entry shows a dict (a jagged entry's ragged dim is NaN). */
  entryBatch(v: unknown): readonly number[];
}

/** How typed tensors are told apart and rebuilt. */
export interface TypedKind {
  is(a: unknown): a is PrimitiveTensor<unknown>;
  /** The class of `a`, which wraps a tensor of its base shape. */
  classOf(a: PrimitiveTensor<unknown>): PrimitiveClass<PrimitiveTensor<unknown>>;
}

/** Where a value is in a tree: array indices and dict keys from the root. */
export type TreePath = readonly (number | string)[];

/** The structure of a flattened tree, without its leaves. */
export type TreeDef =
  | { readonly kind: "leaf" }
  | { readonly kind: "array"; readonly children: readonly TreeDef[] }
  | {
      readonly kind: "typed";
      readonly cls: PrimitiveClass<PrimitiveTensor<unknown>>;
      readonly children: readonly [TreeDef];
    }
  | {
      readonly kind: "jagged";
      /** `split: "values"`: the offsets, kept (the one child is the values); absent for `"pair"` (values, offsets). */
      readonly offsets?: Tensor;
      readonly children: readonly TreeDef[];
    }
  | {
      readonly kind: "dict";
      readonly batchDim: number;
      /** The batch size; absent when it is to be read off the first entry (`DictKind.entryBatch`). */
      readonly batchSize?: readonly number[];
      readonly keys: readonly string[];
      readonly children: readonly TreeDef[];
    };

/** The structure of one leaf. */
export const LEAF: TreeDef = { kind: "leaf" };

/** What a caller takes as leaves and as nodes, and how it refuses anything else (see the file comment). */
export interface TreeView<L> {
  readonly isLeaf: (a: unknown) => a is L;
  readonly arrays?: boolean;
  readonly typed?: TypedKind;
  readonly jagged?: { readonly kind: JaggedKind; readonly split: "pair" | "values" };
  readonly dict?: DictKind;
  /** The error for `a`, at `path`, which is neither a leaf nor a node of this view. */
  readonly reject: (a: unknown, path: TreePath) => Error;
  /** Called after a dict's entries are flattened, with the leaves they gave (a caller's checks on the dict). */
  readonly afterDict?: (d: TensorDict, path: TreePath, leaves: readonly L[]) => void;
}

/** The leaves of `tree`, depth first, and its structure. */
export function flatten<L>(tree: unknown, view: TreeView<L>): { leaves: L[]; def: TreeDef } {
  const leaves: L[] = [];
  const def = flattenInto(tree, view, leaves, []);
  return { leaves, def };
}

/** Flattens `a` into `leaves` (appending), returning its structure. */
export function flattenInto<L>(a: unknown, view: TreeView<L>, leaves: L[], path: TreePath): TreeDef {
  if (view.isLeaf(a)) {
    leaves.push(a);
    return LEAF;
  }
  const { jagged, dict, typed } = view;
  if (jagged?.kind.is(a) === true) {
    if (jagged.split === "values")
      return { kind: "jagged", offsets: a.offsets, children: [flattenInto(a.values, view, leaves, path)] };
    return {
      kind: "jagged",
      children: [flattenInto(a.values, view, leaves, path), flattenInto(a.offsets, view, leaves, path)],
    };
  }
  if (typed?.is(a) === true)
    return { kind: "typed", cls: typed.classOf(a), children: [flattenInto(a.t, view, leaves, path)] };
  if (dict?.is(a) === true) {
    const start = leaves.length;
    const entries = a.entries();
    const children = entries.map(([k, v]) => flattenInto(v, view, leaves, [...path, k]));
    view.afterDict?.(a, path, leaves.slice(start));
    return { kind: "dict", batchDim: a.batchDim, batchSize: a.batchSize, keys: entries.map(([k]) => k), children };
  }
  if (view.arrays === true && Array.isArray(a))
    return { kind: "array", children: a.map((e, i) => flattenInto(e, view, leaves, [...path, i])) };
  throw view.reject(a, path);
}

/** How `unflatten` builds nodes: the kinds of the nodes the structure holds. */
export interface TreeBuild {
  readonly jagged?: JaggedKind;
  readonly dict?: DictKind;
  /**
   * Typed leaves keep their values as they are instead of wrapping them in their
   * class (a Jacobian block is not of its leaf's type).
   */
  readonly keepTyped?: boolean;
}

/**
 * The inverse of `flatten`: `values` (one per leaf, in order) in the structure
 * `def`. A typed or `"values"` jagged node whose value is not a tensor (a nested
 * Jacobian, say) is that value as it is; dicts and arrays are always rebuilt.
 */
export function unflatten(def: TreeDef, values: readonly unknown[], build: TreeBuild = {}): unknown {
  const at = { i: 0 };
  return unflattenAt(def, values, build, at);
}

/** The number of leaves under `def`. */
export function leafCount(def: TreeDef): number {
  if (def.kind === "leaf") return 1;
  let n = 0;
  for (const c of def.children) n += leafCount(c);
  return n;
}

function unflattenAt(def: TreeDef, values: readonly unknown[], build: TreeBuild, at: { i: number }): unknown {
  switch (def.kind) {
    case "leaf":
      return values[at.i++];
    case "array":
      return def.children.map((c) => unflattenAt(c, values, build, at));
    case "typed": {
      const v = unflattenAt(def.children[0], values, build, at);
      return build.keepTyped !== true && v instanceof Tensor ? new def.cls(v) : v;
    }
    case "jagged": {
      const parts = def.children.map((c) => unflattenAt(c, values, build, at));
      const kind = need(build.jagged, "JaggedTensor");
      if (def.offsets !== undefined) return parts[0] instanceof Tensor ? kind.make(parts[0], def.offsets) : parts[0];
      return kind.make(parts[0] as Tensor, parts[1] as Tensor);
    }
    case "dict": {
      const kind = need(build.dict, "TensorDict");
      const entries = def.keys.map((k, e) => [k, unflattenAt(def.children[e]!, values, build, at)] as const);
      // The batch size is the first entry's leading dims (symbolic inside a trace) unless the structure records it.
      const first = entries[0]?.[1];
      const size = def.batchSize ?? (first === undefined ? [] : kind.entryBatch(first).slice(0, def.batchDim));
      return kind.make(size, entries);
    }
  }
}

function need<K>(kind: K | undefined, name: string): K {
  if (kind === undefined) throw new TraceError(`internal: unflatten: a ${name} node, but no ${name} kind given`);
  return kind;
}
