/**
 * The check every bad-input corpus makes: the call throws the given
 * `BatchwiseError` subclass, its message matches, and it took under a second.
 */
import { expect } from "vitest";
import { BatchwiseError } from "../../ir/errors.js";

export type ErrorClass = abstract new (...a: never[]) => BatchwiseError;

function check(err: unknown, ms: number, cls: ErrorClass, message: string | RegExp): void {
  expect(err, `must throw ${cls.name}: ${String(message)}`).toBeInstanceOf(cls);
  expect(err).toBeInstanceOf(BatchwiseError);
  expect((err as Error).message).toMatch(message);
  expect(ms).toBeLessThan(1000);
}

/** Expects `run` to throw `cls` synchronously with a message matching `message`, within a second. */
export function refusesSync(run: () => unknown, cls: ErrorClass, message: string | RegExp): void {
  const t0 = performance.now();
  let err: unknown;
  try {
    run();
  } catch (e) {
    err = e;
  }
  check(err, performance.now() - t0, cls, message);
}

/** Expects `run` to throw or reject with `cls` and a message matching `message`, within a second. */
export async function refuses(run: () => unknown, cls: ErrorClass, message: string | RegExp): Promise<void> {
  const t0 = performance.now();
  let err: unknown;
  try {
    await run();
  } catch (e) {
    err = e;
  }
  check(err, performance.now() - t0, cls, message);
}
