import type { Grant, LockEvent, Revocation, StoreListener } from "../../server/store/store.js";

/** A store listener that records every grant, holder change, revocation and resync, and lets a test await them. */
export class RecordingListener implements StoreListener {
  /** Grants as received, without `freedAtMs` (recorded apart in `freedAt`, as it varies). */
  readonly grants: Omit<Grant, "freedAtMs">[] = [];
  readonly freedAt: (number | undefined)[] = [];
  readonly events: LockEvent[] = [];
  readonly revocations: Revocation[] = [];
  resyncs = 0;
  private waiters: (() => void)[] = [];

  grant({ freedAtMs, ...grant }: Grant): void {
    this.grants.push(grant);
    this.freedAt.push(freedAtMs);
    this.wake();
  }

  resync(): void {
    this.resyncs++;
    this.wake();
  }

  event(event: LockEvent): void {
    this.events.push(event);
    this.wake();
  }

  revoked(revocation: Revocation): void {
    this.revocations.push(revocation);
    this.wake();
  }

  /** Resolves once `done()` holds, re-evaluated on every event; rejects after `timeoutMs`. */
  until(done: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
      const test = () => {
        if (!done()) return this.waiters.push(test);
        clearTimeout(timer);
        resolve();
      };
      test();
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
