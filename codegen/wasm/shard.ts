/**
 * How a launch splits over threads: the sharded loop (the first top-level loop, when its
 * iterations are independent), the inner split for short outer loops, and the rough work
 * per iteration the pool weighs a split by.
 */
import { walkStmts, type LStmt, type LoopProgram } from "../loop.js";

export type Let = Extract<LStmt, { k: "let" }>;
export type Loop = Extract<LStmt, { k: "loop" }>;

/** The sharded loop: the first top-level loop, and the counter local it advances (if any). */
export interface Shard {
  readonly loop: Loop;
  /** The local counting output elements, advanced by `step` per iteration, set to 0 before the loop. */
  readonly counter: { readonly local: number; readonly step: number } | null;
}
export function letsOf(p: LoopProgram): (Let | undefined)[] {
  const defs: (Let | undefined)[] = new Array(p.values);
  walkStmts(p.body, (s) => {
    if (s.k === "let") defs[s.id] = s;
  });
  return defs;
}

/** Whether (and how) the first top-level loop can be split into independent ranges. */
export function findShard(p: LoopProgram, defs: readonly (Let | undefined)[]): Shard | null {
  const at = p.body.findIndex((s) => s.k === "loop");
  if (at < 0) return null;
  const loop = p.body[at] as Loop;
  // Locals set before the loop (at top level) and read inside it.
  const setBefore = new Map<number, number>();
  for (const s of p.body.slice(0, at)) if (s.k === "set") setBefore.set(s.local, s.value);
  for (const s of p.body.slice(at + 1)) if (s.k !== "let") return null; // only the first loop does work
  const readInside = new Set<number>();
  walkStmts(loop.body, (s) => {
    if (s.k === "let" && s.e.k === "get") readInside.add(s.e.local);
  });
  let counter: Shard["counter"] = null;
  for (const l of readInside) {
    if (!setBefore.has(l)) continue;
    // The counter pattern: l = 0 before; inside, at the loop's top level: g = get l; n = g + step; set l = n.
    const init = defs[setBefore.get(l)!];
    if (counter !== null || init?.e.k !== "lit" || init.e.v !== 0) return null;
    const sets: Extract<LStmt, { k: "set" }>[] = [];
    walkStmts(loop.body, (s) => {
      if (s.k === "set" && s.local === l) sets.push(s);
    });
    if (sets.length !== 1 || !loop.body.includes(sets[0]!)) return null;
    const next = defs[sets[0]!.value];
    if (next?.e.k !== "idx" || next.e.op !== "add") return null;
    const g = defs[next.e.a];
    const stepDef = defs[next.e.b];
    if (g?.e.k !== "get" || g.e.local !== l || stepDef?.e.k !== "lit") return null;
    counter = { local: l, step: stepDef.e.v };
  }
  return { loop, counter };
}

/**
 * A second way to split a launch, for when the sharded loop has too few iterations
 * (a batch of shape (1, N) or (2, N)): the one loop directly inside it, when that loop's
 * bounds are top-level values (a batch size) and nothing inside it sets a local (no
 * accumulator, so its iterations are independent), and the sharded loop's body otherwise
 * only defines values. `run_inner` runs every iteration of the outer loop and, of the
 * inner one, only iterations [begin, end).
 */
export function findInnerShard(p: LoopProgram, outer: Shard): Shard | null {
  if (outer.counter !== null) return null;
  const loops = outer.loop.body.filter((s): s is Loop => s.k === "loop");
  if (loops.length !== 1) return null;
  const inner = loops[0]!;
  for (const s of outer.loop.body) if (s !== inner && s.k !== "let") return null;
  const top = new Set<number>();
  for (const s of p.body) {
    if (s === outer.loop) break;
    if (s.k === "let") top.add(s.id);
  }
  if (!top.has(inner.from) || !top.has(inner.to)) return null;
  let sets = false;
  walkStmts(inner.body, (s) => {
    if (s.k === "set") sets = true;
  });
  return sets ? null : { loop: inner, counter: null };
}

/**
 * Rough cost of a block: one per statement, loops with literal bounds multiplied out.
 * A loop from 0 to a batch size counts its body once and adds that size's index to
 * `sizes` (the launch multiplies the cost by those sizes); other loops count 16 times.
 */
export function work(body: readonly LStmt[], defs: readonly (Let | undefined)[], sizes: number[] = []): number {
  let w = 0;
  for (const s of body) {
    if (s.k === "loop") {
      const from = defs[s.from]?.e;
      const to = defs[s.to]?.e;
      const batch = from?.k === "lit" && from.v === 0 && to?.k === "size";
      if (batch) sizes.push(to.i);
      const n = batch ? 1 : from?.k === "lit" && to?.k === "lit" ? Math.max(0, to.v - from.v) : 16;
      w += 1 + n * work(s.body, defs, sizes);
    } else if (s.k === "if") w += 1 + Math.max(work(s.then, defs, sizes), work(s.else, defs, sizes));
    else w += 1;
  }
  return w;
}
