import type { AcquireOptions, TryAcquireOptions } from "../turnstile-client-options.js";
import { TurnstileError } from "../turnstile-error.js";
import type { Lock } from "./lock.js";
import type { OwnerScope } from "./owner-scope.js";

/** Sends one acquire of a fixed name, mode and limit; resolves with the granted Lock. */
export type AcquireLock = (options: AcquireOptions) => Promise<Lock>;

/**
 * One lock name in one mode (exclusive, or shared with the limit in force): acquire it, try it
 * once, or hold it while a function runs. TurnstileClient, Semaphore and ReadWriteLock build on
 * it, so waiting, abort, timeouts and lost-lock signals behave the same for every kind of lock.
 */
export class LockAcquirer {
  readonly #acquire: AcquireLock;
  readonly #scope: OwnerScope | undefined;

  /** Wraps `acquire`; made by TurnstileClient. `withLock` runs its callback in `scope` (its lock's owner). */
  constructor(acquire: AcquireLock, scope?: OwnerScope) {
    this.#acquire = acquire;
    this.#scope = scope;
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
   * `fn` should watch `lock.signal`; an error from `fn` wins over one from the release. `fn` runs in
   * the scope of the lock's owner: acquires it makes without an owner take that one.
   */
  async withLock<T>(fn: (lock: Lock) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    const lock = await this.#acquire(options);
    let result: T;
    try {
      result = await (this.#scope === undefined ? fn(lock) : this.#scope.run(lock.owner, () => fn(lock)));
    } catch (error) {
      await lock.release().catch(() => {});
      throw error;
    }
    await lock.release();
    return result;
  }
}
