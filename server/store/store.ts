import type { AcquireSetArgs, AcquireSetOutcome } from "./acquire-set.js";
import type { RenewResult } from "./renew-result.js";
import type { WaitRegistry } from "./wait-registry.js";

export { type AcquireSetArgs, type AcquireSetOutcome, MAX_SET_NAMES, type SetMember } from "./acquire-set.js";
export type { RenewOutcome, RenewResult } from "./renew-result.js";

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
  /** Kept for the holder this claim becomes (when it is granted fresh, or queues); default empty. */
  value?: Uint8Array;
  /**
   * Lock-delay of the hold this claim becomes: when it ends without a release (expired, revoked), nobody is
   * granted the lock until this long after; absent or 0: none.
   */
  lockDelayMs?: number;
  /** Queue rank (docs/elections.md): queued ahead of every lower priority, FIFO within one; absent or 0: none. */
  priority?: number;
}

/** Answer to an acquire; `recheckInMs` is when the earliest holder lease ends. */
export type AcquireOutcome =
  | { kind: "granted"; token: bigint; holdCount: number }
  | { kind: "queued"; position: number; recheckInMs: number }
  /** `delayMs`: a lock-delay is in force (ms left), so nobody may take the lock even when nobody holds it. */
  | { kind: "busy"; delayMs?: number }
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

/** One lock of a renewal: the session's holds on it (by owner) and its queue entries there. */
export interface RenewLock {
  readonly name: string;
  readonly owners: readonly string[];
  readonly waiters: readonly Claim[];
}

/** Renewal arguments: the session, its lease, and each lock it holds or waits for (each name once). */
export interface RenewArgs {
  sessionId: string;
  ttlMs: number;
  /**
   * Not changed once passed. A frozen list (Object.isFrozen) stays the same for good: a store may keep what it
   * builds from it, by its identity, for the renewals that pass it again (a session's idle keepalives).
   */
  locks: readonly RenewLock[];
  /**
   * Also push the session record's expiry to now + ttl, as touchSession does, in the same store call where
   * the store can (one Redis: inside the renewal script); RenewResult.sessionAlive answers.
   */
  touchSession?: boolean;
}

/** What the store keeps about a session so that any coordinator can resume it. */
export interface SessionRecord {
  sessionId: string;
  /** SHA-256 (hex) of the resume secret; the secret itself is never stored. */
  secretHash: string;
  ttlMs: number;
  clientName: string;
  /** Who opened the session (docs/security.md); only they may resume it. Absent or "": nobody named. */
  identity?: string;
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

/** One (session, owner) holding a lock, as Describe and Watch show it. */
export interface HolderState {
  sessionId: string;
  owner: string;
  token: bigint;
  count: number;
  mode: StoreMode;
  value: Uint8Array;
  /** Lease left on the store's clock when read; 0 for a holder that has just left. */
  leaseMs: number;
  /** How long it has held the lock (since the grant; re-entries keep it) on the store's clock; Describe only. */
  heldMs?: number;
  /** The session's client name; filled in by the coordinator from session records, never by the store. */
  clientName?: string;
  /** The identity that opened the session (security on); filled in like clientName. */
  identity?: string;
  /** The latest release request made to this hold while it holds (Describe only). */
  releaseRequest?: { requester: string; reason: string };
}

/** One queued acquire, as Describe shows it; `position` 1 is the head of the queue. */
export interface WaiterState {
  sessionId: string;
  owner: string;
  requestId: string;
  position: number;
  mode: StoreMode;
  leaseMs: number;
  /** How long it has waited since it first queued, on the store's clock. */
  waitedMs: number;
  /** As HolderState.clientName. */
  clientName?: string;
  /** As HolderState.identity. */
  identity?: string;
  /** For a member of an acquire-set: every name of the set, this one included. */
  setNames?: string[];
  /** Its AcquireArgs.priority (0: none). */
  priority: number;
}

/**
 * One lock's state at `version`: the version of the last holder change it includes (0n when the
 * lock has no change on record, in which case any next change follows it). Entries whose lease
 * has ended are left out. `limit` is the SHARED limit in force, undefined when there is none.
 */
export interface LockState {
  name: string;
  version: bigint;
  limit: number | undefined;
  /** In grant order (fencing token). */
  holders: HolderState[];
  /** In queue order. */
  waiters: WaiterState[];
  /** Ms until the lock-delay in force ends, on the store's clock; undefined when the lock is not delayed. */
  delayMs?: number;
}

/** What happened to a holder. */
export type HolderChange = "acquired" | "released" | "expired" | "revoked" | "value" | "transferred";

/**
 * One holder change of one lock, numbered by the lock's version counter: each change is exactly
 * one more than the one before, so a gap means changes were missed.
 */
export interface LockEvent {
  name: string;
  version: bigint;
  change: HolderChange;
  /** The holder concerned, as it was after the change (or when it left). */
  holder: HolderState;
  /** Holders the lock has after this change. */
  holdersLeft: number;
  /** For "transferred": the holder that handed over (`holder` took over), as it was when it left. */
  from?: HolderState;
}

/** A Transfer: the holder (session, owner) hands its exclusive hold to a waiter of the lock. */
export interface TransferArgs extends Omit<Claim, "requestId"> {
  /** The hold's token: a re-run of a transfer whose reply was lost finds its own transfer by it. */
  token: bigint;
  /** The successor's session; "": the head of the queue (its first plain waiter). */
  toSessionId: string;
  /** The successor's owner; "": that session's first waiter. */
  toOwner: string;
}

/** A waiter as a transfer names it. */
export interface WaitingClaim {
  sessionId: string;
  owner: string;
  requestId: string;
}

/**
 * Answer to a transfer: the successor now holds with `token` (its grant is delivered as any grant),
 * or nothing changed: `not-held`, `shared` (the hold is not exclusive), `in-set` (the successor waits
 * as an acquire-set member), `not-waiting` (`waiting`: who does wait, the first few in queue order).
 */
export type TransferOutcome =
  | { kind: "transferred"; to: WaitingClaim; token: bigint }
  | { kind: "not-held" }
  | { kind: "shared" }
  | { kind: "in-set" }
  | { kind: "not-waiting"; waiting: WaitingClaim[] };

/** At most this many waiters are named by a transfer's `not-waiting`. */
export const MAX_WAITING_NAMED = 10;

/** A release request (docs/elections.md): who asks the holders of `name` to let go, and why. */
export interface ReleaseRequest {
  name: string;
  requester: string;
  reason: string;
}

/** A release request as it reaches one holder's coordinator. */
export interface ReleaseRequested extends ReleaseRequest {
  sessionId: string;
  owner: string;
}

/** A hold an operator revoked; the coordinator serving `sessionId` tells its client. */
export interface Revocation {
  name: string;
  sessionId: string;
  owner: string;
  token: bigint;
}

/** Answer to a revoke: the revoked hold's token and count, or `not-held`. */
export type RevokeOutcome = { kind: "revoked"; token: bigint; holdCount: number } | { kind: "not-held" };

/** One active lock (live holders or waiters) in a List page. */
export interface LockSummary {
  name: string;
  /** The holders' mode; undefined when nobody holds it. */
  mode: StoreMode | undefined;
  limit: number | undefined;
  holders: number;
  waiters: number;
  /** As LockState.delayMs. */
  delayMs?: number;
}

/** One List page; `nextPageToken` "" when the listing is complete. */
export interface LockPage {
  locks: LockSummary[];
  nextPageToken: string;
}

/**
 * Store events: grants for this coordinator's waiters, holder changes of watched locks,
 * revocations (of any session: the listener picks its own), and pub/sub gaps to resync after.
 */
export interface StoreListener {
  grant(grant: Grant): void;
  /** Grants and holder changes may have been missed (the event connection dropped): re-check. */
  resync(): void;
  /** A holder change of a lock this coordinator watches (see `Store.watch`), in version order. */
  event(event: LockEvent): void;
  /**
   * A hold was revoked. A revoke run here tells it before granting this coordinator's waiters
   * (told first); the broadcast may repeat it, so treat revocations idempotently.
   */
  revoked(revocation: Revocation): void;
  /**
   * A hand-on met a queued acquire-set member of this coordinator that fits the lock it freed, but
   * cannot grant a set (it sees one name): re-run that set's acquire (docs/multi-lock.md).
   */
  setMayFit?(waiter: Omit<Claim, "owner">): void;
  /** Someone asks a holder to let go (any coordinator's request, broadcast: the listener picks its own sessions). */
  releaseRequested?(request: ReleaseRequested): void;
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
  /** The hold-and-wait acquires of every coordinator, which deadlock detection reads (docs/deadlocks.md). */
  readonly waits: WaitRegistry;
  start(listener: StoreListener): Promise<void>;
  acquire(args: AcquireArgs): Promise<AcquireOutcome>;
  /**
   * Grants every lock of the set at once (one token each), or queues the set on every name without
   * holding any; idempotent by (session, request id): a re-run keeps its places. Withdraw, renew and
   * release each name with the per-name methods (a set's claim is an ordinary waiter and holder).
   */
  acquireSet(args: AcquireSetArgs): Promise<AcquireSetOutcome>;
  /**
   * Drop one hold of (session, owner), or every hold with `all`. `token`, the hold's fencing token when
   * the caller knows it, lets the Redis store replay a final release on a new master (docs/operations.md).
   */
  release(claim: Omit<Claim, "requestId"> & { token?: bigint }, all: boolean): Promise<ReleaseOutcome>;
  /**
   * Withdraw a waiter. `cancel` (the client asked) also releases a grant that raced it; `abandon`
   * (its stream broke) withdraws it only while it is attached to this coordinator and leaves a
   * raced grant for a resumed session to claim (or its lease to end).
   */
  withdraw(claim: Claim, how: "cancel" | "abandon"): Promise<ReleaseOutcome>;
  /** Purge expired leases, hand the lock on, and report on the given waiters. */
  check(name: string, waiters: Claim[]): Promise<CheckOutcome>;
  /**
   * Renew a session's holds (by owner) and queue entries on all the given locks at once (the keepalive);
   * resolves with one outcome per lock, in order (and with `touchSession`, whether the session record was
   * still there). On Redis one script per node (Cluster: per hash slot, and the record's PEXPIRE beside
   * them); rejects when any part could not be renewed (the parts that could were).
   */
  renew(args: RenewArgs): Promise<RenewResult>;
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
  /** One lock's state, with the version of the last holder change it includes, read atomically. */
  describe(name: string): Promise<LockState>;
  /**
   * One page of at most `pageSize` active locks whose names start with `prefix`, in no order;
   * a page may hold fewer before the end. `pageToken` "" starts; a token this store did not issue
   * for this prefix answers "invalid-token". Every lock active throughout a listing is listed (on
   * Redis Cluster too, while slots move).
   */
  list(prefix: string, pageSize: number, pageToken: string): Promise<LockPage | "invalid-token">;
  /** Takes away every hold of (session, owner), tells its coordinator, and hands the lock on. */
  revoke(hold: Omit<Claim, "requestId">): Promise<RevokeOutcome>;
  /** Replaces the value of a live hold; "not-held" when (session, owner) holds no live lease. */
  proclaim(hold: Omit<Claim, "requestId">, value: Uint8Array): Promise<"proclaimed" | "not-held">;
  /**
   * Hands an exclusive hold to a waiter in one step (docs/elections.md): the successor holds with a new
   * token and its grant reaches its coordinator as any grant; watchers see one "transferred" change; no
   * lock-delay applies. A re-run after a lost reply answers the same transfer again.
   */
  transfer(args: TransferArgs): Promise<TransferOutcome>;
  /** Records the request on every live holder of `name` and tells their coordinators; resolves with how many. */
  requestRelease(request: ReleaseRequest): Promise<number>;
  /** Starts passing the lock's holder changes to `listener.event`; resolves once subscribed. */
  watch(name: string): Promise<void>;
  /** Stops passing the lock's holder changes. */
  unwatch(name: string): Promise<void>;
  close(): Promise<void>;
}
