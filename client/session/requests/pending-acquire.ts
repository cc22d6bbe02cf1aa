import type { LockMode, SessionRequest } from "../../../gen/ts/turnstile/v1/turnstile.js";
import { durationFromMs } from "../../../wire/duration.js";
import { currentTraceParent } from "../../trace-context.js";

/** One acquire as the session sends it; mode and limit are here so shared locks can reuse it. */
export interface SessionAcquire {
  name: string;
  owner: string;
  mode: LockMode;
  limit: number;
  /** Absent: wait forever; 0: try once. */
  waitMs?: number;
  value?: Uint8Array;
}

/**
 * One acquire not yet answered. It survives a broken stream and is re-sent after a resume with
 * the same request id; `firstSentAtMs` (the first send) is the conservative start of its lease.
 */
export interface PendingAcquire {
  readonly requestId: string;
  readonly request: SessionAcquire;
  readonly firstSentAtMs: number;
  /** The caller gave up (abort, or its wait ran out while disconnected): a late grant is released. */
  abandoned: boolean;
  /** Rejects the caller's promise; the request itself stays in flight until answered. */
  fail(error: Error): void;
}

/**
 * The wait to re-send an acquire with after a resume: the original wait minus the time since it
 * was first sent. 'forever' for no wait, 0 for a try-once, 'ran-out' when nothing is left.
 */
export function remainingWaitMs(
  waitMs: number | undefined,
  firstSentAtMs: number,
  nowMs: number,
): number | "forever" | "ran-out" {
  if (waitMs === undefined) return "forever";
  if (waitMs === 0) return 0;
  const leftMs = waitMs - (nowMs - firstSentAtMs);
  return leftMs > 0 ? leftMs : "ran-out";
}

/** The `acquire` message of a request; `waitMs` undefined waits forever. */
export function acquireMessage(
  requestId: string,
  request: SessionAcquire,
  waitMs: number | undefined,
): NonNullable<SessionRequest["kind"]> {
  const { name, owner, mode, limit, value = new Uint8Array() } = request;
  const wait = waitMs === undefined ? undefined : durationFromMs(waitMs);
  const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return {
    $case: "acquire",
    acquire: { requestId, name, mode, limit, wait, owner, value: bytes, traceParent: currentTraceParent() },
  };
}
