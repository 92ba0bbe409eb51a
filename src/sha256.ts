/**
 * SHA-256 of a string's UTF-8 bytes, as 64 lowercase hex digits.
 *
 * Bundles record the digest of their content when they are written, and
 * `f.bundle()` is synchronous, while WebCrypto (`crypto.subtle.digest`) is only
 * asynchronous: `sha256HexSync` (the audited `@noble/hashes` implementation) is
 * the synchronous writer's digest. The loader uses `sha256Hex`: WebCrypto where it
 * exists (Node 20, browsers in a secure context), else the same synchronous one
 * (`crypto.subtle` is undefined on a page served over plain http).
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";

/** SHA-256 of `text`'s UTF-8 bytes, synchronously. */
export function sha256HexSync(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}

/** SHA-256 of `text`'s UTF-8 bytes: WebCrypto where available, else `sha256HexSync`. */
export async function sha256Hex(text: string): Promise<string> {
  const subtle = (globalThis as { crypto?: { subtle?: SubtleCrypto } }).crypto?.subtle;
  if (subtle === undefined) return sha256HexSync(text);
  return bytesToHex(new Uint8Array(await subtle.digest("SHA-256", new TextEncoder().encode(text))));
}
