/**
 * Kernel IR -> JavaScript source. The generated function takes
 * `(ins, outs, sizes, strides)`: typed arrays, the space's batch sizes, and the
 * inputs' batch strides (concatenated in input order). Base sizes and strides
 * are constants in the code; nothing depends on a batch size.
 *
 * Unrolled kernels evaluate the expression DAG once per base point with constant
 * indices; values are numbered by the code they produce, so subexpressions that
 * several points share (a determinant used by every entry of an inverse) are
 * computed once per batch element.
 */
import { isFloat, type DType } from "../ir/dtype.js";
import { UnsupportedOpError } from "../ir/errors.js";
import {
  contiguousStrides,
  evalIndex,
  ix,
  numel,
  type IndexExpr,
  type KBinaryOp,
  type KExpr,
  type KReduceOp,
  type KUnaryOp,
  type Kernel,
} from "../ir/kernel.js";
import { Lines } from "./lines.js";

/** Integer results wrap like the typed array they are stored in. */
function wrap(code: string, d: DType): string {
  if (d === "int32") return `((${code}) | 0)`;
  if (d === "uint32") return `((${code}) >>> 0)`;
  return code;
}

const UNARY_JS: { readonly [K in KUnaryOp]: (x: string, d: DType) => string } = {
  neg: (x, d) => wrap(`-${x}`, d),
  abs: (x, d) => wrap(`Math.abs(${x})`, d),
  sqrt: (x) => `Math.sqrt(${x})`,
  rsqrt: (x) => `(1 / Math.sqrt(${x}))`,
  exp: (x) => `Math.exp(${x})`,
  log: (x) => `Math.log(${x})`,
  sin: (x) => `Math.sin(${x})`,
  cos: (x) => `Math.cos(${x})`,
  tan: (x) => `Math.tan(${x})`,
  tanh: (x) => `Math.tanh(${x})`,
  sigmoid: (x) => `(1 / (1 + Math.exp(-${x})))`,
  floor: (x) => `Math.floor(${x})`,
  ceil: (x) => `Math.ceil(${x})`,
  round: (x) => `roundHalfEven(${x})`,
  trunc: (x) => `Math.trunc(${x})`,
  sign: (x) => `Math.sign(${x})`,
  not: (x) => `(${x} === 0 ? 1 : 0)`,
  isnan: (x) => `(${x} !== ${x} ? 1 : 0)`,
  isinf: (x) => `((${x} === Infinity || ${x} === -Infinity) ? 1 : 0)`,
  isfinite: (x) => `(Number.isFinite(${x}) ? 1 : 0)`,
};

/** `d` is the operands' dtype. */
const BINARY_JS: { readonly [K in KBinaryOp]: (a: string, b: string, d: DType) => string } = {
  add: (a, b, d) => wrap(`${a} + ${b}`, d),
  sub: (a, b, d) => wrap(`${a} - ${b}`, d),
  mul: (a, b, d) => (isFloat(d) ? `(${a} * ${b})` : wrap(`Math.imul(${a}, ${b})`, d)),
  div: (a, b, d) => (isFloat(d) ? `(${a} / ${b})` : wrap(`(${b} === 0 ? 0 : Math.trunc(${a} / ${b}))`, d)),
  pow: (a, b, d) => wrap(`Math.pow(${a}, ${b})`, d),
  maximum: (a, b) => `Math.max(${a}, ${b})`,
  minimum: (a, b) => `Math.min(${a}, ${b})`,
  mod: (a, b, d) => wrap(`floorMod(${a}, ${b}, ${isFloat(d) ? "NaN" : "0"})`, d),
  eq: (a, b) => `(${a} === ${b} ? 1 : 0)`,
  ne: (a, b) => `(${a} !== ${b} ? 1 : 0)`,
  lt: (a, b) => `(${a} < ${b} ? 1 : 0)`,
  le: (a, b) => `(${a} <= ${b} ? 1 : 0)`,
  gt: (a, b) => `(${a} > ${b} ? 1 : 0)`,
  ge: (a, b) => `(${a} >= ${b} ? 1 : 0)`,
  and: (a, b) => `(${a} & ${b})`,
  or: (a, b) => `(${a} | ${b})`,
  xor: (a, b) => `(${a} ^ ${b})`,
};

/**
 * float32 results round after every op (as on a GPU and in the reference
 * interpreter), so a fused chain gives the same bits as the ops one by one.
 */
function roundF32(code: string, d: DType): string {
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
  sum: (xs) => `(0 + ${xs.join(" + ")})`,
  mean: (xs, _d, n) => `((0 + ${xs.join(" + ")}) / ${n})`,
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

const HELPERS: Readonly<Record<string, string>> = {
  roundHalfEven:
    "const roundHalfEven = (x) => { const r = Math.round(x); return (Math.abs(x % 1) === 0.5 && r % 2 !== 0) ? r - 1 : r; };",
  floorMod:
    "const floorMod = (a, b, z) => { if (b === 0) return z; const r = a % b; return (r !== 0 && (r < 0) !== (b < 0)) ? r + b : r; };",
};

function literal(v: number): string {
  if (Object.is(v, -0)) return "-0";
  return String(v);
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

/** Emits the values of one code block (a loop body), numbering values by the code they produce. */
class BlockEmitter {
  private readonly byCode = new Map<string, string>();
  private count = 0;
  readonly helpers: Set<string>;

  constructor(
    private readonly out: Lines,
    private readonly k: Kernel,
    private readonly prefix: string,
    helpers: Set<string>,
  ) {
    this.helpers = helpers;
  }

  private bind(code: string): string {
    if (/^[\w.]+$/.test(code) && !code.includes("(")) return code;
    const found = this.byCode.get(code);
    if (found !== undefined) return found;
    const name = `${this.prefix}${this.count++}`;
    this.out.line(`const ${name} = ${code};`);
    this.byCode.set(code, name);
    return name;
  }

  /** The code of expr `i` at base point `point` (numbers when unrolled, undefined for loop variables). */
  value(i: number, point: readonly number[] | undefined, memo: Map<number, string>): string {
    const hit = memo.get(i);
    if (hit !== undefined) return hit;
    const e: KExpr = this.k.exprs[i]!;
    let code: string;
    switch (e.k) {
      case "load": {
        const inp = this.k.inputs[e.input]!;
        const strides = contiguousStrides(inp.baseShape);
        let off: IndexExpr = ix.c(0);
        e.index.forEach((x, d) => (off = ix.add(off, ix.mul(x, ix.c(strides[d]!)))));
        const offCode = point ? String(evalIndex(off, point)) : printIndex(off);
        code = `in${e.input}[p${e.input} + ${offCode}]`;
        break;
      }
      case "const":
        code = literal(e.value);
        break;
      case "unary":
        if (e.op === "round") this.helpers.add("roundHalfEven");
        code = roundF32(UNARY_JS[e.op](this.value(e.x, point, memo), this.k.exprs[e.x]!.dtype), e.dtype);
        break;
      case "binary":
        if (e.op === "mod") this.helpers.add("floorMod");
        code = roundF32(BINARY_JS[e.op](this.value(e.a, point, memo), this.value(e.b, point, memo), this.k.exprs[e.a]!.dtype), e.dtype);
        break;
      case "where":
        code = `(${this.value(e.c, point, memo)} !== 0 ? ${this.value(e.a, point, memo)} : ${this.value(e.b, point, memo)})`;
        break;
      case "cast":
        code = castJS(this.value(e.x, point, memo), e.dtype);
        break;
      case "combine": {
        const xs = e.xs.map((x) => this.value(x, point, memo));
        const d = this.k.exprs[e.xs[0]!]!.dtype;
        code = roundF32(wrap(COMBINE_JS[e.op](xs, d, xs.length), e.dtype), e.dtype);
        break;
      }
      case "select":
        if (point) {
          // Unrolled: the index is a constant, so only the branch taken is emitted.
          const name = this.value(evalIndex(e.index, point) < e.bound ? e.a : e.b, point, memo);
          memo.set(i, name);
          return name;
        }
        code = `(${printIndex(e.index)} < ${e.bound} ? ${this.value(e.a, point, memo)} : ${this.value(e.b, point, memo)})`;
        break;
    }
    const name = this.bind(code);
    memo.set(i, name);
    return name;
  }
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

const INIT: { readonly [K in KReduceOp]: string } = {
  sum: "0", mean: "0", prod: "1", min: "Infinity", max: "-Infinity",
  argmin: "Infinity", argmax: "-Infinity", all: "1", any: "0",
};

export interface JsKernelSource {
  readonly source: string;
  /** Function body taking (ins, outs, sizes, strides). */
  readonly body: string;
}

export function kernelToJS(k: Kernel): JsKernelSource {
  const L = new Lines();
  const helpers = new Set<string>();
  const R = k.batchRank;
  const red = k.reduce;
  const redBatch = new Set(red?.batchAxes ?? []);
  const redBase = new Set(red?.baseAxes ?? []);
  let strideIndex = 0;
  k.inputs.forEach((inp, i) => {
    L.line(`const in${i} = ins[${i}];`);
    for (let d = 0; d < inp.batchRank; d++) L.line(`const s${i}_${d} = strides[${strideIndex++}];`);
  });
  k.outputs.forEach((_, i) => L.line(`const out${i} = outs[${i}];`));
  for (let a = 0; a < R; a++) L.line(`const n${a} = sizes[${a}];`);
  L.line("let o = 0;");

  const pointers = (): void => {
    k.inputs.forEach((inp, i) => {
      const terms: string[] = [];
      for (let d = 0; d < inp.batchRank; d++) terms.push(`i${R - inp.batchRank + d} * s${i}_${d}`);
      L.line(`const p${i} = ${terms.length ? terms.join(" + ") : "0"};`);
    });
  };
  const keptBatch = [...Array(R).keys()].filter((a) => !redBatch.has(a));
  for (const a of keptBatch) L.open(`for (let i${a} = 0; i${a} < n${a}; i${a}++) {`);

  if (red === null) {
    pointers();
    const blk = new BlockEmitter(L, k, "t", helpers);
    if (k.unroll) {
      const pts = points(k.baseShape);
      pts.forEach((p, q) => {
        const memo = new Map<number, string>();
        k.outputs.forEach((out, oi) => L.line(`out${oi}[o + ${q}] = ${blk.value(out.value, p, memo)};`));
      });
      L.line(`o += ${pts.length};`);
    } else {
      k.baseShape.forEach((d, a) => L.open(`for (let j${a} = 0; j${a} < ${d}; j${a}++) {`));
      const memo = new Map<number, string>();
      k.outputs.forEach((out, oi) => L.line(`out${oi}[o${oi === k.outputs.length - 1 ? "++" : ""}] = ${blk.value(out.value, undefined, memo)};`));
      k.baseShape.forEach(() => L.close());
    }
  } else {
    const keptBaseAxes = k.baseShape.map((_, a) => a).filter((a) => !redBase.has(a));
    const redBaseAxes = [...redBase];
    const count = [
      ...[...redBatch].map((a) => `n${a}`),
      String(numel(redBaseAxes.map((a) => k.baseShape[a]!))),
    ].join(" * ");
    // Unrolled: accumulators for every kept base point live across the reduced loops.
    const keptPoints: (number[] | undefined)[] = k.unroll ? points(keptBaseAxes.map((a) => k.baseShape[a]!)) : [undefined];
    if (!k.unroll) keptBaseAxes.forEach((a) => L.open(`for (let j${a} = 0; j${a} < ${k.baseShape[a]}; j${a}++) {`));
    keptPoints.forEach((_, q) =>
      k.outputs.forEach((out, oi) => {
        L.line(`let acc${oi}_${q} = ${INIT[out.reduce!]};`);
        if (out.reduce === "argmin" || out.reduce === "argmax") L.line(`let arg${oi}_${q} = 0;`);
      }),
    );
    for (const a of redBatch) L.open(`for (let i${a} = 0; i${a} < n${a}; i${a}++) {`);
    pointers();
    const blk = new BlockEmitter(L, k, "t", helpers);
    const fullPoint = (kept: readonly number[] | undefined, reduced: readonly number[] | undefined): number[] | undefined => {
      if (kept === undefined || reduced === undefined) return undefined;
      const p = new Array<number>(k.baseShape.length);
      keptBaseAxes.forEach((a, i) => (p[a] = kept[i]!));
      redBaseAxes.forEach((a, i) => (p[a] = reduced[i]!));
      return p;
    };
    const argAxis = (): string => {
      if (red.batchAxes.length === 1) return `i${red.batchAxes[0]}`;
      return `j${red.baseAxes[0]}`;
    };
    const accumulate = (q: number, pt: number[] | undefined, reducedPoint: readonly number[] | undefined): void => {
      const memo = new Map<number, string>();
      k.outputs.forEach((out, oi) => {
        const v = blk.value(out.value, pt, memo);
        const acc = `acc${oi}_${q}`;
        const dt = k.exprs[out.value]!.dtype;
        switch (out.reduce!) {
          case "sum":
          case "mean":
            L.line(`${acc} += ${v};`);
            break;
          case "prod":
            L.line(`${acc} = ${isFloat(dt) ? `${acc} * ${v}` : `Math.imul(${acc}, ${v})`};`);
            break;
          case "min":
            L.line(`${acc} = Math.min(${acc}, ${v});`);
            break;
          case "max":
            L.line(`${acc} = Math.max(${acc}, ${v});`);
            break;
          case "all":
            L.line(`${acc} &= (${v} !== 0 ? 1 : 0);`);
            break;
          case "any":
            L.line(`${acc} |= (${v} !== 0 ? 1 : 0);`);
            break;
          case "argmin":
          case "argmax": {
            const pos = reducedPoint !== undefined && red.baseAxes.length === 1 ? String(reducedPoint[0]) : argAxis();
            const cmp = out.reduce === "argmax" ? ">" : "<";
            L.line(`if (${acc} === ${acc} && (${v} !== ${v} || ${v} ${cmp} ${acc})) { ${acc} = ${v}; arg${oi}_${q} = ${pos}; }`);
            break;
          }
        }
      });
    };
    if (k.unroll) {
      const redPoints = points(redBaseAxes.map((a) => k.baseShape[a]!));
      keptPoints.forEach((kp, q) => redPoints.forEach((rp) => accumulate(q, fullPoint(kp, rp), rp)));
    } else {
      redBaseAxes.forEach((a) => L.open(`for (let j${a} = 0; j${a} < ${k.baseShape[a]}; j${a}++) {`));
      accumulate(0, undefined, undefined);
      redBaseAxes.forEach(() => L.close());
    }
    for (const _ of redBatch) L.close();
    keptPoints.forEach((_, q) => {
      k.outputs.forEach((out, oi) => {
        const acc = `acc${oi}_${q}`;
        const v = out.reduce === "mean" ? `${acc} / (${count})` : out.reduce === "argmin" || out.reduce === "argmax" ? `arg${oi}_${q}` : acc;
        L.line(`out${oi}[o + ${q}] = ${v};`);
      });
    });
    L.line(`o += ${keptPoints.length};`);
    if (!k.unroll) keptBaseAxes.forEach(() => L.close());
  }
  for (const _ of keptBatch) L.close();
  const body = [...helpers].map((h) => HELPERS[h]!).join("\n") + "\n" + L.toString();
  if (k.outputs.length === 0) throw new UnsupportedOpError("codegen js: a kernel needs an output");
  return { source: `function kernel(ins, outs, sizes, strides) {\n${body}\n}`, body };
}
