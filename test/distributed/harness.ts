/**
 * The parts test/distributed's files share: a free loopback port, child processes
 * whose stdout lines can be awaited, a Redis server of the file's own, and a
 * bit-for-bit comparison of sharded results.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import { expect } from "vitest";
import { JaggedTensor, TensorDict, type Tensor } from "../../src/index.js";
import { freePort } from "../helpers/free-port.js";

export { freePort };

/** The README quick start's function (B1's chain), which the distributed tests shard. */
export const chain = (t: Tensor) => t.mul(t).neg().exp().mul(t.mul(3).sin()).add(t.mul(0.5)).sub(t.tanh());

/** The repository's root folder (the cwd of the processes `launch` starts). */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** A child process with its stdout lines collected and a promise per awaited line. */
export interface Proc {
  readonly child: ChildProcess;
  readonly lines: string[];
  waitFor(re: RegExp, ms?: number): Promise<string>;
}

export function launch(cmd: string, args: string[], env: Record<string, string>): Proc {
  const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  const waiters: { re: RegExp; res: (l: string) => void }[] = [];
  let buf = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      lines.push(line);
      for (const w of [...waiters])
        if (w.re.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.res(line);
        }
    }
  });
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  return {
    child,
    lines,
    waitFor(re, ms = 20_000) {
      const seen = lines.find((l) => re.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((res, rej) => {
        const t = setTimeout(
          () => rej(new Error(`${cmd} ${args.join(" ")}: no line ${re} in ${ms} ms; stderr: ${err}`)),
          ms,
        );
        waiters.push({
          re,
          res: (l) => {
            clearTimeout(t);
            res(l);
          },
        });
      });
    },
  };
}

/** A redis-server started by `startRedis`, its temp dir, its URL and a client connected to it. */
export interface TestRedis {
  readonly dir: string;
  readonly url: string;
  readonly server: Proc;
  readonly redis: Redis;
}

/**
 * redis-server on a free loopback port with no persistence and a fresh temp dir, once it
 * accepts connections, and a client on it; a server that does not get ready is stopped
 * and its dir removed before the error is thrown.
 */
export async function startRedis(): Promise<TestRedis> {
  const dir = mkdtempSync(join(os.tmpdir(), "batchwise-redis-"));
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const server = launch(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
    {},
  );
  try {
    await server.waitFor(/Ready to accept connections/);
  } catch (error) {
    server.child.kill("SIGTERM");
    await exited(server.child);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return { dir, url, server, redis: new Redis(url, { maxRetriesPerRequest: null }) };
}

export function exited(p: ChildProcess): Promise<void> {
  return p.exitCode !== null || p.signalCode !== null
    ? Promise.resolve()
    : new Promise((r) => p.once("exit", () => r()));
}

/** Sends `signal` to each of `procs` still running and waits until all have exited. */
export async function killAll(procs: readonly Proc[], signal: NodeJS.Signals): Promise<void> {
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill(signal);
  await Promise.all(procs.map((p) => exited(p.child)));
}

/** `got` and `want` hold the same structure, shapes, dtypes and bytes (TensorDicts entry by entry, jagged tensors' values and offsets). */
export function expectSameBits(got: unknown, want: unknown, where = "value"): void {
  if (want instanceof TensorDict) {
    expect(got, where).toBeInstanceOf(TensorDict);
    const g = got as TensorDict;
    expect(g.batchSize, `${where} batch size`).toEqual(want.batchSize);
    expect(g.keys(), `${where} keys`).toEqual(want.keys());
    for (const [k, v] of want.entries()) expectSameBits(g.get(k), v, `${where}.${k}`);
    return;
  }
  if (want instanceof JaggedTensor) {
    expect(got, where).toBeInstanceOf(JaggedTensor);
    expectSameBits((got as JaggedTensor).values, want.values, `${where} values`);
    expectSameBits((got as JaggedTensor).offsets, want.offsets, `${where} offsets`);
    return;
  }
  const g = got as Tensor;
  const w = want as Tensor;
  expect([g.dtype, g.shape, g.batchDim], where).toEqual([w.dtype, w.shape, w.batchDim]);
  const a = g.dataSync();
  const b = w.dataSync();
  expect(
    Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength)),
    `${where} bytes`,
  ).toBe(true);
}

/**
 * Whether redis-server is installed, and whether BATCHWISE_REQUIRE_REDIS=1 makes its
 * absence a failure; warns once per file when the Redis tests are skipped.
 */
export function redisAvailability(): { readonly hasRedis: boolean; readonly require: boolean } {
  const hasRedis = spawnSync("sh", ["-c", "command -v redis-server"]).status === 0;
  const require = process.env["BATCHWISE_REQUIRE_REDIS"] === "1";
  if (!hasRedis && !require)
    console.warn(
      "test/distributed: skipped: redis-server is not installed (apt-get install redis-server; BATCHWISE_REQUIRE_REDIS=1 makes this a failure)",
    );
  return { hasRedis, require };
}
