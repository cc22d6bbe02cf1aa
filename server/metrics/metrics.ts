import { type LockMetrics, NO_LOCK_METRICS } from "../engine/lock-metrics.js";

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
  /**
   * The acquires and AcquireAll sets of this coordinator's sessions answered Queued and still
   * waiting: the names each waits on (one for an acquire, every member for a set) and when it arrived.
   */
  queuedWaiters(): Iterable<{ names: readonly string[]; receivedAtMs: number }>;
}

/**
 * The coordinator's instrumentation hooks: the lock table, the session streams and the store
 * wrapper call these, and an implementation (Prometheus, or none) records them. Durations are in
 * milliseconds on the monotonic clock.
 */
export interface Metrics extends LockMetrics {
  /** Registers the readers of the gauges (called once by the coordinator). */
  track(gauges: GaugeReaders): void;
  /** One store operation took `ms`; `ok` false when it rejected. */
  storeOperation(operation: string, ms: number, ok: boolean): void;
  /** A Revoke (gRPC or console) issued on this coordinator ended a hold. */
  revoked(): void;
}

/** Metrics that record nothing: the default when `--metrics` is off. */
export const NO_METRICS: Metrics = {
  ...NO_LOCK_METRICS,
  track() {},
  storeOperation() {},
  revoked() {},
};
