// ndarray + ndarray-ops: strided views and cwise-compiled elementwise loops,
// one pass per op with typed-array temporaries. ndarray-ops has no tanh and no
// axis reductions: tanh(x) = 1 - 2 / (exp(2x) + 1), and reductions run per
// cloud over views.

import ndarray, { type NdArray } from "ndarray";
import ops from "ndarray-ops";
import { raggedLayout, type B2Out, type B4Out, type LibAdapter } from "../../cases.js";
import { inverse3 } from "./inv3.js";

type Nd = NdArray<Float32Array>;

function vec(n: number): Nd {
  return ndarray(new Float32Array(n));
}

export default async function load(backend: string): Promise<LibAdapter> {
  return {
    library: "ndarray-ops",
    backend,
    kernels: {
      B1: () => ({
        run: ({ x }) => {
          const n = x.length;
          const xv = ndarray(x);
          const y = vec(n);
          const t = vec(n);
          ops.mul(y, xv, xv);
          ops.negeq(y);
          ops.expeq(y); // exp(-x*x)
          ops.muls(t, xv, 3);
          ops.sineq(t);
          ops.muleq(y, t); // * sin(3x)
          ops.muls(t, xv, 0.5);
          ops.addeq(y, t); // + 0.5x
          ops.muls(t, xv, 2);
          ops.expeq(t);
          ops.addseq(t, 1);
          ops.recipeq(t);
          ops.mulseq(t, -2);
          ops.addseq(t, 1); // tanh(x)
          ops.subeq(y, t);
          return y.data;
        },
      }),
      B2: () => ({
        run: ({ m, count }): B2Out => {
          const mv = ndarray(m, [count, 3, 3]);
          const entries: Nd[] = [];
          for (let k = 0; k < 9; k++) entries.push(mv.pick(null, Math.floor(k / 3), k % 3));
          const binary = (f: (o: Nd, a: Nd, b: Nd) => unknown) => (a: Nd, b: Nd) => {
            const o = vec(count);
            f(o, a, b);
            return o;
          };
          const r = inverse3<Nd>(
            { mul: binary(ops.mul), sub: binary(ops.sub), add: binary(ops.add), div: binary(ops.div) },
            entries,
          );
          const inv = ndarray(new Float32Array(count * 9), [count, 3, 3]);
          for (let k = 0; k < 9; k++) ops.assign(inv.pick(null, Math.floor(k / 3), k % 3), r.inv[k]!);
          return { inv: inv.data, det: r.det.data };
        },
      }),
      B3: () => ({
        run: ({ x, clouds, points }) => {
          const out = ndarray(Float32Array.from(x), [clouds, points, 3]);
          for (let b = 0; b < clouds; b++) {
            for (let c = 0; c < 3; c++) {
              const coord = out.pick(b, null, c);
              ops.subseq(coord, ops.sum(coord) / points);
            }
          }
          const sq = ndarray(new Float32Array(x.length), [clouds, points, 3]);
          ops.mul(sq, out, out);
          const norms = ndarray(new Float32Array(clouds * points), [clouds, points]);
          ops.add(norms, sq.pick(null, null, 0), sq.pick(null, null, 1));
          ops.addeq(norms, sq.pick(null, null, 2));
          ops.sqrteq(norms);
          for (let b = 0; b < clouds; b++) ops.divseq(out.pick(b, null, null), ops.sup(norms.pick(b, null)));
          return out.data;
        },
      }),
      B4: () => ({
        run: ({ clouds, sizes }): B4Out => {
          const { maxN, firstIdx } = raggedLayout(sizes);
          const padded = ndarray(new Float32Array(clouds.length * maxN * 3), [clouds.length, maxN, 3]);
          const packed = ndarray(new Float32Array(firstIdx[clouds.length]! * 3), [firstIdx[clouds.length]!, 3]);
          for (let b = 0; b < clouds.length; b++) {
            const src = ndarray(clouds[b]!, [sizes[b]!, 3]);
            ops.assign(padded.pick(b, null, null).hi(sizes[b]!, 3), src);
            ops.assign(packed.lo(firstIdx[b]!, 0).hi(sizes[b]!, 3), src);
          }
          return { padded: padded.data, maxN, packed: packed.data, firstIdx };
        },
      }),
    },
    skipped: {
      // --- B8: batched linear algebra ---
      B8solve: "ndarray-ops has elementwise loops only: no solve",
      B8eigh: "ndarray-ops has elementwise loops only: no eigh",
    },
  };
}
