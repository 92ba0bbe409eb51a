// @tensorflow/tfjs-core on its cpu or wasm backend, eager ops inside tf.tidy,
// read back with dataSync(). Functional ops (tf.mul(a, b)): the chained
// methods (a.mul(b)) are only registered by the full @tensorflow/tfjs bundle.

import * as tf from "@tensorflow/tfjs-core";
import "@tensorflow/tfjs-backend-cpu";
import "@tensorflow/tfjs-backend-wasm";
import { raggedLayout, type B2Out, type B4Out, type LibAdapter } from "../../cases.js";
import { inverse3 } from "./inv3.js";

function f32(t: tf.Tensor): Float32Array {
  const d = t.dataSync();
  t.dispose();
  return d as Float32Array;
}

export default async function load(backend: string): Promise<LibAdapter> {
  // tfjs suggests tfjs-node on every Node start; that is not a peer here.
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).includes("tfjs-node")) warn(...args);
  };
  if (!(await tf.setBackend(backend))) throw new Error(`tfjs backend ${backend} failed to initialise`);
  await tf.ready();
  const notes = [`tfjs ${tf.version_core}, backend ${tf.getBackend()}`];

  return {
    library: "@tensorflow/tfjs-core",
    backend,
    notes,
    kernels: {
      B1: () => ({
        run: ({ x }) =>
          f32(
            tf.tidy(() => {
              const t = tf.tensor1d(x);
              const bell = tf.exp(tf.neg(tf.mul(t, t)));
              return tf.sub(tf.add(tf.mul(bell, tf.sin(tf.mul(t, 3))), tf.mul(t, 0.5)), tf.tanh(t));
            }),
          ),
      }),
      B2: () => ({
        run: ({ m, count }): B2Out => {
          const [inv, det] = tf.tidy(() => {
            // Entries as 9 contiguous rows: unstack along axis 1 directly is ~10x slower on cpu.
            const cols = tf.unstack(tf.transpose(tf.tensor2d(m, [count, 9])), 0);
            const r = inverse3<tf.Tensor>({ mul: tf.mul, sub: tf.sub, add: tf.add, div: tf.div }, cols);
            return [tf.stack(r.inv, 1), r.det];
          }) as [tf.Tensor, tf.Tensor];
          return { inv: f32(inv), det: f32(det) };
        },
      }),
      B3: () => ({
        run: ({ x, clouds, points }) =>
          f32(
            tf.tidy(() => {
              const t = tf.tensor3d(x, [clouds, points, 3]);
              const centred = tf.sub(t, tf.mean(t, 1, true));
              const norms = tf.sqrt(tf.sum(tf.square(centred), 2, true));
              return tf.div(centred, tf.max(norms, 1, true));
            }),
          ),
      }),
      B4: () => ({
        run: ({ clouds, sizes }): B4Out => {
          const { maxN, firstIdx } = raggedLayout(sizes);
          const [padded, packed] = tf.tidy(() => {
            const list = clouds.map((c, b) => tf.tensor2d(c, [sizes[b]!, 3]));
            const packed = tf.concat(list, 0);
            const padded = tf.stack(
              list.map((t, b) =>
                tf.pad(t, [
                  [0, maxN - sizes[b]!],
                  [0, 0],
                ]),
              ),
            );
            return [padded, packed];
          });
          return { padded: f32(padded!), maxN, packed: f32(packed!), firstIdx };
        },
      }),
    },
    skipped: {
      // --- B8: batched linear algebra ---
      B8solve: "tfjs-core 4.22 has no linear solve (tf.linalg has only bandPart, gramSchmidt and qr)",
      B8eigh: "tfjs-core 4.22 has no eigendecomposition (no batched eigh)",
    },
  };
}
