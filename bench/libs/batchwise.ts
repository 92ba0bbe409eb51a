// batchwise's rows. Written against the public API of src/index.ts; every
// kernel is guarded (dynamic import, feature checks, and the worker turns a
// throw into a "skipped: <reason>" note), so `npm run bench` runs with the
// peers alone while the library is still being built.
//
// Shapes: B1/B5 treat the N floats as a batch of scalars, (N;); B3/B6 are
// (clouds; points, 3) with base axes 0 = points, 1 = xyz; B2 is (count; 3, 3).
// One jit instance per benchmark, so the counters describe that benchmark.

import type { B1In, B2Out, B4Out, B7Out, B8EighOut, B9Out, Counters, LibAdapter } from "../cases.js";
import { b1Chain, b3Normalize, type BenchTensor } from "./batchwise-functions.js";

/** The slice of the tensor API these benchmarks use (see the brief in bench/README.md). */
interface Tensor extends BenchTensor<Tensor> {
  dataSync(opts?: { copy?: boolean }): ArrayLike<number>;
  data(): Promise<ArrayLike<number>>;
  dispose?(): void;
}
type Jitted<A extends unknown[], R> = ((...args: A) => R) & { stats: Counters; callAsync(...args: A): Promise<R> };
interface Batchwise {
  jit<A extends unknown[], R>(
    fn: (...args: A) => R,
    opts?: { fusion?: boolean; float32?: "exact" | "relaxed" },
  ): Jitted<A, R>;
  fromTypedArray(data: Float32Array, shape: number[], opts: { batchDim: number; copy?: boolean }): Tensor;
  setBackend?(name: string): void;
  initWebGPU?(): Promise<unknown>;
  // Typed tensors and ragged helpers, probed at run time.
  R2?: unknown;
  linalg?: unknown;
  listToPadded?: unknown;
  listToPacked?: unknown;
  getFirstIdx?: unknown;
}

// Zero-copy on both ends (`copy: false`), as the hand-written loop reads its input
// and returns its output array directly; WebGPU uploads and reads back as it must.
function f32(t: Tensor): Float32Array {
  const d = t.dataSync({ copy: false });
  return d instanceof Float32Array ? d : Float32Array.from(d);
}

async function f32Async(t: Tensor): Promise<Float32Array> {
  const d = await t.data();
  return d instanceof Float32Array ? d : Float32Array.from(d);
}

function counters(f: { stats: Counters }): () => Counters {
  return () => ({ traces: f.stats.traces, compiles: f.stats.compiles, cacheHits: f.stats.cacheHits });
}

/** "vendor device (description; feature level; dawn flags)", flagged when it is a software rasterizer. */
function describeAdapter(backend: unknown): string {
  const a = (backend as { adapter?: Record<string, unknown> } | undefined)?.adapter;
  if (!a) return "WebGPU adapter: (not described by initWebGPU())";
  const parts = [a["vendor"], a["architecture"], a["device"], a["description"]].filter(
    (p) => typeof p === "string" && p !== "",
  );
  const extra = [a["featureLevel"], Array.isArray(a["dawnFlags"]) ? a["dawnFlags"].join(" ") : undefined].filter(
    (p) => p,
  );
  const text = `${parts.join(" ") || "unnamed"}${extra.length ? ` (${extra.join("; ")})` : ""}`;
  const software = /llvmpipe|softpipe|swiftshader|lavapipe|software/i.test(text);
  return `WebGPU adapter: ${text}${software ? ": SOFTWARE rasterizer (a CPU pretending to be a GPU), times are not GPU times" : ""}`;
}

export default async function load(backend: string): Promise<LibAdapter> {
  const adapter: LibAdapter = { library: "batchwise", backend, kernels: {}, skipped: {}, notes: [] };
  /** The adapter with B1-B4 skipped for `why` (the library cannot run them). */
  const skipAll = (why: string): LibAdapter => {
    adapter.skipped = { B1: why, B2: why, B3: why, B4: why };
    return adapter;
  };
  let bw: Batchwise;
  try {
    bw = (await import("../../src/index.js")) as unknown as Batchwise;
  } catch (e) {
    return skipAll(
      `src/index.ts cannot be imported yet (${e instanceof Error ? e.message.split("\n")[0] : String(e)})`,
    );
  }
  for (const name of ["jit", "fromTypedArray"] as const) {
    if (typeof bw[name] !== "function") {
      return skipAll(`src/index.ts does not export ${name}() yet`);
    }
  }
  /** An unfused row (webgpu-unfused, js-unfused): B1 only, jit(fn, { fusion: false }), timed by `run(f)`. */
  const unfusedB1 = (
    run: (f: Jitted<[Tensor], Tensor>) => (input: B1In) => Float32Array | Promise<Float32Array>,
    note: string,
  ): LibAdapter => {
    const f = bw.jit((x: Tensor) => b1Chain(x), { fusion: false });
    adapter.kernels.B1 = () => ({ run: run(f), stats: counters(f) });
    const why = "the unfused row measures B1 only";
    adapter.skipped = { B2: why, B3: why, B4: why };
    adapter.notes!.push(note);
    return adapter;
  };
  if (backend === "webgpu" || backend === "webgpu-unfused") {
    // Needs a WebGPU adapter (a GPU, or Dawn on Mesa's software rasterizer: docs/ARCHITECTURE.md, Backends).
    if (typeof bw.initWebGPU !== "function" || typeof bw.setBackend !== "function") {
      return skipAll("src/index.ts does not export initWebGPU()/setBackend() yet");
    }
    let info: unknown;
    try {
      info = await bw.initWebGPU();
      bw.setBackend("webgpu");
    } catch (e) {
      return skipAll(`no WebGPU adapter (${e instanceof Error ? e.message.split("\n")[0] : String(e)})`);
    }
    const described = describeAdapter(info);
    adapter.notes!.push(described);
    if (described.includes("SOFTWARE")) adapter.backend = "webgpu (software)";
    if (backend === "webgpu-unfused") {
      // B1 only, as js-unfused: what fusion buys on the WGSL path.
      adapter.backend += " unfused";
      return unfusedB1(
        (f) =>
          ({ x }) =>
            f.callAsync(bw.fromTypedArray(x, [x.length], { batchDim: 1 })).then(f32Async),
        "webgpu-unfused: jit(fn, { fusion: false }) on WebGPU, every op its own dispatch and buffer",
      );
    }
  } else if (backend === "js-unfused") {
    // B1 only: the same code with fusion off, one kernel and one buffer per op.
    return unfusedB1(
      (f) =>
        ({ x }) =>
          f32(f(bw.fromTypedArray(x, [x.length], { batchDim: 1, copy: false }))),
      "js-unfused: jit(fn, { fusion: false }), every op its own kernel and buffer",
    );
  } else if (backend === "js-exact") {
    adapter.notes!.push(
      'js-exact: jit(fn, { float32: "exact" }), every float32 op rounded (bit-identical to op-by-op evaluation)',
    );
  } else if (backend !== "js") {
    throw new Error(`batchwise: unknown backend ${backend}`);
  }
  // The JS backend runs synchronously; WebGPU compiles and reads back asynchronously.
  const sync = backend === "js" || backend === "js-exact";
  const jitOpts = backend === "js-exact" ? { float32: "exact" as const } : {};
  const run1 = <A extends unknown[]>(f: Jitted<A, Tensor>, ...args: A): Float32Array | Promise<Float32Array> =>
    sync ? f32(f(...args)) : f.callAsync(...args).then(f32Async);
  /** A two-output function (B2, B8eigh) on `count` (count; 3, 3) matrices, read back as float32 (JS backend). */
  const matrices3 = (f: (m: Tensor) => unknown, m: Float32Array, count: number): [Float32Array, Float32Array] => {
    const [a, b] = f(bw.fromTypedArray(m, [count, 3, 3], { batchDim: 1, copy: false })) as [Tensor, Tensor];
    return [f32(a), f32(b)];
  };

  // exp(-x*x) * sin(3x) + 0.5x - tanh(x) on (N;)
  adapter.kernels.B1 = () => {
    const f = bw.jit((x: Tensor) => b1Chain(x), jitOpts);
    return {
      run: ({ x }) => run1(f, bw.fromTypedArray(x, [x.length], { batchDim: 1, copy: false })),
      stats: counters(f),
    };
  };

  // (clouds; points, 3): subtract the mean point, divide by the max point norm.
  adapter.kernels.B3 = () => {
    const f = bw.jit((x: Tensor) => b3Normalize(x), jitOpts);
    return {
      run: ({ x, clouds, points }) => run1(f, bw.fromTypedArray(x, [clouds, points, 3], { batchDim: 1, copy: false })),
      stats: counters(f),
    };
  };

  // (count; 3, 3): inverse and determinant of the typed R2 tensor, in one jit function.
  type R2Like = { inverse(): { t: Tensor }; det(): { t: Tensor } };
  const R2 = bw.R2 as (new (t: Tensor) => R2Like) | undefined;
  if (!sync) {
    adapter.skipped.B2 = adapter.skipped.B4 = "JS backend only in this bench for now";
  } else if (typeof R2 !== "function") {
    adapter.skipped.B2 = "needs the typed R2 tensor: src/index.ts does not export R2";
  } else {
    adapter.kernels.B2 = () => {
      const f = bw.jit((m: Tensor) => {
        const a = new R2(m);
        return [a.inverse().t, a.det().t];
      }, jitOpts);
      return {
        run: ({ m, count }): B2Out => {
          const [inv, det] = matrices3(f, m, count);
          return { inv, det };
        },
        stats: counters(f),
      };
    };
  }

  // Ragged clouds -> padded (B, maxN, 3) and packed (sum N, 3) with first_idx (Kaolin's helpers).
  type ListToPadded = (list: Tensor[], padValue: number) => [Tensor, Tensor];
  type ListToPacked = (list: Tensor[]) => [Tensor, Tensor];
  type GetFirstIdx = (numelPerTensor: Int32Array) => Tensor;
  const getFirstIdx = bw.getFirstIdx as GetFirstIdx | undefined;
  const listToPadded = bw.listToPadded as ListToPadded | undefined;
  const listToPacked = bw.listToPacked as ListToPacked | undefined;
  if (!sync) {
    // noted above
  } else if (
    typeof listToPadded !== "function" ||
    typeof listToPacked !== "function" ||
    typeof getFirstIdx !== "function"
  ) {
    adapter.skipped.B4 = "needs the ragged helpers listToPadded/listToPacked/getFirstIdx: not exported by src/index.ts";
  } else {
    adapter.kernels.B4 = () => ({
      run: ({ clouds, sizes }): B4Out => {
        const list = clouds.map((c, b) => bw.fromTypedArray(c, [sizes[b]!, 3], { batchDim: 0, copy: false }));
        const [padded] = listToPadded(list, 0);
        const [packed] = listToPacked(list);
        let maxN = 0;
        for (let b = 0; b < clouds.length; b++) maxN = Math.max(maxN, sizes[b]!);
        const firstIdx = getFirstIdx(sizes).dataSync({ copy: false }) as Int32Array;
        return { padded: f32(padded), maxN, packed: f32(packed), firstIdx };
      },
    });
  }
  // --- B8: batched linear algebra ---
  // (count; 6,6) solve with (count; 6) right-hand sides; (count; 3,3) symmetric eigh (Jacobi, default sweeps).
  type Linalg = {
    solve(a: Tensor, b: Tensor): Tensor;
    eigh(a: Tensor): { eigenvalues: Tensor; eigenvectors: Tensor };
  };
  const linalg = bw.linalg as Linalg | undefined;
  if (!sync) {
    adapter.skipped.B8solve = adapter.skipped.B8eigh = "JS backend only in this bench for now";
  } else if (linalg === undefined || typeof linalg.solve !== "function") {
    adapter.skipped.B8solve = adapter.skipped.B8eigh = "src/index.ts does not export linalg";
  } else {
    adapter.kernels.B8solve = () => {
      const f = bw.jit((a: Tensor, b: Tensor) => linalg.solve(a, b), jitOpts);
      return {
        run: ({ a, b, count }) =>
          f32(
            f(
              bw.fromTypedArray(a, [count, 6, 6], { batchDim: 1, copy: false }),
              bw.fromTypedArray(b, [count, 6], { batchDim: 1, copy: false }),
            ),
          ),
        stats: counters(f),
      };
    };
    adapter.kernels.B8eigh = () => {
      const f = bw.jit((a: Tensor) => {
        const r = linalg.eigh(a);
        return [r.eigenvalues, r.eigenvectors];
      }, jitOpts);
      return {
        run: ({ a, count }): B8EighOut => {
          const [values, vectors] = matrices3(f, a, count);
          return { values, vectors };
        },
        stats: counters(f),
      };
    };
  }
  // --- B9: J2 plasticity, stress and consistent tangent from jacobian/grad (examples/j2-plasticity.ts) ---
  // (count; 6) Mandel strains from a virgin state -> stress (count; 6) and dσ/dε (count; 6, 6), float64.
  if (!sync) {
    adapter.skipped.B9 = "JS backend only in this bench for now";
  } else if (typeof (bw as { jacobian?: unknown }).jacobian !== "function") {
    adapter.skipped.B9 = "needs jacobian/grad: src/index.ts does not export them";
  } else {
    adapter.kernels.B9 = async () => {
      const { j2Update } = await import("../../examples/j2-plasticity.js");
      const { B9_MATERIAL } = await import("../cases.js");
      const lib = bw as unknown as typeof import("../../src/index.js");
      const f = lib.jit((e: import("../../src/index.js").Tensor) => {
        const f64 = { dtype: "float64" as const };
        const r = j2Update(B9_MATERIAL, new lib.SR2(e), lib.SR2.fill(0, f64), lib.Scalar.fill(0, f64));
        return [r.stress.t, r.tangent.t];
      }, jitOpts);
      // Traced and compiled once on a 1-point batch here (one trace serves every batch size):
      // the timed calls at 1e5 points reuse that kernel. The compile time is printed in the notes.
      const t0 = performance.now();
      f(lib.fromTypedArray(new Float64Array(6), [1, 6], { batchDim: 1 }));
      adapter.notes!.push(
        `B9: jit trace + compile of the stress and jacobian kernel on a 1-point batch took ${(performance.now() - t0).toFixed(0)} ms (before timing)`,
      );
      return {
        run: ({ strain, count }): B9Out => {
          const [s, t] = f(lib.fromTypedArray(strain, [count, 6], { batchDim: 1, copy: false }));
          return {
            stress: s!.dataSync({ copy: false }) as Float64Array,
            tangent: t!.dataSync({ copy: false }) as Float64Array,
          };
        },
        stats: counters(f as unknown as { stats: Counters }),
      };
    };
  }
  // --- B7: gather + scatter-add: (;N) points into (;bins) bins by (;N) int32 indices, then read back ---
  if (typeof (bw as { zeros?: unknown }).zeros !== "function") {
    adapter.skipped.B7 = "needs zeros() and Tensor.at(): src/index.ts does not export them";
  } else {
    adapter.kernels.B7 = () => {
      const lib = bw as unknown as typeof import("../../src/index.js");
      type T = import("../../src/index.js").Tensor;
      // One jit per bin count (a base size is part of the trace key); the bench uses one.
      let f: (((p: T, i: T) => T[]) & { stats: Counters }) | undefined;
      let bins0 = -1;
      return {
        run: async ({ points, bins, nBins }): Promise<B7Out> => {
          if (f === undefined || nBins !== bins0) {
            bins0 = nBins;
            f = lib.jit((p: T, i: T) => {
              const sums = lib.zeros([], [nBins]).at(i).add(p);
              return [sums, sums.take(i)];
            }, jitOpts) as unknown as ((p: T, i: T) => T[]) & { stats: Counters };
          }
          const n = points.length;
          const [s, g] = f(
            lib.fromTypedArray(points, [n], { batchDim: 0, copy: false }),
            lib.fromTypedArray(bins, [n], { batchDim: 0, copy: false }),
          ) as unknown as [Tensor, Tensor];
          return sync ? { sums: f32(s), gathered: f32(g) } : { sums: await f32Async(s), gathered: await f32Async(g) };
        },
        stats: () => (f ? counters(f)() : { traces: 0, compiles: 0, cacheHits: 0 }),
      };
    };
  }
  return adapter;
}
