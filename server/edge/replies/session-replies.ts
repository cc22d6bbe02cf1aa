import { type HeldLock, LostReason, type SessionResponse } from "../../../gen/ts/turnstile/v1/turnstile.js";
import { durationFromMs } from "../../../wire/duration.js";
import type { ServerError } from "../../engine/server-error.js";
import type { Hold, Pending } from "../../engine/sessions/session.js";
import type { HolderState } from "../../store/store.js";
import { blockerOf } from "./lock-state-replies.js";

const LOST: Record<"expired" | "revoked" | "session-ended", LostReason> = {
  expired: LostReason.LOST_REASON_EXPIRED,
  revoked: LostReason.LOST_REASON_REVOKED,
  "session-ended": LostReason.LOST_REASON_SESSION_ENDED,
};

/** Builders of every server-to-client message, so the wire shape lives in one place. */
export const SessionReplies = {
  /** Opened for a new session, or (with `held`) for a resumed one. */
  opened(sessionId: string, resumeSecret: string, ttlMs: number, held?: HeldLock[]): SessionResponse {
    const resumed = held !== undefined;
    const opened = { sessionId, resumeSecret, ttl: durationFromMs(ttlMs), resumed, held: held ?? [] };
    return { kind: { $case: "opened", opened } };
  },
  acquired(requestId: string, name: string, fencingToken: bigint, holdCount: number): SessionResponse {
    return { kind: { $case: "acquired", acquired: { requestId, name, fencingToken, holdCount } } };
  },
  queued(p: Pick<Pending, "requestId" | "name">, position: number): SessionResponse {
    return {
      kind: { $case: "queued", queued: { requestId: p.requestId, name: p.name, position } },
    };
  },
  proclaimed(requestId: string, name: string): SessionResponse {
    return { kind: { $case: "proclaimed", proclaimed: { requestId, name } } };
  },
  released(requestId: string, name: string, holdCount: number): SessionResponse {
    return { kind: { $case: "released", released: { requestId, name, holdCount } } };
  },
  lost(h: Hold, reason: keyof typeof LOST): SessionResponse {
    return {
      kind: {
        $case: "lost",
        lost: { name: h.name, owner: h.owner, fencingToken: h.token, reason: LOST[reason] },
      },
    };
  },
  keepAliveAck(seq: bigint, ttlMs: number): SessionResponse {
    return { kind: { $case: "keepAliveAck", keepAliveAck: { seq, ttl: durationFromMs(ttlMs) } } };
  },
  /** Failed; `blockedBy`: the holders a timed-out acquire waited behind. */
  failed(requestId: string, name: string, err: ServerError, blockedBy: HolderState[] = []): SessionResponse {
    return {
      kind: {
        $case: "failed",
        failed: {
          requestId,
          name,
          reason: err.failureReason,
          message: err.message,
          blockedBy: blockedBy.map(blockerOf),
          deadlockCycle: [],
        },
      },
    };
  },
};
