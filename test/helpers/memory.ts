/**
 * Memory measurement for soak tests: a forced garbage collection (V8's `gc`,
 * exposed at run time so no `--expose-gc` flag is needed) followed by a
 * macrotask, so that FinalizationRegistry callbacks (which free the device
 * buffers of tensors that were never disposed) have run before we measure.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** Collects garbage (twice: finalizers can free more) and lets pending finalizers run. */
export async function collect(): Promise<void> {
  for (let i = 0; i < 2; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 0));
  }
}

/** Heap in use after a full collection, in bytes. */
export async function heapAfterGc(): Promise<number> {
  await collect();
  return process.memoryUsage().heapUsed;
}
