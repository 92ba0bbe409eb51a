// batchwise on its WebAssembly backend: `wasm-1` (one thread) and `wasm` (all cores).
// The same jit functions as libs/batchwise.ts. Inputs are copied into the WebAssembly
// memory (fromTypedArray) inside the timed call; outputs are returned as zero-copy views
// of that memory (dataSync({ copy: false })), as the JS rows return theirs, and stay
// valid until the next call of the same benchmark, which disposes them (the memory is
// explicitly managed).

import type { B2Out, B4Out, B7Out, B8EighOut, B9Out, Counters, LibAdapter } from "../cases.js";
import type { Tensor as BwTensor } from "../../src/index.js";
import { b1Chain, b3Normalize } from "./batchwise-functions.js";

type Bw = typeof import("../../src/index.js");
type Tensor = BwTensor;

function counters(f: { stats: Counters }): () => Counters {
  return () => ({ traces: f.stats.traces, compiles: f.stats.compiles, cacheHits: f.stats.cacheHits });
}

/** Tensors of the previous call, disposed at the start of the next one (their views were its results). */
const held: Tensor[] = [];
function release(): void {
  for (const t of held.splice(0)) t.dispose();
}

/** A float32 result as a view of the WebAssembly memory (no copy); `t` and `also` are freed by the next call. */
function take(t: Tensor, ...also: Tensor[]): Float32Array {
  held.push(t, ...also);
  return t.dataSync({ copy: false }) as Float32Array;
}

export default async function load(backend: string): Promise<LibAdapter> {
  const adapter: LibAdapter = { library: "batchwise", backend, kernels: {}, skipped: {}, notes: [] };
  const bw: Bw = await import("../../src/index.js");
  /** A two-output function (B2, B8eigh) on `count` (count; 3, 3) matrices: the previous call's tensors freed, views of the results. */
  const matrices3 = (f: (m: Tensor) => unknown, m: Float32Array, count: number): [Float32Array, Float32Array] => {
    release();
    const t = bw.fromTypedArray(m, [count, 3, 3], { batchDim: 1 });
    const [a, b] = f(t) as [Tensor, Tensor];
    return [take(a), take(b, t)];
  };
  if (backend !== "wasm" && backend !== "wasm-1") throw new Error(`batchwise-wasm: unknown backend ${backend}`);
  const be = await bw.initWasm(backend === "wasm-1" ? { threads: 1 } : {});
  adapter.backend = `wasm ${be.threads} thread${be.threads === 1 ? "" : "s"}`;
  adapter.notes!.push(
    `wasm: WebAssembly SIMD kernels, ${be.threads} thread(s)${be.threadNote ? ` (${be.threadNote})` : ""}; inputs copied into the WebAssembly memory inside each call, outputs zero-copy views`,
  );

  adapter.kernels.B1 = () => {
    const f = bw.jit((x: Tensor) => b1Chain(x));
    return {
      run: ({ x }) => {
        release();
        const t = bw.fromTypedArray(x, [x.length], { batchDim: 1 });
        return take(f(t), t);
      },
      stats: counters(f),
    };
  };

  adapter.kernels.B3 = () => {
    const f = bw.jit((x: Tensor) => b3Normalize(x));
    return {
      run: ({ x, clouds, points }) => {
        release();
        const t = bw.fromTypedArray(x, [clouds, points, 3], { batchDim: 1 });
        return take(f(t), t);
      },
      stats: counters(f),
    };
  };

  adapter.kernels.B2 = () => {
    const f = bw.jit((m: Tensor) => {
      const a = new bw.R2(m);
      return [a.inverse().t, a.det().t];
    });
    return {
      run: ({ m, count }): B2Out => {
        const [inv, det] = matrices3(f, m, count);
        return { inv, det };
      },
      stats: counters(f),
    };
  };

  adapter.kernels.B4 = () => ({
    run: ({ clouds, sizes }): B4Out => {
      release();
      const list = clouds.map((c, b) => bw.fromTypedArray(c, [sizes[b]!, 3], { batchDim: 0 }));
      const [padded, pmask] = bw.listToPadded(list, 0) as unknown as [Tensor, Tensor];
      const [packed, psizes] = bw.listToPacked(list) as unknown as [Tensor, Tensor];
      let maxN = 0;
      for (let b = 0; b < clouds.length; b++) maxN = Math.max(maxN, sizes[b]!);
      const fi = bw.getFirstIdx(sizes) as unknown as Tensor;
      const firstIdx = fi.dataSync() as Int32Array;
      fi.dispose();
      const out = { padded: take(padded, pmask), maxN, packed: take(packed, psizes), firstIdx };
      for (const t of list) t.dispose();
      return out;
    },
  });
  // B7-B9 as in libs/batchwise.ts, on wasm (results as views of the WebAssembly memory).
  adapter.kernels.B7 = () => {
    // One jit per bin count (a base size is part of the trace key); the bench uses one.
    let f: ((p: Tensor, i: Tensor) => Tensor[]) & { stats: Counters };
    let bins0 = -1;
    return {
      run: ({ points, bins, nBins }): B7Out => {
        release();
        if (nBins !== bins0) {
          bins0 = nBins;
          f = bw.jit((p: Tensor, i: Tensor) => {
            const sums = bw.zeros([], [nBins]).at(i).add(p);
            return [sums, sums.take(i)];
          }) as unknown as typeof f;
        }
        const n = points.length;
        const p = bw.fromTypedArray(points, [n], { batchDim: 0 });
        const i = bw.fromTypedArray(bins, [n], { batchDim: 0 });
        const [sums, gathered] = f(p, i) as [Tensor, Tensor];
        return { sums: take(sums), gathered: take(gathered, p, i) };
      },
      stats: () => (bins0 < 0 ? { traces: 0, compiles: 0, cacheHits: 0 } : counters(f)()),
    };
  };
  adapter.kernels.B8solve = () => {
    const f = bw.jit((a: Tensor, b: Tensor) => bw.linalg.solve(a, b));
    return {
      run: ({ a, b, count }) => {
        release();
        const ta = bw.fromTypedArray(a, [count, 6, 6], { batchDim: 1 });
        const tb = bw.fromTypedArray(b, [count, 6], { batchDim: 1 });
        return take(f(ta, tb), ta, tb);
      },
      stats: counters(f),
    };
  };
  adapter.kernels.B8eigh = () => {
    const f = bw.jit((a: Tensor) => {
      const r = bw.linalg.eigh(a);
      return [r.eigenvalues, r.eigenvectors];
    });
    return {
      run: ({ a, count }): B8EighOut => {
        const [values, vectors] = matrices3(f, a, count);
        return { values, vectors };
      },
      stats: counters(f),
    };
  };
  adapter.kernels.B9 = async () => {
    const { j2Update } = await import("../../examples/j2-plasticity.js");
    const { B9_MATERIAL } = await import("../cases.js");
    const f = bw.jit((e: Tensor) => {
      const f64 = { dtype: "float64" as const };
      const r = j2Update(B9_MATERIAL, new bw.SR2(e), bw.SR2.fill(0, f64), bw.Scalar.fill(0, f64));
      return [r.stress.t, r.tangent.t];
    });
    f(bw.fromTypedArray(new Float64Array(6), [1, 6], { batchDim: 1 })).forEach((t) => t.dispose());
    return {
      run: ({ strain, count }): B9Out => {
        release();
        const e = bw.fromTypedArray(strain, [count, 6], { batchDim: 1 });
        const [s, t] = f(e) as [Tensor, Tensor];
        held.push(s, t, e);
        return {
          stress: s.dataSync({ copy: false }) as Float64Array,
          tangent: t.dataSync({ copy: false }) as Float64Array,
        };
      },
      stats: counters(f),
    };
  };
  return adapter;
}
