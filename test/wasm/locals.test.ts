/**
 * The WebAssembly printer reuses locals (codegen/wasm/encoder.ts `Code.scoped`/`release`):
 * an expression's temporaries after the expression, a value's local after its last use in
 * its block. V8's baseline compiler copies the state of every local at each branch merge,
 * so a body with a local per value compiled in time quadratic in its length (an 800-op
 * chain's first call took 6-14 s); `bench/compile-cost.ts` measures the first call. This
 * file checks the structural property that makes it linear: the locals a kernel declares
 * do not grow with the length of a fused chain, and the kernel still computes the chain.
 */
import { describe, expect, it } from "vitest";
import { lowerKernel } from "../../codegen/lower-loops.js";
import { loopToWasm } from "../../codegen/wasm/print.js";
import { makeGraph, Node } from "../../ir/graph.js";
import type { Kernel } from "../../ir/kernel.js";
import { runPipeline } from "../../passes/pipeline.js";
import { fromTypedArray, initWasm, jit, setBackend, type Tensor } from "../../src/index.js";

/** A fused chain of k elementwise ops (with sin, whose four-lane body branches). */
function chain(x: Tensor, k: number): Tensor {
  let y = x;
  for (let i = 0; i < k; i++) {
    const r = i % 4;
    y = r === 0 ? y.mul(0.999) : r === 1 ? y.add(0.001) : r === 2 ? y.sin() : y.mul(y).sub(0.25);
  }
  return y;
}

/** The same chain as a graph of nodes, for the printer. */
function chainKernel(k: number): Kernel {
  const x = Node.make("input", [], { index: 0 }, { dtype: "float32", batch: ["b0"], base: [] });
  const c = (v: number): Node => Node.make("const", [], { dtype: "float32", value: v });
  let y: Node = x;
  for (let i = 0; i < k; i++) {
    const r = i % 4;
    y =
      r === 0
        ? Node.make("mul", [y, c(0.999)])
        : r === 1
          ? Node.make("add", [y, c(0.001)])
          : r === 2
            ? Node.make("sin", [y])
            : Node.make("sub", [Node.make("mul", [y, y]), c(0.25)]);
  }
  const schedule = runPipeline(makeGraph("chain", [x], [y], ["x"]), {
    maxKernelBuffers: Infinity,
    unrollLimit: 64,
  }).schedule;
  const kernels = schedule.steps.flatMap((s) => (s.kind === "kernel" ? [s.kernel] : []));
  expect(kernels.length, "the chain fuses into one kernel").toBe(1);
  return kernels[0]!;
}

/** The largest number of locals one function of a module declares (its code section). */
function maxDeclaredLocals(bytes: Uint8Array): number {
  let p = 8;
  const u32 = (): number => {
    let r = 0;
    let shift = 0;
    for (;;) {
      const b = bytes[p++]!;
      r |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return r >>> 0;
      shift += 7;
    }
  };
  let most = 0;
  while (p < bytes.length) {
    const id = bytes[p++]!;
    const size = u32();
    const end = p + size;
    if (id === 10) {
      const count = u32();
      for (let f = 0; f < count; f++) {
        const bodySize = u32();
        const bodyEnd = p + bodySize;
        let locals = 0;
        for (let runs = u32(); runs > 0; runs--) {
          locals += u32();
          p++; // the type
        }
        most = Math.max(most, locals);
        p = bodyEnd;
      }
    }
    p = end;
  }
  return most;
}

describe("the WebAssembly printer reuses locals", () => {
  it("a kernel's locals do not grow with the length of a fused chain (100 vs 800 ops)", () => {
    const opts = { shared: false, maximumPages: 256 };
    const short = maxDeclaredLocals(loopToWasm(lowerKernel(chainKernel(100)), opts).bytes);
    const long = maxDeclaredLocals(loopToWasm(lowerKernel(chainKernel(800)), opts).bytes);
    // Before the reuse: a local per value and per temporary, several thousand at 800 ops.
    expect(long).toBeLessThan(200);
    expect(long).toBeLessThanOrEqual(short + 8);
  });

  it("the 400-op chain on wasm equals it on JS (float32 within the math functions' ulps)", async () => {
    const xs = Float32Array.from({ length: 37 }, (_, i) => (i - 18) / 7);
    const f = jit((t: Tensor) => chain(t, 400));
    const onJs = f(fromTypedArray(xs, [37], { batchDim: 1 })).dataSync();
    await initWasm({ threads: 1 });
    try {
      const g = jit((t: Tensor) => chain(t, 400));
      const onWasm = g(fromTypedArray(xs, [37], { batchDim: 1 })).dataSync();
      expect(g.stats.traces).toBe(1);
      for (let i = 0; i < xs.length; i++) expect(onWasm[i]).toBeCloseTo(onJs[i]!, 4);
    } finally {
      setBackend("js");
    }
  });
});
