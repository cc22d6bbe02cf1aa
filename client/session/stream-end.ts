import { type StatusObject, status } from "@grpc/grpc-js";
import { TurnstileError } from "../turnstile-error.js";

/** The final gRPC status of a session stream, when it had one. */
export type FinalStatus = Pick<StatusObject, "code" | "details">;

/**
 * What the end of a session stream means for the session:
 * - 'retry': the connection broke; reconnect after a backoff delay (to the next address);
 * - 'retry-now': the coordinator is draining; reconnect to the next address at once;
 * - 'expired': the coordinator does not know the session (NOT_FOUND on resume): everything is lost;
 * - 'refused': the resume secret was refused (UNAUTHENTICATED): the session cannot be resumed;
 * - 'fatal': the coordinator rejected the session itself (bad open, limits, takeover): it ends.
 */
export type StreamEndKind = "retry" | "retry-now" | "expired" | "refused" | "fatal";

/** Classifies how a session stream ended (see StreamEndKind); no status counts as a broken connection. */
export function classifyStreamEnd(final: FinalStatus | undefined): StreamEndKind {
  if (final === undefined) return "retry";
  switch (final.code) {
    case status.UNAVAILABLE:
      return /draining/i.test(final.details) ? "retry-now" : "retry";
    case status.NOT_FOUND:
      return "expired";
    case status.UNAUTHENTICATED:
      return "refused";
    case status.INVALID_ARGUMENT:
    case status.RESOURCE_EXHAUSTED:
    case status.FAILED_PRECONDITION:
    case status.PERMISSION_DENIED:
    case status.UNIMPLEMENTED:
    // ABORTED: the session was resumed on another stream by someone else holding its secret.
    case status.ABORTED:
      return "fatal";
    default:
      // OK without our close, CANCELLED, DEADLINE_EXCEEDED, INTERNAL, UNKNOWN: transport trouble.
      return "retry";
  }
}

/** What a session does about the end of its stream. */
export type StreamEndAction =
  | { action: "reconnect"; when: "now" | "backoff" }
  /** A fatal status, or no address answered the first open: the session ends with the stream's error. */
  | { action: "fail" }
  /** The session is gone: unknown on the server, secret refused, or unreachable for a whole lease. */
  | { action: "expire"; why: "expired" | "refused" | "unreachable" };

/** What decides the action besides the status. */
export interface StreamEndContext {
  /** The session was opened once, so the next open resumes it. */
  established: boolean;
  /** First-open attempts that failed so far, this one included. */
  failedOpens: number;
  addressCount: number;
  /** The stream that ended had answered `opened`. */
  wasOpened: boolean;
  /** Now, the send time of the newest confirmed renewal of the session, and its TTL (monotonic ms). */
  nowMs: number;
  renewedAtMs: number;
  ttlMs: number;
}

/**
 * Decides what the end of a session stream leads to. A first open gets one attempt per address;
 * a session reconnects until resumed, expired, or refused — or until an attempt fails when the
 * session's lease (newest confirmed renewal + ttl) is over: no coordinator can still have it then.
 */
export function decideStreamEnd(final: FinalStatus | undefined, ctx: StreamEndContext): StreamEndAction {
  const kind = classifyStreamEnd(final);
  const when = kind === "retry-now" ? "now" : "backoff";
  if (!ctx.established) {
    const retry = (kind === "retry" || kind === "retry-now") && ctx.failedOpens < ctx.addressCount;
    return retry ? { action: "reconnect", when } : { action: "fail" };
  }
  if (kind === "expired" || kind === "refused") return { action: "expire", why: kind };
  if (kind === "fatal") return { action: "fail" };
  if (!ctx.wasOpened && ctx.nowMs >= ctx.renewedAtMs + ctx.ttlMs) return { action: "expire", why: "unreachable" };
  return { action: "reconnect", when };
}

/** The error an expired session ends with: what the coordinator said, or that none answered in time. */
export function expiryError(
  why: "expired" | "refused" | "unreachable",
  sessionId: string,
  ttlMs: number,
  cause: TurnstileError,
) {
  const detail = `(${cause.message})`;
  if (why === "expired") {
    return new TurnstileError("session-ended", `session ${sessionId} expired on the coordinators ${detail}`, { cause });
  }
  const message =
    why === "refused"
      ? `session ${sessionId} could not be resumed: the coordinator refused its resume secret ${detail}`
      : `session ${sessionId}: no coordinator answered within the session's lease of ${ttlMs} ms ${detail}`;
  return new TurnstileError("connection", message, { cause });
}
