/**
 * Shared set-up for WebGPU tests: get an adapter or say why not. Without one the
 * tests are skipped with the reason printed, unless BATCHWISE_REQUIRE_WEBGPU=1
 * (CI), where the missing adapter is a failing test.
 */
import { afterAll, describe, it } from "vitest";
import { setBackend } from "../../src/backend.js";
import type { TypedArray } from "../../ir/dtype.js";
import type { Kernel, Launch } from "../../ir/kernel.js";
import { initWebGPU, type WebGPUBackend } from "../../runtime/webgpu/backend.js";

export const REQUIRE_WEBGPU = process.env["BATCHWISE_REQUIRE_WEBGPU"] === "1";

export interface WebGPUProbe {
  readonly backend: WebGPUBackend | null;
  readonly reason: string;
}

export async function probeWebGPU(): Promise<WebGPUProbe> {
  try {
    const backend = await initWebGPU();
    return { backend, reason: "" };
  } catch (e) {
    return { backend: null, reason: (e as Error).message };
  }
}

/**
 * `probeWebGPU` for a test file: after the file's tests, the JS backend is
 * selected again and the device is destroyed (so Node can exit).
 */
export async function probeWebGPUForFile(): Promise<WebGPUProbe> {
  const probe = await probeWebGPU();
  afterAll(() => {
    setBackend("js");
    probe.backend?.destroy();
  });
  return probe;
}

/** `describe` that runs only with an adapter (see the file comment). */
export function describeWebGPU(probe: WebGPUProbe, name: string, body: (backend: WebGPUBackend) => void): void {
  const backend = probe.backend;
  if (backend) {
    describe(name, () => body(backend));
  } else if (REQUIRE_WEBGPU) {
    describe(name, () => {
      it("has a WebGPU adapter (BATCHWISE_REQUIRE_WEBGPU=1)", () => {
        throw new Error(`no WebGPU adapter: ${probe.reason}`);
      });
    });
  } else {
    console.warn(`[batchwise] WebGPU tests "${name}" skipped: ${probe.reason}`);
    describe.skip(name, () => body(null as unknown as WebGPUBackend));
  }
}

export interface HostTensor {
  readonly dtype: Kernel["inputs"][number]["dtype"];
  readonly data: TypedArray;
}

/** Uploads inputs, runs one kernel, reads every output back (of the given lengths), frees everything. */
export async function runKernel(
  backend: WebGPUBackend,
  kernel: Kernel,
  inputs: readonly HostTensor[],
  launch: Launch,
  outputLengths: readonly number[],
): Promise<TypedArray[]> {
  const compiled = await backend.compile(kernel);
  const ins = inputs.map((t) => {
    const b = backend.alloc(t.dtype, t.data.length);
    backend.write(b, t.data);
    return b;
  });
  const outs = kernel.outputs.map((o, j) => backend.alloc(o.dtype, outputLengths[j]!));
  try {
    backend.dispatch(compiled, ins, outs, launch);
    return await Promise.all(outs.map((b) => backend.read(b)));
  } finally {
    for (const b of [...ins, ...outs]) backend.free(b);
  }
}

/** `runKernel` of a `scalarBatchKernel` on inputs of n scalars each (stride 1): every output n long. */
export function runOnScalars(
  backend: WebGPUBackend,
  kernel: Kernel,
  inputs: readonly HostTensor[],
): Promise<TypedArray[]> {
  const n = inputs[0]!.data.length;
  return runKernel(
    backend,
    kernel,
    inputs,
    { batchSizes: [n], inputBatchStrides: inputs.map(() => [1]) },
    kernel.outputs.map(() => n),
  );
}

/**
 * `runOnScalars` of a two-input kernel on `a` and `b`, both of `dtype`: its outputs, and
 * `a` and `b` as plain number arrays (for the reference formulas).
 */
export async function runOnPair(
  backend: WebGPUBackend,
  kernel: Kernel,
  dtype: HostTensor["dtype"],
  a: TypedArray,
  b: TypedArray,
): Promise<{ outs: TypedArray[]; A: number[]; B: number[] }> {
  const outs = await runOnScalars(backend, kernel, [
    { dtype, data: a },
    { dtype, data: b },
  ]);
  return { outs, A: Array.from(a), B: Array.from(b) };
}

/** Elementwise closeness with NaN = NaN and ±Inf exact; relative tolerance `rtol`. */
export function closeTo(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  rtol = 1e-5,
  atol = 1e-6,
): string | null {
  if (actual.length !== expected.length) return `length ${actual.length} vs ${expected.length}`;
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i]!;
    const e = expected[i]!;
    if (Number.isNaN(e) ? Number.isNaN(a) : a === e || Math.abs(a - e) <= atol + rtol * Math.abs(e)) continue;
    return `at ${i}: got ${a}, expected ${e}`;
  }
  return null;
}
