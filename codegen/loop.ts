/**
 * The loop form: the lower, loop-level kernel form every code generator prints
 * (docs/ARCHITECTURE.md, Kernel forms). `lowerKernel` (codegen/lower-loops.ts)
 * produces it once from the kernel IR, `verifyLoop` checks it, and the renderers
 * (codegen/js.ts, the WGSL generator, a WebAssembly printer) print it statement by
 * statement. Everything a renderer must not decide on its own is explicit here:
 * loops and their bounds, index arithmetic, loads and stores at computed offsets,
 * accumulators (mutable locals) and the whole semantics of reductions (start
 * values, the step, the float64 accumulation of sums, the signed-zero and empty
 * rules, the argmin/argmax tie and NaN rules, the mean's division). A renderer
 * only spells the statements and looks the elementwise ops up in its rule tables.
 *
 * ## Types
 *
 * A value has an `LType`: a `DType`, or `index`, an integer used for loop
 * variables, sizes, strides and offsets (a 32-bit integer: JS number, WGSL u32,
 * WASM i32). `bool` values are 0 or 1 wherever a target has no boolean type.
 *
 * ## Values (SSA)
 *
 * Every value is defined once by a `let` statement (`id`, `type`, `e`) and is
 * visible after its `let` in the same block and in every block nested there.
 * Ids are dense (0 .. `values - 1`), operands always refer to visible values. The
 * expression kinds (`LExpr`):
 *
 * - `size` (index): the launch's batch size `i` (`sizes[i]`); for a pad kernel with
 *   a run-time padded length, `i = 1` is that length.
 * - `stride` (index): the launch's batch stride number `i`, the inputs' batch
 *   strides concatenated in input order (input 0's dims first).
 * - `const` (its dtype): the launch constant in slot `slot` (`Launch.consts`);
 *   never a literal: its value is a run-time argument, so no printer may fold it.
 * - `lit`: the number `v` in the value's type, exactly (may be NaN, ±Infinity, -0).
 * - `load`: element `at` (an index value) of input buffer `buf`, in that input's
 *   dtype. A load may be out of range only when its value is not used (the branch
 *   of a `where` that is not taken); a target whose loads trap must guard it.
 * - `oload`: element `at` (an index value) of output buffer `buf`, in that output's
 *   dtype, as this launch (a workgroup program: this invocation) last stored it. For
 *   kernels that update their output in place (scatter, looped matrix routines); never
 *   hoisted past a `store` to the same buffer, never read before one (its value is then
 *   unspecified). A printer that reorders or vectorises stores must keep program order
 *   for a body with an `oload`.
 * - `get`: the current value of mutable local `local`. Never shared or hoisted.
 * - `unary`/`binary`: an elementwise op (the kernel IR's op unions, the same rules as
 *   the reference interpreter) on operands of one dtype; the result has the
 *   value's type (bool for predicates, comparisons and logical ops).
 * - `where`: `c` (bool) ? `a` : `b` (both of the value's dtype).
 * - `cast`: `x` converted to the value's type with the kernel IR's cast rules
 *   (float → int truncates then wraps, NaN/Inf → 0; → bool is `x != 0`). Casts from
 *   and to `index` are exact (the value fits both types).
 * - `idx`: integer arithmetic on index values: add, sub, mul, div (floor, divisor
 *   > 0), mod (divisor > 0), min, max.
 * - `icmp`: a comparison of two index values, a bool.
 *
 * Float32 arithmetic: each float32 `unary`/`binary`/`cast` gives the float32
 * rounding of the exact result, unless `relaxedFloat32` is set, when a target may
 * keep float32 intermediates at higher precision (a store still rounds).
 *
 * ## Statements (`LStmt`)
 *
 * - `let`: defines value `id` (see above).
 * - `set`: local `local` := value `value` (same type as the local).
 * - `store`: output buffer `buf`, element `at` := `value` (of the output's dtype).
 * - `loop`: for `var` = `from`, `from + 1`, … while `var < to` (index values; `to` is
 *   evaluated once, before the first iteration); `var` is an index value defined
 *   inside `body` only.
 * - `if`: `cond` (bool) chooses `then` or `else`.
 *
 * ## Workgroup programs (WGSL)
 *
 * A program with `workgroupSize` runs once per invocation of a grid of workgroups
 * (the GPU target, `lowerKernel(k, WORKGROUP_TARGET)`), not once per launch. These
 * kinds appear only there; a printer for a sequential target never sees them:
 *
 * - `param` (index): uniform launch parameter slot `i` (`name` says what it is, e.g.
 *   `count`, `chunks`; a printer may use it as the value's name). `size`, `stride`
 *   and `const` then read the slots after `count`: slot 1 + i, 1 + `sizes` + i, and
 *   1 + `sizes` + `strides` + slot; `params` is the number of slots in all.
 * - `builtin` (index): `workgroup`, the linear index of the invocation's workgroup;
 *   `lane`, its index inside the workgroup (0 .. `workgroupSize` - 1).
 * - `bits`: `x` reinterpreted as the value's dtype (same 32 bits).
 * - `sload` / `sstore`: element `at` of workgroup-shared array `buf` (`shared`).
 * - `barrier`: every invocation of the workgroup waits (uniform control flow only).
 * - `break`: leaves the innermost loop. `return`: ends the invocation.
 * - a `loop` may have a `step` (a value id): var += step instead of 1.
 *
 * ## Program
 *
 * `inputs`/`outputs` are the buffers' dtypes (read-only / write-only, contiguous
 * element arrays); `sizes`/`strides` count the launch's batch sizes and strides;
 * `consts` the constant slots' dtypes; `locals` the mutable locals' types (each is
 * `set` before it is read). The body runs once per launch and does the whole
 * kernel (sequential target); a printer binds the launch arguments at its top.
 */
import type { DType } from "../ir/dtype.js";
import { IRError } from "../ir/errors.js";
import type { KBinaryOp, KUnaryOp } from "../ir/kernel.js";

/** A value's type: a dtype, or `index` (a 32-bit integer: offsets, sizes, loop variables). */
export type LType = DType | "index";

/** Integer arithmetic on index values (`div` and `mod` by a positive divisor, flooring). */
export type IndexOp = "add" | "sub" | "mul" | "div" | "mod" | "min" | "max";
/** Comparison of two index values. */
export type IndexCmp = "lt" | "le" | "gt" | "ge" | "eq" | "ne";

/** What a `let` computes (operands are value ids). See the module comment for each kind. */
export type LExpr =
  | { readonly k: "size"; readonly i: number }
  | { readonly k: "stride"; readonly i: number }
  | { readonly k: "const"; readonly slot: number }
  | { readonly k: "lit"; readonly v: number }
  | { readonly k: "load"; readonly buf: number; readonly at: number }
  | { readonly k: "oload"; readonly buf: number; readonly at: number }
  | { readonly k: "get"; readonly local: number }
  | { readonly k: "unary"; readonly op: KUnaryOp; readonly x: number }
  | { readonly k: "binary"; readonly op: KBinaryOp; readonly a: number; readonly b: number }
  | { readonly k: "where"; readonly c: number; readonly a: number; readonly b: number }
  | { readonly k: "cast"; readonly x: number }
  | { readonly k: "idx"; readonly op: IndexOp; readonly a: number; readonly b: number }
  | { readonly k: "icmp"; readonly op: IndexCmp; readonly a: number; readonly b: number }
  // ---- workgroup programs only ----
  | { readonly k: "param"; readonly i: number; readonly name: string }
  | { readonly k: "builtin"; readonly name: "workgroup" | "lane" }
  | { readonly k: "bits"; readonly x: number }
  | { readonly k: "sload"; readonly buf: number; readonly at: number };

/** A statement of the loop form. See the module comment for each kind. */
export type LStmt =
  | { readonly k: "let"; readonly id: number; readonly type: LType; readonly e: LExpr }
  | { readonly k: "set"; readonly local: number; readonly value: number }
  | { readonly k: "store"; readonly buf: number; readonly at: number; readonly value: number }
  | {
      readonly k: "loop";
      readonly var: number;
      readonly from: number;
      readonly to: number;
      readonly body: readonly LStmt[];
      /** Workgroup programs only: the increment (a value id); 1 when absent. */
      readonly step?: number;
    }
  | { readonly k: "if"; readonly cond: number; readonly then: readonly LStmt[]; readonly else: readonly LStmt[] }
  // ---- workgroup programs only ----
  | { readonly k: "sstore"; readonly buf: number; readonly at: number; readonly value: number }
  | { readonly k: "barrier" }
  | { readonly k: "break" }
  | { readonly k: "return" };

/** One kernel in the loop form (see the module comment). */
export interface LoopProgram {
  /** Input buffers' dtypes, in kernel input order. */
  readonly inputs: readonly DType[];
  /** Output buffers' dtypes, in kernel output order. */
  readonly outputs: readonly DType[];
  /** Number of launch batch sizes (`size` indices). */
  readonly sizes: number;
  /** Number of launch batch strides (`stride` indices). */
  readonly strides: number;
  /** Dtype of each launch constant slot. */
  readonly consts: readonly DType[];
  /** Type of each mutable local. */
  readonly locals: readonly LType[];
  /** Number of value ids (values are 0 .. values - 1). */
  readonly values: number;
  /** float32 intermediates may be kept at higher precision (see the module comment). */
  readonly relaxedFloat32: boolean;
  readonly body: readonly LStmt[];
  /** Workgroup programs only: invocations per workgroup (absent: a sequential program). */
  readonly workgroupSize?: number;
  /** Workgroup programs only: uniform parameter slots (see `param`). */
  readonly params?: number;
  /** Workgroup programs only: the workgroup-shared arrays. */
  readonly shared?: readonly { readonly dtype: DType; readonly length: number }[];
}

/** Calls `f` on every statement, outer before inner, in program order. */
export function walkStmts(body: readonly LStmt[], f: (s: LStmt) => void): void {
  for (const s of body) {
    f(s);
    if (s.k === "loop") walkStmts(s.body, f);
    else if (s.k === "if") {
      walkStmts(s.then, f);
      walkStmts(s.else, f);
    }
  }
}

/** The value ids an expression reads. */
export function operands(e: LExpr): number[] {
  switch (e.k) {
    case "size":
    case "stride":
    case "const":
    case "lit":
    case "get":
    case "param":
    case "builtin":
      return [];
    case "load":
    case "oload":
    case "sload":
      return [e.at];
    case "unary":
    case "cast":
    case "bits":
      return [e.x];
    case "where":
      return [e.c, e.a, e.b];
    case "binary":
    case "idx":
    case "icmp":
      return [e.a, e.b];
  }
}

/**
 * Checks a loop program: every id defined once and used only where visible (after
 * its `let`, in its block or a nested one), every operand of the type its use
 * needs, every buffer, local, size, stride and constant slot in range. Throws an
 * `IRError` naming the statement; returns the program for chaining.
 */
export function verifyLoop(p: LoopProgram): LoopProgram {
  const types = new Array<LType | undefined>(p.values);
  const fail = (msg: string): never => {
    throw new IRError(`loop form: ${msg}`);
  };
  const visible = new Set<number>();
  const typeOf = (id: number, what: string): LType => {
    if (!Number.isInteger(id) || id < 0 || id >= p.values) fail(`${what} refers to value ${id}, which does not exist`);
    if (!visible.has(id)) fail(`${what} reads value v${id}, which is not defined before it in an enclosing block`);
    return types[id]!;
  };
  const expect = (id: number, want: LType, what: string): void => {
    const t = typeOf(id, what);
    if (t !== want) fail(`${what} needs ${want}, but v${id} is ${t}`);
  };
  const define = (id: number, t: LType, what: string): void => {
    if (!Number.isInteger(id) || id < 0 || id >= p.values) fail(`${what} defines value ${id}, out of range`);
    if (types[id] !== undefined) fail(`${what} defines v${id}, which is already defined`);
    types[id] = t;
    visible.add(id);
  };
  const inRange = (i: number, n: number, what: string): void => {
    if (!Number.isInteger(i) || i < 0 || i >= n) fail(`${what} ${i} is out of range (there are ${n})`);
  };
  const checkExpr = (id: number, t: LType, e: LExpr): void => {
    const what = `v${id} (${e.k})`;
    switch (e.k) {
      case "size":
        inRange(e.i, p.sizes, `${what}: batch size`);
        if (t !== "index") fail(`${what} must be index, not ${t}`);
        return;
      case "stride":
        inRange(e.i, p.strides, `${what}: stride`);
        if (t !== "index") fail(`${what} must be index, not ${t}`);
        return;
      case "const":
        inRange(e.slot, p.consts.length, `${what}: constant slot`);
        if (t !== p.consts[e.slot]) fail(`${what} is ${t}, but its slot holds ${p.consts[e.slot]}`);
        return;
      case "lit":
        if ((t === "index" || t === "int32" || t === "uint32" || t === "bool") && !Number.isInteger(e.v))
          fail(`${what}: ${e.v} is not a ${t}`);
        return;
      case "load":
        inRange(e.buf, p.inputs.length, `${what}: input`);
        expect(e.at, "index", `${what} offset`);
        if (t !== p.inputs[e.buf]) fail(`${what} is ${t}, but input ${e.buf} holds ${p.inputs[e.buf]}`);
        return;
      case "oload":
        inRange(e.buf, p.outputs.length, `${what}: output`);
        expect(e.at, "index", `${what} offset`);
        if (t !== p.outputs[e.buf]) fail(`${what} is ${t}, but output ${e.buf} holds ${p.outputs[e.buf]}`);
        return;
      case "get":
        inRange(e.local, p.locals.length, `${what}: local`);
        if (t !== p.locals[e.local]) fail(`${what} is ${t}, but local ${e.local} is ${p.locals[e.local]}`);
        return;
      case "unary": {
        const x = typeOf(e.x, what);
        if (x === "index" || t === "index") fail(`${what}: ${e.op} works on dtypes, not index`);
        return;
      }
      case "binary": {
        const a = typeOf(e.a, what);
        const b = typeOf(e.b, what);
        if (a !== b) fail(`${what}: ${e.op} operands differ (${a} vs ${b})`);
        if (a === "index" || t === "index") fail(`${what}: ${e.op} works on dtypes, not index (use idx)`);
        return;
      }
      case "where":
        expect(e.c, "bool", `${what} condition`);
        expect(e.a, t, `${what} branch a`);
        expect(e.b, t, `${what} branch b`);
        return;
      case "cast":
        typeOf(e.x, what);
        return;
      case "idx":
        expect(e.a, "index", what);
        expect(e.b, "index", what);
        if (t !== "index") fail(`${what} must be index, not ${t}`);
        return;
      case "icmp":
        expect(e.a, "index", what);
        expect(e.b, "index", what);
        if (t !== "bool") fail(`${what} must be bool, not ${t}`);
        return;
      case "param":
        workgroup(what);
        inRange(e.i, p.params ?? 0, `${what}: parameter slot`);
        if (t !== "index") fail(`${what} must be index, not ${t}`);
        return;
      case "builtin":
        workgroup(what);
        if (t !== "index") fail(`${what} must be index, not ${t}`);
        return;
      case "bits": {
        const x = typeOf(e.x, what);
        if (x === "bool" || x === "float64" || t === "bool" || t === "float64" || t === "index")
          fail(`${what}: bits reinterprets 32-bit numbers, not ${x} as ${t}`);
        return;
      }
      case "sload":
        workgroup(what);
        inRange(e.buf, p.shared?.length ?? 0, `${what}: shared array`);
        expect(e.at, "index", `${what} offset`);
        if (t !== p.shared![e.buf]!.dtype)
          fail(`${what} is ${t}, but shared array ${e.buf} holds ${p.shared![e.buf]!.dtype}`);
        return;
    }
  };
  const workgroup = (what: string): void => {
    if (p.workgroupSize === undefined) fail(`${what} appears in a sequential program (no workgroupSize)`);
  };
  let loops = 0;
  const block = (stmts: readonly LStmt[]): void => {
    const local: number[] = [];
    for (const s of stmts) {
      switch (s.k) {
        case "let":
          checkExpr(s.id, s.type, s.e);
          define(s.id, s.type, `let v${s.id}`);
          local.push(s.id);
          break;
        case "set":
          inRange(s.local, p.locals.length, "set: local");
          expect(s.value, p.locals[s.local]!, `set l${s.local}`);
          break;
        case "store":
          inRange(s.buf, p.outputs.length, "store: output");
          expect(s.at, "index", `store to output ${s.buf}: offset`);
          expect(s.value, p.outputs[s.buf]!, `store to output ${s.buf}`);
          break;
        case "loop":
          expect(s.from, "index", "loop start");
          expect(s.to, "index", "loop end");
          if (s.step !== undefined) {
            workgroup("a loop step");
            expect(s.step, "index", "loop step");
          }
          define(s.var, "index", `loop variable v${s.var}`);
          loops++;
          block(s.body);
          loops--;
          visible.delete(s.var);
          break;
        case "sstore":
          workgroup("sstore");
          inRange(s.buf, p.shared?.length ?? 0, "sstore: shared array");
          expect(s.at, "index", `sstore to shared array ${s.buf}: offset`);
          expect(s.value, p.shared![s.buf]!.dtype, `sstore to shared array ${s.buf}`);
          break;
        case "barrier":
        case "return":
          workgroup(s.k);
          break;
        case "break":
          if (loops === 0) fail("break outside a loop");
          break;
        case "if":
          expect(s.cond, "bool", "if condition");
          block(s.then);
          block(s.else);
          break;
      }
    }
    for (const id of local) visible.delete(id);
  };
  block(p.body);
  return p;
}

/** The value ids statement `s` reads, its nested statements' included. */
function deepUses(s: LStmt, out: Set<number>): void {
  switch (s.k) {
    case "let":
      for (const v of operands(s.e)) out.add(v);
      return;
    case "set":
      out.add(s.value);
      return;
    case "store":
    case "sstore":
      out.add(s.at).add(s.value);
      return;
    case "loop":
      out.add(s.from).add(s.to);
      if (s.step !== undefined) out.add(s.step);
      for (const x of s.body) deepUses(x, out);
      return;
    case "if":
      out.add(s.cond);
      for (const x of s.then) deepUses(x, out);
      for (const x of s.else) deepUses(x, out);
      return;
    case "barrier":
    case "break":
    case "return":
      return;
  }
}

/**
 * Per statement index of a block: the values the block defines whose last use (nested
 * uses counted at their enclosing statement; an unused value at its definition) is there.
 */
export function deadAfter(block: readonly LStmt[]): Map<number, number[]> {
  const last = new Map<number, number>();
  block.forEach((s, i) => {
    if (s.k === "let") last.set(s.id, i);
    const used = new Set<number>();
    deepUses(s, used);
    for (const v of used) if (last.has(v)) last.set(v, i);
  });
  const out = new Map<number, number[]>();
  for (const [id, i] of last) {
    const list = out.get(i);
    if (list === undefined) out.set(i, [id]);
    else list.push(id);
  }
  return out;
}
