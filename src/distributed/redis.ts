/** Where Redis is, the keys batchwise keeps there, and the clients (bullmq and ioredis, imported on first use). */
import type { Redis as IORedis } from "ioredis";
import { BackendError } from "../../ir/errors.js";
import { DistributedError } from "./errors.js";

import { BUNDLE_KEY, DEFAULT_QUEUE, RUN_KEY, type RedisConnection } from "./connection.js";

export { BUNDLE_KEY, DEFAULT_QUEUE, RUN_KEY, type RedisConnection };

export interface Deps {
  readonly bullmq: typeof import("bullmq");
  readonly Redis: typeof IORedis;
}

let depsPromise: Promise<Deps> | undefined;

/** bullmq and ioredis, imported on first use; a BackendError with the install command when missing. */
export function deps(): Promise<Deps> {
  depsPromise ??= (async () => {
    try {
      const bullmq = await import("bullmq");
      const io = (await import("ioredis")) as unknown as { Redis?: typeof IORedis; default?: typeof IORedis };
      const Redis = io.Redis ?? io.default;
      if (Redis === undefined) throw new Error("ioredis exports no Redis class");
      return { bullmq, Redis };
    } catch (e) {
      depsPromise = undefined;
      const msg = e instanceof Error ? e.message : String(e);
      throw new BackendError(
        `batchwise/distributed needs its optional peer dependencies bullmq and ioredis (${msg}); install them with: npm install bullmq@6 ioredis@6`,
      );
    }
  })();
  return depsPromise;
}

/** The connection options BullMQ and ioredis take (BullMQ's blocking connections need maxRetriesPerRequest: null). */
export function redisOptions(connection: RedisConnection): Record<string, unknown> {
  if (typeof connection === "string") {
    let u: URL;
    try {
      u = new URL(connection);
    } catch {
      throw new DistributedError(
        `Redis connection: not a URL: ${JSON.stringify(connection)} (e.g. redis://127.0.0.1:6379)`,
      );
    }
    if (u.protocol !== "redis:" && u.protocol !== "rediss:")
      throw new DistributedError(
        `Redis connection: the URL must start with redis:// or rediss://, got ${u.protocol}//`,
      );
    const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0;
    return {
      host: u.hostname || "127.0.0.1",
      port: u.port === "" ? 6379 : Number(u.port),
      ...(u.password !== "" ? { password: decodeURIComponent(u.password) } : {}),
      ...(u.username !== "" ? { username: decodeURIComponent(u.username) } : {}),
      ...(Number.isInteger(db) ? { db } : {}),
      ...(u.protocol === "rediss:" ? { tls: {} } : {}),
      maxRetriesPerRequest: null,
    };
  }
  if (connection === null || typeof connection !== "object")
    throw new DistributedError(`Redis connection: expected a URL or { host, port }, got ${typeof connection}`);
  return { ...connection, maxRetriesPerRequest: null };
}

/** A Redis client of `connection` (it reconnects and retries its commands). */
export async function client(connection: RedisConnection): Promise<IORedis> {
  const { Redis } = await deps();
  return new Redis(redisOptions(connection));
}

/**
 * The Redis side of a run or a worker: bullmq, a client of `connection` (ioredis
 * reconnects; its errors surface as failed commands, so they are not left to be
 * fatal events), the queue's name (default `DEFAULT_QUEUE`) and the options of
 * BullMQ's own connections.
 */
export async function openQueue(
  connection: RedisConnection,
  queue: string | undefined,
): Promise<{ bullmq: Deps["bullmq"]; redis: IORedis; queue: string; options: Record<string, unknown> }> {
  const { bullmq } = await deps();
  const redis = await client(connection);
  redis.on("error", () => undefined);
  return { bullmq, redis, queue: queue ?? DEFAULT_QUEUE, options: redisOptions(connection) };
}
