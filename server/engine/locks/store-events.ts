import type { Claim, Grant, LockEvent, ReleaseRequested, Revocation, StoreListener } from "../../store/store.js";
import type { LockTable } from "./lock-table.js";
import type { WatchHub } from "./watch-hub.js";

/**
 * Where the store's pushed events go on this coordinator: grants and set retries to the lock table,
 * holder changes to the watch hub, and a revocation to the session that has the hold (`revokedHere`,
 * which the edge answers from its open streams) and then to a re-check of the name; a release request
 * to the session that may hold it (`releaseRequestedHere`). After events
 * may have been missed, both the table and the hub resync.
 */
export class StoreEvents implements StoreListener {
  constructor(
    private readonly table: LockTable,
    private readonly watches: WatchHub,
    private readonly revokedHere: (revocation: Revocation) => void,
    private readonly releaseRequestedHere: (request: ReleaseRequested) => void = () => {},
  ) {}

  releaseRequested(request: ReleaseRequested): void {
    this.releaseRequestedHere(request);
  }

  grant(grant: Grant): void {
    this.table.grant(grant);
  }

  setMayFit(waiter: Omit<Claim, "owner">): void {
    this.table.sets.retry(waiter);
  }

  resync(): void {
    this.table.resync();
    this.watches.resyncAll();
  }

  event(event: LockEvent): void {
    this.watches.event(event);
  }

  revoked(revocation: Revocation): void {
    this.revokedHere(revocation);
    // A revoked hold with a lock-delay granted nobody: this coordinator's waiters (if any) re-check now
    // and so learn when the delay ends, instead of at the revoked hold's lease end.
    this.table.recheckSoon(revocation.name);
  }
}
