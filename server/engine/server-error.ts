import type { Logger } from "pino";
import type { HolderState } from "../store/store.js";
import { StoreUnacknowledgedError } from "../store/store-unacknowledged-error.js";
import { StoreUnavailableError } from "../store/store-unavailable-error.js";
import type { HeldWait } from "../store/wait-registry.js";

/**
 * The closed set of reasons a request or a session can fail for on the server. The first thirteen
 * and `not-found` are the per-request reasons of docs/protocol.md; the edge maps every one to its wire reason and
 * gRPC status (server/edge/replies/failure-codes.ts).
 */
export type ServerErrorReason =
  | "invalid-argument"
  | "timeout"
  | "cancelled"
  | "not-held"
  | "duplicate-request"
  | "limit"
  | "conflict"
  | "unavailable"
  | "internal"
  | "busy"
  | "expired"
  | "permission-denied"
  | "deadlock"
  | "failed-precondition"
  | "resource-exhausted"
  | "not-found"
  | "unauthenticated";

/** A holder that a failed acquire waited behind, on lock `name` ("" when the acquire names one lock). */
export interface Blocking {
  name: string;
  holder: HolderState;
}

/** What a failure names besides its message: whom a timed-out acquire waited behind, or a deadlock's cycle. */
export interface FailureEvidence {
  blockedBy?: readonly Blocking[];
  /** The cycle a DEADLOCK victim was part of, starting with the victim's own wait. */
  deadlockCycle?: readonly HeldWait[];
}

/**
 * The one error class of the server. Its message is meant for the client (it names the field
 * and the limit); anything that is not a ServerError is turned into `internal` by `toServerError`
 * with the original logged, never sent.
 */
export class ServerError extends Error {
  constructor(
    readonly reason: ServerErrorReason,
    message: string,
    readonly evidence?: FailureEvidence,
  ) {
    super(message);
    this.name = "ServerError";
  }
}

/**
 * A ServerError as is; an unreachable store or an unacknowledged write (whose message names the
 * replica count) as `unavailable`; anything else logged, as `internal`.
 */
export function toServerError(err: unknown, context: string, log: Logger): ServerError {
  if (err instanceof ServerError) return err;
  if (err instanceof StoreUnacknowledgedError) return new ServerError("unavailable", err.message);
  if (err instanceof StoreUnavailableError) {
    // Only said where it is known: a command that never left the coordinator changed nothing.
    if (err.outcome === "unchanged")
      return new ServerError("unavailable", "store unavailable: nothing was changed, retry later");
    return new ServerError(
      "unavailable",
      "store did not answer in time: the outcome is unknown, check before retrying",
    );
  }
  log.error({ err, context }, "internal error");
  return new ServerError("internal", "internal error (logged on the server)");
}
