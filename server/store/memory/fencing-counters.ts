/**
 * The fencing counters (or event version counters) of every lock name, kept apart from the locks
 * so that a counter outlives its lock. A counter is forgotten once `retainMs` have passed since it
 * was last needed — its last use, or the end of its lock — checked lazily whenever the store runs
 * an operation. A new counter continues from `seed(now)` (default 0).
 */
export class FencingCounters {
  // Map order is expiry order: every refresh re-inserts a counter at the end with now + retainMs
  // (the clock never goes back), so expired counters are always at the front.
  private readonly counters = new Map<string, { value: bigint; expiresAt: number }>();

  constructor(
    private readonly retainMs: number,
    private readonly seed: (now: number) => bigint = () => 0n,
  ) {
    if (!(retainMs >= 0)) throw new RangeError(`fenceRetainMs must be >= 0, got ${retainMs}`);
  }

  /** The next token for `name`: strictly greater than every one issued while it was retained. */
  next(name: string, now: number): bigint {
    const value = (this.counters.get(name)?.value ?? this.seed(now)) + 1n;
    this.counters.delete(name);
    this.counters.set(name, { value, expiresAt: now + this.retainMs });
    return value;
  }

  /** The last value issued for `name`, or 0n when it has no counter. */
  current(name: string): bigint {
    return this.counters.get(name)?.value ?? 0n;
  }

  /** Restarts the retention of `name`'s counter, if it has one (its lock just ended). */
  keep(name: string, now: number): void {
    const counter = this.counters.get(name);
    if (!counter) return;
    this.counters.delete(name);
    this.counters.set(name, { value: counter.value, expiresAt: now + this.retainMs });
  }

  /**
   * Forgets the counters whose retention has run out, except those `inUse` claims (their lock
   * still exists, or has only just ended): their retention restarts instead.
   */
  sweep(now: number, inUse: (name: string) => boolean): void {
    for (;;) {
      const first = this.counters.entries().next();
      if (first.done || first.value[1].expiresAt >= now) return;
      const [name] = first.value;
      if (inUse(name)) this.keep(name, now);
      else this.counters.delete(name);
    }
  }
}
