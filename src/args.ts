/**
 * The arguments and results of compiled functions (jit, bundles): tensors and
 * jagged tensors, flattened to tensors (a jagged tensor is its values and offsets).
 */
import { TraceError } from "../ir/errors.js";
import { JaggedTensor } from "./ragged/jagged.js";
import { Tensor } from "./tensor.js";

/** What a compiled function takes and returns. */
export type JitArg = Tensor | JaggedTensor;

/** The tensors of `items`, and per item "t" (a tensor) or "j" (a jagged tensor: two tensors). */
export function flatten(items: readonly unknown[], who = "jit"): { tensors: Tensor[]; kinds: string } {
  let kinds = "";
  const tensors: Tensor[] = [];
  for (const a of items) {
    if (a instanceof JaggedTensor) {
      tensors.push(a.values, a.offsets);
      kinds += "j";
    } else if (a instanceof Tensor) {
      tensors.push(a);
      kinds += "t";
    } else throw new TraceError(`${who}: arguments and results must be Tensors or JaggedTensors`);
  }
  return { tensors, kinds };
}

/** The inverse of `flatten`. */
export function unflatten(tensors: readonly Tensor[], kinds: string): JitArg[] {
  const out: JitArg[] = [];
  let k = 0;
  for (const c of kinds) out.push(c === "j" ? new JaggedTensor(tensors[k++]!, tensors[k++]!) : tensors[k++]!);
  return out;
}
