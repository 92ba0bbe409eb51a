/**
 * TensorDict and the container functions. `stack`, `cat`, `padSequence` and
 * `unpadSequence` take plain tensors or TensorDicts (lazy stacks too, where
 * tensordict allows them), as torch's functions do.
 */
import { DTypeError, ShapeError } from "../../ir/errors.js";
import { describeValue } from "../ragged/check.js";
import { Tensor } from "../tensor.js";
import {
  cat as catTensors,
  padSequence as padTensors,
  stack as stackTensors,
  unpadSequence as unpadTensors,
  type PadSequenceOptions,
} from "../ragged/sequence.js";
import { LazyStackedTensorDict } from "./lazy.js";
import { catDicts, padDicts, stackDicts, unpadDicts, type PadDictsOptions } from "./ops.js";
import { TensorDict } from "./tensordict.js";
// TensorDict's row assignment, non-tensor and padding methods (src/tensordict/api.ts) are installed by the
// class's module (src/tensordict/tensordict.ts), not here: a bundler that finds this module only through
// re-exports drops its statements (a page importing just TensorDict would lack them).

export {
  TensorDict,
  type NestedKey,
  type TensorDictSource,
  type TensorDictValue,
  type TensorDictLeaf,
} from "./tensordict.js";
export type { BatchSelector, SliceSelector } from "./api.js";
export { LazyStackedTensorDict, lazyStack, type LazyGetOptions, type LazyMember } from "./lazy.js";
export { NonTensorData, NonTensorStack, type NonTensor } from "./nontensor.js";
export { maybeDenseStack, type PadDictsOptions } from "./ops.js";

/** Any TensorDict in the list sends it down the dict path, whose checks name a mixed list (a typed error, not a crash). */
const isDictList = (list: readonly unknown[]): boolean =>
  Array.isArray(list) && list.some((x) => x instanceof TensorDict || x instanceof LazyStackedTensorDict);

/**
 * Stacks on a new batch dim `dim` (default 0): tensors (`(5; 3)` ×2 give
 * `(2,5; 3)`) or TensorDicts, entry by entry (tensordict's dense `torch.stack`).
 */
export function stack(list: readonly Tensor[], dim?: number): Tensor;
export function stack(list: readonly TensorDict[], dim?: number): TensorDict;
export function stack(list: readonly LazyStackedTensorDict[], dim?: number): LazyStackedTensorDict;
export function stack(
  list: readonly (Tensor | TensorDict | LazyStackedTensorDict)[],
  dim = 0,
): Tensor | TensorDict | LazyStackedTensorDict {
  return isDictList(list)
    ? stackDicts(list as readonly (TensorDict | LazyStackedTensorDict)[], dim)
    : stackTensors(list as readonly Tensor[], dim);
}

/** Concatenates along the existing batch dim `dim` (default 0): tensors or TensorDicts. */
export function cat(list: readonly Tensor[], dim?: number): Tensor;
export function cat(list: readonly TensorDict[], dim?: number): TensorDict;
export function cat(list: readonly LazyStackedTensorDict[], dim?: number): LazyStackedTensorDict;
export function cat(
  list: readonly (Tensor | TensorDict | LazyStackedTensorDict)[],
  dim = 0,
): Tensor | TensorDict | LazyStackedTensorDict {
  return isDictList(list)
    ? catDicts(list as readonly (TensorDict | LazyStackedTensorDict)[], dim)
    : catTensors(list as readonly Tensor[], dim);
}

/**
 * Pads batch dim `padDim` of every tensor (or of every entry of every
 * TensorDict) to the longest and stacks on a new dim 0 (tensordict's
 * `pad_sequence`). For TensorDicts the masks, when asked for, are an entry of the result.
 */
export function padSequence(
  list: readonly Tensor[],
  opts?: PadSequenceOptions & { readonly returnMask?: false },
): Tensor;
export function padSequence(
  list: readonly Tensor[],
  opts: PadSequenceOptions & { readonly returnMask: true },
): {
  /** The tensors padded and stacked. */
  padded: Tensor;
  /** True on the valid positions, false on padding (bool). */
  mask: Tensor;
};
export function padSequence(
  list: readonly Tensor[],
  opts?: PadSequenceOptions,
):
  | Tensor
  | {
      /** The tensors padded and stacked. */
      padded: Tensor;
      /** True on the valid positions, false on padding (bool). */
      mask: Tensor;
    };
export function padSequence(list: readonly TensorDict[], opts?: PadDictsOptions): TensorDict;
export function padSequence(
  list: readonly (Tensor | TensorDict)[],
  opts: PadSequenceOptions | PadDictsOptions = {},
): Tensor | { padded: Tensor; mask: Tensor } | TensorDict {
  // An empty list gets tensordict's text (which also says the list cannot be empty).
  if ((Array.isArray(list) && list.length === 0) || isDictList(list))
    return padDicts(list as readonly TensorDict[], opts as PadDictsOptions);
  return padTensors(list as readonly Tensor[], opts as PadSequenceOptions);
}

/** Options of `unpadSequence`; `maskKey` (TensorDicts only) names the masks entry (default "masks"). */
export interface UnpadOptions {
  /** The batch dim of each member that was padded (default 0), as given to `padSequence`. */
  readonly padDim?: number;
  /** The entry holding the masks (TensorDicts only; default "masks"). */
  readonly maskKey?: string | readonly string[];
}

/**
 * Splits a padded batch back into its members: tensors (the mask is required),
 * or for a TensorDict a lazy stack of TensorDicts (the mask defaults to its
 * `"masks"` entry, so `unpadSequence(padded, { padDim: 1 })` works).
 */
export function unpadSequence(padded: Tensor, mask: Tensor, opts?: UnpadOptions): Tensor[];
export function unpadSequence(padded: TensorDict, opts?: UnpadOptions): LazyStackedTensorDict;
export function unpadSequence(padded: TensorDict, mask: Tensor | undefined, opts?: UnpadOptions): LazyStackedTensorDict;
export function unpadSequence(
  padded: Tensor | TensorDict,
  maskOrOpts?: Tensor | UnpadOptions,
  opts: UnpadOptions = {},
): Tensor[] | LazyStackedTensorDict {
  const isOpts =
    typeof maskOrOpts === "object" &&
    maskOrOpts !== null &&
    !Array.isArray(maskOrOpts) &&
    !(maskOrOpts instanceof Tensor);
  if (maskOrOpts !== undefined && !isOpts && !(maskOrOpts instanceof Tensor))
    throw new DTypeError(`unpadSequence: mask must be a Tensor, got ${describeValue(maskOrOpts)}`);
  const mask = maskOrOpts instanceof Tensor ? maskOrOpts : undefined;
  const o = maskOrOpts === undefined || maskOrOpts instanceof Tensor ? opts : maskOrOpts;
  if (padded instanceof TensorDict) return unpadDicts(padded, mask, o);
  if (mask === undefined) throw new ShapeError(`unpadSequence: padded ${padded.toString()} needs its mask`);
  return unpadTensors(padded, mask, o);
}
