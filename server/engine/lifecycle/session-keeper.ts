import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Logger } from "pino";
import { newSessionId } from "../../store/session-id.js";
import type { Store } from "../../store/store.js";
import { StoreOutageLog } from "../../store/store-outage-log.js";
import { type LockMetrics, NO_LOCK_METRICS } from "../lock-metrics.js";
import type { ResumeRequest, ValidOpen } from "../lock-requests.js";
import type { LockTable } from "../locks/lock-table.js";
import { ServerError } from "../server-error.js";
import { holdKey, Session } from "../sessions/session.js";
import type { SessionSink } from "../sessions/session-sink.js";
import { type Renewal, RenewalPlans } from "./renewal-plans.js";

/** A hold a resumed session still has, as the store renewed it. */
export interface ResumedHold {
  name: string;
  owner: string;
  fencingToken: bigint;
  holdCount: number;
}

/** The log line of a session record written again after it had expired (docs/operations.md). */
export const RECORD_REWRITTEN =
  "session record had expired (the store was out longer than the TTL): re-written, the session can be resumed again";

/**
 * The lifecycle of sessions in the store: their records (so any coordinator can resume them),
 * keepalive renewals, resume and the end of a stream. Lock operations themselves stay in LockTable;
 * failures of the store surface as StoreUnavailableError, session faults as ServerError.
 */
export class SessionKeeper {
  private readonly plans = new RenewalPlans();

  constructor(
    private readonly store: Store,
    private readonly table: LockTable,
    private readonly log: Logger,
    private readonly metrics: LockMetrics = NO_LOCK_METRICS,
  ) {}

  /**
   * Starts a new session owned by `identity` ("" when security is off) and stores its record;
   * resolves with the session and its resume secret.
   */
  async open(open: ValidOpen, sink: SessionSink, identity = ""): Promise<{ session: Session; secret: string }> {
    const session = new Session(newSessionId(), open.clientName, open.ttlMs, sink);
    const secret = randomBytes(24).toString("base64url");
    session.record = {
      sessionId: session.id,
      secretHash: sha256(secret),
      ttlMs: open.ttlMs,
      clientName: open.clientName,
      ...(identity && { identity }),
    };
    await this.store.saveSession(session.record);
    return { session, secret };
  }

  /**
   * Resumes a session: checks the record and the secret, renews the holds the client claims and
   * resolves with those still held (the store's token and count). Rejects with `not-found` for an
   * unknown or expired session, `unauthenticated` for a wrong secret and `permission-denied` when
   * `identity` is not the one that opened the session.
   */
  async resume(
    open: ResumeRequest,
    sink: SessionSink,
    identity = "",
  ): Promise<{ session: Session; held: ResumedHold[] }> {
    const record = await this.store.loadSession(open.resumeSessionId);
    if (!record)
      throw new ServerError(
        "not-found",
        `open.resume_session_id: session "${open.resumeSessionId}" is unknown or expired`,
      );
    const expected = Buffer.from(record.secretHash, "hex");
    if (!timingSafeEqual(Buffer.from(sha256(open.resumeSecret), "hex"), expected)) {
      throw new ServerError("unauthenticated", "open.resume_secret: does not match the session");
    }
    if ((record.identity ?? "") !== identity) {
      throw new ServerError(
        "permission-denied",
        `open.resume_session_id: session "${open.resumeSessionId}" was opened by another identity than "${identity}"`,
      );
    }
    const session = new Session(record.sessionId, record.clientName, record.ttlMs, sink);
    session.record = record;
    const byName = new Map<string, string[]>();
    for (const h of open.held) byName.set(h.name, [...(byName.get(h.name) ?? []), h.owner]);
    if (byName.size > 0) {
      const locks = [...byName].map(([name, owners]) => ({ name, owners, waiters: [] }));
      const renewed = await this.store.renew({
        sessionId: session.id,
        ttlMs: session.ttlMs,
        locks,
        touchSession: true,
      });
      locks.forEach(({ name, owners }, l) => {
        renewed.locks[l].holds.forEach((h, i) => {
          if (h) session.held.set(holdKey(name, owners[i]), { name, owner: owners[i], token: h.token, count: h.count });
        });
      });
      if (renewed.touchError) throw renewed.touchError.reason;
      await this.recordTouched(session, renewed.sessionAlive !== false);
    } else await this.touch(session);
    const held = [...session.held.values()].map((h) => ({
      name: h.name,
      owner: h.owner,
      fencingToken: h.token,
      holdCount: h.count,
    }));
    return { session, held };
  }

  /**
   * The keepalive: renews every hold and queue entry of the session and its record (in one store call).
   * Holds found expired are reported Lost; resolves true when everything was renewed (the ack may be sent).
   */
  async renew(session: Session): Promise<boolean> {
    const started = performance.now();
    const work = this.plans.of(session);
    // With locks, the record's touch rides in their renewal (on one Redis, inside its script); alone without.
    let failed: { reason: unknown } | undefined;
    try {
      await (work.locks.length > 0 ? this.renewLocks(session, work) : this.touch(session));
    } catch (reason) {
      failed = { reason };
    }
    if (work.locks.length > 0) this.metrics.renewed(performance.now() - started, !failed);
    const outage = this.table.outage;
    if (!failed) outage.succeeded();
    // A store outage is logged once however many renewals fail (docs/operations.md); anything else each time.
    else if (StoreOutageLog.isOutage(failed.reason))
      outage.failed("keepalive renewal", failed.reason, { session: session.id });
    else this.log.warn({ err: failed.reason, session: session.id }, "keepalive renewal failed");
    return !failed;
  }

  /**
   * Ends a session's stream. `close`: everything is released and the record deleted. `broken`:
   * pending acquires are abandoned, holds stay until their lease ends (the client may resume).
   * `detach`: the store is left untouched because the session continues on another stream.
   */
  async end(session: Session, how: "close" | "broken" | "detach"): Promise<void> {
    const drop = how === "close" ? "cancel" : how === "broken" ? "abandon" : "detach";
    this.table.dropPending(session, drop);
    this.table.sets.dropPending(session, drop);
    const holds = [...session.held.values()];
    session.held.clear();
    // Its holds now lapse with their lease unless the client resumes the session in time.
    if (how === "broken") for (const _ of holds) this.metrics.holdLost("session_lost");
    if (how !== "close") return;
    for (const h of holds) this.table.ledger.ended(h);
    await Promise.all(
      holds.map((h) =>
        this.store.release({ name: h.name, sessionId: session.id, owner: h.owner, token: h.token }, true),
      ),
    );
    await this.store.deleteSession(session.id);
  }

  /**
   * Renews the session's holds and queue entries on every lock of `work`, and its record, and acts on
   * what was lost.
   */
  private async renewLocks(session: Session, { locks, holds }: Renewal): Promise<void> {
    const renewed = await this.store.renew({ sessionId: session.id, ttlMs: session.ttlMs, locks, touchSession: true });
    locks.forEach(({ name }, l) => {
      const outcome = renewed.locks[l];
      holds[l].forEach((h, i) => {
        if (outcome.holds[i] || session.held.get(holdKey(h.name, h.owner)) !== h) return;
        this.table.ledger.forget(session, h);
        this.metrics.holdLost("expired");
        session.tell.lost(h.name, h.owner, h.token, "expired");
      });
      // A waiter no longer queued was granted (the grant is on its way) or expired: ask.
      if (outcome.waiters.some((w) => w !== "queued")) this.table.recheckSoon(name);
    });
    // The locks' answers are acted on above even when the record's own touch failed (Cluster): then the
    // keepalive fails as a whole, as it would have without them.
    if (renewed.touchError) throw renewed.touchError.reason;
    if (renewed.sessionAlive === false) await this.recordTouched(session, false);
  }

  /** Touches the session's record on its own (a session with no lock to renew it with). */
  private async touch(session: Session): Promise<void> {
    await this.recordTouched(session, await this.store.touchSession(session.id, session.ttlMs));
  }

  /** After a touch of the session's record: writes it again when it had lapsed (`alive` false). */
  private async recordTouched(session: Session, alive: boolean): Promise<void> {
    if (alive) return;
    // The record lapsed (the store was out longer than the TTL) while the stream lived on: the
    // session is alive, so it is made resumable again. Once per lapse, not once per keepalive.
    if (session.ended || !session.record) return;
    await this.store.saveSession(session.record);
    this.log.info({ session: session.id }, RECORD_REWRITTEN);
  }
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
