import { FailureReason } from "../gen/ts/turnstile/v1/turnstile.js";

/**
 * The reasons a per-request `failed` answer can carry, by name: one to one with the wire's
 * FailureReason values. The server's ServerErrorReason and the client's TurnstileErrorReason both
 * extend this set with their own (stream-level, or client-side) reasons.
 */
export type FailureReasonName =
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
  | "not-found";

/** The wire value of each failure reason name. */
export const FAILURE_REASONS: Readonly<Record<FailureReasonName, FailureReason>> = {
  "invalid-argument": FailureReason.FAILURE_REASON_INVALID_ARGUMENT,
  timeout: FailureReason.FAILURE_REASON_TIMEOUT,
  cancelled: FailureReason.FAILURE_REASON_CANCELLED,
  "not-held": FailureReason.FAILURE_REASON_NOT_HELD,
  "duplicate-request": FailureReason.FAILURE_REASON_DUPLICATE_REQUEST,
  limit: FailureReason.FAILURE_REASON_LIMIT,
  conflict: FailureReason.FAILURE_REASON_CONFLICT,
  unavailable: FailureReason.FAILURE_REASON_UNAVAILABLE,
  internal: FailureReason.FAILURE_REASON_INTERNAL,
  busy: FailureReason.FAILURE_REASON_BUSY,
  expired: FailureReason.FAILURE_REASON_EXPIRED,
  "permission-denied": FailureReason.FAILURE_REASON_PERMISSION_DENIED,
  deadlock: FailureReason.FAILURE_REASON_DEADLOCK,
  "not-found": FailureReason.FAILURE_REASON_NOT_FOUND,
};

const NAMES = new Map<FailureReason, FailureReasonName>(
  Object.entries(FAILURE_REASONS).map(([name, value]) => [value, name as FailureReasonName]),
);

/**
 * The name of a wire FailureReason. Unspecified or unknown values (from a newer server) become
 * 'internal', so the set stays closed.
 */
export function failureReasonName(reason: FailureReason): FailureReasonName {
  return NAMES.get(reason) ?? "internal";
}
