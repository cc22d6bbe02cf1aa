import type { Logger } from "pino";
import type { SessionResponse as Reply } from "../../../gen/ts/turnstile/v1/turnstile.js";
import type { Limits } from "../../config/limits.js";
import { SessionReplies as reply } from "../../edge/replies/session-replies.js";
import type { ValidAcquire, ValidRelease } from "../../edge/request-validator.js";
import { type Metrics, NO_METRICS } from "../../metrics/metrics.js";
import type { AcquireOutcome, Grant, Store, StoreListener } from "../../store/store.js";
import { StoreOutageLog } from "../../store/store-outage-log.js";
import { deadlockAnswer, deadlockError } from "../deadlock/deadlock-error.js";
import { HeldWaits } from "../deadlock/held-waits.js";
import { acquireFailureOf, type HoldLoss } from "../failure-labels.js";
import { settleAcquire } from "../outcomes/acknowledged-acquire.js";
import { releaseExactlyOnce } from "../outcomes/exactly-once-release.js";
import { OutcomeResolver } from "../outcomes/outcome-resolver.js";
import { ServerError, type ServerErrorReason } from "../server-error.js";
import { claimOf, type Hold, holdKey, type Pending, type Session } from "../sessions/session.js";
import { SetAcquires } from "../sets/set-acquires.js";
import { checkAcquirePreconditions } from "./acquire-preconditions.js";
import { acquireRefusal } from "./acquire-refusal.js";
import { LockDelayDefaults } from "./lock-delay-defaults.js";
import { PendingAcquires } from "./pending-acquires.js";
import { RecheckScheduler } from "./recheck-scheduler.js";
import { answerTimeout } from "./wait-blockers.js";

/**
 * How giveUp ends a pending acquire: `answer` is the failure it sends ("by-caller": the caller answers, a TIMEOUT
 * naming the blockers); `how` the store withdrawal; `retryUnchanged` (an unacknowledged acquire) retries the
 * withdrawal even when an attempt changed nothing; `failed` the Failed to send in place of the plain one (DEADLOCK's cycle).
 */
type GiveUp = {
  answer: ServerError | "by-caller";
  how?: "cancel" | "abandon";
  retryUnchanged?: boolean;
  failed?: Reply;
};

/**
 * All lock logic of the coordinator: it turns session requests into store operations, routes
 * grants (pushed by any coordinator) to the waiting session, re-checks a lock when its earliest
 * lease ends, and answers every acquire exactly once. Methods reject with a ServerError for the
 * request; store failures surface as StoreUnavailableError. A store call whose outcome is unknown
 * is resolved (re-run, idempotently) before anything is answered (docs/protocol.md).
 */
export class LockTable implements Pick<StoreListener, "grant" | "resync"> {
  private readonly pending = new PendingAcquires((p) => this.heldWaits.ended(p));
  /** Queued acquires whose (session, owner) holds a lock: registered for deadlock detection. */
  readonly heldWaits: HeldWaits;
  private readonly rechecks = new RecheckScheduler((name) => void this.recheck(name));
  /** Re-runs store calls of unknown outcome until the store answers (shared with SessionKeeper). */
  readonly resolver: OutcomeResolver;
  /** Logs store failures once per outage (shared with SessionKeeper). */
  readonly outage: StoreOutageLog;
  /** AcquireAll requests (docs/multi-lock.md); their session-wide events reach them through this table. */
  readonly sets: SetAcquires;
  /** Timed re-checks run so far: hand-offs by push leave it unchanged. */
  recheckCount = 0;

  constructor(
    private readonly store: Store,
    private readonly limits: Limits,
    private readonly log: Logger,
    private readonly metrics: Metrics = NO_METRICS,
    private readonly lockDelays = new LockDelayDefaults(),
  ) {
    this.outage = new StoreOutageLog(log);
    this.resolver = new OutcomeResolver(this.outage);
    this.heldWaits = new HeldWaits(
      store,
      log,
      (p, d) => this.giveUp(p, { answer: deadlockError(d.cycle), failed: deadlockAnswer(d.cycle) }),
      (s, d) => this.sets.deadlocked(s, d),
    );
    this.sets = new SetAcquires(store, limits, this.resolver, this.outage, log, metrics, this.heldWaits, lockDelays);
  }

  /** Acquires of this coordinator's sessions not answered yet, by session and request id. */
  get waiters(): ReadonlyMap<string, Pending> {
    return this.pending.byId;
  }

  /** Acquires (and AcquireAll sets) of this coordinator's sessions not answered yet. */
  get waiterCount(): number {
    return this.pending.byId.size + this.sets.size;
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
      done: false,
      receivedAtMs: performance.now(),
    };
    this.pending.add(p);
    // When the wait runs out: withdraw silently, then answer TIMEOUT naming the holders it waited behind.
    if (a.waitMs) {
      const waitMs = a.waitMs;
      const timedOut = () => this.giveUp(p, { answer: "by-caller" });
      p.waitTimer = setTimeout(() => timedOut() && answerTimeout(this.store, p, waitMs), waitMs);
    }
    const { name, owner, requestId, mode, limit, value } = a;
    const [sessionId, ttlMs, mayWait] = [session.id, session.ttlMs, a.waitMs !== 0];
    // Absent: the serve default for the name's prefix (0, the usual case, sends the store nothing more).
    const lockDelayMs = a.lockDelayMs ?? this.lockDelays.of(a.name);
    const args = { name, sessionId, owner, requestId, ttlMs, mode, limit, mayWait, value };
    let outcome: AcquireOutcome | ServerError | undefined;
    try {
      // Re-sent acquires are idempotent by (session, request id): an unknown outcome is re-run
      // until the store answers, while the acquire still waits (wait, cancel and stream end apply).
      const run = () => this.store.acquire(lockDelayMs > 0 ? { ...args, lockDelayMs } : args);
      outcome = await settleAcquire(this.resolver, run, () => !p.done, session.held.has(holdKey(a.name, a.owner)));
    } catch (err) {
      if (p.done) return;
      this.pending.finish(p);
      throw err;
    }
    // A WAIT fell short: answer UNAVAILABLE and withdraw the claim until a WAIT acknowledges that.
    if (outcome instanceof ServerError) return void this.giveUp(p, { answer: outcome, retryUnchanged: true });
    if (outcome === undefined) return; // given up meanwhile: its withdrawal settles the claim
    if (p.done) {
      // Given up while the script ran: a fresh grant is released by the withdrawal, but a
      // re-entry is not a grant, so drop the extra hold here.
      if (outcome.kind === "granted" && outcome.holdCount > 1)
        void this.store.release(claimOf(p), false).catch(() => {});
      return;
    }
    if (outcome.kind === "queued") {
      p.queued = true;
      session.send(reply.queued(p, outcome.position));
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
      const outcome = await releaseExactlyOnce(this.store, this.resolver, claim, hold.count, () => {
        unmark = session.beginSettling(holdKey(r.name, r.owner));
      });
      hold.releasing = false;
      if (outcome.kind !== "released") {
        this.forget(session, hold);
        throw new ServerError("not-held", `release: the lease of "${r.name}" had already ended`);
      }
      hold.count = outcome.holdCount;
      if (hold.count === 0) this.forget(session, hold);
      session.send(reply.released(r.requestId, r.name, outcome.holdCount));
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
    for (const name of this.pending.names()) this.rechecks.schedule(name, 0);
    this.sets.resync();
  }

  /** Stops every timer (coordinator shutdown). */
  stop(): void {
    this.rechecks.clear();
    this.sets.stop();
    this.resolver.stop();
    this.heldWaits.stop();
  }

  private async recheck(name: string): Promise<void> {
    const waiting = this.pending.waitingFor(name);
    if (waiting.length === 0) return;
    this.recheckCount++;
    try {
      const outcome = await this.store.check(name, waiting.map(claimOf));
      this.outage.succeeded();
      outcome.statuses.forEach((status, i) => {
        const p = waiting[i];
        if (status.kind === "granted")
          this.grant({ name, sessionId: p.session.id, requestId: p.requestId, token: status.token });
        if (status.kind === "gone" && !p.done) {
          this.pending.finish(p);
          this.acquireFailed("expired");
          const why = "acquire: the queue entry's lease ran out (keepalives did not arrive in time)";
          p.session.send(reply.failed(p.requestId, name, new ServerError("expired", why)));
        }
      });
      if (this.pending.has(name)) this.rechecks.schedule(name, outcome.recheckInMs >= 0 ? outcome.recheckInMs : 1000);
    } catch (err) {
      // In 200 ms: the first re-check after the store is back (a new master named) grants the waiters.
      if (StoreOutageLog.isOutage(err)) this.outage.failed("re-check", err, { name });
      else this.log.warn({ err, name }, "re-check failed; retrying");
      this.rechecks.schedule(name, 200);
    }
  }

  private giveUp(p: Pending, { answer, how = "cancel", retryUnchanged = false, failed }: GiveUp): boolean {
    if (p.done) return false; // answered already
    this.pending.finish(p);
    this.acquireFailed(answer === "by-caller" ? "timeout" : answer.reason); // "by-caller": only a timed-out wait
    // Issued before the answer is sent, so a new acquire by the same owner queues behind it in Redis.
    // An unknown outcome is retried (a raced grant is let go); meanwhile the owner may not re-acquire.
    let unmark: (() => void) | undefined;
    if (retryUnchanged) unmark = p.session.beginSettling(holdKey(p.name, p.owner));
    this.resolver
      .settle(() => this.store.withdraw(claimOf(p), how), {
        retryUnchanged,
        onUnknown: () => (unmark ??= p.session.beginSettling(holdKey(p.name, p.owner))),
      })
      .catch((err) => this.log.warn({ err, name: p.name }, "withdraw failed; the entry expires with its lease"))
      .finally(() => unmark?.());
    if (answer !== "by-caller") p.session.send(failed ?? reply.failed(p.requestId, p.name, answer));
    return true;
  }

  private hold(p: Pending, token: bigint, count: number): void {
    const key = holdKey(p.name, p.owner);
    const hold = p.session.held.get(key) ?? { name: p.name, owner: p.owner, token, count };
    hold.count = count;
    p.session.held.set(key, hold);
    this.heldWaits.granted(p.session, p.owner);
    p.session.send(reply.acquired(p.requestId, p.name, token, count));
    if (count === 1) {
      hold.grantedAtMs = performance.now();
      this.metrics.granted(p.name, p.queued ? hold.grantedAtMs - p.receivedAtMs : undefined);
    }
  }

  /** Forgets a hold this session no longer has (released, expired or lost). */
  forget(session: Session, hold: Hold): void {
    session.held.delete(holdKey(hold.name, hold.owner));
    this.holdEnded(hold);
  }

  /** Counts an acquire of this coordinator's sessions answered Failed for `reason` (the failure metrics). */
  acquireFailed(reason: ServerErrorReason): void {
    this.metrics.acquireFailed(acquireFailureOf(reason));
  }

  /** A hold ended without a release (told Lost, or its stream broke): its hold time and the loss are recorded. */
  holdLost(hold: Hold, reason: HoldLoss): void {
    this.holdEnded(hold);
    this.metrics.holdLost(reason);
  }

  /** Records how long a hold granted here was held, once it has ended (however it ended). */
  holdEnded(hold: Hold): void {
    if (hold.grantedAtMs !== undefined) this.metrics.holdEnded(hold.name, performance.now() - hold.grantedAtMs);
    hold.grantedAtMs = undefined;
  }
}
