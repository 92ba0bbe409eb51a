// The benchmarks' shared vocabulary: ids, input generators (fixed seeds), the
// hand-written baselines, output comparison and tolerances, and the adapter
// contract every library (batchwise, peers, the baseline itself) implements.
// Imported by the harness and, for types only, by every adapter.

export type BenchId =
  | "B1-1e6"
  | "B1-1e4"
  | "B2"
  | "B3"
  | "B4"
  | "B5"
  | "B6"
  | "B8-solve"
  | "B8-eigh"
  | "B9"
  // --- B7: gather + scatter-add ---
  | "B7";
export const BENCH_IDS: readonly BenchId[] = [
  "B1-1e6",
  "B1-1e4",
  "B2",
  "B3",
  "B4",
  "B5",
  "B6",
  "B8-solve",
  "B8-eigh",
  "B9",
  // --- B7: gather + scatter-add ---
  "B7",
];

/** The kernels a library implements; B1 also serves B5, B3 also serves B6. */
export type KernelId =
  | "B1"
  | "B2"
  | "B3"
  | "B4"
  | "B8solve"
  | "B8eigh"
  | "B9"
  // --- B7: gather + scatter-add ---
  | "B7";
export const KERNEL_OF: Record<BenchId, KernelId> = {
  "B1-1e6": "B1",
  "B1-1e4": "B1",
  B2: "B2",
  B3: "B3",
  B4: "B4",
  B5: "B1",
  B6: "B3",
  "B8-solve": "B8solve",
  "B8-eigh": "B8eigh",
  B9: "B9",
  // --- B7: gather + scatter-add ---
  B7: "B7",
};

export interface Counters {
  traces: number;
  compiles: number;
  cacheHits: number;
}

export interface B1In {
  x: Float32Array;
}
/** `count` row-major 3×3 matrices, 9 floats each. */
export interface B2In {
  m: Float32Array;
  count: number;
}
export interface B2Out {
  inv: Float32Array;
  det: Float32Array;
}
/** `clouds` clouds of `points` points with 3 coordinates, dense. */
export interface CloudsIn {
  x: Float32Array;
  clouds: number;
  points: number;
}
/** A ragged list of clouds; cloud b has sizes[b] points (3 floats each). */
export interface B4In {
  clouds: Float32Array[];
  sizes: Int32Array;
}
/** padded: (B, maxN, 3), 0-filled; packed: (sum N, 3); firstIdx: B + 1 offsets (Kaolin's first_idx). */
export interface B4Out {
  padded: Float32Array;
  maxN: number;
  packed: Float32Array;
  firstIdx: Int32Array;
}

export interface KernelTypes {
  B1: [B1In, Float32Array];
  B2: [B2In, B2Out];
  B3: [CloudsIn, Float32Array];
  B4: [B4In, B4Out];
  B8solve: [B8SolveIn, Float32Array];
  B8eigh: [B8EighIn, B8EighOut];
  B9: [B9In, B9Out];
  // --- B7: gather + scatter-add ---
  B7: [B7In, B7Out];
}

type MaybePromise<T> = T | Promise<T>;

/**
 * One compiled/prepared instance of a kernel. `run` includes upload of the
 * typed-array input and read-back into a typed array. `stats` reports compiler
 * counters where the library has them (batchwise's jit).
 */
export interface Runner<I, O> {
  run(input: I): MaybePromise<O>;
  stats?(): Counters;
  dispose?(): void;
}
export type Factory<K extends KernelId> = () => MaybePromise<Runner<KernelTypes[K][0], KernelTypes[K][1]>>;

export interface LibAdapter {
  library: string;
  backend: string;
  /** Kernels this library implements. */
  kernels: { [K in KernelId]?: Factory<K> };
  /** Why a kernel is missing (printed in the table notes). */
  skipped: { [K in KernelId]?: string };
  /** Kernels too slow for --quick, with the reason (still measured in a full run, with few samples). */
  heavy?: { [K in KernelId]?: string };
  /** Free-form facts worth printing (thread counts, adapter names). */
  notes?: string[];
}

/** Default export of every adapter module: `load(backend)`. */
export type LoadAdapter = (backend: string) => Promise<LibAdapter>;

// ---------------------------------------------------------------- sizes

export const SIZES = {
  b1Large: 1_000_000,
  b1Small: 10_000,
  b2Count: 1_000_000,
  b3Clouds: 1000,
  b3Points: 1000,
  b4Clouds: 1000,
  b4MaxSize: 2000,
  b5N: 16,
  b5Calls: 10_000,
  b5CallsQuick: 2_000,
  b6Points: 1000,
  b6WarmClouds: 64,
} as const;

/** Max abs error allowed against the baseline, per kernel (float32 throughout). */
export const TOLERANCE: Record<KernelId, number> = {
  B1: 1e-4, // |y| <= ~3.2; one-ulp differences in exp/sin/tanh are ~1e-7
  B2: 1e-3, // inverse entries are O(1) for the well-conditioned inputs below
  B3: 1e-4, // outputs in [-1, 1]; means over 1000 points summed in float32 by peers
  B4: 0, // pure copies: must be exact
  B8solve: 1e-3, // well-conditioned systems (diagonally dominant), solutions O(1)
  B8eigh: 1e-4, // eigenvalues of matrices with entries in [-1, 1]; see compareB8eigh for the vectors
  B9: 1e-6, // float64; stresses O(1e2), tangent entries O(1e5)
  // --- B7: gather + scatter-add ---
  B7: 1e-4, // bin sums O(10) of ~100 values in [-1, 1], float32, summed in point order
};

// ---------------------------------------------------------------- inputs

/** mulberry32: small, fast, seeded; enough for benchmark inputs. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function uniform(n: number, lo: number, hi: number, seed: number): Float32Array {
  const r = rng(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = lo + (hi - lo) * r();
  return out;
}

export function makeB1(n: number, seed = 1): B1In {
  return { x: uniform(n, -3, 3, seed) };
}

/** Diagonally dominant (diag in [2,3], off-diagonal in [-0.5,0.5]): det >= ~1, so inverses are O(1). */
export function makeB2(count: number, seed = 2): B2In {
  const r = rng(seed);
  const m = new Float32Array(count * 9);
  for (let k = 0; k < count; k++) {
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 3; j++) m[k * 9 + i * 3 + j] = i === j ? 2 + r() : r() - 0.5;
    }
  }
  return { m, count };
}

/** Clouds with per-cloud offsets and scales, so the normalisation is not a no-op. */
export function makeClouds(clouds: number, points: number, seed = 3): CloudsIn {
  const r = rng(seed);
  const x = new Float32Array(clouds * points * 3);
  for (let b = 0; b < clouds; b++) {
    const scale = 0.5 + 4 * r();
    const off = [10 * r() - 5, 10 * r() - 5, 10 * r() - 5];
    const base = b * points * 3;
    for (let p = 0; p < points; p++) {
      for (let c = 0; c < 3; c++) x[base + p * 3 + c] = off[c]! + scale * (2 * r() - 1);
    }
  }
  return { x, clouds, points };
}

export function makeB4(clouds: number, maxSize: number, seed = 4): B4In {
  const r = rng(seed);
  const sizes = new Int32Array(clouds);
  const list: Float32Array[] = [];
  for (let b = 0; b < clouds; b++) {
    const n = 1 + Math.floor(r() * maxSize);
    sizes[b] = n;
    list.push(uniform(n * 3, -1, 1, seed * 7919 + b));
  }
  return { clouds: list, sizes };
}

// ---------------------------------------------------------------- baselines

/** y = exp(-x*x) * sin(3x) + 0.5x - tanh(x), one loop. */
export function b1Baseline({ x }: B1In): Float32Array {
  const n = x.length;
  const y = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const v = x[i]!;
    y[i] = Math.exp(-v * v) * Math.sin(3 * v) + 0.5 * v - Math.tanh(v);
  }
  return y;
}

/** Closed-form 3×3 inverse: inv = adj(M) / det(M), cofactors expanded along the first row. */
export function b2Baseline({ m, count }: B2In): B2Out {
  const inv = new Float32Array(count * 9);
  const det = new Float32Array(count);
  for (let k = 0, o = 0; k < count; k++, o += 9) {
    const a = m[o]!,
      b = m[o + 1]!,
      c = m[o + 2]!;
    const d = m[o + 3]!,
      e = m[o + 4]!,
      f = m[o + 5]!;
    const g = m[o + 6]!,
      h = m[o + 7]!,
      i = m[o + 8]!;
    const c00 = e * i - f * h;
    const c01 = f * g - d * i;
    const c02 = d * h - e * g;
    const dt = a * c00 + b * c01 + c * c02;
    const r = 1 / dt;
    det[k] = dt;
    inv[o] = c00 * r;
    inv[o + 1] = (c * h - b * i) * r;
    inv[o + 2] = (b * f - c * e) * r;
    inv[o + 3] = c01 * r;
    inv[o + 4] = (a * i - c * g) * r;
    inv[o + 5] = (c * d - a * f) * r;
    inv[o + 6] = c02 * r;
    inv[o + 7] = (b * g - a * h) * r;
    inv[o + 8] = (a * e - b * d) * r;
  }
  return { inv, det };
}

/** Per cloud: subtract the mean point, divide by the largest distance to it. */
export function b3Baseline({ x, clouds, points }: CloudsIn): Float32Array {
  const out = new Float32Array(x.length);
  for (let b = 0; b < clouds; b++) {
    const base = b * points * 3;
    const end = base + points * 3;
    let sx = 0,
      sy = 0,
      sz = 0;
    for (let o = base; o < end; o += 3) {
      sx += x[o]!;
      sy += x[o + 1]!;
      sz += x[o + 2]!;
    }
    const mx = sx / points,
      my = sy / points,
      mz = sz / points;
    let max2 = 0;
    for (let o = base; o < end; o += 3) {
      const dx = x[o]! - mx,
        dy = x[o + 1]! - my,
        dz = x[o + 2]! - mz;
      const n2 = dx * dx + dy * dy + dz * dz;
      if (n2 > max2) max2 = n2;
    }
    const r = 1 / Math.sqrt(max2);
    for (let o = base; o < end; o += 3) {
      out[o] = (x[o]! - mx) * r;
      out[o + 1] = (x[o + 1]! - my) * r;
      out[o + 2] = (x[o + 2]! - mz) * r;
    }
  }
  return out;
}

/** A ragged list's largest size and its first_idx (Kaolin's: `sizes.length + 1` offsets). */
export function raggedLayout(sizes: ArrayLike<number>): { maxN: number; firstIdx: Int32Array } {
  const firstIdx = new Int32Array(sizes.length + 1);
  let maxN = 0;
  for (let b = 0; b < sizes.length; b++) {
    const n = sizes[b]!;
    if (n > maxN) maxN = n;
    firstIdx[b + 1] = firstIdx[b]! + n;
  }
  return { maxN, firstIdx };
}

/** TypedArray.set into a 0-filled padded buffer and a packed buffer. */
export function b4Baseline({ clouds, sizes }: B4In): B4Out {
  const count = clouds.length;
  const { maxN, firstIdx } = raggedLayout(sizes);
  const padded = new Float32Array(count * maxN * 3);
  const packed = new Float32Array(firstIdx[count]! * 3);
  for (let b = 0; b < count; b++) {
    const cloud = clouds[b]!;
    padded.set(cloud, b * maxN * 3);
    packed.set(cloud, firstIdx[b]! * 3);
  }
  return { padded, maxN, packed, firstIdx };
}

export const BASELINES: { [K in KernelId]: (input: KernelTypes[K][0]) => KernelTypes[K][1] } = {
  B1: b1Baseline,
  B2: b2Baseline,
  B3: b3Baseline,
  B4: b4Baseline,
  B8solve: b8SolveBaseline,
  B8eigh: b8EighBaseline,
  B9: b9Baseline,
  // --- B7: gather + scatter-add ---
  B7: b7Baseline,
};

// ---------------------------------------------------------------- comparison

type Numeric = ArrayLike<number>;

/** Max |a - b|; a length mismatch or a NaN on one side counts as Infinity. */
export function maxAbsDiff(a: Numeric, b: Numeric): number {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!,
      y = b[i]!;
    if (x === y) continue;
    const d = Math.abs(x - y);
    if (!(d <= m)) m = Number.isNaN(d) ? Infinity : d;
  }
  return m;
}

/** The largest `maxAbsDiff` over the array fields `keys` of two results. */
const fieldsDiff =
  <K extends string>(...keys: K[]) =>
  (got: Readonly<Record<K, Numeric>>, want: Readonly<Record<K, Numeric>>): number =>
    Math.max(...keys.map((k) => maxAbsDiff(got[k], want[k])));

/** How far a library's result is from the baseline's, per kernel (see `TOLERANCE`). */
const COMPARE: { [K in KernelId]: (got: KernelTypes[K][1], want: KernelTypes[K][1]) => number } = {
  B1: maxAbsDiff,
  B2: fieldsDiff("inv", "det"),
  B3: maxAbsDiff,
  B4: (g, w) => (g.maxN !== w.maxN ? Infinity : fieldsDiff("padded", "packed", "firstIdx")(g, w)),
  B8solve: maxAbsDiff,
  B8eigh: compareB8eigh,
  B9: fieldsDiff("stress", "tangent"),
  // --- B7: gather + scatter-add ---
  B7: fieldsDiff("sums", "gathered"),
};

export function compare(kernel: KernelId, got: unknown, want: unknown): number {
  return (COMPARE[kernel] as (got: unknown, want: unknown) => number)(got, want);
}

// ---------------------------------------------------------------- B8: batched linear algebra

/** `count` 6×6 systems `A x = b`, row-major A (36 floats each) and b (6 floats each). */
export interface B8SolveIn {
  a: Float32Array;
  b: Float32Array;
  count: number;
}
/** `count` symmetric 3×3 matrices, row-major (9 floats each). */
export interface B8EighIn {
  a: Float32Array;
  count: number;
}
/** Eigenvalues ascending (3 per matrix) and eigenvectors as columns (row-major 3×3 per matrix). */
export interface B8EighOut {
  values: Float32Array;
  vectors: Float32Array;
}

export const B8_SIZES = { solveCount: 100_000, eighCount: 100_000 } as const;

/** Random 6×6 systems, diagonally dominant (|diag| in [3,4], random sign, off-diagonal in [-0.5,0.5]): well conditioned, and pivoting still swaps rows for the negative diagonals' neighbours. */
export function makeB8solve(count: number, seed = 8): B8SolveIn {
  const r = rng(seed);
  const a = new Float32Array(count * 36);
  const b = new Float32Array(count * 6);
  for (let k = 0; k < count; k++) {
    for (let i = 0; i < 6; i++) {
      for (let j = 0; j < 6; j++) a[k * 36 + i * 6 + j] = i === j ? (r() < 0.5 ? -1 : 1) * (3 + r()) : r() - 0.5;
      b[k * 6 + i] = 2 * r() - 1;
    }
  }
  return { a, b, count };
}

/** Random symmetric 3×3 matrices with entries in [-1, 1]. */
export function makeB8eigh(count: number, seed = 9): B8EighIn {
  const r = rng(seed);
  const a = new Float32Array(count * 9);
  for (let k = 0; k < count; k++) {
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j <= i; j++) {
        const v = 2 * r() - 1;
        a[k * 9 + i * 3 + j] = v;
        a[k * 9 + j * 3 + i] = v;
      }
    }
  }
  return { a, count };
}

/** Gaussian elimination with partial pivoting per system, in a float64 scratch (as one writes it by hand). */
export function b8SolveBaseline({ a, b, count }: B8SolveIn): Float32Array {
  const n = 6;
  const x = new Float32Array(count * n);
  const m = new Float64Array(n * (n + 1));
  for (let k = 0; k < count; k++) {
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) m[i * (n + 1) + j] = a[k * 36 + i * n + j]!;
      m[i * (n + 1) + n] = b[k * n + i]!;
    }
    for (let c = 0; c < n; c++) {
      let p = c;
      let best = Math.abs(m[c * (n + 1) + c]!);
      for (let i = c + 1; i < n; i++) {
        const v = Math.abs(m[i * (n + 1) + c]!);
        if (v > best) {
          best = v;
          p = i;
        }
      }
      if (p !== c) {
        for (let j = c; j <= n; j++) {
          const t = m[c * (n + 1) + j]!;
          m[c * (n + 1) + j] = m[p * (n + 1) + j]!;
          m[p * (n + 1) + j] = t;
        }
      }
      const r = 1 / m[c * (n + 1) + c]!;
      for (let i = c + 1; i < n; i++) {
        const f = m[i * (n + 1) + c]! * r;
        for (let j = c + 1; j <= n; j++) m[i * (n + 1) + j]! -= f * m[c * (n + 1) + j]!;
      }
    }
    for (let i = n - 1; i >= 0; i--) {
      let s = m[i * (n + 1) + n]!;
      for (let j = i + 1; j < n; j++) s -= m[i * (n + 1) + j]! * x[k * n + j]!;
      x[k * n + i] = s / m[i * (n + 1) + i]!;
    }
  }
  return x;
}

/**
 * Cyclic Jacobi per matrix (Numerical Recipes' rotation), stopping when the
 * off-diagonal entries are below 1e-15 of the diagonal's (converged in
 * float64) or after 50 sweeps, then the
 * eigenvalues sorted ascending with their vectors.
 */
export function b8EighBaseline({ a, count }: B8EighIn): B8EighOut {
  const values = new Float32Array(count * 3);
  const vectors = new Float32Array(count * 9);
  const m = new Float64Array(9);
  const v = new Float64Array(9);
  for (let k = 0; k < count; k++) {
    for (let i = 0; i < 9; i++) {
      m[i] = a[k * 9 + i]!;
      v[i] = i % 4 === 0 ? 1 : 0;
    }
    for (let sweep = 0; sweep < 50; sweep++) {
      const off = Math.abs(m[1]!) + Math.abs(m[2]!) + Math.abs(m[5]!);
      if (off <= 1e-15 * (Math.abs(m[0]!) + Math.abs(m[4]!) + Math.abs(m[8]!))) break;
      for (let p = 0; p < 2; p++) {
        for (let q = p + 1; q < 3; q++) {
          const apq = m[p * 3 + q]!;
          if (apq === 0) continue;
          const theta = (m[q * 4]! - m[p * 4]!) / (2 * apq);
          const t = (theta >= 0 ? 1 : -1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
          const c = 1 / Math.sqrt(t * t + 1);
          const s = t * c;
          m[p * 4] = m[p * 4]! - t * apq;
          m[q * 4] = m[q * 4]! + t * apq;
          m[p * 3 + q] = m[q * 3 + p] = 0;
          const r = 3 - p - q;
          const arp = m[r * 3 + p]!;
          const arq = m[r * 3 + q]!;
          m[r * 3 + p] = m[p * 3 + r] = c * arp - s * arq;
          m[r * 3 + q] = m[q * 3 + r] = s * arp + c * arq;
          for (let i = 0; i < 3; i++) {
            const x = v[i * 3 + p]!;
            const y = v[i * 3 + q]!;
            v[i * 3 + p] = c * x - s * y;
            v[i * 3 + q] = s * x + c * y;
          }
        }
      }
    }
    // Three compare-exchanges order the diagonal (ties keep their order).
    let o0 = 0,
      o1 = 1,
      o2 = 2,
      t: number;
    if (m[o0 * 4]! > m[o1 * 4]!) ((t = o0), (o0 = o1), (o1 = t));
    if (m[o1 * 4]! > m[o2 * 4]!) ((t = o1), (o1 = o2), (o2 = t));
    if (m[o0 * 4]! > m[o1 * 4]!) ((t = o0), (o0 = o1), (o1 = t));
    for (let c = 0; c < 3; c++) {
      const o = c === 0 ? o0 : c === 1 ? o1 : o2;
      values[k * 3 + c] = m[o * 4]!;
      for (let i = 0; i < 3; i++) vectors[k * 9 + i * 3 + c] = v[i * 3 + o]!;
    }
  }
  return { values, vectors };
}

/**
 * Eigenvalues compared directly; eigenvectors up to sign (a column and its
 * negation are the same eigenvector): per column, the smaller of |g - w| and
 * |g + w|. Columns of (near-)repeated eigenvalues are not unique either, but
 * random matrices have none.
 */
export function compareB8eigh(got: B8EighOut, want: B8EighOut): number {
  let err = maxAbsDiff(got.values, want.values);
  if (got.vectors.length !== want.vectors.length) return Infinity;
  for (let k = 0; k < got.vectors.length / 9; k++) {
    for (let c = 0; c < 3; c++) {
      let plus = 0;
      let minus = 0;
      for (let i = 0; i < 3; i++) {
        const g = got.vectors[k * 9 + i * 3 + c]!;
        const w = want.vectors[k * 9 + i * 3 + c]!;
        plus = Math.max(plus, Math.abs(g - w));
        minus = Math.max(minus, Math.abs(g + w));
      }
      const e = Math.min(plus, minus);
      err = Math.max(err, Number.isNaN(e) ? Infinity : e);
    }
  }
  return err;
}

// ---------------------------------------------------------------- B9: J2 consistent tangent (derivatives)

/**
 * B9: small-strain J2 plasticity with linear isotropic hardening, one
 * return-mapping step at `count` material points from a virgin state: the
 * stress and the per-sample consistent tangent dσ/dε `(count; 6, 6)`, Mandel
 * notation, float64. batchwise derives the tangent with `jacobian`/`grad`; the
 * baseline is the hand-derived closed form (Simo & Hughes).
 */
export interface B9In {
  /** `count` Mandel strains, 6 floats each. */
  strain: Float64Array;
  count: number;
}
export interface B9Out {
  stress: Float64Array;
  tangent: Float64Array;
}
export const B9_POINTS = 100_000;
/** Steel-like parameters: E, ν, yield stress, hardening modulus (the example's `STEEL`). */
export const B9_MATERIAL = { E: 200e3, nu: 0.3, sy: 250, H: 2e3 } as const;

/** Strains spanning the elastic and the plastic range (about a third of the points yield). */
export function makeB9(count: number, seed = 9): B9In {
  const r = rng(seed);
  const strain = new Float64Array(count * 6);
  for (let i = 0; i < count; i++) {
    const a = 4e-3 * r();
    strain.set([a, -0.3 * a, -0.3 * a, 1e-4 * (r() - 0.5), 2e-4 * (r() - 0.5), 5e-5 * (r() - 0.5)], i * 6);
  }
  return { strain, count };
}

export function b9Baseline({ strain, count }: B9In): B9Out {
  const { E, nu, sy, H } = B9_MATERIAL;
  const mu = E / (2 * (1 + nu));
  const K = E / (3 * (1 - 2 * nu));
  const stress = new Float64Array(count * 6);
  const tangent = new Float64Array(count * 36);
  const s = new Float64Array(6);
  for (let b = 0; b < count; b++) {
    const o = b * 6;
    const tr = strain[o]! + strain[o + 1]! + strain[o + 2]!;
    for (let k = 0; k < 6; k++) s[k] = 2 * mu * (strain[o + k]! - (k < 3 ? tr / 3 : 0));
    const ns = Math.sqrt(s[0]! ** 2 + s[1]! ** 2 + s[2]! ** 2 + s[3]! ** 2 + s[4]! ** 2 + s[5]! ** 2);
    const q = Math.sqrt(1.5) * ns;
    const f = q - sy;
    let theta = 1;
    let thetaBar = 0;
    if (f > 0) {
      const dp = f / (3 * mu + H);
      theta = 1 - (3 * mu * dp) / q;
      thetaBar = (3 * mu) / (3 * mu + H) - (3 * mu * dp) / q;
    }
    for (let k = 0; k < 6; k++) stress[o + k] = (k < 3 ? K * tr : 0) + theta * s[k]!;
    const c = b * 36;
    const nn = f > 0 ? (2 * mu * thetaBar) / (ns * ns) : 0;
    for (let i = 0; i < 6; i++)
      for (let j = 0; j < 6; j++) {
        const vol = i < 3 && j < 3 ? 1 : 0;
        tangent[c + i * 6 + j] = K * vol + 2 * mu * theta * ((i === j ? 1 : 0) - vol / 3) - nn * s[i]! * s[j]!;
      }
  }
  return { stress, tangent };
}

// ---------------------------------------------------------------- B7: gather + scatter-add

/**
 * B7: `points` float32 values scattered into `nBins` bins by an int32 index per
 * point (a scatter-add: each bin sums its points, in point order), then each
 * point reads its bin's sum back (a gather). batchwise: `zeros.at(bins).add(points)`
 * and `take`; the baseline: the two loops.
 */
export interface B7In {
  points: Float32Array;
  bins: Int32Array;
  nBins: number;
}
export interface B7Out {
  sums: Float32Array;
  gathered: Float32Array;
}
export const B7_SIZES = { points: 1_000_000, bins: 10_000 } as const;

export function makeB7(points: number, nBins: number, seed = 7): B7In {
  const r = rng(seed);
  const p = new Float32Array(points);
  const bins = new Int32Array(points);
  for (let i = 0; i < points; i++) {
    p[i] = r() * 2 - 1;
    bins[i] = Math.floor(r() * nBins);
  }
  return { points: p, bins, nBins };
}

export function b7Baseline({ points, bins, nBins }: B7In): B7Out {
  const sums = new Float32Array(nBins);
  const n = points.length;
  for (let i = 0; i < n; i++) sums[bins[i]!] += points[i]!;
  const gathered = new Float32Array(n);
  for (let i = 0; i < n; i++) gathered[i] = sums[bins[i]!]!;
  return { sums, gathered };
}
