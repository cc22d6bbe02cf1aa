import type { AcquireOptions, TryAcquireOptions } from "../turnstile-client-options.js";
import type { Lock } from "./lock.js";
import type { LockAcquirer } from "./lock-acquirer.js";

/**
 * A read-write lock on one lock name: any number of readers (SHARED, limit 0) or one writer
 * (EXCLUSIVE). One FIFO queue serves both, so a waiting writer is not overtaken by later readers.
 * A reader asking to write with the same owner is refused ('conflict': upgrading deadlocks); a
 * writer reading with the same owner re-enters its exclusive hold. Made by
 * `TurnstileClient.readWriteLock`; every method returns Locks like `TurnstileClient.acquire`.
 */
export class ReadWriteLock {
  /** The lock name. */
  readonly name: string;
  readonly #readers: LockAcquirer;
  readonly #writers: LockAcquirer;

  /** Pairs the shared (limit 0) and exclusive acquirers of `name`. */
  constructor(name: string, readers: LockAcquirer, writers: LockAcquirer) {
    this.name = name;
    this.#readers = readers;
    this.#writers = writers;
  }

  /** Waits for a read hold (shared with other readers); options and errors as for `acquire`. */
  read(options: AcquireOptions = {}): Promise<Lock> {
    return this.#readers.acquire(options);
  }

  /** Waits for the write hold (exclusive); options and errors as for `acquire`. */
  write(options: AcquireOptions = {}): Promise<Lock> {
    return this.#writers.acquire(options);
  }

  /** Tries a read hold once: null while a writer holds the lock or anyone waits for it. */
  tryRead(options: TryAcquireOptions = {}): Promise<Lock | null> {
    return this.#readers.tryAcquire(options);
  }

  /** Tries the write hold once: null while anyone holds the lock or waits for it. */
  tryWrite(options: TryAcquireOptions = {}): Promise<Lock | null> {
    return this.#writers.tryAcquire(options);
  }

  /** Runs `fn` under a read hold, released in finally (see `withLock`). */
  withRead<T>(fn: (lock: Lock) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    return this.#readers.withLock(fn, options);
  }

  /** Runs `fn` under the write hold, released in finally (see `withLock`). */
  withWrite<T>(fn: (lock: Lock) => Promise<T> | T, options: AcquireOptions = {}): Promise<T> {
    return this.#writers.withLock(fn, options);
  }
}
