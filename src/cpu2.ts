/** TRIAL: the cpu2 backend from the public API. */
import { Cpu2Backend } from "../runtime/cpu2/backend.js";
import { JS_KERNEL_COMPILER } from "../runtime/js.js";
import { registerBackend, setBackend } from "./backend.js";

export async function initCpu2(opts: { select?: boolean } = {}): Promise<Cpu2Backend> {
  const b = new Cpu2Backend(JS_KERNEL_COMPILER);
  registerBackend(b);
  if (opts.select !== false) setBackend("cpu2");
  return b;
}
