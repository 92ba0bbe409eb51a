/** Bundles as a user ships them: module text written to a file and imported. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { BundleModule } from "../../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "batchwise-bundle-"));
let files = 0;

export async function importBundle(text: string): Promise<BundleModule> {
  const file = join(dir, `b${files++}.mjs`);
  writeFileSync(file, text);
  return (await import(/* @vite-ignore */ pathToFileURL(file).href)) as BundleModule;
}
