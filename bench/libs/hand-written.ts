// The baseline as a library of its own: its row times the baseline against a
// second copy of itself, so its ratio shows how noisy this run was.

import { BASELINES, type LibAdapter } from "../cases.js";

export default async function load(backend: string): Promise<LibAdapter> {
  return {
    library: "hand-written",
    backend,
    kernels: {
      B1: () => ({ run: BASELINES.B1 }),
      B2: () => ({ run: BASELINES.B2 }),
      B3: () => ({ run: BASELINES.B3 }),
      B4: () => ({ run: BASELINES.B4 }),
      // --- B8: batched linear algebra ---
      B8solve: () => ({ run: BASELINES.B8solve }),
      B8eigh: () => ({ run: BASELINES.B8eigh }),
      // --- B9: J2 consistent tangent ---
      B9: () => ({ run: BASELINES.B9 }),
      // --- B7: gather + scatter-add ---
      B7: () => ({ run: BASELINES.B7 }),
    },
    skipped: {},
    notes: ["timed against a second copy of itself: its ratio is the run's noise floor"],
  };
}
