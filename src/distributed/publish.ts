/** `publishBundle`: a bundle's module text stored in Redis under its SHA-256. */
import { BundleError } from "../../ir/errors.js";
import { describe } from "../check.js";
import { bytesView, copyBytes } from "../io/bytes.js";
import { BUNDLE_KEY, client } from "./redis.js";
import type { RedisConnection } from "./connection.js";

/** The module text of `publishBundle`'s source: the text itself, or the UTF-8 bytes of the file (any form of bytes). */
function bundleText(source: unknown): string {
  if (typeof source === "string") return source;
  if (source === null || (typeof source !== "object" && typeof source !== "function"))
    throw new BundleError(
      `publishBundle: source must be the bundle module's text (f.bundle()) or its file's bytes (readFileSync("f.bundle.mjs")), got ${source === null ? "null" : typeof source}`,
    );
  let bytes: Uint8Array;
  try {
    bytes = bytesView("publishBundle", "source", source);
  } catch {
    throw new BundleError(
      `publishBundle: source must be the bundle module's text (f.bundle()) or its file's bytes (readFileSync("f.bundle.mjs")), got ${describe(source)}`,
    );
  }
  try {
    // A copy: TextDecoder does not read views of a SharedArrayBuffer everywhere.
    return new TextDecoder("utf-8", { fatal: true }).decode(copyBytes(bytes));
  } catch {
    throw new BundleError("publishBundle: source bytes are not UTF-8 text (a bundle module is a UTF-8 .mjs/.js file)");
  }
}

function bundleHashOf(source: string): string {
  const m = /^export const sha256 = "([0-9a-f]{64})";$/m.exec(source);
  if (m === null || !/^export const format = /m.test(source))
    throw new BundleError(
      "publishBundle: the source is not a batchwise bundle module (no `export const sha256`); pass the text f.bundle() or `batchwise bundle` writes",
    );
  return m[1]!;
}

/**
 * Stores a bundle in Redis under its SHA-256 and resolves to that hash (the
 * value to pass to `runSharded`). `source` is the bundle module's text, as
 * `f.bundle()` / `await f.bundleAsync()` return it or `batchwise bundle` writes
 * it, or the bytes of such a file in any form (`readFileSync("f.bundle.mjs")`, a
 * view, an `ArrayBuffer`), read as UTF-8. The hash is the bundle's recorded
 * `sha256`; workers recompute it with `loadBundle(mod, { sha256 })` and refuse a
 * bundle whose content does not match it. Publishing the same bundle twice is
 * harmless.
 *
 * @example
 * ```ts
 * const f = jit((x: Tensor) => x.mul(x).neg().exp());
 * f(ones([4], []));
 * const hash = await publishBundle("redis://127.0.0.1:6379", f.bundle());
 * ```
 */
export async function publishBundle(
  connection: RedisConnection,
  source: string | ArrayBufferLike | ArrayBufferView,
): Promise<string> {
  const text = bundleText(source);
  const hash = bundleHashOf(text);
  const redis = await client(connection);
  try {
    await redis.set(BUNDLE_KEY + hash, text);
  } finally {
    redis.disconnect();
  }
  return hash;
}
