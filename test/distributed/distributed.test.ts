/**
 * batchwise/distributed with real parts: Debian's redis-server on a free
 * loopback port with a temp dir, worker PROCESSES (the CLI's `batchwise worker`
 * and test/distributed/worker-script.ts, run under tsx), BullMQ in between.
 * The sharded result of the B1 chain on a 1e6-element batch must equal the
 * single-process call bit for bit, also when a worker is SIGKILLed mid-shard
 * (BullMQ's stalled-job recovery hands its shard to another worker). A shard
 * that throws is reported with its index after its retries; a bundle whose
 * content does not hash to its key is refused; abort cleans up.
 *
 * Skipped (with the reason printed) when redis-server is not installed, unless
 * BATCHWISE_REQUIRE_REDIS=1 (set by .ci/run), which makes a missing server a failure.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  JaggedTensor,
  NonTensorData,
  TensorDict,
  fromTypedArray,
  initWasm,
  jit,
  lazyStack,
  tensor,
  type Tensor,
} from "../../src/index.js";
import { DistributedError, publishBundle, runSharded, type ShardProgress } from "../../src/distributed/index.js";
import {
  chain,
  exited,
  expectSameBits,
  freePort,
  killAll,
  launch,
  type Proc,
  redisAvailability,
  startRedis,
} from "./harness.js";

const { hasRedis, require } = redisAvailability();

const N = 1_000_000;

const procs: Proc[] = [];
const extraServers: Proc[] = [];
const extraDirs: string[] = [];
let server: Proc | undefined;
let dir = "";
let url = "";
let redis: Redis;

describe.skipIf(!hasRedis && !require)("batchwise/distributed on a real Redis and worker processes", () => {
  const f = jit(chain);
  const x = fromTypedArray(
    Float32Array.from({ length: N }, (_, i) => Math.sin(i * 0.001) * 3),
    [N],
    { batchDim: 1 },
  );
  let want: Float32Array;
  let hash = "";

  beforeAll(async () => {
    if (!hasRedis) throw new Error("BATCHWISE_REQUIRE_REDIS=1 but redis-server is not installed");
    ({ dir, url, server, redis } = await startRedis());
    want = f(x).dataSync() as Float32Array;
    hash = await publishBundle(url, f.bundle());
    const cli = ["--import", "tsx", "src/cli.ts", "worker", "--redis", url, "--queue", "plain"];
    // Runs on the JS workers' queues say { backend: "js" } (they would expect the current backend, wasm when
    // the suite runs with BATCHWISE_TEST_BACKEND=wasm); the wasm workers' runs say { backend: "wasm" }.
    const script = ["--import", "tsx", "test/distributed/worker-script.ts"];
    for (let i = 0; i < 3; i++) procs.push(launch(process.execPath, cli, {}));
    // The first of them (procs[3], the SIGKILL test's victim) is slow, so that a kill lands inside its shard.
    for (let i = 0; i < 3; i++)
      procs.push(
        launch(process.execPath, script, { REDIS_URL: url, QUEUE: "faults", SLEEP_MS: i === 0 ? "800" : "150" }),
      );
    // Two CLI workers on the WebAssembly backend (procs[6], procs[7]), on a queue of their own.
    for (const threads of ["1", "2"])
      procs.push(
        launch(process.execPath, [...cli.slice(0, -1), "wasm", "--backend", "wasm", "--threads", threads], {}),
      );
    await Promise.all(procs.map((p) => p.waitFor(/ready/, 100_000)));
  }, 120_000);

  afterAll(async () => {
    redis?.disconnect();
    await killAll(procs, "SIGKILL");
    if (server !== undefined) await killAll([server], "SIGTERM");
    await killAll(extraServers, "SIGTERM");
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
    for (const d of extraDirs) rmSync(d, { recursive: true, force: true });
  });

  it("shards 1e6 elements over 3 CLI worker processes; the result equals the single-process call bit for bit", async () => {
    const seen: ShardProgress[] = [];
    const y = (await runSharded(url, hash, [x], {
      shards: 10,
      queue: "plain",
      backend: "js",
      onProgress: (p) => seen.push(p),
    })) as Tensor;
    expect(y.shape).toEqual([N]);
    expect(y.batchDim).toBe(1);
    const got = y.dataSync() as Float32Array;
    expect(
      Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(
        Buffer.from(want.buffer, want.byteOffset, want.byteLength),
      ),
    ).toBe(true);
    const last = seen[seen.length - 1]!;
    expect(last.done).toBe(10);
    expect(last.total).toBe(10);
    // 10 .npy blobs of 1e5 float32 each way, each with a 128-byte header.
    expect(last.bytesUp).toBe(N * 4 + 10 * 128);
    expect(last.bytesDown).toBe(N * 4 + 10 * 128);
    // The run's data is deleted once it settles.
    expect(await redis.keys("batchwise:run:*")).toEqual([]);
  }, 30_000);

  it("CLI workers with --backend wasm (1 and 2 threads): the result equals a single-process wasm call bit for bit", async () => {
    await Promise.all([procs[6]!, procs[7]!].map((p) => p.waitFor(/ready on queue wasm .*backend wasm\)$/)));
    const be = await initWasm({ threads: 1, select: false });
    const xw = await x.to(be);
    const yw = jit(chain, { backend: be })(xw);
    const wantWasm = yw.dataSync() as Float32Array;
    // The coordinator runs on JS: the run says it expects wasm workers (else it refuses them: test/distributed/backends.test.ts).
    const y = (await runSharded(url, hash, [x], { shards: 6, queue: "wasm", backend: "wasm" })) as Tensor;
    const got = y.dataSync() as Float32Array;
    expect(
      Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(
        Buffer.from(wantWasm.buffer, wantWasm.byteOffset, wantWasm.byteLength),
      ),
    ).toBe(true);
    // (The JS backend's bits differ from these: its float32 transcendentals round float64 results.)
    // (x itself when the suite runs with wasm current: `to` returns a tensor already there.)
    if (xw !== x) xw.dispose();
    yw.dispose();
  }, 30_000);

  it("shards a jagged batch of 10,000 rows (empty rows included) by rows; jagged and plain results equal the single-process call bit for bit", async () => {
    const rows = 10_000;
    const offsets = new Int32Array(rows + 1);
    for (let r = 0; r < rows; r++) offsets[r + 1] = offsets[r]! + ((r * 7) % 13);
    const T = offsets[rows]!;
    const j = new JaggedTensor(
      fromTypedArray(
        Float32Array.from({ length: T * 2 }, (_, i) => Math.cos(i * 0.01) * 2),
        [T, 2],
        { batchDim: 1 },
      ),
      fromTypedArray(offsets, [rows + 1], { batchDim: 1 }),
    );
    const g = jit((x: JaggedTensor) => [x.map((v) => v.mul(v).neg().exp()), x.sum()]);
    const [wantJ, wantSum] = g(j) as [JaggedTensor, Tensor];
    const h = await publishBundle(url, g.bundle());
    const [gotJ, gotSum] = (await runSharded(url, h, [j], { shards: 7, queue: "plain", backend: "js" })) as [
      JaggedTensor,
      Tensor,
    ];
    expect(gotJ).toBeInstanceOf(JaggedTensor);
    const bytes = (t: Tensor) => {
      const d = t.dataSync();
      return Buffer.from(d.buffer, d.byteOffset, d.byteLength);
    };
    expect(gotJ.values.shape).toEqual([T, 2]);
    expect(bytes(gotJ.offsets).equals(Buffer.from(offsets.buffer))).toBe(true);
    expect(bytes(gotJ.values).equals(bytes(wantJ.values))).toBe(true);
    expect(gotSum.shape).toEqual([rows, 2]);
    expect(bytes(gotSum).equals(bytes(wantSum))).toBe(true);
  }, 30_000);

  it("shards a TensorDict (nested dicts, a jagged entry, an int entry) with a plain parameter and a parameter dict; TensorDict results are gathered; equal to the single-process call bit for bit", async () => {
    const n = 20_000;
    const f32 = (len: number, k: number) => Float32Array.from({ length: len }, (_, i) => Math.sin(i * k) * 2);
    const offsets = new Int32Array(n + 1);
    for (let r = 0; r < n; r++) offsets[r + 1] = offsets[r]! + (r % 4);
    const T = offsets[n]!;
    const td = new TensorDict(
      {
        obs: fromTypedArray(f32(n * 3, 0.1), [n, 3], { batchDim: 1 }),
        reward: fromTypedArray(f32(n, 0.2), [n], { batchDim: 1 }),
        agent: new TensorDict({ pos: fromTypedArray(f32(n * 2 * 3, 0.3), [n, 2, 3], { batchDim: 2 }) }, [n, 2]),
        traj: new JaggedTensor(
          fromTypedArray(f32(T * 2, 0.4), [T, 2], { batchDim: 1 }),
          fromTypedArray(offsets, [n + 1], { batchDim: 1 }),
        ),
        count: fromTypedArray(
          Int32Array.from({ length: n }, (_, i) => i * 7 - 30_000),
          [n],
          { batchDim: 1 },
        ),
      },
      [n],
    );
    const w = fromTypedArray(Float32Array.of(0.5, -1, 2), [3], { batchDim: 0 });
    const p = new TensorDict({ scale: fromTypedArray(Float32Array.of(1.5), [1], { batchDim: 0 }) }, []);
    const g = jit((d: TensorDict, w: Tensor, p: TensorDict) => {
      const agent = d.getDict("agent");
      const traj = d.get("traj") as JaggedTensor;
      return [
        new TensorDict(
          {
            y: d.getTensor("obs").mul(w).add(d.getTensor("reward").unsqueeze(0)).exp(),
            agent: new TensorDict({ d: agent.getTensor("pos").mul(p.getTensor("scale")).sin() }, agent.batchSize),
            traj: traj.map((v) => v.mul(v).neg().exp()),
            n2: d.getTensor("count").mul(2),
          },
          d.batchSize,
        ),
        traj.sum(),
      ];
    });
    const want = g(td, w, p) as [TensorDict, Tensor];
    const h = await publishBundle(url, g.bundle());
    const got = (await runSharded(url, h, [td, w, p], { shards: 7, queue: "plain", backend: "js" })) as [
      TensorDict,
      Tensor,
    ];
    expect(got).toHaveLength(2);
    expect(got[0]).toBeInstanceOf(TensorDict);
    expect(got[0].toString()).toBe(
      `TensorDict(batchSize=[${n}]) { y: (${n}; 3) float32, agent: TensorDict(batchSize=[${n}, 2]) { d: (${n},2; 3) float32 }, traj: (${n},~N; 2) float32 jagged, n2: (${n};) int32 }`,
    );
    expectSameBits(got[0], want[0]);
    expectSameBits(got[1], want[1]);
    // The TensorDict input itself: its shards carry every key, nesting and batch size (the identity bundle).
    const id = jit((d: TensorDict) => d);
    id(td);
    const back = await runSharded(url, await publishBundle(url, id.bundle()), [td], {
      shards: 3,
      queue: "plain",
      backend: "js",
    });
    expectSameBits(back, td);
  }, 30_000);

  it("TensorDict inputs it cannot shard: typed errors naming the fix", async () => {
    const a = fromTypedArray(new Float32Array(4), [4], { batchDim: 1 });
    const d = new TensorDict({ a }, [4]);
    await expect(runSharded(url, hash, [lazyStack([d, d], 0) as unknown as TensorDict])).rejects.toThrow(
      /^runSharded: input 0 is a lazy stack \(.*\); runSharded takes dense TensorDicts: call \.densify\(\) .* or stack the members with stack\(\)$/,
    );
    const meta = new TensorDict({ a, inner: { m: new NonTensorData("walk", [4]) } }, [4]);
    const err = await runSharded(url, hash, [meta]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DistributedError);
    expect((err as Error).message).toMatch(
      /^runSharded: input 0 holds the non-tensor entry \("inner", "m"\) \(NonTensorData\("walk", batchSize=\[4\]\)\); compiled functions take tensor entries only: td\.exclude\(\["inner","m"\]\) before the call/,
    );
    // A dict of batch size [] is stored whole, so its entries must have no batch dims.
    await expect(runSharded(url, hash, [a, new TensorDict({ a }, [])])).rejects.toThrow(
      /^runSharded: input 1 is TensorDict\(batchSize=\[\]\) with the batched entry \(4; \): give the dict a batch size/,
    );
    await expect(runSharded(url, hash, [a, new TensorDict({ b: a }, [4]).batchSlice(0, 0, 3)])).rejects.toThrow(
      "runSharded: input 1 TensorDict(batchSize=[3]) has 3 rows in its leading batch dim, input 0 (4; ) has 4",
    );
  });

  it("a worker SIGKILLed mid-shard: its shard is taken over and the result is still complete and exact", async () => {
    const victim = procs[3]!;
    const shards = 12;
    let killed: number | undefined;
    // Kill the victim right after it starts a shard of this run (a line it prints from now on):
    // it is then inside that shard's 800 ms. Waiting for some progress first could let the
    // other workers take every remaining shard on a loaded machine, so the watch starts now.
    const before = victim.lines.length;
    const kill = (async () => {
      const deadline = Date.now() + 20_000;
      let line: string | undefined;
      while ((line = victim.lines.slice(before).find((l) => /^start \d+$/.test(l))) === undefined) {
        if (Date.now() > deadline) throw new Error("the victim started no shard");
        await new Promise((r) => setTimeout(r, 5));
      }
      killed = Number(line.split(" ")[1]);
      victim.child.kill("SIGKILL");
    })();
    const y = (await runSharded(url, hash, [x], { shards, queue: "faults", backend: "js" })) as Tensor;
    await kill;
    expect(killed).toBeTypeOf("number");
    const got = y.dataSync() as Float32Array;
    expect(Buffer.from(got.buffer).equals(Buffer.from(want.buffer, want.byteOffset, want.byteLength))).toBe(true);
    // The killed worker's shard was started again by another worker.
    const others = procs.slice(4, 6).flatMap((p) => p.lines);
    expect(others).toContain(`start ${killed}`);
  }, 30_000);

  it("a shard that throws is reported with its index after its retries run out", async () => {
    await redis.set("batchwise-test:fail", "2");
    try {
      const err = await runSharded(url, hash, [x], { shards: 4, queue: "faults", backend: "js", attempts: 2 }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DistributedError);
      expect((err as Error).message).toMatch(
        /^runSharded: shard 2 of 4 \(rows 500000\.\.749999\) failed after 2 attempt\(s\): shard 2 \(rows 500000\.\.749999\): Error: injected failure in shard 2$/,
      );
    } finally {
      await redis.del("batchwise-test:fail");
    }
  }, 30_000);

  it("a bundle whose content does not hash to its key is refused (at once: no retry)", async () => {
    const g = jit((t: Tensor) => t.mul(2));
    g(x);
    const other = await publishBundle(url, g.bundle());
    // The chain's text stored under g's hash, as a corrupted or forged store would.
    await redis.set(`batchwise:bundle:${other}`, f.bundle());
    const err = await runSharded(url, other, [x], { shards: 2, queue: "plain", backend: "js" }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DistributedError);
    expect((err as Error).message).toMatch(
      /^runSharded: shard [01] of 2 .* failed after 1 attempt\(s\): shard [01] .*BundleError: .*SHA-256/,
    );
  }, 30_000);

  it("abort removes the run: rejects with the signal's reason and leaves no run data", async () => {
    const ac = new AbortController();
    const reason = new Error("stop");
    const err = await runSharded(url, hash, [x], {
      shards: 30,
      queue: "faults",
      backend: "js",
      signal: ac.signal,
      onProgress: (p) => {
        if (p.done >= 1) ac.abort(reason);
      },
    }).catch((e: unknown) => e);
    expect(err).toBe(reason);
    expect(await redis.keys("batchwise:run:*:in:*")).toEqual([]);
  }, 30_000);

  it("Redis restarted mid-run (with its append-only file): clients reconnect and the result is exact", async () => {
    const dir2 = mkdtempSync(join(os.tmpdir(), "batchwise-redis-aof-"));
    extraDirs.push(dir2);
    const port2 = await freePort();
    const url2 = `redis://127.0.0.1:${port2}`;
    const args = [
      "--port",
      String(port2),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "yes",
      "--appendfsync",
      "always",
      "--dir",
      dir2,
    ];
    let srv = launch("redis-server", args, {});
    extraServers.push(srv);
    await srv.waitFor(/Ready to accept connections/);
    const hash2 = await publishBundle(url2, f.bundle());
    const ws = [0, 1].map(() =>
      launch(process.execPath, ["--import", "tsx", "test/distributed/worker-script.ts"], {
        REDIS_URL: url2,
        QUEUE: "restart",
        SLEEP_MS: "100",
      }),
    );
    procs.push(...ws);
    await Promise.all(ws.map((w) => w.waitFor(/ready/, 40_000)));
    let restart: Promise<void> | undefined;
    const y = (await runSharded(url2, hash2, [x], {
      shards: 10,
      queue: "restart",
      backend: "js",
      onProgress: (p) => {
        if (p.done >= 2 && restart === undefined)
          restart = (async () => {
            srv.child.kill("SIGTERM");
            await exited(srv.child);
            srv = launch("redis-server", args, {});
            extraServers.push(srv);
            await srv.waitFor(/Ready to accept connections/);
          })();
      },
    })) as Tensor;
    await restart;
    expect(restart).toBeDefined();
    const got = y.dataSync() as Float32Array;
    expect(Buffer.from(got.buffer).equals(Buffer.from(want.buffer, want.byteOffset, want.byteLength))).toBe(true);
  }, 40_000);

  it("no job events at all (XREAD denied by an ACL): the reconciling poll still gathers every shard, exactly", async () => {
    // The coordinator listens to the queue's event stream (XREAD); denying that one command to
    // every client loses every event, as a reader stuck across a reconnect would. Workers do not
    // read the stream (they only append to it from their scripts), so they keep running.
    await redis.call("ACL", "SETUSER", "default", "-xread");
    try {
      const t0 = performance.now();
      const y = (await runSharded(url, hash, [x], { shards: 6, queue: "plain", backend: "js", pollMs: 100 })) as Tensor;
      expect(performance.now() - t0).toBeLessThan(10_000);
      expectSameBits(y, f(x));
    } finally {
      await redis.call("ACL", "SETUSER", "default", "+xread");
    }
  }, 30_000);

  it("a flushed Redis (jobs gone) rejects the run, naming the vanished shard, instead of hanging", async () => {
    const err = await runSharded(url, hash, [x], {
      shards: 12,
      queue: "faults",
      backend: "js",
      onProgress: (p) => {
        if (p.done === 1) void redis.flushall();
      },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DistributedError);
    expect((err as Error).message).toMatch(/^runSharded: shard \d+ of 12 \(rows \d+\.\.\d+\) vanished from Redis/);
    hash = await publishBundle(url, f.bundle());
  }, 30_000);

  it("CLI workers close cleanly on SIGTERM (exit code 0)", async () => {
    const cli = procs.slice(0, 3);
    for (const p of cli) p.child.kill("SIGTERM");
    await Promise.all(cli.map((p) => p.waitFor(/^batchwise worker: closed$/)));
    await Promise.all(cli.map((p) => exited(p.child)));
    expect(cli.map((p) => p.child.exitCode)).toEqual([0, 0, 0]);
  }, 30_000);

  it("typed errors for inputs it cannot shard", async () => {
    await expect(runSharded(url, hash, [tensor([1, 2], { batchDim: 1 }), [1, 2] as unknown as Tensor])).rejects.toThrow(
      /^runSharded: input 1 is a Array; plain tensors, jagged tensors and TensorDicts are sharded$/,
    );
    const a = fromTypedArray(new Float32Array(4), [4], { batchDim: 1 });
    const b = fromTypedArray(new Float32Array(3), [3], { batchDim: 1 });
    await expect(runSharded(url, hash, [a, b])).rejects.toThrow(
      "runSharded: input 1 (3; ) has 3 rows in its leading batch dim, input 0 (4; ) has 4",
    );
    await expect(runSharded(url, "abc", [a])).rejects.toThrow(DistributedError);
  });
});
