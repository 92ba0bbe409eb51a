/**
 * Kernel IR → WGSL (docs/ARCHITECTURE.md, Kernels, WGSL half).
 *
 * One invocation per output element (a point of the non-reduced space); reduced
 * axes become loops inside the invocation. Kernels that reduce batch axes (run-time
 * sizes, possibly huge) instead give each output element a workgroup whose threads
 * share the reduced elements and combine them in shared memory (`treeReduction`); so do
 * base reductions too long for one loop. No invocation loops more than a bounded number
 * of times (`WGSL_LOOP_BUDGET`): long reductions and rows are cut into chunks whose
 * partials combine passes fold (codegen/wgsl-combine.ts). Everything that depends on a batch
 * size travels in the uniform `P` (see `wgslParamLayout`), never in the source,
 * so one shader module serves every batch size. The values of the kernel's
 * constants travel there too (their bits), so one module serves every constant
 * value and NaN/±Inf/-0 need no literal. Base sizes and strides are folded in.
 *
 * Bindings (group 0): 0 = uniform params, 1..n = inputs (read-only storage),
 * n+1.. = outputs (read-write storage). bool is stored as one u32 per element.
 *
 * Semantics follow the JS backend (ir/kernel.ts): floor-mod, truncating int
 * division (x / 0 = 0 and x % 0 = 0 for ints, as `(a / b) | 0` gives in JS),
 * wrapping int32/uint32 arithmetic, half-to-even `round`, NaN-propagating
 * `maximum/minimum`, float→int casts that truncate then wrap like `x | 0`.
 * NaN/Inf tests go through the bit pattern because WGSL lets compilers assume
 * finite floats in comparisons.
 */
import type { DType } from "../ir/dtype.js";
import { FLOAT_UNARY, isCompareOp, isLogicalBinaryOp, PREDICATE_UNARY } from "../ir/elementwise.js";
import { constSlots, contiguousStrides, ix, numel } from "../ir/kernel.js";
import type { IndexExpr, KExpr, Kernel, KBinaryOp, KReduceOp } from "../ir/kernel.js";
import { Lines } from "./lines.js";
import {
  ARITH,
  COMPARE,
  LOGIC,
  REDUCE,
  REG,
  STORE,
  UNARY,
  castTo,
  checkDType,
  extreme,
  fail,
  literal,
  sumResult,
  type Helper,
} from "./wgsl-tables.js";
import { WGSL_WORKGROUP_SIZE, segmentRowBound, treeReduction, wgslChunk, wgslParamLayout } from "./wgsl-launch.js";
import {
  emitPartialStore,
  emitSharedTree,
  fromShared,
  helperCode,
  initAccumulators,
  isArg as isArgOp,
  sharedDecls,
  treeOuts,
} from "./wgsl-combine.js";

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
 * WGSL source for one kernel. The source depends only on the kernel's structure,
 * base shapes and dtypes, so it doubles as the pipeline cache key.
 *
 * @example
 *   const src = kernelToWGSL(kernel); // "struct Params { ... } ... @compute @workgroup_size(64) fn main(...)"
 */
export function kernelToWGSL(kernel: Kernel): string {
  const { batchRank, baseShape, exprs } = kernel;
  kernel.inputs.forEach((inp, i) => checkDType(inp.dtype, `input ${i}`));
  kernel.outputs.forEach((out, i) => checkDType(out.dtype, `output ${i}`));
  exprs.forEach((e, i) => checkDType(e.dtype, `value %${i} (${e.k})`));

  const used = new Set<Helper>();
  const use = (h: Helper): void => {
    used.add(h);
  };
  /**
   * Whether `cv` replaces the running `best` of an argmin/argmax: strictly better keeps the
   * first occurrence on ties; a NaN wins once and then sticks (min/max propagate NaN).
   */
  const argBetter = (op: KReduceOp, cv: string, cd: DType, best: string): string => {
    const cond = `${cv} ${op === "argmax" ? ">" : "<"} ${best}`;
    if (cd !== "float32") return cond;
    use("isnan");
    return `(${cond} || (bw_isnan(${cv}) && !bw_isnan(${best})))`;
  };
  const layout = wgslParamLayout(kernel);
  const constSlot = constSlots(kernel);
  const param = (slot: number): string => `P.v[${slot >> 2}].${"xyzw"[slot & 3]}`;

  const reducedBatch = new Set(kernel.reduce?.batchAxes ?? []);
  const reducedBase = new Set(kernel.reduce?.baseAxes ?? []);
  for (const a of reducedBatch) if (a < 0 || a >= batchRank) fail(`reduced batch axis ${a} out of range`);
  for (const a of reducedBase) if (a < 0 || a >= baseShape.length) fail(`reduced base axis ${a} out of range`);
  for (const out of kernel.outputs) {
    if ((kernel.reduce === null) !== (out.reduce === null)) {
      fail("an output's reduce op must be set exactly when the kernel reduces");
    }
    if (
      (out.reduce === "argmin" || out.reduce === "argmax") &&
      kernel.segment === undefined &&
      reducedBatch.size + reducedBase.size !== 1
    ) {
      fail(`${out.reduce} must reduce exactly one axis, got ${reducedBatch.size + reducedBase.size}`);
    }
  }

  // ---- bindings ----
  const L = new Lines();
  L.line(`struct Params { v: array<vec4<u32>, ${Math.max(1, Math.ceil(layout.length / 4))}> }`);
  L.line(`@group(0) @binding(0) var<uniform> P: Params;`);
  kernel.inputs.forEach((inp, i) => {
    L.line(`@group(0) @binding(${1 + i}) var<storage, read> in${i}: array<${STORE[inp.dtype]}>;`);
  });
  kernel.outputs.forEach((out, j) => {
    L.line(
      `@group(0) @binding(${1 + kernel.inputs.length + j}) var<storage, read_write> out${j}: array<${STORE[out.dtype]}>;`,
    );
  });
  const tree = treeReduction(kernel);
  // Per-output shared accumulators (bool kept as u32); argmin/argmax also share their best value.
  if (tree) sharedDecls(L, treeOuts(kernel));
  const header = L.toString() + "\n";

  // ---- body ----
  const B = new Lines();
  B.line(`@compute @workgroup_size(${WGSL_WORKGROUP_SIZE})`);
  B.open(
    `fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {`,
  );
  // Grids over 65,535 workgroups use y as well; the linear index spans both.
  // A tree reduction gives each output element and chunk a whole workgroup (gi is uniform in it).
  // Tree reductions and segmented kernels split their long loop into P.chunks chunks
  // (chunk g of element gi), so that no invocation loops more than a bounded number of times.
  // (A map runs one invocation per packed position; a reduce over packed values reads
  // `chunks` as its pass, see `WGSLLaunchPlan.windows`.)
  const seg0 = kernel.segment;
  const unchunkedSegment =
    seg0 !== undefined && (seg0.mode === "map" || (seg0.mode === "reduce" && segmentRowBound(kernel) === "packed"));
  const gw = tree ? `wid.y * nwg.x + wid.x` : `(wid.y * nwg.x + wid.x) * ${WGSL_WORKGROUP_SIZE}u + lid`;
  if (tree || seg0 !== undefined) B.line(`let chunks = ${param(layout.chunks)};`);
  if ((tree || seg0 !== undefined) && !unchunkedSegment) {
    B.line(`let gw = ${gw};`);
    B.line(`let gi = gw / chunks;`).line(`let g = gw % chunks;`);
  } else {
    B.line(`let gi = ${gw};`);
  }
  B.line(`if (gi >= ${param(layout.count)}) { return; }`);

  // Decompose gi over the kept axes: kept batch axes (outer), then kept base axes.
  const keptBase = baseShape.map((_, a) => a).filter((a) => !reducedBase.has(a));
  const keptBatch = Array.from({ length: batchRank }, (_, a) => a).filter((a) => !reducedBatch.has(a));
  const kept: { name: string; size: string }[] = [
    // Segmented kernels: the first index is the row (or packed position, or window) `bq`; the row b0 follows from it.
    ...keptBatch.map((a) => ({
      name: kernel.segment !== undefined ? "bq" : `b${a}`,
      size: param(layout.batchSizes + a),
    })),
    // An empty base axis means no output elements (the kernel returns above); 1 keeps `% 0u` out of the source.
    ...keptBase.map((a) => ({ name: `x${a}`, size: `${Math.max(1, baseShape[a]!)}u` })),
  ];
  if (kept.length > 0) {
    B.line(`var r = gi;`);
    for (let i = kept.length - 1; i >= 0; i--) {
      const { name, size } = kept[i]!;
      if (i === 0) B.line(`let ${name} = r;`);
      else B.line(`let ${name} = r % ${size};`).line(`r = r / ${size};`);
    }
  }

  // Input offsets over batch dims: input dim j aligns with space batch axis batchRank - rank + j.
  const batchOffset = (i: number): string => {
    const rank = kernel.inputs[i]!.batchRank;
    // Segmented kernels: packed inputs are read at the segment position t, the others by row b0.
    if (kernel.segment !== undefined && rank === 1)
      return `${kernel.inputs[i]!.packed ? "t" : "b0"} * ${param(layout.inputStrides[i]!)}`;
    // A per-row (B, 1; base) input of a pad kernel: row b0 (its second dim is broadcast).
    if (kernel.segment !== undefined && rank === 2 && !kernel.inputs[i]!.padded)
      return `b0 * ${param(layout.inputStrides[i]!)}`;
    // A right-padded (B, M; base) input: row b0, position t - lo.
    if (kernel.segment !== undefined && kernel.inputs[i]!.padded) {
      return `b0 * ${param(layout.inputStrides[i]!)} + (t - lo) * ${param(layout.inputStrides[i]! + 1)}`;
    }
    if (rank > batchRank) fail(`input ${i} has batch rank ${rank} > kernel batch rank ${batchRank}`);
    const terms: string[] = [];
    for (let j = 0; j < rank; j++) terms.push(`b${batchRank - rank + j} * ${param(layout.inputStrides[i]! + j)}`);
    return terms.length === 0 ? "0u" : terms.join(" + ");
  };
  const loadsInput = new Set(exprs.flatMap((e) => (e.k === "load" ? [e.input] : [])));

  const emitBody = (): void => {
    for (const i of [...loadsInput].sort((x, y) => x - y)) B.line(`let o${i} = ${batchOffset(i)};`);
    exprs.forEach((e, n) => B.line(`let v${n}: ${REG[e.dtype]} = ${exprCode(e, n)};`));
  };

  const exprCode = (e: KExpr, n: number): string => {
    const ref = (m: number): string => {
      if (m < 0 || m >= n) fail(`value %${n} refers to %${m}, which is not before it`);
      return `v${m}`;
    };
    const dtypeOf = (m: number): DType => exprs[m]!.dtype;
    switch (e.k) {
      case "load": {
        const inp = kernel.inputs[e.input];
        if (!inp) fail(`value %${n} loads input ${e.input}, which does not exist`);
        if (e.index.length !== inp.baseShape.length) {
          fail(
            `value %${n} indexes input ${e.input} (base rank ${inp.baseShape.length}) with ${e.index.length} indices`,
          );
        }
        const strides = contiguousStrides(inp.baseShape);
        let flat: IndexExpr = ix.c(0);
        e.index.forEach((ie, d) => {
          flat = ix.add(flat, ix.mul(ie, ix.c(strides[d]!)));
        });
        const idx = `o${e.input} + ${indexCode(flat, baseShape.length)}`;
        const plain = `in${e.input}[${idx}]`;
        // Past a padded input's length M the value is 0 (m<i> is set before the segment loop).
        // A float 0 as bits the compiler cannot see (HELPERS.opaque: a known 0.0 lets it fold products with it).
        const zero = (): string =>
          inp.dtype === "float32" ? (use("opaque"), "bw_k(0x00000000u)") : inp.dtype === "int32" ? "0i" : "0u";
        const raw = inp.padded ? `select(${zero()}, ${plain}, (t - lo) < m${e.input})` : plain;
        const loaded = inp.dtype === "bool" ? `(${raw} != 0u)` : raw;
        return castTo(loaded, inp.dtype, e.dtype, use);
      }
      case "const": {
        // A launch argument in the uniform (its bits; see `WGSLParamLayout.consts`), not a literal.
        const bits = param(layout.consts + constSlot[n]!);
        if (e.dtype === "float32") return `bitcast<f32>(${bits})`;
        if (e.dtype === "int32") return `bitcast<i32>(${bits})`;
        if (e.dtype === "bool") return `(${bits} != 0u)`;
        return bits;
      }
      case "cast":
        return castTo(ref(e.x), dtypeOf(e.x), e.dtype, use);
      case "combine": {
        // Each operand is first brought to the result dtype (bool sums count in i32).
        const xs = e.xs.map((m) =>
          castTo(ref(m), dtypeOf(m), e.op === "all" || e.op === "any" ? "bool" : e.dtype, use),
        );
        // Float terms after the first go through bw_id, as `add` does: a driver that reassociates
        // turns a·b + a·c into a·(b + c) (Mesa does), which is -0 where the sum is +0 ((-0)(-0) + 0.2·(-0)).
        const terms = (): string =>
          (e.dtype === "float32" ? (use("opaque"), xs.map((x, i) => (i === 0 ? x : `bw_id(${x})`))) : xs).join(" + ");
        switch (e.op) {
          case "sum":
            return `(${terms()})`;
          case "mean":
            return `((${terms()}) / ${xs.length}.0)`;
          case "prod":
            return `(${xs.join(" * ")})`;
          case "min":
          case "max": {
            const helper = e.op === "min" ? "minimum" : "maximum";
            return xs.slice(1).reduce((acc, x) => ARITH[helper](acc, x, e.dtype, use), xs[0]!);
          }
          case "all":
            return `(${xs.join(" && ")})`;
          case "any":
            return `(${xs.join(" || ")})`;
          default:
            fail(`value %${n}: ${e.op} cannot be inlined`);
        }
      }
      case "inside":
        if (kernel.segment?.mode !== "pad") fail(`value %${n}: inside outside a pad kernel`);
        return "inside";
      case "select": {
        const a = castTo(ref(e.a), dtypeOf(e.a), e.dtype, use);
        const b = castTo(ref(e.b), dtypeOf(e.b), e.dtype, use);
        return `select(${b}, ${a}, ${indexCode(e.index, baseShape.length)} < ${e.bound}u)`;
      }
      case "where": {
        const c = castTo(ref(e.c), dtypeOf(e.c), "bool", use);
        const a = castTo(ref(e.a), dtypeOf(e.a), e.dtype, use);
        const b = castTo(ref(e.b), dtypeOf(e.b), e.dtype, use);
        return `select(${b}, ${a}, ${c})`;
      }
      case "unary": {
        const xd = dtypeOf(e.x);
        if (PREDICATE_UNARY.has(e.op)) return UNARY[e.op](ref(e.x), xd, use);
        if (e.op === "not" && e.dtype === "bool") return `(!${castTo(ref(e.x), xd, "bool", use)})`;
        if (FLOAT_UNARY.has(e.op) && e.dtype !== "float32") fail(`${e.op} must give float32, not ${e.dtype}`);
        if (e.dtype === "bool" && e.op !== "not") fail(`${e.op} on bool`);
        return UNARY[e.op](castTo(ref(e.x), xd, e.dtype, use), e.dtype, use);
      }
      case "binary":
        return binaryCode(e.op, ref(e.a), ref(e.b), dtypeOf(e.a), dtypeOf(e.b), e.dtype, n);
    }
  };

  const binaryCode = (op: KBinaryOp, a: string, b: string, ad: DType, bd: DType, rd: DType, n: number): string => {
    if (isCompareOp(op)) {
      const cmp = COMPARE[op];
      if (ad !== bd) fail(`value %${n}: ${op} operands differ in dtype (${ad} vs ${bd})`);
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
      if (rd === "bool") return `(${castTo(a, ad, "bool", use)} ${rule.bool} ${castTo(b, bd, "bool", use)})`;
      if (rd === "float32") fail(`value %${n}: ${op} cannot give float32`);
      return `(${castTo(a, ad, rd, use)} ${rule.bits} ${castTo(b, bd, rd, use)})`;
    }
    if (rd === "bool") {
      // Arithmetic on bool 0/1 values: max is or, min is and; the rest has no bool result.
      if (op === "maximum") return `(${a} || ${b})`;
      if (op === "minimum" || op === "mul") return `(${a} && ${b})`;
      fail(`value %${n}: ${op} on bool`);
    }
    return ARITH[op](castTo(a, ad, rd, use), castTo(b, bd, rd, use), rd, use);
  };

  /**
   * Workgroup tree reduction (batch axes reduced): the workgroup's threads stride over
   * the reduced index space (reduced batch axes outer, then reduced base axes, row-major,
   * as the loop nest orders them), accumulate per thread, then combine pairwise in
   * shared memory. argmin/argmax carry (best, position) and prefer the lower position
   * on ties, and a NaN over any number (the lowest-positioned NaN), which is what the
   * sequential loop's "strictly better, NaN wins once" gives.
   */
  const emitTree = (): void => {
    const W = WGSL_WORKGROUP_SIZE;
    const outs = treeOuts(kernel);
    const cmpDType = (j: number): DType => outs[j]!.cd;
    initAccumulators(B, outs, use);
    kernel.outputs.forEach((out) => {
      if (isArgOp(out.reduce) && out.dtype !== "int32") fail(`${out.reduce} gives int32, not ${out.dtype}`);
    });
    const reduced: { name: string; size: string }[] = [
      ...[...reducedBatch].sort((x, y) => x - y).map((a) => ({ name: `b${a}`, size: param(layout.batchSizes + a) })),
      ...[...reducedBase].sort((x, y) => x - y).map((a) => ({ name: `x${a}`, size: `${baseShape[a]}u` })),
    ];
    // This workgroup's chunk of the reduced space: [r0, r1).
    const chunk = wgslChunk(kernel);
    B.line(`let rn = ${reduced.map((x) => x.size).join(" * ")};`);
    // An empty reduced base axis makes rn 0 (no iteration); 1 keeps `% 0u` out of the source.
    const divisor = (x: { size: string }): string => (x.size === "0u" ? "1u" : x.size);
    B.line(`let r0 = g * ${chunk}u;`).line(`let r1 = min(rn, r0 + ${chunk}u);`);
    B.open(`for (var ri = r0 + lid; ri < r1; ri = ri + ${W}u) {`);
    B.line(`var rq = ri;`);
    for (let i = reduced.length - 1; i >= 0; i--) {
      const { name } = reduced[i]!;
      if (i === 0) B.line(`let ${name} = rq;`);
      else B.line(`let ${name} = rq % ${divisor(reduced[i]!)};`).line(`rq = rq / ${divisor(reduced[i]!)};`);
    }
    emitBody();
    kernel.outputs.forEach((out, j) => {
      const vd = exprs[out.value]!.dtype;
      const v = `v${out.value}`;
      if (isArgOp(out.reduce)) {
        const cd = cmpDType(j);
        const cv = castTo(v, vd, cd, use);
        B.open(`if (${argBetter(out.reduce!, cv, cd, `best${j}`)}) {`)
          .line(`best${j} = ${cv};`)
          .line(`acc${j} = i32(${reduced[0]!.name});`)
          .close();
      } else {
        const ad = accDType(out.reduce!, out.dtype);
        B.line(
          `acc${j} = ${REDUCE[out.reduce as Exclude<KReduceOp, "argmin" | "argmax">].step(`acc${j}`, castTo(v, vd, ad, use), ad, use)};`,
        );
      }
    });
    B.close();
    emitSharedTree(B, outs, use);
    // One chunk: the result. Several: this chunk's partial, folded by combine passes (codegen/wgsl-combine.ts).
    B.open("if (lid == 0u && chunks > 1u) {");
    emitPartialStore(B, outs, "gi * chunks + g");
    B.close();
    B.open("if (lid == 0u && chunks == 1u) {");
    kernel.outputs.forEach((out, j) => {
      if (isArgOp(out.reduce)) {
        B.line(`out${j}[gi] = wacc${j}[0];`);
        return;
      }
      const ad = accDType(out.reduce!, out.dtype);
      let v = fromShared(`wacc${j}[0]`, ad);
      // mean divides once, by the whole reduced count, through bw_id: with an empty reduced base axis
      // the compiler knows rn is 0 and folds x / 0.0 to 0, where the mean of nothing is NaN. An empty sum is +0.
      if (out.reduce === "mean") {
        use("opaque");
        v = ad === "float32" ? `${v} / bw_id(f32(rn))` : `${v} / ${castTo("bw_id(f32(rn))", "float32", ad, use)}`;
      }
      if (out.reduce === "sum") v = sumResult(v, ad, "rn == 0u", use);
      v = castTo(v, ad, out.dtype, use);
      B.line(`out${j}[gi] = ${out.dtype === "bool" ? castTo(v, "bool", "uint32", use) : v};`);
    });
    B.close();
  };

  if (kernel.segment !== undefined) {
    const seg = kernel.segment;
    const out = kernel.outputs[0]!;
    const C = wgslChunk(kernel);
    const S = numel(baseShape);
    let flat: IndexExpr = ix.c(0);
    contiguousStrides(baseShape).forEach((st, a) => (flat = ix.add(flat, ix.mul(ix.v(a), ix.c(st)))));
    const at = indexCode(flat, baseShape.length);
    const store = (v: string): string => (out.dtype === "bool" ? castTo(v, "bool", "uint32", use) : v);
    const offs = `in${seg.offsets}`;
    const bound = seg.mode === "reduce" ? segmentRowBound(kernel) : "none";
    // A reduce over packed values runs in passes (see `WGSLLaunchPlan.windows`): the rows
    // pass (chunks = 1) and the windows pass (chunks = 2) of the same kernel.
    const windowed = seg.mode === "reduce" && bound === "packed";
    /** `b0` = the row holding packed position `pos`: the last row whose offset is <= pos (at most 32 halvings). */
    const findRow = (pos: string): void => {
      B.line(`var ra = 0u;`).line(`var rz = ${param(layout.batchSizes)} - 1u;`);
      B.open(`for (var it = 0u; it < 32u && ra + 1u < rz; it = it + 1u) {`);
      B.line("let mid = (ra + rz) / 2u;");
      B.line(`if (u32(${offs}[mid]) <= ${pos}) { ra = mid; } else { rz = mid; }`);
      B.close();
      B.line("b0 = ra;");
    };
    const mapped = seg.mode === "map";
    if (mapped) {
      // One invocation per window of C packed positions (and base point); it walks their rows.
      B.line(`let packedN = u32(${offs}[${param(layout.batchSizes)} - 1u]);`);
      B.line(`let t0 = bq * ${C}u;`).line(`let t1 = min(packedN, t0 + ${C}u);`);
      B.line("if (t0 >= t1) { return; }");
      B.line("var b0 = 0u;");
      findRow("t0");
    } else if (windowed) {
      B.line("let phase = chunks;").line("let w = bq / 2u;").line("var b0 = bq;");
      B.open("if (phase == 2u) {");
      // Window w covers positions [w C, (w + 1) C); slot 0 the row holding its first position, slot 1 its last.
      B.line(`let packedN = u32(${offs}[${param(layout.batchSizes)} - 1u]);`);
      B.line(`if (w * ${C}u >= packedN) { return; }`);
      B.line(`let pos = select(w * ${C}u, min(packedN, (w + 1u) * ${C}u) - 1u, bq % 2u == 1u);`);
      findRow("pos");
      B.close();
    } else {
      B.line("let b0 = bq;");
    }
    B.line(`${mapped ? "var" : "let"} lo = u32(${offs}[b0]);`);
    kernel.inputs.forEach((inp, i) => {
      // Plain strides for padded inputs: s0 = M·base, s1 = base, so M = s0 / s1.
      if (inp.padded) {
        const s0 = param(layout.inputStrides[i]!);
        const s1 = param(layout.inputStrides[i]! + 1);
        B.line(`let m${i} = select(0u, ${s0} / max(${s1}, 1u), ${s1} > 0u);`);
      }
    });
    B.line(`${mapped ? "var" : "let"} hi = u32(${offs}[b0 + 1u]);`);
    if (seg.mode === "reduce") {
      const vd = exprs[out.value]!.dtype;
      const isArg = out.reduce === "argmax";
      const ad = isArg ? "int32" : accDType(out.reduce!, out.dtype);
      if (isArg) B.line(`var best: ${REG[vd]} = ${extreme(vd, false, use)};`);
      B.line(
        `var acc: ${REG[ad]} = ${isArg ? "0i" : REDUCE[out.reduce as Exclude<KReduceOp, "argmin" | "argmax">].init(ad, use)};`,
      );
      const fold = (): void => {
        if (isArg) {
          B.open(`if (${argBetter("argmax", `v${out.value}`, vd, "best")}) {`)
            .line(`best = v${out.value};`)
            .line("acc = i32(t - lo);")
            .close();
        } else {
          B.line(
            `acc = ${REDUCE[out.reduce as Exclude<KReduceOp, "argmin" | "argmax">].step("acc", castTo(`v${out.value}`, vd, ad, use), ad, use)};`,
          );
        }
      };
      const partial = (pk: string): void => {
        B.line(`let pk = ${pk};`);
        if (isArg) B.line("out0[2u * pk] = bitcast<i32>(best);").line("out0[2u * pk + 1u] = acc;");
        else B.line(`out0[pk] = ${ad === "bool" ? castTo("acc", "bool", "uint32", use) : "acc"};`);
      };
      B.line("let n = hi - lo;");
      if (windowed) {
        // Rows pass: rows of at most C positions, whole. Windows pass: one chunk of a long
        // row, its partial in slot gi; a row-combine pass (codegen/wgsl-combine.ts) finishes long rows.
        B.line("var t0 = lo;").line("var t1 = hi;");
        B.open("if (phase == 1u) {").line(`if (n > ${C}u) { return; }`);
        B.close().open("else if (bq % 2u == 0u) {");
        B.line(`let k = (w * ${C}u - lo + ${C - 1}u) / ${C}u;`);
        B.line(`t0 = lo + k * ${C}u;`).line(`t1 = min(hi, t0 + ${C}u);`);
        B.line("if (k == 0u || t0 >= hi) { return; }");
        B.close().open("else {");
        B.line(`if (lo < w * ${C}u || n <= ${C}u) { return; }`).line(`t1 = lo + ${C}u;`);
        B.close();
        B.open("for (var t = t0; t < t1; t = t + 1u) {");
        emitBody();
        fold();
        B.close();
        B.open("if (phase == 2u) {");
        partial("gi");
        B.line("return;");
        B.close();
      } else {
        // The loop walks the positions whose values depend on t (see `segmentRowBound`): the
        // first M (the padded length) when only padded tensors are read; none when nothing
        // depends on t. Past them every position gives the same value, folded once in
        // closed form (n copies summed as value × n). Chunk g of a row: positions [g C, (g + 1) C).
        const padded = kernel.inputs.flatMap((inp, i) => (inp.padded && loadsInput.has(i) ? [`m${i}`] : []));
        const span = bound === "padded" ? `min(n, ${padded.reduce((a, m) => `max(${a}, ${m})`)})` : "0u";
        B.line(`let span = ${span};`);
        if (bound !== "none") {
          B.line(`let t0 = lo + min(span, g * ${C}u);`).line(`let t1 = lo + min(span, (g + 1u) * ${C}u);`);
          B.open("for (var t = t0; t < t1; t = t + 1u) {");
          emitBody();
          fold();
          B.close();
        }
        B.open("if (g == 0u && span < n) {");
        B.line("let t = lo + span;");
        emitBody();
        if (out.reduce === "sum" || out.reduce === "mean") {
          B.line(`acc = acc + ${castTo(`v${out.value}`, vd, ad, use)} * ${castTo("(n - span)", "uint32", ad, use)};`);
        } else {
          fold();
        }
        B.close();
        // Several chunks: this chunk's partial (mean: the sum), folded by combine passes (codegen/wgsl-combine.ts).
        B.open("if (chunks > 1u) {");
        partial("gi * chunks + g");
        B.line("return;");
        B.close();
      }
      let v = "acc";
      if (out.reduce === "mean") v = `acc / f32(n)`;
      if (out.reduce === "sum") v = sumResult(v, ad, "n == 0u", use);
      if (!isArg) v = castTo(v, ad, out.dtype, use);
      B.line(`out0[gi] = ${store(v)};`);
    } else if (mapped) {
      B.open("for (var t = t0; t < t1; t = t + 1u) {");
      // The next rows: a few steps forward, then (past many empty rows) a binary search.
      B.line(
        `for (var st = 0u; st < 8u && t >= hi; st = st + 1u) { b0 = b0 + 1u; lo = hi; hi = u32(${offs}[b0 + 1u]); }`,
      );
      B.open("if (t >= hi) {");
      findRow("t");
      B.line(`lo = u32(${offs}[b0]);`).line(`hi = u32(${offs}[b0 + 1u]);`);
      B.close();
      emitBody();
      B.line(`out0[t * ${S}u + ${at}] = ${store(castTo(`v${out.value}`, exprs[out.value]!.dtype, out.dtype, use))};`);
      B.close();
    } else {
      // maxN -1: pad to the longest row, a run-time size (the launch's second batch size).
      if (seg.maxN === -1) B.line(`let maxN = ${param(layout.batchSizes + 1)};`);
      const maxN = seg.maxN! >= 0 ? `${seg.maxN}u` : "maxN";
      B.line(`let len = min(hi - lo, ${maxN});`);
      B.line(`let start = ${seg.left ? `${maxN} - len` : "0u"};`);
      // Chunk g of a padded row: positions [g C, (g + 1) C).
      B.line(`let n1 = min(${maxN}, (g + 1u) * ${C}u);`);
      B.open(`for (var n = min(${maxN}, g * ${C}u); n < n1; n = n + 1u) {`);
      B.line("let inside = n >= start && n < start + len;");
      B.line("let t = select(lo, lo + n - start, inside);");
      // The output expression says what padding positions hold (see `Segment`).
      emitBody();
      B.line(
        `out0[(b0 * ${maxN} + n) * ${S}u + ${at}] = ${store(castTo(`v${out.value}`, exprs[out.value]!.dtype, out.dtype, use))};`,
      );
      B.close();
    }
  } else if (kernel.reduce === null) {
    emitBody();
    kernel.outputs.forEach((out, j) => {
      const v = castTo(`v${out.value}`, exprs[out.value]!.dtype, out.dtype, use);
      B.line(`out${j}[gi] = ${out.dtype === "bool" ? castTo(v, "bool", "uint32", use) : v};`);
    });
  } else if (tree) {
    emitTree();
  } else {
    // Accumulators, declared before the loops.
    kernel.outputs.forEach((out, j) => {
      const vd = exprs[out.value]!.dtype;
      if (out.reduce === "argmin" || out.reduce === "argmax") {
        if (out.dtype !== "int32") fail(`${out.reduce} gives int32, not ${out.dtype}`);
        const cd = vd === "bool" ? "uint32" : vd;
        B.line(`var best${j}: ${REG[cd]} = ${extreme(cd, out.reduce === "argmin", use)};`);
        B.line(`var acc${j}: i32 = 0i;`);
      } else {
        const ad = accDType(out.reduce!, out.dtype);
        B.line(`var acc${j}: ${REG[ad]} = ${REDUCE[out.reduce!].init(ad, use)};`);
      }
    });
    const loops: string[] = [];
    for (const a of [...reducedBatch].sort((x, y) => x - y)) {
      B.open(`for (var b${a} = 0u; b${a} < ${param(layout.batchSizes + a)}; b${a} = b${a} + 1u) {`);
      loops.push(`b${a}`);
    }
    for (const a of [...reducedBase].sort((x, y) => x - y)) {
      B.open(`for (var x${a} = 0u; x${a} < ${baseShape[a]}u; x${a} = x${a} + 1u) {`);
      loops.push(`x${a}`);
    }
    emitBody();
    kernel.outputs.forEach((out, j) => {
      const vd = exprs[out.value]!.dtype;
      const v = `v${out.value}`;
      if (out.reduce === "argmin" || out.reduce === "argmax") {
        const cd = vd === "bool" ? "uint32" : vd;
        const cv = castTo(v, vd, cd, use);
        const pos = loops[0]!;
        B.open(`if (${argBetter(out.reduce!, cv, cd, `best${j}`)}) {`)
          .line(`best${j} = ${cv};`)
          .line(`acc${j} = i32(${pos});`)
          .close();
      } else {
        const ad = accDType(out.reduce!, out.dtype);
        B.line(`acc${j} = ${REDUCE[out.reduce!].step(`acc${j}`, castTo(v, vd, ad, use), ad, use)};`);
      }
    });
    for (let i = 0; i < loops.length; i++) B.close();
    const reducedBaseCount = [...reducedBase].reduce((p, a) => p * baseShape[a]!, 1);
    // Whether the reduction is empty (an empty sum is +0): an empty reduced base axis, or a reduced batch size of 0.
    const empty =
      reducedBaseCount === 0
        ? "true"
        : reducedBatch.size === 0
          ? ""
          : [...reducedBatch].map((a) => `${param(layout.batchSizes + a)} == 0u`).join(" || ");
    kernel.outputs.forEach((out, j) => {
      let v = `acc${j}`;
      if (out.reduce === "sum" && empty !== "") v = sumResult(v, accDType("sum", out.dtype), empty, use);
      if (out.reduce === "mean") {
        const ad = accDType("mean", out.dtype);
        const countF = [
          ...[...reducedBatch].map((a) => `f32(${param(layout.batchSizes + a)})`),
          literal(reducedBaseCount, "float32", use),
        ].join(" * ");
        v = ad === "float32" ? `${v} / (${countF})` : `${v} / ${castTo(`(${countF})`, "float32", ad, use)}`;
      }
      if (out.reduce !== "argmin" && out.reduce !== "argmax")
        v = castTo(v, accDType(out.reduce!, out.dtype), out.dtype, use);
      B.line(`out${j}[gi] = ${out.dtype === "bool" ? castTo(v, "bool", "uint32", use) : v};`);
    });
  }
  B.close();

  return header + helperCode(used) + B.toString() + "\n";
}

/** The dtype a reduction accumulates in: its output dtype (sum of bools accumulates in the output's int type). */
function accDType(op: KReduceOp, out: DType): DType {
  if (op === "all" || op === "any") return "bool";
  return out;
}

/** WGSL u32 expression for a base index expression; `rank` bounds the axis variables. */
function indexCode(e: IndexExpr, rank: number): string {
  switch (e.k) {
    case "var":
      if (e.axis < 0 || e.axis >= rank) fail(`index uses base axis ${e.axis} of a rank-${rank} space`);
      return `x${e.axis}`;
    case "const":
      if (!Number.isInteger(e.v)) fail(`index constant ${e.v} is not an integer`);
      // A negative offset (a concatenated piece's start) wraps in u32 arithmetic; only the
      // select branch not taken ever sees the wrapped value, and robust access keeps its load in bounds.
      return `${e.v >>> 0}u`;
    case "add":
      return `(${indexCode(e.a, rank)} + ${indexCode(e.b, rank)})`;
    case "mul":
      return `(${indexCode(e.a, rank)} * ${indexCode(e.b, rank)})`;
    case "div":
    case "mod": {
      // A divisor 0 comes from a size-0 dim (a reshape of an empty tensor): such an index only
      // runs for an element of that dim, of which there is none, but WGSL refuses a constant
      // `% 0u` or `/ 0u` at compile time; 1u keeps it out of the source.
      const b = indexCode(e.b, rank);
      return `(${indexCode(e.a, rank)} ${e.k === "div" ? "/" : "%"} ${b === "0u" ? "1u" : b})`;
    }
  }
}
