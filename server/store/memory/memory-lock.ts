import type {
  AcquireArgs,
  AcquireOutcome,
  Claim,
  ReleaseOutcome,
  RenewOutcome,
  StoreMode,
  WaiterStatus,
} from "../store.js";

/** A grant the lock made to one of its waiters, for the store to pass to its listener. */
export interface LockGrant {
  sessionId: string;
  requestId: string;
  token: bigint;
}

/** One (session, owner) holding the lock; `requestId` is the acquire that was granted. */
interface Holder {
  token: bigint;
  count: number;
  mode: StoreMode;
  requestId: string;
  deadline: number;
}

/** One queued acquire; `limit` is the shared limit it asked for. */
interface Waiter {
  sessionId: string;
  requestId: string;
  owner: string;
  mode: StoreMode;
  limit: number;
  deadline: number;
}

/**
 * One lock name's holders, FIFO wait queue and shared limit, with the operations of the Redis
 * scripts (acquire.lua, release.lua, check.lua, renew.lua) applied in process, step for step.
 * Each operation takes the clock reading it runs at; tokens come from `issueToken`, because the
 * fencing counter outlives the lock.
 */
export class MemoryLock {
  private readonly holders = new Map<string, Holder>();
  // Map order is arrival order: a re-queued request is deleted and set again, so it goes last.
  private readonly queue = new Map<string, Waiter>();
  private limit: number | undefined;
  private exclusive = false;

  constructor(private readonly issueToken: (now: number) => bigint) {}

  /** True when nobody holds or waits: the store then forgets the lock. */
  get isEmpty(): boolean {
    return this.holders.size === 0 && this.queue.size === 0;
  }

  /** Grants, re-enters, queues or refuses one claim (acquire.lua). Never leaves the lock empty. */
  acquire(a: AcquireArgs, now: number): AcquireOutcome {
    this.purge(now);
    if (this.isEmpty) this.limit = undefined;
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
    if (held) {
      if (held.mode === "shared" && a.mode === "exclusive") return { kind: "upgrade" };
      held.count++;
      return { kind: "granted", token: held.token, holdCount: held.count };
    }
    const requeued = this.queue.get(pairKey(a.sessionId, a.requestId));
    if (requeued) {
      requeued.deadline = now + a.ttlMs;
      return this.queuedAnswer(pairKey(a.sessionId, a.requestId), now);
    }
    const free = this.fits(a.mode, a.limit, this.holders.size) && this.queue.size === 0;
    if (a.mode === "shared" && (free || a.mayWait)) this.limit = a.limit;
    if (free) {
      const token = this.issueToken(now);
      this.hold(a.sessionId, a.owner, {
        token,
        count: 1,
        mode: a.mode,
        requestId: a.requestId,
        deadline: now + a.ttlMs,
      });
      return { kind: "granted", token, holdCount: 1 };
    }
    if (!a.mayWait) return { kind: "busy" };
    const { sessionId, requestId, owner, mode, limit } = a;
    this.queue.set(pairKey(sessionId, requestId), {
      sessionId,
      requestId,
      owner,
      mode,
      limit,
      deadline: now + a.ttlMs,
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
    if (outcome.kind === "grant-released" || (outcome.kind === "released" && outcome.holdCount === 0)) {
      this.holders.delete(key);
    }
    return { outcome, grants: this.handOn(now) };
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
  renew(sessionId: string, ttlMs: number, owners: string[], waiters: Claim[], now: number): RenewOutcome {
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
    for (const [key, holder] of this.holders) if (holder.deadline <= now) this.holders.delete(key);
    for (const [key, waiter] of this.queue) if (waiter.deadline <= now) this.queue.delete(key);
    if (this.holders.size === 0) this.exclusive = false;
  }

  /** Grants the head waiter, and the consecutive waiters after it while they fit. */
  private handOn(now: number): LockGrant[] {
    const grants: LockGrant[] = [];
    // Counted like the script counts: a grant to a (session, owner) that already holds replaces
    // that hold but still counts as one more holder.
    let n = this.holders.size;
    if (n === 0) this.exclusive = false;
    for (const [id, w] of this.queue) {
      if (!this.fits(w.mode, w.limit, n)) break;
      const token = this.issueToken(now);
      this.queue.delete(id);
      // The hold keeps the waiter's lease deadline: the waiter's keepalives kept it current.
      this.hold(w.sessionId, w.owner, {
        token,
        count: 1,
        mode: w.mode,
        requestId: w.requestId,
        deadline: w.deadline,
      });
      n++;
      grants.push({ sessionId: w.sessionId, requestId: w.requestId, token });
    }
    return grants;
  }

  /** Whether a claim of `mode` fits next to `n` holders. */
  private fits(mode: StoreMode, limit: number, n: number): boolean {
    return n === 0 || (mode === "shared" && !this.exclusive && (limit === 0 || n < limit));
  }

  private hold(sessionId: string, owner: string, holder: Holder): void {
    this.holders.set(pairKey(sessionId, owner), holder);
    if (holder.mode === "exclusive") this.exclusive = true;
  }

  /** Ms until the earliest holder lease ends, rounded up; -1 when nobody holds the lock. */
  private msToEarliestLease(now: number): number {
    let earliest = Number.POSITIVE_INFINITY;
    for (const holder of this.holders.values()) earliest = Math.min(earliest, holder.deadline);
    return earliest === Number.POSITIVE_INFINITY ? -1 : Math.max(0, Math.ceil(earliest - now));
  }
}

// Session ids, owners and request ids are arbitrary strings: a JSON pair cannot be ambiguous.
function pairKey(a: string, b: string): string {
  return JSON.stringify([a, b]);
}
