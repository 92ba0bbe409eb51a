// What a worker (one library, one process) hands back to bench/run.ts.

import type { BenchId, Counters } from "./cases.js";

export interface Row {
  bench: BenchId;
  library: string;
  backend: string;
  /** Problem size: elements (B1, B5), matrices (B2), clouds (B3, B4), first new batch size (B6). */
  n: number;
  medianMs: number;
  minMs: number;
  maxMs: number;
  baselineMedianMs: number;
  /** medianMs / baselineMedianMs, both measured in the same process, alternating. */
  ratio: number;
  maxAbsErr: number;
  samples: number;
  /** B5: times are per call, over this many calls per sample. */
  callsPerSample?: number;
  /** B6: the repeat call at the same new size, and first/repeat. */
  repeatMedianMs?: number;
  firstOverRepeat?: number;
  /** Compiler counters where the library has them; B6: the change over all new-size calls. */
  counters?: Counters & { scope: string };
}

export interface WorkerConfig {
  only: BenchId[];
  quick: boolean;
}

export interface WorkerResult {
  library: string;
  backend: string;
  rows: Row[];
  /** Skips and facts, one line each, printed under the table. */
  notes: string[];
  /** Wrong results and crashes: the run exits non-zero when any library has one. */
  failures: string[];
}
