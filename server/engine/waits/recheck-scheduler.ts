/**
 * One timer per lock name, set for the moment the earliest holder's lease ends: the only timed
 * wake-up of the coordinator (a crashed holder sends nothing). Scheduling an earlier time replaces
 * a later timer; a later one leaves the earlier in place.
 */
export class RecheckScheduler {
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; at: number }>();

  constructor(private readonly run: (name: string) => void) {}

  /** Re-check `name` in `inMs` (plus 1 ms so the Redis clock has passed the deadline). */
  schedule(name: string, inMs: number): void {
    const at = performance.now() + Math.max(0, inMs) + 1;
    const existing = this.timers.get(name);
    if (existing && existing.at <= at) return;
    if (existing) clearTimeout(existing.timer);
    const timer = setTimeout(() => {
      this.timers.delete(name);
      this.run(name);
    }, at - performance.now());
    this.timers.set(name, { timer, at });
  }

  /** Number of armed timers (for tests and metrics). */
  get size(): number {
    return this.timers.size;
  }

  /** Cancels every timer. */
  clear(): void {
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
