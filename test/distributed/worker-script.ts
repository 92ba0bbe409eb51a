/**
 * A test worker process for test/distributed: `startWorker` with short lock and
 * stalled-check times, and a `beforeShard` hook that logs each shard it starts
 * (`start <shard>` on stdout), sleeps SLEEP_MS (so that a test can kill it
 * mid-shard), and throws for the shard index stored in the Redis key
 * `batchwise-test:fail` (the failing-shard test sets it).
 */
import { Redis } from "ioredis";
import { startWorker } from "../../src/distributed/index.js";

const url = process.env["REDIS_URL"]!;
const sleepMs = Number(process.env["SLEEP_MS"] ?? "0");
const control = new Redis(url, { maxRetriesPerRequest: null });
control.on("error", () => undefined);
const worker = await startWorker(url, {
  queue: process.env["QUEUE"] ?? "batchwise",
  lockDuration: 1000,
  stalledInterval: 500,
  beforeShard: async ({ shard }) => {
    process.stdout.write(`start ${shard}\n`);
    if (sleepMs > 0) await new Promise((r) => setTimeout(r, sleepMs));
    const fail = await control.get("batchwise-test:fail");
    if (fail !== null && Number(fail) === shard) throw new Error(`injected failure in shard ${shard}`);
  },
});
await worker.ready;
process.stdout.write("ready\n");
process.once("SIGTERM", () => {
  void worker.close().then(() => {
    control.disconnect();
    process.exit(0);
  });
});
