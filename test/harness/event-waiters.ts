/**
 * Waits that are re-checked on every event, each with a timeout: the event-driven counterpart of
 * until() (nothing polls). The owner calls notify() after each event that may satisfy a waiter,
 * and cancel() when it closes, so no wait's timer outlives it.
 */
export class EventWaiters {
  /** Each pending wait's re-check, mapped to what rejects it. */
  readonly #checks = new Map<() => void, (error: Error) => void>();

  /** Re-checks every pending wait. */
  notify(): void {
    for (const check of [...this.#checks.keys()]) check();
  }

  /** Rejects every pending wait with `reason` (a wait nobody awaits any more, e.g. a Promise.race loser, just ends). */
  cancel(reason: string): void {
    for (const fail of [...this.#checks.values()]) fail(new Error(reason));
  }

  /**
   * Resolves with the first value other than undefined that `probe` returns, checked now and on
   * every notify(); rejects with the message `timedOut()` gives after `timeoutMs`. The timer and
   * the check are removed either way.
   */
  take<T>(probe: () => T | undefined, timeoutMs: number, timedOut: () => string): Promise<T> {
    return new Promise((resolve, reject) => {
      const settle = (finish: () => void) => {
        clearTimeout(timer);
        this.#checks.delete(check);
        finish();
      };
      const check = () => {
        try {
          const value = probe();
          if (value !== undefined) settle(() => resolve(value));
        } catch (error) {
          settle(() => reject(error));
        }
      };
      const timer = setTimeout(() => settle(() => reject(new Error(timedOut()))), timeoutMs);
      this.#checks.set(check, (error) => settle(() => reject(error)));
      check();
    });
  }

  /** Resolves once `done()` holds, checked now and on every notify(); rejects as take() does. */
  async until(done: () => boolean, timeoutMs: number, timedOut: () => string): Promise<void> {
    await this.take(() => (done() ? true : undefined), timeoutMs, timedOut);
  }
}
