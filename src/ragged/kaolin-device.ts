/**
 * Kaolin's layouts on the device (see device.ts): the padded and packed
 * results built from block copies only, so that they can run now and be
 * re-split into Kaolin's base-heavy shapes. Used by kaolin.ts when an input
 * lives where the host cannot read it synchronously (WebGPU).
 */
import { ARRAY_CTOR, type DType } from "../../ir/dtype.js";
import { prod } from "../../ir/types.js";
import { Tensor } from "../tensor.js";
import { concatRows, filled, finish, hostTensor, resplit } from "./device.js";

/** A `(0; C)` tensor on the current backend. */
export function emptyRows(dtype: DType, c: number): Tensor {
  return hostTensor(new ARRAY_CTOR[dtype](0), [0, c], 1, dtype);
}

/**
 * The padded layout `(B; *max, C)` of sub-tensors given as rows `(numel_i; C)`,
 * by block copies: row-major, the slots are runs of sub-tensor rows and of
 * padding, and the padding is cut from one uploaded slot of `paddingValue`.
 * Dims after the first are padded per sub-tensor (`batch_concat` on that dim);
 * the first dim and the slots are then one concatenation of rows.
 */
export function padOnDevice(
  op: string,
  rows: readonly Tensor[],
  shapes: Int32Array,
  max: readonly number[],
  c: number,
  dtype: DType,
  paddingValue: number | boolean,
): Tensor {
  const k = max.length;
  const slotRows = prod(max);
  let fillSlot: Tensor | undefined;
  const fill = (dims: readonly number[]): Tensor => {
    fillSlot ??= hostTensor(filled(dtype, slotRows * c, paddingValue), [slotRows, c], 1, dtype);
    const n = prod(dims);
    const f = fillSlot.batchSlice(0, 0, n);
    return dims.length === 1 ? f : f.batchReshape(dims);
  };
  const pieces: Tensor[] = [];
  rows.forEach((x, i) => {
    const dims = Array.from(shapes.subarray(i * k, (i + 1) * k));
    if (k === 0 || prod(dims) === slotRows) return void pieces.push(x);
    if (prod(dims) === 0) return void pieces.push(fill([slotRows]));
    let y = k === 1 ? x : x.batchReshape(dims);
    for (let j = k - 1; j >= 1; j--) {
      if (dims[j] === max[j]) continue;
      const gap = [...dims];
      gap[j] = max[j]! - dims[j]!;
      y = Tensor._op("batch_concat", [y, fill(gap)], { axis: j });
      dims[j] = max[j]!;
    }
    pieces.push(k === 1 ? y : y.batchReshape([prod(dims)]));
    if (dims[0]! < max[0]!) pieces.push(fill([slotRows - prod(dims)]));
  });
  const all = concatRows(pieces, () => emptyRows(dtype, c));
  return finish(op, [{ t: all, batch: [rows.length], base: [...max, c] }])[0]!;
}

/**
 * Sub-tensor i of a padded `(B, *max, C)` as `(*shape_i; C)` (`(1; C)` when
 * there are no dims before C): a slice of the slot rows, then of each later dim.
 */
export function slotsOnDevice(
  op: string,
  padded: Tensor,
  shapes: Int32Array,
  count: number,
  max: readonly number[],
  c: number,
): Tensor[] {
  const k = max.length;
  if (k === 0) {
    const rows = resplit(op, "padded", padded, [count], [c]);
    return Array.from({ length: count }, (_, i) => rows.batchSlice(0, i, i + 1));
  }
  const m0 = max[0]!;
  const slots = resplit(op, "padded", padded, [count * m0, ...max.slice(1)], [c]);
  return Array.from({ length: count }, (_, i) => {
    let y = slots.batchSlice(0, i * m0, i * m0 + shapes[i * k]!);
    for (let j = 1; j < k; j++) y = y.batchSlice(j, 0, shapes[i * k + j]!);
    return y;
  });
}

/**
 * `tileToPacked` by block copies: value i doubles up to the power of two P_i >=
 * n_i (the values with the same P together: a concatenation with itself per
 * doubling), then its first n_i copies are cut and the pieces concatenated. The
 * doubled blocks hold at most 2 * sumN values.
 */
export function tileOnDevice(op: string, values: Tensor, numel: readonly number[], rows: number): Tensor {
  const B = numel.length;
  const column = resplit(op, "values", values, [B], [1]);
  const groups = new Map<number, number[]>();
  numel.forEach((n, i) => {
    if (n === 0) return;
    const p = 2 ** Math.ceil(Math.log2(n));
    const g = groups.get(p);
    if (g) g.push(i);
    else groups.set(p, [i]);
  });
  const pieces = new Array<Tensor | undefined>(B);
  for (const [p, members] of groups) {
    const gathered =
      members.length === B
        ? column
        : concatRows(
            members.map((i) => column.batchSlice(0, i, i + 1)),
            () => column,
          );
    let block = gathered.batchReshape([members.length, 1]);
    for (let w = 1; w < p; w *= 2) block = Tensor._op("batch_concat", [block, block], { axis: 1 });
    const flat = block.batchReshape([members.length * p]);
    members.forEach((i, k) => (pieces[i] = flat.batchSlice(0, k * p, k * p + numel[i]!)));
  }
  const all = concatRows(
    pieces.filter((t): t is Tensor => t !== undefined),
    () => emptyRows(values.dtype, 1),
  );
  return finish(op, [{ t: all, batch: [], base: [rows, 1] }])[0]!;
}
