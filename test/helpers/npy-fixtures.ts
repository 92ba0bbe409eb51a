/** The `.npy` / `.npz` files in test/fixtures/npy (written by NumPy: make.py there holds their values). */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "../fixtures/npy");

/** The bytes of test/fixtures/npy/`name`. */
export const npyFixture = (name: string): Uint8Array => new Uint8Array(readFileSync(join(FIXTURES, name)));
