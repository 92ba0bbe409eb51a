/**
 * The unrolling machine: runs a routine of ir/routines.ts (the same algorithm the
 * looped kernels and the reference interpreter run) at graph-build time over matrix
 * components, so that a small matrix's routine becomes straight-line graph code
 * (one kernel per call after fusion) instead of a loop.
 *
 * - Floats are components (`Sc`, src/linalg/scalar.ts): tensors, or structural
 *   constants that fold (a product with a structural 0 is 0, as `Alg` does).
 * - Indices are numbers while they are known when the graph is built (every loop
 *   index: loops over static bounds unroll). An index that depends on the data (a
 *   pivot row) is a `Dyn`: an int32 tensor `root` with the value `root·scale + off`
 *   known to lie in [lo, hi]; a load or a store at it picks among the candidate rows
 *   with `where`, as a hand-unrolled pivot search does.
 * - Bools are booleans (then `when` runs one branch) or bool tensors: `when` then
 *   runs both branches (predication) and merges the stores and locals they changed
 *   with `where`. Inside a branch on `p != k` the machine assumes it, so loads and
 *   stores at `p` skip candidate k, and a merge whose value already holds the old one
 *   when the condition is false (a store at `p` under `p != k`) adds no `where`.
 * - The Jacobi routines run in their fixed-sweep form (`RoutineSpec.fixedSweeps`):
 *   every sweep, no convergence branch; between two sweeps the state may pass through
 *   a buffer (`Between`).
 */
import type { DType } from "../../ir/dtype.js";
import { runRoutine, type Machine, type RoutineSpec, type Var } from "../../ir/routines.js";
import { Tensor, where } from "../tensor.js";
import { Alg, type Sc } from "./scalar.js";

/** A data-dependent index: `root·scale + off` (root an int32 tensor, scale > 0), within [lo, hi]. */
interface Dyn {
  readonly root: Tensor;
  readonly scale: number;
  readonly off: number;
  readonly lo: number;
  readonly hi: number;
}

/**
 * The Jacobi routines' state between sweeps: the output entries `at` pass through
 * `store` (src/linalg/jacobi.ts's `Store`: components out, the same read back from a buffer).
 */
export interface Between {
  readonly at: readonly number[];
  readonly store: (xs: readonly Sc[]) => Sc[];
}

/** An index: known when the graph is built, or data-dependent. */
export type Ix = number | Dyn;
/** A bool: known when the graph is built, or a bool tensor. */
export type Bo = boolean | Tensor;

/** What a condition tensor says about an index root: `root == v` (eq) or `root != v`. */
interface Fact {
  readonly root: Tensor;
  readonly eq: boolean;
  readonly v: number;
}

interface Frame {
  readonly mem: Map<number, Sc>;
  readonly fvars: Map<Local<Sc>, Sc>;
  readonly ivars: Map<Local<Ix>, Ix>;
}

class Local<T> implements Var<T> {
  constructor(
    private x: T,
    /** Records the value before a branch first sets it. */
    private readonly log: (v: Local<T>, old: T) => void,
  ) {}
  get(): T {
    return this.x;
  }
  set(v: T): void {
    this.log(this, this.x);
    this.x = v;
  }
  /** Sets without logging (restoring after a branch). */
  reset(v: T): void {
    this.x = v;
  }
}

const isDyn = (i: Ix): i is Dyn => typeof i !== "number";

/** The machine; `out` holds the output block after `runRoutine`. */
export class Unroller implements Machine<Sc, Ix, Bo> {
  readonly alg: Alg;
  readonly out: Sc[];
  private readonly frames: Frame[] = [];
  private readonly assumed: Fact[] = [];
  private readonly facts: WeakMap<Tensor, Fact>;
  private readonly wheres: WeakMap<Tensor, { c: Tensor; a: Sc; b: Sc }>;
  private readonly conds: WeakMap<Tensor, Map<string, Tensor>>;
  private readonly indexOf: WeakMap<Tensor, Dyn>;
  /** `|x|` results, and the conditions `|x| > 0`, `isnan(|x|)` and their `or` (see `sel`). */
  private readonly absolute = new WeakSet<Tensor>();
  private readonly positive = new WeakMap<Tensor, Tensor>();
  private readonly nan = new WeakMap<Tensor, Tensor>();
  private readonly positiveOrNaN = new WeakMap<Tensor, Tensor>();

  /** `after`: a machine whose results are among the inputs (its pivots stay known indices). */
  constructor(
    readonly dtype: DType,
    private readonly inputs: readonly (readonly Sc[])[],
    size: number,
    after?: Unroller,
    private readonly between?: Between,
  ) {
    this.alg = new Alg(dtype);
    this.out = Array<Sc>(size).fill(0);
    this.facts = after?.facts ?? new WeakMap();
    this.wheres = after?.wheres ?? new WeakMap();
    this.conds = after?.conds ?? new WeakMap();
    this.indexOf = after?.indexOf ?? new WeakMap();
  }

  /** Records that the component `f` holds the index `root - 1` (1-based pivots given as int32 tensors). */
  oneBased(f: Tensor): void {
    this.indexOf.set(f, { root: f, scale: 1, off: -1, lo: -Infinity, hi: Infinity });
  }

  // Floats.
  f(v: number): Sc {
    return v;
  }
  add(a: Sc, b: Sc): Sc {
    return this.alg.add(a, b);
  }
  sub(a: Sc, b: Sc): Sc {
    return this.alg.sub(a, b);
  }
  mul(a: Sc, b: Sc): Sc {
    return this.alg.mul(a, b);
  }
  div(a: Sc, b: Sc): Sc {
    return this.alg.div(a, b);
  }
  neg(a: Sc): Sc {
    return this.alg.neg(a);
  }
  abs(a: Sc): Sc {
    const r = this.alg.abs(a);
    if (typeof r !== "number") this.absolute.add(r);
    return r;
  }
  sqrt(a: Sc): Sc {
    return this.alg.sqrt(a);
  }
  private cmp(a: Sc, b: Sc, op: "lt" | "le" | "gt" | "ge" | "eq"): Bo {
    if (typeof a === "number" && typeof b === "number") {
      return op === "lt" ? a < b : op === "le" ? a <= b : op === "gt" ? a > b : op === "ge" ? a >= b : a === b;
    }
    if (typeof a === "number") {
      const flip = { lt: "gt", le: "ge", gt: "lt", ge: "le", eq: "eq" } as const;
      return (b as Tensor)[flip[op]](a);
    }
    return a[op](b);
  }
  lt(a: Sc, b: Sc): Bo {
    return this.cmp(a, b, "lt");
  }
  le(a: Sc, b: Sc): Bo {
    return this.cmp(a, b, "le");
  }
  gt(a: Sc, b: Sc): Bo {
    const c = this.cmp(a, b, "gt");
    if (b === 0 && typeof a !== "number" && typeof c !== "boolean" && this.absolute.has(a)) this.positive.set(c, a);
    return c;
  }
  ge(a: Sc, b: Sc): Bo {
    return this.cmp(a, b, "ge");
  }
  eq(a: Sc, b: Sc): Bo {
    return this.cmp(a, b, "eq");
  }
  isnan(a: Sc): Bo {
    if (typeof a === "number") return Number.isNaN(a);
    const c = a.isNan();
    this.nan.set(c, a);
    return c;
  }

  // Bools.
  not(a: Bo): Bo {
    if (typeof a === "boolean") return !a;
    const f = this.facts.get(a);
    return f === undefined ? a.logicalNot() : this.rootCond(f.root, f.v, !f.eq);
  }
  and(a: Bo, b: Bo): Bo {
    if (typeof a === "boolean") return a ? b : false;
    if (typeof b === "boolean") return b ? a : false;
    return a.logicalAnd(b);
  }
  or(a: Bo, b: Bo): Bo {
    if (typeof a === "boolean") return a ? true : b;
    if (typeof b === "boolean") return b ? true : a;
    const c = a.logicalOr(b);
    const x = this.positive.get(a);
    if (x !== undefined && this.nan.get(b) === x) this.positiveOrNaN.set(c, x);
    return c;
  }
  sel(c: Bo, a: Sc, b: Sc): Sc {
    if (typeof c === "boolean") return c ? a : b;
    if (a === b) return a;
    // The NaN-spreading max of |x| and a structural 0 (`|x| > 0 || isnan(|x|) ? |x| : 0`) is |x|.
    if (b === 0 && this.positiveOrNaN.get(c) === a) return a;
    const w = where(c, this.alg.t(a), this.alg.t(b));
    this.wheres.set(w, { c, a, b });
    return w;
  }

  // Indices.
  i(v: number): Ix {
    return v;
  }
  /** An index as an int32 tensor. */
  intOf(i: Ix): Tensor {
    if (!isDyn(i)) return Tensor._const(i, "int32");
    let t = i.root;
    if (i.scale !== 1) t = t.mul(i.scale);
    if (i.off !== 0) t = t.add(i.off);
    return t;
  }
  private fresh(root: Tensor, lo: number, hi: number): Dyn {
    return { root, scale: 1, off: 0, lo, hi };
  }
  isel(c: Bo, a: Ix, b: Ix): Ix {
    if (typeof c === "boolean") return c ? a : b;
    if (a === b) return a;
    const lo = Math.min(isDyn(a) ? a.lo : a, isDyn(b) ? b.lo : b);
    const hi = Math.max(isDyn(a) ? a.hi : a, isDyn(b) ? b.hi : b);
    return this.fresh(where(c, this.intOf(a), this.intOf(b)), lo, hi);
  }
  iadd(a: Ix, b: Ix): Ix {
    if (!isDyn(a) && !isDyn(b)) return a + b;
    if (!isDyn(a)) return this.iadd(b, a);
    if (!isDyn(b)) return { ...a, off: a.off + b, lo: a.lo + b, hi: a.hi + b };
    return this.fresh(this.intOf(a).add(this.intOf(b)), a.lo + b.lo, a.hi + b.hi);
  }
  isub(a: Ix, b: Ix): Ix {
    if (!isDyn(a) && !isDyn(b)) return a - b;
    if (!isDyn(b)) return this.iadd(a, -b);
    const lo = (isDyn(a) ? a.lo : a) - b.hi;
    const hi = (isDyn(a) ? a.hi : a) - b.lo;
    return this.fresh(this.intOf(a).sub(this.intOf(b)), lo, hi);
  }
  imul(a: Ix, b: Ix): Ix {
    if (!isDyn(a) && !isDyn(b)) return a * b;
    if (!isDyn(a)) return this.imul(b, a);
    if (!isDyn(b)) {
      if (b === 0) return 0;
      if (b > 0) return { ...a, scale: a.scale * b, off: a.off * b, lo: a.lo * b, hi: a.hi * b };
    }
    const ends = [a.lo, a.hi].flatMap((x) => (isDyn(b) ? [b.lo, b.hi] : [b]).map((y) => x * y));
    return this.fresh(this.intOf(a).mul(this.intOf(b)), Math.min(...ends), Math.max(...ends));
  }
  imin(a: Ix, b: Ix): Ix {
    if (!isDyn(a) && !isDyn(b)) return Math.min(a, b);
    const [al, ah] = isDyn(a) ? [a.lo, a.hi] : [a, a];
    const [bl, bh] = isDyn(b) ? [b.lo, b.hi] : [b, b];
    if (ah <= bl) return a;
    if (bh <= al) return b;
    return this.fresh(this.intOf(a).minimum(this.intOf(b)), Math.min(al, bl), Math.min(ah, bh));
  }
  imax(a: Ix, b: Ix): Ix {
    if (!isDyn(a) && !isDyn(b)) return Math.max(a, b);
    const [al, ah] = isDyn(a) ? [a.lo, a.hi] : [a, a];
    const [bl, bh] = isDyn(b) ? [b.lo, b.hi] : [b, b];
    if (al >= bh) return a;
    if (bl >= ah) return b;
    return this.fresh(this.intOf(a).maximum(this.intOf(b)), Math.max(al, bl), Math.max(ah, bh));
  }
  /** `root == v` (or `!=`), one tensor per root and value, decided when an assumption or the range decides it. */
  private rootCond(root: Tensor, v: number, eq: boolean): Bo {
    for (const f of this.assumed) {
      if (f.root !== root) continue;
      if (f.eq) return (f.v === v) === eq;
      if (f.v === v) return !eq;
    }
    let byRoot = this.conds.get(root);
    if (byRoot === undefined) this.conds.set(root, (byRoot = new Map()));
    const key = `${eq ? "eq" : "ne"}${v}`;
    let c = byRoot.get(key);
    if (c === undefined) {
      c = eq ? root.eq(v) : root.ne(v);
      byRoot.set(key, c);
      this.facts.set(c, { root, eq, v });
    }
    return c;
  }
  /** `a == x` for a data-dependent `a` and a known `x`. */
  private dynEq(a: Dyn, x: number, eq: boolean): Bo {
    const r = (x - a.off) / a.scale;
    if (x < a.lo || x > a.hi || !Number.isInteger(r)) return !eq;
    if (a.lo === a.hi) return eq;
    return this.rootCond(a.root, r, eq);
  }
  ieq(a: Ix, b: Ix): Bo {
    if (!isDyn(a) && !isDyn(b)) return a === b;
    if (!isDyn(b)) return this.dynEq(a as Dyn, b, true);
    if (!isDyn(a)) return this.dynEq(b, a, true);
    return this.intOf(a).eq(this.intOf(b));
  }
  ine(a: Ix, b: Ix): Bo {
    if (!isDyn(a) && !isDyn(b)) return a !== b;
    if (!isDyn(b)) return this.dynEq(a as Dyn, b, false);
    if (!isDyn(a)) return this.dynEq(b, a, false);
    return this.intOf(a).ne(this.intOf(b));
  }
  ige(a: Ix, b: Ix): Bo {
    if (!isDyn(a) && !isDyn(b)) return a >= b;
    const [al, ah] = isDyn(a) ? [a.lo, a.hi] : [a, a];
    const [bl, bh] = isDyn(b) ? [b.lo, b.hi] : [b, b];
    if (al >= bh) return true;
    if (ah < bl) return false;
    return this.intOf(a).ge(this.intOf(b));
  }
  ilt(a: Ix, b: Ix): Bo {
    if (!isDyn(a) && !isDyn(b)) return a < b;
    const [al, ah] = isDyn(a) ? [a.lo, a.hi] : [a, a];
    const [bl, bh] = isDyn(b) ? [b.lo, b.hi] : [b, b];
    if (ah < bl) return true;
    if (al >= bh) return false;
    return this.intOf(a).lt(this.intOf(b));
  }
  toF(i: Ix): Sc {
    if (!isDyn(i)) return i;
    const f = this.intOf(i).cast(this.dtype);
    this.indexOf.set(f, i);
    return f;
  }
  toI(f: Sc): Ix {
    if (typeof f === "number") return Math.trunc(f);
    const known = this.indexOf.get(f);
    if (known !== undefined) return known;
    return this.fresh(f.dtype === "int32" ? f : f.cast("int32"), -Infinity, Infinity);
  }

  // Memory.
  /** The root values `r` of `i`'s candidates that the assumptions allow, with their index. */
  private candidates(i: Dyn): [number, number][] {
    if (!Number.isFinite(i.lo) || !Number.isFinite(i.hi))
      throw new Error(`internal: an unrolled routine indexes with an unbounded data-dependent index`);
    const out: [number, number][] = [];
    for (let r = Math.ceil((i.lo - i.off) / i.scale); r * i.scale + i.off <= i.hi; r++) {
      if (this.assumed.some((f) => f.root === i.root && (f.eq ? f.v !== r : f.v === r))) continue;
      out.push([r, r * i.scale + i.off]);
    }
    return out;
  }
  /** The element at `at` of `mem`: for a data-dependent index, a `where` chain over the candidates. */
  private pick(mem: readonly Sc[], at: Ix): Sc {
    if (!isDyn(at)) return mem[at]!;
    const cs = this.candidates(at);
    let v = mem[cs[0]![1]]!;
    for (let k = 1; k < cs.length; k++) {
      const [r, loc] = cs[k]!;
      v = this.sel(this.rootCond(at.root, r, true), mem[loc]!, v);
    }
    return v;
  }
  load(input: number, at: Ix): Sc {
    return this.pick(this.inputs[input]!, at);
  }
  oload(at: Ix): Sc {
    return this.pick(this.out, at);
  }
  store(at: Ix, v: Sc): void {
    if (!isDyn(at)) return this.write(at, v);
    const cs = this.candidates(at);
    if (cs.length === 1) return this.write(cs[0]![1], v);
    for (const [r, loc] of cs) this.write(loc, this.sel(this.rootCond(at.root, r, true), v, this.out[loc]!));
  }
  private write(at: number, v: Sc): void {
    const f = this.frames.at(-1);
    if (f !== undefined && !f.mem.has(at)) f.mem.set(at, this.out[at]!);
    this.out[at] = v;
  }
  // Control.
  loop(from: Ix, to: Ix, body: (v: Ix) => void): void {
    if (isDyn(from) || isDyn(to)) throw new Error(`internal: an unrolled routine loops to a data-dependent bound`);
    for (let v = from; v < to; v++) body(v);
  }
  when(c: Bo, then: () => void, otherwise?: () => void): void {
    if (typeof c === "boolean") return c ? then() : otherwise?.();
    const a = this.branch(c, true, then);
    const b = otherwise === undefined ? undefined : this.branch(c, false, otherwise);
    const mem = new Set([...a.mem.keys(), ...(b?.mem.keys() ?? [])]);
    for (const at of [...mem].sort((x, y) => x - y)) {
      const old = this.out[at]!;
      this.write(at, this.mergeF(c, a.mem.get(at) ?? old, b?.mem.get(at) ?? old));
    }
    for (const v of new Set([...a.fvars.keys(), ...(b?.fvars.keys() ?? [])])) {
      const old = v.get();
      v.set(this.mergeF(c, a.fvars.get(v) ?? old, b?.fvars.get(v) ?? old));
    }
    for (const v of new Set([...a.ivars.keys(), ...(b?.ivars.keys() ?? [])])) {
      const old = v.get();
      v.set(this.isel(c, a.ivars.get(v) ?? old, b?.ivars.get(v) ?? old));
    }
  }
  /** Runs `body` assuming `c` (or its negation); returns what it wrote and restores the old values. */
  private branch(c: Tensor, holds: boolean, body: () => void): Frame {
    const fact = this.facts.get(c);
    if (fact !== undefined) this.assumed.push(holds ? fact : { ...fact, eq: !fact.eq });
    const frame: Frame = { mem: new Map(), fvars: new Map(), ivars: new Map() };
    this.frames.push(frame);
    try {
      body();
    } finally {
      this.frames.pop();
      if (fact !== undefined) this.assumed.pop();
    }
    const news: Frame = { mem: new Map(), fvars: new Map(), ivars: new Map() };
    for (const [at, old] of frame.mem) {
      news.mem.set(at, this.out[at]!);
      this.out[at] = old;
    }
    for (const [v, old] of frame.fvars) {
      news.fvars.set(v, v.get());
      v.reset(old);
    }
    for (const [v, old] of frame.ivars) {
      news.ivars.set(v, v.get());
      v.reset(old);
    }
    return news;
  }
  /** `c ? a : b`, without a `where` when one side already equals the other where it is not chosen. */
  private mergeF(c: Tensor, a: Sc, b: Sc): Sc {
    if (a === b || this.holdsUnless(a, b, c, true)) return a;
    if (this.holdsUnless(b, a, c, false)) return b;
    // The failure signal `c ? NaN : x` as `x · (c ? NaN : 1)`, equal for every x (a select
    // of a NaN per entry made an unrolled inv 3×3 ~1.3-2× slower on V8 than one shared factor).
    if (typeof b !== "number" && Number.isNaN(a)) return this.mul(b, this.sel(c, NaN, 1));
    if (typeof a !== "number" && Number.isNaN(b)) return this.mul(a, this.sel(c, 1, NaN));
    return this.sel(c, a, b);
  }
  /** Whether `x` equals `y` whenever `c` is not `value`: x is `y` behind `where`s whose conditions imply c == value. */
  private holdsUnless(x: Sc, y: Sc, c: Tensor, value: boolean): boolean {
    for (;;) {
      if (x === y) return true;
      const w = typeof x === "number" ? undefined : this.wheres.get(x);
      if (w === undefined || !this.implies(w.c, c, value)) return false;
      x = w.b;
    }
  }
  /** Whether `d` true implies `c == value`. */
  private implies(d: Tensor, c: Tensor, value: boolean): boolean {
    if (d === c) return value;
    const fd = this.facts.get(d);
    const fc = this.facts.get(c);
    if (fd === undefined || fc === undefined || fd.root !== fc.root || !fd.eq) return false;
    return (fc.eq ? fd.v === fc.v : fd.v !== fc.v) === value;
  }
  /** Passes the `between` entries through their buffer. */
  betweenSweeps(): void {
    if (this.between === undefined) return;
    const { at, store } = this.between;
    const xs = store(at.map((k) => this.out[k]!));
    at.forEach((k, i) => this.write(k, xs[i]!));
  }
  fvar(init: Sc): Var<Sc> {
    return new Local<Sc>(init, (v, old) => {
      const f = this.frames.at(-1);
      if (f !== undefined && !f.fvars.has(v)) f.fvars.set(v, old);
    });
  }
  ivar(init: Ix): Var<Ix> {
    return new Local<Ix>(init, (v, old) => {
      const f = this.frames.at(-1);
      if (f !== undefined && !f.ivars.has(v)) f.ivars.set(v, old);
    });
  }
}

/**
 * Runs routine `spec` unrolled on the component blocks `inputs` (row-major, as the
 * routine's inputs); returns the machine, whose `out` is the routine's output block
 * (`size` components). `after`: the machine that computed some of the inputs;
 * `between`: the Jacobi state's buffer between sweeps.
 */
export function unrolled(
  spec: RoutineSpec,
  inputs: readonly (readonly Sc[])[],
  size: number,
  opts: { after?: Unroller; prepare?: (u: Unroller) => void; between?: Between } = {},
): Unroller {
  const u = new Unroller(spec.dtype, inputs, size, opts.after, opts.between);
  opts.prepare?.(u);
  runRoutine(u, spec);
  return u;
}

/** Rows `r0..r1` and columns `c0..c1` of a row-major block of width `w`. */
export function block(out: readonly Sc[], w: number, r0: number, r1: number, c0: number, c1: number): Sc[][] {
  return Array.from({ length: r1 - r0 }, (_, i) => out.slice((r0 + i) * w + c0, (r0 + i) * w + c1));
}
