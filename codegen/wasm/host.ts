/**
 * The host functions a kernel module imports (module "m"): the float32 vector math's
 * (./math.ts), float64 transcendental functions, float `mod` and integer `pow` (the same
 * as the JS backend's), as an object for the calling thread and as source for workers.
 */
import { F64, I32, type ModuleBuilder } from "./encoder.js";
import { importMath, MATH_HOST, type MathImports } from "./math.js";

/** NumPy's float `%` (the JS backend's floatMod). */
function floatMod(a: number, b: number): number {
  if (b === 0) return NaN;
  const r = a % b;
  return r === 0 ? (b < 0 ? -0 : 0) : r < 0 !== b < 0 ? r + b : r;
}
/** Wrapping integer pow by squaring (the JS backend's intPow); u = 1 for uint32 (whose bits arrive as int32). */
function intPow(a: number, b: number, u: number): number {
  if (u) b = b >>> 0;
  if (b < 0) return a === 1 ? 1 : a === -1 ? (b % 2 === 0 ? 1 : -1) : 0;
  let r = 1;
  let x = a | 0;
  for (let e = b >>> 0; e !== 0; e >>>= 1) {
    if (e & 1) r = Math.imul(r, x);
    x = Math.imul(x, x);
  }
  return u ? r >>> 0 : r | 0;
}
function sigmoid64(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** Host functions of a kernel module (module "m"): the vector math's, float64 math, float mod, integer pow. */
export const KERNEL_HOST = {
  ...MATH_HOST,
  exp: Math.exp,
  log: Math.log,
  tanh: Math.tanh,
  asin: Math.asin,
  acos: Math.acos,
  atan: Math.atan,
  sigmoid: sigmoid64,
  fmod: floatMod,
  ipow: intPow,
} as const;

/** `KERNEL_HOST` as JS source, for worker threads. */
export const KERNEL_HOST_SOURCE = `{ sin: Math.sin, cos: Math.cos, tan: Math.tan, atan2: Math.atan2, pow: ${String(
  MATH_HOST.pow,
)}, exp: Math.exp, log: Math.log, tanh: Math.tanh, asin: Math.asin, acos: Math.acos, atan: Math.atan, sigmoid: ${String(
  sigmoid64,
)}, fmod: ${String(floatMod)}, ipow: ${String(intPow)} }`;

export const F64_UNARY_HOST = ["exp", "log", "sin", "cos", "tan", "tanh", "asin", "acos", "atan", "sigmoid"] as const;
export type F64UnaryHost = (typeof F64_UNARY_HOST)[number];

/** Function indices of a kernel module's host imports. */
export interface Host {
  readonly f64: Record<F64UnaryHost, number>;
  /** The host sin/cos imports the float32 vector sin/cos hand huge arguments to. */
  readonly sin32: { readonly sin: number; readonly cos: number };
  readonly atan2: number;
  readonly pow: number;
  readonly fmod: number;
  readonly ipow: number;
}

/** Declares a kernel module's host imports (after its memory, before any function). */
export function importKernelHost(m: ModuleBuilder): { readonly host: Host; readonly mathImports: MathImports } {
  const mathImports = importMath(m);
  const f64Host = {} as Record<F64UnaryHost, number>;
  for (const name of F64_UNARY_HOST) {
    const existing = (mathImports as unknown as Record<string, number>)[name];
    f64Host[name] = existing ?? m.importFunc("m", name, [F64], [F64]);
  }
  const host: Host = {
    f64: f64Host,
    sin32: { sin: mathImports.sin, cos: mathImports.cos },
    atan2: mathImports.atan2,
    pow: mathImports.pow,
    fmod: m.importFunc("m", "fmod", [F64, F64], [F64]),
    ipow: m.importFunc("m", "ipow", [I32, I32, I32], [I32]),
  };
  return { host, mathImports };
}
