/**
 * The WebGPU types that the public declarations name, resolved against the
 * consumer's own globals.
 *
 * The published `.d.ts` files name no global WebGPU type (no `GPUDevice`, no
 * `/// <reference types="@webgpu/types" />`): TypeScript 7's DOM and WebWorker
 * libs declare WebGPU, and `@webgpu/types` declares the same names, so a
 * reference to it in our declarations gave every consumer with the DOM lib ~180
 * "Duplicate identifier 'GPU…'" errors; and a consumer without the DOM lib could
 * not use `@webgpu/types` at all (it needs DOM's event and image types).
 *
 * Instead each type here is the consumer's own global WebGPU type where its libs
 * declare one (TypeScript's DOM or WebWorker lib from TS 7 on, or `@webgpu/types`
 * that the consumer adds to its `types`), found through `typeof globalThis`, which
 * names nothing that may be missing (the instance type of the global class is
 * its `prototype`'s). Where there is none, it is a small
 * structural type of our own: what batchwise uses of it. This repository's own
 * build has `@webgpu/types` (a devDependency, in tsconfig.json's `types`), so
 * inside the sources these are exactly the `@webgpu/types` types.
 */

/** A GPU device as batchwise's declarations describe one where the program has no WebGPU types. */
export interface MinimalGPUDevice {
  /** The device's label. */
  readonly label: string;
  /** Destroys the device (its buffers are gone; the backend opens a new one on the next call). */
  destroy(): void;
}

/** A WebGPU entry point (`navigator.gpu`, Dawn's `create()`) where the program has no WebGPU types. */
export interface MinimalGPU {
  /** Asks for an adapter. */
  requestAdapter(options?: object): Promise<unknown>;
}

/**
 * A `GPUDevice`: the global `GPUDevice` where the program declares WebGPU
 * (TypeScript 7's DOM lib, or `@webgpu/types`), else {@link MinimalGPUDevice}.
 */
export type GPUDeviceLike = typeof globalThis extends {
  /** The program's global `GPUDevice` class, where its libs declare one. */
  readonly GPUDevice: {
    /** Its instances' type. */
    readonly prototype: infer T;
  };
}
  ? T
  : MinimalGPUDevice;

/**
 * A `GPU` (`navigator.gpu`, or the object Dawn's `create()` returns in Node): the
 * global `GPU` where the program declares WebGPU, else {@link MinimalGPU}.
 */
export type GPULike = typeof globalThis extends {
  /** The program's global `GPU` class, where its libs declare one. */
  readonly GPU: {
    /** Its instances' type. */
    readonly prototype: infer T;
  };
}
  ? T
  : MinimalGPU;

/** WebGPU's `GPUPowerPreference`. */
export type GPUPowerPreferenceLike = "high-performance" | "low-power";
