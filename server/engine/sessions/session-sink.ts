import type { ServerError } from "../server-error.js";

/** Why a session lost a hold without releasing it. */
export type LossReason = "expired" | "revoked" | "session-ended";

/** One hold of a granted AcquireAll set. */
export interface SetGrant {
  name: string;
  token: bigint;
}

/**
 * What the engine tells a session's client, one call per answer or event; the edge renders each
 * call into one message on the session's stream (server/edge/replies/session-replies.ts).
 */
export interface SessionSink {
  /** Acquire `requestId` holds `name` with `token`, `holdCount` times, as `owner`. */
  granted(requestId: string, name: string, token: bigint, holdCount: number, owner: string): void;
  /**
   * A hint, never an answer: queued acquire `requestId` is likely granted `name` with `token` next (the
   * hold ahead of it is being released), so a grant's message may be prepared before the store answers.
   */
  expectGrant(requestId: string, name: string, token: bigint, owner: string): void;
  /** AcquireAll `requestId` holds every lock of `locks`, each once, as `owner`. */
  grantedSet(requestId: string, locks: readonly SetGrant[], owner: string): void;
  /** Acquire (or AcquireAll) `requestId` waits at `position` in the queue of `name`. */
  queued(requestId: string, name: string, position: number): void;
  /** Release `requestId` let go of one count of `name`; `holdCount` are left. */
  released(requestId: string, name: string, holdCount: number): void;
  /** Proclaim `requestId` replaced the value of the hold of `name`. */
  proclaimed(requestId: string, name: string): void;
  /** Request `requestId` failed with `error` (its evidence names the blockers or the deadlock cycle). */
  failed(requestId: string, name: string, error: ServerError): void;
  /** The hold of (`name`, `owner`) with `token` ended without a release. */
  lost(name: string, owner: string, token: bigint, reason: LossReason): void;
  /** Transfer `requestId` handed `name` to (`toSessionId`, `toOwner`), who holds it with `token`. */
  transferred(requestId: string, name: string, toSessionId: string, toOwner: string, token: bigint): void;
  /** RequestRelease `requestId` asked the `holders` holders of `name` to let go. */
  releaseRequestSent(requestId: string, name: string, holders: number): void;
  /** `requester` asks the hold of (`name`, `owner`) to let go, for `reason`. */
  releaseRequested(name: string, owner: string, requester: string, reason: string): void;
}

/** A sink that drops everything: what a session whose stream has ended is told through. */
export const SILENT_SINK: SessionSink = {
  granted() {},
  expectGrant() {},
  grantedSet() {},
  queued() {},
  released() {},
  proclaimed() {},
  failed() {},
  lost() {},
  transferred() {},
  releaseRequestSent() {},
  releaseRequested() {},
};
