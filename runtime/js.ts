/** The JS backend: typed arrays in host memory, kernels compiled with `new Function`. */
import { kernelToJS } from "../codegen/js.js";
import { BackendError } from "../ir/errors.js";
import { kernelConsts, type Kernel } from "../ir/kernel.js";
import { JsHostBackend, type JsCompiled, type JsKernelCompiler, type KernelFn } from "./js-host.js";

export { JsBuffer, JsHostBackend, type JsKernelCompiler } from "./js-host.js";

/** The JS kernel compiler: generated source, compiled with `new Function`. */
export const JS_KERNEL_COMPILER: JsKernelCompiler = {
  source: (kernel: Kernel): string => kernelToJS(kernel).source,
  compile(kernel: Kernel): JsCompiled {
    const { source, body } = kernelToJS(kernel);
    let fn: KernelFn;
    try {
      fn = new Function("ins", "outs", "sizes", "strides", "consts", body) as KernelFn;
    } catch (e) {
      throw new BackendError(`js: generated kernel does not compile (${(e as Error).message}):\n${source}`);
    }
    return { kernel, source, fn, consts: kernelConsts(kernel) };
  },
};

/** The JS backend with its kernel compiler. */
export class JsBackend extends JsHostBackend {
  constructor() {
    super(JS_KERNEL_COMPILER);
  }
}
