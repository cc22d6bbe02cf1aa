import type { Logger } from "pino";
import type { AcquireSetArgs, AcquireSetOutcome, Claim, SetMember, Store } from "../../store/store.js";
import { StoreOutageLog } from "../../store/store-outage-log.js";
import { StoreUnacknowledgedError } from "../../store/store-unacknowledged-error.js";
import { deadlockError } from "../deadlock/deadlock-error.js";
import type { Deadlock } from "../deadlock/wait-for-graph.js";
import { acquireFailureOf } from "../failure-labels.js";
import { LockDelayDefaults } from "../lock-delay-defaults.js";
import type { LockLimits } from "../lock-limits.js";
import { type LockMetrics, NO_LOCK_METRICS } from "../lock-metrics.js";
import type { ValidAcquireAll } from "../lock-requests.js";
import type { OutcomeResolver } from "../outcomes/outcome-resolver.js";
import { ServerError } from "../server-error.js";
import { holdKey, type PendingSet, type Session, waiterKey } from "../sessions/session.js";
import { DECISION_GRACE_MS } from "../waits/decision-grace.js";

import { checkSetPreconditions, setRefusal, setTimeoutFailure } from "./set-refusal.js";

/** How waiting sets take part in deadlock detection (LockTable's HeldWaits): a set's owner may hold other locks. */
export interface SetWaits {
  /** `p` was answered Queued. */
  queued(p: PendingSet): void;
  /** `p` was answered or dropped. */
  ended(p: PendingSet): void;
  /** (session, owner) was granted a set: its queued requests now hold and wait. */
  granted(session: Session, owner: string): void;
}

const NO_WAITS: SetWaits = { queued() {}, ended() {}, granted() {} };

/** How giveUp ends a set: the error ("by-caller": a TIMEOUT naming the blockers), the withdrawal, the answer. */
interface GiveUp {
  error: ServerError | "by-caller";
  how?: "cancel" | "abandon";
  waitMs?: number;
  retryUnchanged?: boolean;
  /** The name the Failed names (a DEADLOCK's: the victim's lock); "" by default. */
  name?: string;
}

/**
 * AcquireAll: a set of locks granted all together or not at all (docs/multi-lock.md). The store
 * queues the set on every name, holding none, and grants it only in acquire-set runs: the first,
 * then a re-run whenever a hand-on passes over one of its entries that fits (`retry`), a renewal
 * finds an entry gone, or a timed re-check falls due. A give-up withdraws it from every name.
 */
export class SetAcquires {
  private readonly byId = new Map<string, PendingSet>();

  constructor(
    private readonly store: Store,
    private readonly limits: LockLimits,
    private readonly resolver: OutcomeResolver,
    private readonly outage: StoreOutageLog,
    private readonly log: Logger,
    private readonly metrics: LockMetrics = NO_LOCK_METRICS,
    private readonly waits: SetWaits = NO_WAITS,
    private readonly lockDelays = new LockDelayDefaults(),
  ) {}

  /** AcquireAll requests of this coordinator's sessions not answered yet. */
  get size(): number {
    return this.byId.size;
  }

  /** The sets answered Queued and still waiting. */
  *queued(): Generator<PendingSet> {
    for (const p of this.byId.values()) if (p.queued && !p.done) yield p;
  }

  /** Answers AcquiredAll or Failed, after Queued when it waits; rejects with a ServerError for the request. */
  async acquire(session: Session, a: ValidAcquireAll): Promise<void> {
    checkSetPreconditions(session, a, this.limits);
    const p: PendingSet = {
      session,
      requestId: a.requestId,
      owner: a.owner,
      locks: a.locks.map((l) => withLockDelay(l, a.lockDelayMs ?? this.lockDelays.of(l.name))),
      value: a.value,
      mayWait: a.waitMs !== 0,
      done: false,
      receivedAtMs: performance.now(),
    };
    session.pendingSets.set(p.requestId, p);
    this.byId.set(waiterKey(session.id, p.requestId), p);
    if (a.waitMs) {
      const waitMs = a.waitMs;
      // The wait bounds time in the queue: until the first run answers (DECISION_GRACE_MS at most), a free set is granted.
      p.waitTimer = setTimeout(() => {
        if (p.queued) return this.giveUp(p, { error: "by-caller", waitMs });
        p.waitRanOut = waitMs;
        p.waitTimer = setTimeout(() => this.giveUp(p, { error: "by-caller", waitMs }), DECISION_GRACE_MS);
      }, waitMs);
    }
    await this.run(p, true);
  }

  /** A hand-on passed over an entry of this set that fits the lock it freed: try the set again. */
  retry(waiter: Omit<Claim, "owner">): void {
    const p = this.byId.get(waiterKey(waiter.sessionId, waiter.requestId));
    if (p) void this.run(p);
  }

  /** Re-runs every set waiting for `name` now (a renewal found one of its entries no longer queued). */
  recheckSoon(name: string): void {
    for (const p of this.byId.values()) if (p.locks.some((l) => l.name === name)) void this.run(p);
  }

  /** Re-runs every waiting set (hand-on messages may have been missed). */
  resync(): void {
    for (const p of this.byId.values()) void this.run(p);
  }

  /** Withdraws the set `requestId` of `session`; false when no such set is pending. */
  cancel(session: Session, requestId: string): boolean {
    const p = session.pendingSets.get(requestId);
    if (p) this.giveUp(p, { error: new ServerError("cancelled", "acquire_all: cancelled by the client") });
    return p !== undefined;
  }

  /** As LockTable.dropPending, for the session's sets. */
  dropPending(session: Session, how: "abandon" | "cancel" | "detach"): void {
    for (const p of [...session.pendingSets.values()]) {
      if (how === "detach") this.finish(p);
      else this.giveUp(p, { error: new ServerError("cancelled", "acquire_all: the session ended"), how });
    }
  }

  /** Stops every timer (coordinator shutdown). */
  stop(): void {
    for (const p of [...this.byId.values()]) this.finish(p);
  }

  /**
   * One acquire-set run, or a request for one more when a run is in flight. The first run's store
   * failure rejects (answered Failed by the caller); a later one is retried in 200 ms.
   */
  private async run(p: PendingSet, first = false): Promise<void> {
    if (p.done) return;
    if (p.running) {
      p.again = true;
      return;
    }
    p.running = true;
    clearTimeout(p.recheckTimer);
    let outcome: AcquireSetOutcome | undefined;
    // A WAIT that fell short is not retried (the set may be queued or granted on the master): withdrawn instead.
    const run = () =>
      this.store.acquireSet(argsOf(p)).catch((err) => {
        if (err instanceof StoreUnacknowledgedError) throw new Unacknowledged(err);
        throw err;
      });
    try {
      do {
        p.again = false;
        outcome = await this.resolver.resolve(run, { wanted: () => !p.done && p.waitRanOut === undefined });
      } while (p.again && !p.done && outcome?.kind === "queued");
      this.outage.succeeded();
    } catch (caught) {
      if (p.done) return;
      const err = caught instanceof Unacknowledged ? caught.cause : caught;
      if (err instanceof StoreUnacknowledgedError) {
        const why = `acquire_all: not acknowledged by ${err.acked} of the ${err.wanted} replicas in time; the claim is withdrawn: retry later`;
        return void this.giveUp(p, { error: new ServerError("unavailable", why), retryUnchanged: true });
      }
      if (first) {
        this.finish(p);
        throw err;
      }
      if (StoreOutageLog.isOutage(err)) this.outage.failed("set re-check", err, { request: p.requestId });
      else this.log.warn({ err, request: p.requestId }, "acquire_all re-check failed; retrying");
      p.recheckTimer = setTimeout(() => void this.run(p), 200);
      return;
    } finally {
      p.running = false;
    }
    // Undefined or done: given up meanwhile; its withdrawal releases a grant that raced it.
    if (outcome !== undefined && !p.done) this.answer(p, outcome);
    // The wait ran out while the store was unreachable: the withdrawal ends what a run may have queued.
    else if (p.waitRanOut !== undefined) this.giveUp(p, { error: "by-caller", waitMs: p.waitRanOut });
  }

  private answer(p: PendingSet, outcome: AcquireSetOutcome): void {
    if (outcome.kind === "queued") {
      if (p.waitRanOut !== undefined) return void this.giveUp(p, { error: "by-caller", waitMs: p.waitRanOut });
      if (!p.queued) {
        p.session.tell.queued(p.requestId, p.locks[outcome.index].name, outcome.position);
        p.queued = true;
        this.waits.queued(p);
      }
      // No holder to wait out (a plain waiter ahead that does not fit yet): look again in a second.
      const ms = outcome.recheckInMs >= 0 ? Math.max(5, outcome.recheckInMs) : 1000;
      p.recheckTimer = setTimeout(() => void this.run(p), ms);
      return;
    }
    this.finish(p);
    if (outcome.kind !== "granted") {
      const error = setRefusal(p, outcome);
      this.metrics.acquireFailed(acquireFailureOf(error.error.reason));
      p.session.tell.failed(p.requestId, error.name, error.error);
      return;
    }
    const now = performance.now();
    const locks = p.locks.map((l, i) => {
      const token = outcome.tokens[i];
      p.session.held.set(holdKey(l.name, p.owner), { name: l.name, owner: p.owner, token, count: 1, grantedAtMs: now });
      this.metrics.granted(l.name, p.queued ? now - p.receivedAtMs : undefined);
      return { name: l.name, token };
    });
    this.waits.granted(p.session, p.owner);
    p.session.tell.grantedSet(p.requestId, locks, p.owner);
  }

  /**
   * Ends a pending set: withdraws it from every name (`cancel` also releases a grant that raced it),
   * then answers `error`, or ("by-caller") TIMEOUT naming the holders of every name it waited for.
   */
  private giveUp(p: PendingSet, { error, how = "cancel", waitMs, retryUnchanged = false, name = "" }: GiveUp): void {
    if (p.done) return;
    this.finish(p);
    this.metrics.acquireFailed(acquireFailureOf(error === "by-caller" ? "timeout" : error.reason));
    for (const l of p.locks) {
      const claim = { name: l.name, sessionId: p.session.id, owner: p.owner, requestId: p.requestId };
      this.resolver
        .resolve(() => this.store.withdraw(claim, how), { retryUnchanged })
        .catch((err) => this.log.warn({ err, name: l.name }, "withdraw failed; the entry expires with its lease"));
    }
    if (error !== "by-caller") {
      p.session.tell.failed(p.requestId, name, error);
      return;
    }
    // Read after the withdrawals were issued (on the same connection), so no grant can race the answer.
    void setTimeoutFailure(this.store, p, waitMs ?? 0).then((t) => p.session.tell.failed(p.requestId, t.name, t.error));
  }

  /** The deadlock detector chose `p` as the victim of a cycle (its owner holds another lock of it): withdrawn. */
  deadlocked(p: PendingSet, d: Deadlock): void {
    this.giveUp(p, { error: deadlockError(d.cycle), name: d.cycle[0].name });
  }

  private finish(p: PendingSet): void {
    this.waits.ended(p);
    p.done = true;
    clearTimeout(p.waitTimer);
    clearTimeout(p.recheckTimer);
    p.session.pendingSets.delete(p.requestId);
    this.byId.delete(waiterKey(p.session.id, p.requestId));
  }
}

/** Carries a StoreUnacknowledgedError past the resolver, which would retry it as an unknown outcome. */
class Unacknowledged extends Error {
  constructor(override readonly cause: StoreUnacknowledgedError) {
    super(cause.message);
  }
}

function argsOf(p: PendingSet): AcquireSetArgs {
  const { requestId, owner, locks, value, mayWait } = p;
  return { sessionId: p.session.id, requestId, owner, locks, value, mayWait, ttlMs: p.session.ttlMs };
}

/** `l` with the lock-delay its hold gets (the request's, else the serve default for its name); 0 adds nothing. */
function withLockDelay(l: SetMember, lockDelayMs: number): SetMember {
  return lockDelayMs > 0 ? { ...l, lockDelayMs } : l;
}
