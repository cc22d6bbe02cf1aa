import { type Failed, FailureReason } from "../gen/ts/turnstile/v1/turnstile.js";

/**
 * The closed set of reasons a Turnstile operation can fail with. Per-request server failures map
 * one to one; 'session-ended', 'lost' and 'connection' come from the client and the stream.
 */
export type TurnstileErrorReason =
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
  | "session-ended"
  | "lost"
  | "connection";

/**
 * The one error class of the Turnstile client: `reason` says what went wrong, `message` says it
 * for humans, `cause` carries the underlying gRPC error when there is one.
 */
export class TurnstileError extends Error {
  readonly reason: TurnstileErrorReason;

  constructor(reason: TurnstileErrorReason, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "TurnstileError";
    this.reason = reason;
  }
}

/**
 * Translates a server `FailureReason` into the client's error reason. Unspecified or unknown
 * values (a newer server) become 'internal' so the reason set stays closed.
 */
export function errorReasonFromFailure(reason: FailureReason): TurnstileErrorReason {
  switch (reason) {
    case FailureReason.FAILURE_REASON_INVALID_ARGUMENT:
      return "invalid-argument";
    case FailureReason.FAILURE_REASON_TIMEOUT:
      return "timeout";
    case FailureReason.FAILURE_REASON_CANCELLED:
      return "cancelled";
    case FailureReason.FAILURE_REASON_NOT_HELD:
      return "not-held";
    case FailureReason.FAILURE_REASON_DUPLICATE_REQUEST:
      return "duplicate-request";
    case FailureReason.FAILURE_REASON_LIMIT:
      return "limit";
    case FailureReason.FAILURE_REASON_CONFLICT:
      return "conflict";
    case FailureReason.FAILURE_REASON_UNAVAILABLE:
      return "unavailable";
    case FailureReason.FAILURE_REASON_BUSY:
      return "busy";
    case FailureReason.FAILURE_REASON_EXPIRED:
      return "expired";
    case FailureReason.FAILURE_REASON_PERMISSION_DENIED:
      return "permission-denied";
    default:
      return "internal";
  }
}

/**
 * Builds the error a request rejects with from the server's `failed` answer: the reason via
 * `errorReasonFromFailure`, the lock name and server message for humans, the answer as `cause`.
 */
export function errorFromFailed(failed: Failed): TurnstileError {
  const reason = errorReasonFromFailure(failed.reason);
  const subject = failed.name === "" ? "" : `"${failed.name}": `;
  return new TurnstileError(reason, `${subject}${failed.message || reason}`, { cause: failed });
}
