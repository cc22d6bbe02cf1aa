import type { Logger } from "pino";
import type { Grant, Store } from "../../store/store.js";
import { StoreOutageLog } from "../../store/store-outage-log.js";
import { ServerError } from "../server-error.js";
import { claimOf } from "../sessions/session.js";
import type { PendingAcquires } from "../waits/pending-acquires.js";
import { RecheckScheduler } from "../waits/recheck-scheduler.js";
import type { HoldLedger } from "./hold-ledger.js";

/**
 * The timers of the lock table: a name this coordinator's acquires queue for is re-checked in the
 * store when its earliest lease ends (the store names the time), when a renewal or revocation asks
 * for it, and after the store's events may have been missed. A re-check grants what the store
 * grants and fails the acquires answered Queued whose queue entry expired.
 */
export class QueueRechecks {
  private readonly timers = new RecheckScheduler((name) => void this.recheck(name));
  /** Timed re-checks run so far: hand-offs by push leave it unchanged. */
  count = 0;

  constructor(
    private readonly store: Store,
    private readonly pending: PendingAcquires,
    private readonly ledger: HoldLedger,
    private readonly outage: StoreOutageLog,
    private readonly log: Logger,
    private readonly grant: (g: Grant) => void,
  ) {}

  /** Re-checks `name` in `ms` (0: at once), unless an earlier re-check of it is due. */
  schedule(name: string, ms: number): void {
    this.timers.schedule(name, ms);
  }

  /** Re-checks every name acquires wait for, at once (store events may have been missed). */
  all(): void {
    for (const name of this.pending.names()) this.timers.schedule(name, 0);
  }

  /** Stops every timer (coordinator shutdown). */
  clear(): void {
    this.timers.clear();
  }

  private async recheck(name: string): Promise<void> {
    const waiting = this.pending.waitingFor(name);
    if (waiting.length === 0) return;
    this.count++;
    try {
      const outcome = await this.store.check(name, waiting.map(claimOf));
      this.outage.succeeded();
      outcome.statuses.forEach((status, i) => {
        const p = waiting[i];
        if (status.kind === "granted")
          this.grant({ name, sessionId: p.session.id, requestId: p.requestId, token: status.token });
        // Gone is an expiry only for an acquire answered Queued. One still being decided (its script
        // not run yet, or run again after an unknown outcome) is not in the queue yet: its own answer decides.
        if (status.kind === "gone" && p.queued && !p.done) {
          this.pending.finish(p);
          this.ledger.acquireFailed("expired");
          const why = "acquire: the queue entry's lease ran out (keepalives did not arrive in time)";
          p.session.tell.failed(p.requestId, name, new ServerError("expired", why));
        }
      });
      if (this.pending.has(name)) this.timers.schedule(name, outcome.recheckInMs >= 0 ? outcome.recheckInMs : 1000);
    } catch (err) {
      // In 200 ms: the first re-check after the store is back (a new master named) grants the waiters.
      if (StoreOutageLog.isOutage(err)) this.outage.failed("re-check", err, { name });
      else this.log.warn({ err, name }, "re-check failed; retrying");
      this.timers.schedule(name, 200);
    }
  }
}
