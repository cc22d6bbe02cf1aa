import { raceSignal } from "../race-signal.js";
import type { Lock } from "./lock.js";

/**
 * A set of locks granted together by `acquireAll` (docs/multi-lock.md): one ordinary Lock per name,
 * in the order they were asked for, each with its own fencing token and releasable alone. `release()`
 * lets go of every lock of the set still held; `await using` does it at the end of a block.
 */
export class LockSet implements AsyncDisposable {
  /** The locks, in request order. */
  readonly locks: readonly Lock[];
  /** Each name's fencing token. */
  readonly tokens: ReadonlyMap<string, bigint>;
  #controller: AbortController | undefined;

  /** Made by TurnstileClient.acquireAll. */
  constructor(locks: readonly Lock[]) {
    this.locks = locks;
    this.tokens = new Map(locks.map((lock) => [lock.name, lock.fencingToken]));
  }

  /** The lock of `name`; throws a RangeError when the set has none of that name. */
  lock(name: string): Lock {
    const lock = this.locks.find((l) => l.name === name);
    if (lock === undefined) throw new RangeError(`the set holds no lock named "${name}"`);
    return lock;
  }

  /**
   * Aborts as soon as any lock of the set stops being held (lost, or released), with that lock's
   * signal's reason: work that needs the whole set should watch this one signal.
   */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      const signals = this.locks.map((lock) => lock.signal);
      this.#controller = new AbortController();
      const controller = this.#controller;
      const aborted = signals.find((s) => s.aborted);
      if (aborted) controller.abort(aborted.reason);
      else for (const s of signals) s.addEventListener("abort", () => controller.abort(s.reason), { once: true });
    }
    return this.#controller.signal;
  }

  /**
   * Releases every lock of the set (each as `Lock.release` does; already released or lost ones are
   * skipped) and waits for all answers; rejects with the first refusal after every release was
   * sent. Aborting `signal` stops the waiting, not the releases.
   */
  async release(options: { signal?: AbortSignal } = {}): Promise<void> {
    options.signal?.throwIfAborted();
    const results = await raceSignal(Promise.allSettled(this.locks.map((lock) => lock.release())), options.signal);
    const refused = results.find((r) => r.status === "rejected");
    if (refused) throw refused.reason;
  }

  /** Releases the set at the end of an `await using` block (see `release`). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }
}
