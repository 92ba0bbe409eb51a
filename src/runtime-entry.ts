/**
 * `batchwise/runtime`: loads and runs bundles (written by `f.bundle()`) on JS
 * and WebGPU, with no tracer, no graph passes, no code generators and no
 * `eval`, for pages that only run precompiled programs.
 *
 * The full `loadBundle` of `batchwise` re-derives a bundle's schedule and its
 * kernels' sources from its graph and refuses any that differ. This one cannot
 * (it has no compiler), so it trusts a bundle only by its content hash: the
 * caller must pin the SHA-256 it expects (`loadBundle(mod, { sha256 })`, the
 * `sha256` export of the bundle it trusts), checked with WebCrypto (or
 * `@noble/hashes`, loaded only where WebCrypto is missing). Before hashing, it
 * checks the module's outline and what the hash cannot tell apart (typed arrays
 * of the constants' dtypes, kernels that are functions, plain data elsewhere);
 * a module that fails those checks gets the full loader's schema messages (its
 * zod schema is loaded for that only). Without a pin it is a BundleError.
 *
 * Jagged tensors and TensorDicts are arguments and results of bundles once the
 * page loads their classes: a page that uses neither carries neither; one whose
 * bundle returns them but never builds one names them in `loadBundle`'s `kinds`
 * option (otherwise a BundleError says so).
 *
 * Tensors made here (`tensor`, `fromTypedArray`, …) are the library's tensors;
 * they are inputs and outputs of bundles. Eager tensor arithmetic needs the
 * compiler and thus the full `batchwise` entry.
 *
 * @module batchwise/runtime
 */
import { BackendError, BundleError } from "../ir/errors.js";
import { mapStep, type Step } from "../ir/schedule.js";
import {
  bundleFunction,
  check,
  checkFormat,
  checkHash,
  checkLayout,
  checkOptions,
  parseBundle,
  snapshotOf,
  type BundleFunction,
  type BundleFunctionOf,
  type BundleModule,
  type LoadBundleOptions,
} from "./bundle-load.js";
import { Tensor } from "./tensor.js";
import { EAGER_OP_NAMES } from "./api/tensor-op-names.js";

// The eager Tensor operations record nodes that only the compiler can run: the full
// entry installs them with it (src/api/tensor-ops.ts, installTensorOps; their names are
// src/api/tensor-op-names.ts, which tsc checks against the bodies). This page has
// no compiler, so each is a stub that says so (a BackendError); where the full entry
// is loaded too, its methods stay (or replace these).
const P = Tensor.prototype as unknown as Record<string, unknown>;
for (const name of EAGER_OP_NAMES) {
  if (!(name in P)) {
    const stub = function (this: Tensor): never {
      throw new BackendError(
        `${name} of x ${this.toString()}: computing tensor operations needs the compiler of the full batchwise entry; batchwise/runtime only runs bundles`,
      );
    };
    Object.defineProperty(P, name, { value: Object.assign(stub, { stub: true }), writable: true, configurable: true });
  }
}

/**
 * Loads a bundle module whose SHA-256 the caller pins (`opts.sha256`): checks
 * the module's outline and what its hash cannot tell apart (a malformed module
 * gets the full loader's schema messages), its graph (which must parse and print
 * back to itself), its content hash against the recorded and the pinned one,
 * and its argument and result layout, then loads the shipped kernels on the
 * current backend (or `opts.backend`) without compiling any. A bundle that
 * takes or returns jagged tensors or TensorDicts needs their classes on the
 * page: one it returns but the page never builds goes in `opts.kinds`. With the
 * module's declarations (`f.bundleTypes({ from: "batchwise/runtime" })`, saved
 * next to it) the result is typed like the traced function, as with the full
 * entry's `loadBundle`.
 *
 * @example
 * ```ts
 * import { loadBundle, tensor } from "batchwise/runtime";
 * import * as mod from "./det.bundle.mjs";
 * const det = await loadBundle(mod, { sha256: "<the hash of the bundle you wrote>" }); // (x0: Tensor) => Tensor
 * det(tensor([[[2, 0, 0], [0, 3, 0], [0, 0, 4]]], { batchDim: 1 })); // (1;): [24]
 * ```
 */
export function loadBundle<M extends BundleModule>(mod: M, opts?: LoadBundleOptions): Promise<BundleFunctionOf<M>>;
/**
 * `loadBundle<typeof f>(mod, { sha256 })`: typed like the function `F` (a jit
 * function, or the traced function itself) for a module without declarations.
 *
 * @typeParam F - The function whose parameters and result type the loaded bundle takes.
 */
export function loadBundle<F extends (...args: never) => unknown>(
  mod: BundleModule,
  opts?: LoadBundleOptions,
): Promise<BundleFunction<Parameters<F>, ReturnType<F>>>;
export async function loadBundle(mod: BundleModule, opts: LoadBundleOptions = {}): Promise<BundleFunction> {
  if (opts !== null && typeof opts === "object" && opts.sha256 === undefined) {
    throw new BundleError(
      "loadBundle (batchwise/runtime): the bundle's SHA-256 is not pinned; pass the hash you trust (loadBundle(mod, { sha256 }), the sha256 export of the bundle as you wrote it), or load it with the full batchwise entry, which re-derives its schedule and kernels from its graph",
    );
  }
  const pinned = checkOptions(opts);
  checkFormat(mod);
  const copy = snapshotOf(mod);
  if (typeof copy === "string") {
    // The schema of the full loader says which fields are wrong; it is loaded only now, so pages do not carry it.
    const { validateModule } = await import("./bundle-schema.js");
    validateModule(mod);
    throw new BundleError(`loadBundle: malformed bundle: ${copy}`);
  }
  const b = parseBundle(copy, pinned);
  // The hash first: from here on the content is the one the caller pinned.
  await checkHash(b);
  const { snapshot, order } = b;
  check(
    snapshot.kernels.length === snapshot.steps.length,
    `the bundle's ${snapshot.steps.length} steps and ${snapshot.kernels.length} kernels do not match`,
  );
  const steps: Step[] = snapshot.steps.map((st, i) =>
    mapStep(st, (n) => {
      check(n < order.length, `step ${i} names node ${n}, the graph has ${order.length}`);
      return order[n]!;
    }),
  );
  checkLayout(snapshot, b.graph);
  return bundleFunction(b, steps, opts.backend);
}

// Tensors, their creation, the backends, the bundle format and the containers (the exports batchwise has too).
export * from "./entry-shared.js";
