import type { AcquireFailure, HoldLoss } from "../engine/failure-labels.js";

/** What the coordinator's gauges read when metrics are scraped. */
export interface GaugeReaders {
  /** Open session streams. */
  sessions(): number;
  /** Holds (name, owner) of this coordinator's sessions. */
  locksHeld(): number;
  /** Acquires of this coordinator's sessions not answered yet. */
  waiters(): number;
  /** Whether the store is connected (the health check's answer). */
  storeHealthy(): boolean;
  /** The acquires of this coordinator's sessions answered Queued and still waiting, with when they arrived. */
  queuedWaiters(): Iterable<{ name: string; receivedAtMs: number }>;
}

/**
 * The coordinator's instrumentation hooks: the lock table, the session streams and the store
 * wrapper call these, and an implementation (Prometheus, or none) records them. Durations are in
 * milliseconds on the monotonic clock.
 */
export interface Metrics {
  /** Registers the readers of the gauges (called once by the coordinator). */
  track(gauges: GaugeReaders): void;
  /** A new hold of `name` was granted; `waitedMs` is set when the acquire was queued first. */
  granted(name: string, waitedMs: number | undefined): void;
  /** A hold of `name` granted here ended (released, lost, revoked or its session ended) after `heldMs`. */
  holdEnded(name: string, heldMs: number): void;
  /** A release or withdrawal issued here granted the lock to a waiter here, `handoffMs` after it was issued. */
  handedOff(handoffMs: number): void;
  /** One keepalive renewal of a session's locks took `ms`; `ok` false when it failed. */
  renewed(ms: number, ok: boolean): void;
  /** One store operation took `ms`; `ok` false when it rejected. */
  storeOperation(operation: string, ms: number, ok: boolean): void;
  /** An acquire of this coordinator's sessions was answered Failed for `reason`. */
  acquireFailed(reason: AcquireFailure): void;
  /** A hold granted to this coordinator's sessions ended without a release, for `reason`. */
  holdLost(reason: HoldLoss): void;
  /** A Revoke (gRPC or console) issued on this coordinator ended a hold. */
  revoked(): void;
}

/** Metrics that record nothing: the default when `--metrics` is off. */
export const NO_METRICS: Metrics = {
  track() {},
  granted() {},
  holdEnded() {},
  handedOff() {},
  renewed() {},
  storeOperation() {},
  acquireFailed() {},
  holdLost() {},
  revoked() {},
};
