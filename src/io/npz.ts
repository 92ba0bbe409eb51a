/**
 * NumPy's `.npz` archives: a zip file with one `.npy` member per array, named
 * `<name>.npy` (`numpy.savez` stores them uncompressed, `numpy.savez_compressed`
 * deflates them). The zip layer is fflate's (`zipSync`/`unzipSync`), which reads
 * the zip64 records NumPy writes.
 */
import { unzipSync, zipSync, type Zippable } from "fflate";
import type { DType, TypedArray } from "../../ir/dtype.js";
import { DTypeError, KeyError, ShapeError } from "../../ir/errors.js";
import { checkOptions, describe } from "../check.js";
import { Tensor } from "../tensor.js";
import { bytesView } from "./bytes.js";
import { FileFormatError, readNpy, tensorOf, writeNpy, type SaveNpyOptions } from "./npy.js";

/** Options of `loadNpz`. */
export interface LoadNpzOptions {
  /**
   * Leading batch dims of the arrays (default 0): one number for every array, or
   * a number per array name (names not listed get 0; a listed name the archive
   * lacks is a KeyError).
   */
  readonly batchDim?: number | Readonly<Record<string, number>>;
}

/** Options of `saveNpz` and `saveNpzSync`. */
export interface SaveNpzOptions extends SaveNpyOptions {
  /** Deflate the members, as `numpy.savez_compressed` does (default false: stored, as `numpy.savez`). */
  readonly compress?: boolean;
}

/** The arrays of an archive, by name: a plain object or a Map. */
export type NpzArrays = Readonly<Record<string, Tensor>> | ReadonlyMap<string, Tensor>;

/** Zip timestamps: fixed, so the same arrays give the same bytes. */
const EPOCH = new Date(1980, 0, 1, 0, 0, 0);

/**
 * The tensors of a `.npz` archive (as `numpy.savez` or `numpy.savez_compressed`
 * writes it), by array name (the member name without `.npy`), in archive order.
 * Every member must be a `.npy` file that `loadNpy` takes. `bytes` is any form
 * of bytes, as for `loadNpy` (a Node `Buffer` from `readFileSync`, a view, a
 * `DataView`, an `ArrayBuffer` or a `SharedArrayBuffer`); the values are copied.
 *
 * ```ts
 * const { points, normals } = loadNpz(readFileSync("scan.npz"), { batchDim: 1 }); // (N; 3) each
 * ```
 */
export function loadNpz(bytes: ArrayBufferLike | ArrayBufferView, opts: LoadNpzOptions = {}): Record<string, Tensor> {
  const op = "loadNpz";
  const o = checkOptions(op, opts);
  const b = bytesView(op, "bytes", bytes);
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(b);
  } catch (e) {
    throw new FileFormatError(`${op}: not a readable .npz (zip) archive: ${(e as Error).message}`);
  }
  const bd = o.batchDim ?? 0;
  const perName = typeof bd === "object" && bd !== null ? bd : undefined;
  if (perName === undefined && (typeof bd !== "number" || !Number.isInteger(bd) || bd < 0))
    throw new ShapeError(
      `${op}: batchDim must be an integer >= 0 or an object of them by array name, got ${describe(bd)}`,
    );
  const out: [string, Tensor][] = [];
  for (const [member, data] of Object.entries(files)) {
    if (member.endsWith("/") && data.length === 0) continue; // a directory entry
    const name = member.endsWith(".npy") ? member.slice(0, -4) : member;
    const a = readNpy(data, `${op}: member ${JSON.stringify(member)}`);
    const want: unknown = perName === undefined ? bd : Object.hasOwn(perName, name) ? perName[name] : 0;
    if (typeof want !== "number" || !Number.isInteger(want) || want < 0 || want > a.shape.length)
      throw new ShapeError(
        `${op}: batchDim ${describe(want)} of array ${JSON.stringify(name)} does not fit its shape (${a.shape.join(",")})`,
      );
    out.push([name, tensorOf(a, want)]);
  }
  if (perName !== undefined) {
    for (const k of Object.keys(perName))
      if (!out.some(([n]) => n === k))
        throw new KeyError(
          `${op}: batchDim names array ${JSON.stringify(k)}, which the archive does not have (arrays: ${out.map(([n]) => JSON.stringify(n)).join(", ")})`,
        );
  }
  return Object.fromEntries(out);
}

function entriesOf(op: string, arrays: unknown): [string, Tensor][] {
  let list: [string, unknown][];
  if (arrays instanceof Map) list = [...(arrays as Map<unknown, unknown>)].map(([k, v]) => [k as string, v]);
  else if (typeof arrays === "object" && arrays !== null && !Array.isArray(arrays) && !(arrays instanceof Tensor))
    list = Object.entries(arrays);
  else throw new DTypeError(`${op}: arrays must be an object or a Map of Tensors by name, got ${describe(arrays)}`);
  for (const [k, v] of list) {
    if (typeof k !== "string" || k.length === 0)
      throw new KeyError(`${op}: array names must be non-empty strings, got ${describe(k)}`);
    if (!(v instanceof Tensor))
      throw new DTypeError(`${op}: array ${JSON.stringify(k)} must be a Tensor, got ${describe(v)}`);
  }
  return list as [string, Tensor][];
}

function zipArrays(
  op: string,
  arrays: readonly (readonly [
    string,
    { readonly dtype: DType; readonly shape: readonly number[]; readonly data: TypedArray },
  ])[],
  o: SaveNpzOptions,
): Uint8Array {
  const compress: unknown = o.compress ?? false;
  if (typeof compress !== "boolean")
    throw new DTypeError(`${op}: compress must be true or false, got ${describe(compress)}`);
  const files: Zippable = {};
  for (const [name, a] of arrays) files[`${name}.npy`] = writeNpy(a.dtype, a.shape, a.data, o, op);
  return zipSync(files, { level: compress ? 6 : 0, mtime: EPOCH });
}

/**
 * The bytes of a `.npz` archive holding the tensors by name (member `<name>.npy`
 * each, written as `saveNpy` writes it), stored as `numpy.savez` does or deflated
 * with `compress: true` as `numpy.savez_compressed` does; `numpy.load` reads it.
 * Reads the tensors back from their backend, so it is async.
 */
export async function saveNpz(arrays: NpzArrays, opts: SaveNpzOptions = {}): Promise<Uint8Array> {
  const op = "saveNpz";
  const o = checkOptions(op, opts);
  const list = entriesOf(op, arrays);
  const read = await Promise.all(
    list.map(async ([k, t]) => [k, { dtype: t.dtype, shape: t.shape, data: await t.data() }] as const),
  );
  return zipArrays(op, read, o);
}

/** Synchronous `saveNpz`, for tensors on the JS backend. */
export function saveNpzSync(arrays: NpzArrays, opts: SaveNpzOptions = {}): Uint8Array {
  const op = "saveNpzSync";
  const o = checkOptions(op, opts);
  const list = entriesOf(op, arrays);
  // Every member is computed (if lazy) before any view is taken: computing one may allocate,
  // and a growing WebAssembly memory detaches the views taken before.
  for (const [, t] of list) t.dataSync({ copy: false });
  return zipArrays(
    op,
    list.map(([k, t]) => [k, { dtype: t.dtype, shape: t.shape, data: t.dataSync({ copy: false }) }] as const),
    o,
  );
}
