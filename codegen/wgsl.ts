/**
 * Loop form → WGSL: a thin printer (docs/ARCHITECTURE.md, Kernel forms). The
 * workgroup lowering (codegen/lower-workgroup.ts) decides the launch structure
 * (one invocation per output element, workgroup trees, chunks and their combine
 * passes) and the reductions' semantics; this file spells each statement of the
 * loop form in WGSL and looks elementwise ops up in the tables of
 * codegen/wgsl-tables.ts (which also keep IEEE special values and signed zeros
 * intact on compilers that assume finite math).
 *
 * Everything that depends on a batch size travels in the uniform `P` (see
 * `wgslParamLayout`), never in the source, so one shader module serves every batch
 * size; so do the kernel's constants (their bits). Bindings (group 0): 0 = uniform
 * params, 1..n = inputs (read-only storage), n+1.. = outputs (read-write storage).
 * bool is stored as one u32 per element; index values are u32.
 */
import { isNarrowInt, type DType } from "../ir/dtype.js";
import { FLOAT_UNARY, isCompareOp, isLogicalBinaryOp, PREDICATE_UNARY } from "../ir/elementwise.js";
import type { KBinaryOp, Kernel } from "../ir/kernel.js";
import { Lines } from "./lines.js";
import { walkStmts, type LExpr, type LStmt, type LType, type LoopProgram } from "./loop.js";
import { lowerKernelWorkgroup } from "./lower-workgroup.js";
import {
  ARITH,
  COMPARE,
  HELPERS,
  LOGIC,
  REG,
  STORE,
  UNARY,
  castTo,
  checkDType,
  fail,
  literal,
  type Helper,
} from "./wgsl-tables.js";

export {
  WGSL_LOOP_BUDGET,
  WGSL_WORKGROUP_SIZE,
  outputCount,
  treeReduction,
  wgslChunk,
  wgslLaunchPlan,
  wgslLoopTrips,
  wgslParamLayout,
  wgslWorkgroups,
  type WGSLLaunchPlan,
  type WGSLParamLayout,
} from "./wgsl-launch.js";
export { combineToWGSL } from "./wgsl-combine.js";

/**
 * WGSL source for one kernel (the main pass of its launch). The source depends only
 * on the kernel's structure, base shapes and dtypes, so it doubles as the pipeline
 * cache key.
 *
 * @example
 *   const src = kernelToWGSL(kernel); // "struct Params { ... } ... @compute @workgroup_size(64) fn main(...)"
 */
export function kernelToWGSL(kernel: Kernel): string {
  return loopToWGSL(lowerForWGSL(kernel));
}

/** The kernel's workgroup loop form, once its dtypes are ones WGSL holds. */
function lowerForWGSL(kernel: Kernel): LoopProgram {
  kernel.inputs.forEach((inp, i) => checkDType(inp.dtype, `input ${i}`));
  kernel.outputs.forEach((out, i) => checkDType(out.dtype, `output ${i}`));
  kernel.exprs.forEach((e, i) => checkDType(e.dtype, `value %${i} (${e.k})`));
  return lowerKernelWorkgroup(kernel);
}

/**
 * What a bundle ships for a kernel's WGSL (`kernelToWGSL`'s source) and whether that
 * source reads its chunk count (the `chunks` parameter of tree reductions and
 * segmented kernels, see `wgslLaunchPlan`): told from the loop form, not the text.
 */
export function kernelToWGSLShipped(kernel: Kernel): { readonly wgsl: string; readonly chunked: boolean } {
  const p = lowerForWGSL(kernel);
  let chunked = false;
  walkStmts(p.body, (s) => {
    if (s.k === "let" && s.e.k === "param" && s.e.name === "chunks") chunked = true;
  });
  return { wgsl: loopToWGSL(p), chunked };
}

const IDX_WGSL: { readonly [K in Extract<LExpr, { k: "idx" }>["op"]]: (a: string, b: string) => string } = {
  add: (a, b) => `(${a} + ${b})`,
  sub: (a, b) => `(${a} - ${b})`,
  mul: (a, b) => `(${a} * ${b})`,
  div: (a, b) => `(${a} / ${b})`,
  mod: (a, b) => `(${a} % ${b})`,
  min: (a, b) => `min(${a}, ${b})`,
  max: (a, b) => `max(${a}, ${b})`,
};
const ICMP_WGSL: { readonly [K in Extract<LExpr, { k: "icmp" }>["op"]]: string } = {
  lt: "<",
  le: "<=",
  gt: ">",
  ge: ">=",
  eq: "==",
  ne: "!=",
};

/** The WGSL register type of a loop-form type (index values are u32). */
const reg = (t: LType): string => (t === "index" ? "u32" : REG[t]);
/** `t` as a dtype for the cast and op tables: index values are uint32. */
const asDType = (t: LType): DType => (t === "index" ? "uint32" : t);

/** Prints a workgroup loop program as a compute shader. */
export function loopToWGSL(p: LoopProgram): string {
  if (p.workgroupSize === undefined) fail("a sequential loop program cannot be printed as a compute shader");
  const used = new Set<Helper>();
  const use = (h: Helper): void => {
    used.add(h);
  };
  const types: LType[] = new Array<LType>(p.values);
  walkStmts(p.body, (s) => {
    if (s.k === "let") types[s.id] = s.type;
    else if (s.k === "loop") types[s.var] = "index";
  });
  const name: string[] = new Array<string>(p.values);
  const slot = (i: number): string => `P.v[${i >> 2}].${"xyzw"[i & 3]}`;

  const L = new Lines();
  // float16 values (registers of type f16) need WGSL's f16 extension (the device's "shader-f16" feature).
  const f16 =
    [...p.inputs, ...p.outputs, ...p.consts, ...(p.shared ?? []).map((s) => s.dtype)].includes("float16") ||
    types.includes("float16") ||
    p.locals.includes("float16");
  if (f16) L.line("enable f16;");
  L.line(`struct Params { v: array<vec4<u32>, ${Math.max(1, Math.ceil((p.params ?? 1) / 4))}> }`);
  L.line(`@group(0) @binding(0) var<uniform> P: Params;`);
  p.inputs.forEach((d, i) => L.line(`@group(0) @binding(${1 + i}) var<storage, read> in${i}: array<${STORE[d]}>;`));
  p.outputs.forEach((d, j) =>
    L.line(`@group(0) @binding(${1 + p.inputs.length + j}) var<storage, read_write> out${j}: array<${STORE[d]}>;`),
  );
  (p.shared ?? []).forEach((s, i) => L.line(`var<workgroup> w${i}: array<${STORE[s.dtype]}, ${s.length}>;`));

  const unaryCode = (e: Extract<LExpr, { k: "unary" }>, t: LType): string => {
    const x = name[e.x]!;
    const xd = asDType(types[e.x]!);
    if (PREDICATE_UNARY.has(e.op)) return UNARY[e.op](x, xd, use);
    if (e.op === "not" && t === "bool") return `(!${castTo(x, xd, "bool", use)})`;
    if (FLOAT_UNARY.has(e.op) && t !== "float32") fail(`${e.op} must give float32, not ${t}`);
    if (t === "bool") fail(`${e.op} on bool`);
    return UNARY[e.op](castTo(x, xd, asDType(t), use), asDType(t), use);
  };

  const binaryCode = (op: KBinaryOp, a: string, b: string, ad: DType, rd: DType): string => {
    if (isCompareOp(op)) {
      const cmp = COMPARE[op];
      // A float comparison reads its left operand through bw_id: a driver that assumes no NaN turns
      // select(x, y, x < y) into max(x, y) (Mesa does), which drops a NaN that where() must pass on.
      const out =
        ad === "bool" && cmp !== "==" && cmp !== "!="
          ? `(${castTo(a, "bool", "uint32", use)} ${cmp} ${castTo(b, "bool", "uint32", use)})`
          : ad === "float32"
            ? (use("opaque"), `(bw_id(${a}) ${cmp} ${b})`)
            : `(${a} ${cmp} ${b})`;
      return castTo(out, "bool", rd, use);
    }
    if (isLogicalBinaryOp(op)) {
      const rule = LOGIC[op];
      if (rd === "bool") return `(${castTo(a, ad, "bool", use)} ${rule.bool} ${castTo(b, ad, "bool", use)})`;
      if (rd === "float32") fail(`${op} cannot give float32`);
      return `(${castTo(a, ad, rd, use)} ${rule.bits} ${castTo(b, ad, rd, use)})`;
    }
    if (rd === "bool") {
      // Arithmetic on bool 0/1 values: max is or, min is and; the rest has no bool result.
      if (op === "maximum") return `(${a} || ${b})`;
      if (op === "minimum" || op === "mul") return `(${a} && ${b})`;
      fail(`${op} on bool`);
    }
    return ARITH[op](castTo(a, ad, rd, use), castTo(b, ad, rd, use), rd, use);
  };

  const exprCode = (t: LType, e: LExpr): string => {
    const n = (v: number): string => name[v]!;
    switch (e.k) {
      case "size":
        return slot(1 + e.i);
      case "stride":
        return slot(1 + p.sizes + e.i);
      case "const": {
        // A launch argument in the uniform (its bits; see `WGSLParamLayout.consts`), not a literal.
        const bits = slot(1 + p.sizes + p.strides + e.slot);
        if (t === "float32") return `bitcast<f32>(${bits})`;
        if (t === "float16") return `f16(bitcast<f32>(${bits}))`;
        if (t === "int32" || (t !== "index" && isNarrowInt(t))) return `bitcast<i32>(${bits})`;
        if (t === "bool") return `(${bits} != 0u)`;
        return bits;
      }
      case "param":
        return slot(e.i);
      case "builtin":
        return e.name === "lane" ? "lid" : "(wid.y * nwg.x + wid.x)";
      case "lit":
        if (t === "index") return `${e.v >>> 0}u`;
        return literal(e.v, t, use);
      case "load": {
        const v = `in${e.buf}[${n(e.at)}]`;
        const d = p.inputs[e.buf];
        return d === "bool" ? `(${v} != 0u)` : d === "float16" ? `f16(${v})` : v;
      }
      case "oload": {
        const v = `out${e.buf}[${n(e.at)}]`;
        return p.outputs[e.buf] === "bool" ? `(${v} != 0u)` : v;
      }
      case "sload": {
        const v = `w${e.buf}[${n(e.at)}]`;
        return p.shared![e.buf]!.dtype === "bool" ? `(${v} != 0u)` : v;
      }
      case "get":
        return `l${e.local}`;
      case "unary":
        return unaryCode(e, t);
      case "binary":
        return binaryCode(e.op, n(e.a), n(e.b), asDType(types[e.a]!), asDType(t));
      case "where":
        return `select(${n(e.b)}, ${n(e.a)}, ${n(e.c)})`;
      case "cast":
        return castTo(n(e.x), asDType(types[e.x]!), asDType(t), use);
      case "bits":
        return `bitcast<${reg(t)}>(${n(e.x)})`;
      case "idx": {
        // A divisor 0 comes from a size-0 dim: such an index only runs for an element of that
        // dim, of which there is none, but WGSL refuses a constant `% 0u` or `/ 0u`.
        const b = (e.op === "div" || e.op === "mod") && n(e.b) === "0u" ? "1u" : n(e.b);
        return IDX_WGSL[e.op](n(e.a), b);
      }
      case "icmp":
        return `(${n(e.a)} ${ICMP_WGSL[e.op]} ${n(e.b)})`;
    }
  };

  const toStore = (v: number, d: DType): string =>
    d === "bool" ? castTo(name[v]!, "bool", "uint32", use) : d === "float16" ? `f32(${name[v]!})` : name[v]!;

  const B = new Lines();
  B.line(`@compute @workgroup_size(${p.workgroupSize})`);
  B.open(
    `fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {`,
  );
  p.locals.forEach((t, i) => B.line(`var l${i}: ${reg(t)};`));
  const block = (stmts: readonly LStmt[]): void => {
    for (const s of stmts) {
      switch (s.k) {
        case "let": {
          const code = exprCode(s.type, s.e);
          // Literals and builtins are spelled where they are used.
          if (s.e.k === "lit" || s.e.k === "builtin") {
            name[s.id] = code;
            break;
          }
          // The chunk count keeps its name: a loader tells the chunked kernels of format-2 bundles
          // (which have no `chunked` flag) by "let chunks = ".
          const v = s.e.k === "param" && s.e.name === "chunks" ? "chunks" : `v${s.id}`;
          name[s.id] = v;
          B.line(v === "chunks" ? `let chunks = ${code};` : `let ${v}: ${reg(s.type)} = ${code};`);
          break;
        }
        case "set":
          B.line(`l${s.local} = ${name[s.value]};`);
          break;
        case "store":
          B.line(`out${s.buf}[${name[s.at]}] = ${toStore(s.value, p.outputs[s.buf]!)};`);
          break;
        case "sstore":
          B.line(`w${s.buf}[${name[s.at]}] = ${toStore(s.value, p.shared![s.buf]!.dtype)};`);
          break;
        case "loop": {
          const v = `v${s.var}`;
          name[s.var] = v;
          const step = s.step === undefined ? "1u" : name[s.step]!;
          B.open(`for (var ${v}: u32 = ${name[s.from]}; ${v} < ${name[s.to]}; ${v} = ${v} + ${step}) {`);
          block(s.body);
          B.close();
          break;
        }
        case "if":
          B.branch(`if (${name[s.cond]}) {`, () => block(s.then), s.else.length > 0 ? () => block(s.else) : undefined);
          break;
        case "barrier":
          B.line("workgroupBarrier();");
          break;
        case "break":
        case "return":
          B.line(`${s.k};`);
          break;
      }
    }
  };
  block(p.body);
  B.close();
  return L.toString() + "\n" + helperCode(used) + B.toString() + "\n";
}

/** The helpers a kernel used, with their dependencies first, in a stable order. */
export function helperCode(used: ReadonlySet<Helper>): string {
  const order: Helper[] = [];
  const visit = (h: Helper): void => {
    if (order.includes(h)) return;
    for (const d of HELPERS[h].deps) visit(d as Helper);
    order.push(h);
  };
  for (const h of (Object.keys(HELPERS) as Helper[]).filter((k) => used.has(k))) visit(h);
  return order.length === 0 ? "" : order.map((h) => HELPERS[h].code).join("\n") + "\n";
}
