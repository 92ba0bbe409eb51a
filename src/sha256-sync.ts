/**
 * The synchronous SHA-256 (the audited `@noble/hashes` implementation): the digest
 * `f.bundle()` records, and the loaders' fallback where WebCrypto is missing
 * (src/sha256.ts imports this file only then, so pages that have WebCrypto do not
 * carry it).
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";

/** SHA-256 of `text`'s UTF-8 bytes, synchronously, as 64 lowercase hex digits. */
export function sha256HexSync(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}
