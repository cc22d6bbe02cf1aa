import { type StatusObject, status } from "@grpc/grpc-js";
import { TurnstileError } from "../turnstile-error.js";

/**
 * Turns the final gRPC status of a session stream into the error that pending requests reject
 * with. Transport trouble becomes 'connection'; an OK or unknown end becomes 'session-ended'.
 */
export function errorFromStatus(final: Pick<StatusObject, "code" | "details"> | undefined): TurnstileError {
  if (final === undefined) {
    return new TurnstileError("session-ended", "session stream ended without a status");
  }
  const detail = `session stream ended: ${status[final.code] ?? final.code} ${readableDetails(final.details)}`;
  const options = { cause: final };
  switch (final.code) {
    case status.UNAVAILABLE:
    case status.DEADLINE_EXCEEDED:
    case status.CANCELLED:
    case status.UNAUTHENTICATED:
      return new TurnstileError("connection", detail, options);
    case status.PERMISSION_DENIED:
      return new TurnstileError("permission-denied", detail, options);
    case status.INVALID_ARGUMENT:
      return new TurnstileError("invalid-argument", detail, options);
    case status.RESOURCE_EXHAUSTED:
      return new TurnstileError("limit", detail, options);
    case status.INTERNAL:
    case status.UNKNOWN:
    case status.DATA_LOSS:
    case status.UNIMPLEMENTED:
      return new TurnstileError("internal", detail, options);
    default:
      return new TurnstileError("session-ended", detail, options);
  }
}

/**
 * A status's details for a message: grpc-js ends connection errors with "Resolution note: " and
 * nothing after it when name resolution had nothing to add; that empty note is dropped.
 */
export function readableDetails(details: string | undefined): string {
  return (details ?? "").replace(/\.?\s*Resolution note:\s*$/, "").trim();
}
