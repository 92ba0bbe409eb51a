/**
 * The arguments and results of compiled functions (jit, bundles): tensors,
 * jagged tensors and TensorDicts, flattened to tensors.
 *
 * `kinds` describes the items, one code each, and is part of the trace key:
 * - `t`: a tensor;
 * - `j`: a jagged tensor (two tensors: values, offsets);
 * - `d<n>:<json>`: a TensorDict, `<json>` (n characters) being
 *   `{"b": batch rank, "k": [[key, kinds], ...]}` (its entries' tensors follow
 *   in key order, nested dicts inline). The batch size is read off the first
 *   tensor, so no size enters the trace key; only a dict with no tensors under
 *   it records its size (`"s"`).
 */
import { TraceError } from "../ir/errors.js";
import { JaggedTensor } from "./ragged/jagged.js";
import { Tensor } from "./tensor.js";
import { entryBatch, TensorDict } from "./tensordict/tensordict.js";

/** What a compiled function takes and returns. */
export type JitArg = Tensor | JaggedTensor | TensorDict;

interface DictShape {
  readonly b: number;
  /** The batch size, recorded only for a dict with no tensors under it. */
  readonly s?: readonly number[];
  readonly k: readonly (readonly [string, string])[];
}

function flattenOne(a: unknown, tensors: Tensor[], who: string): string {
  if (a instanceof JaggedTensor) {
    tensors.push(a.values, a.offsets);
    return "j";
  }
  if (a instanceof Tensor) {
    tensors.push(a);
    return "t";
  }
  if (a instanceof TensorDict) {
    const k = a.entries().map(([key, v]) => [key, flattenOne(v, tensors, who)] as const);
    // Sizes stay out of the trace key: a dict's batch size is read off its first entry.
    const shape: DictShape = k.length > 0 ? { b: a.batchDim, k } : { b: a.batchDim, s: a.batchSize, k };
    const json = JSON.stringify(shape);
    return `d${json.length}:${json}`;
  }
  throw new TraceError(`${who}: arguments and results must be Tensors, JaggedTensors or TensorDicts`);
}

/** The tensors of `items`, and their `kinds` (see the file comment). */
export function flatten(items: readonly unknown[], who = "jit"): { tensors: Tensor[]; kinds: string } {
  const tensors: Tensor[] = [];
  let kinds = "";
  for (const a of items) kinds += flattenOne(a, tensors, who);
  return { tensors, kinds };
}

/** Reads one item of `kinds` from `at`, taking its tensors from `tensors[k.i]` on. */
function unflattenOne(tensors: readonly Tensor[], kinds: string, at: { pos: number; i: number }): JitArg {
  const c = kinds[at.pos++];
  if (c === "t") return tensors[at.i++]!;
  if (c === "j") {
    const values = tensors[at.i++]!;
    return new JaggedTensor(values, tensors[at.i++]!);
  }
  if (c !== "d") throw new TraceError(`internal: bad argument kinds "${kinds}" at ${at.pos - 1}`);
  const colon = kinds.indexOf(":", at.pos);
  const n = Number(kinds.slice(at.pos, colon));
  const shape = JSON.parse(kinds.slice(colon + 1, colon + 1 + n)) as DictShape;
  at.pos = colon + 1 + n;
  const entries = shape.k.map(([key, sub]) => {
    const inner = { pos: 0, i: at.i };
    const v = unflattenOne(tensors, sub, inner);
    at.i = inner.i;
    return [key, v] as const;
  });
  // The batch size is the first entry's leading dims (symbolic inside a trace); a dict without entries recorded it.
  const first = entries[0]?.[1];
  const size = first === undefined ? (shape.s ?? []) : entryBatch(first).slice(0, shape.b);
  const td = new TensorDict({}, size);
  for (const [key, v] of entries) td.set(key, v);
  return td;
}

/** `kinds` with every TensorDict replaced by its entries' codes, in tensor order: only `t` and `j` remain. */
export function leafKinds(kinds: string): string {
  let out = "";
  for (let pos = 0; pos < kinds.length; ) {
    const c = kinds[pos++]!;
    if (c === "t" || c === "j") out += c;
    else {
      const colon = kinds.indexOf(":", pos);
      const len = Number(kinds.slice(pos, colon));
      const shape = JSON.parse(kinds.slice(colon + 1, colon + 1 + len)) as DictShape;
      for (const [, sub] of shape.k) out += leafKinds(sub);
      pos = colon + 1 + len;
    }
  }
  return out;
}

/** The inverse of `flatten`. */
export function unflatten(tensors: readonly Tensor[], kinds: string): JitArg[] {
  const out: JitArg[] = [];
  const at = { pos: 0, i: 0 };
  while (at.pos < kinds.length) out.push(unflattenOne(tensors, kinds, at));
  return out;
}
