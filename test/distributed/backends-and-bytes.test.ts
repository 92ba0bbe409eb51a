/**
 * batchwise/distributed across backends, and bytes in the forms callers hold them,
 * on a real Redis with worker processes (test/distributed/worker-script.ts): one
 * on the JS backend (queues "js-only" and "mixed"), one on WebAssembly ("wasm-only"
 * and "mixed").
 *
 * - A run expects one backend (by default the coordinator's current one): a
 *   worker on another backend does not run its shard, and the run rejects with a
 *   BackendMismatchError naming the worker and both backends.
 * - `backend: "wasm"` expects wasm workers; `allowMixedBackends: true` takes any
 *   worker, and each shard then has its worker's bits: float32 results within the
 *   bound the docs give (|Δ| ≤ 2^-22 for the quick start's function), float64
 *   and int32 results the same on both backends.
 * - `publishBundle` takes a bundle file's bytes (readFileSync's Buffer, views,
 *   ArrayBuffers); inputs over pooled Buffers and SharedArrayBuffers go through
 *   Redis and back exactly.
 *
 * Skipped (with the reason printed) when redis-server is not installed, unless
 * BATCHWISE_REQUIRE_REDIS=1 (set by .ci/run), which makes a missing server a failure.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "bullmq";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BundleError, fromTypedArray, initWasm, jit, setBackend, type Tensor } from "../../src/index.js";
import {
  BackendMismatchError,
  DistributedError,
  publishBundle,
  runSharded,
  startWorker,
} from "../../src/distributed/index.js";
import { chain, killAll, launch, type Proc, redisAvailability, startRedis } from "./harness.js";

const { hasRedis, require } = redisAvailability();

const N = 400_000;

const bitsOf = (a: ArrayBufferView): Buffer => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

/** A Buffer from Node's pool (byteOffset > 0); `make` is tried again while it lands at the start of a fresh pool. */
function pooled(make: () => Buffer): Buffer {
  for (let i = 0; i < 4; i++) {
    const b = make();
    if (b.byteOffset > 0) return b;
  }
  throw new Error("four pooled Buffers in a row started at byte 0");
}

let server: Proc | undefined;
let dir = "";
let url = "";
let redis: Redis;
const procs: Proc[] = [];

describe.skipIf(!hasRedis && !require)("batchwise/distributed across backends, on a real Redis", () => {
  const f = jit(chain);
  // Made in beforeAll, on JS (when the suite runs with BATCHWISE_TEST_BACKEND=wasm, wasm is current while the file is collected).
  let x: Tensor;
  let want: Float32Array;
  let wantWasm: Float32Array;
  let hash = "";
  let js: Proc;
  let wasm: Proc;

  beforeAll(async () => {
    if (!hasRedis) throw new Error("BATCHWISE_REQUIRE_REDIS=1 but redis-server is not installed");
    setBackend("js");
    x = fromTypedArray(
      Float32Array.from({ length: N }, (_, i) => Math.sin(i * 0.001) * 3),
      [N],
      { batchDim: 1 },
    );
    ({ dir, url, server, redis } = await startRedis());
    const script = ["--import", "tsx", "test/distributed/worker-script.ts"];
    js = launch(process.execPath, script, {
      REDIS_URL: url,
      QUEUES: "js-only,mixed",
      NAME: "js-worker",
      SLEEP_MS: "100",
    });
    wasm = launch(process.execPath, script, {
      REDIS_URL: url,
      QUEUES: "wasm-only,mixed",
      NAME: "wasm-worker",
      BACKEND: "wasm",
      SLEEP_MS: "100",
    });
    procs.push(js, wasm);
    want = f(x).dataSync() as Float32Array;
    const be = await initWasm({ threads: 1, select: false });
    const xw = await x.to(be);
    const yw = jit(chain, { backend: be })(xw);
    wantWasm = yw.dataSync() as Float32Array;
    if (xw !== x) xw.dispose();
    yw.dispose();
    hash = await publishBundle(url, f.bundle());
    await Promise.all(procs.map((p) => p.waitFor(/^ready$/, 100_000)));
  }, 120_000);

  // The coordinator runs on JS (also when the suite runs with BATCHWISE_TEST_BACKEND=wasm): its runs expect js by default.
  beforeEach(() => setBackend("js"));

  afterAll(async () => {
    redis?.disconnect();
    await killAll(procs, "SIGKILL");
    if (server !== undefined) await killAll([server], "SIGTERM");
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  it("the JS and the wasm single-process calls differ (else the tests below would prove nothing)", () => {
    let differ = 0;
    for (let i = 0; i < N; i++) if (!Object.is(want[i], wantWasm[i])) differ++;
    expect(differ).toBeGreaterThan(N / 10);
  });

  it("by default a run expects the coordinator's backend: a wasm worker does not run its shard, and the run rejects with a BackendMismatchError naming the worker and both backends", async () => {
    const before = wasm.lines.length;
    const err = await runSharded(url, hash, [x], { shards: 2, queue: "wasm-only" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendMismatchError);
    expect(err).toBeInstanceOf(DistributedError);
    const e = err as BackendMismatchError;
    expect(e.name).toBe("BackendMismatchError");
    expect([e.worker, e.workerBackend, e.expected]).toEqual(["wasm-worker", "wasm", "js"]);
    expect([0, 1]).toContain(e.shard);
    expect(e.message).toMatch(
      /^runSharded: shard [01] of 2 \(rows \d+\.\.\d+\) was taken by worker "wasm-worker", which runs shards on the wasm backend, but this run expects js \(the coordinator's current backend\): backends round float32 math differently, so the gathered result would not have the bits of one call on js\. Run the queue's workers on js \(batchwise worker --backend js\), give this run \{ backend: "wasm" \} if its workers are all on wasm, or \{ allowMixedBackends: true \} to accept each shard's own backend's bits$/,
    );
    // The worker refused the shard before running it (its beforeShard hook never started).
    expect(wasm.lines.slice(before).filter((l) => l.startsWith("start "))).toEqual([]);
    expect(await redis.keys("batchwise:run:*")).toEqual([]);
  }, 30_000);

  it('{ backend: "wasm" } expects wasm workers: their result has the single-process wasm call\'s bits; a JS worker is refused', async () => {
    const y = (await runSharded(url, hash, [x], { shards: 4, queue: "wasm-only", backend: "wasm" })) as Tensor;
    expect(bitsOf(y.dataSync()).equals(bitsOf(wantWasm))).toBe(true);
    const err = (await runSharded(url, hash, [x], { shards: 2, queue: "js-only", backend: "wasm" }).catch(
      (e: unknown) => e,
    )) as BackendMismatchError;
    expect(err).toBeInstanceOf(BackendMismatchError);
    expect([err.worker, err.workerBackend, err.expected]).toEqual(["js-worker", "js", "wasm"]);
    expect(err.message).toMatch(
      /was taken by worker "js-worker", which runs shards on the js backend, but this run expects wasm: .*give this run \{ backend: "js" \} if its workers are all on js/,
    );
  }, 30_000);

  it("a queue with a JS and a wasm worker: the run is refused by default, naming the wasm worker", async () => {
    const err = (await runSharded(url, hash, [x], { shards: 8, queue: "mixed" }).catch(
      (e: unknown) => e,
    )) as BackendMismatchError;
    expect(err).toBeInstanceOf(BackendMismatchError);
    expect([err.worker, err.workerBackend, err.expected]).toEqual(["wasm-worker", "wasm", "js"]);
  }, 30_000);

  it("allowMixedBackends: true: each shard has its own worker's bits (JS's or wasm's), both present; float32 within |Δ| ≤ 2^-22 of the JS call", async () => {
    const shards = 8;
    const y = (await runSharded(url, hash, [x], { shards, queue: "mixed", allowMixedBackends: true })) as Tensor;
    const got = y.dataSync() as Float32Array;
    const kinds: string[] = [];
    for (let s = 0; s < shards; s++) {
      const [a, b] = [Math.floor((s * N) / shards), Math.floor(((s + 1) * N) / shards)];
      const part = bitsOf(got.subarray(a, b));
      const kind = part.equals(bitsOf(want.subarray(a, b)))
        ? "js"
        : part.equals(bitsOf(wantWasm.subarray(a, b)))
          ? "wasm"
          : "neither";
      kinds.push(kind);
    }
    expect(kinds).not.toContain("neither");
    expect(new Set(kinds)).toEqual(new Set(["js", "wasm"]));
    let maxAbs = 0;
    for (let i = 0; i < N; i++) maxAbs = Math.max(maxAbs, Math.abs(got[i]! - want[i]!));
    expect(maxAbs).toBeGreaterThan(0);
    expect(maxAbs).toBeLessThanOrEqual(2 ** -22);
  }, 30_000);

  it("float64 and int32 results are the same on both backends: a mixed run equals the single-process JS call bit for bit", async () => {
    const n = 50_000;
    const g = jit((t: Tensor, k: Tensor) => [chain(t), k.mul(7).add(3).mul(k)]);
    const t = fromTypedArray(
      Float64Array.from({ length: n }, (_, i) => Math.sin(i * 0.01) * 3),
      [n],
      { batchDim: 1 },
    );
    const k = fromTypedArray(
      Int32Array.from({ length: n }, (_, i) => i * 40_503 - 1_000_000_000),
      [n],
      { batchDim: 1 },
    );
    const [w64, w32] = g(t, k) as [Tensor, Tensor];
    const h = await publishBundle(url, g.bundle());
    const [y64, y32] = (await runSharded(url, h, [t, k], {
      shards: 6,
      queue: "mixed",
      allowMixedBackends: true,
    })) as [Tensor, Tensor];
    expect(bitsOf(y64.dataSync()).equals(bitsOf(w64.dataSync()))).toBe(true);
    expect(bitsOf(y32.dataSync()).equals(bitsOf(w32.dataSync()))).toBe(true);
  }, 30_000);

  it("a worker that does not report its backend (batchwise 0.5 and older) is refused", async () => {
    // What an old worker returns: outputs and multi, nothing about itself (here: no outputs at all).
    const old = new Worker("legacy", async () => ({ outputs: [], multi: false }), {
      connection: { host: "127.0.0.1", port: Number(new URL(url).port), maxRetriesPerRequest: null },
    });
    old.on("error", () => undefined);
    try {
      await old.waitUntilReady();
      const err = (await runSharded(url, hash, [x], { shards: 1, queue: "legacy" }).catch(
        (e: unknown) => e,
      )) as BackendMismatchError;
      expect(err).toBeInstanceOf(BackendMismatchError);
      expect([err.worker, err.workerBackend, err.expected]).toEqual(["unknown", "unknown", "js"]);
      expect(err.message).toMatch(
        /^runSharded: shard 0 of 1 \(rows 0\.\.399999\) was taken by a worker that does not say which backend it runs on \(batchwise 0\.5 or older: upgrade it\), but this run expects js/,
      );
    } finally {
      await old.close();
    }
  }, 30_000);

  it("bad backend options are DistributedErrors naming runSharded and the option", async () => {
    await expect(runSharded(url, hash, [x], { backend: "wasm", allowMixedBackends: true })).rejects.toThrow(
      /^runSharded: give backend \(every shard on "wasm"\) or allowMixedBackends: true \(any backend\), not both$/,
    );
    await expect(runSharded(url, hash, [x], { allowMixedBackends: "yes" as unknown as boolean })).rejects.toThrow(
      /^runSharded: allowMixedBackends must be true or false, got yes$/,
    );
    await expect(runSharded(url, hash, [x], { backend: "" })).rejects.toThrow(
      /^runSharded: backend must be the name of a backend \("js", "webgpu", "wasm"\), got ""$/,
    );
    await expect(runSharded(url, hash, [x], { backend: 3 as unknown as string })).rejects.toThrow(DistributedError);
    await expect(startWorker(url, { name: "" })).rejects.toThrow(
      /^startWorker: name must be a non-empty string, got ""$/,
    );
  });

  describe("bytes", () => {
    it("publishBundle takes the bundle file's bytes in any form: the same hash and stored text as the string", async () => {
      const g = jit((t: Tensor) => t.mul(3).sin());
      g(x);
      const text = g.bundle();
      const file = join(dir, "g.bundle.mjs");
      writeFileSync(file, text);
      const buf = readFileSync(file);
      const shared = new SharedArrayBuffer(buf.length + 3);
      new Uint8Array(shared, 3).set(buf);
      const fromText = await publishBundle(url, text);
      for (const source of [
        buf,
        new DataView(buf.buffer, buf.byteOffset, buf.byteLength),
        new Uint8Array(shared, 3),
        new Uint8Array(buf).buffer,
      ]) {
        await redis.del(`batchwise:bundle:${fromText}`);
        expect(await publishBundle(url, source)).toBe(fromText);
        expect(await redis.get(`batchwise:bundle:${fromText}`)).toBe(text);
      }
      await expect(publishBundle(url, Uint8Array.of(0xff, 0xfe, 0x00))).rejects.toThrow(
        /^publishBundle: source bytes are not UTF-8 text/,
      );
      await expect(publishBundle(url, 42 as unknown as string)).rejects.toThrow(BundleError);
      await expect(publishBundle(url, 42 as unknown as string)).rejects.toThrow(
        /^publishBundle: source must be the bundle module's text \(f\.bundle\(\)\) or its file's bytes \(readFileSync\("f\.bundle\.mjs"\)\), got number$/,
      );
    }, 30_000);

    it("inputs over pooled Buffers and part of a SharedArrayBuffer go through Redis and back exactly", async () => {
      const n = 500;
      // float32 over a pooled Buffer's memory (2,000 bytes: from Node's pool), uint8 in a pooled Buffer,
      // float64 at byte 8 of a SharedArrayBuffer; wrapped without a copy where the backend allows it.
      const f32src = Float32Array.from({ length: n }, (_, i) => Math.fround(Math.cos(i) * 7));
      const pf = pooled(() => Buffer.from(new Uint8Array(f32src.buffer)));
      const a = new Float32Array(pf.buffer, pf.byteOffset, n);
      const b = pooled(() => Buffer.from(Uint8Array.from({ length: n }, (_, i) => (i * 37) % 256)));
      const c = new Float64Array(new SharedArrayBuffer(8 + n * 8), 8, n);
      for (let i = 0; i < n; i++) c[i] = i * 1e-3 - 0.25;
      const g = jit((p: Tensor, q: Tensor, r: Tensor) => [p.mul(p), q, r.neg()]);
      const inputs = [
        fromTypedArray(a, [n], { batchDim: 1, copy: false }),
        fromTypedArray(b, [n], { batchDim: 1, copy: false }),
        fromTypedArray(c, [n], { batchDim: 1, copy: false }),
      ];
      g(...(inputs as [Tensor, Tensor, Tensor]));
      const h = await publishBundle(url, g.bundle());
      const [p2, q, r] = (await runSharded(url, h, inputs, { shards: 3, queue: "js-only" })) as Tensor[];
      // The reference: a plain loop over the caller's values (float32 products rounded once).
      expect(bitsOf(p2!.dataSync()).equals(bitsOf(Float32Array.from(f32src, (v) => Math.fround(v * v))))).toBe(true);
      expect(q!.dtype).toBe("uint8");
      expect(Array.from(q!.dataSync())).toEqual(Array.from({ length: n }, (_, i) => (i * 37) % 256));
      expect(bitsOf(r!.dataSync()).equals(bitsOf(Float64Array.from({ length: n }, (_, i) => -(i * 1e-3 - 0.25))))).toBe(
        true,
      );
      // The callers' memory is untouched.
      expect(bitsOf(a).equals(bitsOf(f32src))).toBe(true);
    }, 30_000);
  });
});
