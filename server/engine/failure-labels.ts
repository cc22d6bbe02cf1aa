import type { ServerErrorReason } from "./server-error.js";

/**
 * Why an acquire failed: the closed set of the `reason` label of `turnstile_acquires_failed_total`.
 * `deadlock`: the acquire was the victim of a deadlock cycle (docs/deadlocks.md). Every value is exported at
 * 0 from the start, so `increase()` sees a failure's first occurrence.
 */
export const ACQUIRE_FAILURES = [
  "timeout",
  "busy",
  "denied",
  "expired",
  "cancelled",
  "limit",
  "conflict",
  "invalid",
  "unavailable",
  "internal",
  "deadlock",
] as const;

/** One value of ACQUIRE_FAILURES. */
export type AcquireFailure = (typeof ACQUIRE_FAILURES)[number];

/**
 * Why a hold granted on this coordinator ended without its owner releasing it: the closed set of the
 * `reason` label of `turnstile_holds_lost_total`. `expired`: its lease ran out in the store (keepalives
 * did not renew it in time); `revoked`: an operator revoked it; `session_lost`: its session ended
 * (stream gone and not resumed in time, or its session record gone) while holding it.
 */
export const HOLD_LOSSES = ["expired", "revoked", "session_lost"] as const;

/** One value of HOLD_LOSSES. */
export type HoldLoss = (typeof HOLD_LOSSES)[number];

const BY_SERVER_REASON: Partial<Record<ServerErrorReason, AcquireFailure>> = {
  timeout: "timeout",
  busy: "busy",
  "permission-denied": "denied",
  unauthenticated: "denied",
  expired: "expired",
  cancelled: "cancelled",
  limit: "limit",
  "resource-exhausted": "limit",
  conflict: "conflict",
  "duplicate-request": "invalid",
  "invalid-argument": "invalid",
  "failed-precondition": "invalid",
  "not-found": "invalid",
  "not-held": "invalid",
  unavailable: "unavailable",
  deadlock: "deadlock",
};

/** The failure label of an acquire that failed with `reason`; anything unexpected is `internal`. */
export function acquireFailureOf(reason: ServerErrorReason): AcquireFailure {
  return BY_SERVER_REASON[reason] ?? "internal";
}
