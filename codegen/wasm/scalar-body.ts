/** The scalar body of a kernel: statements, loops, the sharded loop's range, loads and stores. */
import { UnsupportedOpError } from "../../ir/errors.js";
import { deadAfter, type LExpr, type LStmt, type LType, type LoopProgram } from "../loop.js";
import { I32, Op, type Code } from "./encoder.js";
import type { ArgsLayout } from "./args.js";
import type { Host } from "./host.js";
import type { MathFn } from "./math.js";
import { ScalarOps } from "./scalar-ops.js";
import type { Let, Loop, Shard } from "./shard.js";
import { vectorLoops } from "./simd-body.js";
import { vectorizable } from "./simd-rules.js";
import { ALIGN, BYTES, intLoad, intStore, wasmType, X } from "./types.js";

/** The refusal of a workgroup program's kind (`sstore`, `barrier`, `param`, …) in a sequential program. */
function workgroupOnly(k: string): never {
  throw new UnsupportedOpError(`wasm: ${k} belongs to workgroup programs (a sequential program has none)`);
}

export class Printer {
  /** Scalar local of each value id. */
  private readonly slot: number[];
  private readonly localSlot: number[];
  private readonly inPtr: number[] = [];
  private readonly inMax: number[] = [];
  private readonly outPtr: number[] = [];
  private readonly args = 0;
  /** Inner loops printed with four-lane versions. */
  innerVectorLoops = 0;
  private readonly begin = 1;
  private readonly end = 2;
  private readonly ops: ScalarOps;

  constructor(
    readonly p: LoopProgram,
    readonly defs: readonly (Let | undefined)[],
    private readonly layout: ArgsLayout,
    readonly c: Code,
    readonly math: ReadonlyMap<MathFn, number>,
    readonly host: Host,
    private readonly shard: Shard | null,
    private readonly vector: boolean,
    private readonly vectorInnerOn = true,
  ) {
    this.slot = new Array(p.values).fill(-1);
    this.localSlot = p.locals.map((t) => c.local(wasmType(t)));
    this.ops = new ScalarOps(c, math, host);
  }

  private typeOf(id: number): LType {
    return this.defs[id]?.type ?? "index";
  }

  private val(id: number): number {
    let s = this.slot[id]!;
    if (s < 0) {
      s = this.c.keep(wasmType(this.typeOf(id)));
      this.slot[id] = s;
    }
    return s;
  }

  private prologue(): void {
    const c = this.c;
    this.p.inputs.forEach((_, i) => {
      const ptr = c.local(I32);
      c.get(this.args).op(Op.i32_load).memarg(2, this.layout.inPtr(i)).set(ptr);
      this.inPtr.push(ptr);
      // Largest valid element offset (loads are clamped into the buffer).
      const mx = c.local(I32);
      c.get(this.args).op(Op.i32_load).memarg(2, this.layout.inLen(i)).i32(1).op(Op.i32_sub).set(mx);
      c.get(mx).i32(0).get(mx).i32(0).op(Op.i32_gt_s).op(Op.select).set(mx);
      this.inMax.push(mx);
    });
    this.p.outputs.forEach((_, i) => {
      const ptr = c.local(I32);
      c.get(this.args).op(Op.i32_load).memarg(2, this.layout.outPtr(i)).set(ptr);
      this.outPtr.push(ptr);
    });
  }

  /** `units(args)`: the sharded loop's trip count (top-level values before it, then to - from). */
  units(): void {
    const c = this.c;
    if (this.shard === null) {
      c.i32(0);
      return;
    }
    this.prologue();
    // The values before the first loop (the sharded loop, or the one holding the inner
    // sharded loop, whose bounds are among them).
    for (const s of this.p.body) {
      if (s.k === "loop") break;
      if (s.k === "let") this.letStmt(s);
    }
    const { from, to } = this.shard.loop;
    // max(to - from, 0)
    c.get(this.val(to)).get(this.val(from)).op(Op.i32_sub).set(this.val(to));
    c.get(this.val(to)).i32(0).get(this.val(to)).i32(0).op(Op.i32_gt_s).op(Op.select);
  }

  run(): void {
    this.prologue();
    this.block(this.p.body);
  }

  private block(stmts: readonly LStmt[]): void {
    const c = this.c;
    const dead = deadAfter(stmts);
    for (let i = 0; i < stmts.length; i++) {
      const s = stmts[i]!;
      this.stmt(s);
      // A value's local goes back to the pool after its last use in its block (ids are
      // visible only in their block and nested ones): few locals, so V8 compiles large
      // bodies in linear time.
      for (const id of dead.get(i) ?? []) {
        const slot = this.slot[id]!;
        if (slot >= 0) (c.release(slot), (this.slot[id] = -1));
      }
    }
  }

  private stmt(s: LStmt): void {
    const c = this.c;
    switch (s.k) {
      case "let":
        this.letStmt(s);
        break;
      case "set":
        c.get(this.val(s.value)).set(this.localSlot[s.local]!);
        break;
      case "store":
        this.store(
          s.buf,
          () => c.get(this.val(s.at)),
          () => c.get(this.val(s.value)),
        );
        break;
      case "loop":
        if (this.shard !== null && s === this.shard.loop) this.shardLoop(s);
        else if (this.vectorInner(s)) {
          // A straight-line inner loop: four lanes through the check-free paths when its
          // addresses allow (decided at run time), the scalar loop for the rest.
          const lo = c.local(I32);
          const hi = c.local(I32);
          c.get(this.val(s.from)).set(lo).get(this.val(s.to)).set(hi);
          vectorLoops(this, s, { loop: s, counter: null }, lo, hi, false);
          this.innerVectorLoops++;
          this.loop(
            s.var,
            () => c.get(lo),
            () => c.get(hi),
            s.body,
          );
        } else
          this.loop(
            s.var,
            () => c.get(this.val(s.from)),
            () => c.get(this.val(s.to)),
            s.body,
          );
        break;
      case "sstore":
      case "barrier":
      case "break":
      case "return":
        return workgroupOnly(s.k);
      case "if":
        c.get(this.val(s.cond)).op(Op.if).byte(0x40);
        this.block(s.then);
        if (s.else.length > 0) {
          c.op(Op.else);
          this.block(s.else);
        }
        c.op(Op.end);
        break;
    }
  }

  private loop(
    v: number,
    from: () => void,
    to: () => void,
    body: readonly LStmt[],
    step = 1,
    bodyEmit?: () => void,
  ): void {
    const c = this.c;
    const iv = this.val(v);
    const hi = c.local(I32);
    from();
    c.set(iv);
    to();
    c.set(hi);
    c.op(Op.block).byte(0x40).op(Op.loop).byte(0x40);
    if (step === 1) c.get(iv).get(hi).op(Op.i32_ge_s);
    else c.get(iv).i32(step).op(Op.i32_add).get(hi).op(Op.i32_gt_s);
    c.op(Op.br_if).u32(1);
    if (bodyEmit) bodyEmit();
    else this.block(body);
    c.get(iv).i32(step).op(Op.i32_add).set(iv);
    c.op(Op.br).u32(0);
    c.op(Op.end).op(Op.end);
  }

  /** The sharded loop over [max(from, begin), min(to, end)), the counter started where that range starts. */
  private shardLoop(s: Loop): void {
    const c = this.c;
    const shard = this.shard!;
    const lo = c.local(I32);
    const hi = c.local(I32);
    // lo = max(from, from + begin); hi = min(to, from + end): begin/end count from the loop's start.
    c.get(this.val(s.from)).get(this.begin).op(Op.i32_add).set(lo);
    c.get(this.val(s.from)).get(this.end).op(Op.i32_add).set(hi);
    c.get(hi).get(this.val(s.to)).get(hi).get(this.val(s.to)).op(Op.i32_lt_s).op(Op.select).set(hi);
    if (shard.counter !== null) {
      const l = this.localSlot[shard.counter.local]!;
      c.get(l).get(this.begin).i32(shard.counter.step).op(Op.i32_mul).op(Op.i32_add).set(l);
    }
    const iv = this.val(s.var);
    if (this.vector) {
      // Four iterations at a time while they fit, then the scalar body for the rest. When
      // every address is base + loop variable (and loads stay in range), a fast version
      // without per-access checks runs instead (decided once, before the loop).
      vectorLoops(this, s, shard, lo, hi, true);
    }
    this.loop(
      s.var,
      () => c.get(lo),
      () => c.get(hi),
      s.body,
    );
    void iv;
  }

  /**
   * The four-lane loops of loop `s` over [lo, hi) (they advance lo; the scalar loop does
   * the rest): when every address is affine in the loop variable (`affineBases`), a
   * contiguous version (every coefficient 1) and a strided one (any coefficient >= 0), both
   * without per-access checks, chosen once before the loop; otherwise (and, with
   * `general`, when neither applies) the version that checks each access.
   */
  /** Whether an inner loop (not the shard loop) gets four-lane versions: straight-line, not a short literal count. */
  private vectorInner(s: Loop): boolean {
    if (!this.vectorInnerOn) return false;
    const from = this.defs[s.from]?.e;
    const to = this.defs[s.to]?.e;
    if (from?.k === "lit" && to?.k === "lit" && to.v - from.v < 8) return false;
    return vectorizable(this.p, { loop: s, counter: null }, this.defs);
  }

  // ---- scalar statements

  /** @internal Used by VectorBody. */
  scalarSlot(id: number): number {
    return this.val(id);
  }
  localSlotOf(local: number): number {
    return this.localSlot[local]!;
  }
  counterSlot(): number {
    return this.localSlot[this.shard!.counter!.local]!;
  }
  inputPtr(i: number): number {
    return this.inPtr[i]!;
  }
  inputMax(i: number): number {
    return this.inMax[i]!;
  }
  outputPtr(i: number): number {
    return this.outPtr[i]!;
  }

  private store(buf: number, at: () => void, value: () => void): void {
    const c = this.c;
    const d = this.p.outputs[buf]!;
    c.get(this.outPtr[buf]!);
    at();
    c.i32(BYTES[d] === 1 ? 0 : Math.log2(BYTES[d]))
      .op(Op.i32_shl)
      .op(Op.i32_add);
    value();
    c.op(d === "float32" ? Op.f32_store : d === "float64" ? Op.f64_store : intStore(d));
    c.memarg(ALIGN[d], 0);
  }

  private letStmt(s: Let): void {
    const c = this.c;
    // The rule's temporaries are dead once the value is pushed.
    c.scoped(() => this.expr(s.id, s.type, s.e));
    c.set(this.val(s.id));
  }

  /** Pushes the value of `e` (of type `t`). */
  private expr(id: number, t: LType, e: LExpr): void {
    const c = this.c;
    const g = (v: number): void => void c.get(this.val(v));
    switch (e.k) {
      case "size":
        c.get(this.args).op(Op.i32_load).memarg(2, this.layout.size(e.i));
        return;
      case "stride":
        c.get(this.args).op(Op.i32_load).memarg(2, this.layout.stride(e.i));
        return;
      case "const": {
        c.get(this.args).op(Op.f64_load).memarg(3, this.layout.constAt(e.slot));
        this.ops.fromF64(t);
        return;
      }
      case "lit":
        if (t === "float32") c.f32c(e.v);
        else if (t === "float64") c.f64c(e.v);
        else c.i32(e.v | 0);
        return;
      case "load": {
        const d = this.p.inputs[e.buf]!;
        c.get(this.inPtr[e.buf]!);
        // Clamped offset: min_u(at, max).
        g(e.at);
        c.get(this.inMax[e.buf]!);
        g(e.at);
        c.get(this.inMax[e.buf]!).op(Op.i32_lt_u).op(Op.select);
        if (BYTES[d] > 1) c.i32(Math.log2(BYTES[d])).op(Op.i32_shl);
        c.op(Op.i32_add);
        c.op(d === "float32" ? Op.f32_load : d === "float64" ? Op.f64_load : intLoad(d));
        c.memarg(ALIGN[d], 0);
        return;
      }
      case "oload": {
        // A read of this launch's own output (in-place kernels): the offset is in range by construction.
        const d = this.p.outputs[e.buf]!;
        c.get(this.outPtr[e.buf]!);
        g(e.at);
        if (BYTES[d] > 1) c.i32(Math.log2(BYTES[d])).op(Op.i32_shl);
        c.op(Op.i32_add);
        c.op(
          d === "float32" ? Op.f32_load : d === "float64" ? Op.f64_load : d === "bool" ? X.i32_load8_u : Op.i32_load,
        );
        c.memarg(ALIGN[d], 0);
        return;
      }
      case "get":
        c.get(this.localSlot[e.local]!);
        return;
      case "unary":
        this.ops.unary(e.op, this.typeOf(e.x), () => g(e.x));
        return;
      case "binary":
        this.ops.binary(
          e.op,
          this.typeOf(e.a),
          () => g(e.a),
          () => g(e.b),
        );
        return;
      case "where":
        g(e.a);
        g(e.b);
        g(e.c);
        c.op(Op.select);
        return;
      case "cast":
        this.ops.cast(this.typeOf(e.x), t, () => g(e.x));
        return;
      case "idx":
        this.ops.idx(
          e.op,
          () => g(e.a),
          () => g(e.b),
        );
        return;
      case "param":
      case "builtin":
      case "bits":
      case "sload":
        return workgroupOnly(e.k);
      case "icmp":
        g(e.a);
        g(e.b);
        c.op(
          { lt: Op.i32_lt_s, le: Op.i32_le_s, gt: Op.i32_gt_s, ge: Op.i32_ge_s, eq: Op.i32_eq, ne: Op.i32_ne }[e.op],
        );
        return;
    }
    void id;
  }
}
