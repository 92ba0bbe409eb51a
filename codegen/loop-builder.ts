/**
 * Builds loop programs (codegen/loop.ts) for the lowerings: values are
 * hash-consed per block and placed in the outermost open block where all their
 * operands are visible (loop-invariant code sits outside the loops, equal values
 * are computed once); reads of mutable state (locals, shared memory) stay where
 * they are. Index arithmetic folds literals; a cast of a literal is a literal.
 */
import { castScalar, type DType } from "../ir/dtype.js";
import type { Kernel } from "../ir/kernel.js";
import {
  operands,
  verifyLoop,
  type IndexCmp,
  type IndexOp,
  type LExpr,
  type LStmt,
  type LType,
  type LoopProgram,
} from "./loop.js";

interface Block {
  readonly stmts: LStmt[];
  readonly memo: Map<string, number>;
}

/**
 * Builds a loop program: values are hash-consed per block and placed in the
 * outermost open block where all their operands are visible.
 */
export class LoopBuilder {
  private readonly types: LType[] = [];
  private readonly depth: number[] = [];
  readonly locals: LType[] = [];
  private readonly stack: Block[] = [{ stmts: [], memo: new Map() }];
  private readonly pending: (
    { k: "loop"; var: number; from: number; to: number; step?: number } | { k: "if"; cond: number }
  )[] = [];
  private readonly elses: (LStmt[] | null)[] = [];

  typeOf(id: number): LType {
    return this.types[id]!;
  }

  /** Defines (or finds) the value `e` of type `type`. `get` reads are never shared or moved. */
  let(type: LType, e: LExpr): number {
    const cur = this.stack.length - 1;
    let at = 0;
    // Reads of mutable state (locals, shared memory, outputs) stay where they are and are never shared.
    const pinned = e.k === "get" || e.k === "sload" || e.k === "oload";
    if (pinned) at = cur;
    for (const o of operands(e)) at = Math.max(at, this.depth[o]!);
    // JSON spells -0 as 0 and NaN, ±Infinity as null: a literal's key spells its value exactly.
    const key = pinned
      ? ""
      : e.k === "lit"
        ? `${type}|lit|${Object.is(e.v, -0) ? "-0" : String(e.v)}`
        : `${type}|${JSON.stringify(e)}`;
    if (key !== "") {
      const hit = this.stack[at]!.memo.get(key);
      if (hit !== undefined) return hit;
    }
    const id = this.types.length;
    this.types.push(type);
    this.depth.push(at);
    this.stack[at]!.stmts.push({ k: "let", id, type, e });
    if (e.k === "lit") this.lits.set(id, e.v);
    if (key !== "") this.stack[at]!.memo.set(key, id);
    return id;
  }

  lit(v: number, type: LType): number {
    return this.let(type, { k: "lit", v });
  }
  index(v: number): number {
    return this.lit(v, "index");
  }

  /** `x` as type `to` (no cast when it already is). */
  cast(x: number, to: LType): number {
    if (this.typeOf(x) === to) return x;
    // A literal converts at build time (so a printer sees a literal, e.g. a known 0 divisor).
    const v = this.litValue(x);
    if (v !== undefined && (to !== "index" || Number.isInteger(v))) return this.lit(convert(v, to), to);
    return this.let(to, { k: "cast", x });
  }

  /** Index arithmetic, folding literals and identities. */
  idx(op: IndexOp, a: number, b: number): number {
    const av = this.litValue(a);
    const bv = this.litValue(b);
    if (av !== undefined && bv !== undefined) {
      const v =
        op === "add"
          ? av + bv
          : op === "sub"
            ? av - bv
            : op === "mul"
              ? av * bv
              : op === "div"
                ? Math.floor(av / bv)
                : op === "mod"
                  ? av % bv
                  : op === "min"
                    ? Math.min(av, bv)
                    : Math.max(av, bv);
      return this.index(v);
    }
    if (op === "add" && av === 0) return b;
    if ((op === "add" || op === "sub") && bv === 0) return a;
    if (op === "mul" && (av === 0 || bv === 0)) return this.index(0);
    if (op === "mul" && av === 1) return b;
    if ((op === "mul" || op === "div") && bv === 1) return a;
    if (op === "mod" && bv === 1) return this.index(0);
    return this.let("index", { k: "idx", op, a, b });
  }

  icmp(op: IndexCmp, a: number, b: number): number {
    return this.let("bool", { k: "icmp", op, a, b });
  }

  /** The number a literal value holds (undefined for other values). */
  litValue(id: number): number | undefined {
    return this.lits.get(id);
  }

  private readonly lits = new Map<number, number>();

  local(type: LType): number {
    this.locals.push(type);
    return this.locals.length - 1;
  }
  get(local: number): number {
    return this.let(this.locals[local]!, { k: "get", local });
  }
  set(local: number, value: number): void {
    this.top().push({ k: "set", local, value });
  }
  store(buf: number, at: number, value: number): void {
    this.top().push({ k: "store", buf, at, value });
  }

  /** Any other statement (workgroup programs: sstore, barrier, break, return). */
  stmt(s: LStmt): void {
    this.top().push(s);
  }

  readonly shared: { dtype: DType; length: number }[] = [];
  /** Declares a workgroup-shared array. */
  sharedArray(dtype: DType, length: number): number {
    this.shared.push({ dtype, length });
    return this.shared.length - 1;
  }

  /** Opens `for (v = from; v < to; v += step)` (step 1 when absent) and returns v. Close with `end()`. */
  loop(from: number, to: number, step?: number): number {
    const v = this.types.length;
    this.types.push("index");
    this.pending.push({ k: "loop", var: v, from, to, ...(step !== undefined ? { step } : {}) });
    this.elses.push(null);
    this.stack.push({ stmts: [], memo: new Map() });
    this.depth.push(this.stack.length - 1);
    return v;
  }

  /** Opens `if (cond)`; `otherwise()` switches to its else branch; close with `end()`. */
  when(cond: number): void {
    this.pending.push({ k: "if", cond });
    this.elses.push(null);
    this.stack.push({ stmts: [], memo: new Map() });
  }

  otherwise(): void {
    const then = this.stack.pop()!;
    this.elses[this.elses.length - 1] = then.stmts;
    this.stack.push({ stmts: [], memo: new Map() });
  }

  end(): void {
    const b = this.stack.pop()!;
    const p = this.pending.pop()!;
    const thenStmts = this.elses.pop();
    if (p.k === "loop") this.top().push({ ...p, body: b.stmts });
    else if (thenStmts === null || thenStmts === undefined)
      this.top().push({ k: "if", cond: p.cond, then: b.stmts, else: [] });
    else this.top().push({ k: "if", cond: p.cond, then: thenStmts, else: b.stmts });
  }

  private top(): LStmt[] {
    return this.stack[this.stack.length - 1]!.stmts;
  }

  /** The program built (verified). */
  finish(
    k: Kernel,
    sizes: number,
    strides: number,
    extra: Partial<Pick<LoopProgram, "inputs" | "outputs" | "workgroupSize" | "params">> = {},
  ): LoopProgram {
    if (this.stack.length !== 1) throw new Error("loop builder: unclosed block");
    const consts: DType[] = [];
    for (const e of k.exprs) if (e.k === "const") consts.push(e.dtype);
    return verifyLoop({
      inputs: k.inputs.map((i) => i.dtype),
      outputs: k.outputs.map((o) => o.dtype),
      sizes,
      strides,
      consts,
      locals: [...this.locals],
      values: this.types.length,
      relaxedFloat32: k.relaxedFloat32 === true,
      body: this.stack[0]!.stmts,
      ...extra,
      ...(extra.workgroupSize !== undefined ? { shared: [...this.shared] } : {}),
    });
  }
}

/** The batch-stride index of each input's first batch dim. */
export function strideBase(k: Kernel): number[] {
  let at = 0;
  return k.inputs.map((inp) => {
    const s = at;
    at += inp.batchRank;
    return s;
  });
}

/**
 * Input `i`'s offset at the current batch element: the sum over its batch dims of the
 * launch's batch variable (`batchVar` of the launch axis; an input of lower batch rank
 * lines up with the trailing axes) times the dim's stride (`strideAt`: `strideBase(k)`).
 */
export function batchPointer(
  b: LoopBuilder,
  k: Kernel,
  strideAt: readonly number[],
  batchVar: (axis: number) => number,
  i: number,
): number {
  const inp = k.inputs[i]!;
  let p = b.index(0);
  for (let d = 0; d < inp.batchRank; d++) {
    const s = b.let("index", { k: "stride", i: strideAt[i]! + d });
    p = b.idx("add", p, b.idx("mul", batchVar(k.batchRank - inp.batchRank + d), s));
  }
  return p;
}

/** A literal's value in another type (the kernel IR's cast rules; index values are exact). */
function convert(v: number, to: LType): number {
  return to === "index" ? v : castScalar(v, to);
}
