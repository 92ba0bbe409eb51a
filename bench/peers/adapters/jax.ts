// @jax-js/jax: jit-compiled on the wasm backend (`init("wasm")`, as Node needs).
// jax-js moves arrays into every op (reference counting), so each reuse takes
// `.ref`; `data()` consumes the array it reads.

import { defaultDevice, init, jit, numpy as np } from "@jax-js/jax";
import { raggedLayout, type B2Out, type B4Out, type LibAdapter } from "../../cases.js";
import { inverse3 } from "./inv3.js";

type Arr = np.Array;

async function f32(a: Arr): Promise<Float32Array> {
  return (await a.data()) as Float32Array;
}

export default async function load(backend: string): Promise<LibAdapter> {
  const devices = await init(backend as "wasm");
  if (!devices.includes(backend as "wasm"))
    throw new Error(`jax-js device ${backend} unavailable (have ${devices.join(", ")})`);
  defaultDevice(backend as "wasm");
  const notes = [
    `jit on ${backend}; ${typeof SharedArrayBuffer === "function" ? "SharedArrayBuffer present, so its wasm kernels may use worker threads" : "single-threaded"}`,
  ];

  return {
    library: "@jax-js/jax",
    backend: `${backend} (jit)`,
    notes,
    kernels: {
      B1: () => {
        const f = jit((x: Arr) =>
          np
            .exp(x.ref.mul(x.ref).neg())
            .mul(np.sin(x.ref.mul(3)))
            .add(x.ref.mul(0.5))
            .sub(np.tanh(x)),
        );
        return { run: ({ x }) => f32(f(np.array(x))), dispose: () => f.dispose() };
      },
      B2: () => {
        const f = jit((m: Arr) => {
          const entries = Array.from({ length: 9 }, (_, k) => m.ref.slice([], k));
          m.dispose();
          // Tracers: every use takes its own reference; the trace is discarded after compiling.
          const r = inverse3<Arr>(
            {
              mul: (a, b) => a.ref.mul(b.ref),
              sub: (a, b) => a.ref.sub(b.ref),
              add: (a, b) => a.ref.add(b.ref),
              div: (a, b) => a.ref.div(b.ref),
            },
            entries,
          );
          return [np.stack(r.inv, 1), r.det];
        });
        return {
          run: async ({ m, count }): Promise<B2Out> => {
            const [inv, det] = f(np.array(m, { shape: [count, 9] })) as Arr[];
            return { inv: await f32(inv!), det: await f32(det!) };
          },
          dispose: () => f.dispose(),
        };
      },
      B3: () => {
        const f = jit((x: Arr) => {
          const centred = x.ref.sub(np.mean(x, 1, { keepdims: true }));
          const norms = np.sqrt(np.sum(centred.ref.mul(centred.ref), 2, { keepdims: true }));
          return centred.div(np.max(norms, 1, { keepdims: true }));
        });
        return {
          run: ({ x, clouds, points }) => f32(f(np.array(x, { shape: [clouds, points, 3] }))),
          dispose: () => f.dispose(),
        };
      },
      // Ragged sizes: eager ops (a jit would retrace for every list of shapes).
      // jax-js 0.1.25 builds one kernel over all 1,000 inputs of concatenate/stack:
      // ~10 s per call here, so --quick leaves this row out.
      B4: () => ({
        run: async ({ clouds, sizes }): Promise<B4Out> => {
          const { maxN, firstIdx } = raggedLayout(sizes);
          const list = clouds.map((c, b) => np.array(c, { shape: [sizes[b]!, 3] }));
          const packed = np.concatenate(
            list.map((a) => a.ref),
            0,
          );
          const padded = np.stack(
            list.map((a, b) =>
              np.pad(a, [
                [0, maxN - sizes[b]!],
                [0, 0],
              ]),
            ),
            0,
          );
          return { padded: await f32(padded), maxN, packed: await f32(packed), firstIdx };
        },
      }),
    },
    skipped: {
      // --- B8: batched linear algebra ---
      B8solve: "not written for jax-js yet (its linalg coverage in 0.1.25 was not checked)",
      B8eigh: "not written for jax-js yet (its linalg coverage in 0.1.25 was not checked)",
    },
    heavy: { B4: "one call takes ~10 s (eager concatenate/stack over 1,000 arrays)" },
  };
}
