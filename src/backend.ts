/** Backend selection. The JS backend is the default and needs nothing installed. */
import { BackendError } from "../ir/errors.js";
import type { Backend } from "../runtime/backend.js";
import { isBackendName, listBackendNames, type BackendName } from "../runtime/backend-name.js";
import { JsHostBackend } from "../runtime/js-host.js";
import { describe } from "./check.js";

// Compiles kernels once the full library installed its compiler (src/compiler.ts); loads shipped ones always.
const jsBackend = new JsHostBackend();
const backends = new Map<string, Backend>([["js", jsBackend]]);
let current: Backend = jsBackend;
/**
 * The function of the library's entries that makes each backend available (js always is),
 * for the error when it is not; test/api/backend-inits.test.ts checks with `tsc` that both
 * entries export each one as an async function.
 */
export const INIT_FUNCTION = {
  js: undefined,
  webgpu: "initWebGPU",
  wasm: "initWasm",
} as const satisfies { readonly [K in BackendName]: string | undefined };
const initHint = (name: string): string => {
  const f = isBackendName(name) ? INIT_FUNCTION[name] : undefined;
  return f === undefined ? "" : ` (call await ${f}() first)`;
};

export function getJsBackend(): JsHostBackend {
  return jsBackend;
}

/** The backend new tensors and programs use. */
export function getBackend(): Backend {
  return current;
}

/** Makes a backend available under its name (used by `initWebGPU`). */
export function registerBackend(b: Backend): void {
  backends.set(b.name, b);
}

/**
 * The backend a `to(backend)` call names: a registered backend's name, or a Backend
 * object (as `jit(fn, { backend })` takes). Anything else is a BackendError.
 */
export function resolveBackend(op: string, b: unknown): Backend {
  if (typeof b === "string") {
    const r = backends.get(b);
    if (r === undefined) {
      const known = [...backends.keys()].map((k) => `"${k}"`).join(", ");
      throw new BackendError(
        `${op}: backend "${b}" is not initialised${initHint(b)}; initialised backends are ${known}`,
      );
    }
    return r;
  }
  const o = b as Partial<Backend> | null;
  if (
    typeof o === "object" &&
    o !== null &&
    typeof o.name === "string" &&
    typeof o.alloc === "function" &&
    typeof o.write === "function" &&
    typeof o.read === "function" &&
    Array.isArray(o.dtypes)
  ) {
    return o as Backend;
  }
  throw new BackendError(`${op}: backend must be ${listBackendNames()} or a Backend object, got ${describe(b)}`);
}

/**
 * Selects the backend for new tensors and programs: `setBackend("js")`, or
 * `setBackend("webgpu")` after `await initWebGPU()`, `setBackend("wasm")` after `await initWasm()`.
 */
export function setBackend(name: BackendName): void {
  const b = backends.get(name);
  if (b === undefined && !isBackendName(name))
    throw new BackendError(
      `setBackend: ${typeof name === "string" ? JSON.stringify(name) : describe(name)} is not a backend name; the backends are ${listBackendNames()}`,
    );
  if (b === undefined) throw new BackendError(`setBackend: backend "${name}" is not initialised${initHint(name)}`);
  current = b;
}
