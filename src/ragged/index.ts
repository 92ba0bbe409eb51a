/*
 * Heterogeneous batches: Kaolin's padded/packed helpers and torch/tensordict-style
 * stacking and padding along batch dims. Eager: host copies on the JS backend,
 * IR ops (block copies, `segment_pad`) on WebGPU (see device.ts). Only `stack`
 * and `cat` also work inside `jit`.
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
