import { randomBytes } from "node:crypto";
import { HealthSignal } from "../health-signal.js";
import type {
  AcquireArgs,
  AcquireOutcome,
  AcquireSetArgs,
  AcquireSetOutcome,
  CheckOutcome,
  Claim,
  HolderChange,
  HolderState,
  LockPage,
  LockState,
  ReleaseOutcome,
  ReleaseRequest,
  RenewArgs,
  RenewOutcome,
  RenewResult,
  RevokeOutcome,
  SessionRecord,
  Store,
  StoreListener,
  TransferArgs,
  TransferOutcome,
} from "../store.js";
import { StoreUnavailableError } from "../store-unavailable-error.js";
import { FencingCounters } from "./fencing-counters.js";
import { type LockGrant, MemoryLock } from "./memory-lock.js";
import { listLocks } from "./memory-lock-list.js";
import { acquireSet } from "./memory-set.js";
import { MemoryWaitRegistry } from "./memory-wait-registry.js";

/** Settings of the embedded store. */
export interface MemoryStoreOptions {
  /** How long a fencing counter outlives its lock (default 30 days). */
  fenceRetainMs?: number;
  /** Monotonic clock in ms (default `performance.now`); tests may inject their own. */
  clock?: () => number;
}

const DAY_MS = 86_400_000;

/**
 * The Store in process, for a single coordinator (`turnstile serve` without Redis): the same
 * semantics as the Redis store's scripts, with leases on the process's monotonic clock. Every
 * operation runs to completion when called, and grants and holder changes (of watched locks) it
 * makes are passed to the listener before its promise resolves. After `close`, operations reject
 * with StoreUnavailableError.
 */
export class MemoryStore implements Store {
  readonly coordinatorId = randomBytes(8).toString("hex");
  readonly waits = new MemoryWaitRegistry();
  private readonly locks = new Map<string, MemoryLock>();
  private readonly fences: FencingCounters;
  // Event versions start at the clock in µs, as in the Redis scripts: one that lapsed restarts higher.
  private readonly versions: FencingCounters;
  private readonly watched = new Set<string>();
  private readonly clock: () => number;
  private listener?: StoreListener;
  // Session records expire with their lease, like Redis keys with a PX expiry.
  private readonly sessions = new Map<string, { record: SessionRecord; deadline: number }>();
  private closed = false;
  private readonly health = new HealthSignal(true);

  constructor(options: MemoryStoreOptions = {}) {
    this.fences = new FencingCounters(options.fenceRetainMs ?? 30 * DAY_MS);
    this.versions = new FencingCounters((options.fenceRetainMs ?? 30 * DAY_MS) + DAY_MS, (now) =>
      BigInt(Math.floor(now * 1000)),
    );
    this.clock = options.clock ?? (() => performance.now());
  }

  async start(listener: StoreListener): Promise<void> {
    this.listener = listener;
  }

  async acquire(args: AcquireArgs): Promise<AcquireOutcome> {
    const now = this.begin();
    const lock = this.lockOf(args.name);
    // Copied: the caller may reuse its buffer.
    const outcome = lock.acquire({ ...args, value: new Uint8Array(args.value ?? []) }, now);
    this.keepOrForget(args.name, lock, now);
    return outcome;
  }

  async acquireSet(args: AcquireSetArgs): Promise<AcquireSetOutcome> {
    const now = this.begin();
    const locks = args.locks.map((l) => this.lockOf(l.name));
    const outcome = acquireSet(locks, args, now);
    for (const [i, l] of args.locks.entries()) this.keepOrForget(l.name, locks[i], now);
    return outcome;
  }

  release(claim: Omit<Claim, "requestId">, all: boolean): Promise<ReleaseOutcome> {
    return this.letGo({ ...claim, requestId: "" }, all ? "all" : "one");
  }

  withdraw(claim: Claim, how: "cancel" | "abandon"): Promise<ReleaseOutcome> {
    return this.letGo(claim, how);
  }

  async check(name: string, waiters: Claim[]): Promise<CheckOutcome> {
    const now = this.begin();
    const lock = this.lockOf(name);
    const { statuses, recheckInMs, grants } = lock.check(waiters, now);
    this.keepOrForget(name, lock, now);
    this.deliver(name, grants);
    return { statuses, recheckInMs };
  }

  async renew({ sessionId, ttlMs, locks, touchSession }: RenewArgs): Promise<RenewResult> {
    const now = this.begin();
    const outcomes = locks.map(({ name, owners, waiters }): RenewOutcome => {
      const lock = this.locks.get(name);
      if (lock) return lock.renew(sessionId, ttlMs, owners, waiters, now);
      return { holds: owners.map(() => null), waiters: waiters.map(() => "gone") };
    });
    // As renew.lua given the session record's key: the locks, then the record, in one step.
    if (!touchSession) return { locks: outcomes };
    return { locks: outcomes, sessionAlive: this.touch(sessionId, ttlMs, now) };
  }

  async saveSession(record: SessionRecord): Promise<void> {
    const now = this.begin();
    this.sessions.set(record.sessionId, { record, deadline: now + record.ttlMs });
  }

  async loadSession(sessionId: string): Promise<SessionRecord | undefined> {
    return this.liveSession(sessionId, this.begin())?.record;
  }

  async touchSession(sessionId: string, ttlMs: number): Promise<boolean> {
    return this.touch(sessionId, ttlMs, this.begin());
  }

  async deleteSession(sessionId: string): Promise<void> {
    this.begin();
    this.sessions.delete(sessionId);
  }

  async describe(name: string): Promise<LockState> {
    const now = this.begin();
    const state = this.locks.get(name)?.state(now) ?? { limit: undefined, holders: [], waiters: [] };
    return { name, version: this.versions.current(name), ...state };
  }

  async list(prefix: string, pageSize: number, pageToken: string): Promise<LockPage | "invalid-token"> {
    return listLocks(this.locks, this.begin(), prefix, pageSize, pageToken);
  }

  async revoke(hold: Omit<Claim, "requestId">): Promise<RevokeOutcome> {
    const now = this.begin();
    const lock = this.locks.get(hold.name);
    if (!lock) return { kind: "not-held" };
    const { outcome, grants } = lock.revoke(hold.sessionId, hold.owner, now);
    this.keepOrForget(hold.name, lock, now);
    if (outcome.kind === "revoked") this.listener?.revoked({ ...hold, token: outcome.token });
    this.deliver(hold.name, grants);
    return outcome;
  }

  async transfer(args: TransferArgs): Promise<TransferOutcome> {
    const now = this.begin();
    const lock = this.locks.get(args.name);
    if (!lock) return { kind: "not-held" };
    const { outcome, grants } = lock.transfer(args, now);
    this.keepOrForget(args.name, lock, now);
    this.deliver(args.name, grants);
    return outcome;
  }

  async requestRelease({ name, requester, reason }: ReleaseRequest): Promise<number> {
    const now = this.begin();
    const asked = this.locks.get(name)?.requestRelease(requester, reason, now) ?? [];
    for (const r of asked) this.listener?.releaseRequested?.({ name, ...r });
    return asked.length;
  }

  async proclaim(hold: Omit<Claim, "requestId">, value: Uint8Array): Promise<"proclaimed" | "not-held"> {
    const now = this.begin();
    const held = this.locks.get(hold.name)?.proclaim(hold.sessionId, hold.owner, new Uint8Array(value), now);
    return held ? "proclaimed" : "not-held";
  }

  async watch(name: string): Promise<void> {
    this.begin();
    this.watched.add(name);
  }

  async unwatch(name: string): Promise<void> {
    this.watched.delete(name);
  }

  /** Pushes a live record's deadline to now + ttl; false (nothing created) when it had expired. */
  private touch(sessionId: string, ttlMs: number, now: number): boolean {
    const entry = this.liveSession(sessionId, now);
    if (entry) entry.deadline = now + ttlMs;
    return entry !== undefined;
  }

  private liveSession(sessionId: string, now: number): { record: SessionRecord; deadline: number } | undefined {
    const entry = this.sessions.get(sessionId);
    if (entry && entry.deadline <= now) this.sessions.delete(sessionId);
    return entry && entry.deadline > now ? entry : undefined;
  }

  healthy(): boolean {
    return this.health.healthy;
  }

  onHealthChange(listener: (healthy: boolean) => void): () => void {
    return this.health.subscribe(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.locks.clear();
    this.health.set(false);
  }

  // Like release.lua: an empty request id releases a hold, any other withdraws that waiter.
  private async letGo(claim: Claim, how: "one" | "all" | "cancel" | "abandon"): Promise<ReleaseOutcome> {
    const freedAtMs = performance.now();
    const now = this.begin();
    const lock = this.lockOf(claim.name);
    const { outcome, grants } = lock.letGo(claim.sessionId, claim.owner, claim.requestId, how, now);
    this.keepOrForget(claim.name, lock, now);
    this.deliver(claim.name, grants, freedAtMs);
    return outcome;
  }

  /** Starts an operation: refuses once closed, reads the clock and forgets expired counters. */
  private begin(): number {
    if (this.closed) throw new StoreUnavailableError("memory store: closed", { outcome: "unchanged" });
    const now = this.clock();
    this.fences.sweep(now, (name) => this.inUse(name, now));
    this.versions.sweep(now, (name) => this.inUse(name, now));
    return now;
  }

  /** The lock of `name`, or a new empty one that `keepOrForget` stores only if it gains an entry. */
  private lockOf(name: string): MemoryLock {
    return (
      this.locks.get(name) ??
      new MemoryLock(
        (now) => this.fences.next(name, now),
        (change, holder, left, from) => this.publish(name, change, holder, left, from),
      )
    );
  }

  /** Keeps a lock that has holders or waiters; forgets an empty one, retaining its counter. */
  private keepOrForget(name: string, lock: MemoryLock, now: number): void {
    if (!lock.isEmpty) this.locks.set(name, lock);
    else if (this.locks.delete(name)) this.fences.keep(name, now);
  }

  /**
   * Whether the counter of `name` is still needed: its lock exists. A lock whose every lease
   * has ended is forgotten here (as any operation on it would first do), and its counter is
   * then retained from now.
   */
  private inUse(name: string, now: number): boolean {
    const lock = this.locks.get(name);
    if (!lock) return false;
    lock.purge(now);
    if (lock.isEmpty) this.locks.delete(name);
    return true;
  }

  /** Numbers a holder change (every change, watched or not) and passes it on if `name` is watched. */
  private publish(
    name: string,
    change: HolderChange,
    holder: HolderState,
    holdersLeft: number,
    from?: HolderState,
  ): void {
    const version = this.versions.next(name, this.clock());
    if (this.watched.has(name))
      this.listener?.event({ name, version, change, holder, holdersLeft, ...(from && { from }) });
  }

  private deliver(name: string, grants: LockGrant[], freedAtMs?: number): void {
    for (const { retrySet, ...g } of grants) {
      if (retrySet) this.listener?.setMayFit?.({ name, sessionId: g.sessionId, requestId: g.requestId });
      else this.listener?.grant({ name, ...g, freedAtMs });
    }
  }
}
