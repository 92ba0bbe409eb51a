/**
 * SHA-256 of a string's UTF-8 bytes, as 64 lowercase hex digits.
 *
 * Bundles record the digest of their content when they are written, and
 * `f.bundle()` is synchronous, while WebCrypto (`crypto.subtle.digest`) is only
 * asynchronous: `sha256HexSync` (the audited `@noble/hashes` implementation, in
 * src/sha256-sync.ts) is the synchronous writer's digest. The loader uses
 * `sha256Hex`: WebCrypto where it exists (Node 20, browsers in a secure context),
 * else the synchronous one, imported only then (`crypto.subtle` is undefined on a
 * page served over plain http), so that pages with WebCrypto do not carry it.
 */
/** Lowercase hex of bytes. */
function hex(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += (b < 16 ? "0" : "") + b.toString(16);
  return s;
}

/** SHA-256 of `text`'s UTF-8 bytes: WebCrypto where available, else `sha256HexSync` (src/sha256-sync.ts). */
export async function sha256Hex(text: string): Promise<string> {
  const subtle = (globalThis as { crypto?: { subtle?: SubtleCrypto } }).crypto?.subtle;
  if (subtle === undefined) return (await import("./sha256-sync.js")).sha256HexSync(text);
  return hex(new Uint8Array(await subtle.digest("SHA-256", new TextEncoder().encode(text))));
}
