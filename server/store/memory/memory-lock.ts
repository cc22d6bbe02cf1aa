import type {
  AcquireArgs,
  AcquireOutcome,
  Claim,
  HolderChange,
  HolderState,
  ReleaseOutcome,
  ReleaseRequested,
  RenewOutcome,
  RevokeOutcome,
  StoreMode,
  TransferArgs,
  TransferOutcome,
  WaiterState,
  WaiterStatus,
  WaitingClaim,
} from "../store.js";
import { MAX_WAITING_NAMED } from "../store.js";
import { LockDelay } from "./lock-delay.js";
import { enqueue, type Holder, setsAhead, stateOf, type Waiter, waiterStateOf } from "./memory-entries.js";

/** A grant the lock made to one of its waiters, for the store to pass to its listener. */
export interface LockGrant {
  sessionId: string;
  requestId: string;
  token: bigint;
  /** An acquire-set member the hand-on passed over although it fits: its set is to be tried (token 0n). */
  retrySet?: boolean;
}

/** Reports one holder change, with the holders left after it, for the store to number and pass on. */
export type ChangeSink = (change: HolderChange, holder: HolderState, holdersLeft: number, from?: HolderState) => void;

/**
 * One lock name's holders, FIFO wait queue and shared limit, with the operations of the Redis
 * scripts (acquire.lua, release.lua, check.lua, renew.lua) applied in process, step for step; the
 * grant rule (`fits`) and the hand-on (`handOn`) mirror the scripts' shared includes of those names.
 * Each operation takes the clock reading it runs at; tokens come from `issueToken`, because the
 * fencing counter outlives the lock. Every holder change goes to `emit` as it happens.
 */
export class MemoryLock {
  // Read and changed by memory-set.ts too (acquire-set.lua's twin), as are queue, limit and delay.
  readonly holders = new Map<string, Holder>();
  // Map order is arrival order: a re-queued request is deleted and set again, so it goes last.
  readonly queue = new Map<string, Waiter>();
  limit: number | undefined;
  private exclusive = false;
  readonly delay = new LockDelay();
  /** The latest transfer (transfer.lua's 'moved' field): its old token, so that a re-run answers it again. */
  private moved?: { fromToken: bigint; to: WaitingClaim; token: bigint };

  constructor(
    readonly issueToken: (now: number) => bigint,
    private readonly emit: ChangeSink,
  ) {}

  /** True when nobody holds or waits and no lock-delay is on record: the store then forgets the lock. */
  get isEmpty(): boolean {
    return this.holders.size === 0 && this.queue.size === 0 && !this.delay.pending;
  }

  /**
   * Forgets, when the lock is empty, what an idle lock's data hash held on Redis: acquire.lua and
   * acquire-set.lua delete the hash after a purge that left nobody, the limit and the latest transfer
   * ('moved') with it.
   */
  forgetIfEmpty(): void {
    if (!this.isEmpty) return;
    this.limit = undefined;
    this.moved = undefined;
  }

  /** Grants, re-enters, queues or refuses one claim (acquire.lua). Never leaves the lock empty. */
  acquire(a: AcquireArgs, now: number): AcquireOutcome {
    this.purge(now);
    this.forgetIfEmpty();
    // Before re-entry: every SHARED claim, a re-entry included, must name the limit in force.
    if (a.mode === "shared" && this.limit !== undefined && this.limit !== a.limit) {
      return { kind: "conflict", limitInForce: this.limit };
    }
    const held = this.holders.get(pairKey(a.sessionId, a.owner));
    if (held?.requestId === a.requestId) {
      // A re-sent request already granted: answer its grant again and renew it (acquire.lua).
      held.deadline = now + a.ttlMs;
      return { kind: "granted", token: held.token, holdCount: held.count };
    }
    // A re-sent re-entry already counted: answer its count again, never one more (reenter.lua).
    if (held && held.reentryRequestId === a.requestId) {
      return { kind: "granted", token: held.token, holdCount: held.count };
    }
    if (held) {
      if (held.mode === "shared" && a.mode === "exclusive") return { kind: "upgrade" };
      held.count++;
      held.reentryRequestId = a.requestId;
      return { kind: "granted", token: held.token, holdCount: held.count };
    }
    const requeued = this.queue.get(pairKey(a.sessionId, a.requestId));
    if (requeued) {
      requeued.deadline = now + a.ttlMs;
      return this.queuedAnswer(pairKey(a.sessionId, a.requestId), now);
    }
    // A lock-delay in force counts as an exclusive holder (delay.lua): nothing fits.
    const free = !this.delay.inForce(now) && this.fits(a.mode, a.limit, this.holders.size) && setsAhead(this.queue);
    if (a.mode === "shared" && (free || a.mayWait)) this.limit = a.limit;
    const { sessionId, requestId, owner, mode, limit, lockDelayMs } = a;
    const value = a.value ?? new Uint8Array();
    if (free) {
      const token = this.issueToken(now);
      const deadline = now + a.ttlMs;
      const acquiredAt = now;
      this.hold({ sessionId, owner, value, token, count: 1, mode, requestId, deadline, acquiredAt, lockDelayMs }, now);
      return { kind: "granted", token, holdCount: 1 };
    }
    if (!a.mayWait) {
      const delayMs = this.delay.remainingMs(now);
      return delayMs ? { kind: "busy", delayMs } : { kind: "busy" };
    }
    enqueue(this.queue, pairKey(sessionId, requestId), {
      sessionId,
      requestId,
      owner,
      mode,
      limit,
      deadline: now + a.ttlMs,
      value,
      queuedAt: now,
      lockDelayMs,
      ...(a.priority && { priority: a.priority }),
    });
    return this.queuedAnswer(pairKey(sessionId, requestId), now);
  }

  /** A re-sent request still queued keeps its place; its lease is renewed. */
  private queuedAnswer(id: string, now: number): AcquireOutcome {
    const position = [...this.queue.keys()].indexOf(id) + 1;
    // With no holder left (their leases ended) a re-check is due at once.
    return { kind: "queued", position, recheckInMs: Math.max(0, this.msToEarliestLease(now)) };
  }

  /**
   * Lets go of a claim, then hands the lock on (release.lua). With `requestId` "" it drops one
   * hold of (session, owner) or all of them; otherwise it withdraws that waiter and, for
   * `cancel` only, releases the hold it was granted if the grant raced the withdrawal.
   */
  letGo(
    sessionId: string,
    owner: string,
    requestId: string,
    how: "one" | "all" | "cancel" | "abandon",
    now: number,
  ): { outcome: ReleaseOutcome; grants: LockGrant[] } {
    this.purge(now);
    const key = pairKey(sessionId, owner);
    const held = this.holders.get(key);
    let outcome: ReleaseOutcome = { kind: "not-held" };
    if (requestId !== "") {
      if (this.queue.delete(pairKey(sessionId, requestId))) outcome = { kind: "withdrawn" };
      else if (how === "cancel" && held?.requestId === requestId) outcome = { kind: "grant-released" };
      else outcome = { kind: "gone" };
    } else if (held) {
      held.count = how === "all" ? 0 : held.count - 1;
      outcome = { kind: "released", holdCount: held.count };
    }
    if (held && (outcome.kind === "grant-released" || (outcome.kind === "released" && outcome.holdCount === 0))) {
      this.drop(held, "released", now);
    }
    return { outcome, grants: this.handOn(now) };
  }

  /** Takes every hold of (session, owner) away and hands the lock on (revoke.lua). */
  revoke(sessionId: string, owner: string, now: number): { outcome: RevokeOutcome; grants: LockGrant[] } {
    this.purge(now);
    const held = this.holders.get(pairKey(sessionId, owner));
    if (held) this.drop(held, "revoked", now);
    const outcome: RevokeOutcome = held
      ? { kind: "revoked", token: held.token, holdCount: held.count }
      : { kind: "not-held" };
    return { outcome, grants: this.handOn(now) };
  }

  /**
   * Hands (session, owner)'s exclusive hold to a waiter in one step (transfer.lua): the successor holds
   * with a new token, one "transferred" change is reported, no lock-delay applies; then the lock is handed
   * on (a shared successor may let more in).
   */
  transfer(t: TransferArgs, now: number): { outcome: TransferOutcome; grants: LockGrant[] } {
    this.purge(now);
    // A refusal still hands on what the purge freed (transfer.lua).
    const refuse = (outcome: TransferOutcome) => ({ outcome, grants: this.handOn(now) });
    const held = this.holders.get(pairKey(t.sessionId, t.owner));
    if (!held) {
      const again = this.moved?.fromToken === t.token && this.moved;
      return refuse(again ? { kind: "transferred", token: again.token, to: again.to } : { kind: "not-held" });
    }
    if (held.mode !== "exclusive") return refuse({ kind: "shared" });
    const named = (w: Waiter) =>
      t.toSessionId === "" ? !w.setNames : w.sessionId === t.toSessionId && (t.toOwner === "" || w.owner === t.toOwner);
    const found = [...this.queue].find(([, w]) => named(w));
    if (!found) {
      const waiting = [...this.queue.values()].slice(0, MAX_WAITING_NAMED);
      return refuse({
        kind: "not-waiting",
        waiting: waiting.map(({ sessionId, owner, requestId }) => ({ sessionId, owner, requestId })),
      });
    }
    const [id, w] = found;
    if (w.setNames) return refuse({ kind: "in-set" });
    this.holders.delete(pairKey(held.sessionId, held.owner));
    this.exclusive = false;
    this.queue.delete(id);
    const token = this.issueToken(now);
    const { sessionId, owner, value, mode, requestId, deadline, lockDelayMs } = w;
    const next: Holder = {
      sessionId,
      owner,
      value,
      token,
      count: 1,
      mode,
      requestId,
      deadline,
      acquiredAt: now,
      lockDelayMs,
    };
    this.hold(next, now, { ...stateOf(held, now), leaseMs: 0 });
    const to = { sessionId, owner, requestId };
    this.moved = { fromToken: held.token, to, token };
    // A shared successor may let more shared waiters in (the hand-on); after an exclusive one nobody fits.
    const more = mode === "shared" ? this.handOn(now) : [];
    return { outcome: { kind: "transferred", token, to }, grants: [{ sessionId, requestId, token }, ...more] };
  }

  /** Records a release request on every live holder (request-release.lua); returns them, as requested. */
  requestRelease(requester: string, reason: string, now: number): Omit<ReleaseRequested, "name">[] {
    // Purges nothing, as the script: a holder whose lease has ended is left for the next operation.
    return [...this.holders.values()]
      .filter((h) => h.deadline > now)
      .map((h) => {
        h.releaseRequest = { requester, reason };
        return { sessionId: h.sessionId, owner: h.owner, requester, reason };
      });
  }

  /** Replaces a live hold's value (proclaim.lua); false when (session, owner) holds no live lease. */
  proclaim(sessionId: string, owner: string, value: Uint8Array, now: number): boolean {
    const held = this.holders.get(pairKey(sessionId, owner));
    if (!held || held.deadline <= now) return false;
    held.value = value;
    this.emit("value", stateOf(held, now), this.holders.size);
    return true;
  }

  /** Live holders (grant order) and waiters (queue order), and the SHARED limit in force (describe.lua). */
  state(now: number): { limit: number | undefined; holders: HolderState[]; waiters: WaiterState[]; delayMs?: number } {
    const holders = [...this.holders.values()]
      .filter((h) => h.deadline > now)
      .map((h) => ({
        ...stateOf(h, now),
        heldMs: Math.max(0, Math.floor(now - h.acquiredAt)),
        ...(h.releaseRequest && { releaseRequest: h.releaseRequest }),
      }));
    holders.sort((a, b) => (a.token < b.token ? -1 : 1));
    const waiters = [...this.queue.values()]
      .filter((w) => w.deadline > now)
      .map((w, i) => waiterStateOf(w, i + 1, now));
    const delayMs = this.delay.remainingMs(now);
    // Nothing but an ended lock-delay left: on Redis the lock's keys expired with the delay (delay-expiry.lua).
    const idle = this.holders.size === 0 && this.queue.size === 0 && delayMs === undefined;
    return { limit: idle ? undefined : this.limit, holders, waiters, ...(delayMs && { delayMs }) };
  }

  /**
   * The re-check (check.lua): hands the lock on, then reports each waiter as queued, granted
   * (with its token) or gone, and the ms until the earliest holder lease ends (-1: no holder).
   */
  check(waiters: Claim[], now: number): { statuses: WaiterStatus[]; recheckInMs: number; grants: LockGrant[] } {
    this.purge(now);
    const grants = this.handOn(now);
    const statuses = waiters.map((w): WaiterStatus => {
      const held = this.holders.get(pairKey(w.sessionId, w.owner));
      if (held?.requestId === w.requestId) return { kind: "granted", token: held.token };
      return this.queue.has(pairKey(w.sessionId, w.requestId)) ? { kind: "queued" } : { kind: "gone" };
    });
    return { statuses, recheckInMs: this.msToEarliestLease(now), grants };
  }

  /**
   * Pushes the live leases of a session's holds (by owner) and queue entries to now + ttl
   * (renew.lua). A waiter no longer queued whose (session, owner) holds the lock was granted
   * meanwhile: its hold is renewed in its place. An ended lease is never revived.
   */
  renew(
    sessionId: string,
    ttlMs: number,
    owners: readonly string[],
    waiters: readonly Claim[],
    now: number,
  ): RenewOutcome {
    const push = (entry: { deadline: number } | undefined): boolean => {
      if (!entry || entry.deadline <= now) return false;
      entry.deadline = now + ttlMs;
      return true;
    };
    const holder = (owner: string) => this.holders.get(pairKey(sessionId, owner));
    return {
      holds: owners.map((owner) => {
        const h = holder(owner);
        return h && push(h) ? { token: h.token, count: h.count } : null;
      }),
      waiters: waiters.map((w) => {
        if (push(this.queue.get(pairKey(sessionId, w.requestId)))) return "queued";
        return push(holder(w.owner)) ? "granted" : "gone";
      }),
    };
  }

  /** Drops the holders and waiters whose lease has ended. */
  purge(now: number): void {
    for (const holder of [...this.holders.values()]) if (holder.deadline <= now) this.drop(holder, "expired", now);
    for (const [key, waiter] of this.queue) if (waiter.deadline <= now) this.queue.delete(key);
    this.delay.lift(now);
    if (this.holders.size === 0) this.exclusive = false;
  }

  /**
   * Grants the head waiter, and the consecutive waiters after it while they `fit`: the twin of the
   * Redis stores' hand-on, server/store/redis/scripts/includes/hand-on.lua. Change both together.
   */
  private handOn(now: number): LockGrant[] {
    const grants: LockGrant[] = [];
    if (this.delay.inForce(now)) return grants;
    // Counted like the script counts: a grant to a (session, owner) that already holds replaces
    // that hold but still counts as one more holder.
    let n = this.holders.size;
    if (n === 0) this.exclusive = false;
    for (const [id, w] of this.queue) {
      const fit = this.fits(w.mode, w.limit, n);
      // A set member is passed over, never granted alone; one that fits has its set tried (hand-on.lua).
      if (w.setNames && fit) grants.push({ sessionId: w.sessionId, requestId: w.requestId, token: 0n, retrySet: true });
      if (w.setNames) continue;
      if (!fit) break;
      const token = this.issueToken(now);
      this.queue.delete(id);
      // The hold keeps the waiter's lease deadline: the waiter's keepalives kept it current.
      const { sessionId, owner, value, mode, requestId, deadline, lockDelayMs } = w;
      const acquiredAt = now;
      this.hold({ sessionId, owner, value, token, count: 1, mode, requestId, deadline, acquiredAt, lockDelayMs }, now);
      n++;
      grants.push({ sessionId: w.sessionId, requestId: w.requestId, token });
      if (mode === "exclusive") break;
    }
    return grants;
  }

  /**
   * The grant rule: whether a claim of `mode` and `limit` fits next to `n` holders. Its twin is
   * server/store/redis/scripts/includes/fits.lua: changing the grant rule means editing both.
   */
  fits(mode: StoreMode, limit: number, n: number): boolean {
    return n === 0 || (mode === "shared" && !this.exclusive && (limit === 0 || n < limit));
  }

  /** Records a new holder and reports it acquired (or, with `from`, transferred from that holder). */
  hold(holder: Holder, now: number, from?: HolderState): void {
    this.holders.set(pairKey(holder.sessionId, holder.owner), holder);
    if (holder.mode === "exclusive") this.exclusive = true;
    if (from) this.emit("transferred", stateOf(holder, now), this.holders.size, from);
    else this.emit("acquired", stateOf(holder, now), this.holders.size);
  }

  private drop(holder: Holder, change: "released" | "expired" | "revoked", now: number): void {
    this.holders.delete(pairKey(holder.sessionId, holder.owner));
    // Not a release: its lock-delay runs from its lease's end (expired) or from now (revoked).
    if (change !== "released")
      this.delay.holdOff(holder.lockDelayMs, change === "expired" ? holder.deadline : now, now);
    this.emit(change, { ...stateOf(holder, now), leaseMs: 0 }, this.holders.size);
  }

  /** Ms until the earliest holder lease or lock-delay ends, rounded up; -1 when there is neither. */
  msToEarliestLease(now: number): number {
    let earliest = this.delay.inForce(now) ? now + (this.delay.remainingMs(now) ?? 0) : Number.POSITIVE_INFINITY;
    for (const holder of this.holders.values()) earliest = Math.min(earliest, holder.deadline);
    return earliest === Number.POSITIVE_INFINITY ? -1 : Math.max(0, Math.ceil(earliest - now));
  }
}

// Session ids, owners and request ids are arbitrary strings: a JSON pair cannot be ambiguous.
export function pairKey(a: string, b: string): string {
  return JSON.stringify([a, b]);
}
