// batchwise on its WebAssembly backend: `wasm-1` (one thread) and `wasm` (all cores).
// The same jit functions as libs/batchwise.ts. Inputs are copied into the WebAssembly
// memory (fromTypedArray) inside the timed call; outputs are returned as zero-copy views
// of that memory (dataSync({ copy: false })), as the JS rows return theirs, and stay
// valid until the next call of the same benchmark, which disposes them (the memory is
// explicitly managed).

import type { B2Out, B4Out, Counters, LibAdapter } from "../cases.js";
import type { Tensor as BwTensor } from "../../src/index.js";

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
  if (backend !== "wasm" && backend !== "wasm-1") throw new Error(`batchwise-wasm: unknown backend ${backend}`);
  const be = await bw.initWasm(backend === "wasm-1" ? { threads: 1 } : {});
  adapter.backend = `wasm ${be.threads} thread${be.threads === 1 ? "" : "s"}`;
  adapter.notes!.push(
    `wasm: WebAssembly SIMD kernels, ${be.threads} thread(s)${be.threadNote ? ` (${be.threadNote})` : ""}; inputs copied into the WebAssembly memory inside each call, outputs zero-copy views`,
  );

  const chain = (x: Tensor): Tensor => x.mul(x).neg().exp().mul(x.mul(3).sin()).add(x.mul(0.5)).sub(x.tanh());
  adapter.kernels.B1 = () => {
    const f = bw.jit(chain);
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
    const f = bw.jit((x: Tensor) => {
      const centred = x.sub(x.mean([0], { keepdim: true }));
      const norms = centred.mul(centred).sum([1], { keepdim: true }).sqrt();
      return centred.div(norms.max([0], { keepdim: true }));
    });
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
        release();
        const t = bw.fromTypedArray(m, [count, 3, 3], { batchDim: 1 });
        const [inv, det] = f(t) as unknown as [Tensor, Tensor];
        return { inv: take(inv), det: take(det, t) };
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
  return adapter;
}
