/**
 * A small WebAssembly binary encoder: LEB128 numbers, the sections a kernel
 * module needs (type, import, function, export, code) and the opcodes the
 * kernel printer and the vector math library use, SIMD128 included (the 0xFD
 * prefix). No toolchain runs at run time: the library builds module bytes with
 * this and hands them to `WebAssembly.Module`.
 *
 * Why not an npm package: `@webassemblyjs/wasm-gen` pulls in an AST package
 * graph, `watr` compiles WebAssembly text (a printer and a parser in the
 * bundle), `wasmati` is a typed DSL with its own dependency. What a kernel
 * needs is a few hundred lines, so it is written here.
 *
 * The format is the WebAssembly core specification's binary format (section
 * "Binary Format") and the SIMD proposal's opcode table, now part of the core.
 */

/** Value types. */
export const I32 = 0x7f;
export const I64 = 0x7e;
export const F32 = 0x7d;
export const F64 = 0x7c;
export const V128 = 0x7b;
export type ValType = typeof I32 | typeof I64 | typeof F32 | typeof F64 | typeof V128;
/** The block type of a block that yields nothing. */
export const VOID = 0x40;

/** A growable byte buffer with the binary format's primitive encodings. */
export class Bytes {
  private buf = new Uint8Array(256);
  length = 0;

  private room(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.length + n) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  byte(b: number): this {
    this.room(1);
    this.buf[this.length++] = b & 0xff;
    return this;
  }

  bytes(bs: ArrayLike<number>): this {
    this.room(bs.length);
    this.buf.set(bs, this.length);
    this.length += bs.length;
    return this;
  }

  /** Unsigned LEB128 of a non-negative integer below 2^53. */
  u32(v: number): this {
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`wasm encoder: u32 ${v}`);
    do {
      let b = v % 128;
      v = Math.floor(v / 128);
      if (v !== 0) b |= 0x80;
      this.byte(b);
    } while (v !== 0);
    return this;
  }

  /** Signed LEB128 of a 32-bit integer (as `i32.const` takes). */
  s32(v: number): this {
    v |= 0;
    for (;;) {
      const b = v & 0x7f;
      v >>= 7;
      const done = (v === 0 && (b & 0x40) === 0) || (v === -1 && (b & 0x40) !== 0);
      this.byte(done ? b : b | 0x80);
      if (done) return this;
    }
  }

  /** Signed LEB128 of a 64-bit integer. */
  s64(v: bigint): this {
    v = BigInt.asIntN(64, v);
    for (;;) {
      const b = Number(v & 0x7fn);
      v >>= 7n;
      const done = (v === 0n && (b & 0x40) === 0) || (v === -1n && (b & 0x40) !== 0);
      this.byte(done ? b : b | 0x80);
      if (done) return this;
    }
  }

  f32(v: number): this {
    const a = new Uint8Array(4);
    new DataView(a.buffer).setFloat32(0, v, true);
    return this.bytes(a);
  }

  f64(v: number): this {
    const a = new Uint8Array(8);
    new DataView(a.buffer).setFloat64(0, v, true);
    return this.bytes(a);
  }

  /** A name: its UTF-8 length and bytes. */
  name(s: string): this {
    const u = new TextEncoder().encode(s);
    return this.u32(u.length).bytes(u);
  }

  /** A length-prefixed copy of another buffer (a section or function body). */
  sized(inner: Bytes): this {
    return this.u32(inner.length).bytes(inner.view());
  }

  view(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }

  toUint8Array(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

/** Core (single-byte) opcodes. */
export const Op = {
  unreachable: 0x00,
  nop: 0x01,
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  else: 0x05,
  end: 0x0b,
  br: 0x0c,
  br_if: 0x0d,
  return: 0x0f,
  call: 0x10,
  drop: 0x1a,
  select: 0x1b,
  local_get: 0x20,
  local_set: 0x21,
  local_tee: 0x22,
  i32_load: 0x28,
  i64_load: 0x29,
  f32_load: 0x2a,
  f64_load: 0x2b,
  i32_store: 0x36,
  i64_store: 0x37,
  f32_store: 0x38,
  f64_store: 0x39,
  memory_size: 0x3f,
  memory_grow: 0x40,
  i32_const: 0x41,
  i64_const: 0x42,
  f32_const: 0x43,
  f64_const: 0x44,
  i32_eqz: 0x45,
  i32_eq: 0x46,
  i32_ne: 0x47,
  i32_lt_s: 0x48,
  i32_lt_u: 0x49,
  i32_gt_s: 0x4a,
  i32_gt_u: 0x4b,
  i32_le_s: 0x4c,
  i32_le_u: 0x4d,
  i32_ge_s: 0x4e,
  i32_ge_u: 0x4f,
  f32_eq: 0x5b,
  f32_ne: 0x5c,
  f32_lt: 0x5d,
  f32_gt: 0x5e,
  f32_le: 0x5f,
  f32_ge: 0x60,
  f64_eq: 0x61,
  f64_ne: 0x62,
  f64_lt: 0x63,
  f64_gt: 0x64,
  f64_le: 0x65,
  f64_ge: 0x66,
  i32_add: 0x6a,
  i32_sub: 0x6b,
  i32_mul: 0x6c,
  i32_div_s: 0x6d,
  i32_div_u: 0x6e,
  i32_rem_s: 0x6f,
  i32_rem_u: 0x70,
  i32_and: 0x71,
  i32_or: 0x72,
  i32_xor: 0x73,
  i32_shl: 0x74,
  i32_shr_s: 0x75,
  i32_shr_u: 0x76,
  f32_abs: 0x8b,
  f32_neg: 0x8c,
  f32_sqrt: 0x91,
  f32_add: 0x92,
  f32_sub: 0x93,
  f32_mul: 0x94,
  f32_div: 0x95,
  f64_abs: 0x99,
  f64_neg: 0x9a,
  f64_ceil: 0x9b,
  f64_floor: 0x9c,
  f64_trunc: 0x9d,
  f64_nearest: 0x9e,
  f64_sqrt: 0x9f,
  f64_add: 0xa0,
  f64_sub: 0xa1,
  f64_mul: 0xa2,
  f64_div: 0xa3,
  f64_min: 0xa4,
  f64_max: 0xa5,
  i32_trunc_f64_s: 0xaa,
  f32_demote_f64: 0xb6,
  f64_convert_i32_s: 0xb7,
  f64_convert_i32_u: 0xb8,
  f64_promote_f32: 0xbb,
  i32_reinterpret_f32: 0xbc,
  f32_reinterpret_i32: 0xbe,
} as const;

/** SIMD128 opcodes (after the 0xFD prefix, as an unsigned LEB128). */
export const Simd = {
  v128_load: 0x00,
  v128_store: 0x0b,
  v128_const: 0x0c,
  i8x16_shuffle: 0x0d,
  i32x4_splat: 0x11,
  i64x2_splat: 0x12,
  f32x4_splat: 0x13,
  f64x2_splat: 0x14,
  i32x4_extract_lane: 0x1b,
  i32x4_replace_lane: 0x1c,
  f32x4_extract_lane: 0x1f,
  f32x4_replace_lane: 0x20,
  f64x2_extract_lane: 0x21,
  f64x2_replace_lane: 0x22,
  i32x4_eq: 0x37,
  i32x4_ne: 0x38,
  i32x4_lt_s: 0x39,
  i32x4_lt_u: 0x3a,
  i32x4_gt_s: 0x3b,
  i32x4_gt_u: 0x3c,
  i32x4_le_s: 0x3d,
  i32x4_ge_s: 0x3f,
  f32x4_eq: 0x41,
  f32x4_ne: 0x42,
  f32x4_lt: 0x43,
  f32x4_gt: 0x44,
  f32x4_le: 0x45,
  f32x4_ge: 0x46,
  f64x2_eq: 0x47,
  f64x2_ne: 0x48,
  f64x2_lt: 0x49,
  f64x2_gt: 0x4a,
  f64x2_le: 0x4b,
  f64x2_ge: 0x4c,
  v128_not: 0x4d,
  v128_and: 0x4e,
  v128_andnot: 0x4f,
  v128_or: 0x50,
  v128_xor: 0x51,
  v128_bitselect: 0x52,
  v128_any_true: 0x53,
  f32x4_demote_f64x2_zero: 0x5e,
  f64x2_promote_low_f32x4: 0x5f,
  f32x4_ceil: 0x67,
  f32x4_floor: 0x68,
  f32x4_trunc: 0x69,
  f32x4_nearest: 0x6a,
  f64x2_ceil: 0x74,
  f64x2_floor: 0x75,
  f64x2_trunc: 0x7a,
  f64x2_nearest: 0x94,
  i32x4_all_true: 0xa3,
  i32x4_bitmask: 0xa4,
  i32x4_shl: 0xab,
  i32x4_shr_s: 0xac,
  i32x4_shr_u: 0xad,
  i32x4_add: 0xae,
  i32x4_sub: 0xb1,
  i32x4_mul: 0xb5,
  i32x4_min_s: 0xb6,
  i32x4_max_s: 0xb8,
  i64x2_extend_low_i32x4_s: 0xc7,
  i64x2_shl: 0xcb,
  i64x2_shr_s: 0xcc,
  i64x2_shr_u: 0xcd,
  i64x2_add: 0xce,
  i64x2_sub: 0xd1,
  i64x2_mul: 0xd5,
  f32x4_abs: 0xe0,
  f32x4_neg: 0xe1,
  f32x4_sqrt: 0xe3,
  f32x4_add: 0xe4,
  f32x4_sub: 0xe5,
  f32x4_mul: 0xe6,
  f32x4_div: 0xe7,
  f32x4_min: 0xe8,
  f32x4_max: 0xe9,
  f32x4_pmin: 0xea,
  f32x4_pmax: 0xeb,
  f64x2_abs: 0xec,
  f64x2_neg: 0xed,
  f64x2_sqrt: 0xef,
  f64x2_add: 0xf0,
  f64x2_sub: 0xf1,
  f64x2_mul: 0xf2,
  f64x2_div: 0xf3,
  f64x2_min: 0xf4,
  f64x2_max: 0xf5,
  i32x4_trunc_sat_f32x4_s: 0xf8,
  f32x4_convert_i32x4_s: 0xfa,
  i32x4_trunc_sat_f64x2_s_zero: 0xfc,
  f64x2_convert_low_i32x4_s: 0xfe,
} as const;

/** One function body: its extra locals and its instruction bytes. */
export class Code extends Bytes {
  /** Declared locals after the parameters, in order. */
  readonly locals: ValType[] = [];

  constructor(private readonly nParams: number) {
    super();
  }

  /** Released locals by type, reused before a new one is declared. */
  private readonly free = new Map<ValType, number[]>();
  /** The locals taken inside each open `scoped` call, released when it ends. */
  private readonly scopes: number[][] = [];

  /**
   * A local of type `t` (a released one if there is one); returns its index. Inside
   * `scoped`, it is released when the scope ends: the temporaries of one expression.
   */
  local(t: ValType): number {
    const i = this.keep(t);
    this.scopes[this.scopes.length - 1]?.push(i);
    return i;
  }

  /** A local of type `t` that no scope releases (a value's slot): the caller releases it, or never. */
  keep(t: ValType): number {
    const reused = this.free.get(t)?.pop();
    if (reused !== undefined) return reused;
    this.locals.push(t);
    return this.nParams + this.locals.length - 1;
  }

  /**
   * Makes local `i` available again. Its value must be dead: a reused local is not
   * zeroed, so every use of a local must follow a set of it (as every rule does).
   * Fewer locals keep V8's compile time linear in the body: its baseline compiler
   * copies the state of every local at each branch merge.
   */
  release(i: number): void {
    const t = this.locals[i - this.nParams]!;
    let pool = this.free.get(t);
    if (pool === undefined) this.free.set(t, (pool = []));
    pool.push(i);
  }

  /** Runs `f` (one expression's emission); the locals it takes with `local` are released afterwards. */
  scoped<T>(f: () => T): T {
    this.scopes.push([]);
    try {
      return f();
    } finally {
      for (const i of this.scopes.pop()!) this.release(i);
    }
  }

  op(o: number): this {
    return this.byte(o);
  }

  simd(o: number): this {
    return this.byte(0xfd).u32(o);
  }

  /** A memory access's alignment (log2 bytes) and offset. */
  memarg(align: number, offset = 0): this {
    return this.u32(align).u32(offset);
  }

  get(i: number): this {
    return this.byte(Op.local_get).u32(i);
  }

  set(i: number): this {
    return this.byte(Op.local_set).u32(i);
  }

  tee(i: number): this {
    return this.byte(Op.local_tee).u32(i);
  }

  i32(v: number): this {
    return this.byte(Op.i32_const).s32(v);
  }

  f32c(v: number): this {
    return this.byte(Op.f32_const).f32(v);
  }

  f64c(v: number): this {
    return this.byte(Op.f64_const).f64(v);
  }

  /** v128.const from 16 bytes. */
  v128(bytes: Uint8Array): this {
    return this.simd(Simd.v128_const).bytes(bytes);
  }

  /** v128.const with four copies of a float32. */
  f32x4c(v: number): this {
    const a = new Float32Array([v, v, v, v]);
    return this.v128(new Uint8Array(a.buffer));
  }

  /** v128.const with four copies of an int32 bit pattern. */
  i32x4c(v: number): this {
    const a = new Int32Array([v, v, v, v]);
    return this.v128(new Uint8Array(a.buffer));
  }

  /** v128.const with two copies of a float64. */
  f64x2c(v: number): this {
    const a = new Float64Array([v, v]);
    return this.v128(new Uint8Array(a.buffer));
  }

  /** v128.const with two copies of an int64. */
  i64x2c(v: bigint): this {
    const a = new BigInt64Array([v, v]);
    return this.v128(new Uint8Array(a.buffer));
  }

  lane(o: number, lane: number): this {
    return this.simd(o).byte(lane);
  }

  /** The encoded body: local declarations (run-length by type), code, `end`. */
  body(): Bytes {
    const out = new Bytes();
    const runs: [number, ValType][] = [];
    for (const t of this.locals) {
      const last = runs[runs.length - 1];
      if (last !== undefined && last[1] === t) last[0]++;
      else runs.push([1, t]);
    }
    out.u32(runs.length);
    for (const [n, t] of runs) out.u32(n).byte(t);
    out.bytes(this.view());
    out.byte(Op.end);
    return out;
  }
}

export interface FuncType {
  readonly params: readonly ValType[];
  readonly results: readonly ValType[];
}

export interface MemoryImport {
  readonly module: string;
  readonly name: string;
  /** Initial and maximum size in 64 KiB pages. */
  readonly initial: number;
  readonly maximum?: number;
  readonly shared?: boolean;
}

interface FuncImport {
  readonly module: string;
  readonly name: string;
  readonly type: number;
}

interface Func {
  readonly type: number;
  readonly code: Code;
  readonly export?: string;
}

/**
 * A module under construction: function types are interned, imported functions
 * come first in the function index space, then defined ones.
 */
export class ModuleBuilder {
  private readonly types: FuncType[] = [];
  private readonly typeKeys = new Map<string, number>();
  private readonly funcImports: FuncImport[] = [];
  private readonly funcs: Func[] = [];
  private memory: MemoryImport | undefined;
  private frozenImports = false;

  /** The index of a function type (interned). */
  type(params: readonly ValType[], results: readonly ValType[]): number {
    const key = `${params.join(",")}>${results.join(",")}`;
    let i = this.typeKeys.get(key);
    if (i === undefined) {
      i = this.types.length;
      this.types.push({ params, results });
      this.typeKeys.set(key, i);
    }
    return i;
  }

  /** Imports the module's one linear memory. */
  importMemory(m: MemoryImport): this {
    this.memory = m;
    return this;
  }

  /** Imports a host function; must come before any `func`. Returns its function index. */
  importFunc(module: string, name: string, params: readonly ValType[], results: readonly ValType[]): number {
    if (this.frozenImports) throw new Error("wasm encoder: imports must be declared before functions");
    this.funcImports.push({ module, name, type: this.type(params, results) });
    return this.funcImports.length - 1;
  }

  /** The function index the next `func` call will get (for recursion and forward calls). */
  nextFuncIndex(): number {
    return this.funcImports.length + this.funcs.length;
  }

  /**
   * Declares a function; `build` fills its body (parameters are locals 0..n-1).
   * Returns its function index.
   */
  func(params: readonly ValType[], results: readonly ValType[], build: (c: Code) => void, exportName?: string): number {
    this.frozenImports = true;
    const code = new Code(params.length);
    const index = this.nextFuncIndex();
    this.funcs.push({
      type: this.type(params, results),
      code,
      ...(exportName !== undefined ? { export: exportName } : {}),
    });
    build(code);
    return index;
  }

  /** The module's bytes. */
  encode(): Uint8Array {
    const out = new Bytes();
    out.bytes([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
    const section = (id: number, fill: (s: Bytes) => void): void => {
      const s = new Bytes();
      fill(s);
      out.byte(id).sized(s);
    };
    section(1, (s) => {
      s.u32(this.types.length);
      for (const t of this.types) {
        s.byte(0x60).u32(t.params.length).bytes(t.params).u32(t.results.length).bytes(t.results);
      }
    });
    const nImports = this.funcImports.length + (this.memory ? 1 : 0);
    if (nImports > 0) {
      section(2, (s) => {
        s.u32(nImports);
        if (this.memory) {
          const m = this.memory;
          s.name(m.module).name(m.name).byte(0x02);
          const flags = (m.maximum !== undefined ? 1 : 0) | (m.shared ? 2 : 0);
          s.byte(flags).u32(m.initial);
          if (m.maximum !== undefined) s.u32(m.maximum);
        }
        for (const f of this.funcImports) s.name(f.module).name(f.name).byte(0x00).u32(f.type);
      });
    }
    section(3, (s) => {
      s.u32(this.funcs.length);
      for (const f of this.funcs) s.u32(f.type);
    });
    const exported = this.funcs.map((f, i) => [f.export, i] as const).filter(([e]) => e !== undefined);
    section(7, (s) => {
      s.u32(exported.length);
      for (const [name, i] of exported)
        s.name(name!)
          .byte(0x00)
          .u32(this.funcImports.length + i);
    });
    section(10, (s) => {
      s.u32(this.funcs.length);
      for (const f of this.funcs) s.sized(f.code.body());
    });
    return out.toUint8Array();
  }
}
