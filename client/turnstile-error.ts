import type { Failed } from "../gen/ts/turnstile/v1/turnstile.js";
import { wholeMsFromDuration } from "../wire/duration.js";
import { type FailureReasonName, failureReasonName } from "../wire/failure-reasons.js";

/**
 * The closed set of reasons a Turnstile operation can fail with. Per-request server failures map
 * one to one; 'session-ended', 'lost' and 'connection' come from the client and the stream;
 * 'fencing' is a refused fencing proof (FencingProofError, docs/fencing.md).
 */
export type TurnstileErrorReason = FailureReasonName | "session-ended" | "lost" | "connection" | "fencing";

/** A holder an acquire waited behind: who it is and how long it had held the lock. */
export interface Blocker {
  sessionId: string;
  owner: string;
  /** The holding session's client name ("" when unknown). */
  clientName: string;
  /** The holding session's authenticated identity, where the coordinator knows it ("" otherwise). */
  identity: string;
  /** How long it had held the lock when the wait ran out, on the store's clock. */
  heldForMs: number;
  fencingToken: bigint;
  /** The lock it holds: set where an error names blockers of several locks (acquireAll), else "". */
  name: string;
}

/**
 * One waiter of a deadlock cycle: (session, owner) waits for `name`, which the next step's
 * (session, owner) holds; the last step's lock is held by the first step's (docs/deadlocks.md).
 */
export interface DeadlockStep {
  sessionId: string;
  owner: string;
  /** The waiting session's client name ("" when unknown). */
  clientName: string;
  requestId: string;
  /** The lock it waits for. */
  name: string;
}

/**
 * The one error class of the Turnstile client: `reason` says what went wrong, `message` says it
 * for humans, `cause` carries the underlying gRPC error when there is one. A `timeout` of an
 * acquire names in `blockedBy` the holders it waited behind; a `deadlock` names in `deadlockCycle`
 * the cycle it was chosen from, starting with this acquire.
 */
export class TurnstileError extends Error {
  readonly reason: TurnstileErrorReason;
  readonly blockedBy: readonly Blocker[];
  readonly deadlockCycle: readonly DeadlockStep[];

  constructor(
    reason: TurnstileErrorReason,
    message: string,
    options?: { cause?: unknown; blockedBy?: readonly Blocker[]; deadlockCycle?: readonly DeadlockStep[] },
  ) {
    super(message, options);
    this.name = "TurnstileError";
    this.reason = reason;
    this.blockedBy = options?.blockedBy ?? [];
    this.deadlockCycle = options?.deadlockCycle ?? [];
  }
}

/**
 * Builds the error a request rejects with from the server's `failed` answer: the reason via
 * `failureReasonName` (unknown values from a newer server become 'internal'), the lock name and server message for humans, the answer as `cause`.
 */
export function errorFromFailed(failed: Failed): TurnstileError {
  const reason = failureReasonName(failed.reason);
  const subject = failed.name === "" ? "" : `"${failed.name}": `;
  const blockedBy = failed.blockedBy.map((b) => ({
    sessionId: b.sessionId,
    owner: b.owner,
    clientName: b.clientName,
    identity: b.identity,
    heldForMs: b.heldFor ? wholeMsFromDuration(b.heldFor) : 0,
    fencingToken: b.fencingToken,
    name: b.name,
  }));
  const deadlockCycle = failed.deadlockCycle.map(({ sessionId, owner, clientName, requestId, name }) => ({
    sessionId,
    owner,
    clientName,
    requestId,
    name,
  }));
  const message = `${subject}${failed.message || reason}`;
  return new TurnstileError(reason, message, { cause: failed, blockedBy, deadlockCycle });
}
