import type { AcquireOptions, TryAcquireOptions } from "../turnstile-client-options.js";
import { TurnstileError } from "../turnstile-error.js";
import type { Lock } from "./lock.js";
import type { LockAcquirer } from "./lock-acquirer.js";
import { MAX_WIRE_LIMIT } from "./max-wire-limit.js";

/**
 * A counting semaphore on one lock name: at most `limit` holders at once across every client
 * and coordinator. The server owns the count: the first SHARED claim sets the limit, and it holds
 * until nobody holds or waits for the name; a claim naming another limit meanwhile rejects with
 * TurnstileError 'conflict'. Waiters are served first-in-first-out. Each permit is a Lock with its
 * own lease, fencing token and lost-lock `signal`. Made by `TurnstileClient.semaphore`.
 */
export class Semaphore {
  /** The lock name. */
  readonly name: string;
  /** How many holders may hold a permit at once. */
  readonly limit: number;
  readonly #permits: LockAcquirer;

  /** Throws TurnstileError 'invalid-argument' unless `limit` is an integer from 1 to 2^32 - 1. */
  constructor(name: string, limit: number, permits: LockAcquirer) {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_WIRE_LIMIT) {
      const message =
        `semaphore limit must be an integer from 1 to ${MAX_WIRE_LIMIT}, got ${limit}` +
        " (for any number of shared holders use readWriteLock(name).read())";
      throw new TurnstileError("invalid-argument", message);
    }
    this.name = name;
    this.limit = limit;
    this.#permits = permits;
  }

  /**
   * Waits for a permit and resolves with its Lock. Options, errors and abort as for
   * `TurnstileClient.acquire`; a limit the server refuses rejects with 'invalid-argument', a limit
   * other than the one in force with 'conflict' (the message names the limit in force).
   */
  acquire(options: AcquireOptions = {}): Promise<Lock> {
    return this.#permits.acquire(options);
  }

  /** Tries once: resolves with a permit's Lock, or null when all permits are taken or others wait. */
  tryAcquire(options: TryAcquireOptions = {}): Promise<Lock | null> {
    return this.#permits.tryAcquire(options);
  }

  /**
   * Acquires a permit, runs `fn` with its Lock and releases it in finally, returning what `fn`
   * returns. `fn` should watch `lock.signal`; an error from `fn` wins over one from the release.
   */
  withPermit<T>(fn: (lock: Lock) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    return this.#permits.withLock(fn, options);
  }
}
