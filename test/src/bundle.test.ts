/**
 * Bundles: a jit trace exported as an ES module, imported from a file and run with
 * no trace and no compile, equal to the jit function itself; bad bundles give typed errors.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makeGraph, Node } from "../../ir/graph.js";
import { createHash } from "node:crypto";
import { bundleSource } from "../../src/bundle.js";
import { sha256Hex } from "../../src/sha256.js";
import { sha256HexSync } from "../../src/sha256-sync.js";
import {
  BundleError,
  bundleSha256,
  counters,
  diag,
  fromTypedArray,
  JaggedTensor,
  jit,
  loadBundle,
  R2,
  ShapeError,
  tensor,
  type BundleModule,
  type Tensor,
} from "../../src/index.js";
import { importBundle } from "../helpers/bundle.js";
import { batchOfMats, jaggedRows } from "../helpers/bundle-fixtures.js";
import { randomCase, randomInputs, seedArb } from "../helpers/random-graph.js";
import { compileJs, FC_SEED, runJs } from "../helpers/run.js";

const mats = (B: number) => batchOfMats(B, (i) => (i % 4 === 0 ? 2 + (i % 7) / 10 : ((i * 37) % 11) / 10 - 0.5));
const jag = (lengths: number[]) => jaggedRows(lengths, (i) => ((i * 13) % 17) - 8);
const same = (a: Tensor, b: Tensor) => {
  expect(a.toString()).toBe(b.toString());
  expect(Array.from(a.dataSync())).toEqual(Array.from(b.dataSync()));
};

describe("bundles", () => {
  it("run a multi-output trace with a captured constant at any batch size, with no trace and no compile", async () => {
    const f = jit((m: Tensor) => {
      const a = new R2(m);
      return [a.inverse().t, a.det().t, diag(m.sum(1)).mul(2)];
    });
    f(mats(2));
    const mod = await importBundle(f.bundle());
    const before = { traces: counters.traces, compiles: counters.compiles, dispatches: counters.dispatches };
    const g = await loadBundle(mod);
    for (const B of [1, 5, 40]) {
      const want = f(mats(B)) as Tensor[];
      const got = g(mats(B)) as Tensor[];
      want.forEach((w, i) => same(got[i]!, w));
    }
    expect(counters.traces).toBe(before.traces);
    expect(counters.compiles).toBe(before.compiles);
    expect(counters.dispatches).toBeGreaterThan(before.dispatches);
    expect(g.dump()).toBe(mod.graph);
    expect(mod.captured.length).toBeGreaterThan(0);
  });

  it("run jagged arguments and results, padding each call to its longest row", async () => {
    const f = jit((x: JaggedTensor) => {
      const c = x.sub(x.mean());
      return [c.toPadded({ paddingValue: -1 }).padded.mul(3), c];
    });
    f(jag([2, 1]));
    const g = await loadBundle(await importBundle(f.bundle()));
    for (const lengths of [[3, 0, 4], [1], [5, 2]]) {
      const [wp, wc] = f(jag(lengths)) as [Tensor, JaggedTensor];
      const [gp, gc] = g(jag(lengths)) as [Tensor, JaggedTensor];
      same(gp, wp);
      expect(gc).toBeInstanceOf(JaggedTensor);
      same(gc.values, wc.values);
    }
  });

  it("refuse what is not a bundle, another version, a tampered graph or step, and arguments that do not match", async () => {
    const f = jit((m: Tensor) => new R2(m).det().t);
    f(mats(2));
    const text = f.bundle();
    const mod = await importBundle(text);
    await expect(loadBundle({ ...mod, format: "other" })).rejects.toThrow(BundleError);
    await expect(loadBundle({ ...mod, version: 99 })).rejects.toThrow(
      "loadBundle: bundle version 99, this batchwise reads versions 2 and 3",
    );
    await expect(loadBundle({ ...mod, graph: mod.graph.replace("f32[b0; 3,3]", "f32[b0; 3,4]") })).rejects.toThrow(
      BundleError,
    );
    await expect(loadBundle({ ...mod, graph: "func @x(" })).rejects.toThrow(/the bundle's graph does not parse/);
    const badStep = { ...mod.steps[0]!, inputs: [999] } as BundleModule["steps"][number];
    await expect(loadBundle({ ...mod, steps: [badStep] })).rejects.toThrow(
      /step 0 \(kernel\) is not the step its graph schedules/,
    );
    await expect(loadBundle({ ...mod, kernels: [] })).rejects.toThrow(/steps and 0 kernels do not match/);
    // A bundle without JS kernels (its hash recomputed, so that only this is wrong) cannot load on JS.
    const wgslOnly = { ...mod, kernels: [{ wgsl: mod.kernels[0]!.wgsl, chunked: mod.kernels[0]!.chunked }] };
    await expect(loadBundle({ ...wgslOnly, sha256: await bundleSha256(wgslOnly) })).rejects.toThrow(
      /step 0 ships no JS function kernel \(the bundle was traced on js;/,
    );
    const g = await loadBundle(mod);
    expect(() => g(fromTypedArray(new Float32Array(8), [2, 2, 2], { batchDim: 1 }))).toThrow(ShapeError);
    expect(() => g(fromTypedArray(new Float32Array(8), [2, 2, 2], { batchDim: 1 }))).toThrow(
      "bundle @jit: argument 0 (2; 2,2) float32 does not match the traced (b0; 3,3) float32",
    );
    expect(() => g(jag([1]))).toThrow('bundle @jit: takes arguments "t" (t tensor, j jagged, d TensorDict), got "j"');
  });
});

describe("bundle constants", () => {
  it("keep NaN, ±Infinity and -0 in captured tensors (JSON would not)", async () => {
    const k = tensor([NaN, -0, Infinity, -Infinity, 1.5, 0]);
    const f = jit((x: Tensor) => [x.add(k), k.mul(-1)]);
    const x = tensor([1, 2, 3, 4, 5, 6]);
    const want = f(x) as Tensor[];
    const g = await loadBundle(await importBundle(f.bundle()));
    const got = g(x) as Tensor[];
    const bits = (t: Tensor) => Array.from(t.dataSync(), (v) => (Object.is(v, -0) ? "-0" : String(v)));
    expect(bits(got[1]!)).toEqual(["NaN", "0", "-Infinity", "Infinity", "-1.5", "-0"]);
    got.forEach((t, i) => expect(bits(t)).toEqual(bits(want[i]!)));
  });
});

describe("bundles of random graphs", () => {
  it("give the bits of the program they were written from (constants with -0, NaN and Inf included)", async () => {
    const seeds = fc.sample(seedArb, { numRuns: 25, seed: FC_SEED });
    for (const [k, seed] of seeds.entries()) {
      const family = (["float32", "float64", "int32"] as const)[k % 3]!;
      const c = randomCase(seed, family, {});
      // Special constants that JSON would lose, folded into the graph's outputs.
      const specials = [NaN, Infinity, -0].map((value) =>
        Node.make("const", [], { dtype: family === "int32" ? "float32" : family, value }),
      );
      const outs = [
        ...c.graph.outputs,
        ...(family === "int32" ? [] : specials.map((s) => Node.make("add", [c.graph.outputs[0]!, s]))),
      ];
      const g = makeGraph(c.graph.name, c.graph.inputs, outs, c.graph.inputNames);
      const inputs = randomInputs(c);
      const program = compileJs(g);
      const want = runJs(program, inputs);
      const mod = await importBundle(
        bundleSource({
          backend: "js",
          schedule: program.schedule,
          fuse: { maxKernelBuffers: Infinity, unrollLimit: 64, mixedBaseOutputs: true, relaxedFloat32: false },
          captured: [],
          args: "t".repeat(g.inputs.length),
          results: "t".repeat(outs.length),
          multi: true,
        }),
      );
      const f = await loadBundle(mod);
      const got = f(
        ...inputs.map((v) =>
          fromTypedArray(v.data.slice(), [...v.type.batch, ...v.type.base], {
            batchDim: v.type.batch.length,
            dtype: v.type.dtype,
          }),
        ),
      ) as Tensor[];
      got.forEach((t, i) => {
        const a = Array.from(t.dataSync()).map((x) => (Object.is(x, -0) ? "-0" : String(x)));
        const b = Array.from(want[i]!.data).map((x) => (Object.is(x, -0) ? "-0" : String(x)));
        expect(a, `seed ${seed} (${family}) output ${i}`).toEqual(b);
      });
    }
  });
});

describe("bundle hashes", () => {
  it("SHA-256 (the writer's synchronous one and the loader's WebCrypto one) gives the FIPS 180-2 test vectors and node:crypto's digests", async () => {
    const vectors: [string, string][] = [
      ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
      ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
      [
        "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
      ],
      ["a".repeat(1_000_000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"],
    ];
    for (const [text, digest] of vectors) {
      expect(sha256HexSync(text)).toBe(digest);
      expect(await sha256Hex(text)).toBe(digest);
    }
    // Every padding case around the 64-byte block, and multi-byte UTF-8.
    for (let n = 0; n < 140; n++) {
      const text = "é€😀x".repeat(n).slice(0, n);
      expect(sha256HexSync(text), `length ${n}`).toBe(createHash("sha256").update(text, "utf8").digest("hex"));
    }
  });

  it("without WebCrypto (a page over plain http) the loader's SHA-256 falls back to the synchronous one", async () => {
    const crypto = Object.getOwnPropertyDescriptor(globalThis, "crypto");
    Object.defineProperty(globalThis, "crypto", { value: undefined, configurable: true });
    try {
      expect(globalThis.crypto).toBeUndefined();
      expect(await sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
      expect(await sha256Hex("é€")).toBe(createHash("sha256").update("é€", "utf8").digest("hex"));
    } finally {
      Object.defineProperty(globalThis, "crypto", crypto!);
    }
  });

  it("a module reformatted by a tool (whitespace, semicolons) keeps its hash and loads; a renamed variable does not", async () => {
    const f = jit((x: Tensor) => x.exp().sum());
    f(tensor([1, 2, 3]));
    const text = f.bundle();
    const reformatted = text.replaceAll("\n  const t", "\n\n      const t").replaceAll(";\n", ";;\n");
    expect(reformatted).not.toBe(text);
    const g = await loadBundle(await importBundle(reformatted));
    expect(Array.from((g(tensor([1, 2, 3])) as Tensor).dataSync())).toEqual(
      Array.from((f(tensor([1, 2, 3])) as Tensor).dataSync()),
    );
    const renamed = text.replaceAll("t0", "u0");
    expect(renamed).not.toBe(text);
    await expect(loadBundle(await importBundle(renamed))).rejects.toThrow(
      /step 0's JS kernel is not the code its kernel IR gives \(an edited kernel, or a tool such as a minifier rewrote the module\)/,
    );
  });
});
