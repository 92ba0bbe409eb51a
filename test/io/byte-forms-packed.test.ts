/**
 * The README's `loadNpy(readFileSync("a.npy"))`, as a user runs it: in a fresh
 * project that installed the packed tarball (test/helpers/packed.ts), a Node
 * script reads a small `.npy` and a `.npz` with `readFileSync` (Buffers from
 * Node's pool, so their byteOffset is not 0: the script prints it and the test
 * checks it) and loads them on the JS and the WebAssembly backends; and a
 * TypeScript file passing every form of bytes (Buffer, DataView,
 * SharedArrayBuffer, ArrayBuffer, views of them) type-checks against the
 * package's published declarations.
 */
import { execFile } from "node:child_process";
import { copyFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scratchApp } from "../helpers/packed.js";

const run = promisify(execFile);
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const tsc = join(root, "node_modules/typescript/bin/tsc");
let dir = "";

/** A float32 (2, 3) `.npy` of 0..5 built by hand (magic, version 1.0, header padded to 64 bytes, values). */
function aNpy(): Uint8Array {
  const dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  const header = dict + " ".repeat((64 - ((10 + dict.length + 1) % 64)) % 64) + "\n";
  const values = new Uint8Array(Float32Array.of(0, 1, 2, 3, 4, 5).buffer);
  const out = new Uint8Array(10 + header.length + values.length);
  out.set([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, header.length, 0]);
  for (let i = 0; i < header.length; i++) out[10 + i] = header.charCodeAt(i);
  out.set(values, 10 + header.length);
  return out;
}

const script = `import { readFileSync } from "node:fs";
import { initWasm, loadNpy, loadNpz } from "batchwise";

const a = readFileSync("a.npy");
const out = { offsets: [a.byteOffset, readFileSync("arrays.npz").byteOffset] };
out.js = Array.from(loadNpy(readFileSync("a.npy")).dataSync());
out.npzJs = Array.from(loadNpz(readFileSync("arrays.npz")).points.dataSync());
await initWasm({ threads: 1 });
out.wasm = Array.from(loadNpy(readFileSync("a.npy")).dataSync());
out.npzWasm = Array.from(loadNpz(readFileSync("arrays.npz")).points.dataSync());
console.log(JSON.stringify(out));
`;

const typed = `import { readFileSync } from "node:fs";
import { loadNpy, loadNpz, readNpy, type Tensor } from "batchwise";

const b: Buffer = readFileSync("a.npy");
const shared = new SharedArrayBuffer(b.length);
new Uint8Array(shared).set(b);
export const all: Tensor[] = [
  loadNpy(b),
  loadNpy(new DataView(b.buffer, b.byteOffset, b.byteLength)),
  loadNpy(b.subarray(0)),
  loadNpy(shared),
  loadNpy(new Uint8Array(shared, 0, b.length)),
  loadNpy(new Uint8Array(b).buffer),
];
export const raw = readNpy(new DataView(shared)).data;
export const z: Record<string, Tensor> = loadNpz(readFileSync("arrays.npz"));
`;

beforeAll(async () => {
  const app = await scratchApp("batchwise-bytes-");
  dir = app.dir;
  await writeFile(join(dir, "a.npy"), aNpy());
  await copyFile(join(root, "test/fixtures/npy/arrays.npz"), join(dir, "arrays.npz"));
  await writeFile(join(dir, "main.mjs"), script);
  await writeFile(join(dir, "typed.ts"), typed);
}, 300_000);

afterAll(async () => {
  if (dir !== "") await rm(dir, { recursive: true, force: true });
});

describe("the packed package reads readFileSync's Buffers", () => {
  it("loadNpy(readFileSync('a.npy')) and loadNpz(readFileSync(...)) on JS and wasm give the file's values", async () => {
    const { stdout } = await run(process.execPath, ["main.mjs"], { cwd: dir });
    const out = JSON.parse(stdout) as Record<string, number[]>;
    // Both Buffers came from Node's pool: reading from byte 0 of their ArrayBuffer would be wrong.
    expect(out["offsets"]!.every((o) => o > 0)).toBe(true);
    expect(out["js"]).toEqual([0, 1, 2, 3, 4, 5]);
    expect(out["wasm"]).toEqual([0, 1, 2, 3, 4, 5]);
    expect(out["npzJs"]).toEqual([0, 1, 2, 3, 4, 5]);
    expect(out["npzWasm"]).toEqual([0, 1, 2, 3, 4, 5]);
  }, 60_000);

  it("every form of bytes type-checks against the published declarations", async () => {
    const r = await run(
      process.execPath,
      [
        tsc,
        "--noEmit",
        "--strict",
        "--target",
        "ES2022",
        "--module",
        "nodenext",
        "--moduleResolution",
        "nodenext",
        "--types",
        "node",
        "--skipLibCheck",
        "typed.ts",
      ],
      { cwd: dir },
    ).catch((e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? "", stderr: e.stderr ?? "failed" }));
    expect(`${r.stdout}${r.stderr}`).toBe("");
  }, 120_000);
});
