/**
 * `parseSpec` (the CLI's --spec syntax) and the CLI's usage and input errors, run
 * in-process with `main` (the child-process runs are in cli.test.ts).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { DTypeError, fromTypedArray, parseSpec, trace, TraceError, type Tensor } from "../../src/index.js";

describe("parseSpec", () => {
  it("reads dtype (long or IR short name), batch labels and base shape", () => {
    expect(parseSpec("float32[B; 3,3]")).toEqual({ dtype: "float32", batch: ["B"], base: [3, 3] });
    expect(parseSpec("f32[B,N; 3]")).toEqual({ dtype: "float32", batch: ["B", "N"], base: [3] });
    expect(parseSpec("int32[; 4]")).toEqual({ dtype: "int32", batch: [], base: [4] });
    expect(parseSpec(" bool [ B ; ] ")).toEqual({ dtype: "bool", batch: ["B"], base: [] });
    expect(parseSpec("u32[batch_1;2]")).toEqual({ dtype: "uint32", batch: ["batch_1"], base: [2] });
    expect(parseSpec("f64[B; 0, 5]")).toEqual({ dtype: "float64", batch: ["B"], base: [0, 5] });
    expect(parseSpec("i32[;]")).toEqual({ dtype: "int32", batch: [], base: [] });
    expect(parseSpec("f32[B, ~N; 3]")).toEqual({ dtype: "float32", batch: ["B", "~N"], base: [3], jagged: true });
  });

  it("gives specs trace takes: a (B; 2) f32 spec traces x + x for any batch size", () => {
    const f = trace((x: Tensor) => x.add(x), [parseSpec("f32[B; 2]")]);
    expect(
      Array.from(
        (f(fromTypedArray(Float32Array.from([1, 2, 3, 4, 5, 6]), [3, 2], { batchDim: 1 })) as Tensor).dataSync(),
      ),
    ).toEqual([2, 4, 6, 8, 10, 12]);
  });

  it("refuses a bad spec with a typed error naming it and the problem", () => {
    const cases: [string, string][] = [
      ["f32", `spec "f32": expected <dtype>[<batch labels>; <base shape>], e.g. "f32[B; 3,3]" or "int32[; 4]"`],
      ["[B; 3]", `spec "[B; 3]": no dtype before '['`],
      [
        "f32[3,3]",
        `spec "f32[3,3]": no ';' between the batch labels and the base shape (write "f32[; 3,3]" for no batch dims, "f32[B; 3,3]" for one)`,
      ],
      ["f32[B 3]", `spec "f32[B 3]": no ';' between the batch labels and the base shape (as in "f32[B; 3,3]")`],
      ["f32[B; 3; 4]", `spec "f32[B; 3; 4]": more than one ';' (one separates the batch labels from the base shape)`],
      ["f32[B; 3,]", `spec "f32[B; 3,]": an empty base size (two commas, or a trailing one)`],
      [
        "f32[B; -1]",
        `spec "f32[B; -1]": base size "-1" is not a non-negative integer (base shapes are static; batch dims go before the ';')`,
      ],
      [
        "f32[B; N]",
        `spec "f32[B; N]": base size "N" is not a non-negative integer (base shapes are static; batch dims go before the ';')`,
      ],
      ["f32[3; 3]", `spec "f32[3; 3]": batch label "3" is not a name (letters, digits, _), as in "f32[B; 3]"`],
      ["f32[B,,C; 3]", `spec "f32[B,,C; 3]": an empty batch label (two commas, or a trailing one)`],
      [
        "f32[~N; 3]",
        `spec "f32[~N; 3]": a jagged dim "~N" must be the second of exactly two batch dims, as in "f32[B, ~N; 3]"`,
      ],
      [
        "f32[B, ~N, C; 3]",
        `spec "f32[B, ~N, C; 3]": a jagged spec has exactly two batch dims, the second marked '~', as in "f32[B, ~N; 3]"`,
      ],
      ["f32[B, B; 3]", `spec "f32[B, B; 3]": batch label "B" appears twice (each batch dim has its own label)`],
    ];
    for (const [text, message] of cases) {
      expect(() => parseSpec(text), text).toThrow(TraceError);
      expect(() => parseSpec(text), text).toThrow(message);
    }
    expect(() => parseSpec("i64[B; 3]")).toThrow(DTypeError);
    expect(() => parseSpec("i64[B; 3]")).toThrow(
      `spec "i64[B; 3]": unknown dtype "i64" (float32, float64, int32, uint32, bool, uint8, int8, uint16, int16, float16, or f32, f64, i32, u32, bool, u8, i8, u16, i16, f16)`,
    );
    expect(() => parseSpec(3 as unknown as string)).toThrow(
      `parseSpec: a spec must be a string such as "f32[B; 3,3]", got number`,
    );
  });
});

describe("CLI usage and input errors (in-process)", () => {
  const dir = mkdtempSync(join(tmpdir(), "batchwise-cli-unit-"));
  const index = pathToFileURL(resolve(import.meta.dirname, "../../src/index.ts")).href;
  writeFileSync(
    join(dir, "m.mjs"),
    `import { jit } from ${JSON.stringify(index)};\nexport const exp = (x) => x.exp();\nexport const jitted = jit((x) => x.exp());\nexport const n = 7;\nexport const two = (x, y) => x.add(y);\n`,
  );
  writeFileSync(join(dir, "not-a-bundle.mjs"), "export const format = 'something else';\n");
  const run = async (...argv: string[]) => {
    let out = "";
    let err = "";
    const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t), env: {} });
    return { code, out, err };
  };
  const m = join(dir, "m.mjs");

  it("exit 2 on bad usage, with the reason and a pointer to --help", async () => {
    const cases: [string[], string][] = [
      [[], "Usage: batchwise <command> [options]"],
      [
        ["frobnicate"],
        `batchwise: unknown command "frobnicate" (commands: bundle, dump, inspect, worker; see batchwise --help)`,
      ],
      [["bundle", m, "--spec", "f32[B; 3]"], "batchwise bundle: missing --export <name>"],
      [
        ["dump", m, "--export", "exp"],
        `batchwise dump: missing --spec (one per argument of the function, e.g. --spec "f32[B; 3,3]")`,
      ],
      [["dump", "--export", "exp", "--spec", "f32[B; 3]"], "batchwise dump: missing <file> (the module to trace)"],
      [
        ["dump", m, "f32[B;", "3]", "-e", "exp"],
        `batchwise dump: one <file> (the module to trace) expected, got 3 arguments`,
      ],
      [
        ["dump", m, "-e", "exp", "-s", "f32[B; 3]", "--kernels", "--dot"],
        "batchwise dump: --kernels and --dot exclude each other",
      ],
      [
        ["dump", m, "-e", "exp", "-s", "f32[B; 3]", "--backend", "cuda"],
        `batchwise dump: --backend must be js, webgpu or wasm, got "cuda"`,
      ],
      [
        ["bundle", m, "-e", "exp", "-s", "f32[B; 3]", "-o", "out.txt"],
        `batchwise bundle: the bundle's file name must end in .mjs or .js (an ES module), got "out.txt"`,
      ],
      [["inspect"], "batchwise inspect: missing <bundle.mjs> (the bundle to inspect)"],
      [["inspect", "x.mjs", "--export", "f"], "batchwise inspect: Unknown option '--export'"],
      [
        ["worker", "--redis", "redis://127.0.0.1:1", "--backend", "webgpu"],
        `batchwise worker: --backend must be js or wasm, got "webgpu"`,
      ],
      [
        ["worker", "--redis", "redis://127.0.0.1:1", "--threads", "2"],
        "batchwise worker: --threads needs --backend wasm",
      ],
      [
        ["worker", "--redis", "redis://127.0.0.1:1", "--backend", "wasm", "--threads", "0"],
        `batchwise worker: --threads must be a positive integer, got "0"`,
      ],
    ];
    for (const [argv, message] of cases) {
      const r = await run(...argv);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.out).toBe("");
      expect(r.err, argv.join(" ")).toContain(message);
    }
  });

  it("exit 1 on bad input: a missing file, an export that is not a plain function, a trace error, a module that is not a bundle", async () => {
    const cases: [string[], string][] = [
      [
        ["dump", join(dir, "nope.mjs"), "-e", "exp", "-s", "f32[B; 3]"],
        `batchwise dump: cannot find module ${join(dir, "nope.mjs")}`,
      ],
      [
        ["dump", m, "-e", "n", "-s", "f32[B; 3]"],
        `batchwise dump: export "n" of ${m} is a number, not a function of tensors`,
      ],
      [
        ["dump", m, "-e", "jitted", "-s", "f32[B; 3]"],
        `batchwise dump: export "jitted" of ${m} is already a jit function; export the plain function of tensors (the CLI traces it)`,
      ],
      [
        ["dump", m, "-e", "two", "-s", "f32[B; 3]"],
        `batchwise dump: export "two" of ${m} takes 2 arguments, got 1 --spec (one per argument, in order)`,
      ],
      [
        ["dump", m, "-e", "exp", "-s", "f32[B; 3]", "--after", "nope"],
        `batchwise dump: TraceError: dump: unknown pass "nope"; passes are input, narrow, lower,`,
      ],
      [
        ["inspect", join(dir, "not-a-bundle.mjs")],
        `batchwise inspect: BundleError: loadBundle: not a batchwise bundle (format "something else")`,
      ],
    ];
    for (const [argv, message] of cases) {
      const r = await run(...argv);
      expect(r.code, argv.join(" ")).toBe(1);
      expect(r.err, argv.join(" ")).toContain(message);
      expect(r.err).not.toMatch(/\n {4}at /);
    }
  });

  it("--help on each command exits 0 with its usage; dump --kernels and --dot print JS and DOT", async () => {
    for (const c of ["bundle", "dump", "inspect"]) {
      const r = await run(c, "--help");
      expect(r.code).toBe(0);
      expect(r.out).toMatch(new RegExp(`^Usage: batchwise ${c} `));
    }
    const k = await run("dump", m, "-e", "exp", "-s", "f32[B; 2]", "--kernels");
    expect(k.code).toBe(0);
    expect(k.out).toMatch(/^function kernel\(ins, outs, sizes, strides, consts\) \{\n[^]*Math\.exp\(/);
    const d = await run("dump", m, "-e", "exp", "-s", "f32[B; 2]", "--dot");
    expect(d.code).toBe(0);
    expect(d.out).toMatch(/^digraph "exp" \{\n[^]*%0 = exp\\nf32\[b0; 2\]/);
  });
});
