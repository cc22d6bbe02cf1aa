import type { DeadlockStep, HeldLock, SessionResponse } from "../../../gen/ts/turnstile/v1/turnstile.js";
import { LostReason } from "../../../gen/ts/turnstile/v1/turnstile.js";
import { durationFromMs } from "../../../wire/duration.js";
import type { ServerError } from "../../engine/server-error.js";
import type { LossReason, SessionSink, SetGrant } from "../../engine/sessions/session-sink.js";
import type { HeldWait } from "../../store/wait-registry.js";
import { failureReasonOf } from "./failure-codes.js";
import { blockerOf } from "./lock-state-replies.js";

/** Signs the fencing proof of one grant to this stream's session (see FencingSigner). */
export type GrantProof = (name: string, token: bigint, owner: string) => string;

const LOST: Record<LossReason, LostReason> = {
  expired: LostReason.LOST_REASON_EXPIRED,
  revoked: LostReason.LOST_REASON_REVOKED,
  "session-ended": LostReason.LOST_REASON_SESSION_ENDED,
};

/**
 * Renders what the engine tells a session into the server-to-client messages of one stream, so the
 * wire shape lives in one place; Opened and KeepAliveAck, the stream's own answers, are built here too.
 * Each call writes exactly one message.
 */
export class SessionReplies implements SessionSink {
  /**
   * `proof` signs a grant's fencing proof (`serve --fencing-key`); absent, grants carry none (""). It
   * is asked once per lock granted, re-entries included.
   */
  constructor(
    private readonly write: (response: SessionResponse) => void,
    private readonly proof?: GrantProof,
  ) {}

  /** Opened for a new session, or (with `held`) for a resumed one. */
  opened(sessionId: string, resumeSecret: string, ttlMs: number, held?: HeldLock[]): void {
    const resumed = held !== undefined;
    const opened = { sessionId, resumeSecret, ttl: durationFromMs(ttlMs), resumed, held: held ?? [] };
    this.write({ kind: { $case: "opened", opened } });
  }

  keepAliveAck(seq: bigint, ttlMs: number): void {
    this.write({ kind: { $case: "keepAliveAck", keepAliveAck: { seq, ttl: durationFromMs(ttlMs) } } });
  }

  granted(requestId: string, name: string, fencingToken: bigint, holdCount: number, owner: string): void {
    const fencingProof = this.proof?.(name, fencingToken, owner) ?? "";
    this.write({ kind: { $case: "acquired", acquired: { requestId, name, fencingToken, holdCount, fencingProof } } });
  }

  grantedSet(requestId: string, grants: readonly SetGrant[], owner: string): void {
    const locks = grants.map((g) => ({
      requestId,
      name: g.name,
      fencingToken: g.token,
      holdCount: 1,
      fencingProof: this.proof?.(g.name, g.token, owner) ?? "",
    }));
    this.write({ kind: { $case: "acquiredAll", acquiredAll: { requestId, locks } } });
  }

  queued(requestId: string, name: string, position: number): void {
    this.write({ kind: { $case: "queued", queued: { requestId, name, position } } });
  }

  released(requestId: string, name: string, holdCount: number): void {
    this.write({ kind: { $case: "released", released: { requestId, name, holdCount } } });
  }

  proclaimed(requestId: string, name: string): void {
    this.write({ kind: { $case: "proclaimed", proclaimed: { requestId, name } } });
  }

  lost(name: string, owner: string, fencingToken: bigint, reason: LossReason): void {
    this.write({ kind: { $case: "lost", lost: { name, owner, fencingToken, reason: LOST[reason] } } });
  }

  transferred(requestId: string, name: string, toSessionId: string, toOwner: string, fencingToken: bigint): void {
    const transferred = { requestId, name, toSessionId, toOwner, fencingToken };
    this.write({ kind: { $case: "transferred", transferred } });
  }

  releaseRequestSent(requestId: string, name: string, holders: number): void {
    this.write({ kind: { $case: "releaseRequestSent", releaseRequestSent: { requestId, name, holders } } });
  }

  releaseRequested(name: string, owner: string, requester: string, reason: string): void {
    this.write({ kind: { $case: "releaseRequested", releaseRequested: { name, owner, requester, reason } } });
  }

  /** Failed, with the holders a timed-out acquire waited behind and a deadlock victim's cycle. */
  failed(requestId: string, name: string, err: ServerError): void {
    const evidence = err.evidence;
    const failed = {
      requestId,
      name,
      reason: failureReasonOf(err),
      message: err.message,
      blockedBy: evidence?.blockedBy?.map((b) => ({ ...blockerOf(b.holder), name: b.name })) ?? [],
      deadlockCycle: evidence?.deadlockCycle ? deadlockSteps(evidence.deadlockCycle) : [],
    };
    this.write({ kind: { $case: "failed", failed } });
  }
}

/** The cycle as the wire's Failed.deadlock_cycle carries it, starting with the victim. */
function deadlockSteps(cycle: readonly HeldWait[]): DeadlockStep[] {
  return cycle.map((w) => ({
    sessionId: w.sessionId,
    owner: w.owner,
    clientName: w.clientName,
    requestId: w.requestId,
    name: w.name,
  }));
}
