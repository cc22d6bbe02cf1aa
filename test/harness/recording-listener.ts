import type { Claim, Grant, LockEvent, ReleaseRequested, Revocation, StoreListener } from "../../server/store/store.js";
import { EventWaiters } from "./event-waiters.js";

/** A store listener that records every grant, holder change, revocation, release request and resync, and lets a test await them. */
export class RecordingListener implements StoreListener {
  /** Grants as received, without `freedAtMs` (recorded apart in `freedAt`, as it varies). */
  readonly grants: Omit<Grant, "freedAtMs">[] = [];
  readonly freedAt: (number | undefined)[] = [];
  readonly events: LockEvent[] = [];
  readonly revocations: Revocation[] = [];
  readonly releaseRequests: ReleaseRequested[] = [];
  /** Acquire-set members a hand-on passed over although they fit (`setMayFit`). */
  readonly setRetries: Omit<Claim, "owner">[] = [];
  resyncs = 0;
  private readonly waiters = new EventWaiters();

  grant({ freedAtMs, ...grant }: Grant): void {
    this.grants.push(grant);
    this.freedAt.push(freedAtMs);
    this.waiters.notify();
  }

  setMayFit(waiter: Omit<Claim, "owner">): void {
    this.setRetries.push(waiter);
    this.waiters.notify();
  }

  resync(): void {
    this.resyncs++;
    this.waiters.notify();
  }

  event(event: LockEvent): void {
    this.events.push(event);
    this.waiters.notify();
  }

  revoked(revocation: Revocation): void {
    this.revocations.push(revocation);
    this.waiters.notify();
  }

  releaseRequested(request: ReleaseRequested): void {
    this.releaseRequests.push(request);
    this.waiters.notify();
  }

  /** Resolves once `done()` holds, re-evaluated on every event; rejects after `timeoutMs`. */
  until(done: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
    return this.waiters.until(done, timeoutMs, () => `timed out waiting for ${what}`);
  }
}
