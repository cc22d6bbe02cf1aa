import { acquireFailureOf, type HoldLoss } from "../failure-labels.js";
import { type LockMetrics, NO_LOCK_METRICS } from "../lock-metrics.js";
import type { ServerErrorReason } from "../server-error.js";
import { type Hold, holdKey, type Session } from "../sessions/session.js";

/**
 * How holds of this coordinator's sessions begin and end, and what the metrics hear of it: a grant
 * enters the session's held map (with the time it was granted), a release or a loss takes it out
 * (with the time it was held), and each failed acquire is counted by its reason.
 */
export class HoldLedger {
  constructor(private readonly metrics: LockMetrics = NO_LOCK_METRICS) {}

  /** Records that `session` holds (name, owner) `count` times with `token`; returns the hold. */
  held(session: Session, name: string, owner: string, token: bigint, count: number): Hold {
    const key = holdKey(name, owner);
    const hold = session.held.get(key) ?? { name, owner, token, count };
    hold.count = count;
    session.held.set(key, hold);
    return hold;
  }

  /** A first hold was granted and answered: timed from now, counted (`queuedSinceMs`: when its queued acquire arrived). */
  granted(hold: Hold, queuedSinceMs: number | undefined): void {
    hold.grantedAtMs = performance.now();
    this.metrics.granted(hold.name, queuedSinceMs === undefined ? undefined : hold.grantedAtMs - queuedSinceMs);
  }

  /** Forgets a hold this session no longer has (released, expired or lost). */
  forget(session: Session, hold: Hold): void {
    session.held.delete(holdKey(hold.name, hold.owner));
    this.ended(hold);
  }

  /** Counts an acquire of this coordinator's sessions answered Failed for `reason` (the failure metrics). */
  acquireFailed(reason: ServerErrorReason): void {
    this.metrics.acquireFailed(acquireFailureOf(reason));
  }

  /** A hold ended without a release (told Lost, or its stream broke): its hold time and the loss are recorded. */
  lost(hold: Hold, reason: HoldLoss): void {
    this.ended(hold);
    this.metrics.holdLost(reason);
  }

  /** Records how long a hold granted here was held, once it has ended (however it ended). */
  ended(hold: Hold): void {
    if (hold.grantedAtMs !== undefined) this.metrics.holdEnded(hold.name, performance.now() - hold.grantedAtMs);
    hold.grantedAtMs = undefined;
  }
}
