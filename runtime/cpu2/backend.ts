/** TRIAL backend (docs/contributing/new-backend.md): the JS host backend under another name. */
import { JsHostBackend } from "../js-host.js";

export class Cpu2Backend extends JsHostBackend {
  // @ts-expect-error -- the trial renames the JS backend; a real backend implements Backend itself
  override readonly name = "cpu2" as const;
}
