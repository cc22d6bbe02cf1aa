import { LostReason } from "../gen/ts/turnstile/v1/turnstile.js";
import { TurnstileError } from "./turnstile-error.js";

/**
 * Why a held lock was lost: 'expired', 'revoked' and 'session-ended' are the server's word;
 * 'lease-unconfirmed' means the client's own lease clock ran out before a renewal was confirmed.
 */
export type LostLockReason = "expired" | "revoked" | "session-ended" | "lease-unconfirmed";

/**
 * The reason a lock's `signal` aborts with when the lock is lost (reason 'lost'). `lockName` and
 * `fencingToken` identify the lost grant (`name` stays the error's class name); `lostReason` says
 * how it was lost.
 */
export class LostLockError extends TurnstileError {
  declare readonly reason: "lost";
  readonly lostReason: LostLockReason;
  readonly lockName: string;
  readonly fencingToken: bigint;

  constructor(lock: { name: string; fencingToken: bigint }, lostReason: LostLockReason, options?: { cause?: unknown }) {
    super("lost", `lock "${lock.name}" (token ${lock.fencingToken}) lost: ${lostReason}`, options);
    this.name = "LostLockError";
    this.lostReason = lostReason;
    this.lockName = lock.name;
    this.fencingToken = lock.fencingToken;
  }
}

/**
 * Translates the server's `LostReason` into a `LostLockReason`. Unspecified or unknown values
 * become 'expired', the most conservative reading: the lock is simply gone.
 */
export function lostReasonFromProto(reason: LostReason): LostLockReason {
  switch (reason) {
    case LostReason.LOST_REASON_REVOKED:
      return "revoked";
    case LostReason.LOST_REASON_SESSION_ENDED:
      return "session-ended";
    default:
      return "expired";
  }
}
