/**
 * Compute pipelines cached by WGSL source (least recently used dropped past
 * `PIPELINE_CACHE_LIMIT`). Batch sizes and constant values never reach the
 * source, so a new batch size or constant is a cache hit; concurrent requests for one source share
 * one compile. Compile errors become a `BackendError` quoting the WGSL line.
 */
import { BackendError } from "./errors.js";

export interface PipelineEntry {
  readonly source: string;
  readonly pipeline: GPUComputePipeline;
  readonly layout: GPUBindGroupLayout;
}

/** Bind group layout of a kernel: uniform params, read-only inputs, read-write outputs. */
function layoutEntries(nInputs: number, nOutputs: number): GPUBindGroupLayoutEntry[] {
  const entries: GPUBindGroupLayoutEntry[] = [
    { binding: 0, visibility: 4 /* GPUShaderStage.COMPUTE */, buffer: { type: "uniform" } },
  ];
  for (let i = 0; i < nInputs + nOutputs; i++) {
    entries.push({
      binding: 1 + i,
      visibility: 4,
      buffer: { type: i < nInputs ? "read-only-storage" : "storage" },
    });
  }
  return entries;
}

/** The message of a failed compile, pointing at the WGSL line. */
function compileErrorMessage(source: string, messages: readonly GPUCompilationMessage[]): string {
  const lines = source.split("\n");
  const parts = messages.map((m) => {
    const at = m.lineNum > 0 ? `line ${m.lineNum}:${m.linePos}: ` : "";
    const text = m.lineNum > 0 ? `\n    ${lines[m.lineNum - 1] ?? ""}` : "";
    return `${at}${m.message}${text}`;
  });
  const numbered = lines.map((l, i) => `${String(i + 1).padStart(4)} | ${l}`).join("\n");
  return `WGSL compile error: ${parts.join("\n")}\n--- WGSL source ---\n${numbered}`;
}

/** Most pipelines a cache keeps; the least recently used are dropped past it (and rebuilt if needed again). */
export const PIPELINE_CACHE_LIMIT = 1024;

export class PipelineCache {
  private readonly entries = new Map<string, Promise<PipelineEntry>>();
  private readonly ready = new Map<string, PipelineEntry>();
  /** Pipelines created (one per distinct source). */
  pipelines = 0;
  /** Requests answered from the cache, including ones that joined a compile in flight. */
  hits = 0;

  constructor(private readonly device: GPUDevice) {}

  /** The pipeline for `source`, compiling it on first request. */
  get(source: string, nInputs: number, nOutputs: number): Promise<PipelineEntry> {
    const cached = this.entries.get(source);
    if (cached) {
      this.hits++;
      // Most recently used last (Map order is insertion order).
      this.entries.delete(source);
      this.entries.set(source, cached);
      return cached;
    }
    const p = this.compile(source, nInputs, nOutputs);
    this.entries.set(source, p);
    // A failed compile is not cached: the error is reported to every waiter, then forgotten.
    p.then(
      (e) => this.entries.get(source) === p && this.ready.set(source, e),
      () => this.entries.get(source) === p && this.entries.delete(source),
    );
    this.evict();
    return p;
  }

  /** Number of pipelines (compiled or compiling) the cache holds. */
  get size(): number {
    return this.entries.size;
  }

  private evict(): void {
    while (this.entries.size > PIPELINE_CACHE_LIMIT) {
      const oldest = this.entries.keys().next().value!;
      this.entries.delete(oldest);
      this.ready.delete(oldest);
    }
  }

  /** The pipeline for `source` if it is compiled; else compiles it synchronously (after a device change). */
  getSync(source: string, nInputs: number, nOutputs: number): PipelineEntry {
    const hit = this.ready.get(source);
    if (hit) return hit;
    const module = this.device.createShaderModule({ code: source });
    const layout = this.device.createBindGroupLayout({ entries: layoutEntries(nInputs, nOutputs) });
    const pipeline = this.device.createComputePipeline({
      layout: this.device.createPipelineLayout({ bindGroupLayouts: [layout] }),
      compute: { module, entryPoint: "main" },
    });
    const entry = { source, pipeline, layout };
    this.pipelines++;
    this.ready.set(source, entry);
    this.entries.set(source, Promise.resolve(entry));
    this.evict();
    return entry;
  }

  private async compile(source: string, nInputs: number, nOutputs: number): Promise<PipelineEntry> {
    const device = this.device;
    device.pushErrorScope("validation");
    const module = device.createShaderModule({ code: source });
    const layout = device.createBindGroupLayout({ entries: layoutEntries(nInputs, nOutputs) });
    const pipelineLayout = device.createPipelineLayout({ bindGroupLayouts: [layout] });
    const scope = device.popErrorScope();
    const info = await module.getCompilationInfo();
    const scopeError = await scope;
    const errors = info.messages.filter((m) => m.type === "error");
    if (errors.length > 0) throw new BackendError(compileErrorMessage(source, errors));
    if (scopeError) throw new BackendError(`WebGPU: ${scopeError.message}\n--- WGSL source ---\n${source}`);
    let pipeline: GPUComputePipeline;
    try {
      pipeline = await device.createComputePipelineAsync({
        layout: pipelineLayout,
        compute: { module, entryPoint: "main" },
      });
    } catch (e) {
      throw new BackendError(
        `WebGPU: pipeline creation failed: ${(e as Error).message}\n--- WGSL source ---\n${source}`,
      );
    }
    this.pipelines++;
    return { source, pipeline, layout };
  }
}
