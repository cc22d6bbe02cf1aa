/** Lock mode as the store sees it: one holder, or up to `limit` (0: unlimited). */
export type StoreMode = "exclusive" | "shared";

/** One claim on a lock by a session: who asks, for what, and for how long. */
export interface Claim {
  name: string;
  sessionId: string;
  owner: string;
  requestId: string;
}

/** Acquire arguments: the claim, its lease and whether it may queue. */
export interface AcquireArgs extends Claim {
  ttlMs: number;
  mode: StoreMode;
  limit: number;
  /** False: try once (answer `busy` instead of queueing). */
  mayWait: boolean;
}

/** Answer to an acquire; `recheckInMs` is when the earliest holder lease ends. */
export type AcquireOutcome =
  | { kind: "granted"; token: bigint; holdCount: number }
  | { kind: "queued"; position: number; recheckInMs: number }
  | { kind: "busy" }
  | { kind: "conflict"; limitInForce: number }
  | { kind: "upgrade" };

/** Answer to a release of a hold (`released`, `not-held`) or a withdrawal. */
export type ReleaseOutcome =
  | { kind: "released"; holdCount: number }
  | { kind: "not-held" }
  | { kind: "withdrawn" }
  | { kind: "grant-released" }
  | { kind: "gone" };

/** What a re-check learned about one waiter this coordinator serves. */
export type WaiterStatus = { kind: "queued" } | { kind: "granted"; token: bigint } | { kind: "gone" };

/** Answer to a re-check: statuses in request order and when to look again (-1: no holder). */
export interface CheckOutcome {
  statuses: WaiterStatus[];
  recheckInMs: number;
}

/**
 * Answer to a renewal: each hold's token and count if it was still alive (null: lost), and for each
 * waiter whether it is still queued, was granted meanwhile (its hold was renewed in its place) or
 * is gone.
 */
export interface RenewOutcome {
  holds: ({ token: bigint; count: number } | null)[];
  waiters: ("queued" | "granted" | "gone")[];
}

/** What the store keeps about a session so that any coordinator can resume it. */
export interface SessionRecord {
  sessionId: string;
  /** SHA-256 (hex) of the resume secret; the secret itself is never stored. */
  secretHash: string;
  ttlMs: number;
  clientName: string;
}

/** A waiter served by this coordinator was granted the lock (by any coordinator). */
export interface Grant {
  name: string;
  sessionId: string;
  requestId: string;
  token: bigint;
  /**
   * `performance.now()` when this coordinator issued the release or withdrawal that made the
   * grant; absent for grants made by re-checks, acquires and other coordinators.
   */
  freedAtMs?: number;
}

/** Store events: grants for this coordinator's waiters, and pub/sub gaps to re-check after. */
export interface StoreListener {
  grant(grant: Grant): void;
  /** Grants may have been missed (the event connection dropped): re-check every waiter. */
  resync(): void;
}

/**
 * The lock table's persistence: every method is one atomic operation. Grants made to this
 * coordinator's waiters by any operation (here or on another coordinator) reach `listener.grant`,
 * possibly more than once; callers must treat grants idempotently. Methods reject with a
 * StoreUnavailableError when the backing store cannot be reached (nothing was changed or the
 * outcome is unknown).
 */
export interface Store {
  /** This coordinator's id, recorded with its waiters so grants find their way back. */
  readonly coordinatorId: string;
  start(listener: StoreListener): Promise<void>;
  acquire(args: AcquireArgs): Promise<AcquireOutcome>;
  /** Drop one hold of (session, owner), or every hold with `all`. */
  release(claim: Omit<Claim, "requestId">, all: boolean): Promise<ReleaseOutcome>;
  /**
   * Withdraw a waiter. `cancel` (the client asked) also releases a grant that raced it; `abandon`
   * (its stream broke) withdraws it only while it is attached to this coordinator and leaves a
   * raced grant for a resumed session to claim (or its lease to end).
   */
  withdraw(claim: Claim, how: "cancel" | "abandon"): Promise<ReleaseOutcome>;
  /** Purge expired leases, hand the lock on, and report on the given waiters. */
  check(name: string, waiters: Claim[]): Promise<CheckOutcome>;
  /** Renew a session's holds (by owner) and queue entries on one lock. */
  renew(name: string, sessionId: string, ttlMs: number, owners: string[], waiters: Claim[]): Promise<RenewOutcome>;
  /** Stores a session record that expires after `ttlMs` unless touched. */
  saveSession(record: SessionRecord): Promise<void>;
  /** The session record, or undefined when it is unknown or expired. */
  loadSession(sessionId: string): Promise<SessionRecord | undefined>;
  /** Pushes the record's expiry to now + ttl; false when it had already expired. */
  touchSession(sessionId: string, ttlMs: number): Promise<boolean>;
  deleteSession(sessionId: string): Promise<void>;
  /** True while the backing store is connected and can serve operations (what health checks report). */
  healthy(): boolean;
  /** Calls `listener` on every change of `healthy()`; returns the function that removes it. */
  onHealthChange(listener: (healthy: boolean) => void): () => void;
  close(): Promise<void>;
}
