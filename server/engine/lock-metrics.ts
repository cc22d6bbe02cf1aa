import type { AcquireFailure, HoldLoss } from "./failure-labels.js";

/**
 * What the engine reports as it grants, hands off, renews and loses holds. Durations are in
 * milliseconds on the monotonic clock. Operations (server/metrics) implement it; the engine never
 * imports them.
 */
export interface LockMetrics {
  /** A new hold of `name` was granted; `waitedMs` is set when the acquire was queued first. */
  granted(name: string, waitedMs: number | undefined): void;
  /** A hold of `name` granted here ended (released, lost, revoked or its session ended) after `heldMs`. */
  holdEnded(name: string, heldMs: number): void;
  /** A release or withdrawal issued here granted the lock to a waiter here, `handoffMs` after it was issued. */
  handedOff(handoffMs: number): void;
  /** One keepalive renewal of a session's locks took `ms`; `ok` false when it failed. */
  renewed(ms: number, ok: boolean): void;
  /** An acquire of this coordinator's sessions was answered Failed for `reason`. */
  acquireFailed(reason: AcquireFailure): void;
  /** A hold granted to this coordinator's sessions ended without a release, for `reason`. */
  holdLost(reason: HoldLoss): void;
}

/** LockMetrics that record nothing. */
export const NO_LOCK_METRICS: LockMetrics = {
  granted() {},
  holdEnded() {},
  handedOff() {},
  renewed() {},
  acquireFailed() {},
  holdLost() {},
};
