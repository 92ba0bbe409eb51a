/**
 * Loop form -> JavaScript source: a thin printer (docs/ARCHITECTURE.md, Kernel
 * forms). `lowerKernel` (codegen/lower-loops.ts) decides the loops, the index
 * arithmetic, hoisting and sharing of values and the reductions' semantics; this
 * file spells each statement, looks elementwise ops up in `UNARY_JS`/`BINARY_JS`,
 * and rounds float32 results (`Math.fround`) where the JS number would not be one.
 *
 * The generated function takes `(ins, outs, sizes, strides, consts)`: typed
 * arrays, the space's batch sizes, the inputs' batch strides (concatenated in
 * input order) and the values of the kernel's constants (a Float64Array). Base
 * sizes and strides are constants in the code; nothing depends on a batch size or
 * on a constant's value.
 */
import { F16_UNAVAILABLE, isFloat, isNarrowInt, type DType, type NarrowInt } from "../ir/dtype.js";
import { EXACT_ON_F32 } from "../ir/elementwise.js";
import { DTypeError, UnsupportedOpError } from "../ir/errors.js";
import type { KBinaryOp, KUnaryOp, Kernel } from "../ir/kernel.js";
import { Lines } from "./lines.js";
import { operands, walkStmts, type LExpr, type LStmt, type LType, type LoopProgram } from "./loop.js";
import { lowerKernel } from "./lower-loops.js";

const isNarrowIntL = (t: LType): boolean => t !== "index" && isNarrowInt(t);

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
  square: (x, d) => (isFloat(d) ? `((${x}) * (${x}))` : wrap(`Math.imul(${x}, ${x})`, d)),
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

/**
 * `x` converted to a narrow integer: ToInt32 (truncate, wrap, NaN/±Inf to 0, as `| 0`),
 * then the low 8 or 16 bits, sign-extended for the signed ones (what a store into an
 * Int8Array, Uint8Array, … does).
 */
const NARROW_JS: { readonly [D in NarrowInt]: (x: string) => string } = {
  uint8: (x) => `(${x} & 255)`,
  int8: (x) => `((${x} << 24) >> 24)`,
  uint16: (x) => `(${x} & 65535)`,
  int16: (x) => `((${x} << 16) >> 16)`,
};

/** `x` of type `from` as type `to` (the kernel IR's cast rules; bool and index are plain integers in JS). */
function castJS(x: string, from: LType, to: LType): string {
  if (to === "float16") throw new DTypeError(F16_UNAVAILABLE("the js backend"));
  if (to !== "index" && isNarrowInt(to)) return NARROW_JS[to](x);
  // The narrow integers are held as exact integer numbers, as int32.
  const integer = (t: LType): boolean => t === "bool" || t === "index" || t === "int32" || isNarrowIntL(t);
  if (to === "index") return integer(from) || from === "uint32" ? x : `(${x} | 0)`;
  if ((to === "int32" || to === "float64") && integer(from)) return x;
  if (to === "float64" && (from === "uint32" || from === "float32")) return x;
  if (to === "uint32" && from === "bool") return x;
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

/** A JS literal holding exactly `v` (the literal's type needs no conversion in JS). */
function literalJS(v: number): string {
  return Object.is(v, -0) ? "-0" : String(v);
}

/** How each constant slot is read once per call: integer constants are coerced so the engine keeps them as int32. */
function readConst(slot: number, d: DType): string {
  const read = `consts[${slot}]`;
  return d === "uint32" ? `${read} >>> 0` : d === "int32" || d === "bool" || isNarrowInt(d) ? `${read} | 0` : read;
}

type Let = Extract<LStmt, { k: "let" }>;

/**
 * Values whose float32 rounding (or int32/uint32 wrapping) may be left out because
 * every use rounds (wraps) them again: a store into a buffer of that dtype, or
 * (float32) a maximum/minimum whose own result may stay unrounded (rounding is
 * monotone: max(fround a, fround b) = fround(max(a, b))), or a local all of whose
 * reads may. Found as the largest set closed under these rules.
 */
function roundingFree(p: LoopProgram, defs: readonly (Let | undefined)[]): Set<number> {
  type Use =
    { kind: "store"; d: DType } | { kind: "value"; id: number } | { kind: "local"; l: number } | { kind: "other" };
  const u: Use[][] = Array.from({ length: p.values }, () => []);
  const gets: number[][] = p.locals.map(() => []);
  walkStmts(p.body, (s) => {
    switch (s.k) {
      case "let": {
        const e = s.e;
        if (e.k === "get") gets[e.local]!.push(s.id);
        const monotone = e.k === "binary" && (e.op === "maximum" || e.op === "minimum") && s.type === "float32";
        for (const o of operands(e)) u[o]!.push(monotone ? { kind: "value", id: s.id } : { kind: "other" });
        break;
      }
      case "set":
        u[s.value]!.push({ kind: "local", l: s.local });
        break;
      case "store":
        u[s.value]!.push({ kind: "store", d: p.outputs[s.buf]! });
        u[s.at]!.push({ kind: "other" });
        break;
      case "loop":
        u[s.from]!.push({ kind: "other" });
        u[s.to]!.push({ kind: "other" });
        break;
      case "if":
        u[s.cond]!.push({ kind: "other" });
        break;
    }
  });
  const free = new Set<number>();
  defs.forEach((d, id) => {
    // A narrow integer array's store wraps as the narrow cast does (NARROW_JS).
    if (d !== undefined && (d.type === "float32" || d.type === "int32" || d.type === "uint32" || isNarrowIntL(d.type)))
      free.add(id);
  });
  const localFree = (l: number): boolean => gets[l]!.every((g) => free.has(g));
  for (let changed = true; changed;) {
    changed = false;
    for (const id of [...free]) {
      const t = defs[id]!.type;
      const ok = u[id]!.every((use) =>
        use.kind === "store"
          ? use.d === t
          : use.kind === "value"
            ? t === "float32" && free.has(use.id)
            : use.kind === "local"
              ? t === "float32" && p.locals[use.l] === "float32" && localFree(use.l)
              : false,
      );
      if (!ok) {
        free.delete(id);
        changed = true;
      }
    }
  }
  return free;
}

const IDX_JS: { readonly [K in Extract<LExpr, { k: "idx" }>["op"]]: (a: string, b: string) => string } = {
  add: (a, b) => `(${a} + ${b})`,
  sub: (a, b) => `(${a} - ${b})`,
  mul: (a, b) => `(${a} * ${b})`,
  div: (a, b) => `Math.floor(${a} / ${b})`,
  mod: (a, b) => `(${a} % ${b})`,
  min: (a, b) => `Math.min(${a}, ${b})`,
  max: (a, b) => `Math.max(${a}, ${b})`,
};
const ICMP_JS: { readonly [K in Extract<LExpr, { k: "icmp" }>["op"]]: string } = {
  lt: "<",
  le: "<=",
  gt: ">",
  ge: ">=",
  eq: "===",
  ne: "!==",
};

export interface JsKernelSource {
  readonly source: string;
  /** Function body taking (ins, outs, sizes, strides, consts); `consts` holds the kernel's constants (`Launch.consts`). */
  readonly body: string;
}

/** JS source for one kernel: its loop form (`lowerKernel`) printed by `loopToJS`. */
export function kernelToJS(k: Kernel): JsKernelSource {
  return loopToJS(lowerKernel(k));
}

/** Prints a loop program as the body of `function kernel(ins, outs, sizes, strides, consts)`. */
export function loopToJS(p: LoopProgram): JsKernelSource {
  const defs: (Let | undefined)[] = new Array(p.values);
  walkStmts(p.body, (s) => {
    if (s.k === "let") defs[s.id] = s;
  });
  const free = roundingFree(p, defs);
  const helpers = new Set<JsHelper>();
  const need = (h: JsHelper): void => {
    helpers.add(h);
  };
  const name: string[] = new Array(p.values);
  const type = (id: number): LType => defs[id]?.type ?? "index";
  const round = (code: string, id: number): string =>
    defs[id]!.type === "float32" && !free.has(id) ? roundResult(code, "float32") : code;

  const exprJS = (id: number, t: LType, e: LExpr): string => {
    const n = (v: number): string => name[v]!;
    switch (e.k) {
      case "size":
        return `sizes[${e.i}]`;
      case "stride":
        return `strides[${e.i}]`;
      case "const":
        return readConst(e.slot, p.consts[e.slot]!);
      case "lit":
        return literalJS(e.v);
      case "load":
        return `in${e.buf}[${n(e.at)}]`;
      case "oload":
        return `out${e.buf}[${n(e.at)}]`;
      case "get":
        return `l${e.local}`;
      case "unary": {
        const code = UNARY_JS[e.op](n(e.x), type(e.x) as DType, need);
        return EXACT_ON_F32.has(e.op) || p.relaxedFloat32 ? code : round(code, id);
      }
      case "binary": {
        const code = BINARY_JS[e.op](n(e.a), n(e.b), type(e.a) as DType, need);
        return EXACT_ON_F32.has(e.op) || p.relaxedFloat32 ? code : round(code, id);
      }
      case "where":
        return `(${n(e.c)} !== 0 ? ${n(e.a)} : ${n(e.b)})`;
      case "cast": {
        const from = type(e.x);
        // A store into a buffer of the cast's dtype converts the same way (float32, int32, uint32 arrays).
        if (free.has(id) && from !== "bool" && from !== "index") return n(e.x);
        return castJS(n(e.x), from, t);
      }
      case "idx":
        return IDX_JS[e.op](n(e.a), n(e.b));
      case "icmp":
        return `(${n(e.a)} ${ICMP_JS[e.op]} ${n(e.b)} ? 1 : 0)`;
      default:
        throw new UnsupportedOpError(`codegen js: ${e.k} belongs to workgroup programs`);
    }
  };

  const L = new Lines();
  p.inputs.forEach((_, i) => L.line(`const in${i} = ins[${i}];`));
  p.outputs.forEach((_, i) => L.line(`const out${i} = outs[${i}];`));
  if (p.locals.length > 0) L.line(`let ${p.locals.map((_, i) => `l${i} = 0`).join(", ")};`);
  const block = (stmts: readonly LStmt[]): void => {
    for (const s of stmts) {
      switch (s.k) {
        case "let": {
          const code = exprJS(s.id, s.type, s.e);
          // A bare name or literal needs no binding (never a local's read: the local may change).
          if (s.e.k !== "get" && /^-?[\w.]+$/.test(code)) name[s.id] = code;
          else {
            name[s.id] = `t${s.id}`;
            L.line(`const t${s.id} = ${code};`);
          }
          break;
        }
        case "set":
          L.line(`l${s.local} = ${name[s.value]};`);
          break;
        case "store":
          L.line(`out${s.buf}[${name[s.at]}] = ${name[s.value]};`);
          break;
        case "loop": {
          const v = `t${s.var}`;
          name[s.var] = v;
          L.open(`for (let ${v} = ${name[s.from]}; ${v} < ${name[s.to]}; ${v}++) {`);
          block(s.body);
          L.close();
          break;
        }
        case "if":
          L.branch(
            `if (${name[s.cond]} !== 0) {`,
            () => block(s.then),
            s.else.length > 0 ? () => block(s.else) : undefined,
          );
          break;
        case "break":
        case "return":
          L.line(`${s.k};`);
          break;
        default:
          throw new UnsupportedOpError(`codegen js: ${s.k} belongs to workgroup programs`);
      }
    }
  };
  block(p.body);
  const helperText = [...helpers].map((h) => HELPERS[h]).join("\n");
  const text = (helperText ? helperText + "\n" : "") + L.toString();
  return { source: `function kernel(ins, outs, sizes, strides, consts) {\n${text}\n}`, body: text };
}
