/**
 * Getting a GPUDevice: `navigator.gpu` in a browser, the `webgpu` package (Dawn)
 * in Node. On a Linux box without a GPU, Dawn's OpenGL ES backend over Mesa's
 * software rasterizer gives a real (slow) adapter (docs/ARCHITECTURE.md, "WebGPU").
 */
// No `/// <reference types="@webgpu/types" />` here: the public declarations name no global WebGPU type
// (runtime/webgpu/gpu-types.ts says why); the sources get @webgpu/types from tsconfig.json's `types`.
import { debugLog } from "../debug.js";
import { BackendError } from "./errors.js";
import type { GPUDeviceLike, GPULike, GPUPowerPreferenceLike } from "./gpu-types.js";

/**
 * The Node WebGPU package is an optional peer dependency: it is loaded only when
 * Node code asks for a device. The specifier is a variable so that browser
 * bundlers (esbuild, Vite, webpack) neither follow it into Node built-ins nor
 * warn about it; in a browser `navigator.gpu` is used and this is never reached.
 */
const DAWN_PACKAGE = "webgpu";

/** Options of `initWebGPU`. */
export interface WebGPUOptions {
  /** A GPU to use (e.g. `navigator.gpu` or a Dawn instance); default: found as described above. */
  readonly gpu?: GPULike;
  /**
   * Dawn instance flags in Node, e.g. `["backend=opengles"]`. Default: Dawn's own
   * backend choice, then `["backend=opengles"]` (which needs `EGL_PLATFORM=surfaceless`
   * on a headless box; it is set when unset). The environment variable
   * `BATCHWISE_DAWN_FLAGS` (space- or comma-separated) overrides the default.
   */
  readonly dawnFlags?: readonly string[];
  /** The adapter to ask for: `"high-performance"` or `"low-power"` (default: the platform's choice). */
  readonly powerPreference?: GPUPowerPreferenceLike;
  /** Use this many workgroups per grid dimension at most (below the device limit); for tests of the 2-D grid. */
  readonly maxWorkgroupsPerDimension?: number;
  /** Make a new backend on a new device instead of sharing the current one. */
  readonly fresh?: boolean;
}

/** The device limits the backend relies on, as granted to the device. */
export interface DeviceLimits {
  /** Storage buffers one kernel may bind (its inputs and outputs). */
  readonly maxStorageBuffersPerShaderStage: number;
  /** Largest storage buffer binding, in bytes. */
  readonly maxStorageBufferBindingSize: number;
  /** Largest buffer, in bytes. */
  readonly maxBufferSize: number;
  /** Most workgroups per dimension of one dispatch. */
  readonly maxComputeWorkgroupsPerDimension: number;
  /** Largest uniform buffer binding, in bytes. */
  readonly maxUniformBufferBindingSize: number;
}

/** What the GPU adapter reports about itself (strings may be empty where the platform hides them). */
export interface AdapterDescription {
  /** The GPU's vendor. */
  readonly vendor: string;
  /** The GPU's architecture family. */
  readonly architecture: string;
  /** The GPU's device name or id. */
  readonly device: string;
  /** A human-readable description of the adapter. */
  readonly description: string;
  /** `"core"` WebGPU, or the reduced `"compatibility"` level. */
  readonly featureLevel: "core" | "compatibility";
  /** The Dawn flags used in Node; empty in a browser. */
  readonly dawnFlags: readonly string[];
}

export interface AcquiredDevice {
  readonly device: GPUDeviceLike;
  readonly adapter: AdapterDescription;
  readonly limits: DeviceLimits;
  /** The device has the "shader-f16" feature (requested whenever the adapter offers it): float16 is available. */
  readonly shaderF16?: boolean;
}

const REQUIRED_LIMITS = [
  "maxStorageBuffersPerShaderStage",
  "maxStorageBufferBindingSize",
  "maxBufferSize",
  "maxComputeWorkgroupsPerDimension",
] as const;

/** Dawn instances by flags: one per process is enough, and each costs a driver load. */
const dawnInstances = new Map<string, GPU>();

async function dawnGPU(flags: readonly string[]): Promise<GPU> {
  const key = flags.join(" ");
  const cached = dawnInstances.get(key);
  if (cached) return cached;
  let mod: { create(options: string[]): GPU };
  try {
    mod = (await import(/* @vite-ignore */ /* webpackIgnore: true */ DAWN_PACKAGE)) as typeof mod;
  } catch (e) {
    throw new BackendError(
      `WebGPU: the optional "webgpu" package (Dawn for Node) could not be loaded (${(e as Error).message}); install it with \`npm install webgpu\`, or stay on the js backend`,
    );
  }
  if (flags.includes("backend=opengles") && typeof process !== "undefined" && !process.env["EGL_PLATFORM"]) {
    // Without a display, Mesa's EGL needs the surfaceless platform.
    process.env["EGL_PLATFORM"] = "surfaceless";
  }
  const gpu = mod.create([...flags]);
  dawnInstances.set(key, gpu);
  return gpu;
}

/**
 * True when this is Linux and the dynamic loader cannot find `libvulkan.so.1`
 * (not in LD_LIBRARY_PATH, the usual library directories, or /etc/ld.so.cache):
 * then Dawn's default (Vulkan) attempt can only fail, and its only trace would be
 * a warning Dawn prints to the process's stderr from native code, out of reach of
 * any JS stream. False where it cannot tell (no ld.so.cache, as on musl), so that
 * such systems keep trying the default first.
 */
export function vulkanLoaderMissing(
  env: { readonly platform: string; readonly arch: string; readonly libraryPath?: string } = {
    platform: process.platform,
    arch: process.arch,
    libraryPath: process.env["LD_LIBRARY_PATH"],
  },
  fs: {
    existsSync(path: string): boolean;
    readFileSync(path: string): { includes(s: string): boolean };
  } | null = process.getBuiltinModule?.("node:fs") ?? null,
): boolean {
  if (env.platform !== "linux" || fs === null) return false;
  const lib = "libvulkan.so.1";
  const triple = env.arch === "arm64" ? "aarch64-linux-gnu" : env.arch === "x64" ? "x86_64-linux-gnu" : "";
  const dirs = [
    ...(env.libraryPath ?? "").split(":").filter((d) => d.length > 0),
    ...(triple ? [`/lib/${triple}`, `/usr/lib/${triple}`] : []),
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
    "/usr/local/lib",
  ];
  try {
    if (dirs.some((d) => fs.existsSync(`${d}/${lib}`))) return false;
    return !fs.readFileSync("/etc/ld.so.cache").includes(lib);
  } catch {
    return false;
  }
}

interface Candidate {
  readonly gpu: GPU;
  readonly dawnFlags: readonly string[];
}

async function candidates(opts: WebGPUOptions): Promise<Candidate[]> {
  if (opts.gpu) return [{ gpu: opts.gpu, dawnFlags: [] }];
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  if (nav?.gpu && !opts.dawnFlags) return [{ gpu: nav.gpu, dawnFlags: [] }];
  const isNode = typeof process !== "undefined" && process.versions?.node !== undefined;
  if (!isNode) throw new BackendError("WebGPU: navigator.gpu is not available in this browser");
  // BATCHWISE_DAWN_FLAGS="backend=opengles" skips the default attempt (and its Vulkan warning).
  const envFlags = process.env["BATCHWISE_DAWN_FLAGS"]?.split(/[\s,]+/).filter((f) => f.length > 0);
  let flagSets: (readonly string[])[];
  if (opts.dawnFlags) flagSets = [opts.dawnFlags];
  else if (envFlags?.length) flagSets = [envFlags];
  else if (vulkanLoaderMissing()) {
    // Dawn's default backends on Linux are Vulkan's: without the loader they can only fail, printing a warning.
    debugLog(
      "webgpu",
      "no Vulkan loader (libvulkan.so.1) on this system: Dawn's default attempt is skipped, using backend=opengles",
    );
    flagSets = [["backend=opengles"]];
  } else flagSets = [[], ["backend=opengles"]];
  const out: Candidate[] = [];
  for (const flags of flagSets) out.push({ gpu: await dawnGPU(flags), dawnFlags: flags });
  return out;
}

/**
 * Finds an adapter and opens a device with the limits the backend needs
 * (the adapter's own values, not the spec defaults).
 *
 * @example
 *   const { device, limits } = await acquireDevice({ dawnFlags: ["backend=opengles"] });
 */
export async function acquireDevice(opts: WebGPUOptions = {}): Promise<AcquiredDevice> {
  const tried: string[] = [];
  for (const { gpu, dawnFlags } of await candidates(opts)) {
    const where = dawnFlags.length ? `Dawn [${dawnFlags.join(" ")}]` : "default GPU";
    for (const featureLevel of ["core", "compatibility"] as const) {
      let adapter: GPUAdapter | null = null;
      try {
        const req: GPURequestAdapterOptions = { featureLevel };
        if (opts.powerPreference) req.powerPreference = opts.powerPreference;
        adapter = await gpu.requestAdapter(req);
      } catch (e) {
        tried.push(`${where} (${featureLevel}): ${(e as Error).message}`);
        continue;
      }
      if (!adapter) {
        tried.push(`${where} (${featureLevel}): no adapter`);
        continue;
      }
      const requiredLimits: Record<string, number> = {};
      for (const name of REQUIRED_LIMITS) requiredLimits[name] = adapter.limits[name];
      // float16 kernels need WGSL's f16 extension: asked for whenever the adapter has it.
      const shaderF16 = adapter.features.has("shader-f16");
      let device: GPUDevice;
      try {
        device = await adapter.requestDevice({
          requiredLimits,
          ...(shaderF16 ? { requiredFeatures: ["shader-f16" as GPUFeatureName] } : {}),
        });
      } catch (e) {
        tried.push(`${where} (${featureLevel}): requestDevice failed: ${(e as Error).message}`);
        continue;
      }
      const info = adapter.info;
      const l = device.limits;
      return {
        device,
        shaderF16,
        adapter: {
          vendor: info.vendor,
          architecture: info.architecture,
          device: info.device,
          description: info.description,
          featureLevel,
          dawnFlags,
        },
        limits: {
          maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
          maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
          maxBufferSize: l.maxBufferSize,
          maxComputeWorkgroupsPerDimension: Math.min(
            l.maxComputeWorkgroupsPerDimension,
            opts.maxWorkgroupsPerDimension ?? Infinity,
          ),
          maxUniformBufferBindingSize: l.maxUniformBufferBindingSize,
        },
      };
    }
  }
  throw new BackendError(
    `WebGPU: no adapter found (${tried.join("; ")}). On Linux without a GPU, install Debian's ` +
      `libegl1 libegl-mesa0 libgles2 libgl1-mesa-dri and set EGL_PLATFORM=surfaceless.`,
  );
}
