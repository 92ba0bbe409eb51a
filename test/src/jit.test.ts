/** jit: one trace and no new compile for any batch size of the same batch rank. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { interpret } from "../../ir/interpret.js";
import { parseGraph } from "../../ir/parse.js";
import { getJsBackend } from "../../src/backend.js";
import {
  counters,
  fromTypedArray,
  JaggedTensor,
  jaggedSpec,
  jit,
  ones,
  spec,
  tensor,
  Tensor,
  TensorDict,
  trace,
  TraceError,
} from "../../src/index.js";
import type { Backend } from "../../runtime/backend.js";
import { closeEnough, rng } from "../helpers/random-graph.js";
import { FC_SEED } from "../helpers/run.js";

function cloud(batch: readonly number[], n: number, seed: number): Tensor {
  const r = rng(seed);
  const size = batch.reduce((p, d) => p * d, 1) * n * 3;
  return fromTypedArray(
    Float32Array.from({ length: size }, () => r() * 2 - 1),
    [...batch, n, 3],
    { batchDim: batch.length },
  );
}

/** Covariance of each centred cloud and its determinant (the demo's function). */
function covDet(x: Tensor): [Tensor, Tensor] {
  const c = x.sub(x.mean(0, { keepdim: true }));
  const cov = c
    .transpose()
    .matmul(c)
    .div(x.baseShape[0]! - 1);
  const e = (i: number, j: number) => cov.select(0, i).select(0, j);
  const det = e(0, 0)
    .mul(
      e(1, 1)
        .mul(e(2, 2))
        .sub(e(1, 2).mul(e(2, 1))),
    )
    .sub(
      e(0, 1).mul(
        e(1, 0)
          .mul(e(2, 2))
          .sub(e(1, 2).mul(e(2, 0))),
      ),
    )
    .add(
      e(0, 2).mul(
        e(1, 0)
          .mul(e(2, 1))
          .sub(e(1, 1).mul(e(2, 0))),
      ),
    );
  return [cov, det];
}

describe("jit", () => {
  it("traces once and compiles nothing new for 30 random batch shapes of the same rank", () => {
    const f = jit(covDet);
    f(cloud([3, 2], 8, 1));
    const afterFirst = f.stats;
    expect(afterFirst.traces).toBe(1);
    expect(afterFirst.compiles).toBeGreaterThan(0);
    const graph = parseGraph(f.dump());
    const dispatchesBefore = counters.dispatches;
    fc.assert(
      fc.property(
        fc.tuple(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 1, max: 9 })),
        fc.integer(),
        ([b0, b1], seed) => {
          const x = cloud([b0, b1], 8, seed);
          const [cov, det] = f(x);
          expect(cov.toString()).toBe(`(${b0},${b1}; 3,3)`);
          // Same values as the reference interpreter on the traced graph.
          const ref = interpret(graph, [
            { type: { dtype: "float32", batch: [b0, b1], base: [8, 3] }, data: x.dataSync() },
          ]);
          expect(closeEnough(cov.dataSync(), ref[0]!.data, 1e-6)).toBeUndefined();
          expect(closeEnough(det.dataSync(), ref[1]!.data, 1e-6)).toBeUndefined();
        },
      ),
      { numRuns: 30, seed: FC_SEED },
    );
    expect(f.stats.traces).toBe(1);
    expect(f.stats.compiles).toBe(afterFirst.compiles);
    expect(f.stats.cacheHits).toBe(30);
    expect(counters.dispatches - dispatchesBefore).toBeGreaterThanOrEqual(30);
  });

  it("reuses the trace when a batch dim of size 1 broadcasts", () => {
    const f = jit((a: Tensor, b: Tensor) => a.mul(b).add(1));
    const a = tensor(
      [
        [1, 2],
        [3, 4],
        [5, 6],
      ],
      { batchDim: 1 },
    );
    expect(f(a, tensor([[10, 20]], { batchDim: 1 })).toArraySync()).toEqual([
      [11, 41],
      [31, 81],
      [51, 121],
    ]);
    expect(
      f(
        a,
        tensor(
          [
            [1, 1],
            [2, 2],
            [3, 3],
          ],
          { batchDim: 1 },
        ),
      ).toArraySync(),
    ).toEqual([
      [2, 3],
      [7, 9],
      [16, 19],
    ]);
    expect(f(tensor([[1, 1]], { batchDim: 1 }), a).toArraySync()).toEqual([
      [2, 3],
      [4, 5],
      [6, 7],
    ]);
    expect(f.stats.traces).toBe(1);
    expect(f.stats.cacheHits).toBe(2);
  });

  it("retraces for a new batch rank, base shape or dtype", () => {
    const f = jit((x: Tensor) => x.exp());
    f(tensor([1, 2], { batchDim: 1 }));
    f(tensor([[1, 2]], { batchDim: 2 }));
    f(tensor([[1, 2]], { batchDim: 1 }));
    f(tensor([1, 2], { batchDim: 1, dtype: "float64" }));
    expect(f.stats.traces).toBe(4);
  });

  it("captures realized tensors from outside the trace as inputs", () => {
    const w = tensor([
      [1, 0],
      [0, 2],
    ]);
    const f = jit((x: Tensor) => x.matmul(w));
    expect(
      f(
        tensor(
          [
            [1, 1],
            [2, 3],
          ],
          { batchDim: 1 },
        ),
      ).toArraySync(),
    ).toEqual([
      [1, 2],
      [2, 6],
    ]);
    expect(f.dump()).toContain("%c0: f32[; 2,2]");
  });

  it("returns several outputs, and dumps every stage", () => {
    const f = jit((x: Tensor) => [x.sum(), x.max()] as const);
    const [s, m] = f(
      tensor(
        [
          [1, 5],
          [2, 2],
        ],
        { batchDim: 1 },
      ),
    );
    expect(s.toArraySync()).toEqual([6, 4]);
    expect(m.toArraySync()).toEqual([5, 2]);
    // Two reductions of the same value over the same axes: one kernel, two outputs.
    expect(f.dump({ after: "fuse" })).toMatch(/1 kernels/);
    expect(f.dump({ kernels: true })).toContain("function kernel");
    expect(() => f.dump({ after: "nope" })).toThrow('dump: unknown pass "nope"');
  });

  it("fuses an elementwise chain into one kernel", () => {
    const f = jit((x: Tensor) => x.mul(x).neg().exp().mul(x.mul(3).sin()).add(x.mul(0.5)).sub(x.tanh()));
    const x = fromTypedArray(new Float32Array([0, 0.5, -1]), [3], { batchDim: 1 });
    const y = f(x).dataSync();
    const ref = [0, 0.5, -1].map((v) => Math.exp(-v * v) * Math.sin(3 * v) + 0.5 * v - Math.tanh(v));
    expect(closeEnough(y, ref, 1e-6)).toBeUndefined();
    expect(f.dump({ after: "fuse" })).toMatch(/: 1 kernels/);
  });
});

describe("inspection and memory", () => {
  it("exports Graphviz DOT of any stage, with one cluster per kernel after fusion", () => {
    const f = jit(
      (x: Tensor) =>
        x
          .sub(x.mean(0, { keepdim: true }))
          .abs()
          .max(0),
      { name: "spread" },
    );
    f(fromTypedArray(new Float32Array(40 * 3), [2, 20, 3], { batchDim: 1 }));
    const dot = f.dot();
    expect(dot).toMatch(/^digraph "spread" \{/);
    expect(dot).toContain('label="%0 = mean {baseAxes=[0], batchAxes=[], keep=true}\\nf32[b0; 1,3]"');
    const fused = f.dot({ after: "fuse" });
    expect(fused.match(/subgraph cluster_/g)).toHaveLength(2);
    expect(() => f.dot({ after: "nope" })).toThrow('dot: unknown pass "nope"');
  });

  it("reuses an intermediate buffer once its last use has passed", () => {
    // Two big intermediates of the same size in sequence: the second reuses the first's buffer.
    const f = jit((x: Tensor) => {
      const a = x.exp();
      const s = a.sum(0, { keepdim: true }); // reads a (materialized: used twice)
      const b = a.div(s).sin();
      const t = b.max(0, { keepdim: true });
      return b.sub(t).mul(a.sum(0, { keepdim: true }));
    });
    const before = counters.buffersReused;
    f(fromTypedArray(new Float32Array(2 * 100).fill(0.5), [2, 100], { batchDim: 1 }));
    expect(counters.buffersReused).toBeGreaterThan(before);
  });

  it("dispose frees a tensor and later use is an error", () => {
    const x = tensor([1, 2, 3]);
    const y = x.mul(2);
    x.dispose();
    expect(x.isDisposed).toBe(true);
    expect(() => y.dataSync()).toThrow("a disposed tensor (;3) was used");
  });
});

describe("trace: ahead of time, from specs", () => {
  it("traces and compiles before any data, then serves every batch size from the cache", () => {
    const f = trace(
      (m: Tensor, v: Tensor) => [m.matmul(v.reshape([3, 1])).reshape([3]), m.sum()],
      [spec("float32", ["B"], [3, 3]), spec("float32", [], [3])],
    );
    expect(f.stats).toMatchObject({ traces: 1, calls: 0 });
    expect(f.stats.compiles).toBeGreaterThan(0);
    expect(f.dump()).toMatch(/^func @\w+\(%x0: f32\[b0; 3,3\], %x1: f32\[; 3\]\)/);
    const compiles = f.stats.compiles;
    for (const B of [1, 4, 9]) {
      const m = fromTypedArray(
        Float32Array.from({ length: B * 9 }, (_, i) => i % 5),
        [B, 3, 3],
        { batchDim: 1 },
      );
      const v = fromTypedArray(Float32Array.from([1, -1, 2]), [3]);
      const [mv, s] = f(m, v);
      const md = m.dataSync();
      for (let b = 0; b < B; b++) {
        for (let r = 0; r < 3; r++)
          expect(mv!.dataSync()[b * 3 + r]).toBe(
            md[b * 9 + r * 3]! - md[b * 9 + r * 3 + 1]! + 2 * md[b * 9 + r * 3 + 2]!,
          );
        expect(s!.dataSync()[b]).toBe(Array.from(md.subarray(b * 9, b * 9 + 9)).reduce((a, c) => a + c, 0));
      }
    }
    expect(f.stats).toMatchObject({ traces: 1, compiles, cacheHits: 3, calls: 3 });
  });

  it("takes jagged specs, and a call with another signature traces again", () => {
    const f = trace((x: JaggedTensor) => x.sum(), [jaggedSpec("float32", [2])]);
    expect(f.dump()).toMatch(/%x0: f32\[t0; 2\], %x1: i32\[r0; \]/);
    const out = f(
      new JaggedTensor(
        fromTypedArray(Float32Array.from([1, 2, 3, 4, 5, 6]), [3, 2], { batchDim: 1 }),
        fromTypedArray(Int32Array.from([0, 1, 3]), [3], { batchDim: 1 }),
      ),
    );
    expect(out.toArraySync()).toEqual([
      [1, 2],
      [8, 10],
    ]);
    expect(f.stats).toMatchObject({ traces: 1, cacheHits: 1 });
    expect(() => trace((x: Tensor) => x, [spec("int64" as never, ["B"], [])])).toThrow(
      /trace: spec 0 has an unknown dtype int64/,
    );
  });
});

describe("jit is transactional: a failed trace leaves no state", () => {
  it("a trace that throws caches nothing: the same signature traces again (the issue's repro)", () => {
    let failOn4 = true;
    const f = jit((x: Tensor) => {
      if (failOn4 && x.baseShape[0] === 4) throw new Error("no size 4");
      return x.mul(2);
    });
    expect(Array.from(f(ones([2], [3])).dataSync())).toEqual([2, 2, 2, 2, 2, 2]);
    expect(f.stats).toMatchObject({ traces: 1, cacheHits: 0, calls: 1 });
    expect(() => f(ones([2], [4]))).toThrow("no size 4");
    // Still failing: the failed signature was not cached, so it traces (and throws) again.
    expect(() => f(ones([2], [4]))).toThrow("no size 4");
    expect(f.stats).toMatchObject({ traces: 1, cacheHits: 0, calls: 3 });
    // dump and bundle still show the last successful trace, (b0; 3).
    expect(f.dump()).toMatch(/%x0: f32\[b0; 3\]/);
    expect(f.bundle()).toContain("f32[b0; 3]");
    failOn4 = false;
    expect(Array.from(f(ones([2], [4])).dataSync())).toEqual([2, 2, 2, 2, 2, 2, 2, 2]);
    expect(f.stats).toMatchObject({ traces: 2, cacheHits: 0, calls: 4 });
    expect(f.dump()).toMatch(/%x0: f32\[b0; 4\]/);
    // Both traces are cached now.
    expect(Array.from(f(ones([1], [3])).dataSync())).toEqual([2, 2, 2]);
    expect(Array.from(f(ones([1], [4])).dataSync())).toEqual([2, 2, 2, 2]);
    expect(f.stats).toMatchObject({ traces: 2, cacheHits: 2, calls: 6 });
  });

  it("a failed trace right after a successful call of the same function does not serve the previous trace", async () => {
    let fail = true;
    const f = jit((x: Tensor) => {
      if (fail && x.baseShape[0] === 4) throw new Error("no");
      return x.add(1);
    });
    f(ones([1], [3]));
    await expect(f.callAsync(ones([2], [4]))).rejects.toThrow("no");
    fail = false;
    expect(Array.from((await f.callAsync(ones([2], [4]))).dataSync())).toEqual([2, 2, 2, 2, 2, 2, 2, 2]);
    expect(f.stats).toMatchObject({ traces: 2, cacheHits: 0 });
  });

  it("a function that returns something other than tensors is a TraceError naming what it returned, and caches nothing", () => {
    let ret: unknown = 42;
    const f = jit((x: Tensor) => (ret === undefined ? x.mul(3) : ret) as Tensor);
    expect(() => f(ones([1], [2]))).toThrow(TraceError);
    expect(() => f(ones([1], [2]))).toThrow(
      "jit @jit: the function must return Tensors, JaggedTensors or TensorDicts (or an array of them); it returned a number (42)",
    );
    const cases: [unknown, string][] = [
      [undefined, "it returned undefined"],
      [null, "it returned null"],
      ["abc", 'it returned a string ("abc")'],
      [{ a: 1 }, "it returned a plain object"],
      [new Map(), "it returned a Map"],
      [Promise.resolve(1), "it returned a Promise (an async function cannot be traced"],
      [[ones([1], [2]), "x"], 'element 1 of the returned array is a string ("x")'],
      [[[ones([1], [2])]], "element 0 of the returned array is an array of 1"],
    ];
    for (const [value, message] of cases) {
      const g = jit((x: Tensor) => (value === undefined ? undefined : value) as Tensor, { name: "g" });
      expect(() => g(ones([1], [2])), message).toThrow(TraceError);
      expect(() => g(ones([1], [2])), message).toThrow(message);
      expect(() => g.dump()).toThrow("jit @g: not traced yet");
      expect(() => g.bundle()).toThrow("jit @g: not traced yet");
      expect(g.stats).toMatchObject({ traces: 0, calls: 2 });
    }
    ret = undefined;
    expect(Array.from(f(ones([1], [2])).dataSync())).toEqual([3, 3]);
    expect(f.stats).toMatchObject({ traces: 1, cacheHits: 0, calls: 3 });
    // A TensorDict result is fine.
    const d = jit((x: Tensor) => new TensorDict({ y: x.neg() }, []));
    expect(Array.from(((d(ones([1], [2])) as TensorDict).get("y") as Tensor).dataSync())).toEqual([-1, -1]);
  });

  it("trace(fn, specs): a throwing function or a non-tensor result is the error, and nothing is traced", () => {
    expect(() =>
      trace(() => {
        throw new RangeError("mine");
      }, [spec("float32", ["B"], [2])]),
    ).toThrow(RangeError);
    expect(() => trace(() => 7 as unknown as Tensor, [spec("float32", ["B"], [2])], { name: "seven" })).toThrow(
      "jit @seven: the function must return Tensors, JaggedTensors or TensorDicts (or an array of them); it returned a number (7)",
    );
    // A traced function whose later signature fails keeps its ahead-of-time trace.
    const f = trace(
      (x: Tensor) => {
        if (x.baseShape[0] === 5) throw new Error("five");
        return x.sub(1);
      },
      [spec("float32", ["B"], [2])],
    );
    expect(() => f(ones([1], [5]))).toThrow("five");
    expect(f.dump()).toMatch(/%x0: f32\[b0; 2\]/);
    expect(Array.from(f(ones([2], [2])).dataSync())).toEqual([0, 0, 0, 0]);
    expect(f.stats).toMatchObject({ traces: 1, cacheHits: 1 });
  });

  it("a compile that fails (synchronously or asynchronously) caches nothing: the next call compiles again", async () => {
    const js = getJsBackend();
    for (const mode of ["sync", "async"] as const) {
      let failures = 1;
      // The JS backend, except that its first compile fails.
      const flaky: Backend = Object.assign(Object.create(js) as Backend, {
        compile(k: Parameters<Backend["compile"]>[0]) {
          if (failures-- > 0) {
            if (mode === "sync") throw new Error("compile failed");
            return Promise.reject(new Error("compile failed"));
          }
          const c = js.compile(k);
          return mode === "sync" ? c : Promise.resolve(c);
        },
      });
      const f = jit((x: Tensor) => x.mul(5).add(0.25), { backend: flaky });
      if (mode === "sync") {
        expect(() => f(ones([2], [2]))).toThrow("compile failed");
        expect(() => f.dump()).toThrow("not traced yet");
      } else {
        await expect(f.callAsync(ones([2], [2]))).rejects.toThrow("compile failed");
        expect(() => f.dump()).toThrow("not traced yet");
      }
      const out = await f.callAsync(ones([2], [2]));
      expect(Array.from(await out.data())).toEqual([5.25, 5.25, 5.25, 5.25]);
      expect(f.stats, mode).toMatchObject({ traces: 2, cacheHits: 0, calls: 2 });
      expect(f.dump()).toMatch(/f32\[b0; 2\]/);
      // Once compiled (asynchronously too), the kernels' sources can be dumped.
      expect(f.dump({ kernels: true })).toMatch(/^function kernel\(ins, outs, sizes, strides, consts\)/);
    }
  });
});
