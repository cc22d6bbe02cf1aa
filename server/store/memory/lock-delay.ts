/**
 * One lock's lock-delay in the embedded store, the twin of the Redis scripts' delay.lua: after a hold
 * with a delay ends without a release (expired, revoked), nobody is granted the lock until the delay's
 * end. A later end is never shortened; an end that has passed is lifted by `lift`.
 */
export class LockDelay {
  /** The delay's end on the store's clock; 0: none. */
  private end = 0;

  /** True while a delay is on record (until `lift` finds it ended): the lock is kept, not forgotten. */
  get pending(): boolean {
    return this.end > 0;
  }

  /** Delays the lock to `from + ms` unless that is not after `now`; ms undefined or 0: nothing. */
  holdOff(ms: number | undefined, from: number, now: number): void {
    if (ms && from + ms > now) this.end = Math.max(this.end, from + ms);
  }

  /** Forgets a delay that has ended by `now` (purge.lua lifts it the same way). */
  lift(now: number): void {
    if (this.end <= now) this.end = 0;
  }

  /** True while the delay is in force at `now`. */
  inForce(now: number): boolean {
    return this.end > now;
  }

  /** Ms until the delay ends, rounded up; undefined when none is in force at `now`. */
  remainingMs(now: number): number | undefined {
    return this.inForce(now) ? Math.ceil(this.end - now) : undefined;
  }
}
