/**
 * Where Redis is and the names batchwise uses there. Kept apart from redis.ts, whose
 * declarations name bullmq's and ioredis's types: the public declarations import this
 * file only, so a user without the optional peers still type-checks.
 */
/**
 * Where Redis is: a URL (`redis://127.0.0.1:6379/0`) or ioredis-style options
 * (`{ host, port, password, db }`).
 */
export type RedisConnection =
  | string
  | {
      /** The host (default 127.0.0.1). */
      readonly host?: string;
      /** The port (default 6379). */
      readonly port?: number;
      /** The password, if Redis requires one. */
      readonly password?: string;
      /** The database index (default 0). */
      readonly db?: number;
    };

/** The default BullMQ queue name of `runSharded` and `startWorker`. */
export const DEFAULT_QUEUE = "batchwise";

export const BUNDLE_KEY = "batchwise:bundle:";
export const RUN_KEY = "batchwise:run:";
