/**
 * The operations table of docs/shapes-and-broadcasting.md names every elementwise Tensor
 * method (`METHOD_OF`) and every reduction method (`REDUCTION_METHODS`): the last edit of
 * the "new elementwise op" and "new reduction" recipes (docs/contributing/), which `tsc`
 * cannot check, is checked here.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { METHOD_OF, REDUCTION_METHODS } from "../../src/api/tensor-op-names.js";

const doc = readFileSync(new URL("../../docs/shapes-and-broadcasting.md", import.meta.url), "utf8");
const table = doc.slice(doc.indexOf("## Operations"));
/** The words inside backticks of the table's rows. */
const listed = new Set(
  table
    .split("\n")
    .filter((l) => l.startsWith("|"))
    .flatMap((l) => [...l.matchAll(/`([^`]*)`/g)].flatMap((m) => m[1]!.split(/[\s,(){}?]+/))),
);

describe("the docs' operations table", () => {
  it("names every elementwise method", () => {
    expect(Object.values(METHOD_OF).filter((m) => !listed.has(m))).toEqual([]);
  });
  it("names every reduction method", () => {
    expect(
      Object.values(REDUCTION_METHODS)
        .flat()
        .filter((m) => !listed.has(m)),
    ).toEqual([]);
  });
});
