/**
 * Heterogeneous batches on the host: Kaolin's padded/packed helpers and
 * torch/tensordict-style stacking and padding along batch dims. All eager
 * (they read values with `dataSync`), so not usable inside `jit`.
 */
export {
  getShapePerTensor,
  getFirstIdx,
  fillMaxShape,
  listToPadded,
  paddedToList,
  listToPacked,
  packedToList,
  paddedToPacked,
  packedToPadded,
  tileToPacked,
  type PaddingValue,
  type IntsLike,
} from "./kaolin.js";
export { stack, cat, padSequence, unpadSequence, type PadSequenceOptions } from "./sequence.js";
