/** Global compiler counters; `jit` functions report the share of their own calls. */
export interface Counters {
  /** Traces of user functions. */
  traces: number;
  /** Kernels compiled (kernel cache misses). */
  compiles: number;
  /** Kernel cache hits. */
  cacheHits: number;
  /** Kernels dropped from the (bounded, least recently used) kernel cache. */
  kernelEvictions: number;
  /** Programs built from graphs (pass pipeline runs). */
  programBuilds: number;
  /** Program cache hits (a graph seen before, at any batch size). */
  programCacheHits: number;
  /** Kernel launches on any backend. */
  dispatches: number;
  /** Intermediate buffers reused within a program run (buffer planning). */
  buffersReused: number;
}

/** The live global counters (they only grow); take a `counterSnapshot()` to compare before and after. */
export const counters: Counters = {
  traces: 0,
  compiles: 0,
  cacheHits: 0,
  kernelEvictions: 0,
  programBuilds: 0,
  programCacheHits: 0,
  dispatches: 0,
  buffersReused: 0,
};

/** A copy of the global counters now. */
export function snapshot(): Counters {
  return { ...counters };
}
