/**
 * Accuracy measurement of the wasm vector math (codegen/wasm/math.ts) against float64
 * references: the distance in float32 ulps between a result and `Math.fround` of the
 * float64 function, and exact agreement (bits) where the reference is NaN, ±Infinity or ±0.
 * Used by test/wasm/math.test.ts and bench/wasm-math-ulp.ts.
 */
import { MATH_FN2, MATH_HOST, mathTestModule, type MathFn } from "../../codegen/wasm/math.js";

/** The float64 definition of each function, as the JS backend evaluates it before rounding. */
export const REFERENCE: Record<MathFn, (a: number, b: number) => number> = {
  exp: Math.exp,
  log: Math.log,
  sin: Math.sin,
  cos: Math.cos,
  tan: Math.tan,
  tanh: Math.tanh,
  sigmoid: (x) => 1 / (1 + Math.exp(-x)),
  atan: Math.atan,
  asin: Math.asin,
  acos: Math.acos,
  sqrt: Math.sqrt,
  rsqrt: (x) => 1 / Math.sqrt(x),
  atan2: Math.atan2,
  pow: MATH_HOST.pow,
};

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const i32 = new Int32Array(f32.buffer);

/** Float32 bits ordered as integers (−0 and +0 both 0): a value's position on the number line in ulps. */
export function ordered(x: number): number {
  f32[0] = x;
  const b = i32[0]!;
  return b < 0 ? -(b & 0x7fffffff) : b;
}

/** Ulp distance of two float32 values; Infinity when exactly one is NaN or when a special reference is not matched bit for bit. */
export function ulpDistance(got: number, ref: number): number {
  if (Number.isNaN(ref) || Number.isNaN(got)) return Number.isNaN(ref) && Number.isNaN(got) ? 0 : Infinity;
  if (ref === 0 || !Number.isFinite(ref)) return Object.is(got, ref) ? 0 : Infinity;
  return Math.abs(ordered(got) - ordered(ref));
}

/** Runs one function of the math module over inputs (length padded to a multiple of 4). */
export class MathRunner {
  private readonly memory = new WebAssembly.Memory({ initial: 16, maximum: 65536 });
  private readonly exports: Record<string, (...a: number[]) => void>;

  constructor(fns: readonly MathFn[]) {
    const bytes = mathTestModule(fns, { initial: 16, maximum: 65536 });
    const inst = new WebAssembly.Instance(new WebAssembly.Module(bytes as BufferSource), {
      env: { memory: this.memory },
      m: MATH_HOST,
    });
    this.exports = inst.exports as unknown as Record<string, (...a: number[]) => void>;
  }

  run(fn: MathFn, a: Float32Array, b?: Float32Array): Float32Array {
    const n = Math.ceil(a.length / 4) * 4;
    const bytes = n * 4;
    const need = 3 * bytes;
    const have = this.memory.buffer.byteLength;
    if (need > have) this.memory.grow(Math.ceil((need - have) / 65536));
    const heap = new Float32Array(this.memory.buffer);
    heap.fill(0, 0, 3 * n);
    heap.set(a, 0);
    if (b !== undefined) heap.set(b, n);
    if ((MATH_FN2 as readonly string[]).includes(fn)) this.exports[`map_${fn}`]!(0, bytes, 2 * bytes, bytes);
    else this.exports[`map_${fn}`]!(0, 2 * bytes, bytes);
    return new Float32Array(this.memory.buffer).slice((b !== undefined ? 2 : 2) * n, 2 * n + a.length);
  }
}

export interface UlpReport {
  maxUlp: number;
  at: number[];
  count: number;
}

/** Max ulp distance of `fn` over the inputs (binary functions: `a[i], b[i]` pairs). */
export function measure(runner: MathRunner, fn: MathFn, a: Float32Array, b?: Float32Array): UlpReport {
  const got = runner.run(fn, a, b);
  const ref = REFERENCE[fn];
  let maxUlp = 0;
  let at: number[] = [];
  for (let i = 0; i < a.length; i++) {
    const want = Math.fround(ref(a[i]!, b === undefined ? 0 : b[i]!));
    const d = ulpDistance(got[i]!, want);
    if (d > maxUlp) {
      maxUlp = d;
      at = b === undefined ? [a[i]!] : [a[i]!, b[i]!];
    }
  }
  return { maxUlp, at, count: a.length };
}

/** Every `stride`-th float32 bit pattern from `offset` (both signs, NaNs included). */
export function strided(stride: number, offset = 0): Float32Array {
  const n = Math.floor((2 ** 32 - 1 - offset) / stride) + 1;
  const out = new Float32Array(n);
  const bits = new Uint32Array(out.buffer);
  for (let i = 0; i < n; i++) bits[i] = offset + i * stride;
  return out;
}

/** `width` consecutive float32 values on each side of each point (and the point). */
export function around(points: readonly number[], width: number): Float32Array {
  const out: number[] = [];
  for (const p of points) {
    f32[0] = p;
    const base = i32[0]!;
    for (let d = -width; d <= width; d++) {
      i32[0] = base + d;
      out.push(f32[0]);
    }
  }
  void u32;
  return Float32Array.from(out);
}

/** Special inputs: NaN, ±Infinity, ±0, the smallest subnormals, float32 max. */
export const SPECIALS = Float32Array.from([
  NaN,
  Infinity,
  -Infinity,
  0,
  -0,
  1e-45,
  -1e-45,
  1.1754942e-38,
  -1.1754942e-38,
  3.4028235e38,
  -3.4028235e38,
  1,
  -1,
]);

/** Edge grids per function: where reductions switch, results overflow or go subnormal. */
export function edges(fn: MathFn): Float32Array {
  const common = [0, 1, -1, 0.5, -0.5, 2 ** -126, -(2 ** -126), 2, Math.SQRT2, Math.SQRT1_2];
  const pio2: number[] = [];
  for (let k = 1; k <= 9000; k++) pio2.push(Math.fround((k * Math.PI) / 2), -Math.fround((k * Math.PI) / 2));
  const pts: Record<MathFn, number[]> = {
    exp: [88.72284, -87.33655, -103.27893, -103.97208, 0.34657359, -0.34657359, 10, -10],
    log: [2 ** -149, 1e-40, 3.4028235e38, 0.70710677, 1.4142135],
    sin: [8192, -8192, 0.785398],
    cos: [8192, -8192, 0.785398],
    tan: [4194304, 0.785398],
    // n = 0 / -1 / -2 switch points of the expm1 reduction (2|x| = ln2/2, 3 ln2/2), the clamp at 20.
    tanh: [0.17328679, -0.17328679, 0.5198604, -0.5198604, 9, -9, 20, -20, 1e-4],
    sigmoid: [-88.72284, 88.72284, -103.27893, 17, -17],
    atan: [0.41421357, -0.41421357, 1e10, -1e10],
    asin: [0.99999994, -0.99999994, 1e-4],
    acos: [0.99999994, -0.99999994, 1e-4],
    sqrt: [2 ** -149, 3.4028235e38],
    rsqrt: [2 ** -149, 3.4028235e38],
    atan2: [],
    pow: [],
  };
  // Near multiples of pi/2 (the reduction's hardest inputs): 3 floats each side.
  const trig = fn === "sin" || fn === "cos" || fn === "tan" ? around(pio2, 3) : [];
  return Float32Array.from([...around([...common, ...pts[fn]], 64), ...trig, ...SPECIALS]);
}
