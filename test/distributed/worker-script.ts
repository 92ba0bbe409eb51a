/**
 * A test worker process for test/distributed: `startWorker` with short lock and
 * stalled-check times, and a `beforeShard` hook that logs each shard it starts
 * (`start <shard>` on stdout, `start <queue> <shard>` with several queues),
 * sleeps SLEEP_MS (so that a test can kill it mid-shard), and throws for the
 * shard index stored in the Redis key `batchwise-test:fail` (the failing-shard
 * test sets it).
 *
 * QUEUE (default "batchwise") is the queue; QUEUES, a comma-separated list, starts
 * one worker per queue in this process. BACKEND=wasm runs the shards on the
 * WebAssembly backend (one thread); NAME names the workers (startWorker's `name`).
 */
import { Redis } from "ioredis";
import { startWorker } from "../../src/distributed/index.js";
import { initWasm } from "../../src/wasm.js";

const url = process.env["REDIS_URL"]!;
const sleepMs = Number(process.env["SLEEP_MS"] ?? "0");
const queues = (process.env["QUEUES"] ?? process.env["QUEUE"] ?? "batchwise").split(",");
const backend = process.env["BACKEND"] === "wasm" ? "wasm" : undefined;
const name = process.env["NAME"];
if (backend === "wasm") await initWasm({ threads: 1 });
const control = new Redis(url, { maxRetriesPerRequest: null });
control.on("error", () => undefined);
const workers = await Promise.all(
  queues.map((queue) =>
    startWorker(url, {
      queue,
      lockDuration: 1000,
      stalledInterval: 500,
      ...(backend !== undefined ? { backend } : {}),
      ...(name !== undefined ? { name } : {}),
      beforeShard: async ({ shard }) => {
        process.stdout.write(queues.length > 1 ? `start ${queue} ${shard}\n` : `start ${shard}\n`);
        if (sleepMs > 0) await new Promise((r) => setTimeout(r, sleepMs));
        const fail = await control.get("batchwise-test:fail");
        if (fail !== null && Number(fail) === shard) throw new Error(`injected failure in shard ${shard}`);
      },
    }),
  ),
);
await Promise.all(workers.map((w) => w.ready));
process.stdout.write("ready\n");
process.once("SIGTERM", () => {
  void Promise.all(workers.map((w) => w.close())).then(() => {
    control.disconnect();
    process.exit(0);
  });
});
