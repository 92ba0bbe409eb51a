/**
 * Bytes as callers hold them: what every API that takes bytes accepts, and the
 * one place that turns them into a `Uint8Array` over exactly those bytes.
 *
 * Accepted (declared `ArrayBufferLike | ArrayBufferView` in the public
 * signatures), as the Web platform's `AllowSharedBufferSource`: an `ArrayBuffer` or
 * a `SharedArrayBuffer` (all of it), or any `ArrayBufferView` (a typed array, a
 * `DataView`, a Node `Buffer`), of which only its `byteLength` bytes from its
 * `byteOffset` are read. That offset matters: a Node `Buffer` of fewer than
 * 4 KiB (`readFileSync` of a small file, `Buffer.from`, `Buffer.allocUnsafe`) is
 * a view into a shared 8 KiB pool, so its `.buffer` holds other data too.
 *
 * The view returned is always a plain `Uint8Array`, never a `Buffer`: a Buffer's
 * `slice` does not copy (it is `subarray`), so code that copies with `slice`
 * would otherwise keep aliasing the caller's memory.
 */
import { DTypeError } from "../../ir/errors.js";
import { describe } from "../check.js";

const TAG = Object.prototype.toString;

/**
 * A plain `Uint8Array` over exactly the bytes of `v` (no copy), or a DTypeError
 * naming `op` and the argument `arg`. Buffers are recognised by their tag, so
 * that one from another realm (a worker, a `vm` context) is accepted too.
 */
export function bytesView(op: string, arg: string, v: unknown): Uint8Array {
  const view = ArrayBuffer.isView(v);
  const tag = view ? "" : TAG.call(v);
  if (view || tag === "[object ArrayBuffer]" || tag === "[object SharedArrayBuffer]") {
    try {
      return view ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : new Uint8Array(v as ArrayBuffer);
    } catch (e) {
      // The one way these constructors fail on such arguments: the buffer was detached.
      throw new DTypeError(
        `${op}: ${arg} is ${view ? "a view of " : ""}a detached ArrayBuffer (transferred to a worker, or the memory of a WebAssembly instance that grew): ${(e as Error).message}`,
      );
    }
  }
  throw new DTypeError(
    `${op}: ${arg} must be a Uint8Array, a Node Buffer, another typed array, a DataView, an ArrayBuffer or a SharedArrayBuffer, got ${describe(v)}`,
  );
}

/** A copy of `src` in a new (non-shared, unaliased) buffer of its own: aligned for any element type. */
export function copyBytes(src: Uint8Array): Uint8Array {
  const out = new Uint8Array(src.length);
  out.set(src);
  return out;
}
