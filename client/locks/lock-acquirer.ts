import type { AcquireOptions, TryAcquireOptions } from "../turnstile-client-options.js";
import { TurnstileError } from "../turnstile-error.js";
import type { Lock } from "./lock.js";

/** Sends one acquire of a fixed name, mode and limit; resolves with the granted Lock. */
export type AcquireLock = (options: AcquireOptions) => Promise<Lock>;

/**
 * One lock name in one mode (exclusive, or shared with the limit in force): acquire it, try it
 * once, or hold it while a function runs. TurnstileClient, Semaphore and ReadWriteLock build on
 * it, so waiting, abort, timeouts and lost-lock signals behave the same for every kind of lock.
 */
export class LockAcquirer {
  readonly #acquire: AcquireLock;

  /** Wraps `acquire`; made by TurnstileClient. */
  constructor(acquire: AcquireLock) {
    this.#acquire = acquire;
  }

  /** Waits for the lock (see `TurnstileClient.acquire` for options, errors and abort). */
  acquire(options: AcquireOptions = {}): Promise<Lock> {
    return this.#acquire(options);
  }

  /** Tries once: resolves with the Lock, or null when it is taken; rejects like `acquire` otherwise. */
  async tryAcquire(options: TryAcquireOptions = {}): Promise<Lock | null> {
    try {
      return await this.#acquire({ ...options, waitMs: 0 });
    } catch (error) {
      if (error instanceof TurnstileError && error.reason === "busy") return null;
      throw error;
    }
  }

  /**
   * Acquires, runs `fn` with the Lock and releases it in finally, returning what `fn` returns.
   * `fn` should watch `lock.signal`; an error from `fn` wins over one from the release.
   */
  async withLock<T>(fn: (lock: Lock) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    const lock = await this.#acquire(options);
    let result: T;
    try {
      result = await fn(lock);
    } catch (error) {
      await lock.release().catch(() => {});
      throw error;
    }
    await lock.release();
    return result;
  }
}
