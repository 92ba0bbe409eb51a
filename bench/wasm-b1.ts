/**
 * B1 (y = exp(-x*x) * sin(3x) + 0.5x - tanh(x), 1,000,000 float32) as a
 * hand-assembled WebAssembly SIMD kernel using the vector math of
 * codegen/wasm/math.ts, against the hand-written JS loop (bench/cases.ts
 * b1Baseline), alternating in one process. Rows:
 *   hand         the hand-written loop
 *   wasm-1       the kernel alone, one thread (input already in wasm memory, output left there)
 *   wasm-1+copy  the same with the copy of x into wasm memory and of y out to a new Float32Array
 *   wasm-N       the kernel sharded over N threads (runtime/wasm/pool.ts), N = available cores
 *   wasm-N+copy  the same with both copies
 *   jit-1        batchwise's printed kernel (jit on the wasm backend, one thread), input already in its memory
 *   jit-1+copy   the same with x copied in (fromTypedArray) and y copied out (dataSync)
 * Medians over rounds, ratios to `hand`, and the error of each against the float64
 * evaluation of the chain: max abs, and max float32 ulps to Math.fround of it.
 *   npx tsx bench/wasm-b1.ts [rounds] [n]
 */
import { alternateMedians } from "./alternate.js";
import { b1Baseline, makeB1 } from "./cases.js";
import { I32, ModuleBuilder, Op, Simd, V128, type Code } from "../codegen/wasm/encoder.js";
import { emitExp, emitSinCos, emitTanh, get, importMath, MATH_HOST, MATH_HOST_SOURCE } from "../codegen/wasm/math.js";
import { WasmHeap } from "../runtime/wasm/memory.js";
import { availableCores, WorkerPool } from "../runtime/wasm/pool.js";
import { fromTypedArray, initWasm, jit, type Tensor } from "../src/index.js";
import { b1Chain } from "./libs/batchwise-functions.js";

const rounds = Number(process.argv[2] ?? 25);
const n = Number(process.argv[3] ?? 1_000_000);

/** The B1 chain on four lanes at local `x`, leaving y on the stack. */
function chain(c: Code, x: number, sinHost: number): void {
  const X = get(x);
  const v = (e: (c: Code) => void): number => {
    e(c);
    const l = c.local(V128);
    c.set(l);
    return l;
  };
  const nx2 = v((cc) => {
    cc.get(x).get(x).simd(Simd.f32x4_mul).simd(Simd.f32x4_neg);
  });
  const e = emitExp(c, get(nx2));
  const x3 = v((cc) => {
    cc.get(x).f32x4c(3).simd(Simd.f32x4_mul);
  });
  const s = emitSinCos(c, get(x3), "sin", sinHost);
  const t = emitTanh(c, X);
  e(c);
  s(c);
  c.simd(Simd.f32x4_mul);
  c.get(x).f32x4c(0.5).simd(Simd.f32x4_mul).simd(Simd.f32x4_add);
  t(c);
  c.simd(Simd.f32x4_sub);
}

/** run(args, begin, end): args = [in ptr, out ptr] (i32); elements [begin, end), any end. */
function b1Module(shared: boolean, maxPages: number): Uint8Array {
  const m = new ModuleBuilder();
  m.importMemory({ module: "env", name: "memory", initial: 1, maximum: maxPages, shared });
  const host = importMath(m);
  m.func(
    [I32, I32, I32],
    [],
    (c) => {
      const [args, begin, end] = [0, 1, 2];
      const inp = c.local(I32);
      const out = c.local(I32);
      const i = c.local(I32);
      const x = c.local(V128);
      c.get(args).op(Op.i32_load).memarg(2, 0).set(inp);
      c.get(args).op(Op.i32_load).memarg(2, 4).set(out);
      c.get(begin).set(i);
      // Whole vectors.
      c.op(Op.block).byte(0x40).op(Op.loop).byte(0x40);
      c.get(i).i32(4).op(Op.i32_add).get(end).op(Op.i32_gt_s).op(Op.br_if).u32(1);
      c.get(inp).get(i).i32(2).op(Op.i32_shl).op(Op.i32_add).simd(Simd.v128_load).memarg(0, 0).set(x);
      c.get(out).get(i).i32(2).op(Op.i32_shl).op(Op.i32_add);
      chain(c, x, host.sin);
      c.simd(Simd.v128_store).memarg(0, 0);
      c.get(i).i32(4).op(Op.i32_add).set(i);
      c.op(Op.br).u32(0);
      c.op(Op.end).op(Op.end);
      // The tail, lane by lane.
      c.f32x4c(0).set(x);
      for (let lane = 0; lane < 3; lane++) {
        c.get(i).i32(lane).op(Op.i32_add).get(end).op(Op.i32_lt_s).op(Op.if).byte(0x40);
        c.get(x).get(inp).get(i).i32(lane).op(Op.i32_add).i32(2).op(Op.i32_shl).op(Op.i32_add);
        c.op(Op.f32_load).memarg(2, 0).lane(Simd.f32x4_replace_lane, lane).set(x);
        c.op(Op.end);
      }
      const y = c.local(V128);
      chain(c, x, host.sin);
      c.set(y);
      for (let lane = 0; lane < 3; lane++) {
        c.get(i).i32(lane).op(Op.i32_add).get(end).op(Op.i32_lt_s).op(Op.if).byte(0x40);
        c.get(out).get(i).i32(lane).op(Op.i32_add).i32(2).op(Op.i32_shl).op(Op.i32_add);
        c.get(y).lane(Simd.f32x4_extract_lane, lane).op(Op.f32_store).memarg(2, 0);
        c.op(Op.end);
      }
    },
    "run",
  );
  return m.encode();
}

const { x } = makeB1(n);
const heap = new WasmHeap({ shared: true, initialBytes: 3 * 4 * n + (1 << 20) });
const bytes = b1Module(true, heap.maximumBytes / 65536);
const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes as BufferSource), {
  env: { memory: heap.memory },
  m: MATH_HOST,
});
const run = inst.exports["run"] as (args: number, begin: number, end: number) => void;
const inPtr = heap.alloc(4 * n);
const outPtr = heap.alloc(4 * n);
const args = 0;
new Int32Array(heap.buffer, args, 2).set([inPtr, outPtr]);
new Float32Array(heap.buffer, inPtr, n).set(x);

const cores = availableCores();
const pool = new WorkerPool(heap, MATH_HOST_SOURCE);
await pool.resize(cores);
const id = pool.load(bytes);

const outView = (): Float32Array => new Float32Array(heap.buffer, outPtr, n);
const copyIn = (): void => new Float32Array(heap.buffer, inPtr, n).set(x);
// batchwise's own kernel for the same chain, on a one-thread wasm backend of its own (selected: tensors live there).
const bwBackend = await initWasm({ threads: 1 });
const jitted = jit((t: Tensor) => b1Chain(t));
const xIn = fromTypedArray(x, [n], { batchDim: 1 });
let lastOut: Tensor | undefined;
/** Runs the jit function, freeing the previous call's result first (wasm memory is freed explicitly). */
const jitRun = (t: Tensor): Tensor => {
  lastOut?.dispose();
  return (lastOut = jitted(t));
};

const cases: [string, () => ArrayLike<number>][] = [
  ["hand", () => b1Baseline({ x })],
  [
    "wasm-1",
    () => {
      run(args, 0, n);
      return outView();
    },
  ],
  [
    "wasm-1+copy",
    () => {
      copyIn();
      run(args, 0, n);
      return outView().slice();
    },
  ],
  [
    `wasm-${cores}`,
    () => {
      pool.run(id, run, args, n, 4);
      return outView();
    },
  ],
  [
    `wasm-${cores}+copy`,
    () => {
      copyIn();
      pool.run(id, run, args, n, 4);
      return outView().slice();
    },
  ],
  ["jit-1", () => jitRun(xIn).dataSync({ copy: false })],
  [
    "jit-1+copy",
    () => {
      const t = fromTypedArray(x, [n], { batchDim: 1 });
      const y = jitRun(t).dataSync();
      t.dispose();
      return y;
    },
  ],
];

// Accuracy: against the chain in float64 (x exact in float64).
const ref = new Float64Array(n);
for (let i = 0; i < n; i++) {
  const v = x[i]!;
  ref[i] = Math.exp(-v * v) * Math.sin(3 * v) + 0.5 * v - Math.tanh(v);
}
const f32 = new Float32Array(1);
const i32 = new Int32Array(f32.buffer);
const ord = (v: number): number => {
  f32[0] = v;
  const b = i32[0]!;
  return b < 0 ? -(b & 0x7fffffff) : b;
};
function errors(y: ArrayLike<number>): { abs: number; ulp: number } {
  let abs = 0;
  let ulp = 0;
  for (let i = 0; i < n; i++) {
    abs = Math.max(abs, Math.abs(y[i]! - ref[i]!));
    ulp = Math.max(ulp, Math.abs(ord(y[i]!) - ord(Math.fround(ref[i]!))));
  }
  return { abs, ulp };
}

const errs = new Map<string, { abs: number; ulp: number }>();
for (const [k, f] of cases) errs.set(k, errors(f()));
const med = alternateMedians(cases, rounds);
console.log(`B1 chain, n = ${n}, ${rounds} rounds, ${cores} cores available`);
for (const [k] of cases) {
  const e = errs.get(k)!;
  console.log(
    `${k.padEnd(12)} ${med(k).toFixed(2).padStart(7)} ms  ${(med(k) / med("hand")).toFixed(3)} x hand   max abs err ${e.abs.toExponential(2)}, max ${e.ulp} ulp (vs float64 chain)`,
  );
}
pool.close();
bwBackend.close();
