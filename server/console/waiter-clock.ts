import type { WaiterState } from "../store/store.js";

/** How long a waiter has waited, as far as this console can tell. */
export interface WaiterAge {
  waitedMs: number;
  /** True when it was already waiting when the console first looked: it has waited at least this long. */
  atLeast: boolean;
}

/**
 * Ages of one lock's waiters, measured from when this console first saw each one queued (Describe
 * does not yet carry arrival times). Forgets waiters that left; the first look marks every age
 * `atLeast`, since those waiters were queued before it.
 */
export class WaiterClock {
  private readonly firstSeen = new Map<string, { atMs: number; atLeast: boolean }>();
  private looked = false;

  /** The ages of `waiters` now, remembering new ones and forgetting the ones that left. */
  ages(waiters: readonly WaiterState[], nowMs = Date.now()): WaiterAge[] {
    const keys = waiters.map((w) => `${w.sessionId}\n${w.requestId}`);
    for (const key of this.firstSeen.keys()) if (!keys.includes(key)) this.firstSeen.delete(key);
    const ages = keys.map((key) => {
      let seen = this.firstSeen.get(key);
      if (!seen) {
        seen = { atMs: nowMs, atLeast: !this.looked };
        this.firstSeen.set(key, seen);
      }
      return { waitedMs: nowMs - seen.atMs, atLeast: seen.atLeast };
    });
    this.looked = true;
    return ages;
  }
}
