/** Backend selection. The JS backend is the default and needs nothing installed. */
import { BackendError } from "../ir/errors.js";
import type { Backend } from "../runtime/backend.js";
import { JsBackend } from "../runtime/js.js";

const jsBackend = new JsBackend();
const backends = new Map<string, Backend>([["js", jsBackend]]);
let current: Backend = jsBackend;
/** How to make a backend available, for the error when it is not. */
const INIT_HINT: Readonly<Record<string, string>> = { webgpu: " (call await initWebGPU() first)" };

export function getJsBackend(): JsBackend {
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
 * Selects the backend for new tensors and programs: `setBackend("js")`, or
 * `setBackend("webgpu")` after `await initWebGPU()`.
 */
export function setBackend(name: "js" | "webgpu"): void {
  const b = backends.get(name);
  if (b === undefined) throw new BackendError(`setBackend: backend "${name}" is not initialised${INIT_HINT[name] ?? ""}`);
  current = b;
}
