/**
 * Every backend's init function (`INIT_FUNCTION`, src/backend.ts: the one the "not
 * initialised" error names) is exported by the full entry as an async function: checked by
 * `tsc` on this file (a new backend without its init fails here), and at run time.
 * (`batchwise/runtime` exports `initWebGPU` but not `initWasm`: it runs bundles on JS and
 * WebGPU only.)
 */
import { readFileSync } from "node:fs";
import { expect, expectTypeOf, it } from "vitest";
import * as full from "../../src/index.js";
import { INIT_FUNCTION } from "../../src/backend.js";
import { BACKEND_NAMES } from "../../runtime/backend-name.js";

type InitName = Exclude<(typeof INIT_FUNCTION)[keyof typeof INIT_FUNCTION], undefined>;
type Inits<M> = { readonly [K in InitName]: K extends keyof M ? M[K] : "not exported" };

it("the full entry exports each backend's init function (type-level and at run time)", () => {
  expectTypeOf<Inits<typeof full>>().toMatchTypeOf<{ readonly [K in InitName]: (...a: never[]) => Promise<unknown> }>();
  for (const name of BACKEND_NAMES) {
    const f = INIT_FUNCTION[name];
    if (f === undefined) continue;
    expect(typeof (full as Record<string, unknown>)[f], `${f} in batchwise`).toBe("function");
  }
});

it("docs/backends.md's table has a row per backend, naming its init function", () => {
  const doc = readFileSync(new URL("../../docs/backends.md", import.meta.url), "utf8");
  for (const name of BACKEND_NAMES) {
    const row = doc.split("\n").find((l) => l.startsWith(`| \`${name}\``));
    expect(row, `a row for ${name}`).toBeDefined();
    const f = INIT_FUNCTION[name];
    expect(f === undefined ? row!.includes("nothing to do") : row!.includes(`\`await ${f}()\``), row).toBe(true);
  }
});
