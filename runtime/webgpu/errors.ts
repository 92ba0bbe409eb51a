/**
 * Errors of the WebGPU backend. `BackendError` is the shared typed error of
 * ir/errors.ts, re-exported so WebGPU code and its callers import one class.
 */
export { BackendError } from "../../ir/errors.js";
