/**
 * BATCHWISE_DEBUG: one variable with named channels, comma separated:
 * `ir` (traced graphs), `passes` (the graph after every pass), `kernels` (generated
 * kernel source), `cache` (trace and program cache hits and misses), `webgpu` (how
 * `initWebGPU` picked Dawn's backend in Node).
 */
const channels = new Set(
  (typeof process !== "undefined" ? (process.env.BATCHWISE_DEBUG ?? "") : "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0),
);

export type DebugChannel = "ir" | "passes" | "kernels" | "cache" | "webgpu";

export function debugOn(c: DebugChannel): boolean {
  return channels.has(c) || channels.has("all");
}

export function debugLog(c: DebugChannel, msg: string): void {
  if (debugOn(c)) console.error(`[batchwise:${c}] ${msg}`);
}
