import { status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { FailureReason } from "../../gen/ts/turnstile/v1/turnstile.js";
import { FAILURE_REASONS, type FailureReasonName } from "../../wire/failure-reasons.js";
import { StoreUnacknowledgedError } from "../store/store-unacknowledged-error.js";
import { StoreUnavailableError } from "../store/store-unavailable-error.js";

/** The closed set of reasons a request or a session can fail for on the server. */
export type ServerErrorReason =
  | FailureReasonName
  | "failed-precondition"
  | "resource-exhausted"
  | "not-found"
  | "unauthenticated";

// The stream-level reasons travel in a per-request `failed` as the nearest wire reason.
const FAILURE: Record<ServerErrorReason, FailureReason> = {
  ...FAILURE_REASONS,
  "failed-precondition": FailureReason.FAILURE_REASON_INVALID_ARGUMENT,
  "resource-exhausted": FailureReason.FAILURE_REASON_LIMIT,
  "not-found": FailureReason.FAILURE_REASON_INVALID_ARGUMENT,
  unauthenticated: FailureReason.FAILURE_REASON_INVALID_ARGUMENT,
};

const GRPC_STATUS: Record<ServerErrorReason, status> = {
  "invalid-argument": status.INVALID_ARGUMENT,
  timeout: status.DEADLINE_EXCEEDED,
  cancelled: status.CANCELLED,
  "not-held": status.FAILED_PRECONDITION,
  "duplicate-request": status.ALREADY_EXISTS,
  limit: status.RESOURCE_EXHAUSTED,
  conflict: status.FAILED_PRECONDITION,
  unavailable: status.UNAVAILABLE,
  internal: status.INTERNAL,
  busy: status.UNAVAILABLE,
  expired: status.DEADLINE_EXCEEDED,
  "failed-precondition": status.FAILED_PRECONDITION,
  "resource-exhausted": status.RESOURCE_EXHAUSTED,
  "not-found": status.NOT_FOUND,
  unauthenticated: status.UNAUTHENTICATED,
  "permission-denied": status.PERMISSION_DENIED,
  deadlock: status.ABORTED,
};

/**
 * The one error class of the server. Its message is meant for the client (it names the field
 * and the limit); anything that is not a ServerError is turned into `internal` by `toServerError`
 * with the original logged, never sent.
 */
export class ServerError extends Error {
  constructor(
    readonly reason: ServerErrorReason,
    message: string,
  ) {
    super(message);
    this.name = "ServerError";
  }

  /** The per-request failure reason sent in `Failed`. */
  get failureReason(): FailureReason {
    return FAILURE[this.reason];
  }

  /** The gRPC status used when this error ends a whole stream. */
  get grpcStatus(): status {
    return GRPC_STATUS[this.reason];
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
