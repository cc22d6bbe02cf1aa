import { status } from "@grpc/grpc-js";
import { FailureReason } from "../../../gen/ts/turnstile/v1/turnstile.js";
import { FAILURE_REASONS } from "../../../wire/failure-reasons.js";
import type { ServerError, ServerErrorReason } from "../../engine/server-error.js";

// The stream-level reasons travel in a per-request `failed` as the nearest wire reason.
const FAILURE: Record<ServerErrorReason, FailureReason> = {
  ...FAILURE_REASONS,
  "failed-precondition": FailureReason.FAILURE_REASON_INVALID_ARGUMENT,
  "resource-exhausted": FailureReason.FAILURE_REASON_LIMIT,
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

/** The per-request failure reason `err` is sent with in `Failed`. */
export function failureReasonOf(err: ServerError): FailureReason {
  return FAILURE[err.reason];
}

/** The gRPC status used when `err` ends a whole stream or call. */
export function grpcStatusOf(err: ServerError): status {
  return GRPC_STATUS[err.reason];
}
