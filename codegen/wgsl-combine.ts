/**
 * Chunked reductions in WGSL: the shared-memory tree that folds a workgroup's
 * per-thread accumulators, the partials a chunk of a long reduction writes, and
 * the combine kernel that folds partials (one pass per `WGSL_COMBINE_CHUNK`
 * factor) into the final outputs.
 *
 * A reduction whose space is too long for one bounded loop runs as a first pass
 * over `chunks` chunks per output element, each writing a partial at
 * `element * chunks + chunk`, then combine passes. Partials keep what the final
 * value needs: sum/prod/min/max/all/any their accumulator (in the output's storage
 * type), mean its sum (divided once, at the very end, by the whole count),
 * argmin/argmax the pair (best value as bits, position) at `2k, 2k + 1`. Combining
 * pairs keeps the sequential rule: a strictly better value wins, an equal one only
 * from an earlier position; the first NaN wins over any number.
 */
import type { DType } from "../ir/dtype.js";
import { numel, type Kernel, type KReduceOp } from "../ir/kernel.js";
import { Lines } from "./lines.js";
import { HELPERS, REDUCE, REG, STORE, castTo, extreme, sumResult, type Helper } from "./wgsl-tables.js";
import { WGSL_COMBINE_CHUNK, WGSL_ROW_COMBINE_CHUNK, WGSL_WORKGROUP_SIZE, wgslChunk } from "./wgsl-launch.js";

/** What the tree keeps per output: its op, the compare dtype (argmin/argmax) or the accumulator dtype. */
export interface TreeOut {
  readonly op: KReduceOp;
  /** argmin/argmax: dtype the values compare in (bool as uint32). */
  readonly cd: DType;
  /** Other ops: the accumulator dtype (bool for all/any, else the output dtype). */
  readonly ad: DType;
}

export const isArg = (op: KReduceOp | null): boolean => op === "argmin" || op === "argmax";

/** The tree description of each output of a reducing kernel. */
export function treeOuts(kernel: Kernel): TreeOut[] {
  return kernel.outputs.map((out) => {
    const vd = kernel.exprs[out.value]!.dtype;
    const op = out.reduce!;
    return { op, cd: vd === "bool" ? "uint32" : vd, ad: op === "all" || op === "any" ? "bool" : out.dtype };
  });
}

/** Storage element type of output j's partials (pairs of i32 for argmin/argmax). */
function partialStore(o: TreeOut): string {
  return isArg(o.op) ? "i32" : STORE[o.ad];
}

/** Elements of the scratch buffer holding output j's partials for `count` elements × `chunks`. */
export function partialLength(o: TreeOut, count: number, chunks: number): number {
  return count * chunks * (isArg(o.op) ? 2 : 1);
}

/** Workgroup arrays of the tree: accumulators (and best values of argmin/argmax). */
export function sharedDecls(L: Lines, outs: readonly TreeOut[]): void {
  outs.forEach((o, j) => {
    L.line(`var<workgroup> wacc${j}: array<${isArg(o.op) ? "i32" : STORE[o.ad]}, ${WGSL_WORKGROUP_SIZE}>;`);
    if (isArg(o.op)) L.line(`var<workgroup> wbest${j}: array<${STORE[o.cd]}, ${WGSL_WORKGROUP_SIZE}>;`);
  });
}

/** Per-thread accumulators `best<j>`/`acc<j>` at their identities. */
export function initAccumulators(B: Lines, outs: readonly TreeOut[], use: (h: Helper) => void): void {
  outs.forEach((o, j) => {
    if (isArg(o.op)) {
      B.line(`var best${j}: ${REG[o.cd]} = ${extreme(o.cd, o.op === "argmin", use)};`);
      B.line(`var acc${j}: i32 = 0i;`);
    } else {
      B.line(`var acc${j}: ${REG[o.ad]} = ${REDUCE[o.op as Exclude<KReduceOp, "argmin" | "argmax">].init(o.ad, use)};`);
    }
  });
}

const toShared = (v: string, d: DType, use: (h: Helper) => void): string =>
  d === "bool" ? castTo(v, "bool", "uint32", use) : v;
export const fromShared = (v: string, d: DType): string => (d === "bool" ? `(${v} != 0u)` : v);

/**
 * Whether candidate (qb, qi) replaces (pb, pi) of an argmin/argmax: strictly better,
 * or equal and earlier; for floats the earliest NaN beats everything.
 */
export function pairBetter(
  o: TreeOut,
  qb: string,
  qi: string,
  pb: string,
  pi: string,
  use: (h: Helper) => void,
): string {
  const better = o.op === "argmax" ? ">" : "<";
  const cond = `(${qb} ${better} ${pb} || (${qb} == ${pb} && ${qi} < ${pi}))`;
  if (o.cd !== "float32") return cond;
  use("isnan");
  return `select(!bw_isnan(${pb}) && ${cond}, !bw_isnan(${pb}) || ${qi} < ${pi}, bw_isnan(${qb}))`;
}

/**
 * Folds the per-thread accumulators of the workgroup in shared memory: afterwards
 * `wacc<j>[0]` (and `wbest<j>[0]`) hold the workgroup's result. Every thread must run it.
 */
export function emitSharedTree(B: Lines, outs: readonly TreeOut[], use: (h: Helper) => void): void {
  outs.forEach((o, j) => {
    if (isArg(o.op)) {
      B.line(`wbest${j}[lid] = best${j};`);
      B.line(`wacc${j}[lid] = acc${j};`);
    } else {
      B.line(`wacc${j}[lid] = ${toShared(`acc${j}`, o.ad, use)};`);
    }
  });
  B.line("workgroupBarrier();");
  B.open(`for (var s = ${WGSL_WORKGROUP_SIZE >> 1}u; s > 0u; s = s >> 1u) {`);
  B.open("if (lid < s) {");
  outs.forEach((o, j) => {
    if (isArg(o.op)) {
      B.line(`let pb${j} = wbest${j}[lid];`).line(`let pi${j} = wacc${j}[lid];`);
      B.line(`let qb${j} = wbest${j}[lid + s];`).line(`let qi${j} = wacc${j}[lid + s];`);
      // Take the upper half's candidate when it is better, or as good and earlier.
      B.open(`if (${pairBetter(o, `qb${j}`, `qi${j}`, `pb${j}`, `pi${j}`, use)}) {`)
        .line(`wbest${j}[lid] = qb${j};`)
        .line(`wacc${j}[lid] = qi${j};`)
        .close();
    } else {
      const step = REDUCE[o.op as Exclude<KReduceOp, "argmin" | "argmax">].step(
        fromShared(`wacc${j}[lid]`, o.ad),
        fromShared(`wacc${j}[lid + s]`, o.ad),
        o.ad,
        use,
      );
      B.line(`wacc${j}[lid] = ${toShared(`(${step})`, o.ad, use)};`);
    }
  });
  B.close();
  B.line("workgroupBarrier();");
  B.close();
}

/** Writes the workgroup's result (after `emitSharedTree`) as partial `k` of each output. */
export function emitPartialStore(B: Lines, outs: readonly TreeOut[], k: string): void {
  B.line(`let pk = ${k};`);
  outs.forEach((o, j) => {
    if (isArg(o.op)) {
      B.line(`out${j}[2u * pk] = bitcast<i32>(wbest${j}[0]);`);
      B.line(`out${j}[2u * pk + 1u] = wacc${j}[0];`);
    } else {
      B.line(`out${j}[pk] = wacc${j}[0];`);
    }
  });
}

/**
 * Whether the final combine kernel binds the offsets (after the partials): a segmented
 * mean divides by its row's length, a segmented float32 sum of an empty row is +0 (its
 * partials hold the accumulator's start, -0).
 */
export function combineReadsOffsets(kernel: Kernel): boolean {
  return (
    kernel.segment !== undefined &&
    kernel.outputs.some((o) => o.reduce === "mean" || (o.reduce === "sum" && o.dtype === "float32"))
  );
}

/**
 * The combine kernel of a reducing kernel: folds `P.v.y` partials per output element
 * into `P.v.z` partials (each workgroup up to `WGSL_COMBINE_CHUNK` of them), or, when
 * `final`, into the outputs (mean divides by `P.v.w`, the whole reduced count, or for
 * a segmented kernel by its row's length read from the offsets).
 *
 * Bindings: 0 = uniform (x: output elements, y: partials in, z: chunks out, w: count),
 * then one partials buffer per output, the offsets (final segmented kernels), then the
 * outputs (partials again unless `final`).
 */
export function combineToWGSL(kernel: Kernel, final: boolean): string {
  const used = new Set<Helper>();
  const use = (h: Helper): void => {
    used.add(h);
  };
  const outs = treeOuts(kernel);
  const seg = kernel.segment;
  const W = WGSL_WORKGROUP_SIZE;
  const L = new Lines();
  L.line("struct Params { v: vec4<u32> }");
  L.line("@group(0) @binding(0) var<uniform> P: Params;");
  outs.forEach((o, j) => L.line(`@group(0) @binding(${1 + j}) var<storage, read> p${j}: array<${partialStore(o)}>;`));
  let nIn = outs.length;
  const needOffsets = final && combineReadsOffsets(kernel);
  if (needOffsets)
    L.line(
      `@group(0) @binding(${1 + nIn++}) var<storage, read> offs: array<${STORE[kernel.inputs[seg!.offsets]!.dtype]}>;`,
    );
  outs.forEach((o, j) => {
    const t = final ? STORE[kernel.outputs[j]!.dtype] : partialStore(o);
    L.line(`@group(0) @binding(${1 + nIn + j}) var<storage, read_write> out${j}: array<${t}>;`);
  });
  sharedDecls(L, outs);

  const B = new Lines();
  B.line(`@compute @workgroup_size(${W})`);
  B.open(
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
  );
  B.line("let gw = wid.y * nwg.x + wid.x;");
  B.line("let gi = gw / P.v.z;").line("let g = gw % P.v.z;");
  B.line("if (gi >= P.v.x) { return; }");
  initAccumulators(B, outs, use);
  B.line(`let r0 = g * ${WGSL_COMBINE_CHUNK}u;`).line(`let r1 = min(P.v.y, r0 + ${WGSL_COMBINE_CHUNK}u);`);
  B.open(`for (var ri = r0 + lid; ri < r1; ri = ri + ${W}u) {`);
  B.line("let k = gi * P.v.y + ri;");
  outs.forEach((o, j) => {
    if (isArg(o.op)) {
      B.line(`let qb${j} = bitcast<${REG[o.cd]}>(p${j}[2u * k]);`).line(`let qi${j} = p${j}[2u * k + 1u];`);
      B.open(`if (${pairBetter(o, `qb${j}`, `qi${j}`, `best${j}`, `acc${j}`, use)}) {`)
        .line(`best${j} = qb${j};`)
        .line(`acc${j} = qi${j};`)
        .close();
    } else {
      B.line(
        `acc${j} = ${REDUCE[o.op as Exclude<KReduceOp, "argmin" | "argmax">].step(`acc${j}`, fromShared(`p${j}[k]`, o.ad), o.ad, use)};`,
      );
    }
  });
  B.close();
  emitSharedTree(B, outs, use);
  B.open("if (lid == 0u) {");
  if (!final) {
    emitPartialStore(B, outs, "gi * P.v.z + g");
  } else {
    if (needOffsets) {
      B.line(`let b0 = gi / ${Math.max(1, numel(kernel.baseShape))}u;`);
      B.line("let rows = u32(offs[b0 + 1u]) - u32(offs[b0]);");
    }
    outs.forEach((o, j) => {
      const out = kernel.outputs[j]!;
      if (isArg(o.op)) {
        B.line(`out${j}[gi] = wacc${j}[0];`);
        return;
      }
      let v = fromShared(`wacc${j}[0]`, o.ad);
      if (o.op === "mean") {
        const n = seg !== undefined ? "f32(rows)" : "f32(P.v.w)";
        v = o.ad === "float32" ? `${v} / ${n}` : `${v} / ${castTo(n, "float32", o.ad, use)}`;
      }
      // An empty sum is +0. Unsegmented, a reduction in several chunks is never empty.
      if (o.op === "sum" && seg !== undefined) v = sumResult(v, o.ad, "rows == 0u", use);
      v = castTo(v, o.ad, out.dtype, use);
      B.line(`out${j}[gi] = ${out.dtype === "bool" ? castTo(v, "bool", "uint32", use) : v};`);
    });
  }
  B.close();
  B.close();
  return L.toString() + "\n" + helperCode(used) + B.toString() + "\n";
}

/**
 * The row-combine kernel of a segmented reduce over packed values: one invocation per
 * row, base point and part. Short rows (at most C positions, finished by the rows pass)
 * return at once, so it costs little over many rows. A long row's chunk partials from
 * the windows pass sit in slot 1 of window lo / C (chunk 0) and slot 0 of window
 * lo / C + k (chunk k >= 1). Pass 0 (`P.v.z` = 0) folds up to `WGSL_ROW_COMBINE_CHUNK`
 * of them per part: the output when there is one part (`P.v.y`), else the part's
 * partial; pass 1 folds the parts' partials into the output (mean divides by the row's
 * length).
 *
 * Bindings: 0 = uniform (x: output elements, y: parts per row, z: pass), 1 = partials
 * (the windows' or the parts'), 2 = the offsets, 3 = the output (or the parts' partials).
 */
export function rowCombineToWGSL(kernel: Kernel): string {
  const used = new Set<Helper>();
  const use = (h: Helper): void => {
    used.add(h);
  };
  const o = treeOuts(kernel)[0]!;
  const out = kernel.outputs[0]!;
  const seg = kernel.segment!;
  const C = wgslChunk(kernel);
  const S = Math.max(1, numel(kernel.baseShape));
  const L = new Lines();
  L.line("struct Params { v: vec4<u32> }");
  L.line("@group(0) @binding(0) var<uniform> P: Params;");
  L.line(`@group(0) @binding(1) var<storage, read> p0: array<${partialStore(o)}>;`);
  L.line(`@group(0) @binding(2) var<storage, read> offs: array<${STORE[kernel.inputs[seg.offsets]!.dtype]}>;`);
  L.line(`@group(0) @binding(3) var<storage, read_write> out0: array<${partialStore(o)}>;`);
  const B = new Lines();
  B.line(`@compute @workgroup_size(${WGSL_WORKGROUP_SIZE})`);
  B.open(
    "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {",
  );
  B.line(`let gw = (wid.y * nwg.x + wid.x) * ${WGSL_WORKGROUP_SIZE}u + lid;`);
  B.line("let parts = P.v.y;").line("let pass1 = P.v.z == 1u;");
  B.line("let gi = select(gw / parts, gw, pass1);").line("let g = select(gw % parts, 0u, pass1);");
  B.line("if (gi >= P.v.x) { return; }");
  B.line(`let b0 = gi / ${S}u;`).line(`let p = gi % ${S}u;`);
  B.line("let lo = u32(offs[b0]);").line("let n = u32(offs[b0 + 1u]) - lo;");
  B.line(`if (n <= ${C}u) { return; }`);
  B.line(`let nk = (n + ${C - 1}u) / ${C}u;`).line(`let w0 = lo / ${C}u;`);
  initAccumulators(B, [o], use);
  const fold = (q: string): void => {
    if (isArg(o.op)) {
      B.line(`let qb = bitcast<${REG[o.cd]}>(p0[2u * ${q}]);`).line(`let qi = p0[2u * ${q} + 1u];`);
      B.open(`if (${pairBetter(o, "qb", "qi", "best0", "acc0", use)}) {`)
        .line("best0 = qb;")
        .line("acc0 = qi;")
        .close();
    } else {
      B.line(
        `acc0 = ${REDUCE[o.op as Exclude<KReduceOp, "argmin" | "argmax">].step("acc0", fromShared(`p0[${q}]`, o.ad), o.ad, use)};`,
      );
    }
  };
  B.open("if (pass1) {");
  B.open("for (var j = 0u; j < parts; j = j + 1u) {");
  fold("(gi * parts + j)");
  B.close();
  B.close().open("else {");
  B.line(`let r1 = min(nk, (g + 1u) * ${WGSL_ROW_COMBINE_CHUNK}u);`);
  B.open(`for (var k = g * ${WGSL_ROW_COMBINE_CHUNK}u; k < r1; k = k + 1u) {`);
  fold(`(select(2u * (w0 + k), 2u * w0 + 1u, k == 0u) * ${S}u + p)`);
  B.close();
  B.close();
  B.open("if (!pass1 && parts > 1u) {");
  B.line("let pk = gi * parts + g;");
  if (isArg(o.op)) B.line("out0[2u * pk] = bitcast<i32>(best0);").line("out0[2u * pk + 1u] = acc0;");
  else B.line(`out0[pk] = ${o.ad === "bool" ? castTo("acc0", "bool", "uint32", use) : "acc0"};`);
  B.line("return;");
  B.close();
  if (isArg(o.op)) {
    B.line("out0[gi] = acc0;");
  } else {
    let v = "acc0";
    if (o.op === "mean") v = o.ad === "float32" ? `${v} / f32(n)` : `${v} / ${castTo("f32(n)", "float32", o.ad, use)}`;
    v = castTo(v, o.ad, out.dtype, use);
    B.line(`out0[gi] = ${out.dtype === "bool" ? castTo(v, "bool", "uint32", use) : v};`);
  }
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
