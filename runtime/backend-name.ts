/**
 * The names of the backends batchwise ships, once: `BackendName` (what `setBackend`,
 * `t.to`, `Backend.name` and the CLI's `--backend` take) derives from this tuple, and
 * so do the lists messages print. A new backend adds its name here; every table keyed
 * by `BackendName` (`{ [K in BackendName]: … }`) then fails `tsc` until it has an entry.
 */

/** The backends, in the order messages list them (the order they were added). */
export const BACKEND_NAMES = ["js", "webgpu", "wasm"] as const;

/** A backend's name: `"js"`, `"webgpu"` or `"wasm"`. */
export type BackendName = (typeof BACKEND_NAMES)[number];

/**
 * The backends whose kernels run in a Node process without a GPU: the ones `batchwise worker
 * --backend` takes (leaving a new backend out of this list is a valid choice).
 */
export const CPU_BACKENDS = ["js", "wasm"] as const satisfies readonly BackendName[];

/** Whether `v` is one of `BACKEND_NAMES`. */
export function isBackendName(v: unknown): v is BackendName {
  return typeof v === "string" && (BACKEND_NAMES as readonly string[]).includes(v);
}

/** The names as a message lists them: `"js", "webgpu", "wasm"` (`quote`), or `js, webgpu or wasm`. */
export function listBackendNames(names: readonly string[] = BACKEND_NAMES, quote = true): string {
  const q = names.map((n) => (quote ? `"${n}"` : n));
  return quote ? q.join(", ") : q.length < 2 ? q.join("") : `${q.slice(0, -1).join(", ")} or ${q[q.length - 1]!}`;
}
