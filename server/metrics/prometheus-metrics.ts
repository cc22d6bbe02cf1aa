import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { ACQUIRE_FAILURES, type AcquireFailure, HOLD_LOSSES, type HoldLoss } from "../engine/failure-labels.js";
import { STORE_OPERATIONS } from "./instrumented-store.js";
import type { GaugeReaders, Metrics } from "./metrics.js";
import { NamePrefixes, type NamePrefixOptions } from "./name-prefixes.js";

// Hand-offs and store calls take about a millisecond; waits and slow stores take seconds.
const FAST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const WAIT_BUCKETS = [0.001, 0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800];
const HOLD_BUCKETS = [0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800, 3600, 86400];

/**
 * Metrics in a Prometheus registry of its own (no global default registry), with the Node process
 * metrics. Every series is named `turnstile_*` and documented in docs/operations.md. Per-lock series
 * are labelled by `prefix`, a bounded label made by NamePrefixes, never by lock name.
 */
export class PrometheusMetrics implements Metrics {
  readonly registry = new Registry();
  readonly prefixes: NamePrefixes;
  private readers?: GaugeReaders;
  private readonly grants: Counter<"path" | "prefix">;
  private readonly acquireWait: Histogram<"prefix">;
  private readonly holdTime: Histogram<"prefix">;
  private readonly handoff: Histogram;
  private readonly renewal: Histogram;
  private readonly renewalFailures: Counter;
  private readonly storeLatency: Histogram<"operation">;
  private readonly storeErrors: Counter<"operation">;
  private readonly acquireFailures: Counter<"reason">;
  private readonly holdLosses: Counter<"reason">;
  private readonly revocations: Counter;

  constructor(options: { prefixes?: NamePrefixOptions } = {}) {
    this.prefixes = new NamePrefixes(options.prefixes);
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const readers = () => this.readers;
    const gauge = (name: string, help: string, read: (r: GaugeReaders) => number) =>
      new Gauge({
        name,
        help,
        registers,
        // Runs at scrape time, with `this` the gauge.
        collect() {
          const r = readers();
          if (r) this.set(read(r));
        },
      });
    gauge("turnstile_sessions", "Open session streams on this coordinator.", (r) => r.sessions());
    gauge("turnstile_locks_held", "Holds (name, owner) of this coordinator's sessions.", (r) => r.locksHeld());
    gauge("turnstile_waiters", "Acquires of this coordinator's sessions waiting for an answer.", (r) => r.waiters());
    gauge("turnstile_store_up", "1 while the store is connected (health SERVING), else 0.", (r) => +r.storeHealthy());
    this.grants = new Counter({
      name: "turnstile_grants_total",
      help: "New holds granted to this coordinator's sessions, by whether the acquire was queued first, by name prefix.",
      labelNames: ["path", "prefix"],
      registers,
    });
    this.acquireWait = new Histogram({
      name: "turnstile_acquire_wait_seconds",
      help: "Acquire received to Acquired sent, for acquires that were queued first, by name prefix.",
      labelNames: ["prefix"],
      buckets: WAIT_BUCKETS,
      registers,
    });
    this.holdTime = new Histogram({
      name: "turnstile_hold_seconds",
      help: "Grant to end (release, loss, revocation, session end) of holds granted on this coordinator, by name prefix.",
      labelNames: ["prefix"],
      buckets: HOLD_BUCKETS,
      registers,
    });
    this.waitGauges(registers, readers);
    this.handoff = new Histogram({
      name: "turnstile_handoff_seconds",
      help: "Release (or withdrawal) issued to Acquired sent to the next holder, when both are on this coordinator.",
      buckets: FAST_BUCKETS,
      registers,
    });
    this.renewal = new Histogram({
      name: "turnstile_keepalive_renewal_seconds",
      help: "Keepalive received to every lock of the session renewed in the store (keepalive lag).",
      buckets: FAST_BUCKETS,
      registers,
    });
    this.renewalFailures = new Counter({
      name: "turnstile_keepalive_renewal_failures_total",
      help: "Keepalive renewals that failed (the keepalive was not acknowledged).",
      registers,
    });
    this.storeLatency = new Histogram({
      name: "turnstile_store_operation_seconds",
      help: "Duration of one store operation (one Lua script on Redis), by operation.",
      labelNames: ["operation"],
      buckets: FAST_BUCKETS,
      registers,
    });
    this.storeErrors = zeroed(
      new Counter({
        name: "turnstile_store_errors_total",
        help: "Store operations that failed (Redis unreachable, timed out or refused), by operation.",
        labelNames: ["operation"],
        registers,
      }),
      "operation",
      STORE_OPERATIONS,
    );
    this.acquireFailures = zeroed(
      new Counter({
        name: "turnstile_acquires_failed_total",
        help: "Acquires of this coordinator's sessions answered Failed, by reason (timeout, busy, denied, expired, cancelled, limit, conflict, invalid, unavailable, internal; deadlock reserved).",
        labelNames: ["reason"],
        registers,
      }),
      "reason",
      ACQUIRE_FAILURES,
    );
    this.holdLosses = zeroed(
      new Counter({
        name: "turnstile_holds_lost_total",
        help: "Holds of this coordinator's sessions that ended without a release, by reason (expired, revoked, session_lost).",
        labelNames: ["reason"],
        registers,
      }),
      "reason",
      HOLD_LOSSES,
    );
    this.revocations = new Counter({
      name: "turnstile_revocations_total",
      help: "Holds ended by a Revoke (gRPC or console) issued on this coordinator.",
      registers,
    });
  }

  track(readers: GaugeReaders): void {
    this.readers = readers;
  }

  granted(name: string, waitedMs: number | undefined): void {
    const prefix = this.prefixes.of(name);
    this.grants.inc({ path: waitedMs === undefined ? "immediate" : "queued", prefix });
    if (waitedMs !== undefined) this.acquireWait.observe({ prefix }, waitedMs / 1000);
  }

  holdEnded(name: string, heldMs: number): void {
    this.holdTime.observe({ prefix: this.prefixes.of(name) }, heldMs / 1000);
  }

  /** The per-prefix gauges of queued waiters, computed at scrape time from this coordinator's waiters. */
  private waitGauges(registers: Registry[], readers: () => GaugeReaders | undefined): void {
    const prefixes = this.prefixes;
    let byPrefix = new Map<string, { count: number; oldestMs: number }>();
    // Each gauge groups the waiters afresh: it costs one pass over this coordinator's waiters.
    const group = () => {
      byPrefix = new Map();
      const now = performance.now();
      for (const w of readers()?.queuedWaiters() ?? []) {
        // A set waits on all its names: it counts once under each prefix among them.
        const counted = new Set<string>();
        for (const name of w.names) {
          const prefix = prefixes.of(name);
          if (counted.has(prefix)) continue;
          counted.add(prefix);
          const entry = byPrefix.get(prefix) ?? { count: 0, oldestMs: 0 };
          entry.count++;
          entry.oldestMs = Math.max(entry.oldestMs, now - w.receivedAtMs);
          byPrefix.set(prefix, entry);
        }
      }
    };
    new Gauge({
      name: "turnstile_queued_waiters",
      help: "Acquires and AcquireAll sets of this coordinator's sessions queued and waiting, by name prefix.",
      labelNames: ["prefix"],
      registers,
      collect() {
        group();
        this.reset();
        for (const [prefix, e] of byPrefix) this.set({ prefix }, e.count);
      },
    });
    new Gauge({
      name: "turnstile_oldest_wait_seconds",
      help: "Age of the longest-waiting queued acquire or AcquireAll set of this coordinator's sessions, by name prefix.",
      labelNames: ["prefix"],
      registers,
      collect() {
        group();
        this.reset();
        for (const [prefix, e] of byPrefix) this.set({ prefix }, e.oldestMs / 1000);
      },
    });
  }

  handedOff(handoffMs: number): void {
    this.handoff.observe(handoffMs / 1000);
  }

  renewed(ms: number, ok: boolean): void {
    this.renewal.observe(ms / 1000);
    if (!ok) this.renewalFailures.inc();
  }

  storeOperation(operation: string, ms: number, ok: boolean): void {
    this.storeLatency.observe({ operation }, ms / 1000);
    if (!ok) this.storeErrors.inc({ operation });
  }

  acquireFailed(reason: AcquireFailure): void {
    this.acquireFailures.inc({ reason });
  }

  holdLost(reason: HoldLoss): void {
    this.holdLosses.inc({ reason });
  }

  revoked(): void {
    this.revocations.inc();
  }

  /** The registry in the Prometheus text format. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** Exports every value of a closed label set at 0, so a rate or increase sees the first failure of each. */
function zeroed<L extends string>(counter: Counter<L>, label: L, values: readonly string[]): Counter<L> {
  for (const value of values) counter.inc({ [label]: value } as Partial<Record<L, string>>, 0);
  return counter;
}
