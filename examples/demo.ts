/**
 * `npm run demo`: trace one realistic function once, print its IR, run it at
 * batch sizes 1, 7, 1000 and 100000, and print the counters (one trace; no
 * compile after the first call).
 *
 * The function centres a batch of point clouds, computes each cloud's 3×3
 * covariance and its determinant.
 */
import { fromTypedArray, jit, type Tensor } from "batchwise";

function covarianceAndDet(x: Tensor): [Tensor, Tensor] {
  const n = x.baseShape[0]!;
  const centred = x.sub(x.mean(0, { keepdim: true })); // (B; N,3)
  const cov = centred
    .transpose()
    .matmul(centred)
    .div(n - 1); // (B; 3,3)
  const e = (i: number, j: number) => cov.select(0, i).select(0, j); // (B;)
  const det = e(0, 0)
    .mul(
      e(1, 1)
        .mul(e(2, 2))
        .sub(e(1, 2).mul(e(2, 1))),
    )
    .sub(
      e(0, 1).mul(
        e(1, 0)
          .mul(e(2, 2))
          .sub(e(1, 2).mul(e(2, 0))),
      ),
    )
    .add(
      e(0, 2).mul(
        e(1, 0)
          .mul(e(2, 1))
          .sub(e(1, 1).mul(e(2, 0))),
      ),
    );
  return [cov, det];
}

/** Deterministic points: a stretched, noisy ellipsoid per cloud. */
function clouds(batch: number, n: number): Tensor {
  const data = new Float32Array(batch * n * 3);
  let s = 12345;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  for (let b = 0; b < batch; b++) {
    for (let i = 0; i < n; i++) {
      const o = (b * n + i) * 3;
      data[o] = 3 * rand() + b;
      data[o + 1] = 2 * rand();
      data[o + 2] = rand() + 0.1 * data[o]!;
    }
  }
  return fromTypedArray(data, [batch, n, 3], { batchDim: 1 });
}

const f = jit(covarianceAndDet, { name: "covariance_and_det" });
const N = 64;
for (const batch of [1, 7, 1000, 100000]) {
  const x = clouds(batch, N);
  const t0 = performance.now();
  const [cov, det] = f(x);
  const detValues = det.dataSync();
  const ms = performance.now() - t0;
  if (batch === 1) {
    console.log("IR of the traced function:\n");
    console.log(f.dump());
    console.log("\nAfter fusion:\n");
    console.log(f.dump({ after: "fuse" }));
    console.log("");
  }
  console.log(
    `batch ${String(batch).padStart(6)}: x ${x.toString()} -> cov ${cov.toString()}, det ${det.toString()}; ` +
      `det[0] = ${detValues[0]!.toFixed(4)}; ${ms.toFixed(1)} ms; stats ${JSON.stringify(f.stats)}`,
  );
}
const s = f.stats;
console.log(`\ntraces: ${s.traces}, compiles: ${s.compiles} (all at the first call), trace cache hits: ${s.cacheHits}`);
if (s.traces !== 1) throw new Error("expected exactly one trace");
