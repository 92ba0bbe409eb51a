/**
 * Loop form -> WebAssembly: the third printer of the loop form (codegen/loop.ts),
 * beside the JS and WGSL ones. The module imports the backend's memory
 * (`env.memory`) and host functions (`m.*`), and exports
 *
 *   run(args, begin, end)   the kernel; launch arguments at byte offset `args`
 *   units(args)             how many iterations the sharded loop has (0 if none)
 *
 * Launch arguments (`argsLayout`): per input its byte pointer and its element count,
 * per output its byte pointer, the batch sizes, the batch strides (int32 each), then
 * the constants as float64 at an 8-aligned offset.
 *
 * Sharding: when the program's first top-level loop may run its iterations in any
 * order on disjoint ranges (no local set before it is read inside it, except the
 * output counter the lowering keeps, whose start is computed from the range),
 * `run` executes only iterations [begin, end) of it (and everything outside it, which
 * only defines values); a worker pool splits that range over threads.
 *
 * Vectorisation: when that loop's body is straight-line (only values and stores) over
 * float32, int32, uint32, bool and index values, it also runs four iterations at a
 * time in SIMD lanes: loads and stores whose four addresses are consecutive use one
 * vector access (checked at run time), others go lane by lane; the rest of the range
 * runs the scalar body. float32 math (exp, log, sin, …) uses the vector library of
 * ./math.ts in both paths, so a result does not depend on its lane. The float64
 * accumulation of a short float32 sum, mean or product (codegen/reductions.ts,
 * `combine`) runs in two f64x2 halves per four lanes (promote, + - × ÷, demote), with
 * the scalar body's rounding; no other float64 value is vectorised.
 *
 * Arithmetic: float32 ops round to float32 after each op (the loop form allows a
 * wider intermediate with `relaxedFloat32`; this target never uses it). float64
 * transcendental functions, float `mod` and integer `pow` call the host's JS
 * implementations (the same as the JS backend's), element by element.
 * A load's element offset is clamped into its buffer (a `where` branch that is not
 * taken may compute an out-of-range offset; WebAssembly would trap on it).
 */
import { UnsupportedOpError } from "../../ir/errors.js";
import { walkStmts, type LoopProgram } from "../loop.js";
import { argsLayout, type ArgsLayout } from "./args.js";
import { I32, ModuleBuilder } from "./encoder.js";
import { importKernelHost } from "./host.js";
import { defineMath } from "./math.js";
import { Printer } from "./scalar-body.js";
import { findInnerShard, findShard, letsOf, work } from "./shard.js";
import { mathNeeds, vectorizable } from "./simd-rules.js";

export interface WasmKernel {
  readonly bytes: Uint8Array;
  readonly layout: ArgsLayout;
  /** Whether `run` honours [begin, end) (the pool may split the range). */
  readonly sharded: boolean;
  /** Whether the sharded loop also has a four-lane SIMD body. */
  readonly vectorized: boolean;
  /**
   * Rough work per iteration of the sharded loop (statements, nested constant loops
   * multiplied out), to be multiplied by the launch's batch sizes at `workSizes` (inner
   * loops over a batch dim).
   */
  readonly workPerUnit: number;
  readonly workSizes: readonly number[];
  /**
   * The exports `run_inner`/`units_inner` (see `findInnerShard`), with the work per inner
   * iteration (times the launch's batch sizes at `workSizes`): null when there are none.
   */
  readonly inner: {
    readonly vectorized: boolean;
    readonly workPerUnit: number;
    readonly workSizes: readonly number[];
  } | null;
  /** Inner loops that also got four-lane versions. */
  readonly innerVectorLoops: number;
}

export interface PrintOptions {
  /** Memory import: shared (threads) or not, and its maximum in pages. */
  readonly shared: boolean;
  readonly maximumPages: number;
}

/** Prints a loop program as a WebAssembly module (see the file comment). */
export function loopToWasm(p: LoopProgram, opts: PrintOptions): WasmKernel {
  // A sequential target: one invocation runs the whole launch (workgroup programs are WGSL's).
  if (p.workgroupSize !== undefined)
    throw new UnsupportedOpError("wasm: a workgroup program (workgroupSize set) is not a sequential program");
  walkStmts(p.body, (s) => {
    if (s.k === "loop" && s.step !== undefined)
      throw new UnsupportedOpError("wasm: a loop with a step belongs to workgroup programs");
  });
  const defs = letsOf(p);
  const shard = findShard(p, defs);
  const layout = argsLayout(p);
  const m = new ModuleBuilder();
  m.importMemory({ module: "env", name: "memory", initial: 1, maximum: opts.maximumPages, shared: opts.shared });
  const { host, mathImports } = importKernelHost(m);
  const math = defineMath(m, mathImports, mathNeeds(p, defs));
  const vectorized = shard !== null && vectorizable(p, shard, defs);
  const workSizes: number[] = [];
  let innerVectorLoops = 0;
  m.func(
    [I32, I32, I32],
    [],
    (c) => {
      const printer = new Printer(p, defs, layout, c, math, host, shard, vectorized);
      printer.run();
      innerVectorLoops = printer.innerVectorLoops;
    },
    "run",
  );
  m.func([I32], [I32], (c) => new Printer(p, defs, layout, c, math, host, shard, false, false).units(), "units");
  const innerShard = shard === null ? null : findInnerShard(p, shard);
  let inner: WasmKernel["inner"] = null;
  if (innerShard !== null) {
    const innerVectorized = vectorizable(p, innerShard, defs);
    m.func(
      [I32, I32, I32],
      [],
      (c) => new Printer(p, defs, layout, c, math, host, innerShard, innerVectorized).run(),
      "run_inner",
    );
    m.func(
      [I32],
      [I32],
      (c) => new Printer(p, defs, layout, c, math, host, innerShard, false, false).units(),
      "units_inner",
    );
    const innerSizes: number[] = [];
    inner = {
      vectorized: innerVectorized,
      workPerUnit: work(innerShard.loop.body, defs, innerSizes),
      workSizes: innerSizes,
    };
  }
  return {
    bytes: m.encode(),
    layout,
    sharded: shard !== null,
    vectorized,
    workPerUnit: shard ? work(shard.loop.body, defs, workSizes) : 1,
    workSizes,
    inner,
    innerVectorLoops,
  };
}
