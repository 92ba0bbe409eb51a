/**
 * The pure parts of the doc-block runner (test/helpers/doc-blocks.ts): fences
 * found with their lines and flags, `// →` / `// ≈` comments read (and not read
 * inside strings), and the stdout comparison, with cases that must fail.
 */
import { describe, expect, it } from "vitest";
import {
  compareOutput,
  declaredNames,
  docNames,
  extractBlocks,
  fencedBlocks,
  lineComments,
  parseExpectations,
  proseOf,
  tokenize,
  type Expectation,
} from "../helpers/doc-blocks.js";

const md = [
  "# Title", // 1
  "", // 2
  "```ts", // 3
  'import { tensor } from "batchwise";', // 4
  "console.log(1); // → 1", // 5
  "```", // 6
  "", // 7
  "```sh", // 8
  "npm test", // 9
  "```", // 10
  "- a list item:", // 11
  "", // 12
  "  ```js needs=webgpu,redis", // 13
  "  console.log(2);", // 14
  "    indented();", // 15
  "  ```", // 16
  "", // 17
  "````ts fragment", // 18
  "x.add(1);", // 19
  "```", // 20
  "still inside", // 21
  "````", // 22
  "~~~typescript no-run needs=redis", // 23
  "server();", // 24
  "~~~", // 25
  "```json", // 26
  "{}", // 27
  "```", // 28
  "```ts fragmnet needs=gpu", // 29
  "y;", // 30
  "```", // 31
  "Text with ```inline``` code.", // 32
].join("\n");

describe("extractBlocks", () => {
  const blocks = extractBlocks(md, "docs/x.md");

  it("finds ts/js blocks with the opening fence's line, and skips sh, json and inline spans", () => {
    expect(blocks.map((b) => [b.line, b.lang])).toEqual([
      [3, "ts"],
      [13, "js"],
      [18, "ts"],
      [23, "ts"],
      [29, "ts"],
    ]);
    expect(fencedBlocks(md, "x").map((b) => b.word)).toEqual(["ts", "sh", "js", "ts", "typescript", "json", "ts"]);
  });

  it("keeps the code as printed, minus the fence's indentation; a longer fence contains shorter ones", () => {
    expect(blocks[0]!.code).toBe('import { tensor } from "batchwise";\nconsole.log(1); // → 1\n');
    expect(blocks[1]!.code).toBe("console.log(2);\n  indented();\n");
    expect(blocks[2]!.code).toBe("x.add(1);\n```\nstill inside\n");
  });

  it("parses the flags", () => {
    const [a, b, c, d] = blocks;
    expect([a!.fragment, a!.noRun, a!.needs, a!.problems]).toEqual([false, false, [], []]);
    expect(b!.needs).toEqual(["webgpu", "redis"]);
    expect([c!.fragment, c!.noRun]).toEqual([true, false]);
    expect([d!.fragment, d!.noRun, d!.needs]).toEqual([false, true, ["redis"]]);
  });

  it("reports an unknown flag or need, an unclosed fence and an empty block as problems of that block", () => {
    expect(blocks[4]!.problems).toEqual([
      'unknown flag "fragmnet" in "ts fragmnet needs=gpu" (known: fragment, no-run, needs=webgpu, needs=redis)',
      'unknown need "gpu" in "ts fragmnet needs=gpu" (known: webgpu, redis)',
    ]);
    const open = extractBlocks("text\n```ts\nconsole.log(1);\n", "a.md");
    expect(open[0]!.problems).toEqual(["the fence is not closed before the end of the file"]);
    expect(extractBlocks("```js\n```\n", "a.md")[0]!.problems).toEqual(["the block is empty"]);
  });
});

describe("parseExpectations", () => {
  it("reads → and ≈ comments at the end of a line or on their own line, with their lines", () => {
    const code = [
      "console.log(x); // → [1, 2]",
      "// → [3]",
      "console.log(Math.PI); //≈ 3.14159265",
      "// a plain comment → not an expectation",
    ].join("\n");
    expect(parseExpectations(code)).toEqual([
      { kind: "exact", text: "[1, 2]", line: 1 },
      { kind: "exact", text: "[3]", line: 2 },
      { kind: "approx", text: "3.14159265", line: 3 },
    ]);
  });

  it("ignores // inside strings, templates (with ${} inside) and block comments, and counts their lines", () => {
    const code = [
      'const u = "http://x // → no";',
      "const t = `a // → no ${'}' + `inner // → no`} // → no",
      "still template // → no`; // → yes1",
      "/* // → no",
      "*/ f('it\\'s // → no'); // → yes2",
      "const r = /a\\/\\//; // → yes3",
      "const d = (a / 2) / b[0]; // → yes4",
    ].join("\n");
    expect(parseExpectations(code).map((e) => [e.text, e.line])).toEqual([
      ["yes1", 3],
      ["yes2", 5],
      ["yes3", 6],
      ["yes4", 7],
    ]);
    expect(lineComments("a; // one\n\n// two").map((c) => [c.line, c.text])).toEqual([
      [1, " one"],
      [3, " two"],
    ]);
  });
});

const exact = (...texts: string[]): Expectation[] => texts.map((text, i) => ({ kind: "exact", text, line: i + 1 }));
const approx = (text: string): Expectation => ({ kind: "approx", text, line: 1 });

describe("compareOutput", () => {
  it("without expectations accepts any output", () => {
    expect(compareOutput("anything\n", [])).toBeNull();
  });

  it("→: the whole stdout equals the comments' concatenation, whitespace ignored", () => {
    expect(compareOutput("[ 1, 2 ]\n[3]\n", exact("[1, 2]", "[3]"))).toBeNull();
    expect(compareOutput("[\n  [1, 2],\n  [3, 4]\n]\n", exact("[[1, 2], [3, 4]]"))).toBeNull();
    expect(compareOutput("(3,100,5; 13,2)\n", exact("(3,100,5;13,2)"))).toBeNull();
  });

  it("→ fails on a different value, a missing line, an extra line and a different order", () => {
    expect(compareOutput("[1, 3]\n", exact("[1, 2]"))).toMatch(/at character 3: expected "2\]", got "3\]"/);
    expect(compareOutput("[1, 2]\n", exact("[1, 2]", "[3]"))).toMatch(/expected "\[3\]", got ""/);
    expect(compareOutput("[1, 2]\n[3]\n", exact("[1, 2]"))).not.toBeNull();
    expect(compareOutput("b\na\n", exact("a", "b"))).not.toBeNull();
    expect(compareOutput("", exact("x"))).not.toBeNull();
    // Exact means exact: 0.30000000000000004 is not 0.3.
    expect(compareOutput(`${0.1 + 0.2}\n`, exact("0.3"))).not.toBeNull();
  });

  it("≈: the text around the numbers matches and each number is within 1e-6 relative", () => {
    expect(compareOutput(`${Math.PI}\n`, [approx("3.141593")])).toBeNull();
    expect(compareOutput(`[ ${0.1 + 0.2}, ${1 / 3} ]\n`, [approx("[0.3, 0.3333333]")])).toBeNull();
    expect(compareOutput("1e-13\n", [approx("0")])).toBeNull(); // 1e-12 absolute
    expect(compareOutput("[NaN, -Infinity, 5]\n", [approx("[NaN, -Infinity, 5.000001]")])).toBeNull();
    expect(compareOutput("Float32Array(2) [ 1.0000001, 2 ]\n", [approx("Float32Array(2) [1, 2]")])).toBeNull();
  });

  it("≈ fails on a number off by more than the tolerance, a different skeleton, NaN against a number, a count mismatch", () => {
    expect(compareOutput("3.1416\n", [approx("3.14159265")])).toMatch(/token 0: expected "3.14159265"/);
    expect(compareOutput("1e-11\n", [approx("0")])).not.toBeNull();
    expect(compareOutput("[0.3]\n", [approx("(0.3)")])).not.toBeNull();
    expect(compareOutput("NaN\n", [approx("0")])).not.toBeNull();
    expect(compareOutput("0\n", [approx("NaN")])).not.toBeNull();
    expect(compareOutput("Infinity\n", [approx("1e308")])).not.toBeNull();
    expect(compareOutput("[1, 2]\n", [approx("[1, 2, 3]")])).not.toBeNull();
    expect(compareOutput("[1, 2, 3]\n", [approx("[1, 2]")])).not.toBeNull();
    // Numbers are separated as printed: "1 2" is two numbers, not 12.
    expect(compareOutput("1 2\n", [approx("12")])).not.toBeNull();
  });

  it("→ and ≈ mixed: → numbers as written, ≈ numbers within the tolerance, in order", () => {
    const mixed: Expectation[] = [{ kind: "exact", text: "float32 (2;)", line: 1 }, approx("[0.3333333, 1]")];
    expect(compareOutput(`float32 (2;)\n[ ${1 / 3}, 1 ]\n`, mixed)).toBeNull();
    expect(compareOutput(`float64 (2;)\n[ ${1 / 3}, 1 ]\n`, mixed)).toMatch(/expected "64"|expected "32"/);
    expect(compareOutput(`float32 (2;)\n[ 0.34, 1 ]\n`, mixed)).not.toBeNull();
  });

  it("tokenize splits numbers from text, whitespace only separating", () => {
    expect(tokenize("float32 [ -1.5e-3, NaN ] x", true).map((t) => `${t.kind}:${t.text}`)).toEqual([
      "text:float",
      "num:32",
      "text:[",
      "num:-1.5e-3",
      "text:,",
      "num:NaN",
      "text:]x",
    ]);
  });
});

describe("docNames", () => {
  const doc = [
    "The call starts in `src/jit.ts:jit`, then `passes/fuse/` and `ir/kernel.ts`;", // 1
    "not paths: `batchwise/runtime`, `x / 0`, `store8/16`, `src`, `a.npy`, `test/**/*.ts`.", // 2
    "Root file: `./package.json`; member `src/tensor.ts:Tensor.sum()`; line `src/a.ts:12`.", // 3
    "```ts", // 4
    "const p = `src/not-prose.ts`;", // 5
    "```", // 6
    "See [the guide](guide.md#top), [site](https://x.org), [api](api/index.html), `[no](link.md)`.", // 7
  ].join("\n");

  it("finds backtick repo paths, path:identifier names and relative links, and nothing in code blocks", () => {
    expect(docNames(doc, "docs/a.md").map((n) => [n.line, n.path, n.identifier ?? n.lineRef ?? ""])).toEqual([
      [1, "src/jit.ts", "jit"],
      [1, "passes/fuse/", ""],
      [1, "ir/kernel.ts", ""],
      [3, "package.json", ""],
      [3, "src/tensor.ts", "Tensor.sum"],
      [3, "src/a.ts", "12"],
      [7, "docs/guide.md", ""],
    ]);
    expect(proseOf(doc).split("\n")[4]).toBe("");
  });
});

describe("declaredNames", () => {
  const src = `
    export function jit() {}
    export class Tensor { sum() {} get shape() { return 1; } private cache = 1; }
    export interface Opts { readonly fusion?: boolean; run(): void }
    export type DType = "f32";
    export const { a, b: [c] } = x;
    export const linalg = { det, solve: () => 1 };
    enum E { One }
    export namespace ns { export const k = 1; export function g() {} }
    function outer() { function inner() {} }
    export { outer as renamed };
  `;
  const names = declaredNames(src);

  it("lists declarations at any depth, members as Outer.member, and export aliases", () => {
    for (const n of [
      "jit",
      "Tensor",
      "Tensor.sum",
      "Tensor.shape",
      "Tensor.cache",
      "Opts.fusion",
      "Opts.run",
      "DType",
      "a",
      "c",
      "linalg",
      "linalg.det",
      "linalg.solve",
      "E.One",
      "ns.k",
      "ns.g",
      "inner",
      "renamed",
    ])
      expect(names.has(n), n).toBe(true);
  });

  it("does not list names that are only used", () => {
    for (const n of ["x", "det", "Tensor.mean", "jit.call", "missing"]) expect(names.has(n), n).toBe(false);
  });
});
