/** The four-lane body of a loop (see print.ts, Vectorisation) and the loops that run it. */
import type { DType } from "../../ir/dtype.js";
import { UnsupportedOpError } from "../../ir/errors.js";
import { deadAfter, type LExpr, type LStmt, type LType } from "../loop.js";
import { I32, Op, Simd, V128, type Code } from "./encoder.js";
import type { Host } from "./host.js";
import type { MathFn } from "./math.js";
import type { Printer } from "./scalar-body.js";
import type { Let, Loop, Shard } from "./shard.js";
import { SIMD_BINARY, simdBinary, simdUnary, type Lanes } from "./simd-ops.js";
import { X } from "./types.js";

/** i8x16.shuffle lanes: bytes 8-15 (float lanes 2-3) in both halves; the low halves of two vectors. */
const HIGH_HALF = [8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15];
const LOW_HALVES = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];

/** A check-free access: element offset base + coef·var (coef null: 1, contiguous lanes). */
interface FastAccess {
  readonly base: number;
  readonly coef: number | null;
}

/**
 * The four-lane loops of loop `s` over [lo, hi) (they advance lo; the scalar loop does
 * the rest): when every address is affine in the loop variable (`affineBases`), a
 * contiguous version (every coefficient 1) and a strided one (any coefficient >= 0), both
 * without per-access checks, chosen once before the loop; otherwise (and, with
 * `general`, when neither applies) the version that checks each access.
 */
export function vectorLoops(scalar: Printer, s: Loop, shard: Shard, lo: number, hi: number, general: boolean): void {
  const c = scalar.c;
  const fast = affineBases(scalar, s, shard.counter, lo, hi);
  const body = (f: ReadonlyMap<number, FastAccess> | null, copies = 1): void =>
    new VectorBody(scalar, c, s, shard, scalar.defs, scalar.math, scalar.host, f).emit(lo, hi, copies);
  if (fast === null) {
    if (general) body(null);
    return;
  }
  const contiguous = new Map([...fast.access].map(([at, a]) => [at, { base: a.base, coef: null }]));
  c.get(fast.okOne).op(Op.if).byte(0x40);
  // Contiguous: eight lanes per iteration, then four for what is left.
  body(contiguous, 2);
  body(contiguous);
  c.op(Op.else).get(fast.okStrided).op(Op.if).byte(0x40);
  body(fast.access);
  if (general) {
    c.op(Op.else);
    body(null);
  }
  c.op(Op.end).op(Op.end);
}

/**
 * For a loop's loads and stores: each address as base + coef * var with base and coef
 * computed before the loop (locals). `okOne`: every coef is 1 and every load's range
 * [base + lo, base + hi - 1] is inside its buffer; `okStrided`: every coef >= 0 and every
 * load's range [base + lo·coef, base + (hi-1)·coef] inside (ranges computed in float64,
 * so no int32 overflow can pass them). Null when some address is not of that form.
 */
function affineBases(
  scalar: Printer,
  s: Loop,
  counter: Shard["counter"],
  lo: number,
  hi: number,
): { access: Map<number, FastAccess>; okOne: number; okStrided: number } | null {
  type Aff = { base: () => void; coef: () => void } | null;
  const c = scalar.c;
  const inLoop = new Set<number>([s.var]);
  for (const st of s.body) if (st.k === "let") inLoop.add(st.id);
  const memo = new Map<number, Aff>();
  const counter0 = c.local(I32);
  if (counter !== null) {
    // The counter's value at iteration var is counter0 + (var - lo) * step.
    c.get(scalar.localSlotOf(counter.local)).get(lo).i32(counter.step).op(Op.i32_mul).op(Op.i32_sub).set(counter0);
  }
  const aff = (id: number): Aff => {
    if (memo.has(id)) return memo.get(id)!;
    let r: Aff = null;
    if (id === s.var) r = { base: () => void c.i32(0), coef: () => void c.i32(1) };
    else if (!inLoop.has(id)) r = { base: () => void c.get(scalar.scalarSlot(id)), coef: () => void c.i32(0) };
    else {
      const e = scalar.defs[id]!.e;
      if (e.k === "get" && counter !== null && e.local === counter.local)
        r = { base: () => void c.get(counter0), coef: () => void c.i32(counter.step) };
      else if (e.k === "idx" && (e.op === "add" || e.op === "sub")) {
        const a = aff(e.a);
        const b = aff(e.b);
        const o = e.op === "add" ? Op.i32_add : Op.i32_sub;
        if (a !== null && b !== null)
          r = {
            base: () => (a.base(), b.base(), void c.op(o)),
            coef: () => (a.coef(), b.coef(), void c.op(o)),
          };
      } else if (e.k === "idx" && e.op === "mul") {
        const [x, k] = inLoop.has(e.a) ? [e.a, e.b] : [e.b, e.a];
        const a = aff(x);
        if (a !== null && !inLoop.has(k))
          r = {
            base: () => (a.base(), c.get(scalar.scalarSlot(k)), void c.op(Op.i32_mul)),
            coef: () => (a.coef(), c.get(scalar.scalarSlot(k)), void c.op(Op.i32_mul)),
          };
      }
    }
    memo.set(id, r);
    return r;
  };
  const accesses: { at: number; input: number | null }[] = [];
  for (const st of s.body) {
    if (st.k === "store") accesses.push({ at: st.at, input: null });
    else if (st.k === "let" && st.e.k === "load") accesses.push({ at: st.e.at, input: st.e.buf });
  }
  if (accesses.some((a) => aff(a.at) === null)) return null;
  const access = new Map<number, FastAccess>();
  const okOne = c.local(I32);
  const okStrided = c.local(I32);
  c.i32(1).set(okOne).i32(1).set(okStrided);
  const f64 = (local: number): void => void c.get(local).op(Op.f64_convert_i32_s);
  for (const { at, input } of accesses) {
    const a = aff(at)!;
    let acc = access.get(at);
    if (acc === undefined) {
      const base = c.local(I32);
      const coef = c.local(I32);
      a.base();
      c.set(base);
      a.coef();
      c.set(coef);
      acc = { base, coef };
      access.set(at, acc);
    }
    const { base, coef } = acc;
    const coefLocal = coef!;
    c.get(okOne).get(coefLocal).i32(1).op(Op.i32_eq).op(Op.i32_and).set(okOne);
    c.get(okStrided).get(coefLocal).i32(0).op(Op.i32_ge_s).op(Op.i32_and).set(okStrided);
    if (input === null) continue;
    const max = scalar.inputMax(input);
    // [base + lo·k, base + (hi-1)·k] inside [0, max], or an empty range (lo >= hi).
    const inRange = (k: () => void): void => {
      (f64(base), f64(lo), k(), c.op(Op.f64_mul).op(Op.f64_add).f64c(0).op(Op.f64_ge));
      (f64(base), f64(hi), c.f64c(1).op(Op.f64_sub), k(), c.op(Op.f64_mul).op(Op.f64_add));
      (f64(max), c.op(Op.f64_le).op(Op.i32_and));
      c.get(lo).get(hi).op(Op.i32_ge_s).op(Op.i32_or);
    };
    (c.get(okOne), inRange(() => void c.f64c(1)), c.op(Op.i32_and).set(okOne));
    (c.get(okStrided), inRange(() => f64(coefLocal)), c.op(Op.i32_and).set(okStrided));
  }
  return { access, okOne, okStrided };
}

/**
 * The shard loop's straight-line body on four consecutive iterations: every value a
 * v128 (float32 lanes, or int32 lanes for int32, uint32, bool and index values).
 */
class VectorBody {
  private readonly slot = new Map<number, number>();
  /** float64 values: `slot` holds lanes 0-1 (an f64x2), `high` lanes 2-3. */
  private readonly high = new Map<number, number>();
  private readonly lanes: Lanes;

  constructor(
    private readonly scalar: Printer,
    private readonly c: Code,
    private readonly loop: Loop,
    private readonly shard: Shard,
    private readonly defs: readonly (Let | undefined)[],
    math: ReadonlyMap<MathFn, number>,
    host: Host,
    /**
     * Fast path: per address value, the local holding its base, when every address is
     * base + loop variable and every load stays inside its buffer (checked before the loop):
     * plain vector loads and stores, no per-access checks.
     */
    private readonly fast: ReadonlyMap<number, FastAccess> | null = null,
  ) {
    this.lanes = { c, math, host };
  }

  /** Values defined inside the loop get vector locals; outer ones are splatted when read. */
  private vec(id: number): void {
    const c = this.c;
    const s = this.slot.get(id);
    if (s !== undefined) return void c.get(s);
    // A value from outside the loop (a scalar): splat it.
    const t = this.defs[id]?.type ?? "index";
    if (t === "float64") throw new UnsupportedOpError("wasm: a float64 value has two halves (vec64)");
    c.get(this.scalar.scalarSlot(id)).simd(t === "float32" ? Simd.f32x4_splat : Simd.i32x4_splat);
  }

  /** Half `h` of a float64 value (lanes 0-1 or 2-3, an f64x2); an outer one (a scalar) is splatted. */
  private vec64(id: number, h: 0 | 1): void {
    const c = this.c;
    const s = (h === 0 ? this.slot : this.high).get(id);
    if (s !== undefined) return void c.get(s);
    c.get(this.scalar.scalarSlot(id)).simd(Simd.f64x2_splat);
  }

  /** Half `h` of float64 value `e` (see `float64Lanes` for what it may be). */
  private expr64(e: LExpr, h: 0 | 1): void {
    const c = this.c;
    if (e.k === "cast") {
      if (this.defs[e.x]?.type === "float64") return this.vec64(e.x, h);
      this.vec(e.x);
      if (h === 1) (this.vec(e.x), c.simd(Simd.i8x16_shuffle).bytes(HIGH_HALF));
      c.simd(Simd.f64x2_promote_low_f32x4);
      return;
    }
    if (e.k !== "binary") throw new UnsupportedOpError(`wasm: ${e.k} on float64 lanes`);
    (this.vec64(e.a, h), this.vec64(e.b, h));
    const o = SIMD_BINARY[e.op].f64;
    if (o === "scalar") throw new UnsupportedOpError(`wasm: ${e.op} on float64 lanes`);
    c.simd(o);
  }

  /**
   * while (lo + 4·copies <= hi) { `copies` times: body on lanes lo..lo+3; lo += 4 }.
   * Two copies per iteration give the CPU two independent chains of vector math to
   * overlap (measured on B1's printed kernel: 2-3% faster than one copy; 10-20% on a
   * hand-assembled kernel); the rest of the range is left to the caller's next loop.
   */
  emit(lo: number, hi: number, copies = 1): void {
    const c = this.c;
    const iv = this.scalar.scalarSlot(this.loop.var);
    c.op(Op.block).byte(0x40).op(Op.loop).byte(0x40);
    c.get(lo)
      .i32(4 * copies)
      .op(Op.i32_add)
      .get(hi)
      .op(Op.i32_gt_s)
      .op(Op.br_if)
      .u32(1);
    for (let k = 0; k < copies; k++) {
      // Each copy is the one-copy body as it stands: its own vector locals, the scalar
      // loop variable and the output counter advanced by the copy before.
      this.slot.clear();
      this.high.clear();
      const vv = c.keep(V128);
      this.slot.set(this.loop.var, vv);
      c.get(lo).set(iv);
      // The loop variable's lanes: lo, lo+1, lo+2, lo+3.
      c.get(lo).simd(Simd.i32x4_splat);
      c.v128(new Uint8Array(new Int32Array([0, 1, 2, 3]).buffer))
        .simd(Simd.i32x4_add)
        .set(vv);
      // A value's vector locals go back to the pool after its last use (the body is straight-line).
      const body = this.loop.body;
      const last = deadAfter(body);
      body.forEach((s, i) => {
        this.stmt(s);
        for (const id of last.get(i) ?? []) this.releaseSlot(id);
      });
      for (const id of [...this.slot.keys()]) this.releaseSlot(id);
      c.get(lo).i32(4).op(Op.i32_add).set(lo);
    }
    c.op(Op.br).u32(0);
    c.op(Op.end).op(Op.end);
  }

  /** Returns value `id`'s vector locals (both halves of a float64) to the pool. */
  private releaseSlot(id: number): void {
    const l = this.slot.get(id);
    if (l === undefined) return;
    this.c.release(l);
    this.slot.delete(id);
    const h = this.high.get(id);
    if (h !== undefined) (this.c.release(h), this.high.delete(id));
  }

  private stmt(s: LStmt): void {
    const c = this.c;
    switch (s.k) {
      case "let": {
        if (s.type === "float64") {
          const lo = c.keep(V128);
          const hi = c.keep(V128);
          (c.scoped(() => this.expr64(s.e, 0)), c.set(lo), c.scoped(() => this.expr64(s.e, 1)), c.set(hi));
          this.slot.set(s.id, lo);
          this.high.set(s.id, hi);
          return;
        }
        if (s.e.k === "get") {
          // The output counter: lane j holds counter + j * step.
          const step = this.shard.counter!.step;
          c.get(this.scalar.counterSlot()).simd(Simd.i32x4_splat);
          c.v128(new Uint8Array(new Int32Array([0, step, 2 * step, 3 * step]).buffer)).simd(Simd.i32x4_add);
        } else c.scoped(() => this.expr(s.type, s.e));
        const l = c.keep(V128);
        c.set(l);
        this.slot.set(s.id, l);
        return;
      }
      case "set": {
        // counter += 4 * step (the scalar counter, read by the next four lanes).
        const l = this.scalar.counterSlot();
        c.get(l)
          .i32(4 * this.shard.counter!.step)
          .op(Op.i32_add)
          .set(l);
        return;
      }
      case "store":
        this.store(s.buf, s.at, s.value);
        return;
      default:
        throw new UnsupportedOpError("wasm: a vectorised body holds only values and stores");
    }
  }

  private store(buf: number, at: number, value: number): void {
    const c = this.c;
    const d = this.scalarOutputType(buf);
    const ptr = this.scalar.outputPtr(buf);
    const fa = this.fast?.get(at);
    if (fa !== undefined && d !== "bool") {
      if (fa.coef === null) {
        this.fastAddress(ptr, fa);
        this.vec(value);
        c.simd(Simd.v128_store).memarg(0, 0);
        return;
      }
      // Strided: lane j at address a0 + j·coef·4.
      const a0 = c.local(I32);
      const step = c.local(I32);
      this.fastAddress(ptr, fa);
      c.set(a0).get(fa.coef).i32(2).op(Op.i32_shl).set(step);
      for (let j = 0; j < 4; j++) {
        c.get(a0);
        if (j > 0) c.get(step).i32(j).op(Op.i32_mul).op(Op.i32_add);
        this.vec(value);
        if (d === "float32") c.lane(Simd.f32x4_extract_lane, j).op(Op.f32_store).memarg(2, 0);
        else c.lane(Simd.i32x4_extract_lane, j).op(Op.i32_store).memarg(2, 0);
      }
      return;
    }
    const addr = c.local(V128);
    this.vec(at);
    c.set(addr);
    if (d === "bool") {
      for (let j = 0; j < 4; j++) {
        c.get(ptr).get(addr).lane(Simd.i32x4_extract_lane, j).op(Op.i32_add);
        this.vec(value);
        c.lane(Simd.i32x4_extract_lane, j).op(X.i32_store8).memarg(0, 0);
      }
      return;
    }
    // Consecutive offsets: one vector store; otherwise lane by lane.
    this.consecutive(addr);
    c.op(Op.if).byte(0x40);
    c.get(ptr).get(addr).lane(Simd.i32x4_extract_lane, 0).i32(2).op(Op.i32_shl).op(Op.i32_add);
    this.vec(value);
    c.simd(Simd.v128_store).memarg(0, 0);
    c.op(Op.else);
    for (let j = 0; j < 4; j++) {
      c.get(ptr).get(addr).lane(Simd.i32x4_extract_lane, j).i32(2).op(Op.i32_shl).op(Op.i32_add);
      this.vec(value);
      if (d === "float32") c.lane(Simd.f32x4_extract_lane, j).op(Op.f32_store).memarg(2, 0);
      else c.lane(Simd.i32x4_extract_lane, j).op(Op.i32_store).memarg(2, 0);
    }
    c.op(Op.end);
  }

  /** Pushes ptr + (base + coef·var)·4 for a check-free access (coef null: 1). */
  private fastAddress(ptr: number, fa: FastAccess): void {
    const c = this.c;
    c.get(ptr).get(fa.base).get(this.scalar.scalarSlot(this.loop.var));
    if (fa.coef !== null) c.get(fa.coef).op(Op.i32_mul);
    c.op(Op.i32_add).i32(2).op(Op.i32_shl).op(Op.i32_add);
  }

  private outputs: readonly DType[] | undefined;
  private scalarOutputType(buf: number): DType {
    return (this.outputs ??= this.scalar.p.outputs)[buf]!;
  }
  private inputType(buf: number): DType {
    return this.scalar.p.inputs[buf]!;
  }

  /** Pushes whether the four offsets in local `addr` are a0, a0+1, a0+2, a0+3. */
  private consecutive(addr: number): void {
    const c = this.c;
    c.get(addr);
    c.get(addr).lane(Simd.i32x4_extract_lane, 0).simd(Simd.i32x4_splat);
    c.v128(new Uint8Array(new Int32Array([0, 1, 2, 3]).buffer)).simd(Simd.i32x4_add);
    c.simd(Simd.i32x4_eq).simd(Simd.i32x4_all_true);
  }

  private expr(t: LType, e: LExpr): void {
    const c = this.c;
    const typeOf = (id: number): LType => this.defs[id]?.type ?? "index";
    const v = (id: number): void => this.vec(id);
    switch (e.k) {
      case "size":
      case "stride":
      case "const":
      case "lit":
        throw new UnsupportedOpError("wasm: loop-invariant values are defined outside the loop");
      case "get":
        throw new UnsupportedOpError("wasm: counter reads are handled by the statement");
      case "load": {
        const d = this.inputType(e.buf);
        const ptr = this.scalar.inputPtr(e.buf);
        const fa = this.fast?.get(e.at);
        if (fa !== undefined && d !== "bool") {
          if (fa.coef === null) {
            this.fastAddress(ptr, fa);
            c.simd(Simd.v128_load).memarg(0, 0);
            return;
          }
          // Strided: lane j from address a0 + j·coef·4.
          const a0 = c.local(I32);
          const step = c.local(I32);
          const r = c.local(V128);
          this.fastAddress(ptr, fa);
          c.set(a0).get(fa.coef).i32(2).op(Op.i32_shl).set(step);
          const ld = (): void =>
            void (d === "float32" ? c.op(Op.f32_load).memarg(2, 0) : c.op(Op.i32_load).memarg(2, 0));
          c.get(a0);
          ld();
          c.simd(d === "float32" ? Simd.f32x4_splat : Simd.i32x4_splat).set(r);
          for (let j = 1; j < 4; j++) {
            c.get(r).get(a0).get(step).i32(j).op(Op.i32_mul).op(Op.i32_add);
            ld();
            c.lane(d === "float32" ? Simd.f32x4_replace_lane : Simd.i32x4_replace_lane, j).set(r);
          }
          c.get(r);
          return;
        }
        const addr = c.local(V128);
        // Clamped offsets (unsigned min with the largest valid offset).
        v(e.at);
        c.get(this.scalar.inputMax(e.buf)).simd(Simd.i32x4_splat).simd(0xb7 /* i32x4.min_u */);
        c.set(addr);
        const res = c.local(V128);
        if (d === "bool") {
          c.i32x4c(0).set(res);
          for (let j = 0; j < 4; j++) {
            c.get(res).get(ptr).get(addr).lane(Simd.i32x4_extract_lane, j).op(Op.i32_add);
            c.op(X.i32_load8_u).memarg(0, 0).lane(Simd.i32x4_replace_lane, j).set(res);
          }
          c.get(res);
          return;
        }
        this.consecutive(addr);
        c.op(Op.if).byte(V128);
        c.get(ptr).get(addr).lane(Simd.i32x4_extract_lane, 0).i32(2).op(Op.i32_shl).op(Op.i32_add);
        c.simd(Simd.v128_load).memarg(0, 0);
        c.op(Op.else);
        // Same offset in every lane (a broadcast input): one load, splatted; else a gather.
        c.get(addr)
          .get(addr)
          .lane(Simd.i32x4_extract_lane, 0)
          .simd(Simd.i32x4_splat)
          .simd(Simd.i32x4_eq)
          .simd(Simd.i32x4_all_true);
        c.op(Op.if).byte(V128);
        c.get(ptr).get(addr).lane(Simd.i32x4_extract_lane, 0).i32(2).op(Op.i32_shl).op(Op.i32_add);
        if (d === "float32") c.op(Op.f32_load).memarg(2, 0).simd(Simd.f32x4_splat);
        else c.op(Op.i32_load).memarg(2, 0).simd(Simd.i32x4_splat);
        c.op(Op.else);
        c.i32x4c(0).set(res);
        for (let j = 0; j < 4; j++) {
          c.get(res).get(ptr).get(addr).lane(Simd.i32x4_extract_lane, j).i32(2).op(Op.i32_shl).op(Op.i32_add);
          if (d === "float32") c.op(Op.f32_load).memarg(2, 0).lane(Simd.f32x4_replace_lane, j);
          else c.op(Op.i32_load).memarg(2, 0).lane(Simd.i32x4_replace_lane, j);
          c.set(res);
        }
        c.get(res);
        c.op(Op.end);
        c.op(Op.end);
        return;
      }
      case "unary":
        return simdUnary(this.lanes, e.op, typeOf(e.x), () => v(e.x));
      case "binary":
        return simdBinary(
          this.lanes,
          e.op,
          typeOf(e.a),
          () => v(e.a),
          () => v(e.b),
        );
      case "where":
        // bool lanes are 0/1: a mask is 0 - c.
        (v(e.a), v(e.b), c.i32x4c(0), v(e.c), c.simd(Simd.i32x4_sub).simd(Simd.v128_bitselect));
        return;
      case "cast": {
        const from = typeOf(e.x);
        if (from === "float64") {
          // float32 (what `float64Lanes` admits): both halves demoted, put together.
          (this.vec64(e.x, 0), c.simd(Simd.f32x4_demote_f64x2_zero));
          (this.vec64(e.x, 1), c.simd(Simd.f32x4_demote_f64x2_zero));
          c.simd(Simd.i8x16_shuffle).bytes(LOW_HALVES);
          return;
        }
        v(e.x);
        if (from === t) return;
        if (t === "bool") {
          if (from === "float32") c.f32x4c(0).simd(Simd.f32x4_ne);
          else c.i32x4c(0).simd(Simd.i32x4_ne);
          c.i32x4c(1).simd(Simd.v128_and);
          return;
        }
        if (t === "float32") {
          if (from === "uint32") {
            // Lane by lane (no unsigned convert in SIMD128).
            const s = c.local(V128);
            c.set(s).get(s);
            for (let j = 0; j < 4; j++) {
              c.get(s).lane(Simd.i32x4_extract_lane, j).op(X.f32_convert_i32_u).lane(Simd.f32x4_replace_lane, j);
            }
            return;
          }
          c.simd(Simd.f32x4_convert_i32x4_s);
          return;
        }
        // integer -> integer: same bits.
        return;
      }
      case "idx":
        (v(e.a), v(e.b));
        c.simd(
          {
            add: Simd.i32x4_add,
            sub: Simd.i32x4_sub,
            mul: Simd.i32x4_mul,
            min: Simd.i32x4_min_s,
            max: Simd.i32x4_max_s,
            div: -1,
            mod: -1,
          }[e.op],
        );
        return;
      case "icmp":
        (v(e.a), v(e.b));
        c.simd(
          {
            lt: Simd.i32x4_lt_s,
            le: Simd.i32x4_le_s,
            gt: Simd.i32x4_gt_s,
            ge: Simd.i32x4_ge_s,
            eq: Simd.i32x4_eq,
            ne: Simd.i32x4_ne,
          }[e.op],
        );
        c.i32x4c(1).simd(Simd.v128_and);
        return;
    }
  }
}
