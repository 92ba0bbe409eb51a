/**
 * Kernel IR -> JavaScript source. The generated function takes
 * `(ins, outs, sizes, strides, consts)`: typed arrays, the space's batch sizes,
 * the inputs' batch strides (concatenated in input order) and the values of the
 * kernel's constants (a Float64Array). Base sizes and strides are constants in the
 * code; nothing depends on a batch size or on a constant's value.
 *
 * Unrolled kernels evaluate the expression DAG once per base point with constant
 * indices; values are numbered by the code they produce, so subexpressions that
 * several points share (a determinant used by every entry of an inverse) are
 * computed once per batch element.
 */
import { isFloat, type DType } from "../ir/dtype.js";
import { EXACT_ON_F32 } from "../ir/elementwise.js";
import { UnsupportedOpError } from "../ir/errors.js";
import {
  constSlots,
  contiguousStrides,
  ix,
  numel,
  type IndexExpr,
  type KBinaryOp,
  type KExpr,
  type KReduceOp,
  type KUnaryOp,
  type Kernel,
  type Segment,
} from "../ir/kernel.js";
import { Lines } from "./lines.js";

/** Integer results wrap like the typed array they are stored in. */
function wrap(code: string, d: DType): string {
  if (d === "int32") return `((${code}) | 0)`;
  if (d === "uint32") return `((${code}) >>> 0)`;
  return code;
}

/** Per unary op: its JS expression (`d` the operand dtype); `need` asks for a helper function. */
const UNARY_JS: { readonly [K in KUnaryOp]: (x: string, d: DType, need: (h: JsHelper) => void) => string } = {
  // Parenthesised: x may be a negative literal ("--0.2" would not parse).
  neg: (x, d) => wrap(`-(${x})`, d),
  abs: (x, d) => wrap(`Math.abs(${x})`, d),
  sqrt: (x) => `Math.sqrt(${x})`,
  rsqrt: (x) => `(1 / Math.sqrt(${x}))`,
  exp: (x) => `Math.exp(${x})`,
  log: (x) => `Math.log(${x})`,
  sin: (x) => `Math.sin(${x})`,
  cos: (x) => `Math.cos(${x})`,
  tan: (x) => `Math.tan(${x})`,
  tanh: (x) => `Math.tanh(${x})`,
  sigmoid: (x) => `(1 / (1 + Math.exp(-(${x}))))`,
  asin: (x) => `Math.asin(${x})`,
  acos: (x) => `Math.acos(${x})`,
  atan: (x) => `Math.atan(${x})`,
  floor: (x) => `Math.floor(${x})`,
  ceil: (x) => `Math.ceil(${x})`,
  round: (x, _d, need) => (need("roundHalfEven"), `roundHalfEven(${x})`),
  trunc: (x) => `Math.trunc(${x})`,
  sign: (x) => `Math.sign(${x})`,
  not: (x) => `(${x} === 0 ? 1 : 0)`,
  isnan: (x) => `(${x} !== ${x} ? 1 : 0)`,
  isinf: (x) => `((${x} === Infinity || ${x} === -Infinity) ? 1 : 0)`,
  isfinite: (x) => `(Number.isFinite(${x}) ? 1 : 0)`,
};

/** Per binary op: its JS expression (`d` the operands' dtype); `need` asks for a helper function. */
const BINARY_JS: {
  readonly [K in KBinaryOp]: (a: string, b: string, d: DType, need: (h: JsHelper) => void) => string;
} = {
  add: (a, b, d) => wrap(`${a} + ${b}`, d),
  sub: (a, b, d) => wrap(`${a} - ${b}`, d),
  mul: (a, b, d) => (isFloat(d) ? `(${a} * ${b})` : wrap(`Math.imul(${a}, ${b})`, d)),
  div: (a, b, d) => (isFloat(d) ? `(${a} / ${b})` : wrap(`(${b} === 0 ? 0 : Math.trunc(${a} / ${b}))`, d)),
  pow: (a, b, d, need) =>
    isFloat(d)
      ? (need("ieeePow"), `ieeePow(${a}, ${b})`)
      : (need("intPow"), `intPow(${a}, ${b}, ${d === "uint32" ? "1" : "0"})`),
  maximum: (a, b) => `Math.max(${a}, ${b})`,
  minimum: (a, b) => `Math.min(${a}, ${b})`,
  mod: (a, b, d, need) =>
    isFloat(d) ? (need("floatMod"), `floatMod(${a}, ${b})`) : (need("floorMod"), wrap(`floorMod(${a}, ${b}, 0)`, d)),
  atan2: (a, b) => `Math.atan2(${a}, ${b})`,
  eq: (a, b) => `(${a} === ${b} ? 1 : 0)`,
  ne: (a, b) => `(${a} !== ${b} ? 1 : 0)`,
  lt: (a, b) => `(${a} < ${b} ? 1 : 0)`,
  le: (a, b) => `(${a} <= ${b} ? 1 : 0)`,
  gt: (a, b) => `(${a} > ${b} ? 1 : 0)`,
  ge: (a, b) => `(${a} >= ${b} ? 1 : 0)`,
  and: (a, b) => `(${a} & ${b})`,
  or: (a, b) => `(${a} | ${b})`,
  xor: (a, b) => `(${a} ^ ${b})`,
  // --- numerics/random: integer bitwise ops (int32/uint32; shift counts outside [0, 32) as NumPy) ---
  bitwise_and: (a, b, d) => wrap(`${a} & ${b}`, d),
  bitwise_or: (a, b, d) => wrap(`${a} | ${b}`, d),
  bitwise_xor: (a, b, d) => wrap(`${a} ^ ${b}`, d),
  // NumPy's shifts: JS takes the count modulo 32, NumPy shifts every bit out for a count outside
  // [0, 32) (0, or -1 for a negative int32 shifted right); `b >>> 0 < 32` is false for a negative
  // int32 count. Operands are value names here, so repeating them costs nothing (inline, this
  // runs about 5x faster than through a helper function).
  left_shift: (a, b, d) =>
    d === "uint32" ? `(${b} < 32 ? (${a} << ${b}) >>> 0 : 0)` : `(${b} >>> 0 < 32 ? ${a} << ${b} : 0)`,
  right_shift: (a, b, d) =>
    d === "uint32" ? `(${b} < 32 ? ${a} >>> ${b} : 0)` : `(${b} >>> 0 < 32 ? ${a} >> ${b} : ${a} < 0 ? -1 : 0)`,
};

/**
 * float32 results round after every op (as on a GPU and in the reference
 * interpreter), so a fused chain gives the same bits as the ops one by one.
 */
function roundResult(code: string, d: DType): string {
  return d === "float32" ? `Math.fround(${code})` : code;
}

function castJS(x: string, to: DType): string {
  switch (to) {
    case "float64":
      return x;
    case "float32":
      return `Math.fround(${x})`;
    case "int32":
      return `(${x} | 0)`;
    case "uint32":
      return `(${x} >>> 0)`;
    case "bool":
      return `(${x} !== 0 ? 1 : 0)`;
  }
}

/** Inlined small reductions, with the reduction kernels' semantics (sum seeded with 0 in float64). */
const COMBINE_JS: { readonly [K in KReduceOp]: (xs: readonly string[], d: DType, n: number) => string } = {
  // An inlined reduction has at least one term: its sum starts from the first (see INIT on -0).
  sum: (xs) => `(${xs.join(" + ")})`,
  mean: (xs, _d, n) => `((${xs.join(" + ")}) / ${n})`,
  prod: (xs, d) => (isFloat(d) ? `(1 * ${xs.join(" * ")})` : xs.reduce((a, x) => `Math.imul(${a}, ${x})`, "1")),
  min: (xs) => `Math.min(${xs.join(", ")})`,
  max: (xs) => `Math.max(${xs.join(", ")})`,
  all: (xs) => `((${xs.map((x) => `${x} !== 0`).join(" && ")}) ? 1 : 0)`,
  any: (xs) => `((${xs.map((x) => `${x} !== 0`).join(" || ")}) ? 1 : 0)`,
  argmin: () => {
    throw new UnsupportedOpError("codegen js: argmin cannot be inlined");
  },
  argmax: () => {
    throw new UnsupportedOpError("codegen js: argmax cannot be inlined");
  },
};

const HELPERS = {
  roundHalfEven:
    "const roundHalfEven = (x) => { const r = Math.round(x); return (Math.abs(x % 1) === 0.5 && r % 2 !== 0) ? r - 1 : r; };",
  // NumPy's float `%`: sign of the divisor, a zero of the divisor's sign, x % 0 = NaN.
  floatMod:
    "const floatMod = (a, b) => { if (b === 0) return NaN; const r = a % b; return r === 0 ? (b < 0 ? -0 : 0) : (r < 0) !== (b < 0) ? r + b : r; };",
  // IEEE pow: Math.pow except 1 ** y = 1 (y NaN too) and (-1) ** ±Infinity = 1.
  ieeePow:
    "const ieeePow = (a, b) => (a === 1 || (a === -1 && (b === Infinity || b === -Infinity)) ? 1 : Math.pow(a, b));",
  // Wrapping integer pow by squaring (exact past 2^53); u = 1 for uint32. a ** -n = trunc(1 / a^n).
  intPow:
    "const intPow = (a, b, u) => { if (b < 0) return a === 1 ? 1 : a === -1 ? (b % 2 === 0 ? 1 : -1) : 0; let r = 1, x = a | 0; for (let e = b >>> 0; e !== 0; e >>>= 1) { if (e & 1) r = Math.imul(r, x); x = Math.imul(x, x); } return u ? r >>> 0 : r | 0; };",
  // Integer floor modulo (z = 0: x % 0 is 0).
  floorMod:
    "const floorMod = (a, b, z) => { if (b === 0) return z; const r = a % b; return (r !== 0 && (r < 0) !== (b < 0)) ? r + b : r; };",
} as const satisfies Readonly<Record<string, string>>;
/** A helper function that generated code may call; a rule asks for it with `need`. */
type JsHelper = keyof typeof HELPERS;

/**
 * The lines that read a kernel's constants from the `consts` argument (a
 * Float64Array, see `Launch.consts`) into locals `c0, c1, …`, once per call. The
 * values are not in the source, so one compiled kernel serves every constant
 * value; integer constants are coerced so the engine keeps them as int32.
 */
function constLines(k: Kernel): string[] {
  const lines: string[] = [];
  for (const [i, slot] of constSlots(k).entries()) {
    if (slot < 0) continue;
    const d = k.exprs[i]!.dtype;
    const read = `consts[${slot}]`;
    lines.push(
      `const c${slot} = ${d === "uint32" ? `${read} >>> 0` : d === "int32" || d === "bool" ? `${read} | 0` : read};`,
    );
  }
  return lines;
}

function printIndex(e: IndexExpr): string {
  switch (e.k) {
    case "var":
      return `j${e.axis}`;
    case "const":
      return String(e.v);
    case "add":
      return `(${printIndex(e.a)} + ${printIndex(e.b)})`;
    case "mul":
      return `(${printIndex(e.a)} * ${printIndex(e.b)})`;
    case "div":
      return `Math.floor(${printIndex(e.a)} / ${printIndex(e.b)})`;
    case "mod":
      return `(${printIndex(e.a)} % ${printIndex(e.b)})`;
  }
}

/** Replaces the variables of unrolled axes by their constants (folding as it goes). */
function substIndex(e: IndexExpr, point: ReadonlyMap<number, number>): IndexExpr {
  switch (e.k) {
    case "var": {
      const v = point.get(e.axis);
      return v === undefined ? e : ix.c(v);
    }
    case "const":
      return e;
    default:
      return ix[e.k](substIndex(e.a, point), substIndex(e.b, point));
  }
}

function varsOf(e: IndexExpr, out: Set<number>): Set<number> {
  if (e.k === "var") out.add(e.axis);
  else if (e.k !== "const") {
    varsOf(e.a, out);
    varsOf(e.b, out);
  }
  return out;
}

/** All points of a static shape, row-major. */
function points(shape: readonly number[]): number[][] {
  const out: number[][] = [];
  const n = numel(shape);
  for (let f = 0; f < n; f++) {
    const p = new Array<number>(shape.length);
    let r = f;
    for (let d = shape.length - 1; d >= 0; d--) {
      p[d] = r % shape[d]!;
      r = Math.floor(r / shape[d]!);
    }
    out.push(p);
  }
  return out;
}

/** The statement folding value `v` into accumulator `acc`; `arg` and `pos` track argmin/argmax. */
function accumulateJS(op: KReduceOp, acc: string, v: string, dtype: DType, arg: string, pos: string): string {
  switch (op) {
    case "sum":
    case "mean":
      return `${acc} += ${v};`;
    case "prod":
      return `${acc} = ${isFloat(dtype) ? `${acc} * ${v}` : `Math.imul(${acc}, ${v})`};`;
    case "min":
      return `${acc} = Math.min(${acc}, ${v});`;
    case "max":
      return `${acc} = Math.max(${acc}, ${v});`;
    case "all":
      return `${acc} &= (${v} !== 0 ? 1 : 0);`;
    case "any":
      return `${acc} |= (${v} !== 0 ? 1 : 0);`;
    case "argmin":
    case "argmax":
      // First position wins ties; a NaN wins once and then sticks (as min/max propagate NaN).
      return `if (${acc} === ${acc} && (${v} !== ${v} || ${v} ${op === "argmax" ? ">" : "<"} ${acc})) { ${acc} = ${v}; ${arg} = ${pos}; }`;
  }
}

/**
 * Rounding to float32 is monotone, so max(fround a, fround b) = fround(max(a, b)):
 * a min/max accumulator may take unrounded values, and the float32 store rounds
 * the result once (same bits). Not argmin/argmax: rounding can create ties.
 */
function monotoneRounding(op: KReduceOp, d: DType): boolean {
  return d === "float32" && (op === "min" || op === "max");
}

/**
 * Accumulator start values. A sum (and a mean's sum) starts at -0, the exact additive
 * identity (-0 + x = x for every x, where +0 + -0 is +0), so a sum of -0s is -0 as in
 * NumPy; an empty sum is +0 (`SUM_EMPTY`).
 */
const INIT: { readonly [K in KReduceOp]: string } = {
  sum: "-0",
  mean: "-0",
  prod: "1",
  min: "Infinity",
  max: "-Infinity",
  argmin: "Infinity",
  argmax: "-Infinity",
  all: "1",
  any: "0",
};

/** The start value of an accumulator over `count` elements (a JS expression): an empty sum is +0. */
function initFor(op: KReduceOp, count: string): string {
  if (op !== "sum") return INIT[op];
  if (count === "0") return "0";
  return /^\d+$/.test(count) ? INIT.sum : `(${count} === 0 ? 0 : -0)`;
}

export interface JsKernelSource {
  readonly source: string;
  /** Function body taking (ins, outs, sizes, strides, consts); `consts` holds the kernel's constants (`Launch.consts`). */
  readonly body: string;
}

/**
 * Emits a kernel as a loop nest. Loop levels, outer to inner: the kept batch
 * loops, the kept base loops, and for reductions the reduced batch loops and
 * the reduced base loops. Unrolled base axes have no loop: each of their points
 * is emitted with constant indices. Every value is emitted at the outermost
 * level where all it depends on is defined (loop-invariant code sits outside
 * the loops), and values are numbered by their code, so a value shared by
 * several points or outputs is computed once.
 */
class Emitter {
  readonly levels: string[][];
  readonly helpers = new Set<JsHelper>();
  private readonly byCode = new Map<string, { name: string; level: number }>();
  private count = 0;
  private readonly constSlot: readonly number[];

  constructor(
    private readonly k: Kernel,
    nLevels: number,
    /** Level at which each base axis's loop variable is defined (unrolled axes: none). */
    private readonly axisLevel: ReadonlyMap<number, number>,
    /** Level at which the input pointers p0, p1, … are defined (one for all, or per input). */
    private readonly pointerLevel: number | readonly number[],
    /** Pad kernels: level at which `inside` (the padded position holds a row entry) is defined. */
    private readonly insideLevel = 0,
  ) {
    this.levels = Array.from({ length: nLevels }, () => []);
    this.constSlot = constSlots(k);
  }

  private bind(code: string, level: number): { name: string; level: number } {
    // A bare name or literal needs no binding; it keeps the level of what it names.
    if (/^-?[\w.]+$/.test(code)) return { name: code, level };
    const found = this.byCode.get(code);
    if (found !== undefined) return found;
    const v = { name: `t${this.count++}`, level };
    this.levels[level]!.push(`const ${v.name} = ${code};`);
    this.byCode.set(code, v);
    return v;
  }

  /**
   * The name and level of expr `i` at a point (constants for the unrolled axes).
   * `stored`: the value only goes into a float32 output, whose store rounds it, so
   * its own last rounding is left out (same bits, one Math.fround fewer).
   */
  value(
    i: number,
    point: ReadonlyMap<number, number>,
    memo: Map<number, { name: string; level: number }>,
    stored = false,
  ): { name: string; level: number } {
    const hit = memo.get(i);
    if (hit !== undefined) return hit;
    const e: KExpr = this.k.exprs[i]!;
    // Relaxed kernels keep float32 intermediates in float64 and round only when storing.
    const roundF32 = stored || this.k.relaxedFloat32 === true ? (code: string) => code : roundResult;
    const sub = (j: number) => this.value(j, point, memo);
    let code: string;
    let level = 0;
    const use = (...vs: { name: string; level: number }[]): string[] => {
      for (const v of vs) level = Math.max(level, v.level);
      return vs.map((v) => v.name);
    };
    switch (e.k) {
      case "load": {
        const inp = this.k.inputs[e.input]!;
        const strides = contiguousStrides(inp.baseShape);
        let off: IndexExpr = ix.c(0);
        e.index.forEach((x, d) => (off = ix.add(off, ix.mul(substIndex(x, point), ix.c(strides[d]!)))));
        level = typeof this.pointerLevel === "number" ? this.pointerLevel : this.pointerLevel[e.input]!;
        for (const a of varsOf(off, new Set())) level = Math.max(level, this.axisLevel.get(a)!);
        code = `in${e.input}[p${e.input} + ${printIndex(off)}]`;
        // A right-padded input reads 0 past its padded length (segmented kernels).
        if (inp.padded) code = `(pn${e.input} ? ${code} : 0)`;
        break;
      }
      case "const":
        // A launch argument (see `constLines`), defined before every loop.
        code = `c${this.constSlot[i]}`;
        break;
      case "unary": {
        const [x] = use(sub(e.x));
        const u = UNARY_JS[e.op](x!, this.k.exprs[e.x]!.dtype, (h) => this.helpers.add(h));
        code = EXACT_ON_F32.has(e.op) ? u : roundF32(u, e.dtype);
        break;
      }
      case "binary": {
        const [a, b] = use(sub(e.a), sub(e.b));
        const r = BINARY_JS[e.op](a!, b!, this.k.exprs[e.a]!.dtype, (h) => this.helpers.add(h));
        code = EXACT_ON_F32.has(e.op) ? r : roundF32(r, e.dtype);
        break;
      }
      case "where": {
        const [c, a, b] = use(sub(e.c), sub(e.a), sub(e.b));
        code = `(${c} !== 0 ? ${a} : ${b})`;
        break;
      }
      case "cast": {
        const [x] = use(sub(e.x));
        code = castJS(x!, e.dtype);
        break;
      }
      case "combine": {
        const xs = use(...e.xs.map(sub));
        const d = this.k.exprs[e.xs[0]!]!.dtype;
        code = roundF32(wrap(COMBINE_JS[e.op](xs, d, xs.length), e.dtype), e.dtype);
        break;
      }
      case "inside":
        code = "inside";
        level = this.insideLevel;
        break;
      case "select": {
        const idx = substIndex(e.index, point);
        if (idx.k === "const") {
          // The index is known here, so only the branch taken is emitted.
          const v = sub(idx.v < e.bound ? e.a : e.b);
          memo.set(i, v);
          return v;
        }
        const [a, b] = use(sub(e.a), sub(e.b));
        for (const ax of varsOf(idx, new Set())) level = Math.max(level, this.axisLevel.get(ax)!);
        code = `(${printIndex(idx)} < ${e.bound} ? ${a} : ${b})`;
        break;
      }
    }
    const v = this.bind(code, level);
    if (!stored) memo.set(i, v);
    return v;
  }
}

/** Base axes the JS backend unrolls when the scheduler did not unroll the whole base. */
function unrolledAxes(k: Kernel): Set<number> {
  if (k.unroll) return new Set(k.baseShape.map((_, a) => a));
  return new Set(k.unrollAxes ?? []);
}

/** The padded length of a pad/mask kernel: a constant, or the run-time `maxN`. */
function paddedLengthJS(seg: Segment): string {
  return seg.maxN! >= 0 ? String(seg.maxN) : "maxN";
}

/** A segmented kernel (ragged ops): rows outside, each row's segment inside (see `Segment`). */
function segmentedToJS(k: Kernel): JsKernelSource {
  const seg = k.segment!;
  const unrolled = unrolledAxes(k);
  const looped = k.baseShape.map((_, a) => a).filter((a) => !unrolled.has(a));
  const unrolledList = k.baseShape.map((_, a) => a).filter((a) => unrolled.has(a));
  const reduce = seg.mode === "reduce";
  // Levels: 0 = the row; reduce: 1..K looped base axes, K+1 the segment loop;
  // map/pad/mask: 1 the segment (or padded position) loop, 2.. looped base axes.
  const axisLevel = new Map<number, number>();
  looped.forEach((a, i) => axisLevel.set(a, reduce ? 1 + i : 2 + i));
  const segLevel = reduce ? 1 + looped.length : 1;
  const nLevels = reduce ? segLevel + 1 : 2 + looped.length;
  const pointerLevels = k.inputs.map((inp) => (inp.packed || inp.padded ? segLevel : 0));
  const em = new Emitter(k, nLevels, axisLevel, pointerLevels, segLevel);
  const S = numel(k.baseShape);
  const strides = contiguousStrides(k.baseShape);
  k.inputs.forEach((inp, i) => {
    if (i === seg.offsets) return;
    if (inp.padded) {
      // (B, M; base) with plain strides s0 = M·base, s1 = base: row i0, position t - lo.
      em.levels[0]!.push(`const m${i} = s${i}_1 > 0 ? s${i}_0 / s${i}_1 : 0;`);
      em.levels[segLevel]!.push(`const pn${i} = t - lo < m${i};`, `const p${i} = i0 * s${i}_0 + (t - lo) * s${i}_1;`);
      return;
    }
    const ptr = inp.batchRank === 0 ? "0" : inp.packed ? `t * s${i}_0` : `i0 * s${i}_0`;
    em.levels[pointerLevels[i]!]!.push(`const p${i} = ${ptr};`);
  });
  const offset = (point: ReadonlyMap<number, number>): string => {
    let off: IndexExpr = ix.c(0);
    k.baseShape.forEach(
      (_, a) => (off = ix.add(off, ix.mul(point.has(a) ? ix.c(point.get(a)!) : ix.v(a), ix.c(strides[a]!)))),
    );
    return printIndex(off);
  };
  const pts = points(unrolledList.map((a) => k.baseShape[a]!)).map(
    (p) => new Map(unrolledList.map((a, i) => [a, p[i]!])),
  );
  const out = k.outputs[0]!;
  const innermost: string[] = [];
  const afterSegment: string[] = [];
  const beforeSegment: string[] = [];
  if (reduce) {
    pts.forEach((pt, q) => {
      const acc = `acc_${q}`;
      beforeSegment.push(`let ${acc} = ${initFor(out.reduce!, "hi - lo")};`);
      if (out.reduce === "argmax" || out.reduce === "argmin") beforeSegment.push(`let arg_${q} = 0;`);
      const v = em.value(out.value, pt, new Map(), monotoneRounding(out.reduce!, k.exprs[out.value]!.dtype)).name;
      if (out.reduce === "argmin" || out.reduce === "prod" || out.reduce === "all" || out.reduce === "any") {
        throw new UnsupportedOpError(`codegen js: segment reduction ${out.reduce} is not supported`);
      }
      innermost.push(accumulateJS(out.reduce!, acc, v, k.exprs[out.value]!.dtype, `arg_${q}`, "t - lo"));
      const result = out.reduce === "mean" ? `${acc} / (hi - lo)` : out.reduce === "argmax" ? `arg_${q}` : acc;
      afterSegment.push(`out0[i0 * ${S} + ${offset(pt)}] = ${result};`);
    });
  } else if (seg.mode === "map") {
    for (const pt of pts)
      innermost.push(
        `out0[t * ${S} + ${offset(pt)}] = ${em.value(out.value, pt, new Map(), out.dtype === "float32").name};`,
      );
  } else {
    // pad: the output expression says what padding positions hold (see `Segment`).
    const maxN = paddedLengthJS(seg);
    for (const pt of pts)
      innermost.push(
        `out0[(i0 * ${maxN} + n) * ${S} + ${offset(pt)}] = ${em.value(out.value, pt, new Map(), out.dtype === "float32").name};`,
      );
  }
  const L = new Lines();
  let strideIndex = 0;
  k.inputs.forEach((inp, i) => {
    L.line(`const in${i} = ins[${i}];`);
    for (let d = 0; d < inp.batchRank; d++) L.line(`const s${i}_${d} = strides[${strideIndex++}];`);
  });
  L.line("const out0 = outs[0];");
  for (const line of constLines(k)) L.line(line);
  L.line(`const offs = in${seg.offsets};`);
  // maxN -1: pad to the longest row, a run-time size (the launch's second batch size).
  if (seg.maxN === -1) L.line("const maxN = sizes[1];");
  L.open("for (let i0 = 0; i0 + 1 < sizes[0]; i0++) {");
  L.line("const lo = offs[i0];");
  L.line("const hi = offs[i0 + 1];");
  const emitLevel = (lv: number): void => {
    for (const line of em.levels[lv]!) L.line(line);
  };
  emitLevel(0);
  if (reduce) {
    looped.forEach((a, i) => {
      L.open(`for (let j${a} = 0; j${a} < ${k.baseShape[a]}; j${a}++) {`);
      emitLevel(1 + i);
    });
    for (const line of beforeSegment) L.line(line);
    L.open("for (let t = lo; t < hi; t++) {");
    emitLevel(segLevel);
    for (const line of innermost) L.line(line);
    L.close();
    for (const line of afterSegment) L.line(line);
    for (const _ of looped) L.close();
  } else {
    if (seg.mode === "map") L.open("for (let t = lo; t < hi; t++) {");
    else {
      const maxN = paddedLengthJS(seg);
      L.line(`const len = Math.min(hi - lo, ${maxN});`);
      L.line(`const start = ${seg.left ? `${maxN} - len` : "0"};`);
      L.open(`for (let n = 0; n < ${maxN}; n++) {`);
      L.line("const inside = n >= start && n < start + len ? 1 : 0;");
      // Padding positions read the row's first entry (in bounds), not past its end.
      L.line("const t = inside ? lo + n - start : lo;");
    }
    emitLevel(1);
    looped.forEach((a, i) => {
      L.open(`for (let j${a} = 0; j${a} < ${k.baseShape[a]}; j${a}++) {`);
      emitLevel(2 + i);
    });
    for (const line of innermost) L.line(line);
    for (const _ of looped) L.close();
    L.close();
  }
  L.close();
  const helpers = [...em.helpers].map((h) => HELPERS[h]).join("\n");
  const text = (helpers ? helpers + "\n" : "") + L.toString();
  return { source: `function kernel(ins, outs, sizes, strides, consts) {\n${text}\n}`, body: text };
}

export function kernelToJS(k: Kernel): JsKernelSource {
  if (k.outputs.length === 0) throw new UnsupportedOpError("codegen js: a kernel needs an output");
  if (k.segment !== undefined) return segmentedToJS(k);
  const R = k.batchRank;
  const red = k.reduce;
  const redBatch = red?.batchAxes ?? [];
  const redBase = new Set(red?.baseAxes ?? []);
  const unrolled = unrolledAxes(k);
  const keptBatch = [...Array(R).keys()].filter((a) => !redBatch.includes(a));
  const keptBase = k.baseShape.map((_, a) => a).filter((a) => !redBase.has(a));
  const redBaseAxes = [...redBase];
  const keptLooped = keptBase.filter((a) => !unrolled.has(a));
  const redLooped = redBaseAxes.filter((a) => !unrolled.has(a));
  const keptUnrolled = keptBase.filter((a) => unrolled.has(a));
  const redUnrolled = redBaseAxes.filter((a) => unrolled.has(a));

  // Levels: 0 inside the kept batch loops; then one per kept looped base axis;
  // for reductions one for all reduced batch loops, then one per reduced looped base axis.
  const axisLevel = new Map<number, number>();
  keptLooped.forEach((a, i) => axisLevel.set(a, 1 + i));
  const keptLevel = keptLooped.length;
  const redBatchLevel = red !== null && redBatch.length > 0 ? keptLevel + 1 : keptLevel;
  redLooped.forEach((a, i) => axisLevel.set(a, redBatchLevel + 1 + i));
  const innermost = redBatchLevel + redLooped.length;
  const pointerLevel = red !== null && redBatch.length > 0 ? redBatchLevel : 0;
  const em = new Emitter(k, innermost + 1, axisLevel, pointerLevel);

  // Output offsets: contiguous over the kept base axes.
  const outShape = keptBase.map((a) => k.baseShape[a]!);
  const outStrides = contiguousStrides(outShape);
  const outOffset = (point: ReadonlyMap<number, number>): string => {
    let off: IndexExpr = ix.c(0);
    keptBase.forEach(
      (a, i) => (off = ix.add(off, ix.mul(point.has(a) ? ix.c(point.get(a)!) : ix.v(a), ix.c(outStrides[i]!)))),
    );
    return printIndex(off);
  };
  const keptPoints = points(keptUnrolled.map((a) => k.baseShape[a]!)).map(
    (p) => new Map(keptUnrolled.map((a, i) => [a, p[i]!])),
  );
  const redPoints = points(redUnrolled.map((a) => k.baseShape[a]!)).map(
    (p) => new Map(redUnrolled.map((a, i) => [a, p[i]!])),
  );
  const pointerLines = k.inputs.map((inp, i) => {
    const terms: string[] = [];
    for (let d = 0; d < inp.batchRank; d++) terms.push(`i${R - inp.batchRank + d} * s${i}_${d}`);
    return `const p${i} = ${terms.length ? terms.join(" + ") : "0"};`;
  });
  em.levels[pointerLevel]!.push(...pointerLines);

  const body: string[] = []; // statements at the innermost level, after its values
  const after: string[] = []; // statements at the kept level after the reduced loops
  const keptInit: string[] = [];
  const mixed = k.outputs.some((out) => out.baseShape !== undefined);
  if (red === null && mixed) {
    // Outputs of different small bases (fully unrolled): each over its own points, at
    // its own offset bl * (its base size) for batch element bl.
    if (!k.unroll)
      throw new UnsupportedOpError("codegen js: outputs of different base shapes need a fully unrolled kernel");
    k.outputs.forEach((out, oi) => {
      const shape = out.baseShape ?? k.baseShape;
      const stored = out.dtype === "float32" && k.exprs[out.value]!.dtype === "float32";
      points(shape).forEach((p, f) => {
        const pt = new Map(p.map((v, a) => [a, v] as [number, number]));
        body.push(`out${oi}[bl * ${numel(shape)} + ${f}] = ${em.value(out.value, pt, new Map(), stored).name};`);
      });
    });
  } else if (red === null) {
    for (const kp of keptPoints) {
      const memo = new Map<number, { name: string; level: number }>();
      k.outputs.forEach((out, oi) => {
        const stored = out.dtype === "float32" && k.exprs[out.value]!.dtype === "float32";
        body.push(`out${oi}[ob + ${outOffset(kp)}] = ${em.value(out.value, kp, memo, stored).name};`);
      });
    }
  } else {
    const baseCount = numel(redBaseAxes.map((a) => k.baseShape[a]!));
    const count = [...redBatch.map((a) => `n${a}`), String(baseCount)].join(" * ");
    // Whether the reduction is empty is known before the loops (the sum's start value).
    const sumCount =
      baseCount === 0 ? "0" : redBatch.length === 0 ? String(baseCount) : redBatch.map((a) => `n${a}`).join(" * ");
    keptPoints.forEach((kp, q) => {
      k.outputs.forEach((out, oi) => {
        const acc = `acc${oi}_${q}`;
        keptInit.push(`let ${acc} = ${initFor(out.reduce!, sumCount)};`);
        if (out.reduce === "argmin" || out.reduce === "argmax") keptInit.push(`let arg${oi}_${q} = 0;`);
        const v =
          out.reduce === "mean"
            ? `${acc} / (${count})`
            : out.reduce === "argmin" || out.reduce === "argmax"
              ? `arg${oi}_${q}`
              : acc;
        after.push(`out${oi}[ob + ${outOffset(kp)}] = ${v};`);
      });
      for (const rp of redPoints) {
        const point = new Map([...kp, ...rp]);
        const memo = new Map<number, { name: string; level: number }>();
        k.outputs.forEach((out, oi) => {
          const v = em.value(out.value, point, memo, monotoneRounding(out.reduce!, k.exprs[out.value]!.dtype)).name;
          const acc = `acc${oi}_${q}`;
          const pos =
            red.batchAxes.length === 1
              ? `i${red.batchAxes[0]}`
              : rp.has(red.baseAxes[0]!)
                ? String(rp.get(red.baseAxes[0]!))
                : `j${red.baseAxes[0]}`;
          body.push(accumulateJS(out.reduce!, acc, v, k.exprs[out.value]!.dtype, `arg${oi}_${q}`, pos));
        });
      }
    });
  }

  const L = new Lines();
  let strideIndex = 0;
  k.inputs.forEach((inp, i) => {
    L.line(`const in${i} = ins[${i}];`);
    for (let d = 0; d < inp.batchRank; d++) L.line(`const s${i}_${d} = strides[${strideIndex++}];`);
  });
  k.outputs.forEach((_, i) => L.line(`const out${i} = outs[${i}];`));
  for (const line of constLines(k)) L.line(line);
  for (let a = 0; a < R; a++) L.line(`const n${a} = sizes[${a}];`);
  L.line("let o = 0;");
  if (mixed) L.line("let nb = 0;");
  for (const a of keptBatch) L.open(`for (let i${a} = 0; i${a} < n${a}; i${a}++) {`);
  L.line("const ob = o;");
  L.line(`o += ${numel(outShape)};`);
  if (mixed) L.line("const bl = nb++;");
  const emitLevel = (lv: number): void => {
    for (const line of em.levels[lv]!) L.line(line);
  };
  emitLevel(0);
  keptLooped.forEach((a, i) => {
    L.open(`for (let j${a} = 0; j${a} < ${k.baseShape[a]}; j${a}++) {`);
    emitLevel(1 + i);
  });
  if (red !== null) {
    for (const line of keptInit) L.line(line);
    for (const a of redBatch) L.open(`for (let i${a} = 0; i${a} < n${a}; i${a}++) {`);
    if (redBatch.length > 0) emitLevel(redBatchLevel);
    redLooped.forEach((a, i) => {
      L.open(`for (let j${a} = 0; j${a} < ${k.baseShape[a]}; j${a}++) {`);
      emitLevel(redBatchLevel + 1 + i);
    });
    for (const line of body) L.line(line);
    for (const _ of redLooped) L.close();
    for (const _ of redBatch) L.close();
    for (const line of after) L.line(line);
  } else {
    for (const line of body) L.line(line);
  }
  for (const _ of keptLooped) L.close();
  for (const _ of keptBatch) L.close();
  const helpers = [...em.helpers].map((h) => HELPERS[h]).join("\n");
  const text = (helpers ? helpers + "\n" : "") + L.toString();
  return { source: `function kernel(ins, outs, sizes, strides, consts) {\n${text}\n}`, body: text };
}
