/**
 * GPU buffers by size class, reused instead of created per tensor. A released
 * buffer goes back to its class; the pool keeps at most `maxPooledBytes` idle
 * and destroys the rest, so memory stays bounded however many tensors come and go.
 */

/** The size classes: 256 B minimum, then four classes per power of two (≤ 25 % slack). */
export function sizeClass(bytes: number, maxBytes: number): number {
  if (bytes <= 256) return 256;
  const step = 2 ** Math.max(8, Math.floor(Math.log2(bytes)) - 2);
  const cls = Math.ceil(bytes / step) * step;
  return Math.max(bytes, Math.min(cls, maxBytes));
}

export class BufferPool {
  private readonly free = new Map<number, GPUBuffer[]>();
  private pooledBytes = 0;
  /** Bytes of every buffer this pool created and has not destroyed (handed out or idle). */
  bytesAllocated = 0;
  /** Idle buffers waiting in the pool. */
  pooledBuffers = 0;

  constructor(
    private readonly device: GPUDevice,
    private readonly usage: GPUBufferUsageFlags,
    private readonly maxBufferSize: number,
    private readonly maxPooledBytes: number,
    private readonly label: string,
  ) {}

  /** A buffer of at least `bytes` bytes (its `size` is the size class). */
  acquire(bytes: number): GPUBuffer {
    const cls = sizeClass(bytes, this.maxBufferSize);
    const list = this.free.get(cls);
    const reused = list?.pop();
    if (reused) {
      this.pooledBuffers--;
      this.pooledBytes -= cls;
      return reused;
    }
    const buf = this.device.createBuffer({ size: cls, usage: this.usage, label: `${this.label}:${cls}` });
    this.bytesAllocated += cls;
    return buf;
  }

  /** Returns a buffer from `acquire`; work already submitted that uses it still sees its contents. */
  release(buf: GPUBuffer): void {
    const cls = buf.size;
    if (this.pooledBytes + cls > this.maxPooledBytes) {
      buf.destroy();
      this.bytesAllocated -= cls;
      return;
    }
    let list = this.free.get(cls);
    if (!list) this.free.set(cls, (list = []));
    list.push(buf);
    this.pooledBuffers++;
    this.pooledBytes += cls;
  }

  /** Destroys the idle buffers. */
  clear(): void {
    for (const list of this.free.values()) {
      for (const b of list) {
        b.destroy();
        this.bytesAllocated -= b.size;
      }
    }
    this.free.clear();
    this.pooledBuffers = 0;
    this.pooledBytes = 0;
  }
}
