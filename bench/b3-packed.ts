/**
 * B3 on packed clouds (issue 6): normalise each of 1,000 ragged clouds (1..2,000
 * points × 3, packed with offsets) by its own mean and max norm, as a jit
 * function over a JaggedTensor, against a hand-written loop over the packed
 * data. Runs alternate in one process; prints the ratio of medians.
 *   npx tsx bench/b3-packed.ts
 */
import { fromTypedArray, jit, JaggedTensor } from "../src/index.js";
let s = 7;
const rand = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const B = 1000;
const sizes = Array.from({ length: B }, () => 1 + Math.floor(rand() * 2000));
const offsets = new Int32Array(B + 1);
sizes.forEach((n, i) => (offsets[i + 1] = offsets[i]! + n));
const T = offsets[B]!;
const values = Float32Array.from({ length: T * 3 }, () => rand() * 2 - 1);
function hand(v: Float32Array, o: Int32Array): Float32Array {
  const out = new Float32Array(v.length);
  for (let b = 0; b < B; b++) {
    const lo = o[b]!,
      hi = o[b + 1]!,
      n = hi - lo;
    let mx = 0,
      my = 0,
      mz = 0;
    for (let t = lo; t < hi; t++) {
      mx += v[3 * t]!;
      my += v[3 * t + 1]!;
      mz += v[3 * t + 2]!;
    }
    mx /= n;
    my /= n;
    mz /= n;
    let m = 0;
    for (let t = lo; t < hi; t++) {
      const a = v[3 * t]! - mx,
        c = v[3 * t + 1]! - my,
        d = v[3 * t + 2]! - mz;
      m = Math.max(m, Math.sqrt(a * a + c * c + d * d));
    }
    for (let t = lo; t < hi; t++) {
      out[3 * t] = (v[3 * t]! - mx) / m;
      out[3 * t + 1] = (v[3 * t + 1]! - my) / m;
      out[3 * t + 2] = (v[3 * t + 2]! - mz) / m;
    }
  }
  return out;
}
const mk = (relaxed: boolean) =>
  jit(
    (x: JaggedTensor) => {
      const c = x.sub(x.mean());
      const r = new JaggedTensor(c.mul(c).values.sum(-1).sqrt(), x.offsets).max();
      return c.div(r.unsqueeze(-1)).values;
    },
    { float32: relaxed ? "relaxed" : "exact" },
  );
const fe = mk(false),
  fr = mk(true);
const run = (f: typeof fe) =>
  f(
    new JaggedTensor(
      fromTypedArray(values, [T, 3], { batchDim: 1, copy: false }),
      fromTypedArray(offsets, [B + 1], { batchDim: 1, copy: false }),
    ),
  ).dataSync({ copy: false });
const ref = hand(values, offsets);
const got = run(fe);
let err = 0;
let nan = 0;
for (let i = 0; i < ref.length; i++) {
  if (Number.isNaN(ref[i]!) && Number.isNaN(got[i]!)) {
    nan++;
    continue;
  }
  err = Math.max(err, Math.abs(ref[i]! - got[i]!));
}
console.log("both NaN (one-point clouds):", nan);
console.log("max abs err", err, "kernels:", fe.dump({ after: "fuse" }).split("\n")[0]);
// Alternate the three runs; report medians over 21 rounds.
const times: number[][] = [[], [], []];
const fns = [() => hand(values, offsets), () => run(fe), () => run(fr)];
for (let i = 0; i < 21; i++) {
  fns.forEach((fn, k) => {
    const t0 = performance.now();
    fn();
    times[k]!.push(performance.now() - t0);
  });
}
const [h, e, x] = times.map((ts) => ts.sort((a, b) => a - b)[10]!);
console.log(
  `hand-written ${h!.toFixed(2)} ms; batchwise (default, relaxed float32) ${x!.toFixed(2)} ms (ratio ${(x! / h!).toFixed(2)}), float32: "exact" ${e!.toFixed(2)} ms (ratio ${(e! / h!).toFixed(2)})`,
);
