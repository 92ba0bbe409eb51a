/**
 * Backend capabilities (what `src/` decides by instead of backend names), the one
 * place the fuse options are built, and `t.to(backend)` between two JS backends.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { getJsBackend } from "../../src/backend.js";
import { BackendError, DTypeError, JaggedTensor, jit, setBackend, tensor, type Tensor } from "../../src/index.js";
import type { Backend } from "../../runtime/backend.js";
import { fuseOptionsFor } from "../../runtime/fuse-options.js";
import { JsBackend } from "../../runtime/js.js";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** A JS backend that refuses float64, as WebGPU does (a third backend would state this itself). */
function noFloat64(): Backend {
  return Object.assign(Object.create(new JsBackend()) as Backend, {
    dtypes: ["float32", "int32", "uint32", "bool"],
    displayName: "NoF64",
  });
}

describe("backend capabilities", () => {
  it("the JS backend states its capabilities", () => {
    const js = getJsBackend();
    expect({
      hostMemory: js.hostMemory,
      dtypes: js.dtypes,
      maxKernelBuffers: js.maxKernelBuffers,
      mixedBaseOutputs: js.mixedBaseOutputs,
      syncCompile: js.syncCompile,
      shippedKernel: js.shippedKernel,
    }).toEqual({
      hostMemory: true,
      dtypes: ["float32", "float64", "int32", "uint32", "bool", "uint8", "int8", "uint16", "int16"],
      maxKernelBuffers: Infinity,
      mixedBaseOutputs: true,
      syncCompile: true,
      shippedKernel: "js",
    });
    expect(typeof js.view).toBe("function");
    expect(typeof js.wrap).toBe("function");
  });

  it("fuseOptionsFor builds every field from the backend and the user's choices", () => {
    expect(fuseOptionsFor(getJsBackend())).toEqual({
      maxKernelBuffers: Infinity,
      unrollLimit: 64,
      fusion: true,
      mixedBaseOutputs: true,
      relaxedFloat32: true,
    });
    expect(
      fuseOptionsFor({ maxKernelBuffers: 8, mixedBaseOutputs: false }, { fusion: false, float32: "exact" }),
    ).toEqual({
      maxKernelBuffers: 8,
      unrollLimit: 64,
      fusion: false,
      mixedBaseOutputs: false,
      relaxedFloat32: false,
    });
    expect(
      fuseOptionsFor({ maxKernelBuffers: 8, mixedBaseOutputs: false }, { float32: "relaxed" }).relaxedFloat32,
    ).toBe(true);
  });

  it("src/ decides by capabilities: no backend-name checks and no JsBuffer/JsBackend instanceof", () => {
    const offenders: string[] = [];
    for (const f of sourceFiles(join(import.meta.dirname, "../../src"))) {
      readFileSync(f, "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (
            /name\s*[!=]==?\s*"(js|webgpu)"|"(js|webgpu)"\s*[!=]==?\s*\S*name|instanceof\s+Js(Buffer|Backend)/.test(
              line,
            )
          )
            offenders.push(`${f}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });

  it("a backend without float64 refuses a float64 tensor by its dtypes", async () => {
    const x = tensor([1.25, 2], { dtype: "float64" });
    const err = await x.to(noFloat64()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DTypeError);
    expect((err as Error).message).toBe(
      'to: x (;2) is float64, which NoF64 cannot hold: cast it first, e.g. x.cast("float32")',
    );
  });
});

describe("Tensor.to between JS backends", () => {
  it("is a no-op on the tensor's own backend, by object or by name", async () => {
    const x = tensor(
      [
        [1, 2],
        [3, 4],
      ],
      { batchDim: 1 },
    );
    expect(await x.to("js")).toBe(x);
    expect(await x.to(getJsBackend())).toBe(x);
  });

  it("realizes a lazy tensor first", async () => {
    const y = tensor(
      [
        [1, 2],
        [3, 4],
      ],
      { batchDim: 1 },
    )
      .mul(3)
      .sub(0.5);
    const z = await y.to("js");
    expect(z.toString()).toBe("(2; 2)");
    expect(Array.from(z.dataSync())).toEqual([2.5, 5.5, 8.5, 11.5]);
  });

  it("copies to another backend: the copy lives there, the source is unchanged", async () => {
    const other = new JsBackend();
    const x = tensor([7, -1, 3], { dtype: "int32" });
    const y = await x.to(other);
    expect(y).not.toBe(x);
    expect(y._src.kind === "buffer" && y._src.backend).toBe(other);
    expect(y.dtype).toBe("int32");
    expect(Array.from(y.dataSync())).toEqual([7, -1, 3]);
    // A copy, not a shared buffer.
    (y.dataSync({ copy: false }) as Int32Array)[0] = 100;
    expect(Array.from(x.dataSync())).toEqual([7, -1, 3]);
    expect(Array.from(y.dataSync())).toEqual([100, -1, 3]);
  });

  it("refuses an unknown or uninitialised backend and a value that is no backend with BackendError", async () => {
    const x = tensor([1]);
    await expect(x.to("webgpu")).rejects.toThrow(
      new BackendError(
        'to: backend "webgpu" is not initialised (call await initWebGPU() first); initialised backends are "js"',
      ),
    );
    await expect(x.to("cuda" as "js")).rejects.toThrow(
      new BackendError('to: backend "cuda" is not initialised; initialised backends are "js"'),
    );
    // setBackend says when the name is no backend's at all, and lists the names.
    expect(() => setBackend("bogus" as "js")).toThrow(
      new BackendError('setBackend: "bogus" is not a backend name; the backends are "js", "webgpu", "wasm"'),
    );
    expect(() => setBackend("webgpu")).toThrow(
      new BackendError('setBackend: backend "webgpu" is not initialised (call await initWebGPU() first)'),
    );
    await expect(x.to(42 as unknown as "js")).rejects.toThrow(
      new BackendError('to: backend must be "js", "webgpu", "wasm" or a Backend object, got 42'),
    );
    await expect(x.to({ name: "js" } as unknown as "js")).rejects.toBeInstanceOf(BackendError);
  });

  it("refuses a disposed tensor", async () => {
    const x = tensor([1, 2]);
    x.dispose();
    await expect(x.to(new JsBackend())).rejects.toBeInstanceOf(BackendError);
  });

  it("moves a jagged tensor's values and offsets", async () => {
    const j = new JaggedTensor(
      tensor([1, 2, 3, 4, 5], { batchDim: 1 }),
      tensor([0, 2, 5], { dtype: "int32", batchDim: 1 }),
    );
    expect(await j.to("js")).toBe(j);
    const other = new JsBackend();
    const k = await j.to(other);
    expect(k).not.toBe(j);
    for (const t of [k.values, k.offsets] as Tensor[]) expect(t._src.kind === "buffer" && t._src.backend).toBe(other);
    expect(Array.from(k.values.dataSync())).toEqual([1, 2, 3, 4, 5]);
    expect(Array.from(k.offsets.dataSync())).toEqual([0, 2, 5]);
  });
});

describe("jit and arguments on another backend", () => {
  it("an argument its backend cannot bind is a BackendError that says to move it", async () => {
    // A JS backend whose kernels bind none of the JS backend's buffers (as WebGPU binds only its own).
    const isolated: Backend = Object.assign(Object.create(new JsBackend()) as Backend, { owns: () => false });
    const f = jit((x: Tensor) => x.add(1), { backend: isolated, name: "plus1" });
    const x = tensor([[1, 2]], { batchDim: 1 });
    expect(() => f(x)).toThrow(
      new BackendError(
        'jit @plus1: argument 0 (1; 2) lives on the js backend, but this function runs on js: move it first with await t.to("js")',
      ),
    );
    await expect(f.callAsync(x)).rejects.toBeInstanceOf(BackendError);
  });
});
