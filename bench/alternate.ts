/**
 * Times `cases` alternately in one process: `rounds` rounds, each calling every case
 * once in order (element `round` of each result goes into a sink, so no call is dead
 * code), and returns each case's median time in ms. Used by bench/b1-bound.ts and
 * bench/wasm-b1.ts.
 */
export function alternateMedians(
  cases: readonly (readonly [string, () => ArrayLike<number>])[],
  rounds: number,
): (k: string) => number {
  const times = new Map<string, number[]>(cases.map(([k]) => [k, []]));
  let sink = 0;
  for (let round = 0; round < rounds; round++) {
    for (const [k, f] of cases) {
      const t0 = performance.now();
      sink += f()[round]!;
      times.get(k)!.push(performance.now() - t0);
    }
  }
  if (Number.isNaN(sink)) console.log("");
  return (k) => {
    const a = [...times.get(k)!].sort((p, q) => p - q);
    return a[a.length >> 1]!;
  };
}
