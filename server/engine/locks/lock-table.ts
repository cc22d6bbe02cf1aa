import type { Logger } from "pino";
import type { AcquireOutcome, Grant, Store, StoreListener } from "../../store/store.js";
import { StoreOutageLog } from "../../store/store-outage-log.js";
import { deadlockError } from "../deadlock/deadlock-error.js";
import { HeldWaits } from "../deadlock/held-waits.js";
import { LockDelayDefaults } from "../lock-delay-defaults.js";
import type { LockLimits } from "../lock-limits.js";
import { type LockMetrics, NO_LOCK_METRICS } from "../lock-metrics.js";
import type { ValidAcquire, ValidRelease } from "../lock-requests.js";
import { acknowledgedAcquire } from "../outcomes/acknowledged-acquire.js";
import { releaseExactlyOnce } from "../outcomes/exactly-once-release.js";
import { OutcomeResolver } from "../outcomes/outcome-resolver.js";
import { ServerError } from "../server-error.js";
import { claimOf, holdKey, type Pending, type Session } from "../sessions/session.js";
import { SetAcquires } from "../sets/set-acquires.js";
import { DECISION_GRACE_MS } from "../waits/decision-grace.js";
import { PendingAcquires } from "../waits/pending-acquires.js";
import { answerTimeout } from "../waits/wait-blockers.js";

import { acquireRefusal, checkAcquirePreconditions } from "./acquire-refusal.js";
import { HoldLedger } from "./hold-ledger.js";
import { QueueRechecks } from "./queue-rechecks.js";

/**
 * How giveUp ends a pending acquire: `answer` is the failure it sends ("by-caller": the caller answers, a TIMEOUT
 * naming the blockers); `how` the store withdrawal; `retryUnchanged` (an unacknowledged acquire) retries the
 * withdrawal even when an attempt changed nothing.
 */
type GiveUp = {
  answer: ServerError | "by-caller";
  how?: "cancel" | "abandon";
  retryUnchanged?: boolean;
};

/**
 * The lock rules of the coordinator: it turns session requests into store operations, routes
 * grants (pushed by any coordinator) to the waiting session and answers every acquire exactly once,
 * through the session's sink. Its timers are QueueRechecks, its bookkeeping of holds the HoldLedger.
 * Methods reject with a ServerError for the request; store failures surface as StoreUnavailableError. A store call whose outcome is unknown
 * is resolved (re-run, idempotently) before anything is answered (docs/protocol.md).
 */
export class LockTable implements Pick<StoreListener, "grant" | "resync"> {
  private readonly pending = new PendingAcquires((p) => this.heldWaits.ended(p));
  /** Queued acquires whose (session, owner) holds a lock: registered for deadlock detection. */
  readonly heldWaits: HeldWaits;
  private readonly rechecks: QueueRechecks;
  /** Holds of this coordinator's sessions as they begin and end, and the metrics of it (shared with SessionKeeper). */
  readonly ledger: HoldLedger;
  /** Re-runs store calls of unknown outcome until the store answers (shared with SessionKeeper). */
  readonly resolver: OutcomeResolver;
  /** Logs store failures once per outage (shared with SessionKeeper). */
  readonly outage: StoreOutageLog;
  /** AcquireAll requests (docs/multi-lock.md); their session-wide events reach them through this table. */
  readonly sets: SetAcquires;

  constructor(
    private readonly store: Store,
    private readonly limits: LockLimits,
    private readonly log: Logger,
    private readonly metrics: LockMetrics = NO_LOCK_METRICS,
    private readonly lockDelays = new LockDelayDefaults(),
  ) {
    this.outage = new StoreOutageLog(log);
    this.resolver = new OutcomeResolver(this.outage);
    this.ledger = new HoldLedger(metrics);
    this.rechecks = new QueueRechecks(store, this.pending, this.ledger, this.outage, log, (g) => this.grant(g));
    this.heldWaits = new HeldWaits(
      store,
      log,
      (p, d) => this.giveUp(p, { answer: deadlockError(d.cycle) }),
      (s, d) => this.sets.deadlocked(s, d),
    );
    this.sets = new SetAcquires(store, limits, this.resolver, this.outage, log, metrics, this.heldWaits, lockDelays);
  }

  /** Timed re-checks run so far: hand-offs by push leave it unchanged. */
  get recheckCount(): number {
    return this.rechecks.count;
  }

  /** Acquires of this coordinator's sessions not answered yet, by session and request id. */
  get waiters(): ReadonlyMap<string, Pending> {
    return this.pending.byId;
  }

  /** Acquires (and AcquireAll sets) of this coordinator's sessions not answered yet. */
  get waiterCount(): number {
    return this.pending.byId.size + this.sets.size;
  }

  /** Acquires and AcquireAll sets answered Queued and still waiting: the names each waits on, and when it arrived. */
  *queuedWaits(): Generator<{ names: readonly string[]; receivedAtMs: number }> {
    for (const p of this.pending.byId.values()) if (p.queued) yield { names: [p.name], receivedAtMs: p.receivedAtMs };
    for (const s of this.sets.queued()) yield { names: s.locks.map((l) => l.name), receivedAtMs: s.receivedAtMs };
  }

  async acquire(session: Session, a: ValidAcquire): Promise<void> {
    checkAcquirePreconditions(session, a, this.limits);
    const p: Pending = {
      session,
      requestId: a.requestId,
      name: a.name,
      owner: a.owner,
      mode: a.mode,
      limit: a.limit,
      priority: a.priority ?? 0,
      done: false,
      receivedAtMs: performance.now(),
    };
    this.pending.add(p);
    // The wait bounds time in the queue, not the store call that decides whether there is one: a
    // wait that runs out while that call is in flight ends the acquire once it answers Queued, its
    // outcome stays unknown or DECISION_GRACE_MS pass (a free lock is granted, its token not burnt).
    let deciding = true;
    let ranOut = false;
    const timedOut = (waitMs: number) =>
      this.giveUp(p, { answer: "by-caller" }) && answerTimeout(this.store, p, waitMs);
    if (a.waitMs) {
      const waitMs = a.waitMs;
      p.waitTimer = setTimeout(() => {
        if (!deciding) return void timedOut(waitMs);
        ranOut = true;
        p.waitTimer = setTimeout(() => timedOut(waitMs), DECISION_GRACE_MS);
      }, waitMs);
    }
    const { name, owner, requestId, mode, limit, value } = a;
    const [sessionId, ttlMs, mayWait] = [session.id, session.ttlMs, a.waitMs !== 0];
    // Absent: the serve default for the name's prefix (0, the usual case, sends the store nothing more).
    const lockDelayMs = a.lockDelayMs ?? this.lockDelays.of(a.name);
    const base = { name, sessionId, owner, requestId, ttlMs, mode, limit, mayWait, value };
    // Priority 0 (every waiter, usually) sends the store nothing more: the message path's cost.
    const args = a.priority ? { ...base, priority: a.priority } : base;
    let outcome: AcquireOutcome | ServerError | undefined;
    try {
      // Re-sent acquires are idempotent by (session, request id): an unknown outcome is re-run
      // until the store answers, while the acquire still waits (wait, cancel and stream end apply).
      const run = () => this.store.acquire(lockDelayMs > 0 ? { ...args, lockDelayMs } : args);
      outcome = await acknowledgedAcquire(
        this.resolver,
        run,
        () => !p.done && !ranOut,
        session.held.has(holdKey(a.name, a.owner)),
      );
    } catch (err) {
      if (p.done) return;
      this.pending.finish(p);
      throw err;
    } finally {
      deciding = false;
    }
    // A WAIT fell short: answer UNAVAILABLE and withdraw the claim until a WAIT acknowledges that.
    if (outcome instanceof ServerError) return void this.giveUp(p, { answer: outcome, retryUnchanged: true });
    // The wait ran out while the store was unreachable: the withdrawal ends a claim it may have made.
    if (outcome === undefined) return void (ranOut && a.waitMs && timedOut(a.waitMs));
    if (p.done) {
      // Given up while the script ran: a fresh grant is released by the withdrawal, but a
      // re-entry is not a grant, so drop the extra hold here.
      if (outcome.kind === "granted" && outcome.holdCount > 1)
        void this.store.release(claimOf(p), false).catch(() => {});
      return;
    }
    if (outcome.kind === "queued") {
      if (ranOut && a.waitMs) return void timedOut(a.waitMs);
      p.queued = true;
      session.tell.queued(p.requestId, p.name, outcome.position);
      this.heldWaits.queued(p);
      this.rechecks.schedule(p.name, outcome.recheckInMs);
      return;
    }
    this.pending.finish(p);
    if (outcome.kind === "granted") return this.hold(p, outcome.token, outcome.holdCount);
    throw acquireRefusal(a, outcome);
  }

  async release(session: Session, r: ValidRelease): Promise<void> {
    if (session.inFlight(r.requestId)) {
      throw new ServerError("duplicate-request", `release.request_id: "${r.requestId}" is already in flight`);
    }
    const hold = session.held.get(holdKey(r.name, r.owner));
    if (!hold)
      throw new ServerError("not-held", `release: "${r.name}" is not held by owner "${r.owner}" in this session`);
    session.releasing.add(r.requestId);
    // Keepalives stop renewing it: it is released, or its lease ends, never renewed on and on.
    hold.releasing = true;
    let unmark: (() => void) | undefined;
    try {
      const claim = { name: r.name, sessionId: session.id, owner: r.owner, token: hold.token };
      const releasing = releaseExactlyOnce(this.store, this.resolver, claim, hold.count, () => {
        unmark = session.markInDoubt(holdKey(r.name, r.owner));
      });
      // The next grant of an exclusive lock takes the following token: told after the release was
      // handed to the store, the waiter's edge may prepare that grant (sign its fencing proof) while
      // the store runs it, off the hand-off's serial path.
      const next = hold.count === 1 && !hold.shared ? this.pending.likelyNext(r.name) : undefined;
      if (next) next.session.tell.expectGrant(next.requestId, r.name, hold.token + 1n, next.owner);
      const outcome = await releasing;
      hold.releasing = false;
      if (outcome.kind !== "released") {
        this.ledger.forget(session, hold);
        throw new ServerError("not-held", `release: the lease of "${r.name}" had already ended`);
      }
      hold.count = outcome.holdCount;
      if (hold.count === 0) this.ledger.forget(session, hold);
      session.tell.released(r.requestId, r.name, outcome.holdCount);
    } finally {
      unmark?.();
      session.releasing.delete(r.requestId);
    }
  }

  /** Withdraws a pending acquire; a cancel for a request no longer pending is ignored. */
  cancel(session: Session, requestId: string): void {
    const p = session.pending.get(requestId);
    if (p) this.giveUp(p, { answer: new ServerError("cancelled", `acquire: cancelled by the client`) });
  }

  /**
   * Ends every pending acquire of a session whose stream is gone. `abandon` withdraws the waiters
   * still attached to this coordinator (a raced grant is left for a resume to claim); `cancel`
   * withdraws them and releases raced grants (Close); `detach` leaves the store untouched (the
   * session moves to another stream: drain or takeover).
   */
  dropPending(session: Session, how: "abandon" | "cancel" | "detach"): void {
    for (const p of [...session.pending.values()]) {
      if (how === "detach") this.pending.finish(p);
      else this.giveUp(p, { answer: new ServerError("cancelled", "acquire: the session ended"), how });
    }
  }

  /** Asks for a re-check of `name` at once (a renewal found a waiter no longer queued). */
  recheckSoon(name: string): void {
    this.rechecks.schedule(name, 0);
    this.sets.recheckSoon(name);
  }

  grant(g: Grant): void {
    const p = this.pending.get(g.sessionId, g.requestId);
    if (!p || p.done) return; // withdrawn meanwhile: the withdrawal releases the raced grant
    this.pending.finish(p);
    this.hold(p, g.token, 1);
    if (g.freedAtMs !== undefined) this.metrics.handedOff(performance.now() - g.freedAtMs);
  }

  resync(): void {
    this.rechecks.all();
    this.sets.resync();
  }

  /** Stops every timer (coordinator shutdown). */
  stop(): void {
    this.rechecks.clear();
    this.sets.stop();
    this.resolver.stop();
    this.heldWaits.stop();
  }

  private giveUp(p: Pending, { answer, how = "cancel", retryUnchanged = false }: GiveUp): boolean {
    if (p.done) return false; // answered already
    this.pending.finish(p);
    this.ledger.acquireFailed(answer === "by-caller" ? "timeout" : answer.reason); // "by-caller": only a timed-out wait
    // Issued before the answer is sent, so a new acquire by the same owner queues behind it in Redis.
    // An unknown outcome is retried (a raced grant is let go); meanwhile the owner may not re-acquire.
    let unmark: (() => void) | undefined;
    if (retryUnchanged) unmark = p.session.markInDoubt(holdKey(p.name, p.owner));
    this.resolver
      .resolve(() => this.store.withdraw(claimOf(p), how), {
        retryUnchanged,
        onUnknown: () => (unmark ??= p.session.markInDoubt(holdKey(p.name, p.owner))),
      })
      .catch((err) => this.log.warn({ err, name: p.name }, "withdraw failed; the entry expires with its lease"))
      .finally(() => unmark?.());
    if (answer !== "by-caller") p.session.tell.failed(p.requestId, p.name, answer);
    return true;
  }

  private hold(p: Pending, token: bigint, count: number): void {
    const hold = this.ledger.held(p.session, p.name, p.owner, token, count);
    if (p.mode === "shared") hold.shared = true;
    this.heldWaits.granted(p.session, p.owner);
    p.session.tell.granted(p.requestId, p.name, token, count, p.owner);
    if (count === 1) this.ledger.granted(hold, p.queued ? p.receivedAtMs : undefined);
  }
}
